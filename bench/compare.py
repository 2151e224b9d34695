#!/usr/bin/env python3
"""Whole-process benchmark: freezegate (release build, embedded default pack) against the
same four checks hand-written in plain single-threaded Rust (bench/baseline-rust) and in
plain Python (bench/baseline.py), on generated workloads.

    python3 bench/compare.py [--runs 5] [--workloads small,large] [--shapes plain,misspelt,...]
                             [--before BINARY]

Prints, per workload, the median and min-max wall time of each program over the runs, its
median CPU time (user + system: what a busy machine inflates less than wall time), the
peak RSS, the ratios, and whether each target is met (issue 7's, the large ones raised by
issue 29). All three programs must
report the same number of violations per rule, or the comparison is void. With
`--before BINARY` (an earlier freezegate build), that binary runs the same check in the
same rounds, and the script prints this build's time against it: a refactoring's
before and after, measured in one run. The two Rust
programs run from copies in target/bench/bin, as installed (see `installed`).

Each workload comes in the shapes of bench/generate.py (all of them by default). After the
timed rounds, freezegate runs as many times again with `--trace`, and the script prints
each policy script's median time; a script whose time per input item (the entries the
rules walk: freezes and applied skips) on the large workload is more than twice its time
per item on the small one fails the bench (exit 1): a cost that grows with the product of
the inputs (a misspelt id searched among all the collected ones), not with their sum. It
exits 1 too when a target is not met.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import shutil
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TODAY = "2026-11-30"
INSTALL_DIR = os.path.join(ROOT, "target/bench/bin")


def build():
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=os.path.join(ROOT, "bench/baseline-rust"), check=True)


def installed(binary, name=None):
    """A copy of a freshly linked binary, as `cargo install` or a release download leaves
    it. The linker writes its output in pieces and the page cache keeps such a file in
    small pieces, so every run of the linker's own file takes more page faults to map it:
    about 0.4 ms of a 4 ms small run on this machine, for both Rust programs alike."""
    copy = os.path.join(INSTALL_DIR, name or os.path.basename(binary))
    shutil.copy2(binary, copy)
    return copy


class Run:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def timed(cmd, cwd):
    """Wall time (spawn to exit), CPU time (user + system) and peak RSS (KiB), from the
    child's own rusage, of one run."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        cpu = usage.ru_utime + usage.ru_stime
        return elapsed, cpu, usage.ru_maxrss, Run(child.returncode, out.read().decode(), err.read().decode())


def counts_from_report(path):
    report = json.load(open(path))
    counts = {}
    for v in report["violations"]:
        counts[v["code"]] = counts.get(v["code"], 0) + 1
    return dict(sorted(counts.items()))


SHAPES = ["plain", "misspelt", "one-file", "params", "all-fail"]
TRACE = re.compile(r"^trace: (?:builtin:)?(\S+?\.rhai): ([0-9.]+) ms")


def script_times(cmd, cwd, runs):
    """Each script's median running time (ms) over `runs` runs with `--trace`."""
    times = {}
    for _ in range(runs):
        _, _, _, out = timed(cmd + ["--trace"], cwd)
        for line in out.stderr.splitlines():
            found = TRACE.match(line)
            if found:
                times.setdefault(found.group(1), []).append(float(found.group(2)))
    return {script: statistics.median(ms) for script, ms in times.items()}


def input_items(data):
    """The entries the rules walk: freezes and applied skips. The collected ids and the
    changed paths are sets the rules look up in, at a constant cost a lookup; a script
    whose time per entry grows with their size does work of the product of the inputs."""
    freezes = len(json.load(open(os.path.join(data, "freeze_ledger.json")))["freezes"])
    skipped = len(json.load(open(os.path.join(data, "skipped.json"))))
    return freezes + skipped


def workload_dir(shape, workload):
    name = workload if shape == "plain" else f"{shape}-{workload}"
    return os.path.join(ROOT, "target/bench", name)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workloads", default="small,large")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--before", help="an earlier freezegate binary to time beside this build")
    parser.add_argument("--no-build", action="store_true", help="time the release binaries as they are")
    args = parser.parse_args()
    if not args.no_build:
        build()
    os.makedirs(INSTALL_DIR, exist_ok=True)
    freezegate = installed(os.path.join(ROOT, "target/release/freezegate"))
    baseline = installed(os.path.join(ROOT, "bench/baseline-rust/target/release/freezegate-baseline"))
    before = installed(os.path.abspath(args.before), "freezegate-before") if args.before else None
    ok = True
    rows = []
    for shape in args.shapes.split(","):
        per_item = {}
        for workload in args.workloads.split(","):
            met, row, per_item[workload] = measure(shape, workload, args, freezegate, baseline, before)
            ok &= met
            rows.append(row)
        if "small" in per_item and "large" in per_item:
            print(f"\n{shape}: each script's time per input item, large against small")
            for script, small in sorted(per_item["small"].items()):
                large = per_item["large"].get(script)
                if large is None or small <= 0:
                    continue
                growth = large / small
                print(f"  {script:<18} {small * 1e6:8.1f} ns -> {large * 1e6:8.1f} ns an item: {growth:.2f}x"
                      f"{'' if growth <= 2.0 else '  GROWS more than 2x'}")
                ok &= growth <= 2.0
    print("\n| shape | workload | freezegate | Rust | Python | freezegate / Rust | Python / freezegate | peak RSS / input | scripts (ms) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(row)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nmachine: {os.cpu_count()} cores, load average {load} at the end; "
          f"{'all targets met' if ok else 'some targets not met'}")
    sys.exit(0 if ok else 1)


def measure(shape, workload, args, freezegate, baseline, before):
    """Times one workload of one shape; says whether its targets are met, its row of the
    summary table, and each script's time per input item (ms)."""
    ok = True
    data = workload_dir(shape, workload)
    subprocess.run([sys.executable, os.path.join(ROOT, "bench/generate.py"), workload, data, "--shape", shape],
                   check=True)
    inputs = ["freeze_ledger.json", "collected.txt", "changed.txt", "samples.json", "skipped.json", "freezegate.toml"]
    input_bytes = sum(os.path.getsize(os.path.join(data, f)) for f in inputs)
    report = os.path.join(data, "report.json")
    freezegate_args = ["check", "--today", TODAY, "--collected", "collected.txt", "--changed", "changed.txt",
                       "--samples", "samples.json", "--applied-skips", "skipped.json", "--target-branch", "main",
                       # The baselines check what the part-1 pack checked; skips outside the
                       # ledger (FZ6) need a run record the generated workloads do not have.
                       "--ignore", "FZ6",
                       "--format", "json", "--output", report]
    programs = {
        "freezegate": [freezegate] + freezegate_args,
        "rust": [baseline, ".", TODAY],
        **({"before": [before] + freezegate_args} if before else {}),
        "python": [sys.executable, os.path.join(ROOT, "bench/baseline.py"), ".", TODAY],
    }
    # Rounds interleave the programs, so a slow spell of a noisy machine hits all three.
    times = {name: [] for name in programs}
    cpus = {name: [] for name in programs}
    peaks = {name: [] for name in programs}
    verdicts = {}
    names = list(programs)
    for round_ in range(args.runs):
        # Each round starts with another program: the one after Python's big process
        # would otherwise always find the caches cold.
        for name in names[round_ % len(names):] + names[:round_ % len(names)]:
            cmd = programs[name]
            elapsed, cpu, rss, out = timed(cmd, data)
            if out.returncode not in (0, 1):
                sys.exit(f"{name} failed on {workload}: {out.stderr}")
            times[name].append(elapsed)
            cpus[name].append(cpu)
            peaks[name].append(rss)
            verdicts[name] = counts_from_report(report) if name in ("freezegate", "before") else json.loads(out.stdout)
    results = {name: (statistics.median(times[name]), min(times[name]), max(times[name]), max(peaks[name]))
               for name in programs}
    if any(verdict != verdicts["rust"] for verdict in verdicts.values()):
        sys.exit(f"{shape} {workload}: the programs disagree, comparison void: {verdicts}")
    print(f"\n{shape} {workload}: {input_bytes / 1e6:.1f} MB of input, {args.runs} runs each, "
          f"violations {verdicts['rust']}")
    for name, (median, low, high, rss) in results.items():
        print(f"  {name:<11} median {median * 1000:8.1f} ms  (min {low * 1000:.1f}, max {high * 1000:.1f})  "
              f"CPU {statistics.median(cpus[name]) * 1000:7.1f} ms  peak RSS {rss / 1024:6.1f} MiB")
    fg, rust, py = results["freezegate"][0], results["rust"][0], results["python"][0]
    rss_ratio = results["freezegate"][3] * 1024 / input_bytes
    print(f"  freezegate / rust   = {fg / rust:.2f}x the time")
    print(f"  python / freezegate = {py / fg:.2f}x faster")
    print(f"  peak RSS / input    = {rss_ratio:.2f}x")
    if args.before:
        cpu_ratio = statistics.median(cpus["freezegate"]) / statistics.median(cpus["before"])
        print(f"  this build / before = {fg / results['before'][0]:.2f}x the time, {cpu_ratio:.2f}x the CPU time, "
              f"{results['freezegate'][3] / results['before'][3]:.2f}x the peak RSS")
    targets = []
    if workload == "large":
        targets = [("at most 0.8x the Rust baseline's time", fg <= 0.8 * rust),
                   ("at least 3x faster than Python", py / fg >= 3.0),
                   ("peak RSS at most 2x the input", rss_ratio <= 2.0)]
    elif workload == "small":
        targets = [("at least 8x faster than Python", py / fg >= 8.0)]
    for label, met in targets:
        print(f"  target: {label}: {'met' if met else 'NOT met'}")
        ok &= met
    scripts = script_times(programs["freezegate"], data, args.runs)
    print("  per script (median of --trace runs): "
          + ", ".join(f"{script} {ms:.2f} ms" for script, ms in sorted(scripts.items())))
    if before:
        earlier = script_times(programs["before"], data, args.runs)
        print("  per script, before:                  "
              + ", ".join(f"{script} {ms:.2f} ms" for script, ms in sorted(earlier.items())))
    items = input_items(data)

    def cell(name):
        median, low, high, _ = results[name]
        return f"{median * 1000:.1f} ({low * 1000:.1f}–{high * 1000:.1f})"

    row = (f"| {shape} | {workload} | {cell('freezegate')} | {cell('rust')} | {cell('python')} | {fg / rust:.2f}× | "
           f"{py / fg:.2f}× | {rss_ratio:.2f}× | "
           + ", ".join(f"{script.removesuffix('.rhai')} {t:.1f}" for script, t in sorted(scripts.items())) + " |")
    return ok, row, {script: t / items for script, t in scripts.items()}


if __name__ == "__main__":
    main()
