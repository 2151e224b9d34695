"""The freezegate pytest plugin: applies exactly the ledger's skips and writes the run
record (``gate/run.json``) that ``freezegate check --run`` judges.

Inert until enabled with ``--freezegate`` (or ini ``freezegate = true``). Every decision
it can leave to the binary stays there: the skip set, the ledger's digest, the commit
and whether the checkout is dirty all come from ``freezegate skips --format plugin``,
the one parser of the ledger. Under pytest-xdist the controller asks the binary once,
hands the answer to the workers, and merges what they collected; it writes the record.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

import pytest

RECORD_VERSION = 1
RECORD_KIND = "freezegate run record"
DEFAULT_RECORD = "gate/run.json"
_WORKER_KEY = "freezegate"

# What an outcome is worse than: a test counts once, at its worst phase.
_RANK = {"passed": 0, "xpassed": 1, "xfailed": 2, "skipped": 3, "failed": 4, "error": 5}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("freezegate", "freezegate: ledger skips and the run record")
    group.addoption(
        "--freezegate",
        action="store_true",
        default=None,
        help="apply the freeze ledger's skips and write the run record for `freezegate check --run`",
    )
    group.addoption(
        "--freezegate-record",
        metavar="PATH",
        default=None,
        help=f"where to write the run record, relative to the invocation directory (default: {DEFAULT_RECORD})",
    )
    parser.addini("freezegate", type="bool", default=False, help="enable the freezegate plugin")
    parser.addini(
        "freezegate_record", default=DEFAULT_RECORD, help="the run record's path (see --freezegate-record)"
    )


def _enabled(config: pytest.Config) -> bool:
    flag = config.getoption("freezegate")
    return bool(flag) if flag is not None else bool(config.getini("freezegate"))


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def find_binary() -> str:
    """`$FREEZEGATE`, else the `freezegate` of this environment, else `PATH`."""
    explicit = os.environ.get("FREEZEGATE")
    if explicit:
        if not (os.path.isfile(explicit) and os.access(explicit, os.X_OK)):
            raise pytest.UsageError(f"freezegate: $FREEZEGATE={explicit} is not an executable file")
        return explicit
    name = "freezegate.exe" if os.name == "nt" else "freezegate"
    for scripts in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = os.path.join(scripts, name)
        if scripts and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("freezegate")
    if found:
        return found
    raise pytest.UsageError(
        "freezegate: no freezegate executable: set $FREEZEGATE, install freezegate into this "
        f"environment ({sysconfig.get_path('scripts')}), or put it on PATH"
    )


def ask_binary(invocation_dir: Path) -> Dict[str, Any]:
    """The skips the ledger derives at this commit, with the ledger's digest and the
    commit, from the binary (the same config discovery as `freezegate check`)."""
    binary = find_binary()
    try:
        done = subprocess.run(
            [binary, "skips", "--format", "plugin"],
            cwd=str(invocation_dir),
            capture_output=True,
            encoding="utf-8",  # the binary's output, not the locale's (cp1252 on Windows)
            check=False,
        )
    except OSError as error:
        raise pytest.UsageError(f"freezegate: could not run {binary}: {error}") from error
    if done.returncode != 0:
        raise pytest.UsageError(
            f"freezegate: `{binary} skips` failed (exit {done.returncode}); no test ran:\n{done.stderr.strip()}"
        )
    try:
        answer = json.loads(done.stdout)
        skips = answer["skips"]
    except (ValueError, KeyError, TypeError) as error:
        raise pytest.UsageError(
            f"freezegate: `{binary} skips --format plugin` printed no skip set ({error}): "
            "is it the freezegate of this plugin's release?"
        ) from error
    if not isinstance(skips, list):
        raise pytest.UsageError("freezegate: the binary's skip set is not a list")
    return answer


def covered_by(node_id: str, frozen: Set[str]) -> bool:
    """A frozen id covers itself, its parametrized cases and, for a class, its tests."""
    if node_id in frozen:
        return True
    head = node_id.split("[", 1)[0]
    if head != node_id and head in frozen:
        return True
    parts = head.split("::")
    return any("::".join(parts[:end]) in frozen for end in range(2, len(parts)))


def _line_span(item: pytest.Item) -> Optional[List[int]]:
    """The first (decorators included) and last source line of a test function."""
    function = getattr(item, "obj", None)
    # Hypothesis wraps a property: its own lines are the inner test's.
    function = getattr(getattr(function, "hypothesis", None), "inner_test", None) or function
    code = getattr(function, "__code__", None)
    if code is None:
        return None
    return list(_code_span(code))


@functools.lru_cache(maxsize=None)
def _code_span(code: Any) -> Tuple[int, int]:
    """A code object's first and last line (parametrized cases share theirs)."""
    first = code.co_firstlineno
    if hasattr(code, "co_lines"):
        last = max([line or first for _, _, line in code.co_lines()], default=first)
    else:  # Python 3.9
        import dis

        last = max([line for _, line in dis.findlinestarts(code)], default=first)
    return first, max(first, last)


class Collection:
    """What one process collected: the ids before deselection, what was deselected, and
    what was dropped without a word. Under xdist each worker collects; the controller
    merges them."""

    def __init__(self) -> None:
        self.collected: List[str] = []
        self.deselected: Set[str] = set()
        self.dropped: Set[str] = set()
        self.markers: Dict[str, List[str]] = {}
        self.lines: Dict[str, List[int]] = {}

    def to_json(self) -> Dict[str, Any]:
        return {
            "collected": self.collected,
            "deselected": sorted(self.deselected),
            "dropped": sorted(self.dropped),
            "markers": self.markers,
            "lines": self.lines,
        }

    def merge(self, other: Dict[str, Any]) -> None:
        seen = set(self.collected)
        self.collected.extend(i for i in other["collected"] if i not in seen)
        self.deselected.update(other["deselected"])
        self.dropped.update(other["dropped"])
        self.markers.update(other["markers"])
        self.lines.update(other["lines"])


class Samples:
    """Distinct inputs per Hypothesis property for this run only, counted in process by
    what Hypothesis drew (its choice sequence) where it has one.

    Observing a property makes Hypothesis describe every example it runs (a repr of
    each argument): a tenth of a Hypothesis-heavy suite's time. So only the properties
    the binary names (the ledger's compensating properties) are observed, each while it
    runs; every property is when the user turned observability on for files anyway."""

    def __init__(self) -> None:
        # property -> (run_start, keys, counted by choices)
        self.runs: Dict[str, Tuple[float, Set[Any], bool]] = {}
        # The properties to observe; None: every one, for the whole session.
        self.only: Optional[Set[str]] = None
        self._observability: Any = None

    def install(self, only: Optional[List[str]]) -> None:
        try:
            from hypothesis.internal import observability
        except ImportError:
            return  # no Hypothesis: no properties to count
        if not hasattr(observability, "remove_observability_callback"):
            return
        observability.OBSERVABILITY_CHOICES = True
        if "HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY" in os.environ or only is None:
            observability.add_observability_callback(self.observe, all_threads=True)
            return
        # Nobody asked for observability files: skip the per-example line coverage
        # Hypothesis would otherwise collect for them.
        observability.OBSERVABILITY_COLLECT_COVERAGE = False
        self.only = set(only)
        self._observability = observability

    @contextlib.contextmanager
    def observing(self, node_id: str) -> Iterator[None]:
        """Observes the test while it runs, when it is one of the properties to count."""
        if self.only is None or not covered_by(node_id, self.only):
            yield
            return
        self._observability.add_observability_callback(self.observe, all_threads=True)
        try:
            yield
        finally:
            self._observability.remove_observability_callback(self.observe)

    def observe(self, observation: Any, thread_id: int = 0) -> None:
        if getattr(observation, "type", None) != "test_case":
            return
        if getattr(observation, "status", None) not in ("passed", "failed"):
            return
        prop = observation.property
        start = float(getattr(observation, "run_start", 0.0) or 0.0)
        nodes = getattr(getattr(observation, "metadata", None), "choice_nodes", None)
        if nodes is not None:
            key: Any = tuple((node.type, repr(node.value)) for node in nodes)
        else:
            key = json.dumps(observation.arguments, sort_keys=True, default=repr)
        current = self.runs.get(prop)
        if current is None or start > current[0]:
            current = (start, set(), nodes is not None)
            self.runs[prop] = current
        elif start < current[0]:
            return  # an earlier run of a property run twice: only the latest counts
        current[1].add(key)
        if nodes is None and current[2]:
            self.runs[prop] = (current[0], current[1], False)

    def to_json(self) -> Dict[str, Any]:
        return {
            prop: {"distinct": len(keys), "method": "choice sequences" if choices else "arguments"}
            for prop, (_, keys, choices) in self.runs.items()
        }



class FreezegatePlugin:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.invocation_dir = Path(config.invocation_params.dir)
        self.rootdir = Path(config.rootpath)
        record = config.getoption("freezegate_record") or config.getini("freezegate_record")
        self.record_path = self.invocation_dir / record
        self.answer: Dict[str, Any] = {}
        self.collection = Collection()
        self.worker_collections: List[Dict[str, Any]] = []
        self.worker_samples: Dict[str, Any] = {}
        self.samples = Samples()
        self.tests: Dict[str, Dict[str, Any]] = {}
        self.collection_skips: Dict[str, Dict[str, Any]] = {}
        self.crashed = False
        self.collection_failed = False
        self.is_worker = _is_worker(config)
        self._before: List[str] = []

    # -- session start ---------------------------------------------------------------

    def start(self) -> None:
        if _is_worker(self.config):
            self.answer = json.loads(self.config.workerinput[_WORKER_KEY])
        else:
            self.answer = ask_binary(self.invocation_dir)
            self._check_writable()
        self.frozen = set(self.answer["skips"])
        self.samples.install(self.answer.get("observe"))

    def _check_writable(self) -> None:
        directory = self.record_path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=str(directory), prefix=".run-", delete=True):
                pass
        except OSError as error:
            raise pytest.UsageError(
                f"freezegate: cannot write the run record at {self.record_path}: {error}"
            ) from error

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[_WORKER_KEY] = json.dumps(self.answer)

    # -- collection (in each worker under xdist) -----------------------------------

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config, items: List[pytest.Item]):
        # Around every other implementation: what pytest collected, before `-k`, `-m`,
        # `--deselect`, `--lf` or a conftest hook took anything away.
        self._before = [item.nodeid for item in items]
        frozen = self.frozen
        # Only a test in a file with a freeze can be covered by one.
        files = {node_id.partition("::")[0] for node_id in frozen}
        for item in items:
            if item.nodeid.partition("::")[0] in files and covered_by(item.nodeid, frozen):
                ledger = self.answer.get("ledger", "the ledger")
                item.add_marker(pytest.mark.skip(reason=f"frozen in {ledger} (freezegate)"))
            span = _line_span(item)
            if span is not None:
                self.collection.lines[item.nodeid] = span
        self._items = {item.nodeid: item for item in items}
        yield

    def pytest_deselected(self, items: List[pytest.Item]) -> None:
        for item in items:
            self.collection.deselected.add(item.nodeid)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        kept = {item.nodeid for item in session.items}
        self.collection.collected = list(self._before)
        for node_id in self._before:
            if node_id not in kept and node_id not in self.collection.deselected:
                self.collection.dropped.add(node_id)
        items = getattr(self, "_items", {})
        for node_id in self.collection.deselected | self.collection.dropped:
            item = items.get(node_id)
            if item is not None:
                self.collection.markers[node_id] = sorted({m.name for m in item.iter_markers()})

    # -- reports (the controller receives every worker's) --------------------------

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if self.is_worker:
            return
        if report.failed:
            self.collection_failed = True
        if report.skipped and isinstance(report.longrepr, tuple):
            path, line, reason = report.longrepr
            self.collection_skips[report.nodeid] = {
                "nodeid": report.nodeid,
                "reason": _reason(reason),
                "file": self._relative(path),
                "line": line,
            }

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        with self.samples.observing(item.nodeid):
            yield

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return
        outcome = _outcome(report)
        if outcome is None:
            return
        entry = self.tests.get(report.nodeid)
        if entry is None:
            entry = self.tests[report.nodeid] = {"outcome": "passed"}
        if outcome == "passed" or _RANK[outcome] < _RANK[entry["outcome"]]:
            return
        entry.clear()
        entry["outcome"] = outcome
        if outcome in ("skipped", "xfailed", "xpassed"):
            entry.update(self._skip_detail(report, outcome))

    def _skip_detail(self, report: pytest.TestReport, outcome: str) -> Dict[str, Any]:
        keywords = report.keywords
        scope = None
        # Decided from the skip set itself: under xdist the controller marked nothing.
        if outcome == "skipped" and covered_by(report.nodeid, self.frozen):
            source = "ledger"
        elif outcome in ("xfailed", "xpassed"):
            source = "mark" if "xfail" in keywords else "imperative"
        elif report.when == "setup" and ("skip" in keywords or "skipif" in keywords):
            source = "mark"
            # pytest gives a module's `pytestmark` without the `pytestmark` keyword.
            if "pytestmark" not in keywords:
                scope = "module"
        elif "__unittest_skip__" in keywords:
            source = "mark"
        else:
            source = "imperative"
            if report.when == "setup":
                # A fixture called pytest.skip(): pytest reports the test's location.
                scope = "fixture"
        detail: Dict[str, Any] = {"source": source}
        if scope:
            detail["scope"] = scope
        if isinstance(report.longrepr, tuple):
            path, line, reason = report.longrepr
            detail.update(reason=_reason(reason), file=self._relative(path), line=line)
        else:
            # pytest.xfail() raises where it is called: its crash entry is that line
            # (pytest hides its own frames), where report.location is the test's def.
            crash = getattr(report.longrepr, "reprcrash", None)
            if source == "imperative" and crash is not None and crash.lineno:
                detail.update(file=self._relative(crash.path), line=crash.lineno)
            else:
                file, line, _ = report.location
                detail.update(file=file, line=(line + 1) if line is not None else None)
            wasxfail = getattr(report, "wasxfail", None)
            if wasxfail:
                detail["reason"] = wasxfail
        return detail

    def _incomplete(self, session: pytest.Session, exitstatus: int) -> Optional[str]:
        """Why the run is not the whole run, or None when it is."""
        if self.crashed:
            return "a worker crashed"
        if self.collection_failed:
            return "collection failed"
        # -x / --maxfail stopped the run: what it did not reach did not run.
        if session.shouldfail:
            return f"pytest stopped early (-x or --maxfail: {session.shouldfail})"
        if session.shouldstop:
            return f"the session was stopped ({session.shouldstop})"
        if exitstatus not in (0, 1, 5):
            return f"pytest exited with status {exitstatus} (interrupted, or an internal or usage error)"
        return None

    def _selection(self) -> List[str]:
        """What asked pytest to deselect, as the command line and ini gave it."""
        option = self.config.option
        addopts = " ".join(self.config.getini("addopts"))
        said: List[str] = []
        # What addopts gave is said once, as addopts.
        if getattr(option, "keyword", "") and option.keyword not in addopts:
            said.append(f"-k {option.keyword!r}")
        if getattr(option, "markexpr", "") and option.markexpr not in addopts:
            said.append(f"-m {option.markexpr!r}")
        for node_id in getattr(option, "deselect", None) or []:
            if node_id not in addopts:
                said.append(f"--deselect {node_id}")
        if getattr(option, "lf", False) and "--lf" not in addopts:
            said.append("--lf")
        if addopts:
            said.append(f"addopts = {addopts}")
        return said

    def _relative(self, path: str) -> str:
        try:
            return Path(path).resolve().relative_to(self.rootdir.resolve()).as_posix()
        except ValueError:
            return Path(path).as_posix()

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        if error:
            self.crashed = True
        output = getattr(node, "workeroutput", {}).get(_WORKER_KEY)
        if output is None:
            self.crashed = True
            return
        payload = json.loads(output)
        self.worker_collections.append(payload["collection"])
        self.worker_samples = _max_samples(self.worker_samples, payload["samples"])

    # -- session end -----------------------------------------------------------------

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if _is_worker(self.config):
            self.config.workeroutput[_WORKER_KEY] = json.dumps(
                {"collection": self.collection.to_json(), "samples": self.samples.to_json()}
            )
            return
        collection = self.collection
        if self.worker_collections:
            collection = Collection()
            for worker in sorted(self.worker_collections, key=lambda c: len(c["collected"]), reverse=True):
                collection.merge(worker)
        samples = self.worker_samples if self.worker_collections else self.samples.to_json()
        incomplete = self._incomplete(session, int(exitstatus))
        lines = collection.lines
        tests = {}
        # In collection order (then any test not collected), as the gate reads fastest.
        collected = [i for i in collection.collected if i in self.tests]
        listed = set(collected)
        for node_id in collected + sorted(i for i in self.tests if i not in listed):
            entry = dict(self.tests[node_id])
            if node_id in lines:
                entry["lines"] = lines[node_id]
            tests[node_id] = entry
        record = {
            "version": RECORD_VERSION,
            "kind": RECORD_KIND,
            "commit": self.answer.get("commit"),
            "dirty": bool(self.answer.get("dirty")),
            "ledger": self.answer.get("ledger"),
            "ledger_sha256": self.answer.get("ledger_sha256"),
            "complete": incomplete is None,
            **({"incomplete": incomplete} if incomplete else {}),
            "exitstatus": int(exitstatus),
            "collected": collection.collected,
            "deselected": sorted(collection.deselected),
            "dropped": sorted(collection.dropped),
            "markers": {k: collection.markers[k] for k in sorted(collection.markers)},
            "tests": tests,
            "collection_skips": [self.collection_skips[k] for k in sorted(self.collection_skips)],
            "samples": {k: samples[k] for k in sorted(samples)},
            "selection": self._selection(),
        }
        # One line: a record of a monorepo's suite is written and read in a blink.
        write_atomic(self.record_path, json.dumps(record, separators=(",", ":")) + "\n")


def _max_samples(a: Dict[str, Any], b: Dict[str, Any]) -> Dict[str, Any]:
    """Two processes' counts: a property runs in one process, so this keeps each one's
    own count (the larger, should a property ever run twice)."""
    merged = dict(a)
    for prop, count in b.items():
        if prop not in merged or count["distinct"] > merged[prop]["distinct"]:
            merged[prop] = count
    return merged


def _outcome(report: pytest.TestReport) -> Optional[str]:
    wasxfail = hasattr(report, "wasxfail")
    if report.when == "call":
        if report.passed:
            return "xpassed" if wasxfail else "passed"
        if report.skipped:
            return "xfailed" if wasxfail else "skipped"
        return "failed"
    if report.failed:
        return "error"
    if report.skipped:
        return "xfailed" if wasxfail else "skipped"
    return "passed" if report.when == "setup" else None


def _reason(text: str) -> str:
    return text[len("Skipped: "):] if text.startswith("Skipped: ") else text


def write_atomic(path: Path, text: str) -> None:
    """Writes via a temporary file and a rename, keeping the mode of the file replaced
    (a new file gets the umask's)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, temporary = tempfile.mkstemp(dir=str(path.parent), prefix=".run-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, str(path))
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def pytest_configure(config: pytest.Config) -> None:
    if not _enabled(config):
        return
    plugin = FreezegatePlugin(config)
    plugin.start()
    config.pluginmanager.register(plugin, "freezegate-session")
