"""freezegate prove's driver: the mutation engine (mutmut 3) as a library, and a pytest
plugin for the runs. Written into a scratch directory by the freezegate binary and run
with the project's Python; every decision is the binary's.

    python driver.py version                 -> {"engine": "mutmut", "version": "3.8.1"}
    python driver.py stake MEASURED.json ID  -> the project functions test ID ran in its call
    python driver.py mutate SPEC.json        -> mutates the files in place, lists mutants
    python driver.py pytest ARGS...          -> `python -m pytest ARGS`, importing from the copy
    python driver.py serve                   -> a fork server for the runs (below)

As a pytest plugin (`-p freezegate_prove_driver`), it loads a derandomized Hypothesis
profile without an example database, appends each test's outcome to the file named by
FREEZEGATE_PROVE_OUT as the run goes (so a run stopped at its time limit still says
which test was running), makes the mutant named by FREEZEGATE_PROVE_MUTANT active only
in each test's call phase, and with FREEZEGATE_PROVE_MEASURE measures what each test's
call phase runs.

Wherever it runs with FREEZEGATE_PROVE_SOURCE (the user's tree) and FREEZEGATE_PROVE_COPY
(prove's scratch copy of it) set, a module found in the user's tree (an editable
install's `.pth` or finder, a `src/` path, PYTHONPATH) is imported from the same place in
the copy: the code a proof mutates is the code its tests run.
"""

from __future__ import annotations

import ast
import difflib
import gc
import importlib.util
import json
import os
import re
import signal
import sys
import time
import tokenize
from typing import NamedTuple

ENGINE_MISSING = 3


# The suffix that tells apart the second and later definitions of one name in one scope
# (a property's setter, `@f.register def _`): mutmut names a function's mutants after
# it, and two of one name would share (and overwrite) one trampoline.
TWIN = "\u01c0"
# Joins a nested class's path in its mutants' names (`x\u01c1A\u01c2B\u01c1f`): a dot is
# not a name's character, and mutmut's own separator (\u01c1) ends the class.
NESTED = "\u01c2"


class Function(NamedTuple):
    name: str
    cls: str | None
    first: int  # the first decorator's line, or the def line
    def_line: int
    last: int
    key: str  # what mutmut's mutants of it are named after: `x_f`, `x\u01c1C\u01c1f`
    decorators: list[str]
    unreachable: str | None  # why mutmut cannot reach it at all


def _last_name(node) -> str:
    """The last name of a decorator expression: `register` for `@f.register(int)`."""
    while isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return getattr(node, "id", "")


# The compound statements whose blocks `_functions` and `_cst_blocks` read.
_AST_COMPOUND = (ast.If, ast.Try, ast.With, ast.For, ast.While) + tuple(
    getattr(ast, name) for name in ("TryStar", "Match") if hasattr(ast, name)
)


def _functions(source: str) -> list[Function]:
    """Every function of a module, keyed as prove's arrangement names its mutants: the
    functions of module-level blocks share the module's scope, and a nested class's
    methods carry its path (`A\u01c2B`); a twin's key carries TWIN and its rank."""
    tree = ast.parse(source)
    found = []

    def visit(body, path, seen, unreachable):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                rank = seen[node.name] = seen.get(node.name, 0) + 1
                name = node.name if rank == 1 else f"{node.name}{TWIN}{rank}"
                key = f"x\u01c1{NESTED.join(path)}\u01c1{name}" if path else f"x_{name}"
                decorators = [_last_name(d) for d in node.decorator_list]
                cls = ".".join(path) or None
                found.append(Function(node.name, cls, first, node.lineno, node.end_lineno, key, decorators, unreachable))
            elif isinstance(node, ast.ClassDef):
                visit(node.body, (*path, node.name), {}, unreachable)
            elif isinstance(node, _AST_COMPOUND):
                blocks = [getattr(node, "body", []), getattr(node, "orelse", []), getattr(node, "finalbody", [])]
                blocks += [h.body for h in getattr(node, "handlers", [])]
                blocks += [case.body for case in getattr(node, "cases", [])]
                if path:  # a class body's block: no trampoline there, nor a twin's rank
                    why = unreachable or (
                        f"defined inside a class-level `{type(node).__name__.lower()}` block: prove places "
                        "mutmut's trampolines in module-level blocks and classes, not in a class body's blocks"
                    )
                    for block in blocks:
                        visit(block, path, {}, why)
                else:
                    for block in blocks:
                        visit(block, path, seen, unreachable)

    visit(tree.body, (), {}, None)
    return found


def _display(key: str) -> str:
    """`C.f` or `f` for a mutant's key (a twin's rank dropped)."""
    if key.startswith("x_"):
        name = key[2:]
    else:
        _, cls, name = key.split("\u01c1")
        name = f"{cls.replace(NESTED, '.')}.{name}"
    return name.partition(TWIN)[0]


def _covers(requested: str, reported: str) -> bool:
    """Whether pytest's `reported` node id is (a case or method of) the `requested` one."""
    return reported == requested or (
        reported.startswith(requested) and reported[len(requested):][:1] in ("[", ":")
    )


def _read_source(path: str) -> str:
    """A module's text, decoded as Python decodes it (its coding cookie, else UTF-8)."""
    with tokenize.open(path) as f:
        return f.read()


# A PEP 263 coding cookie (it counts on the first two lines only).
_COOKIE = re.compile(r"^([ \t\f]*#.*?coding[:=][ \t]*)([-\w.]+)", re.M)


def _write_mutated(path: str, code: str) -> None:
    """Writes a mutated module as UTF-8: mutmut's names (`x\u01c1C\u01c1f`) are not
    Latin-1, so a module that declared another encoding is declared UTF-8 from now on
    (its cookie is rewritten in place: no line moves)."""
    head, newline, rest = code.partition("\n")
    second, newline2, rest = rest.partition("\n")
    top = _COOKIE.sub(r"\g<1>utf-8", head + newline + second, count=1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(top + newline2 + rest)


def _why_unreadable(error: Exception) -> str:
    first = str(error).splitlines()[0] if str(error) else ""
    return f"the mutation engine cannot read it as Python ({type(error).__name__}: {first})"


def _whole_module(path: str, lines: list[int]) -> dict:
    """A module at stake the driver cannot parse, as one function from its first line to
    the last that ran: named in the proof, never a silently smaller proof."""
    return {"file": path, "function": "(the module)", "start": 1, "end": max(lines), "lines": sorted(lines)}


def stake(measured_json: str, test_id: str) -> None:
    """The functions test `test_id` ran in its call phase (the file the plugin wrote under
    FREEZEGATE_PROVE_MEASURE): per function its body's lines that ran."""
    with open(measured_json, encoding="utf-8") as f:
        measured = json.load(f)
    executed_by_file: dict[str, set[int]] = {}
    for nodeid, files in measured.get("tests", {}).items():
        if _covers(test_id, nodeid):
            for path, lines in files.items():
                executed_by_file.setdefault(path, set()).update(lines)
    out = []
    for path, executed in sorted(executed_by_file.items()):
        try:
            functions = _functions(_read_source(path))
        except (OSError, SyntaxError, ValueError) as e:
            if path.endswith(".py") and executed:
                out.append(_whole_module(path, list(executed)))
            continue
        for function in functions:
            name, cls, first, def_line, last = function[:5]
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
    json.dump({"functions": out, "files": sorted(executed_by_file)}, sys.stdout)


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


# Decorators mutmut arranges itself: its copies keep a lone one, and its trampoline binds
# a lone `classmethod` through its own argument.
NATIVE = {"staticmethod", "classmethod"}
ENGINE = "mutmut"
# A decorated function, mutated by mutmut's operators with its decorators kept on the
# trampoline alone (its copies and mutants are plain functions the trampoline calls).
ENGINE_DECORATED = "mutmut, decorators kept on the trampoline"
# A special method mutmut 3 never mutates (`__new__`, `__getattribute__`, `__setattr__`),
# mutated by its operators all the same: its trampoline (a decorator since 3.8) calls the
# copies through the class's mutants dict, never through `self` or `cls`, so none of the
# three recurses or loses its binding.
ENGINE_OPENED = "mutmut, special method opened to its trampoline"
# A function of a module-level block or a method of a nested class, which mutmut leaves
# alone: its operators' mutants, behind a trampoline prove places in that scope.
ENGINE_PLACED = "mutmut, trampoline placed in a module-level block or a nested class"


def _cst_decorators(function) -> list[str]:
    """The last names of a libcst function's decorators (`register` for `@f.register(int)`)."""
    names = []
    for decorator in function.decorators:
        node = decorator.decorator
        while hasattr(node, "func"):
            node = node.func
        names.append(node.attr.value if hasattr(node, "attr") else getattr(node, "value", ""))
    return names


def _arranged_by_mutmut(decorators: list[str]) -> bool:
    return not decorators or (len(decorators) == 1 and decorators[0] in NATIVE)


def _map_blocks(node, cst, over):
    """A libcst compound statement with the statement list of each of its blocks given to
    `over` and replaced by what it returns (an `elif` is an If of its own); None for a
    simple statement. One reading of where blocks are, for listing and for rewriting."""
    if not isinstance(node, (cst.If, cst.Try, cst.TryStar, cst.With, cst.For, cst.While, cst.Match)):
        return None

    def suite(s):
        return s.with_changes(body=over(s.body)) if isinstance(s, cst.IndentedBlock) else s

    if isinstance(node, cst.Match):
        return node.with_changes(cases=[case.with_changes(body=suite(case.body)) for case in node.cases])
    changes = {"body": suite(node.body)}
    if isinstance(node, (cst.Try, cst.TryStar)):
        changes["handlers"] = [h.with_changes(body=suite(h.body)) for h in node.handlers]
    for field in ("orelse", "finalbody"):
        child = getattr(node, field, None)
        if isinstance(child, cst.If):
            changes[field] = _map_blocks(child, cst, over)
        elif child is not None:
            changes[field] = child.with_changes(body=suite(child.body))
    return node.with_changes(**changes)


def _cst_blocks(node, cst) -> list:
    """The statement lists of a compound statement's blocks; [] for a simple statement."""
    blocks: list = []
    _map_blocks(node, cst, lambda body: blocks.append(body) or body)
    return blocks


def _cst_scopes(module, cst) -> list[tuple[tuple[str, ...], list]]:
    """The scopes prove places trampolines in, as (class path, functions in source order):
    the module with its module-level blocks' functions (one scope: an `if`/`else` pair of
    one name are twins), then every class, nested ones too. Not a class body's blocks."""
    scopes: list[tuple[tuple[str, ...], list]] = [((), [])]

    def walk(body, path, functions):
        for node in body:
            if isinstance(node, cst.FunctionDef):
                functions.append(node)
            elif isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock):
                scopes.append(((*path, node.name.value), []))
                walk(node.body.body, (*path, node.name.value), scopes[-1][1])
            elif not path:
                for block in _cst_blocks(node, cst):
                    walk(block, path, functions)

    walk(module.body, (), scopes[0][1])
    return scopes


def _open_what_mutmut_skips(file_mutation, cst) -> dict[str, str]:
    """Makes mutmut mutate what it skips, with its own operators and trampoline:
    - decorated functions (a copy of one would run its decorator again, and `@property`
      breaks its trampoline). The trampoline alone keeps the decorators, innermost
      beneath them; the original's copy and the mutants are undecorated, so a decorator
      runs once, as in the original, and every mutant is called with what the original
      body was called with (ENGINE_DECORATED);
    - the special methods it never mutates (ENGINE_OPENED);
    - the functions of module-level blocks (`if sys.version_info …: def f`) and the
      methods of nested classes (ENGINE_PLACED; see `_place_trampolines`).
    The second and later definitions of one name in one scope (a property's setter,
    `@f.register def _`, an `if`/`else` pair) get their own mutant names (TWIN and rank,
    as `_functions` names them): two of one name would share one trampoline. Returns
    the dict each such function's key is added to, with the engine that names how it was
    mutated."""
    visitor = file_mutation.MutationVisitor
    skip = visitor._skip_node_and_children
    arrange = file_mutation.function_trampoline_arrangement
    create = file_mutation.create_mutations
    twins: dict[int, str] = {}
    engines: dict[str, str] = {}
    special = set(file_mutation.NEVER_MUTATE_FUNCTION_NAMES)
    file_mutation.NEVER_MUTATE_FUNCTION_NAMES = set()

    def skip_unless_decorated(self, node):
        if not isinstance(node, cst.FunctionDef) or _arranged_by_mutmut(_cst_decorators(node)):
            return skip(self, node)
        if "overload" in _cst_decorators(node):
            return True  # a typing stub: nothing of it runs
        # mutmut's own reasons to skip a function, but its decorators.
        position = self.get_metadata(file_mutation.PositionProvider, node, None)
        if position and position.start.line in self._ignored_node_lines:
            self.ignored_functions.add(node.name.value)
            return True
        return node in self._enum_creation_hooks

    def arrange_decorated(function, mutants, class_name):
        twin = twins.get(id(function))
        transparent = not _arranged_by_mutmut(_cst_decorators(function))
        name = function.name.value if twin is None else twin
        key = file_mutation.mangle_function_name(name=name, class_name=class_name)
        if transparent:
            engines[key] = ENGINE_DECORATED
        elif function.name.value in special:
            engines[key] = ENGINE_OPENED
        if twin is None and not transparent:
            return arrange(function, mutants, class_name)
        inner = function if twin is None else function.with_changes(name=cst.Name(twin))
        if transparent:
            inner = inner.with_changes(decorators=[])
        declared, nodes, assigned, names = arrange(inner, mutants, class_name)
        trampoline = nodes[0].with_changes(name=function.name, decorators=[*function.decorators, *nodes[0].decorators])
        return declared, [trampoline, *nodes[1:]], assigned, names

    def visit_Module(provider, module):  # noqa: N802 (libcst finds visitors by their __name__)
        """mutmut's OuterFunctionProvider over every scope, not the top level alone."""
        for _, functions in _cst_scopes(module, cst):
            for function in functions:
                function.visit(file_mutation.OuterFunctionVisitor(provider, function))
        return False

    def create_and_name_twins(*args, **kwargs):
        module, *rest = create(*args, **kwargs)
        twins.clear()
        for _, functions in _cst_scopes(module, cst):
            seen: dict[str, int] = {}
            for node in functions:
                rank = seen[node.name.value] = seen.get(node.name.value, 0) + 1
                if rank > 1:
                    twins[id(node)] = f"{node.name.value}{TWIN}{rank}"
        return (module, *rest)

    visitor._skip_node_and_children = skip_unless_decorated
    file_mutation.OuterFunctionProvider.visit_Module = visit_Module
    file_mutation.function_trampoline_arrangement = arrange_decorated
    file_mutation.create_mutations = create_and_name_twins
    file_mutation.combine_mutations_to_source = _place_trampolines(file_mutation, cst, engines)
    return engines


def _place_trampolines(file_mutation, cst, engines: dict[str, str]):
    """mutmut's `combine_mutations_to_source`, over every scope `_cst_scopes` lists: a
    function's mutants dict, trampoline, copies and the dict's filling stay in its block
    (a module-level block is the module's scope), and a class's go before and after its
    outermost class, where a nested class is reached by an alias of its path
    (`A\u01c2B = A.B`: a nested class's body cannot see the class around it). What is
    placed where mutmut would not place it is added to `engines` as ENGINE_PLACED."""
    import libcst.matchers as m

    def arrange(function, mutants, path, names, placed):
        class_name = NESTED.join(path) or None
        arranged = file_mutation.function_trampoline_arrangement(function, mutants, class_name=class_name)
        made = arranged[3]
        names += made
        if placed and made:
            engines[made[0].partition("__mutmut_")[0]] = ENGINE_PLACED
        return arranged[:3]

    def block(body, grouped, names, nested):
        out = []
        for node in body:
            if isinstance(node, cst.FunctionDef) and grouped.get(node):
                declared, nodes, assigned = arrange(node, grouped[node], (), names, nested)
                out += [*declared, *nodes, *assigned]
            elif isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock):
                before, cls, after = klass(node, grouped, names, (node.name.value,), nested)
                out += [*before, cls, *after]
            else:
                mapped = _map_blocks(node, cst, lambda inner: block(inner, grouped, names, True))
                out.append(node if mapped is None else mapped)
        return out

    def klass(node, grouped, names, path, nested):
        """The class with its methods arranged, and what goes before and after its
        outermost class (the mutants dicts, and their filling)."""
        before, body, filled, after = [], [], [], []
        for child in node.body.body:
            if isinstance(child, cst.FunctionDef) and grouped.get(child):
                declared, nodes, assigned = arrange(child, grouped[child], path, names, nested or len(path) > 1)
                before += declared
                body += nodes
                filled += assigned
            elif isinstance(child, cst.ClassDef) and isinstance(child.body, cst.IndentedBlock):
                inner_before, inner, inner_after = klass(child, grouped, names, (*path, child.name.value), nested)
                before += inner_before
                body.append(inner)
                after += inner_after
            else:
                body.append(child)
        if filled and len(path) > 1:
            alias = NESTED.join(path)
            filled = [
                *cst.parse_module(f"{alias} = {'.'.join(path)}\n").body,
                *filled,
                *cst.parse_module(f"del {alias}\n").body,
            ]
        return before, node.with_changes(body=node.body.with_changes(body=body)), filled + after

    def combine(module, mutations, ignored_classes=None, ignored_functions=None):
        # The start of the module (`__future__` imports, its docstring) before the
        # trampoline's import, up to the first statement that defines code.
        defines = m.FunctionDef() | m.ClassDef()
        head = []
        for node in module.body:
            if m.matches(node, defines) or m.findall(node, defines):
                break
            head.append(node)
        grouped = file_mutation.group_by_top_level_node(mutations)
        names: list[str] = []
        body = block(module.body[len(head):], grouped, names, False)
        mutated = module.with_changes(body=[*head, *file_mutation.trampoline_impl_cst, *body])
        # No line spans: `mutate` finds each copy and mutant in the code it parses.
        return file_mutation.MutatedFile(
            code=mutated.code, mutant_names=names, line_span_by_function_name={}, hash_by_function_name={}
        )

    return combine


def _unmutated_reason(function: Function, source_lines: list[str]) -> str:
    """Why mutmut made no mutant of a function at stake."""
    if function.unreachable:
        return function.unreachable
    if "overload" in function.decorators:
        return "a typing.overload stub"
    if any("pragma: no mutate" in line for line in source_lines[function.first - 1 : function.def_line]):
        return "marked `# pragma: no mutate`"
    return "no mutation operator applies to the lines the test ran"


def mutate(spec_json: str) -> None:
    """Writes the mutants of the lines at stake into the files, and lists them, with each
    function at stake: how many mutants it got and from which engine, or why none."""
    import libcst as cst
    import mutmut.configuration as configuration

    # The project's own [tool.mutmut] / setup.cfg still applies (do_not_mutate_patterns,
    # pragmas); only the guess of where the code lives is not needed: the files are given.
    configuration._guess_source_paths = lambda: ["."]
    from mutmut.mutation import file_mutation

    engines = _open_what_mutmut_skips(file_mutation, cst)
    with open(spec_json, encoding="utf-8") as f:
        spec = json.load(f)
    mutants_out = []
    functions_out = []
    for path, lines in spec["files"].items():
        engines.clear()
        source = None
        try:
            source = _read_source(path)
            mutated = file_mutation.mutate_file_contents(path, source, set(lines), None)
        except Exception as e:  # noqa: BLE001 (whatever the engine cannot parse is named)
            at_stake = []
            if source is not None:
                try:
                    at_stake = [
                        (_display(f.key), f.first)
                        for f in _functions(source)
                        if any(f.def_line < line <= f.last for line in lines)
                    ]
                except (SyntaxError, ValueError):  # not Python ast reads either
                    pass
            for function, start in at_stake or [("(the module)", 1)]:
                functions_out.append({"file": path, "function": function, "start": start, "mutants": 0,
                                      "engine": None, "reason": _why_unreadable(e)})
            continue
        code_lines = mutated.code.splitlines()
        # Where each copy and mutant is, in whatever scope its trampoline was placed.
        bodies = {
            node.name: (node.lineno + 1, node.end_lineno)
            for node in ast.walk(ast.parse(mutated.code))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and "__mutmut_" in node.name
        }
        functions = _functions(source)
        defs = {function.key: function.def_line for function in functions}
        module = _module_of(path)

        def body(generated: str) -> list[str]:
            """Its lines after the `def` line: what a mutant changed, and where."""
            start, end = bodies[generated]
            return code_lines[start - 1 : end]

        made: dict[str, int] = {}
        for name in mutated.mutant_names:
            mangled = name.partition("__mutmut_")[0]
            made[mangled] = made.get(mangled, 0) + 1
            offset, change = _one_line(body(mangled + "__mutmut_orig"), body(name))
            mutants_out.append({
                "id": f"{module}.{name}",
                "file": path,
                "function": _display(mangled),
                "line": defs.get(mangled, 0) + 1 + offset,
                "mutation": change,
            })
        source_lines = source.splitlines()
        for function in functions:
            if not any(function.def_line < line <= function.last for line in lines):
                continue
            count = made.get(function.key, 0)
            functions_out.append({
                "file": path,
                "function": _display(function.key),
                "start": function.first,
                "mutants": count,
                "engine": engines.get(function.key, ENGINE) if count else None,
                "reason": None if count else _unmutated_reason(function, source_lines),
            })
        _write_mutated(path, mutated.code)
    json.dump({"mutants": mutants_out, "functions": functions_out}, sys.stdout)


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
    # pytest-cov in the project's addopts (`--cov=pkg`) would trace every mutant's run.
    cov = importlib.util.find_spec("pytest_cov") is not None
    json.dump({"engine": "mutmut", "version": found, "xdist": xdist, "cov": cov}, sys.stdout)


# --- the scratch copy is what is imported -------------------------------------------


def _tooling(relative: str) -> bool:
    """Whether a path inside a tree is someone else's code (a virtualenv, a hidden dir)."""
    return any(
        part in ("site-packages", "dist-packages") or (part.startswith(".") and len(part) > 1)
        for part in relative.split(os.sep)
    )


def _in_tree(path: str, root: str) -> str | None:
    """`path` relative to `root` when it is the project's own file there, else None."""
    real = os.path.realpath(path)
    if not real.startswith(root):
        return None
    relative = real[len(root):]
    return None if _tooling(relative) else relative


class _CopyFinder:
    """First on sys.meta_path: asks the other finders, and when the module they found is
    in the user's tree, returns the same module of the scratch copy. Editable installs
    (a `.pth` path or setuptools' finder), `src/` paths, PYTHONPATH and namespace
    packages all end here, whoever put the user's tree on the path."""

    freezegate_copy_finder = True

    def __init__(self, source: str, copy: str):
        self.source = os.path.join(os.path.realpath(source), "")
        self.copy = os.path.join(os.path.realpath(copy), "")
        self.finding = False

    def _moved(self, path: str) -> str | None:
        relative = _in_tree(path, self.source)
        if relative is None:
            return None
        moved = os.path.join(self.copy, relative)
        return moved if os.path.exists(moved) else None

    def find_spec(self, name, path=None, target=None):
        if self.finding:  # an import by another finder while it looks
            return None
        self.finding = True
        try:
            spec = None
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                if finder is self or getattr(finder, "freezegate_copy_finder", False) or find is None:
                    continue
                spec = find(name, path, target)
                if spec is not None:
                    break
        finally:
            self.finding = False
        if spec is None:
            return None
        locations = spec.submodule_search_locations
        moved_locations = None if locations is None else [self._moved(p) or p for p in locations]
        if spec.has_location and spec.origin:
            moved = self._moved(spec.origin)
            if moved is None:
                return spec
            return importlib.util.spec_from_file_location(
                name, moved, submodule_search_locations=moved_locations
            )
        if locations is not None and moved_locations != list(locations):
            spec.submodule_search_locations = moved_locations  # a namespace package
        return spec


def _import_from_copy() -> None:
    source, copy = os.environ.get("FREEZEGATE_PROVE_SOURCE"), os.environ.get("FREEZEGATE_PROVE_COPY")
    if source and copy and not any(getattr(f, "freezegate_copy_finder", False) for f in sys.meta_path):
        sys.meta_path.insert(0, _CopyFinder(source, copy))
        # Path entries into the user's tree move too (a `.pth` of an editable install).
        finder = sys.meta_path[0]
        sys.path[:] = [finder._moved(p) or p if p else p for p in sys.path]
        sys.path_importer_cache.clear()


def _imported_from_source() -> list[list[str]]:
    """[module, file] of every module this interpreter imported from the user's tree
    rather than the copy (what the finder could not move: a module imported before it,
    or loaded by its file path)."""
    source = os.environ.get("FREEZEGATE_PROVE_SOURCE")
    if not source:
        return []
    root = os.path.join(os.path.realpath(source), "")
    found = []
    for name, module in list(sys.modules.items()):
        files = [getattr(module, "__file__", None)]
        if files[0] is None:
            files = list(getattr(module, "__path__", None) or [])
        for file in files:
            if isinstance(file, str) and _in_tree(file, root) is not None:
                found.append([name, os.path.realpath(file)])
                break
    return sorted(found)


_import_from_copy()


# --- the pytest plugin --------------------------------------------------------------


try:  # the driver's commands run without pytest too (`version` says what is missing)
    import pytest

    _trylast = pytest.hookimpl(trylast=True)
except ImportError:
    def _trylast(f):
        return f


def pytest_addoption(parser):
    parser.addoption("--freezegate-prove-call-limits", default=None, help="(freezegate prove's own)")


# Each test's call-phase time limit in seconds, by node id (the other tests' runs on a
# kill): a mutant that loops forever in the first of many tests costs that test's limit,
# not the whole run's.
_call_limits: dict[str, float] = {}


class _Hung(BaseException):
    """A test's call phase ran past its limit (a BaseException: Hypothesis and the test's
    own `except Exception` let it through, and pytest reports the test failed)."""


@_trylast
def pytest_configure(config):
    limits = config.getoption("--freezegate-prove-call-limits", default=None)
    if limits:
        with open(limits, encoding="utf-8") as f:
            _call_limits.update(json.load(f))
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


def _arm(nodeid: str) -> bool:
    """Stops test `nodeid`'s call phase with `_Hung` after its limit, if it has one and
    SIGALRM is free; whether it did (then `_disarm` after the call)."""
    # By its own id, else by the id it was asked for as (a frozen function's cases).
    limit = _call_limits.get(nodeid) or next(
        (limit for asked, limit in _call_limits.items() if _covers(asked, nodeid)), None
    )
    if not limit or not _alarm_free():
        return False

    def expire(_signum, _frame):
        raise _Hung(f"{nodeid}: its call phase ran past {limit:.1f} s on this mutant")

    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, limit)
    return True


def _disarm() -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)


def _alarm_free() -> bool:
    """Whether this process can time a test with SIGALRM without taking it from another
    (pytest-timeout's signal method, the project's own): the main thread, no handler, no
    timer running."""
    import threading

    return (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None)
        and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    )


if _hookwrapper is not None:
    @_hookwrapper
    def pytest_runtest_makereport(item, call):
        outcome = yield
        report = outcome.get_result()
        if report.when == "call" and report.failed:
            report.freezegate_checked = _checked(call)


# mutmut's mode in which its trampoline runs the unmutated code and records the call.
_MUTMUT_STATS = "stats"
# The pytest phase the run is in: `import` (collection), `setup`, `call`, `teardown`.
_phase = "import"
# Whether this run records the mutated functions that run outside the call phase (its
# unmutated run), and those it saw, by phase.
_recording = False
_outside_call: dict[str, set[str]] = {}
# What each test's call phase ran: node id -> file -> lines.
_measured: dict[str, dict[str, set[int]]] = {}
# Whether this run records which mutated functions each test's call phase runs (the
# run of the rest of the suite, FREEZEGATE_PROVE_HITS=1), and those it saw, by test.
_hitting = False
_hits: dict[str, set[str]] = {}
_current = ""


def _set_mutant(name: str) -> None:
    """The mutant mutmut's trampoline runs from now on ("" for none)."""
    os.environ["MUTANT_UNDER_TEST"] = name
    try:
        from mutmut.mutation.trampoline import set_mutant_under_test
    except ImportError:
        return
    set_mutant_under_test(name)


def _recording_outside_call() -> bool:
    return os.environ.get("FREEZEGATE_PROVE_RECORD") == "1" and _swap_hit_recorder(
        lambda name, caller=None: _outside_call.setdefault(_phase, set()).add(name)
    )


def _swap_hit_recorder(record) -> bool:
    """mutmut's "stats" mode with its hit recorder swapped for `record`; False when this
    mutmut's trampoline is not the one known here."""
    try:
        import mutmut.mutation.trampoline as trampoline
    except ImportError:
        return False
    if not hasattr(trampoline, "record_trampoline_hit"):
        return False
    trampoline.record_trampoline_hit = record
    return True


def _recording_hits() -> bool:
    return os.environ.get("FREEZEGATE_PROVE_HITS") == "1" and _swap_hit_recorder(
        lambda name, caller=None: _hits.setdefault(_current, set()).add(name)
    )


def _outside_call_mode() -> str:
    return _MUTMUT_STATS if _recording else ""


@_trylast
def pytest_sessionstart(session):
    global _recording, _hitting
    if not os.environ.get("FREEZEGATE_PROVE_OUT"):
        return  # the warm-up's collection, in mutmut's stats mode
    _hitting = _recording_hits()
    _recording = not _hitting and _recording_outside_call()
    _set_mutant(_outside_call_mode())


def _start_measuring():
    """A coverage.py measurement of its own, nested in whatever the project's tools run
    (pytest-cov, a `coverage run`): coverage pauses an outer measurement while an inner
    one runs, so this one sees the call phase whatever else traces."""
    if not os.environ.get("FREEZEGATE_PROVE_MEASURE"):
        return None
    import coverage

    measure = coverage.Coverage(data_file=None, config_file=False, auto_data=False)
    measure.start()
    return measure


def _stop_measuring(measure, nodeid: str) -> None:
    measure.stop()
    data = measure.get_data()
    files = _measured.setdefault(nodeid, {})
    cwd = os.path.join(os.getcwd(), "")
    for path in data.measured_files():
        lines = data.lines(path) or []
        name = path[len(cwd):] if path.startswith(cwd) else path
        files.setdefault(name, set()).update(lines)


def _call_phase(item):
    """Around a test's call: its mutant active (code that runs at import or in fixtures
    runs unmutated), and its measurement when one is asked for."""
    global _phase, _current
    measure = _start_measuring()
    _current = item.nodeid
    _set_mutant(_MUTMUT_STATS if _hitting else os.environ.get("FREEZEGATE_PROVE_MUTANT", ""))
    _phase = "call"
    armed = _arm(item.nodeid)
    try:
        yield
    finally:
        if armed:
            _disarm()
        _phase = "teardown"
        _set_mutant(_outside_call_mode())
        if measure is not None:
            _stop_measuring(measure, item.nodeid)


if _hookwrapper is not None:
    pytest_runtest_call = _hookwrapper(_call_phase)


def pytest_runtest_setup(item):
    global _phase
    _phase = "setup"


def pytest_sessionfinish(session):
    if _recording:
        _record({"outside_call": {phase: sorted(names) for phase, names in _outside_call.items()}})
    if _hitting:
        _record({"hits": {nodeid: sorted(names) for nodeid, names in _hits.items()}})
    path = os.environ.get("FREEZEGATE_PROVE_MEASURE")
    if path:
        measured = {
            "tests": {nodeid: {f: sorted(lines) for f, lines in files.items()} for nodeid, files in _measured.items()},
            "imported_from_source": _imported_from_source(),
        }
        with open(path, "w", encoding="utf-8") as f:
            json.dump(measured, f)


def pytest_runtest_teardown(item):
    # Hypothesis's plugin turns a failing example into an `@example` patch on the
    # teardown report: it imports libcst and parses the test's file (0.5-0.9 s of every
    # run a property fails in), for a patch no proof shows.
    item.__dict__.pop("_hypothesis_failing_examples", None)


def pytest_runtest_logreport(report):
    if report.failed or (report.when == "call") or (report.when == "setup" and report.skipped):
        _record({"test": report.nodeid, "when": report.when, "outcome": report.outcome,
                 "checked": bool(getattr(report, "freezegate_checked", False)),
                 "xfail": hasattr(report, "wasxfail"),
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
    and its tests were imported and collected (every run forks from this import, so they
    run unmutated there and their mutants are judged in the tests' call phase alone);
    None when this mutmut's trampoline is not the one known here."""
    import pytest

    hits: set[str] = set()
    known = _swap_hit_recorder(lambda name, caller=None: hits.add(name))
    _set_mutant(_MUTMUT_STATS if known else "")
    try:
        status = int(pytest.main(["--collect-only", "-qq", *args]))
    finally:
        _set_mutant("")
    return {"status": status, "imported": sorted(hits) if known else None}


# The run the fork server is waiting for: stopped with the server (`_stop`), on the
# signals that stop prove (a terminal's hang-up reaches the server, not its forked run,
# which has a process group of its own).
_running: int | None = None
_STOPPING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP) if hasattr(signal, "SIGHUP") else (signal.SIGTERM, signal.SIGINT)


def _stop(signum: int, _frame: object) -> None:
    """SIGTERM, SIGINT or SIGHUP (prove stopped by a signal): the run forked last, in its own
    process group (a terminal's Ctrl-C does not reach it), goes too, then the server."""
    if _running is not None:
        try:
            os.killpg(_running, signal.SIGKILL)
        except OSError:
            pass
    os._exit(128 + signum)


def _pytest_in_child(args: list[str], mutant: str, out: str, log: str, record: str) -> int:
    """Forks a child that runs `pytest.main(args)` with `mutant` active in each test's
    call phase, recording (`record`) which mutated functions run outside it
    (`outside_call`) or which each test's call phase runs (`hits`); returns its pid."""
    sys.stdout.flush()
    sys.stderr.flush()
    global _running
    pid = os.fork()
    if pid:
        _running = pid
        try:
            os.setpgid(pid, pid)
        except OSError:  # it already did, or has ended
            pass
        return pid
    code = 1
    try:
        for stopping in _STOPPING:
            signal.signal(stopping, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.setpgid(0, 0)
        _redirect(log, stdin=True)
        os.environ["FREEZEGATE_PROVE_MUTANT"] = mutant
        os.environ["FREEZEGATE_PROVE_OUT"] = out
        os.environ["FREEZEGATE_PROVE_RECORD"] = "1" if record == "outside_call" else ""
        os.environ["FREEZEGATE_PROVE_HITS"] = "1" if record == "hits" else ""
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
    then}; then each {"mutant", "args", "out", "log", "limit", "record"} runs
    `pytest.main(args)` in a forked child with the mutant active in each test's call
    phase (`record`: "outside_call", "hits" or "", what the run records) (the import before the fork, unmutated, is the import every run sees), output
    to `log`, and replies {"status": EXIT or null when stopped at `limit` seconds}.
    mutmut's own fork server does the same (its `forkserver_warmup = collect`): a run
    pays for its tests, not for Python's and pytest's start. Where there is no fork,
    each run is a new `python driver.py pytest`."""
    global _running
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    for stopping in _STOPPING:
        signal.signal(stopping, _stop)
    # `python -m pytest` puts the working directory first on sys.path; so does this.
    sys.path[0] = os.getcwd()
    os.environ["MUTANT_UNDER_TEST"] = ""
    requests = sys.stdin  # fd 0 stays the pipe of requests; the children read /dev/null
    for line in iter(requests.readline, ""):
        request = json.loads(line)
        if "warm" in request:
            _redirect(request["log"], stdin=False)
            reply = _warm_up(request["warm"]) if hasattr(os, "fork") else {"status": 0, "imported": []}
            # What the warm-up imported is every run's: out of the collector's reach, the
            # `gc.collect()` pytest makes at each run's end (its unraisable-exception
            # plugin) no longer walks it, nor copies its pages into each forked run
            # (pyrsistent: 0.115 -> 0.08 s a run).
            gc.freeze()
        elif hasattr(os, "fork"):
            pid = _pytest_in_child(request["args"], request["mutant"], request["out"], request["log"],
                                   request["record"])
            reply = {"status": _wait(pid, request["limit"])}
            _running = None  # reaped: its pid may be another's now
        else:  # pragma: no cover (Windows)
            import subprocess

            env = dict(os.environ, FREEZEGATE_PROVE_MUTANT=request["mutant"], FREEZEGATE_PROVE_OUT=request["out"],
                       FREEZEGATE_PROVE_RECORD="1" if request["record"] == "outside_call" else "",
                       FREEZEGATE_PROVE_HITS="1" if request["record"] == "hits" else "")
            with open(request["log"], "w", encoding="utf-8") as log:
                try:
                    done = subprocess.run([sys.executable, __file__, "pytest", *request["args"]], env=env,
                                          stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                          timeout=request["limit"])
                    reply = {"status": done.returncode}
                except subprocess.TimeoutExpired:
                    reply = {"status": None}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def run_pytest(*args: str) -> None:
    """`python -m pytest ARGS`, with the copy's modules imported (this module's import
    put its finder first)."""
    sys.path[0] = os.getcwd()
    import pytest

    sys.exit(int(pytest.main(list(args))))


if __name__ == "__main__":
    command, *rest = sys.argv[1:] or ["version"]
    {"version": version, "stake": stake, "mutate": mutate, "serve": serve, "pytest": run_pytest}[command](*rest)
