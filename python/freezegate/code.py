"""What a test's code is: its source lines in the test file, and for a Hypothesis test a
digest of its code normalized to the AST (no comments, docstrings or formatting), so
that the binary can tell a patch that changed a property from one that only touched its
lines.

A Hypothesis property is its inner test; a ``RuleBasedStateMachine`` test (pytest
collects ``TestX = Machine.TestCase``, whose ``runTest`` lives in Hypothesis) is its
machine class, in the test file. Only these get a digest: a deposit is a Hypothesis test
(FZ302 refuses any other, which has no sample count), and digesting every test parsed
every test file, most of the plugin's cost on a suite of small tests. Everything is
cached per code object, class and file: parametrized cases cost nothing more."""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import linecache
import operator
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

# The digest's length in hex digits: the first 64 bits of the sha256.
DIGEST_HEX = 16

Definition = Any  # an ast.FunctionDef, ast.AsyncFunctionDef or ast.ClassDef
Span = Tuple[int, int]  # a test's first (decorators included) and last line
Place = Tuple[str, int]  # a file and a line in it


def code_of(item: pytest.Item) -> Tuple[Optional[Span], Optional[str], Optional[Place]]:
    """The test's first (decorators included) and last line, its code's digest (a
    Hypothesis test's; None for any other), and where a state-machine test is in its
    test file (None for every other test, which pytest places right)."""
    function = getattr(item, "obj", None)
    machine = getattr(function, "_hypothesis_state_machine_class", None)
    if isinstance(machine, type):
        span, digest = _machine(machine)
        return span, digest, _machine_place(item, span)
    # Hypothesis wraps a property: its own code is the inner test's.
    inner = getattr(getattr(function, "hypothesis", None), "inner_test", None)
    if inner is None and getattr(function, "__wrapped__", None) is not None:
        # A decorator that keeps the test in __wrapped__ (@unittest.skip, @mock.patch,
        # functools.wraps): the test's code is the test's, not the wrapper's.
        function = inspect.unwrap(function)
    code = getattr(inner or function, "__code__", None)
    if code is None:
        return None, None, None
    # By identity: hashing a code object hashes its bytecode and constants each time.
    # The cached tuple itself is the span: a list a test would be one more object every
    # garbage collection of the run walks (tuples of ints are not tracked).
    known = _SPANS.get(id(code))
    if known is None or known[0] is not code:
        known = _SPANS[id(code)] = (code, _code_span(code))
    if inner is None:
        return known[1], None, None
    return known[1], _digest_at(code.co_filename, known[1][0]), None


def _machine_place(item: pytest.Item, span: Optional[Span]) -> Optional[Place]:
    """Where a state-machine test is in its test file (the ``TestX = ...`` line, or the
    class, that pytest collected): pytest places it at Hypothesis's ``runTest``, in
    site-packages."""
    if item.parent is None:
        return None
    filename = str(item.path)
    line = _module_names(filename).get(item.parent.name)
    if line is None:
        if span is None:
            return None
        line = span[0]
    return filename, line


def forget() -> None:
    """Lets the parsed test files go once collection has read them: kept for the whole
    session, their trees (a hundred thousand objects for 4,000 small tests) lengthened
    every full garbage collection of the run."""
    for cached in (_tree, _definitions, _module_names, _digest):
        cached.cache_clear()


@functools.lru_cache(maxsize=None)
def _module_names(filename: str) -> Dict[str, int]:
    """The line of each name a module defines at its top level (a class, a function, an
    assignment), decorators included."""
    names: Dict[str, int] = {}
    tree = _tree(filename)
    for node in tree.body if tree is not None else []:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = min([node.lineno] + [d.lineno for d in node.decorator_list])
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node.lineno
    return names


@functools.lru_cache(maxsize=None)
def _tree(filename: str) -> Optional[ast.Module]:
    try:
        return ast.parse("".join(linecache.getlines(filename)), filename)
    except (SyntaxError, ValueError):
        return None


# Code object id -> (the code object, kept so its id is not reused; its span).
_SPANS: Dict[int, Tuple[Any, Span]] = {}


def _code_span(code: Any) -> Span:
    """A code object's first and last line (parametrized cases share theirs)."""
    first = code.co_firstlineno
    if hasattr(code, "co_lines"):
        # Iterated in C (no Python frame an instruction range): a suite of small tests
        # has as many code objects as tests.
        lines = filter(None, map(_LINE, code.co_lines()))
    else:  # Python 3.9
        import dis

        lines = map(_LINE_START, dis.findlinestarts(code))
    return first, max(first, max(lines, default=first))


_LINE = operator.itemgetter(2)  # of a co_lines() entry: (start, end, line)
_LINE_START = operator.itemgetter(1)  # of a findlinestarts() entry: (offset, line)


@functools.lru_cache(maxsize=None)
def _machine(machine: type) -> Tuple[Optional[Span], Optional[str]]:
    """A state machine's class: its lines and digest in the file that defines it."""
    try:
        filename = inspect.getsourcefile(machine)
        _, first = inspect.getsourcelines(machine)
    except (OSError, TypeError):
        return None, None
    if filename is None:
        return None, None
    node = _definitions(filename).get(first)
    if node is None:
        return None, None
    return (first, node.end_lineno or first), _digest(node)


def definition_at(filename: str, first: int) -> Optional[Definition]:
    """The function or class of a file whose first line (decorators included) is
    ``first``, while collection's parsed files are kept."""
    return _definitions(filename).get(first)


def module_tree(filename: str) -> Optional[ast.Module]:
    """A file's parsed tree, while collection's parsed files are kept."""
    return _tree(filename)


def _digest_at(filename: str, first: int) -> Optional[str]:
    node = _definitions(filename).get(first)
    return _digest(node) if node is not None else None


@functools.lru_cache(maxsize=None)
def _definitions(filename: str) -> Dict[int, Definition]:
    """Every function and class of a file, by its first line (its first decorator's,
    as a code object's ``co_firstlineno`` and ``inspect`` give it). Parsed once."""
    tree = _tree(filename)
    if tree is None:
        return {}
    found: Dict[int, Definition] = {}
    for node in _statements(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            found.setdefault(first, node)
            _drop_docstring(node)
    return found


# The fields of a compound statement, an except clause or a match case that hold
# statements. Expressions cannot hold a definition, and are most of a tree's nodes.
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(tree: ast.Module) -> Iterator[ast.AST]:
    """Every statement of a module, nested ones included, without visiting expressions."""
    todo: List[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        for block in _BLOCKS:
            inner = getattr(node, block, None)
            if inner:
                todo.extend(inner)


def _drop_docstring(node: Definition) -> None:
    """Takes a definition's docstring out of its body, in the file's parsed tree itself:
    once per file, where copying each definition to strip the copy cost a test 60 us
    (most of the plugin's time on a suite of small tests). Only bodies of functions and
    classes change; the module's own names and lines stay as they were."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        if isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]


@functools.lru_cache(maxsize=None)
def _digest(node: Definition) -> str:
    """The sha256 of the definition's AST (decorators included, so a strategy or a
    setting is code), docstrings dropped (by :func:`_definitions`); positions are not
    part of ``ast.dump``."""
    text = ast.dump(node, annotate_fields=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:DIGEST_HEX]
