#!/usr/bin/env python3
"""The pytest plugin's cost, and the run record against today's artifacts (issue 16).

    python3 bench/plugin.py [--runs 3] [--tests 20000] [--record-tests 1000000]
    python3 bench/plugin.py --instructions [--tests 2000]

On a generated suite (plain, parametrized and class tests with trivial bodies, and 50
Hypothesis properties) in a temporary git repository, with this tree's release wheel
installed into the pinned venv (`.ci/python-env`):

1. `pytest` against `pytest --freezegate` and `freezegate run --check -- pytest` (the
   supervised run, the gate included; target for both: at most 5 % more wall time);
2. today's flow, `pytest` + the demo's conftest hook (observability files, JUnit,
   gate/skipped.json) + `freezegate check --collect ...`, against `pytest --freezegate`
   + `freezegate check --run` (target: at least 1.3x faster);
3. `check --run` on a generated record of a million tests against `check --collected`
   on the same ids (targets: within 1.5x the time, peak RSS within 2x the record's size).

Medians over the runs, the variants taking turns run by run (plain and plugin swap
places every round). The plugin's cost is also given per test, in microseconds of wall
and of CPU time (the pytest process's user + system time: what a busy machine does not
inflate as much as wall time), each as the median of the rounds' paired differences with
the min and max beside it, so one lucky round cannot stand for the figure. The machine
(cores, CPU model, load average before and after) is printed with the figures.

With `--instructions`, the plugin's cost is counted instead of timed: callgrind counts
the instructions of `pytest` and `pytest --freezegate` on one file of the generated
suite and on all of it (2,000 tests by default), which gives pytest's instructions per
test, the plugin's per test and once per session, and what observing one of the
ledger's properties costs. The counts are the same run after run, whatever the machine
is doing, where wall time on a shared VM drifts by more than the plugin costs.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.environ.get("FREEZEGATE_VENV", os.path.join(ROOT, ".venv"))
PYTHON = os.path.join(VENV, "bin", "python")
TODAY = "2026-11-30"
PROPERTIES = 50


def run(args, cwd, env=None, check=True):
    """Wall seconds and peak RSS (KiB) of one child process."""
    elapsed, _, peak, done = run_timed(args, cwd, env, check)
    return elapsed, peak, done


def run_timed(args, cwd, env=None, check=True):
    """Wall seconds, CPU seconds (user + system), peak RSS (KiB) and the output of one
    child process, its CPU time and peak from its own rusage."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen(args, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        done = subprocess.CompletedProcess(args, os.waitstatus_to_exitcode(status),
                                           out.read().decode(errors="replace"), err.read().decode(errors="replace"))
    if check and done.returncode not in (0, 1):
        sys.exit(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, done


def peak_rss_kib(args, cwd):
    """Peak RSS of one process alone, from GNU time when it is there, else getrusage."""
    if shutil.which("/usr/bin/time"):
        done = subprocess.run(["/usr/bin/time", "-f", "%M"] + args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        return int(done.stderr.strip().splitlines()[-1])
    return run(args, cwd, check=False)[1]


def build_and_install():
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    subprocess.run([PYTHON, "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", os.path.join(ROOT, ".ci/requirements-packaging.txt")], check=True)
    out = os.path.join(ROOT, "target/bench/wheels")
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([PYTHON, "-m", "maturin", "build", "--release", "--quiet", "--out", out], cwd=ROOT, check=True)
    wheel = [os.path.join(out, f) for f in os.listdir(out) if f.endswith(".whl")][0]
    subprocess.run([PYTHON, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", "--disable-pip-version-check", wheel], check=True)
    return wheel, os.path.join(VENV, "bin", "freezegate")


def generate_suite(root, tests):
    per_file = 100
    files = max(1, tests // per_file)
    os.makedirs(os.path.join(root, "tests"))
    open(os.path.join(root, "tests", "__init__.py"), "w").close()
    frozen = []
    for f in range(files):
        lines = ["import pytest", ""]
        # 60 functions, 5 parametrized x 4 cases, a class of 20 methods: 100 tests.
        for t in range(60):
            lines += [f"def test_f{t}():", "    assert True", ""]
        for t in range(5):
            lines += ["@pytest.mark.parametrize('n', [1, 2, 3, 4])", f"def test_p{t}(n):", "    assert n > 0", ""]
        lines += ["class TestC:"]
        for t in range(20):
            lines += [f"    def test_m{t}(self):", "        assert True", ""]
        with open(os.path.join(root, "tests", f"test_mod{f}.py"), "w") as out:
            out.write("\n".join(lines))
        if f % 20 == 0:
            frozen.append(f"tests/test_mod{f}.py::test_f0")
    props = ["from hypothesis import given, settings, strategies as st", ""]
    for p in range(PROPERTIES):
        props += ["@settings(max_examples=100, database=None, derandomize=True)", "@given(st.integers())", f"def test_prop{p}(x):", "    assert x == x", ""]
    with open(os.path.join(root, "tests", "test_props.py"), "w") as out:
        out.write("\n".join(props))
    freezes = [
        {"test_id": t, "reason": "r", "owner": "o", "opened": "2026-11-25", "expires": "2026-12-05",
         "invariant": "i", "compensating_property": f"tests/test_props.py::test_prop{i}"}
        for i, t in enumerate(frozen)
    ]
    os.makedirs(os.path.join(root, "gate"))
    with open(os.path.join(root, "gate", "freeze_ledger.json"), "w") as out:
        json.dump({"schema": 1, "freezes": freezes}, out, indent=1)
    with open(os.path.join(root, "freezegate.toml"), "w") as out:
        out.write(f'collect_command = [{json.dumps(PYTHON)}, "-m", "pytest", "--collect-only", "-q", "--no-header", "-p", "no:freezegate"]\n')
    with open(os.path.join(root, "gate", "changed.txt"), "w") as out:
        out.write("tests/test_props.py\n")
    shutil.copy(os.path.join(ROOT, "examples/pytest-demo/conftest.py"), os.path.join(root, "conftest_hook.py"))
    with open(os.path.join(root, ".gitignore"), "w") as out:
        out.write("gate/run.json\ngate/skipped.json\ngate/junit.xml\n.hypothesis/\n__pycache__/\n")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@invalid"]
    subprocess.run(git + ["init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run(git + ["add", "-A"], cwd=root, check=True)
    subprocess.run(git + ["commit", "-q", "-m", "suite"], cwd=root, check=True)
    return len(frozen)


def median(values):
    return statistics.median(values)


def suite_benchmark(binary, runs, tests):
    root = tempfile.mkdtemp(prefix="freezegate-bench-plugin-")
    generate_suite(root, tests)
    env = dict(os.environ, FREEZEGATE=binary, PYTHONDONTWRITEBYTECODE="1")
    env.pop("HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY", None)
    pytest = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    hook_env = dict(env, HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY="1")
    timings = {"plain": [], "plugin": [], "supervised": [], "today": [], "record": [],
               "plain_cpu": [], "plugin_cpu": [], "supervised_cpu": []}
    # The supervised run: freezegate starts pytest, receives the record over its pipe and
    # judges it in the same process (`freezegate run --check`).
    supervised = [binary, "run", "--check", "--changed", "gate/changed.txt", "--today", TODAY, "--format", "json", "--"] + pytest
    for round_ in range(runs):
        # Plain and plugin swap places every round: neither always runs on warm caches.
        variants = [("plain", pytest + ["-p", "no:freezegate"]), ("plugin", pytest + ["--freezegate"]),
                    ("supervised", supervised)]
        turn = round_ % len(variants)
        for name, args in variants[turn:] + variants[:turn]:
            wall, cpu, _, _ = run_timed(args, root, env)
            timings[name].append(wall)
            timings[f"{name}_cpu"].append(cpu)
        plugin_time = timings["plugin"][-1]
        check_run = run([binary, "check", "--run", "gate/run.json", "--changed", "gate/changed.txt", "--today", TODAY, "--format", "json"], root, env)
        timings["record"].append(plugin_time + check_run[0])
        shutil.rmtree(os.path.join(root, ".hypothesis"), ignore_errors=True)
        # Today's flow: the conftest hook, observability files and JUnit, then a second
        # pytest process collecting for the gate.
        hooked = run(pytest + ["-p", "no:freezegate", "-p", "conftest_hook", "--junitxml", "gate/junit.xml"], root, dict(hook_env, PYTHONPATH=root))[0]
        check_collect = run([binary, "check", "--collect", "--changed", "gate/changed.txt", "--samples", ".hypothesis/observed",
                             "--junit", "gate/junit.xml", "--applied-skips", "gate/skipped.json",
                             "--today", TODAY, "--format", "json"], root, env)
        timings["today"].append(hooked + check_collect[0])
    with open(os.path.join(root, "gate", "run.json")) as record:
        tests_recorded = len(json.load(record)["tests"])
    shutil.rmtree(root, ignore_errors=True)
    return timings, tests_recorded


def record_benchmark(binary, runs, count):
    root = tempfile.mkdtemp(prefix="freezegate-bench-record-")
    ids = [f"tests/pkg{i % 97}/test_mod{i // 50}.py::test_case_{i}" for i in range(count)]
    os.makedirs(os.path.join(root, "gate"))
    with open(os.path.join(root, "gate", "freeze_ledger.json"), "w") as out:
        json.dump({"schema": 1, "freezes": [{"test_id": ids[7], "reason": "r", "owner": "o", "opened": "2026-11-25",
                                              "expires": "2026-12-05", "invariant": "i", "compensating_property": ids[8]}]}, out)
    with open(os.path.join(root, "gate", "collected.txt"), "w") as out:
        out.write("\n".join(ids) + f"\n\n{count} tests collected in 1.00s\n")
    with open(os.path.join(root, "gate", "changed.txt"), "w") as out:
        out.write(ids[8].split("::")[0] + "\n")
    sha = json.loads(subprocess.run([binary, "skips", "--format", "plugin"], cwd=root, capture_output=True, text=True, check=True).stdout)["ledger_sha256"]
    tests = {i: {"outcome": "passed", "lines": [3, 4]} for i in ids}
    tests[ids[7]] = {"outcome": "skipped", "source": "ledger", "reason": "frozen", "file": ids[7].split("::")[0], "line": 3, "lines": [3, 4]}
    record = {"version": 1, "kind": "freezegate run record", "commit": None, "dirty": False, "ledger": "gate/freeze_ledger.json",
              "ledger_sha256": sha, "complete": True, "exitstatus": 0, "collected": ids, "deselected": [], "dropped": [],
              "markers": {}, "tests": tests, "collection_skips": [], "samples": {ids[8]: {"distinct": 50, "method": "choice sequences"}}}
    path = os.path.join(root, "gate", "run.json")
    with open(path, "w") as out:
        json.dump(record, out, separators=(",", ":"))
    size = os.path.getsize(path)
    common = ["--changed", "gate/changed.txt", "--today", TODAY, "--format", "json", "--select", "FZ2"]
    by_run = [binary, "check", "--run", "gate/run.json"] + common
    by_collected = [binary, "check", "--collected", "gate/collected.txt"] + common
    times = {"run": [], "collected": []}
    for _ in range(runs):
        times["run"].append(run(by_run, root)[0])
        times["collected"].append(run(by_collected, root)[0])
    rss = peak_rss_kib(by_run, root) * 1024
    shutil.rmtree(root, ignore_errors=True)
    return {k: median(v) for k, v in times.items()}, rss, size


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tests", type=int, help="tests to generate (default 20,000; 2,000 with --instructions)")
    parser.add_argument("--record-tests", type=int, default=1_000_000)
    parser.add_argument("--instructions", action="store_true",
                        help="count the plugin's instructions under callgrind instead of timing it")
    args = parser.parse_args()
    wheel, binary = build_and_install()
    if args.instructions:
        return instructions_benchmark(binary, args.tests or 2000)
    args.tests = args.tests or 20000
    print(f"wheel: {os.path.basename(wheel)}, {os.path.getsize(wheel) / 1e6:.1f} MB")
    print(f"machine: {machine()}; load average before {load_average()}")
    rounds, recorded = suite_benchmark(binary, args.runs, args.tests)
    suite = {k: median(v) for k, v in rounds.items()}
    print(f"suite: {recorded} tests in the record ({args.tests} generated + {PROPERTIES} properties), median of {args.runs} runs")
    # Paired by round: the plugin's run against the plain run beside it.
    overheads = [b / a - 1 for a, b in zip(rounds["plain"], rounds["plugin"])]
    per_test = [(b - a) / recorded * 1e6 for a, b in zip(rounds["plain"], rounds["plugin"])]
    per_test_cpu = [(b - a) / recorded * 1e6 for a, b in zip(rounds["plain_cpu"], rounds["plugin_cpu"])]
    cpu_overheads = [b / a - 1 for a, b in zip(rounds["plain_cpu"], rounds["plugin_cpu"])]
    overhead = median(overheads)
    speedup = suite["today"] / suite["record"]
    print(f"  pytest                       {suite['plain']:.2f} s  {spread(rounds['plain'], '{:.2f}')}")
    print(f"  pytest --freezegate          {suite['plugin']:.2f} s  {spread(rounds['plugin'], '{:.2f}')}")
    print(f"  plugin's cost                {overhead * 100:+.1f} % {spread([o * 100 for o in overheads], '{:+.1f}')} (target <= +5 %)")
    print(f"  plugin's cost per test       {median(per_test):.1f} us wall {spread(per_test, '{:.1f}')}, "
          f"{median(per_test_cpu):.1f} us CPU {spread(per_test_cpu, '{:.1f}')} "
          f"({median(cpu_overheads) * 100:+.1f} % CPU)")
    supervised_overheads = [b / a - 1 for a, b in zip(rounds["plain"], rounds["supervised"])]
    supervised_overhead = median(supervised_overheads)
    print(f"  freezegate run --check       {suite['supervised']:.2f} s  {spread(rounds['supervised'], '{:.2f}')}")
    print(f"  supervised run's cost        {supervised_overhead * 100:+.1f} % "
          f"{spread([o * 100 for o in supervised_overheads], '{:+.1f}')} (target <= +5 %, the check included)")
    print(f"  today: hook + check --collect {suite['today']:.2f} s")
    print(f"  plugin + check --run         {suite['record']:.2f} s  ({speedup:.2f}x faster, target >= 1.3x)")
    times, rss, size = record_benchmark(binary, args.runs, args.record_tests)
    ratio = times["run"] / times["collected"]
    print(f"record of {args.record_tests} tests ({size / 1e6:.1f} MB):")
    print(f"  check --collected            {times['collected'] * 1000:.0f} ms")
    print(f"  check --run                  {times['run'] * 1000:.0f} ms  ({ratio:.2f}x, target <= 1.5x)")
    print(f"  peak RSS of check --run      {rss / 1e6:.1f} MB  ({rss / size:.2f}x the record, target <= 2x)")
    met = overhead <= 0.05 and supervised_overhead <= 0.05 and speedup >= 1.3 and ratio <= 1.5 and rss <= 2 * size
    print(f"load average after {load_average()}")
    print("all targets met" if met else "NOT all targets met")


def instructions_benchmark(binary, tests):
    """The plugin's cost in instructions, counted by callgrind: the same for the same
    code whatever else the machine does (its wall time drifts by a quarter here from
    minute to minute). Per test, from two suite sizes (one file of 100 tests, and every
    file), so the fixed cost (asking the binary, importing the plugin) is apart; per
    property the ledger names, from the properties' file alone."""
    if shutil.which("valgrind") is None:
        sys.exit("--instructions needs valgrind (apt-get install valgrind)")
    root = tempfile.mkdtemp(prefix="freezegate-bench-instructions-")
    observed = generate_suite(root, tests)
    env = dict(os.environ, FREEZEGATE=binary, PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    env.pop("HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY", None)
    pytest = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    variants = {"plain": ["-p", "no:freezegate"], "plugin": ["--freezegate"]}
    suites = {"one file": ["tests/test_mod1.py"], "every file": ["--ignore", "tests/test_props.py"],
              "properties": ["tests/test_props.py"]}
    jobs = [(suite, variant, pytest + flags + paths) for suite, paths in suites.items() for variant, flags in variants.items()]

    def count(job):
        suite, variant, args = job
        out = os.path.join(root, f"callgrind.{suite.replace(' ', '-')}.{variant}")
        done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + args,
                              cwd=root, env=env, capture_output=True, text=True)
        found = [line for line in done.stderr.splitlines() if "Collected :" in line]
        if done.returncode not in (0, 1) or not found:
            sys.exit(f"callgrind {' '.join(args)} exited {done.returncode}:\n{done.stderr[-2000:]}")
        return (suite, variant), int(found[-1].split(":")[-1].strip().replace(",", ""))

    # One a core: callgrind runs one core's worth each, and the counts do not depend on it.
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        counts = dict(pool.map(count, jobs))
    shutil.rmtree(root, ignore_errors=True)
    few, many = 100, tests
    delta = {suite: counts[(suite, "plugin")] - counts[(suite, "plain")] for suite in suites}
    pytest_per_test = (counts[("every file", "plain")] - counts[("one file", "plain")]) / (many - few)
    plugin_per_test = (delta["every file"] - delta["one file"]) / (many - few)
    fixed = delta["one file"] - few * plugin_per_test
    print(f"machine: {machine()}; instructions counted by callgrind ({tests} tests, {observed} in the ledger)")
    for (suite, variant), n in sorted(counts.items()):
        print(f"  {suite:<11} {variant:<7} {n / 1e9:7.3f} G")
    print(f"  pytest, per test             {pytest_per_test / 1e3:8.1f} k")
    print(f"  the plugin, per test         {plugin_per_test / 1e3:8.1f} k  ({plugin_per_test / pytest_per_test * 100:+.1f} % of pytest's)")
    print(f"  the plugin, once per session {fixed / 1e6:8.1f} M  (asking the binary, imports, the record's write)")
    per_property = (delta["properties"] - fixed - PROPERTIES * plugin_per_test) / observed
    print(f"  per property the ledger names {per_property / 1e6:7.1f} M  "
          f"(its {observed} properties observed, of {PROPERTIES} in the file)")


def spread(values, fmt):
    """`(min a, max b)` of a figure's rounds."""
    return f"(min {fmt.format(min(values))}, max {fmt.format(max(values))})"


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as info:
            model = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), model)
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {model}"


def load_average():
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


if __name__ == "__main__":
    main()
