"""The hook census: every implementation of a hook that runs during a test or its
report, whose code is not pytest's, pytest-xdist's, Hypothesis's or freezegate's own.

A conftest's ``pytest_runtest_makereport`` can turn a failure into a pass, a
``pytest_pyfunc_call`` can skip the test's body, a ``pytest_runtestloop`` wrapper can
zero ``session.testsfailed``, and a ``pytest_unconfigure(trylast=True)`` can rewrite the
record after it is written: the gate cannot see what such code does, only that it is
there. An autouse fixture runs around every test it reaches without being asked for,
and can swap what a test calls as a hook can: the census lists those too. The record
lists each one (FZ606 reports those the base run did not have).

Whose an implementation is, is decided by the file its code object was compiled from,
never by ``__module__`` (which any function can set). The census is taken as each plugin
registers (a hook that unregisters itself before the session ends is still seen) and
again when the session ends."""

from __future__ import annotations

import functools
import importlib.util
import inspect
import os
import sys
import sysconfig
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

# Hooks that run while a test runs or its outcome is reported, beyond the two prefixes.
_HOOKS = frozenset(
    {
        "pytest_pyfunc_call",
        "pytest_runtestloop",
        "pytest_sessionstart",
        "pytest_sessionfinish",
        "pytest_terminal_summary",
        "pytest_unconfigure",
        "pytest_fixture_setup",
        "pytest_fixture_post_finalizer",
        "pytest_exception_interact",
        "pytest_assertion_pass",
        "pytest_warning_recorded",
        # pytest-xdist: the controller's view of its workers and their reports.
        "pytest_testnodedown",
        "pytest_handlecrashitem",
    }
)
_PREFIXES = ("pytest_runtest_", "pytest_report_")
# Report hooks that only decorate the terminal's header.
_DISPLAY_ONLY = frozenset({"pytest_report_header", "pytest_report_collectionfinish"})

# The packages whose hooks are the machinery the record describes.
_OWN = ("_pytest", "pytest", "pluggy", "xdist", "execnet", "hypothesis", "_hypothesis_pytestplugin", "freezegate")

Key = Tuple[str, str, str, str]

# The census's entry for an autouse fixture (its ``hook``), and what a full census covers:
# the record says so, so that a base run of an older plugin (or of a pytest whose fixture
# manager could not be read) is not read as having no autouse fixtures.
AUTOUSE = "autouse fixture"
# A fixture that modules, classes or the ini file's ``usefixtures`` apply to every test
# they hold (``pytestmark = pytest.mark.usefixtures(...)``): autouse in all but name.
USEFIXTURES = "usefixtures fixture"
COVERS = ["hooks", "autouse fixtures", "usefixtures"]


def in_scope(hook: str) -> bool:
    """Whether an implementation of ``hook`` can change an outcome or the record."""
    if hook in _DISPLAY_ONLY:
        return False
    return hook in _HOOKS or hook.startswith(_PREFIXES)


def under(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root + os.sep) for root in roots)


@functools.lru_cache(maxsize=None)
def installed_roots() -> Tuple[str, ...]:
    """Where this interpreter installs packages and keeps its standard library (asked
    once: the census, the tool report and every hook's skip place read it)."""
    paths = sysconfig.get_paths()
    roots = {paths.get(name) for name in ("purelib", "platlib", "stdlib", "platstdlib")}
    return tuple(sorted(os.path.realpath(root) for root in roots if root))


def _origin(name: str) -> Optional[str]:
    """The file a top-level module was imported from, or would be (not importing it)."""
    module = sys.modules.get(name)
    if module is not None:
        return getattr(module, "__file__", None)
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.has_location else None


def _own_roots() -> Tuple[str, ...]:
    """The files and folders the machinery's modules come from."""
    roots = []
    for name in _OWN:
        path = _origin(name)
        if not path:
            continue
        path = os.path.realpath(path)
        roots.append(os.path.dirname(path) if os.path.basename(path) == "__init__.py" else path)
    return tuple(roots)


def _code_file(function: Any) -> Optional[str]:
    """The file the function's code was compiled from (a callable object's ``__call__``,
    a bound method's function); None for code without one (C, a builtin)."""
    for candidate in (function, getattr(function, "__func__", None), getattr(type(function), "__call__", None)):
        code = getattr(candidate, "__code__", None)
        if code is not None:
            return code.co_filename
    return None


class Census:
    """The implementations seen so far, each once."""

    def __init__(self, relative: Callable[[str], str]) -> None:
        self._relative = relative
        self._entries: Dict[Key, Dict[str, Any]] = {}
        self._own = _own_roots()
        self._installed = installed_roots()
        # What the census could list (the record's ``census``).
        self.covers: List[str] = ["hooks"]

    def saw_plugin(self, manager: Any, plugin: Any) -> None:
        """A plugin as it registers (``pytest_plugin_registered``): its implementations."""
        for caller in manager.get_hookcallers(plugin) or ():
            if in_scope(caller.name):
                for impl in caller.get_hookimpls():
                    if impl.plugin is plugin:
                        self._add(caller.name, impl)

    def sweep(self, manager: Any) -> None:
        """Every implementation registered now."""
        for name, caller in vars(manager.hook).items():
            if in_scope(name) and hasattr(caller, "get_hookimpls"):
                for impl in caller.get_hookimpls():
                    self._add(name, impl)

    def sweep_fixtures(self, session: Any) -> None:
        """Every autouse fixture registered now: one runs around each test it reaches
        without the test asking for it, so it can swap what the test calls (a
        ``monkeypatch`` of the code under test) as a hook can. Each entry says where it
        reaches (``reaches``: the node ids of the directories, modules and classes that
        list it; a test module's own reaches that module's tests alone). Read from
        pytest's fixture manager, whose layout is private and has changed between
        releases: where it cannot be read, :attr:`covers` says hooks alone."""
        manager = getattr(session, "_fixturemanager", None)
        listed = [getattr(manager, name, None) for name in ("_node_autousenames", "_nodeid_autousenames")]
        if not any(isinstance(names, dict) for names in listed) or not _has_definitions(manager):
            return
        reaches: Dict[str, set] = {}
        for by_node in listed:
            for node, names in (by_node or {}).items() if isinstance(by_node, dict) else ():
                node_id = node if isinstance(node, str) else str(getattr(node, "nodeid", ""))
                for name in names:
                    reaches.setdefault(name, set()).add(node_id)
        for name in sorted(reaches):
            for definition in _definitions(manager, name):
                if getattr(definition, "_autouse", True):
                    self._add(AUTOUSE, None, _own_code(definition), name, sorted(reaches[name]))
        self._sweep_usefixtures(session)
        self.covers = COVERS

    def _sweep_usefixtures(self, session: Any) -> None:
        """Every fixture a ``usefixtures`` mark of a module, class or package (or the ini
        file's ``usefixtures``, which reaches every test) applies to the tests it holds,
        read from each collected test (under xdist, a worker's). A mark on the test
        function itself is the test's own edit, like an argument it asks for."""
        ini = [str(name) for name in session.config.getini("usefixtures") or ()]
        reaches: Dict[int, Tuple[str, Any, set]] = {}  # by the definition's id()
        for item in getattr(session, "items", None) or ():
            info = getattr(item, "_fixtureinfo", None)
            by_name = getattr(info, "name2fixturedefs", None)
            if not isinstance(by_name, dict):
                continue
            marked = [("", name) for name in ini]
            for node, mark in item.iter_markers_with_node(name="usefixtures"):
                if node is not item:
                    marked.extend((node.nodeid, str(name)) for name in mark.args)
            for node_id, name in marked:
                definitions = by_name.get(name)
                if not definitions or getattr(definitions[-1], "_autouse", False):
                    continue  # unknown (pytest's own error), or listed as autouse
                definition = definitions[-1]  # the one this test gets
                found = reaches.setdefault(id(definition), (name, definition, set()))
                found[2].add(node_id)
        for name, definition, nodes in reaches.values():
            self._add(USEFIXTURES, None, _own_code(definition), name, sorted(nodes))

    def _add(
        self, hook: str, impl: Any, function: Any = None, name: Optional[str] = None, reaches: Optional[List[str]] = None
    ) -> None:
        if impl is not None:
            function = impl.function
        path = _code_file(function)
        real = os.path.realpath(path) if path and os.path.isfile(path) else None
        if real is not None and under(real, self._own):
            return
        module = str(getattr(function, "__module__", None) or getattr(getattr(impl, "plugin", None), "__name__", "") or "")
        file: Optional[str] = None
        if real is not None and not under(real, self._installed):
            file = self._relative(real)
            if os.path.isabs(file):
                file = None  # outside pytest's rootdir: named by its plugin
        code = getattr(function, "__code__", None)
        entry: Dict[str, Any] = {
            "hook": hook,
            "plugin": module or str(getattr(impl, "plugin_name", "") or "?"),
            "function": name or getattr(function, "__qualname__", hook),
            "file": file,
            "line": code.co_firstlineno if code is not None and file else None,
            "wrapper": bool(getattr(impl, "hookwrapper", False) or getattr(impl, "wrapper", False)),
        }
        if reaches is not None:
            entry["reaches"] = reaches
        if getattr(impl, "tryfirst", False):
            entry["order"] = "tryfirst"
        elif getattr(impl, "trylast", False):
            entry["order"] = "trylast"
        self._entries[(hook, entry["plugin"], entry["function"], str(file))] = entry

    def entries(self) -> List[Dict[str, Any]]:
        return [self._entries[key] for key in sorted(self._entries)]


# Where pytest keeps its fixture definitions by name: a list (pytest < 9), by the node
# that defines them, or by its node id (pytest 9).
_DEFINITIONS = ("_arg2fixturedefs", "_arg2node2fixturedefs", "_arg2nodeid2fixturedefs")


def _has_definitions(manager: Any) -> bool:
    return any(isinstance(getattr(manager, name, None), dict) for name in _DEFINITIONS)


def _definitions(manager: Any, name: str) -> Iterable[Any]:
    """Every fixture definition of ``name``, whichever layout this pytest has."""
    for layout in _DEFINITIONS:
        by_name = getattr(manager, layout, None)
        found = by_name.get(name) if isinstance(by_name, dict) else None
        if isinstance(found, dict):
            for definitions in found.values():
                yield from definitions
        elif found:
            yield from found


def _own_code(definition: Any) -> Any:
    """A fixture definition's function, under any ``functools.wraps`` (mock.patch)."""
    function = getattr(definition, "func", None)
    try:
        return inspect.unwrap(function)
    except ValueError:
        return function


def merge(*censuses: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Every process's census as one (under xdist the workers load conftests the
    controller never sees)."""
    entries: Dict[Key, Dict[str, Any]] = {}
    for census in censuses:
        for entry in census:
            entries[(entry["hook"], entry["plugin"], entry["function"], str(entry["file"]))] = entry
    return [entries[key] for key in sorted(entries)]


# Modules a repository could shadow to forge what the record says.
TOOLS = ("pytest", "_pytest", "pluggy", "hypothesis", "xdist", "freezegate")


def tools(relative: Callable[[str], str]) -> List[Dict[str, Any]]:
    """The tool modules this process imported from outside the interpreter's install
    paths (site-packages, the standard library): each with its file, relative to pytest's
    rootdir where it is inside (FZ608 judges those)."""
    installed = installed_roots()
    found = []
    for name in TOOLS:
        path = getattr(sys.modules.get(name), "__file__", None)
        if not path:
            continue
        real = os.path.realpath(path)
        if not under(real, installed):
            found.append({"module": name, "file": relative(real)})
    return found
