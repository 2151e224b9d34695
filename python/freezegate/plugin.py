"""The freezegate pytest plugin: applies exactly the ledger's skips and writes the run
record (``gate/run.json``) that ``freezegate check --run`` judges.

Inert until enabled with ``--freezegate`` (or ini ``freezegate = true``), or started by
``freezegate run``, which hands it a pipe for the record. Every decision it can leave to
the binary stays there (:mod:`freezegate.binary`). Under pytest-xdist the controller asks
the binary once, hands the answer to the workers, and merges what they collected; it
writes the record. The rest lives by concern: :mod:`freezegate.outcomes` (what reports
say), :mod:`freezegate.samples` (Hypothesis inputs), :mod:`freezegate.properties`
(Hypothesis settings), :mod:`freezegate.census` (hooks that can change outcomes) and
:mod:`freezegate.pipe` (the supervised run).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import pytest

from . import census
from .addopts import key_line, options_at, value_lines
from .binary import ask_binary
from .code import code_of, forget as forget_code
from .outcomes import RANK, covered_by, outcome_of, reason, relative_to, skip_detail
from .places import skip_place
from .properties import facts_of, profile as hypothesis_profile
from .pipe import Pipe, restore_import_path
from .samples import Samples, max_samples

RECORD_VERSION = 1
RECORD_KIND = "freezegate run record"
DEFAULT_RECORD = "gate/run.json"
_WORKER_KEY = "freezegate"
# Set by `freezegate check --collect`: its pytest collection is not a test run.
OFF_VARIABLE = "FREEZEGATE_PLUGIN_OFF"
# The entry of a test that passed (shared: only other outcomes get an entry of their own).
_PASSED: Dict[str, Any] = {"outcome": "passed"}
_SKIPPED = pytest.skip.Exception

restore_import_path()


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
    if _is_worker(config):
        # An xdist worker works for the controller's plugin, when it has one.
        return _WORKER_KEY in config.workerinput
    if os.environ.get(OFF_VARIABLE):
        return False
    flag = config.getoption("freezegate")
    return bool(flag) if flag is not None else bool(config.getini("freezegate"))


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


class Collection:
    """What one process collected: the ids before deselection, what was deselected, and
    what was dropped without a word. Under xdist each worker collects; the controller
    merges them."""

    def __init__(self) -> None:
        self.collected: List[str] = []
        self.deselected: set = set()
        self.dropped: set = set()
        self.markers: Dict[str, List[str]] = {}
        self.lines: Dict[str, Sequence[int]] = {}
        self.digests: Dict[str, str] = {}
        # Where a test pytest places outside the repository is in it (a state machine).
        self.places: Dict[str, List[Any]] = {}
        # Each Hypothesis test's settings, and the profile in force (FZ304).
        self.hypothesis: Dict[str, Dict[str, Any]] = {}
        self.profile: Optional[Dict[str, Any]] = None

    def to_json(self) -> Dict[str, Any]:
        return {
            "collected": self.collected,
            "deselected": sorted(self.deselected),
            "dropped": sorted(self.dropped),
            "markers": self.markers,
            "lines": self.lines,
            "digests": self.digests,
            "places": self.places,
            "hypothesis": self.hypothesis,
            "profile": self.profile,
        }

    def merge(self, other: Dict[str, Any]) -> None:
        seen = set(self.collected)
        self.collected.extend(i for i in other["collected"] if i not in seen)
        self.deselected.update(other["deselected"])
        self.dropped.update(other["dropped"])
        self.markers.update(other["markers"])
        self.lines.update(other["lines"])
        self.digests.update(other["digests"])
        self.places.update(other["places"])
        self.hypothesis.update(other.get("hypothesis", {}))
        self.profile = self.profile or other.get("profile")


class FreezegatePlugin:
    def __init__(self, config: pytest.Config, pipe: Optional[Pipe]) -> None:
        self.config = config
        self.pipe = pipe
        self.invocation_dir = Path(config.invocation_params.dir)
        self.rootdir = Path(config.rootpath)
        self.relative = relative_to(self.rootdir)
        record = config.getoption("freezegate_record") or config.getini("freezegate_record")
        self.record_path = self.invocation_dir / record
        self.answer: Dict[str, Any] = {}
        self.collection = Collection()
        self.worker_collections: List[Dict[str, Any]] = []
        self.worker_samples: Dict[str, Any] = {}
        self.worker_census: List[List[Dict[str, Any]]] = []
        self.census = census.Census(self.relative)
        self.samples = Samples()
        # The ids of the tests whose setup passed, and an entry for each test whose outcome
        # is not a pass (a passed test has none until the record is written).
        self.ran: List[str] = []
        self.tests: Dict[str, Dict[str, Any]] = {}
        # This process's items by id (none in an xdist controller), and the skips their
        # phases raised until their reports are seen.
        self._items: Dict[str, pytest.Item] = {}
        self._skips: Dict[str, pytest.ExceptionInfo] = {}
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
            if self.pipe is not None:
                self.pipe.hello(str(self.record_path), self.answer)
            else:
                self._check_writable()
        self.frozen = set(self.answer["skips"])

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

    def pytest_plugin_registered(self, plugin: Any, manager: Any) -> None:
        # Historic: every plugin registered before this one is replayed here at once.
        self.census.saw_plugin(manager, plugin)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[_WORKER_KEY] = json.dumps(self.answer)

    # -- collection (in each worker under xdist) -----------------------------------

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config, items: List[pytest.Item]):
        # Around every other implementation: what pytest collected, before `-k`, `-m`,
        # `--deselect`, `--lf` or a conftest hook took anything away.
        before = self._before = []
        by_id = self._items = {}
        collection = self.collection
        frozen = self.frozen
        # Only a test in a file with a freeze can be covered by one.
        files = {node_id.partition("::")[0] for node_id in frozen}
        # Hypothesis is imported by a suite that has properties, once it is collected:
        # a suite without them does not pay for importing it, nor for reading settings.
        properties = "hypothesis" in sys.modules
        settings = collection.hypothesis
        for item in items:
            node_id = item.nodeid
            before.append(node_id)
            by_id[node_id] = item
            if files and node_id.partition("::")[0] in files and covered_by(node_id, frozen):
                ledger = self.answer.get("ledger", "the ledger")
                item.add_marker(pytest.mark.skip(reason=f"frozen in {ledger} (freezegate)"))
            span, digest, place = code_of(item)
            if span is not None:
                collection.lines[node_id] = span
            if digest is not None:
                collection.digests[node_id] = digest
            if place is not None:
                collection.places[node_id] = [self.relative(place[0]), place[1]]
            if properties:
                facts = facts_of(item, span, self.relative)
                if facts is not None:
                    settings[node_id] = facts
        if properties:
            collection.profile = hypothesis_profile(config, self.relative)
        forget_code()
        if properties:
            self.samples.install(self.answer.get("observe"))
            self.samples.observe_items(items)
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
        for node_id in self.collection.deselected | self.collection.dropped:
            item = self._items.get(node_id)
            if item is not None:
                self.collection.markers[node_id] = sorted({m.name for m in item.iter_markers()})

    # -- reports (the controller receives every worker's) --------------------------

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if self.is_worker:
            return
        if report.failed:
            self.collection_failed = True
        if report.skipped and isinstance(report.longrepr, tuple):
            path, line, text = report.longrepr
            self.collection_skips[report.nodeid] = {
                "nodeid": report.nodeid,
                "reason": reason(text),
                "file": self.relative(path),
                "line": line,
            }

    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> None:
        # A plain implementation, not a wrapper: it runs for every phase of every test and
        # only keeps a skip's exception for pytest_runtest_logreport to find its line.
        # Not tryfirst: pytest's unittest support (tryfirst) moves a TestCase's skip into
        # `call` first, and pytest's own implementation, which makes the report, comes after.
        excinfo = call.excinfo
        if excinfo is not None and isinstance(excinfo.value, _SKIPPED):
            self._skips[item.nodeid] = excinfo

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # Most reports say a phase passed: they cost a comparison or two (a passed test is
        # one id in `ran`; only other outcomes get an entry in `tests`).
        if report.outcome == "passed":
            when = report.when
            if when == "setup":
                self.ran.append(report.nodeid)
                return
            if when == "teardown":
                self._sent(report)
                return
            if not hasattr(report, "wasxfail"):
                return
        self._note(report)

    def _note(self, report: pytest.TestReport) -> None:
        """A report that is not a plain pass: its outcome, and where a skip came from."""
        if report.skipped or hasattr(report, "wasxfail"):
            # Where the test ran (in this process, or in an xdist worker before the report
            # travels to the controller, tryfirst), the line that set the skip.
            item = self._items.get(report.nodeid)
            if item is not None:
                place = skip_place(item, report.when, self._skips.pop(report.nodeid, None), self.relative)
                if place is not None:
                    report.freezegate_place = place
        if self.is_worker:
            return
        outcome = outcome_of(report)
        if outcome is not None and outcome != "passed":
            entry = self.tests.get(report.nodeid, _PASSED)
            if RANK[outcome] >= RANK[entry["outcome"]]:
                entry = self.tests[report.nodeid] = {"outcome": outcome}
                if outcome in ("skipped", "xfailed", "xpassed"):
                    entry.update(skip_detail(report, outcome, self.frozen, self.relative))
        if report.when == "teardown":
            self._sent(report)

    def _sent(self, report: pytest.TestReport) -> None:
        """A finished test's row, to a supervised run's pipe as it finishes."""
        if self.pipe is not None:
            self.pipe.row(report.nodeid, self.tests.get(report.nodeid, _PASSED))

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

    def _selection(self, addopts_at: Optional[Dict[str, Any]]) -> List[str]:
        """What asked pytest to deselect, as the command line, the environment and ini
        gave it (addopts as its line in the config file writes it: `-k "not slow"` keeps
        its quotes)."""
        option = self.config.option
        addopts = shlex.join(self.config.getini("addopts"))
        env = os.environ.get("PYTEST_ADDOPTS", "")
        given = addopts + " " + env
        said: List[str] = []
        # What addopts or PYTEST_ADDOPTS gave is said once, as such.
        if getattr(option, "keyword", "") and option.keyword not in given:
            said.append(f"-k {shlex.quote(option.keyword)}")
        if getattr(option, "markexpr", "") and option.markexpr not in given:
            said.append(f"-m {shlex.quote(option.markexpr)}")
        for node_id in getattr(option, "deselect", None) or []:
            if node_id not in given:
                said.append(f"--deselect {node_id}")
        if getattr(option, "lf", False) and "--lf" not in given:
            said.append("--lf")
        if addopts:
            said.append(addopts_at["text"] if addopts_at else f"addopts = {addopts}")
        if env.strip():
            said.append(f"PYTEST_ADDOPTS = {env.strip()}")
        return said

    def _addopts_at(self) -> Optional[Dict[str, Any]]:
        """The line of pytest's config file that sets addopts, for FZ602 to point at; its
        text (every line of a value over several), and each selecting option at its own
        line (``options``)."""
        inipath = getattr(self.config, "inipath", None)
        if inipath is None or not self.config.getini("addopts"):
            return None
        try:
            text = Path(inipath).read_text(encoding="utf-8")
        except OSError:
            return None
        lines = text.splitlines()
        first = key_line(lines)
        if first is None:
            return None
        file = self.relative(str(inipath))
        value = value_lines(lines, first, file.endswith(".toml"))
        said = " ".join(part.strip() for _, part in value if part.strip())
        return {"file": file, "line": first + 1, "text": f"addopts = {said}", "options": options_at(text, file)}

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
        self.worker_samples = max_samples(self.worker_samples, payload["samples"])
        self.worker_census.append(payload["census"])

    # -- session end -----------------------------------------------------------------

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.census.sweep(self.config.pluginmanager)
        self.census.sweep_fixtures(session)
        hooks = self.census.entries()
        if _is_worker(self.config):
            self.config.workeroutput[_WORKER_KEY] = json.dumps(
                {"collection": self.collection.to_json(), "samples": self.samples.to_json(), "census": hooks}
            )
            return
        if self.config.option.collectonly:
            # A collection is not a run: it writes no record (nor replaces the last one).
            if self.pipe is not None:
                self.pipe.close_without_record("pytest ran with --collect-only: a collection is not a test run")
            return
        collection = self.collection
        if self.worker_collections:
            collection = Collection()
            for worker in sorted(self.worker_collections, key=lambda c: len(c["collected"]), reverse=True):
                collection.merge(worker)
        samples = self.worker_samples if self.worker_collections else self.samples.to_json()
        incomplete = self._incomplete(session, int(exitstatus))
        ran = set(self.ran)
        ran.update(self.tests)
        # In collection order (then any test not collected), as the gate reads fastest.
        order = [i for i in collection.collected if i in ran]
        if len(order) < len(ran):
            listed = set(order)
            order += sorted(i for i in ran if i not in listed)
        tests = {}
        noted, lines, digests, places = self.tests, collection.lines, collection.digests, collection.places
        for node_id in order:
            entry = dict(noted.get(node_id, _PASSED))
            span = lines.get(node_id)
            if span is not None:
                entry["lines"] = span
            digest = digests.get(node_id)
            if digest is not None:
                entry["digest"] = digest
            place = places.get(node_id)
            if place is not None and _outside(entry.get("file")):
                entry["file"], entry["line"] = place
            tests[node_id] = entry
        addopts_at = self._addopts_at()
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
            "hypothesis": {"tests": collection.hypothesis, "profile": collection.profile},
            "selection": self._selection(addopts_at),
            "addopts_at": {k: v for k, v in addopts_at.items() if k in ("file", "line")} if addopts_at else None,
            "addopts_options": addopts_at["options"] if addopts_at else [],
            "hooks": census.merge(hooks, *self.worker_census),
            "census": self.census.covers,
        }
        tools = census.tools(self.relative)
        if tools:
            record["tools"] = tools
        # One line: a record of a monorepo's suite is written and read in a blink.
        text = json.dumps(record, separators=(",", ":"))
        if self.pipe is not None:
            self.pipe.record(text)
        else:
            write_atomic(self.record_path, text + "\n")


def _outside(file: Optional[str]) -> bool:
    """Whether a location the record names is outside the repository (pytest's own
    location of a test whose code is in site-packages)."""
    return file is not None and (os.path.isabs(file) or file.startswith("../"))


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
    # A supervised run (`freezegate run` started this pytest for its record) is enabled
    # whatever the flags say.
    pipe = None if _is_worker(config) else Pipe.from_environment()
    if pipe is None and not _enabled(config):
        return
    plugin = FreezegatePlugin(config, pipe)
    plugin.start()
    config.pluginmanager.register(plugin, "freezegate-session")
