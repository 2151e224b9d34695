#!/usr/bin/env python3
"""Generate a deterministic gate workload: ledger, collection, diff, samples, skips.

    python3 bench/generate.py small target/bench/small
    python3 bench/generate.py large target/bench/large --shape misspelt

small: 40 freezes, 20,000 collected ids, 300 changed files.
large: 10,000 freezes, 1,000,000 collected ids, 100,000 changed files,
       10,000 applied skips plus 1,000 inherited ones.
A few percent of freezes are defective for each rule, so every check has work to do.

The shapes are those real ledgers make, each at both sizes:
- plain: the defects above; the uncollected properties all name one missing file;
- misspelt: 5 % of the properties misspelt, a third each in the folder
  (tests/prosp/), the file (test_porp7.py) and the name (test_proprety_7);
- one-file: every property in one file, 5 % of them misspelt in the name;
- params: ids with long parametrize suffixes (about 120 bytes), 5 % of the properties
  misspelt inside them;
- all-fail: every entry fails one rule, in turn (a misspelt property among them).
"""
import json
import os
import random
import subprocess
import sys

SIZES = {
    "small": dict(freezes=40, collected=20_000, changed=300, inherited=4),
    "large": dict(freezes=10_000, collected=1_000_000, changed=100_000, inherited=1_000),
}


def repository(out):
    git = ["git", "-C", out, "-c", "user.name=bench", "-c", "user.email=bench@invalid"]
    # Its own: git run in a folder without one looks in the folders above it.
    if os.path.isfile(os.path.join(out, ".git", "HEAD")):
        if subprocess.run(git + ["rev-parse", "--verify", "--quiet", "HEAD"], capture_output=True).returncode == 0:
            return
    subprocess.run(git + ["init", "-q", "-b", "main"], check=True)
    subprocess.run(git + ["commit", "-q", "--allow-empty", "-m", "workload"], check=True)


SHAPES = ["plain", "misspelt", "one-file", "params", "all-fail"]

# The parameters of the params shape: pytest joins a case's values with "-".
PARAMS = "-".join(["utf-8", "strict", "0123456789abcdef" * 2, "endianness=little", "width=64", "with-bom", "x" * 24])


def property_id(shape, i):
    if shape == "one-file":
        return f"tests/props/test_props.py::test_property_{i}"
    if shape == "params":
        return f"tests/props/test_prop{i // 20}.py::test_property[{PARAMS}-{i}]"
    return f"tests/props/test_prop{i}.py::test_property_{i}"


def misspelt(shape, prop, i):
    """The property as a hand would misspell it: in the folder, the file or the name."""
    if shape == "params":
        return prop.replace("=little", "=litle")
    where = 2 if shape == "one-file" else i % 3
    if where == 0:
        return prop.replace("tests/props/", "tests/prosp/")
    if where == 1:
        return prop.replace("test_prop", "test_porp", 1)
    return prop.replace("test_property", "test_proprety")


def collected_id(shape, i):
    if shape == "params":
        return f"tests/pkg{i % 97}/test_mod{i // 20}.py::test_case[{PARAMS}-{i}]"
    return f"tests/pkg{i % 97}/test_mod{i // 20}.py::test_case_{i}"


def main():
    kind, out = sys.argv[1], sys.argv[2]
    shape = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--shape" else "plain"
    if shape not in SHAPES:
        sys.exit(f"unknown shape {shape}: one of {', '.join(SHAPES)}")
    size = SIZES[kind]
    rng = random.Random(20261130)
    os.makedirs(out, exist_ok=True)
    # The workload is a repository of its own, with a commit as a CI checkout has: paths
    # in the diff are relative to it, and the gate reads its HEAD.
    repository(out)
    n_files = max(size["collected"] // 20, 1)
    collected = [collected_id(shape, i) for i in range(size["collected"])]
    props = [property_id(shape, i) for i in range(size["freezes"])]
    freezes, samples, skipped, changed = [], {}, [], set()
    for i in range(size["freezes"]):
        test_id = collected[(i * 37) % len(collected)]
        entry = {
            "test_id": test_id,
            "reason": f"upstream change TICKET-{i}",
            "owner": f"owner{i % 50}",
            "opened": "2026-11-20",
            "expires": "2026-12-04",
            "invariant": "the result never decreases",
            "compensating_property": props[i],
            "reused_property": False,
            "team": f"team{i % 7}",
        }
        # all-fail: every entry one defect, in turn, at the middle of its range below.
        defect = (i % 8) * 0.02 + 0.01 if shape == "all-fail" else rng.random()
        if defect < 0.02:
            entry["owner"] = ""  # FZ101
        elif defect < 0.04:
            entry["expires"] = "2026-11-31"  # FZ102
        elif defect < 0.06:
            entry["expires"] = "2026-11-25"  # FZ103 (today is 2026-11-30)
        elif defect < 0.08:
            entry["expires"] = "2026-12-09"  # FZ104
        elif defect < 0.10:
            # FZ201
            if shape == "plain":
                entry["compensating_property"] = "tests/props/missing.py::test_gone"
            else:
                entry["compensating_property"] = misspelt(shape, props[i], i)
        elif defect < 0.12:
            entry["reused_property"] = False  # FZ202: file left out of the diff below
        if shape in ("misspelt", "one-file", "params") and 0.10 <= defect < 0.13:
            entry["compensating_property"] = misspelt(shape, props[i], i)  # FZ201: 5 % in all
        skip_diff = 0.10 <= defect < 0.12
        if not skip_diff:
            changed.add(props[i].split("::")[0])
        if defect < 0.14 and defect >= 0.12:
            samples[props[i]] = {"distinct": 3}  # FZ301
        elif not (0.14 <= defect < 0.16):  # FZ302 when missing
            samples[props[i]] = {"distinct": 50 + i % 50}
        freezes.append(entry)
        skipped.append(test_id)
    collected.extend(props)
    while len(changed) < size["changed"]:
        changed.add(f"src/module{len(changed)}.py")
    inherited = [collected[(i * 7919 + 13) % size["collected"]] for i in range(size["inherited"])]
    skipped.extend(inherited)
    with open(f"{out}/freeze_ledger.json", "w") as f:
        json.dump({"schema": 1, "max_window_days": 14, "freezes": freezes}, f, indent=2)
    with open(f"{out}/collected.txt", "w") as f:
        f.write("\n".join(collected))
        f.write(f"\n\n{len(collected)} tests collected in 12.34s\n")
    with open(f"{out}/changed.txt", "w") as f:
        f.write("\n".join(sorted(changed)) + "\n")
    with open(f"{out}/samples.json", "w") as f:
        json.dump({"properties": samples}, f)
    with open(f"{out}/skipped.json", "w") as f:
        json.dump(skipped, f)
    with open(f"{out}/freezegate.toml", "w") as f:
        f.write('ledger = "freeze_ledger.json"\n[params]\nmin_distinct = 8\nmax_window_days = 14\n')


if __name__ == "__main__":
    main()
