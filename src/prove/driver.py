"""freezegate prove's driver: the mutation engine (mutmut 3) as a library, and a pytest
plugin for the runs. Written into a scratch directory by the freezegate binary and run
with the project's Python; every decision is the binary's.

    python driver.py version                 -> {"engine": "mutmut", "version": "3.8.1"}
    python driver.py stake COVERAGE.json     -> the project functions a run executed
    python driver.py mutate SPEC.json        -> mutates the files in place, lists mutants
    python driver.py serve                   -> a fork server for the runs (below)

As a pytest plugin (`-p freezegate_prove_driver`), it loads a derandomized Hypothesis
profile without an example database, and appends each test's outcome to the file named
by FREEZEGATE_PROVE_OUT as the run goes (so a run stopped at its time limit still says
which test was running).
"""

from __future__ import annotations

import ast
import difflib
import json
import os
import signal
import sys
import time

ENGINE_MISSING = 3


def _functions(source: str):
    """(name, class or None, first line incl. decorators, def line, last line) of every
    top-level function and method: what mutmut mutates."""
    tree = ast.parse(source)
    found = []

    def visit(body, cls):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                found.append((node.name, cls, first, node.lineno, node.end_lineno))
            elif isinstance(node, ast.ClassDef) and cls is None:
                visit(node.body, node.name)

    visit(tree.body, None)
    return found


def stake(coverage_json: str) -> None:
    with open(coverage_json, encoding="utf-8") as f:
        report = json.load(f)
    out = []
    for path, data in sorted(report.get("files", {}).items()):
        executed = set(data.get("executed_lines", []))
        try:
            with open(path, encoding="utf-8") as f:
                functions = _functions(f.read())
        except (OSError, SyntaxError, ValueError):
            continue
        for name, cls, first, def_line, last in functions:
            # The body's lines, not the def line (run at import).
            lines = sorted(line for line in executed if def_line < line <= last)
            if lines:
                out.append({
                    "file": path,
                    "function": f"{cls}.{name}" if cls else name,
                    "start": first,
                    "end": last,
                    "lines": lines,
                })
    json.dump(out, sys.stdout)


def _module_of(path: str) -> str:
    from mutmut.utils.format_utils import get_mutant_name
    from pathlib import Path

    return get_mutant_name(Path(path), "x").rpartition(".")[0]


def _one_line(orig: list[str], mutant: list[str]) -> tuple[int, str]:
    """The first changed line (offset into the function) and the change as one line."""
    matcher = difflib.SequenceMatcher(a=orig, b=mutant, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        old = " ".join(line.strip() for line in orig[i1:i2])
        new = " ".join(line.strip() for line in mutant[j1:j2])
        return i1, f"- {old} + {new}" if old else f"+ {new}"
    return 0, "(no textual change)"


def mutate(spec_json: str) -> None:
    import mutmut.configuration as configuration

    # The project's own [tool.mutmut] / setup.cfg still applies (do_not_mutate_patterns,
    # pragmas); only the guess of where the code lives is not needed: the files are given.
    configuration._guess_source_paths = lambda: ["."]
    from mutmut.mutation.file_mutation import mutate_file_contents

    with open(spec_json, encoding="utf-8") as f:
        spec = json.load(f)
    out = []
    for path, lines in spec["files"].items():
        with open(path, encoding="utf-8") as f:
            source = f.read()
        mutated = mutate_file_contents(path, source, set(lines), None)
        code_lines = mutated.code.splitlines()
        spans = mutated.line_span_by_function_name
        defs = {}
        for name, cls, _first, def_line, _last in _functions(source):
            defs[f"x\u01c1{cls}\u01c1{name}" if cls else f"x_{name}"] = def_line
        module = _module_of(path)

        def body(generated: str) -> list[str]:
            span = spans[generated]
            text = code_lines[span.start - 1 : span.end]
            # From the def line on, decorators aside, with the generated name made plain.
            for i, line in enumerate(text):
                if line.lstrip().startswith(("def ", "async def ")):
                    return text[i + 1 :]
            return text

        for name in mutated.mutant_names:
            mangled = name.partition("__mutmut_")[0]
            orig = body(mangled + "__mutmut_orig")
            offset, change = _one_line(orig, body(name))
            function = mangled[2:] if mangled.startswith("x_") else mangled.split("\u01c1")[1] + "." + mangled.split("\u01c1")[2]
            out.append({
                "id": f"{module}.{name}",
                "file": path,
                "function": function,
                "line": defs.get(mangled, 0) + 1 + offset,
                "mutation": change,
            })
        with open(path, "w", encoding="utf-8") as f:
            f.write(mutated.code)
    json.dump(out, sys.stdout)


def version() -> None:
    try:
        from importlib.metadata import version as dist_version

        import mutmut  # noqa: F401
        import libcst  # noqa: F401

        found = dist_version("mutmut")
    except Exception as e:  # any failure to import the engine is "not installed"
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(ENGINE_MISSING)
    import importlib.util

    # pytest-xdist in the project's addopts (`-n auto`) would start workers per mutant.
    xdist = importlib.util.find_spec("xdist") is not None
    json.dump({"engine": "mutmut", "version": found, "xdist": xdist}, sys.stdout)


# --- the pytest plugin --------------------------------------------------------------


try:  # the driver's commands run without pytest too (`version` says what is missing)
    import pytest

    _trylast = pytest.hookimpl(trylast=True)
except ImportError:
    def _trylast(f):
        return f


@_trylast
def pytest_configure(config):
    try:
        from hypothesis import HealthCheck, Phase, settings
    except ImportError:
        return
    # Over the profile the project loaded (its max_examples, ...), after Hypothesis's own
    # plugin loaded it.
    settings.register_profile(
        "freezegate-prove",
        parent=settings(),
        derandomize=True,
        database=None,
        report_multiple_bugs=False,
        deadline=None,
        print_blob=False,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    settings.load_profile("freezegate-prove")


def _record(entry: dict) -> None:
    path = os.environ.get("FREEZEGATE_PROVE_OUT")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def pytest_runtest_logstart(nodeid, location):
    _record({"start": nodeid})


try:
    _hookwrapper = pytest.hookimpl(hookwrapper=True)
except NameError:  # pragma: no cover (pytest is imported above when it is installed)
    _hookwrapper = None


def _checked(call) -> bool:
    """Whether a test failed on a check (an assert, pytest.raises or pytest.fail), not by
    crashing: a crash is what any call of broken code gives, a check is what the test
    knew about the code."""
    excinfo = getattr(call, "excinfo", None)
    if excinfo is None:
        return False
    import pytest as _pytest

    checks = (AssertionError, _pytest.fail.Exception)

    def is_check(error: BaseException) -> bool:
        # Hypothesis reports a flaky failure as a group of what it saw.
        group = getattr(error, "exceptions", None)
        if isinstance(error, BaseException) and isinstance(group, tuple):
            return any(is_check(e) for e in group)
        return isinstance(error, checks)

    return is_check(excinfo.value)


if _hookwrapper is not None:
    @_hookwrapper
    def pytest_runtest_makereport(item, call):
        outcome = yield
        report = outcome.get_result()
        if report.when == "call" and report.failed:
            report.freezegate_checked = _checked(call)


def pytest_runtest_teardown(item):
    # Hypothesis's plugin turns a failing example into an `@example` patch on the
    # teardown report: it imports libcst and parses the test's file (0.5-0.9 s of every
    # run a property fails in), for a patch no proof shows.
    item.__dict__.pop("_hypothesis_failing_examples", None)


def pytest_runtest_logreport(report):
    if report.failed or (report.when == "call") or (report.when == "setup" and report.skipped):
        _record({"test": report.nodeid, "when": report.when, "outcome": report.outcome,
                 "checked": bool(getattr(report, "freezegate_checked", False)),
                 "duration": report.duration})


# --- the fork server ----------------------------------------------------------------


def _wait(pid: int, limit: float) -> int | None:
    """The exit status of child `pid`, or None when it ran past `limit` seconds (then
    it and every process it started are killed)."""
    deadline = time.monotonic() + limit
    try:  # Linux: wake the moment it ends
        import select

        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = None
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            left = deadline - time.monotonic()
            if left <= 0:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                os.waitpid(pid, 0)
                return None
            if fd is not None:
                select.select([fd], [], [], left)
            else:
                time.sleep(min(left, 0.005))
    finally:
        if fd is not None:
            os.close(fd)


def _redirect(log: str, stdin: bool) -> None:
    """fd 1 and 2 to `log`; with `stdin`, fd 0 from /dev/null."""
    out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    if stdin:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)


def _warm_up(args: list[str]) -> dict:
    """`pytest --collect-only ARGS` on the unmutated code, in mutmut's "stats" mode with
    its hit recorder swapped for ours: the mutated functions that ran while the project
    and its tests were imported and collected. A mutant of one of them is run on a fresh
    import (`_forget_project`); None when this mutmut's trampoline is not the one known
    here (then every mutant is)."""
    import pytest

    hits: set[str] | None = set()
    try:
        import mutmut.mutation.trampoline as trampoline

        if not hasattr(trampoline, "record_trampoline_hit"):
            raise ImportError("no record_trampoline_hit")
        trampoline.record_trampoline_hit = lambda name, caller=None: hits.add(name)
        os.environ["MUTANT_UNDER_TEST"] = "stats"
    except ImportError:
        hits = None
    try:
        status = int(pytest.main(["--collect-only", "-qq", *args]))
    finally:
        os.environ["MUTANT_UNDER_TEST"] = ""
    return {"status": status, "imported": None if hits is None else sorted(hits)}


def _forget_project(root: str) -> None:
    """Drops every module imported from the project's tree (its code, its tests, its
    conftests) so that pytest imports them again, under the mutant; pytest, its plugins
    and Hypothesis stay imported."""
    root = os.path.join(os.path.realpath(root), "")
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not file or name == __name__ or name == "freezegate_prove_driver":
            continue
        path = os.path.realpath(file)
        inside = path.startswith(root) and not any(
            part in ("site-packages", "dist-packages") or (part.startswith(".") and len(part) > 1)
            for part in path[len(root):].split(os.sep)
        )
        if inside:
            del sys.modules[name]


def _pytest_in_child(args: list[str], mutant: str, out: str, log: str, fresh: bool) -> int:
    """Forks a child that runs `pytest.main(args)` on `mutant` (on a fresh import of the
    project when `fresh`); returns its pid."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        try:
            os.setpgid(pid, pid)
        except OSError:  # it already did, or has ended
            pass
        return pid
    code = 1
    try:
        os.setpgid(0, 0)
        _redirect(log, stdin=True)
        os.environ["MUTANT_UNDER_TEST"] = mutant
        os.environ["FREEZEGATE_PROVE_OUT"] = out
        if fresh:
            _forget_project(os.getcwd())
        import pytest

        code = int(pytest.main(args))
    except BaseException:  # noqa: BLE001 (the child must end here, whatever happened)
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve() -> None:
    """One line of JSON per request on stdin, one line of reply on stdout.

    The first request, {"warm": ARGS, "log": PATH}, imports what every run needs
    (pytest, its plugins, Hypothesis, the conftests, the test modules and the code under
    test, mutants behind mutmut's trampoline) with `pytest --collect-only ARGS`, on the
    unmutated code, and replies {"status", "imported": the mutated functions that ran
    then}; then each {"mutant", "args", "out", "log", "limit", "fresh"} runs
    `pytest.main(args)` in a forked child with MUTANT_UNDER_TEST set (after forgetting the
    project's modules when `fresh`), output to `log`, and replies {"status": EXIT or null
    when stopped at `limit` seconds}. mutmut's own fork server does the same (its
    `forkserver_warmup = collect`): a run pays for its tests, not for Python's and
    pytest's start. Where there is no fork, each run is a new `python -m pytest`."""
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    # `python -m pytest` puts the working directory first on sys.path; so does this.
    sys.path[0] = os.getcwd()
    os.environ["MUTANT_UNDER_TEST"] = ""
    requests = sys.stdin  # fd 0 stays the pipe of requests; the children read /dev/null
    for line in iter(requests.readline, ""):
        request = json.loads(line)
        if "warm" in request:
            _redirect(request["log"], stdin=False)
            reply = _warm_up(request["warm"]) if hasattr(os, "fork") else {"status": 0, "imported": []}
        elif hasattr(os, "fork"):
            pid = _pytest_in_child(request["args"], request["mutant"], request["out"], request["log"],
                                   request["fresh"])
            reply = {"status": _wait(pid, request["limit"])}
        else:  # pragma: no cover (Windows)
            import subprocess

            env = dict(os.environ, MUTANT_UNDER_TEST=request["mutant"], FREEZEGATE_PROVE_OUT=request["out"])
            with open(request["log"], "w", encoding="utf-8") as log:
                try:
                    done = subprocess.run([sys.executable, "-m", "pytest", *request["args"]], env=env,
                                          stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                          timeout=request["limit"])
                    reply = {"status": done.returncode}
                except subprocess.TimeoutExpired:
                    reply = {"status": None}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


if __name__ == "__main__":
    command, *rest = sys.argv[1:] or ["version"]
    {"version": version, "stake": stake, "mutate": mutate, "serve": serve}[command](*rest)
