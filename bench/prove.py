#!/usr/bin/env python3
"""Benchmark `freezegate prove` (a bench script, not a timed test).

    python3 bench/prove.py [--binary target/release/freezegate] [--python .venv/bin/python]
                           [--project DIR --freeze-ledger FILE] [-j N]

Without --project: the two projects of tests/prove.rs, each in a temporary git
repository: the inventory (three functions, a dozen tests, one freeze; flat layout,
`pythonpath = .`), and the shelf (a `src/` layout installed editable with pip into a venv
of its own over --python's packages, `--cov` in addopts, a function that also runs at
import). With --project (a git checkout with a ledger), that project; the ledger file is
copied over gate/freeze_ledger.json first.

Prints prove's wall time, its mutants per second (in all, and of the mutants' runs
alone), and mutmut's own figure ("mutations/second" of `mutmut run`, its runs alone) for
the same mutants and the same tests (the frozen test and its properties), so the
orchestration's cost shows beside the engine's; then the time `check --proof` adds over
the same check without it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def inventory(dest: Path) -> None:
    """The inventory project of tests/prove.rs, extracted from the test's constants."""
    source = (ROOT / "tests" / "prove.rs").read_text()

    def const(name: str) -> str:
        match = re.search(rf'const {name}: &str = r#"(.*?)"#;', source, re.S)
        assert match, name
        return match.group(1)

    (dest / "tests").mkdir(parents=True)
    (dest / "gate").mkdir()
    (dest / "inventory.py").write_text(const("INVENTORY"))
    (dest / "tests" / "test_inventory.py").write_text(const("EXAMPLES"))
    (dest / "tests" / "test_props.py").write_text(
        "import pytest\nfrom hypothesis import given, strategies as st\nfrom inventory import reserve\n\n"
        + const("EXACT")
    )
    (dest / "pytest.ini").write_text("[pytest]\ntestpaths = tests\npythonpath = .\n")
    (dest / ".gitignore").write_text("gate/proof*.json\n__pycache__/\n.hypothesis/\nmutants/\n")
    ledger = {"schema": 1, "freezes": [{
        "test_id": "tests/test_inventory.py::test_reserve_takes_qty", "reason": "bench",
        "owner": "bench", "opened": "2026-11-28", "expires": "2026-12-05",
        "invariant": "reserve", "compensating_property": "tests/test_props.py::test_reserve_prop",
        "reused_property": False}]}
    (dest / "gate" / "freeze_ledger.json").write_text(json.dumps(ledger, indent=1))
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "-c", "user.name=bench", "-c", "user.email=bench@invalid", "commit", "-q", "-m", "bench")


def shelf(dest: Path, python: str) -> str:
    """The src-layout project of tests/prove.rs, installed editable into a venv of its
    own (offline: setuptools from --python's packages); that venv's python."""
    source = (ROOT / "tests" / "prove.rs").read_text()

    def const(name: str) -> str:
        match = re.search(rf'const {name}: &str = r#"(.*?)"#;', source, re.S)
        assert match, name
        return match.group(1)

    (dest / "src" / "shelf").mkdir(parents=True)
    (dest / "tests").mkdir()
    (dest / "gate").mkdir()
    (dest / "src" / "shelf" / "__init__.py").write_text(const("SHELF"))
    (dest / "tests" / "test_shelf.py").write_text(const("SHELF_TESTS"))
    (dest / "tests" / "test_shelf_props.py").write_text(
        "import pytest\nfrom hypothesis import given, strategies as st\n\nfrom shelf import place\n\n"
        + const("SHELF_HONEST")
    )
    (dest / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "shelf"\nversion = "0.1"\n\n[tool.setuptools.packages.find]\nwhere = ["src"]\n'
    )
    (dest / "pytest.ini").write_text(
        "[pytest]\ntestpaths = tests\naddopts = --cov=shelf --cov-report= --cov-fail-under=100\n"
    )
    (dest / ".gitignore").write_text("gate/proof*.json\n__pycache__/\n.hypothesis/\n*.egg-info/\n.coverage*\nvenv/\n")
    ledger = {"schema": 1, "freezes": [{
        "test_id": "tests/test_shelf.py::test_place", "reason": "bench",
        "owner": "bench", "opened": "2026-11-28", "expires": "2026-12-05",
        "invariant": "place", "compensating_property": "tests/test_shelf_props.py::test_place_prop",
        "reused_property": False}]}
    (dest / "gate" / "freeze_ledger.json").write_text(json.dumps(ledger, indent=1))
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "-c", "user.name=bench", "-c", "user.email=bench@invalid", "commit", "-q", "-m", "bench")
    venv = dest / "venv"
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
    own = str(venv / "bin" / "python")

    def purelib(py: str) -> str:
        return subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()

    Path(purelib(own), "_bench.pth").write_text(purelib(python) + "\n")
    subprocess.run([own, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-build-isolation",
                    "--disable-pip-version-check", "-e", str(dest)], check=True)
    return own


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True)


def mutmut_figure(project: Path, python: str, record: dict, jobs: int) -> tuple[float, float]:
    """mutmut run on the same mutants with the same tests: (its mutations/second, wall s)."""
    work = Path(tempfile.mkdtemp(prefix="bench-mutmut-"))
    try:
        copy = work / "tree"
        shutil.copytree(project, copy, ignore=shutil.ignore_patterns(".git", "mutants", ".hypothesis"))
        freeze = record["freezes"][0]
        files = sorted({s["file"] for s in freeze["stake"]})
        tests = [freeze["test_id"], *freeze["properties"]]
        config = "[mutmut]\n"
        config += "source_paths=\n" + "".join(f"    {f}\n" for f in files)
        config += "pytest_add_cli_args_test_selection=\n" + "".join(f"    {t}\n" for t in tests)
        # As prove runs them: the freezegate plugin loaded but off (FREEZEGATE_PLUGIN_OFF,
        # so a strict config still knows `freezegate = true`), and no xdist workers.
        xdist = subprocess.run([python, "-c", "import xdist"], capture_output=True).returncode == 0
        if xdist:
            config += "pytest_add_cli_args=\n    -n\n    0\n"
        # mutmut runs pytest in mutants/: without the ini file there, pytest finds the
        # one above it and imports the unmutated code (then "no test case for any mutant").
        ini = [name for name in ("pytest.ini", "tox.ini") if (copy / name).exists()]
        if ini:
            config += "also_copy=\n" + "".join(f"    {name}\n" for name in ini)
        (copy / "setup.cfg").write_text(config)
        pyproject = copy / "pyproject.toml"
        if pyproject.exists():  # mutmut prefers [tool.mutmut] there; ours is in setup.cfg
            text = pyproject.read_text().replace("[tool.mutmut]", "[tool.mutmut-ignored]")
            pyproject.write_text(text)
        names = [m["id"] for m in freeze["mutants"]]
        started = time.monotonic()
        out = subprocess.run(
            [python, "-m", "mutmut", "run", "--max-children", str(jobs), *names],
            cwd=copy, capture_output=True, text=True,
            env={**os.environ, "FREEZEGATE_PLUGIN_OFF": "1"},
        )
        wall = time.monotonic() - started
        found = re.findall(r"([0-9.]+) mutations/second", out.stdout + out.stderr)
        if not found:
            print(out.stdout[-2000:], out.stderr[-2000:], file=sys.stderr)
            return float("nan"), wall
        return float(found[-1]), wall
    finally:
        shutil.rmtree(work, ignore_errors=True)


def timed(command: list[str], cwd: Path, runs: int = 1) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.monotonic()
        subprocess.run(command, cwd=cwd, capture_output=True)
        best = min(best, time.monotonic() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=str(ROOT / "target" / "release" / "freezegate"))
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    parser.add_argument("--project")
    parser.add_argument("--freeze-ledger")
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("--max-mutants", type=int)
    args = parser.parse_args()
    args.binary = str(Path(args.binary).resolve())
    args.python = str(Path(args.python).absolute())

    temp = None
    if args.project:
        project = Path(args.project).resolve()
        if args.freeze_ledger:
            shutil.copy(args.freeze_ledger, project / "gate" / "freeze_ledger.json")
        projects = [(project, args.python, True)]
    else:
        temp = Path(tempfile.mkdtemp(prefix="bench-prove-"))
        (temp / "inventory").mkdir()
        inventory(temp / "inventory")
        (temp / "shelf").mkdir()
        # mutmut's own run imports the editable install's tree, not its mutants/ copy:
        # no engine figure there.
        projects = [(temp / "inventory", args.python, True),
                    (temp / "shelf", shelf(temp / "shelf", args.python), False)]
    try:
        for project, python, compare in projects:
            print(f"== {project.name}")
            bench(args, project, python, compare)
    finally:
        if temp:
            shutil.rmtree(temp, ignore_errors=True)


def bench(args: argparse.Namespace, project: Path, python: str, compare: bool) -> None:
    command = [args.binary, "prove", "--all", "--python", python, "-j", str(args.jobs)]
    if args.max_mutants:
        command += ["--max-mutants", str(args.max_mutants)]
    started = time.monotonic()
    out = subprocess.run(command, cwd=project, capture_output=True, text=True)
    wall = time.monotonic() - started
    print(out.stdout, end="")
    if out.returncode != 0:
        sys.exit(out.stderr)
    record = json.loads((project / "gate" / "proof.json").read_text())
    mutants = sum(len(f["mutants"]) for f in record["freezes"])
    print(f"prove: {wall:.1f} s wall, {mutants} mutants, {mutants / wall:.2f} mutants/s (-j {args.jobs})")
    runs = sum(float(s) for s in re.findall(r"their runs alone ([0-9.]+) s", out.stdout))
    if runs > 0:
        print(f"prove, the mutants' runs alone: {runs:.1f} s, {mutants / runs:.2f} mutants/s")
    if compare:
        engine, engine_wall = mutmut_figure(project, python, record, args.jobs)
        if engine == engine:
            print(f"mutmut run, same mutants and tests: {engine:.2f} mutations/second (its own figure, its runs alone; {engine_wall:.1f} s wall with its stats and clean runs)")
        else:
            # mutmut's own run mutates only what it can: not a decorated function (bidict's
            # `pop`), whose mutants prove makes with the decorator kept.
            print(f"mutmut run, same mutants and tests: no figure: mutmut found no test for the mutants it made ({engine_wall:.1f} s wall); it does not mutate decorated functions, prove does")
        if runs > 0 and engine == engine:
            print(f"prove's runs per mutant against mutmut's: {engine * runs / mutants:.2f}x the time (mutmut stops at the first failing test, -x; prove runs the frozen test and every property to its own verdict)")
    check = [args.binary, "check", "--select", "FZ1", "--today", "2026-11-30"]
    without = timed(check, project, runs=20)
    with_proof = timed(check + ["--select", "FZ210,FZ211,FZ212,FZ404", "--proof", "gate/proof.json"], project, runs=20)
    print(f"check: {without * 1000:.1f} ms; with --proof: {with_proof * 1000:.1f} ms (+{(with_proof - without) * 1000:.1f} ms)")

if __name__ == "__main__":
    main()
