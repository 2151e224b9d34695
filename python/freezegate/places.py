"""Where a skip or xfail was set: the line a reviewer must look at, and what set it.

Worked out where the test ran, from the item, its marks and the exception (under
pytest-xdist the controller sees only the report, so the place travels on it as
``report.freezegate_place``). pytest reports most skips at the test's ``def``: a
``@unittest.skip`` class, ``self.skipTest()``, a fixture's ``pytest.skip()``, a marker a
conftest hook added and a module's ``pytestmark`` all need a better pointer.

A place is ``{"scope", "file", "line", "origin"}``: ``scope`` is ``class`` (a marker or
``@unittest.skip`` on the test's class; ``origin`` "unittest" for the latter), ``method``
(``@unittest.skip`` on the test method),
``unittest`` (``self.skipTest()`` or ``raise unittest.SkipTest``; ``origin`` which),
``fixture`` (``pytest.skip()`` in a fixture; ``origin`` the fixture's name), ``hook-call``
(``pytest.skip()`` in a hook such as ``pytest_runtest_setup``; ``origin`` the hook), ``hook``
(a marker a hook added; ``origin`` the hook) or ``module`` (the module's ``pytestmark``);
None for the test's own decorator or call, where pytest's place is right.
"""

from __future__ import annotations

import inspect
import os
import unittest
from typing import Any, Callable, Dict, Iterable, List, Optional

import pytest

from .census import installed_roots, under

Place = Dict[str, Any]

_MARKS = ("skip", "skipif", "xfail")


def skip_place(
    item: pytest.Item, when: str, excinfo: Optional[pytest.ExceptionInfo], relative: Callable[[str], str]
) -> Optional[Place]:
    """The place of the skip or xfail phase ``when`` of ``item`` reported, if pytest's is
    not it; ``excinfo`` is the skip that phase raised (None when it raised none)."""
    try:
        return (
            _unittest_place(item, excinfo, relative)
            or _fixture_place(item, when, excinfo, relative)
            or _mark_place(item, relative)
        )
    except Exception:  # a place is a pointer: never a reason for the run to fail
        return None


def _place(scope: str, file: Optional[str], line: Optional[int], origin: Optional[str] = None) -> Optional[Place]:
    if not file or not line:
        return None
    place: Place = {"scope": scope, "file": file, "line": line}
    if origin:
        place["origin"] = origin
    return place


def _first_line(obj: Any) -> Optional[int]:
    """The first line of a class or function, its decorators included."""
    try:
        return inspect.getsourcelines(obj)[1]
    except (OSError, TypeError):
        return None


def _file_of(obj: Any, relative: Callable[[str], str]) -> Optional[str]:
    """The file that defines ``obj``; of a decorated function (``@unittest.skip``, any
    ``functools.wraps``), the file of the function itself, as ``inspect.getsourcelines``
    finds its line."""
    try:
        path = inspect.getsourcefile(inspect.unwrap(obj))
    except TypeError:
        return None
    return relative(path) if path else None


def _unittest_place(
    item: pytest.Item, excinfo: Optional[pytest.ExceptionInfo], relative: Callable[[str], str]
) -> Optional[Place]:
    cls = getattr(item, "cls", None)
    if cls is None or not issubclass(cls, unittest.TestCase):
        return None
    if getattr(cls, "__unittest_skip__", False):
        return _place("class", _file_of(cls, relative), _first_line(cls), "unittest")
    method = getattr(item, "obj", None)
    if getattr(method, "__unittest_skip__", False):
        return _place("method", _file_of(method, relative), _first_line(method), "unittest")
    if excinfo is None:
        return None
    # pytest raises its own skip inside unittest's handler: the SkipTest is its context.
    raised = excinfo.value.__context__
    if isinstance(raised, unittest.SkipTest) and raised.__traceback__ is not None:
        frame = _innermost(raised.__traceback__, _file_of(cls, relative), relative)
        if frame is not None:
            file, line, text = frame
            origin = "self.skipTest()" if "skipTest" in text else "raise unittest.SkipTest"
            return _place("unittest", file, line, origin)
    return None


def _innermost(tb: Any, file: Optional[str], relative: Callable[[str], str]) -> Optional[tuple]:
    """The last frame of a traceback in ``file``: (file, line, its source text)."""
    found = None
    while tb is not None:
        here = relative(tb.tb_frame.f_code.co_filename)
        if here == file:
            line = tb.tb_lineno
            try:
                text = inspect.getframeinfo(tb).code_context or [""]
            except Exception:
                text = [""]
            found = (here, line, text[0])
        tb = tb.tb_next
    return found


def _fixture_place(
    item: pytest.Item, when: str, excinfo: Optional[pytest.ExceptionInfo], relative: Callable[[str], str]
) -> Optional[Place]:
    if when != "setup" or excinfo is None or not excinfo.errisinstance(pytest.skip.Exception):
        return None
    info = getattr(item, "_fixtureinfo", None)
    fixtures: Dict[Any, str] = {}
    for name, defs in (getattr(info, "name2fixturedefs", None) or {}).items():
        for fixture in defs:
            code = getattr(getattr(fixture, "func", None), "__code__", None)
            if code is not None:
                fixtures[code] = name
    # The skip's own line (pytest hides its frames), and the fixture it was raised in.
    entries = [e for e in excinfo.traceback if not e.ishidden(excinfo)]
    if not entries:
        return None
    last = entries[-1]
    fixture = next((fixtures[e.frame.code.raw] for e in entries if e.frame.code.raw in fixtures), None)
    if fixture is not None:
        return _place("fixture", relative(str(last.path)), last.lineno + 1, fixture)
    # Not a fixture's: a hook's of the project (a conftest's pytest_runtest_setup calling
    # pytest.skip()), not pytest's own (its skipping plugin raises a marker's skip).
    installed = installed_roots()
    for entry in reversed(entries):
        code = entry.frame.code.raw
        path = os.path.realpath(code.co_filename)
        if code.co_name.startswith("pytest_") and not under(path, installed):
            file = relative(path)
            if not os.path.isabs(file):
                return _place("hook-call", relative(str(last.path)), last.lineno + 1, code.co_name)
    return None


def _own_marks(obj: Any) -> List[Any]:
    marks = getattr(obj, "pytestmark", [])
    return list(marks) if isinstance(marks, (list, tuple)) else [marks]


def _named(marks: Iterable[Any]) -> bool:
    return any(getattr(mark, "name", None) in _MARKS for mark in marks)


def _mark_place(item: pytest.Item, relative: Callable[[str], str]) -> Optional[Place]:
    if not any(True for name in _MARKS for _ in item.iter_markers(name)):
        return None
    obj = getattr(item, "obj", None)
    if _named(_own_marks(obj)):
        return None  # its own decorator: pytest's place (the first decorator) is found
    cls = getattr(item, "cls", None)
    if cls is not None and _named(_own_marks(cls)):
        return _place("class", _file_of(cls, relative), _first_line(cls))
    module = getattr(item, "module", None)
    if module is not None and _named(_own_marks(module)):
        return _place("module", _file_of(module, relative), _pytestmark_line(module))
    if _named(getattr(item, "own_markers", [])):
        return _hook_place(item, relative)
    return None


def _pytestmark_line(module: Any) -> Optional[int]:
    try:
        lines = inspect.getsourcelines(module)[0]
    except (OSError, TypeError):
        return None
    return next((i + 1 for i, line in enumerate(lines) if line.startswith("pytestmark")), None)


# The hooks that mark collected items.
_MARKING_HOOKS = ("pytest_collection_modifyitems", "pytest_itemcollected", "pytest_runtest_setup")


def _hook_place(item: pytest.Item, relative: Callable[[str], str]) -> Optional[Place]:
    """A marker no decorator set: the line of the conftest or plugin hook that added it."""
    hook = item.config.pluginmanager.hook
    for name in _MARKING_HOOKS:
        for impl in getattr(hook, name).get_hookimpls():
            function = impl.function
            file = _file_of(function, relative)
            # A conftest or plugin of the project (inside pytest's rootdir), not an
            # installed plugin such as Hypothesis's.
            if file is None or file.startswith("/") or "site-packages/" in file:
                continue
            try:
                lines, start = inspect.getsourcelines(function)
            except (OSError, TypeError):
                continue
            at = next((i for i, line in enumerate(lines) if "add_marker" in line), None)
            if at is None:
                continue
            return _place("hook", file, start + at, name)
    return None
