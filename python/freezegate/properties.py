"""How hard each Hypothesis test searches: its settings, read from the settings object
Hypothesis keeps on the test (no observability, nothing run), so that the binary can
tell a patch that cut a property to ``max_examples=1``, dropped its generate phase or
left it only its ``@example``\\ s (FZ304) from the base run's.

For every Hypothesis test collected: ``max_examples``, ``phases``, ``derandomize``,
``database`` (on or off), whether it is a ``@given`` test (or a state machine) and how
many explicit examples it has; where its own settings are set (an ``@settings``
decorator, a state machine's ``TestCase.settings = ...``), and where the test is. The
settings profile in force, and the conftest line that loads or registers it, once per
session. Cached per function object (and state-machine class): parametrized cases and
the tests of a file without properties cost a dictionary look-up or two."""

from __future__ import annotations

import ast
import linecache
import os
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

from .code import Span, definition_at, module_tree

Facts = Dict[str, Any]
Relative = Callable[[str], str]

# Function (or TestCase class) id -> (the object, kept so its id is not reused; its
# facts, or None for a test that is not a Hypothesis test).
_FACTS: Dict[int, Tuple[Any, Optional[Facts]]] = {}


def facts_of(item: pytest.Item, span: Optional[Span], relative: Relative) -> Optional[Facts]:
    """The Hypothesis settings of a test, or None for a test that is not one. ``span``
    is the test's lines as :func:`freezegate.code.code_of` found them."""
    function = getattr(item, "obj", None)
    if function is None or not getattr(function, "is_hypothesis_test", False):
        return None
    machine = getattr(function, "_hypothesis_state_machine_class", None)
    # A state machine's settings are its TestCase class's (one per machine, or the
    # subclass pytest collected); a method's are its function's, not those of the bound
    # method each item makes of it.
    if isinstance(machine, type):
        owner = getattr(item.parent, "obj", None)
    else:
        owner = getattr(function, "__func__", function)
    known = _FACTS.get(id(owner))
    if known is not None and known[0] is owner:
        return known[1]
    try:
        facts = _machine_facts(item, machine, owner, relative) if isinstance(machine, type) else _facts(
            function, span, relative
        )
    except Exception:  # a settings object this version does not know: no facts
        facts = None
    _FACTS[id(owner)] = (owner, facts)
    return facts


def _settings_facts(settings: Any) -> Facts:
    return {
        "max_examples": int(settings.max_examples),
        "phases": [getattr(phase, "name", str(phase)) for phase in settings.phases],
        "derandomize": bool(settings.derandomize),
        "database": settings.database is not None,
    }


def _facts(function: Any, span: Optional[Span], relative: Relative) -> Optional[Facts]:
    settings = getattr(function, "_hypothesis_internal_use_settings", None)
    if settings is None:
        return None
    facts = _settings_facts(settings)
    facts["given"] = getattr(function, "hypothesis", None) is not None
    facts["examples"] = len(getattr(function, "hypothesis_explicit_examples", ()) or ())
    inner = getattr(getattr(function, "hypothesis", None), "inner_test", None) or function
    code = getattr(inner, "__code__", None)
    if code is None:
        return facts
    filename = code.co_filename
    first = span[0] if span is not None else code.co_firstlineno
    facts["file"], facts["line"] = relative(filename), first
    node = definition_at(filename, first)
    if node is not None:
        for decorator in node.decorator_list:
            if _names_settings(decorator):
                facts["settings_line"] = decorator.lineno
                facts["settings_keys"] = _keys(decorator)
                break
    return facts


def _machine_facts(item: pytest.Item, machine: type, case: Any, relative: Relative) -> Optional[Facts]:
    settings = getattr(case, "settings", None)
    if settings is None:
        return None
    facts = _settings_facts(settings)
    facts["given"] = True  # a state machine draws its steps
    facts["examples"] = 0
    # A machine searches max_examples runs of up to stateful_step_count steps each.
    facts["stateful_step_count"] = int(settings.stateful_step_count)
    filename = str(item.path)
    tree = module_tree(filename)
    collected = item.parent.name if item.parent is not None else ""
    names = {collected, machine.__name__}
    if tree is None:
        return facts
    facts["file"] = relative(filename)
    for node in tree.body:
        # The test is where pytest collected it (``TestX = Machine.TestCase``), else
        # its machine's class in this file.
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == collected for t in node.targets):
            facts["line"] = node.lineno
        elif isinstance(node, ast.ClassDef) and node.name in names:
            facts.setdefault("line", min([node.lineno] + [d.lineno for d in node.decorator_list]))
            for decorator in node.decorator_list:
                if _names_settings(decorator):
                    facts["settings_line"] = decorator.lineno
                    facts["settings_keys"] = _keys(decorator)
        elif isinstance(node, ast.Assign) and any(_sets_machine_settings(t, names) for t in node.targets):
            facts["settings_line"] = node.lineno
            facts["settings_keys"] = _keys(node.value)
    return facts


def _names_settings(decorator: ast.expr) -> bool:
    """``@settings(...)``, ``@hypothesis.settings(...)`` or a settings object by a name
    ending in settings (``@CI_SETTINGS``)."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return isinstance(name, str) and name.lower().endswith("settings")


def _keys(settings: ast.expr) -> List[str]:
    """The settings a ``settings(...)`` call sets itself (the rest come from its parent
    or the profile); ``*`` for any other expression, or a call with a parent."""
    if not isinstance(settings, ast.Call) or settings.args or any(k.arg is None for k in settings.keywords):
        return ["*"]
    return sorted(str(k.arg) for k in settings.keywords)


def _sets_machine_settings(target: ast.expr, names: Any) -> bool:
    """``TestX.settings = ...`` or ``Machine.TestCase.settings = ...``."""
    if not (isinstance(target, ast.Attribute) and target.attr == "settings"):
        return False
    owner = target.value
    if isinstance(owner, ast.Attribute) and owner.attr == "TestCase":
        owner = owner.value
    return isinstance(owner, ast.Name) and owner.id in names


def profile(config: pytest.Config, relative: Relative) -> Optional[Dict[str, Any]]:
    """The settings profile in force, and the first conftest line (of those pytest
    loaded, in the repository) that loads a profile, else one that registers the
    profile in force: once per session, when Hypothesis is imported."""
    module = sys.modules.get("hypothesis")
    if module is None:
        return None
    name = getattr(module.settings, "_current_profile", None) or "default"
    found: Dict[str, Any] = {"name": name}
    loads: List[Tuple[str, int]] = []
    registers: List[Tuple[str, int]] = []
    others: List[Tuple[str, int]] = []
    for plugin in config.pluginmanager.get_plugins():
        filename = getattr(plugin, "__file__", None)
        if not isinstance(filename, str) or os.path.basename(filename) != "conftest.py":
            continue
        file = relative(filename)
        if os.path.isabs(file) or file.startswith("../"):
            continue
        for number, text in enumerate(linecache.getlines(filename), 1):
            if "load_profile(" in text:
                loads.append((file, number))
            elif "register_profile(" in text:
                named = f'"{name}"' in text or f"'{name}'" in text
                (registers if named else others).append((file, number))
    places = sorted(loads) or sorted(registers) or sorted(others)
    if places:
        found["file"], found["line"] = places[0]
    return found
