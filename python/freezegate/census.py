"""The hook census: every implementation, outside pytest, pytest-xdist, Hypothesis and
freezegate, of a hook that can change a test's outcome or the run record.

A conftest's ``pytest_runtest_makereport`` can turn a failure into a pass, and a
``pytest_unconfigure(trylast=True)`` can rewrite the record after it is written: the
gate cannot see what such code does, only that it is there. The record lists each one
(FZ606 reports those the base run did not have)."""

from __future__ import annotations

import inspect
import os
from typing import Any, Callable, Dict, List

import pytest

HOOKS = (
    "pytest_runtest_makereport",
    "pytest_report_teststatus",
    "pytest_runtest_protocol",
    "pytest_runtest_logreport",
    "pytest_sessionfinish",
    "pytest_unconfigure",
)

# The modules whose hooks are the machinery the record describes.
# (`__channelexec__` is the module pytest-xdist runs in each worker, through execnet.)
_OWN = ("_pytest", "pytest", "pluggy", "xdist", "__channelexec__", "execnet", "hypothesis", "_hypothesis_pytestplugin", "freezegate")


def _module_of(function: Any, plugin: Any) -> str:
    return str(getattr(function, "__module__", None) or getattr(plugin, "__name__", "") or "")


def _is_own(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in _OWN)


def take(config: pytest.Config, relative: Callable[[str], str]) -> List[Dict[str, Any]]:
    """The census of this process: hook, plugin, file and line (file null for a plugin
    outside pytest's rootdir, loaded from a zip or written in C), sorted."""
    entries: Dict[tuple, Dict[str, Any]] = {}
    for name in HOOKS:
        caller = getattr(config.pluginmanager.hook, name, None)
        if caller is None:
            continue
        for impl in caller.get_hookimpls():
            function = impl.function
            module = _module_of(function, impl.plugin)
            if _is_own(module):
                continue
            code = getattr(function, "__code__", None)
            path = inspect.getsourcefile(function) if code is not None else None
            file = relative(path) if path and os.path.isfile(path) else None
            if file is not None and os.path.isabs(file):
                file = None  # outside pytest's rootdir: named by its plugin
            entry: Dict[str, Any] = {
                "hook": name,
                "plugin": module or str(impl.plugin_name),
                "function": getattr(function, "__qualname__", name),
                "file": file,
                "line": code.co_firstlineno if code is not None and file else None,
                "wrapper": bool(getattr(impl, "hookwrapper", False) or getattr(impl, "wrapper", False)),
            }
            if impl.tryfirst:
                entry["order"] = "tryfirst"
            elif impl.trylast:
                entry["order"] = "trylast"
            entries[(name, entry["plugin"], entry["function"], file)] = entry
    return [entries[key] for key in sorted(entries, key=lambda k: tuple(str(part) for part in k))]


def merge(*censuses: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Every process's census as one (under xdist the workers load conftests the
    controller never sees)."""
    entries: Dict[tuple, Dict[str, Any]] = {}
    for census in censuses:
        for entry in census:
            entries[(entry["hook"], entry["plugin"], entry["function"], str(entry["file"]))] = entry
    return [entries[key] for key in sorted(entries)]
