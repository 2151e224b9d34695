#!/usr/bin/env python3
"""Generate a deterministic gate workload: ledger, collection, diff, samples, skips.

    python3 bench/generate.py small target/bench/small
    python3 bench/generate.py large target/bench/large

small: 40 freezes, 20,000 collected ids, 300 changed files.
large: 10,000 freezes, 1,000,000 collected ids, 100,000 changed files,
       10,000 applied skips plus 1,000 inherited ones.
A few percent of freezes are defective for each rule, so every check has work to do.
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


def main():
    kind, out = sys.argv[1], sys.argv[2]
    size = SIZES[kind]
    rng = random.Random(20261130)
    os.makedirs(out, exist_ok=True)
    # The workload is a repository of its own, with a commit as a CI checkout has: paths
    # in the diff are relative to it, and the gate reads its HEAD.
    repository(out)
    n_files = max(size["collected"] // 20, 1)
    collected = [f"tests/pkg{i % 97}/test_mod{i // 20}.py::test_case_{i}" for i in range(size["collected"])]
    props = [f"tests/props/test_prop{i}.py::test_property_{i}" for i in range(size["freezes"])]
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
        defect = rng.random()
        if defect < 0.02:
            entry["owner"] = ""  # FZ101
        elif defect < 0.04:
            entry["expires"] = "2026-11-31"  # FZ102
        elif defect < 0.06:
            entry["expires"] = "2026-11-25"  # FZ103 (today is 2026-11-30)
        elif defect < 0.08:
            entry["expires"] = "2026-12-09"  # FZ104
        elif defect < 0.10:
            entry["compensating_property"] = "tests/props/missing.py::test_gone"  # FZ201
        elif defect < 0.12:
            entry["reused_property"] = False  # FZ202: file left out of the diff below
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
