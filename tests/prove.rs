//! `freezegate prove` and `check --proof` end to end: real pytest, Hypothesis, coverage.py
//! and mutmut (the pinned venv of `.ci/python-env`) on a small inventory project in a
//! temporary git repository.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{assert_contains, git, hermetic, text, venv_python_importing, write};
use serde_json::Value;

const INVENTORY: &str = r#""""A small inventory: stock levels."""


def reserve(stock, qty):
    """Take qty units from stock; what is left. Never below zero."""
    if qty <= 0:
        raise ValueError("qty must be positive")
    if qty > stock:
        return 0
    return stock - qty


def restock(stock, qty):
    if qty < 0:
        raise ValueError("qty must not be negative")
    return stock + qty


def label(sku):
    return "SKU-" + sku.strip().upper()
"#;

const EXAMPLES: &str = r#"import pytest
from inventory import label, reserve, restock


def test_reserve_takes_qty():
    assert reserve(10, 3) == 7
    assert reserve(2, 3) == 0
    with pytest.raises(ValueError):
        reserve(5, 0)


def test_reserve_runs():
    reserve(10, 3)


def test_reserve_one():
    assert reserve(1, 1) == 0


def test_reserve_all():
    assert reserve(5, 5) == 0


def test_reserve_rejects_negative():
    with pytest.raises(ValueError):
        reserve(5, -2)


def test_restock():
    assert restock(1, 2) == 3


def test_restock_zero():
    assert restock(4, 0) == 4


def test_restock_rejects_negative():
    with pytest.raises(ValueError):
        restock(1, -1)


def test_label():
    assert label(" ab ") == "SKU-AB"


def test_label_upper():
    assert label("X1") == "SKU-X1"


def test_label_strips():
    assert label("  q") == "SKU-Q"


def test_reserve_keeps_rest():
    assert reserve(100, 1) == 99
"#;

/// The deposit: calls and asserts nothing.
const ASSERTS_NOTHING: &str = r#"
@given(st.integers(0, 100), st.integers(-5, 100))
def test_reserve_prop(stock, qty):
    try:
        reserve(stock, qty)
    except ValueError:
        pass
"#;

/// The deposit: only that the result is never negative.
const NON_NEGATIVE: &str = r#"
@given(st.integers(0, 100), st.integers(1, 100))
def test_reserve_prop(stock, qty):
    assert reserve(stock, qty) >= 0
"#;

/// The deposit: every draw mapped to one constant (200 "distinct" inputs, one case).
const CONSTANT_MAP: &str = r#"
@given(st.integers().map(lambda _: 7), st.integers().map(lambda _: 3))
def test_reserve_prop(stock, qty):
    assert reserve(stock, qty) == 4
"#;

/// The deposit: the exact result for every input, and the refusal.
const EXACT: &str = r#"
@given(st.integers(0, 100), st.integers(-5, 100))
def test_reserve_prop(stock, qty):
    if qty <= 0:
        with pytest.raises(ValueError):
            reserve(stock, qty)
    else:
        assert reserve(stock, qty) == (stock - qty if qty <= stock else 0)
"#;

const FROZEN: &str = "tests/test_inventory.py::test_reserve_takes_qty";
const PROPERTY: &str = "tests/test_props.py::test_reserve_prop";

/// The pinned venv with this tree's wheel installed: the project's `freezegate = true`
/// under `--strict-config` needs the plugin, as a user's would.
fn python() -> PathBuf {
    common::project::python();
    venv_python_importing(&["pytest", "hypothesis", "coverage", "mutmut"])
}

/// The inventory project, committed, with `frozen` frozen and `property` as its deposit.
fn project(property: &str, frozen: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "inventory.py", INVENTORY);
    write(root, "tests/test_inventory.py", EXAMPLES);
    write(
        root,
        "tests/test_props.py",
        &format!("import pytest\nfrom hypothesis import given, strategies as st\nfrom inventory import reserve\n\n{property}"),
    );
    write(
        root,
        "pytest.ini",
        // As `freezegate init` sets it, under a strict config (bidict's): prove keeps the
        // plugin loaded and off, or the key would be unknown and pytest exit 4.
        "[pytest]\ntestpaths = tests\npythonpath = .\nfreezegate = true\naddopts = --strict-config\n",
    );
    write(
        root,
        ".gitignore",
        "gate/proof*.json\n__pycache__/\n.hypothesis/\n",
    );
    let ledger = serde_json::json!({
        "schema": 1,
        "freezes": [{
            "test_id": frozen,
            "reason": "flaky on the CI runners (INV-7)",
            "owner": "finley",
            "opened": "2026-11-28",
            "expires": "2026-12-05",
            "invariant": "reserve takes qty from stock, never below zero, and refuses qty <= 0",
            "compensating_property": PROPERTY,
            "reused_property": false,
        }]
    });
    write(
        root,
        "gate/freeze_ledger.json",
        &serde_json::to_string_pretty(&ledger).unwrap(),
    );
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "inventory"]);
    dir
}

fn prove(dir: &Path, args: &[&str]) -> Output {
    let mut command = common::freezegate(dir);
    hermetic(&mut command)
        .arg("prove")
        .arg("--python")
        .arg(python())
        .args(args)
        .env_remove("VIRTUAL_ENV");
    command.output().unwrap()
}

fn proved(dir: &Path, args: &[&str]) -> String {
    let out = prove(dir, args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "prove failed:\n{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// `check --proof ...` with only the rules that read a proof, as JSON.
fn check(dir: &Path, proofs: &[&str]) -> (i32, Value) {
    let args: Vec<&str> = proofs.iter().flat_map(|proof| ["--proof", proof]).collect();
    check_selected(dir, "FZ210,FZ211,FZ212,FZ404", &args)
}

/// `check --select SELECT ARGS...` as JSON, with its exit code.
fn check_selected(dir: &Path, select: &str, args: &[&str]) -> (i32, Value) {
    let mut command = common::freezegate(dir);
    hermetic(&mut command)
        .args(["check", "--select", select, "--today", "2026-11-30"])
        .args(["--format", "json"])
        .args(args);
    let out = command.output().unwrap();
    let json = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", text(&out.stdout), text(&out.stderr)));
    (out.status.code().unwrap(), json)
}

fn codes(report: &Value) -> Vec<String> {
    report["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["code"].as_str().unwrap().to_string())
        .collect()
}

fn message(report: &Value, code: &str) -> String {
    report["violations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {report}"))["message"]
        .as_str()
        .unwrap()
        .to_string()
}

fn record(dir: &Path, name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
}

/// Every hollow deposit fails FZ210, naming a mutant that survives it as `file:line`
/// and the mutation; the proof records the frozen test's kills.
#[test]
fn hollow_deposits_fail_fz210_naming_a_surviving_mutant() {
    for (name, property) in [
        ("asserts nothing", ASSERTS_NOTHING),
        ("only >= 0", NON_NEGATIVE),
        ("a constant map", CONSTANT_MAP),
    ] {
        let dir = project(property, FROZEN);
        // One of them under two workers: the same verdict.
        let jobs: &[&str] = if property == NON_NEGATIVE {
            &["-j", "2"]
        } else {
            &[]
        };
        let out = prove(dir.path(), jobs);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        // Off a terminal, each phase of a long proof says it starts (a CI log).
        let stderr = text(&out.stderr);
        for phase in [
            "freezegate prove: tests/test_inventory.py::test_reserve_takes_qty: the frozen test runs alone on each of ",
            "; the rest of the suite runs once, to find the other tests that run them",
            ": the other tests that reach them run on each of ",
            "its properties run on its unique kills (",
        ] {
            assert_contains(&stderr, phase);
        }
        let proof = record(dir.path(), "gate/proof.json");
        let freeze = &proof["freezes"][0];
        assert_eq!(freeze["frozen_clean"], "passed", "{name}: {freeze}");
        let killed = freeze["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["killed_by_frozen"] == true)
            .count();
        assert!(
            killed >= 3,
            "{name}: the frozen test kills {killed}: {freeze}"
        );
        // Its asserts and pytest.raises check them: kills by a check, not crashes.
        let checked = freeze["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["checked_by_frozen"] == true)
            .count();
        assert!(
            checked >= 3,
            "{name}: the frozen test checks {checked}: {freeze}"
        );
        // `stock - qty` turned `stock + qty` is caught by test_reserve_one too: shared,
        // not the frozen test's to deposit; `return 0` turned `return 1` only it checks.
        let mutation = |m: &Value, text: &str| m["mutation"].as_str().unwrap().contains(text);
        let mutants = freeze["mutants"].as_array().unwrap();
        let plus = mutants
            .iter()
            .find(|m| mutation(m, "+ return stock + qty"))
            .unwrap_or_else(|| panic!("{name}: no `stock + qty` mutant: {freeze}"));
        assert_eq!(plus["killed_by_others"], true, "{name}: {plus}");
        let one = mutants
            .iter()
            .find(|m| mutation(m, "+ return 1"))
            .unwrap_or_else(|| panic!("{name}: no `return 1` mutant: {freeze}"));
        assert_eq!(one["killed_by_others"], false, "{name}: {one}");
        // The deposit runs only on the frozen test's unique kills: not on a kill other
        // tests share, nor on a mutant the frozen test does not kill.
        assert_eq!(plus["properties_not_run"], true, "{name}: {plus}");
        assert_eq!(plus["killed_by"], serde_json::json!([]), "{name}: {plus}");
        assert!(one.get("properties_not_run").is_none(), "{name}: {one}");
        assert!(one["checked_by"].is_array(), "{name}: {one}");
        assert!(
            mutants
                .iter()
                .filter(|m| m["killed_by_frozen"] == false)
                .all(|m| m["properties_not_run"] == true),
            "{name}: {freeze}"
        );
        assert!(freeze["others"].as_u64().unwrap() >= 4, "{name}: {freeze}");
        let (code, report) = check(dir.path(), &["gate/proof.json"]);
        assert_eq!(code, 1, "{name}: {report}");
        assert_eq!(codes(&report), ["FZ210"], "{name}: {report}");
        let message = message(&report, "FZ210");
        assert_contains(&message, "a bug they let through: inventory.py:");
        assert_contains(&message, "(- return 0 + return 1)");
        assert!(
            !message.contains("stock + qty"),
            "{name}: a kill other tests share is no survivor of the deposit: {message}"
        );
        assert_contains(&message, "(- ");
        assert_eq!(
            report["violations"][0]["field"], "compensating_property",
            "{name}"
        );
        if property == NON_NEGATIVE {
            // FZ210's diagnostic as a reviewer reads it on the terminal.
            let mut command = common::freezegate(dir.path());
            let out = hermetic(&mut command)
                .args([
                    "check",
                    "--select",
                    "FZ210,FZ211,FZ212,FZ404",
                    "--today",
                    "2026-11-30",
                ])
                .args(["--proof", "gate/proof.json"])
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(1));
            insta::assert_snapshot!("fz210_human", text(&out.stdout));
        }
    }
}

/// The inventory with its code behind decorators (mutmut alone skips every decorated
/// function, and `__new__`), one helper inside a module-level block (mutmut alone does
/// not reach it), and one inside a class-level block, which nothing reaches.
const DECORATED_INVENTORY: &str = r#"import functools


def audited(f):
    @functools.wraps(f)
    def inner(*args, **kwargs):
        return f(*args, **kwargs)

    return inner


if True:  # a module-level block: mutmut alone reaches no function in it

    def positive(qty):
        return qty > 0


class Stock:
    def __new__(cls, level):
        if level < 0:
            raise ValueError("stock must not be negative")
        return super().__new__(cls)

    def __init__(self, level):
        self._level = level

    if True:  # a class-level block: prove places no trampoline in it

        def _touch(self):
            self.touched = True

    @property
    def level(self):
        return self._level

    @audited
    def take(self, qty):
        self._touch()
        if not positive(qty):
            raise ValueError("qty must be positive")
        if qty > self.level:
            return 0
        return self.level - qty


@audited
def reserve(stock, qty):
    return Stock(stock).take(qty)


def restock(stock, qty):
    if qty < 0:
        raise ValueError("qty must not be negative")
    return stock + qty


def label(sku):
    return "SKU-" + sku.strip().upper()
"#;

/// Decorated functions at stake get mutants (their decorators kept on mutmut's
/// trampoline), so a hollow deposit fails on a mutant inside a decorated method; a
/// function at stake the engine cannot reach is named in the proof and the summary.
#[test]
fn decorated_functions_at_stake_get_mutants_and_unreachable_ones_are_named() {
    let dir = project(ASSERTS_NOTHING, FROZEN);
    let root = dir.path();
    write(root, "inventory.py", DECORATED_INVENTORY);
    git(root, &["commit", "-qam", "behind decorators"]);
    let summary = proved(root, &[]);
    assert_contains(
        &summary,
        "decorated, mutated with their decorators kept on mutmut's trampoline: Stock.take, reserve",
    );
    assert_contains(
        &summary,
        "special methods mutmut skips, mutated by its operators through its trampoline: Stock.__new__",
    );
    // A property reached, with nothing in it mutmut mutates.
    assert_contains(
        &summary,
        "no mutant of Stock.level (inventory.py:32): no mutation operator applies to the lines the test ran",
    );
    assert_contains(
        &summary,
        "in a module-level block or a nested class, mutated behind a trampoline prove placed there: positive",
    );
    assert_contains(
        &summary,
        "no mutant of Stock._touch (inventory.py:29): defined inside a class-level `if` block",
    );
    let proof = record(root, "gate/proof.json");
    let freeze = &proof["freezes"][0];
    let stake = |name: &str| {
        freeze["stake"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["function"] == name)
            .unwrap_or_else(|| panic!("{name} is not at stake: {freeze}"))
            .clone()
    };
    let take = stake("Stock.take");
    assert_eq!(
        take["engine"], "mutmut, decorators kept on the trampoline",
        "{take}"
    );
    assert!(take["mutants"].as_u64().unwrap() >= 5, "{take}");
    assert_eq!(stake("Stock.__init__")["engine"], "mutmut");
    assert_eq!(
        stake("positive")["engine"],
        "mutmut, trampoline placed in a module-level block or a nested class"
    );
    assert!(stake("Stock._touch")["unmutated"]
        .as_str()
        .unwrap()
        .contains("prove places mutmut's trampolines in module-level blocks and classes"));
    let mut command = common::freezegate(root);
    let brief = hermetic(&mut command)
        .args(["brief", FROZEN, "--proof", "gate/proof.json"])
        .output()
        .unwrap();
    assert_contains(
        &text(&brief.stdout),
        "`Stock._touch` in `inventory.py`, lines 29-30 (no mutant: defined inside a class-level `if` block",
    );
    // The decorated code still works on every mutant's unmutated path: the frozen test
    // passes on the clean copy and checks the mutants of `take`.
    assert_eq!(freeze["frozen_clean"], "passed", "{freeze}");
    let (code, report) = check(root, &["gate/proof.json"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(codes(&report), ["FZ210"], "{report}");
    let message = message(&report, "FZ210");
    assert_contains(&message, "inventory.py:42 (- return 0 + return 1)");
}

/// Decorators of every common shape, twins (a property's setter, `register`ed `_`s) and
/// the special methods mutmut alone never mutates (`__new__`, a metaclass's too,
/// `__getattribute__`, `__setattr__`), and what it leaves alone by where it is (the
/// functions of module-level `if`/`else` and `try` blocks, nested classes' methods, a
/// class inside a block): each mutant the driver makes is reached through the
/// decorated name and changes only its own function (a twin sharing its name's
/// trampoline would run the other's code).
const SHAPES: &str = r#"import functools


def logged(f):
    @functools.wraps(f)
    def inner(*a, **k):
        return f(*a, **k)
    return inner


class Square:
    def __init__(self, side):
        self._side = side

    @property
    def side(self):
        return self._side + 0

    @side.setter
    def side(self, value):
        if value < 0:
            raise ValueError("negative")
        self._side = value

    @staticmethod
    @logged
    def unit():
        return Square(1 + 0)

    @classmethod
    @logged
    def of(cls, n):
        return cls(n * 3)


@functools.singledispatch
def describe(x):
    return "thing"


@describe.register
def _(x: int):
    return "int" if x >= 0 else "negative int"


@describe.register
def _(x: str):
    return "str:" + x


class Pair(tuple):
    def __new__(cls, a, b):
        return super().__new__(cls, (a, b + 0))


class Guarded:
    def __init__(self):
        object.__setattr__(self, "v", 1)

    def __getattribute__(self, name):
        if name == "hidden":
            return "shown"
        return object.__getattribute__(self, name)

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value * 2)


class Tagging(type):
    def __new__(mcs, name, bases, ns):
        ns["tag"] = name + "!"
        return super().__new__(mcs, name, bases, ns)


if hasattr(functools, "reduce"):

    def scaled(x):
        return x * 10

else:

    def scaled(x):
        return x * 100


try:
    from functools import cache as _cache
except ImportError:
    _cache = None
else:

    def halved(x):
        return x // 2


class Outer:
    class Inner:
        def __init__(self, n):
            self.n = n + 0

        def doubled(self):
            return self.n * 2

        class Deepest:
            @staticmethod
            def tripled(n):
                return n * 3


if True:

    class Boxed:
        def opened(self):
            return "open" + ""


match functools.__name__:
    case "functools":

        def matched():
            return "case" + ""
"#;

/// Calls every shape; prints what each returns, per mutant of the driver's listing.
const PROBE: &str = r#"import json, sys
from mutmut.mutation.trampoline import set_mutant_under_test
import shapes

def probe():
    s = shapes.Square(3)
    out = [s.side, shapes.Square.unit().side, shapes.Square.of(2).side,
           shapes.describe(5), shapes.describe(-1), shapes.describe("a"), shapes.describe(1.0)]
    try:
        s.side = -1
        out.append("no raise")
    except ValueError as e:
        out.append(str(e))
    s.side = 4
    out.append(s.side)
    g = shapes.Guarded()
    g.w = 3
    out += [list(shapes.Pair(1, 2)), g.hidden, g.v, g.w, shapes.Tagging("T", (), {}).tag]
    out += [shapes.scaled(2), shapes.halved(9), shapes.Outer.Inner(4).doubled(),
            shapes.Outer.Inner.Deepest.tripled(5), shapes.Boxed().opened(), shapes.matched()]
    return out

listing = json.load(open(sys.argv[1]))
set_mutant_under_test("")
results = {"": probe()}
for mutant in listing["mutants"]:
    set_mutant_under_test(mutant["id"])
    try:
        results[mutant["id"]] = probe()
    except Exception as e:
        results[mutant["id"]] = repr(e)
print(json.dumps(results))
"#;

#[test]
fn the_driver_mutates_every_decorator_shape_and_tells_twins_apart() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "shapes.py", SHAPES);
    write(root, "probe.py", PROBE);
    let every_body_line: Vec<u32> = (1..=130).collect();
    write(
        root,
        "spec.json",
        &serde_json::json!({ "files": { "shapes.py": every_body_line } }).to_string(),
    );
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/prove/driver.py");
    let out = std::process::Command::new(&python)
        .arg(&driver)
        .args(["mutate", "spec.json"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::write(root.join("listing.json"), &out.stdout).unwrap();
    let listing: Value = serde_json::from_slice(&out.stdout).unwrap();
    let functions = listing["functions"].as_array().unwrap();
    let engine_of = |name: &str, start: u64| {
        functions
            .iter()
            .find(|f| f["function"] == name && f["start"] == start)
            .unwrap_or_else(|| panic!("no {name} at {start}: {listing}"))["engine"]
            .clone()
    };
    for (name, start) in [
        ("Square.side", 15),
        ("Square.side", 19),
        ("Square.unit", 25),
        ("Square.of", 30),
        ("describe", 36),
        ("_", 41),
        ("_", 46),
    ] {
        assert_eq!(
            engine_of(name, start),
            "mutmut, decorators kept on the trampoline",
            "{name} at {start}"
        );
    }
    assert_eq!(engine_of("Square.__init__", 12), "mutmut");
    assert_eq!(engine_of("Guarded.__init__", 57), "mutmut");
    for (name, start) in [
        ("Pair.__new__", 52),
        ("Guarded.__getattribute__", 60),
        ("Guarded.__setattr__", 65),
        ("Tagging.__new__", 70),
    ] {
        assert_eq!(
            engine_of(name, start),
            "mutmut, special method opened to its trampoline",
            "{name} at {start}"
        );
    }
    for (name, start) in [
        ("scaled", 77),
        ("scaled", 82),
        ("halved", 92),
        ("Outer.Inner.__init__", 98),
        ("Outer.Inner.doubled", 101),
        ("Outer.Inner.Deepest.tripled", 105),
        ("Boxed.opened", 113),
        ("matched", 120),
    ] {
        assert_eq!(
            engine_of(name, start),
            "mutmut, trampoline placed in a module-level block or a nested class",
            "{name} at {start}"
        );
    }
    let out = std::process::Command::new(&python)
        .args(["probe.py", "listing.json"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let results: Value = serde_json::from_slice(&out.stdout).unwrap();
    let clean = &results[""];
    assert_eq!(
        clean.to_string(),
        r#"[3,1,6,"int","negative int","str:a","thing","negative",4,[1,2],"shown",1,6,"T!",20,4,8,15,"open","case"]"#
    );
    // Every mutant changes only what its own function returns: the probe's outputs that
    // differ from the clean run's are those of the function it mutates.
    let touches = |function: &str| -> Vec<usize> {
        match function {
            // unit() and of() are read through the getter too.
            "Square.side@getter" => vec![0, 1, 2, 8],
            "Square.side@setter" => vec![7, 8],
            "Square.unit" => vec![1],
            "Square.of" => vec![2],
            "describe" => vec![6],
            "_@int" => vec![3, 4],
            "_@str" => vec![5],
            "Square.__init__" => (0..9).collect(),
            "logged" => vec![1, 2],
            "Pair.__new__" => vec![9],
            "Guarded.__init__" => vec![11],
            "Guarded.__getattribute__" => vec![10, 11, 12],
            "Guarded.__setattr__" => vec![12],
            "Tagging.__new__" => vec![13],
            "scaled@if" => vec![14],
            "scaled@else" => vec![], // its branch never runs
            "halved" => vec![15],
            "Outer.Inner.__init__" | "Outer.Inner.doubled" => vec![16],
            "Outer.Inner.Deepest.tripled" => vec![17],
            "Boxed.opened" => vec![18],
            "matched" => vec![19],
            other => panic!("unexpected {other}"),
        }
    };
    let mut killed = 0;
    for mutant in listing["mutants"].as_array().unwrap() {
        let id = mutant["id"].as_str().unwrap();
        let line = mutant["line"].as_u64().unwrap();
        let function = match (mutant["function"].as_str().unwrap(), line) {
            ("Square.side", l) if l < 19 => "Square.side@getter".to_string(),
            ("Square.side", _) => "Square.side@setter".to_string(),
            ("_", l) if l < 46 => "_@int".to_string(),
            ("scaled", l) if l < 82 => "scaled@if".to_string(),
            ("scaled", _) => "scaled@else".to_string(),
            ("_", _) => "_@str".to_string(),
            (name, _) => name.to_string(),
        };
        let Some(got) = results[id].as_array() else {
            continue; // the probe raised: a crash, wherever it came from
        };
        let changed: Vec<usize> = (0..got.len()).filter(|&i| got[i] != clean[i]).collect();
        if !changed.is_empty() {
            killed += 1;
        }
        let allowed = touches(&function);
        assert!(
            changed.iter().all(|i| allowed.contains(i)),
            "{id} ({function}, {}) changed outputs {changed:?}: {got:?}",
            mutant["mutation"]
        );
    }
    // The setter's twin, the second `register`ed `_`, and what is placed in blocks and
    // nested classes have mutants that bite.
    assert!(killed >= 30, "{killed} of {listing}");
    for twin in [
        "shapes.x\u{1c1}Square\u{1c1}side\u{1c0}2__mutmut_1",
        "shapes.x__\u{1c0}2__mutmut_1",
        "shapes.x_scaled\u{1c0}2__mutmut_1",
        "shapes.x\u{1c1}Outer\u{1c2}Inner\u{1c2}Deepest\u{1c1}tripled__mutmut_1",
    ] {
        assert!(results.get(twin).is_some(), "no {twin}: {listing}");
    }
}

/// A module in Latin-1 (its coding cookie says so) is read as Python reads it and gets
/// mutants that import; a module the engine cannot parse is named in the listing with
/// why, never left out of the proof in silence.
#[test]
fn the_driver_reads_a_declared_encoding_and_names_a_module_it_cannot_parse() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let latin1: Vec<u8> = b"# -*- coding: latin-1 -*-\n\n\ndef greet(name):\n    if name:\n        return \"ol\xe9 \" + name\n    return \"ol\xe9\"\n".to_vec();
    std::fs::write(root.join("greeting.py"), &latin1).unwrap();
    write(root, "broken.py", "def f(:\n    return 1\n");
    let measured = serde_json::json!({ "tests": { "tests/test_g.py::test_greet": {
        "greeting.py": [5, 6], "broken.py": [2]
    } } });
    write(root, "measured.json", &measured.to_string());
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/prove/driver.py");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(&python)
            .arg(&driver)
            .args(args)
            .current_dir(root)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let stake = run(&["stake", "measured.json", "tests/test_g.py::test_greet"]);
    let listed: Vec<(String, String, u64)> = stake["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let field = |k: &str| f[k].as_str().unwrap().to_string();
            (
                field("file"),
                field("function"),
                f["start"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("broken.py".to_string(), "(the module)".to_string(), 1),
            ("greeting.py".to_string(), "greet".to_string(), 4),
        ],
        "{stake}"
    );
    write(
        root,
        "spec.json",
        &serde_json::json!({ "files": { "greeting.py": [5, 6], "broken.py": [2] } }).to_string(),
    );
    let listing = run(&["mutate", "spec.json"]);
    let functions = listing["functions"].as_array().unwrap();
    let broken = functions
        .iter()
        .find(|f| f["file"] == "broken.py")
        .unwrap_or_else(|| panic!("broken.py is not named: {listing}"));
    assert_eq!(broken["function"], "(the module)");
    assert_eq!(broken["start"], 1);
    assert_eq!(broken["mutants"], 0);
    assert_contains(
        broken["reason"].as_str().unwrap(),
        "the mutation engine cannot read it as Python",
    );
    let greet = functions.iter().find(|f| f["function"] == "greet").unwrap();
    assert!(greet["mutants"].as_u64().unwrap() >= 2, "{listing}");
    // The mutated module imports, says olé on the unmutated path, and its mutants differ.
    let mutants: Vec<String> = listing["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect();
    let probe = format!(
        "import json\nfrom mutmut.mutation.trampoline import set_mutant_under_test\nimport greeting\nout = []\nfor m in [''] + {mutants:?}:\n    set_mutant_under_test(m)\n    try:\n        out.append(greeting.greet('Ana'))\n    except Exception as e:\n        out.append(repr(e))\nprint(json.dumps(out))\n"
    );
    write(root, "probe.py", &probe);
    let out = std::process::Command::new(&python)
        .arg("probe.py")
        .current_dir(root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let results: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(results[0], "ol\u{e9} Ana");
    assert!(
        results[1..].iter().any(|r| r != &results[0]),
        "no mutant changes greet: {results:?}"
    );
}

/// A frozen test each of whose kills another test of the suite kills too takes no
/// coverage away: a deposit that asserts nothing passes the proof, and `prove` and
/// `check` say why.
#[test]
fn a_frozen_test_whose_kills_other_tests_share_withdraws_nothing() {
    let dir = project(
        ASSERTS_NOTHING,
        "tests/test_inventory.py::test_reserve_keeps_rest",
    );
    let summary = proved(dir.path(), &[]);
    assert_contains(&summary, "it withdraws no coverage, any deposit passes");
    let proof = record(dir.path(), "gate/proof.json");
    let freeze = &proof["freezes"][0];
    let killed: Vec<&Value> = freeze["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["killed_by_frozen"] == true)
        .collect();
    assert!(!killed.is_empty(), "{freeze}");
    assert!(
        killed.iter().all(|m| m["killed_by_others"] == true),
        "{freeze}"
    );
    let (code, report) = check(dir.path(), &["gate/proof.json"]);
    assert_eq!(code, 0, "{report}");
    assert!(codes(&report).is_empty(), "{report}");
    let notes = report["notes"].to_string();
    assert_contains(
        &notes,
        "tests/test_inventory.py::test_reserve_keeps_rest withdraws no coverage",
    );
}

/// The proof and the base run `base_run_without_the_freeze` wrote, for FZ213.
const WITH_BASE_RUN: [&str; 4] = [
    "--proof",
    "gate/proof.json",
    "--base-run",
    "gate/base-run.json",
];

/// The base's run, before the freeze and the break: gate/base-run.json, every test passed.
/// The ledger (with the freeze) is put back and returned.
fn base_run_without_the_freeze(root: &Path) -> String {
    let ledger = std::fs::read_to_string(root.join("gate/freeze_ledger.json")).unwrap();
    write(
        root,
        "gate/freeze_ledger.json",
        "{\"schema\": 1, \"freezes\": []}\n",
    );
    run_record(root, "gate/base-run.json");
    write(root, "gate/freeze_ledger.json", &ledger);
    ledger
}

/// The classic green: break the code, freeze the test that now fails, deposit a property
/// that passes anyway. The proof runs the frozen test alone three times: it fails each
/// time, and the base run has it passing: FZ213.
#[test]
fn freezing_a_test_the_patch_broke_is_fz213() {
    let dir = project(NON_NEGATIVE, FROZEN);
    let root = dir.path();
    base_run_without_the_freeze(root);
    // The patch: `reserve` no longer returns 0 when qty exceeds the stock.
    let broken = INVENTORY.replace("        return 0\n", "        return stock\n");
    assert_ne!(broken, INVENTORY);
    write(root, "inventory.py", &broken);
    git(root, &["commit", "-qam", "break reserve, freeze its test"]);
    let summary = proved(root, &[]);
    assert_contains(&summary, "every run of 3");
    assert_eq!(
        record(root, "gate/proof.json")["freezes"][0]["frozen_clean"],
        "failed"
    );
    let (code, report) = check_selected(root, "FZ210,FZ213", &WITH_BASE_RUN);
    assert_eq!(code, 1, "{report}");
    assert_eq!(codes(&report), ["FZ213"], "{report}");
    assert_contains(
        &message(&report, "FZ213"),
        "passed in the base run: the patch broke what it checks",
    );
}

/// The same break, and the patch also guts the test it freezes (the check that now fails
/// deleted): skipped, nobody would see the gutted test pass. `prove --base` runs the
/// frozen test as the base defined it, which fails on the broken code: FZ213, saying so.
#[test]
fn a_frozen_test_the_patch_also_gutted_is_judged_as_the_base_defined_it() {
    let dir = project(NON_NEGATIVE, FROZEN);
    let root = dir.path();
    let ledger = base_run_without_the_freeze(root);
    // The base commit has no freeze, so the patch's freeze is new (what prove --base proves).
    write(
        root,
        "gate/freeze_ledger.json",
        "{\"schema\": 1, \"freezes\": []}\n",
    );
    git(root, &["commit", "-qam", "base: no freeze"]);
    write(root, "gate/freeze_ledger.json", &ledger);
    let broken = INVENTORY.replace("        return 0\n", "        return stock\n");
    write(root, "inventory.py", &broken);
    let gutted = EXAMPLES.replace("    assert reserve(2, 3) == 0\n", "");
    assert_ne!(gutted, EXAMPLES);
    write(root, "tests/test_inventory.py", &gutted);
    git(
        root,
        &["commit", "-qam", "break reserve, gut and freeze its test"],
    );
    let summary = proved(root, &["--base", "HEAD~1"]);
    assert_contains(&summary, "frozen test: as the base defined it");
    let freeze = &record(root, "gate/proof.json")["freezes"][0];
    assert_eq!(freeze["frozen_at_base"], true, "{freeze}");
    assert_eq!(freeze["frozen_clean"], "failed", "{freeze}");
    // The user's tree keeps the patch's version: only the proof's copy had the base's.
    assert_eq!(
        std::fs::read_to_string(root.join("tests/test_inventory.py")).unwrap(),
        gutted
    );
    let (code, report) = check_selected(root, "FZ213", &WITH_BASE_RUN);
    assert_eq!(code, 1, "{report}");
    assert_eq!(codes(&report), ["FZ213"], "{report}");
    assert_contains(
        &message(&report, "FZ213"),
        "as the base defined it (the patch changed it) fails alone on this commit's code",
    );
}

/// A pytest run of the project with the plugin, its record written to `name`.
fn run_record(root: &Path, name: &str) {
    let mut pytest = std::process::Command::new(python());
    let out = hermetic(&mut pytest)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .args(["--freezegate-record", name])
        .current_dir(root)
        .env_remove("VIRTUAL_ENV")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

/// The inventory project with no freeze and no property, committed and run (its record
/// gate/base-run.json), then `patch` committed and run (gate/run.json).
fn removal(patch: impl Fn(&Path)) -> tempfile::TempDir {
    let dir = project(EXACT, FROZEN);
    let root = dir.path();
    write(
        root,
        "gate/freeze_ledger.json",
        "{\"schema\": 1, \"freezes\": []}\n",
    );
    std::fs::remove_file(root.join("tests/test_props.py")).unwrap();
    write(
        root,
        ".gitignore",
        "gate/proof*.json\ngate/*run.json\n__pycache__/\n.hypothesis/\n",
    );
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "base: no freeze"]);
    run_record(root, "gate/base-run.json");
    patch(root);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "the patch"]);
    run_record(root, "gate/run.json");
    dir
}

/// How the gate judges a removal against the commit before: both runs and the proof.
const REMOVAL_JUDGED: [&str; 8] = [
    "--run",
    "gate/run.json",
    "--base",
    "HEAD~1",
    "--base-run",
    "gate/base-run.json",
    "--proof",
    "gate/proof.json",
];

/// A deletion or an edit is judged by the measure of a freeze: `prove --base` runs each
/// removed or edited test as the base defined it. A removed test whose every kill another
/// test shares withdrew nothing (a note, no error); one that alone caught mutants by a
/// check is FZ603 naming one, and passes once retired with an exact property; an edit
/// that loses one of those kills is FZ214.
#[test]
fn a_deleted_test_owes_only_the_kills_no_other_test_makes() {
    let dir = removal(|root| {
        let tests = EXAMPLES
            .replace(
                "def test_reserve_keeps_rest():\n    assert reserve(100, 1) == 99\n",
                "",
            )
            // Renamed out of collection: pytest does not collect `xtest_`.
            .replace(
                "def test_reserve_takes_qty():",
                "def xtest_reserve_takes_qty():",
            );
        assert_eq!(tests.matches("\ndef test_").count(), 10);
        write(root, "tests/test_inventory.py", &tests);
    });
    let root = dir.path();
    let summary = proved(root, &["--base", "HEAD~1"]);
    assert_contains(
        &summary,
        "removed by the patch: the proof ran it as the base defined it",
    );
    assert_contains(
        &summary,
        "removing it withdraws no coverage (deletion is honest)",
    );
    // The renamed one is said to be, with its new name, not called removed.
    assert_contains(
        &summary,
        "tests/test_inventory.py::test_reserve_takes_qty\n  renamed out of collection by the patch (now def xtest_reserve_takes_qty, which pytest does not collect): the proof ran it as the base defined it\n",
    );
    assert_contains(&summary, "killed by the renamed-out test alone: ");
    // No entry retires it: what only it caught is withdrawn, not a deposit's survivor.
    assert_contains(
        &summary,
        "withdrawn (no test of the suite catches them now):",
    );
    assert!(!summary.contains("caught by the deposit"), "{summary}");
    let proof = record(root, "gate/proof.json");
    let removed: Vec<&str> = proof["freezes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["removed"] == true)
        .map(|f| f["test_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        removed,
        [
            "tests/test_inventory.py::test_reserve_keeps_rest",
            "tests/test_inventory.py::test_reserve_takes_qty"
        ],
        "{proof:#}"
    );
    // The user's tree keeps the patch's file: only the proof's copy had the base's.
    assert!(
        !std::fs::read_to_string(root.join("tests/test_inventory.py"))
            .unwrap()
            .contains("\ndef test_reserve_takes_qty")
    );
    let (code, report) = check_selected(root, "FZ603", &REMOVAL_JUDGED);
    assert_eq!(code, 1, "{report}");
    let refused: Vec<&str> = report["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["test_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        refused,
        ["tests/test_inventory.py::test_reserve_takes_qty"],
        "{report}"
    );
    let said = message(&report, "FZ603");
    assert_contains(
        &said,
        "by a check, which no test of the suite catches now; inventory.py:",
    );
    assert_contains(
        &report["notes"].to_string(),
        "tests/test_inventory.py::test_reserve_keeps_rest was removed and withdrew nothing",
    );

    // Retired in the ledger with an exact property: judged as a freeze, and it passes.
    write(root, "tests/test_props.py", &format!("import pytest\nfrom hypothesis import given, strategies as st\nfrom inventory import reserve\n\n{EXACT}"));
    let ledger = serde_json::json!({"schema": 1, "freezes": [{
        "test_id": "tests/test_inventory.py::test_reserve_takes_qty",
        "reason": "INV-9: the property states the whole contract",
        "owner": "finley",
        "opened": "2026-11-28",
        "invariant": "reserve takes qty from stock, never below zero, and refuses qty <= 0",
        "compensating_property": PROPERTY,
        "reused_property": false,
        "retired": true,
    }]});
    write(
        root,
        "gate/freeze_ledger.json",
        &serde_json::to_string_pretty(&ledger).unwrap(),
    );
    git(root, &["add", "-A"]);
    git(
        root,
        &["commit", "-q", "--amend", "-m", "the patch, retired"],
    );
    run_record(root, "gate/run.json");
    proved(root, &["--base", "HEAD~1"]);
    let proof = record(root, "gate/proof.json");
    let retired = proof["freezes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["test_id"] == "tests/test_inventory.py::test_reserve_takes_qty")
        .unwrap_or_else(|| panic!("{proof:#}"));
    assert_eq!(
        (&retired["removed"], &retired["properties"][0]),
        (&Value::Bool(true), &Value::from(PROPERTY)),
        "{retired:#}"
    );
    let (code, report) = check_selected(root, "FZ603,FZ210,FZ211,FZ212", &REMOVAL_JUDGED);
    assert_eq!((code, codes(&report)), (0, vec![]), "{report}");

    // Kept instead, but `== 0` loosened to `>= 0`: as many checks (FZ610 sees nothing),
    // and the proof runs both versions: FZ214 at the line the patch loosened (not the
    // test's first line, 5).
    let loosened = EXAMPLES
        .replace(
            "def test_reserve_keeps_rest():\n    assert reserve(100, 1) == 99\n",
            "",
        )
        .replace("assert reserve(2, 3) == 0", "assert reserve(2, 3) >= 0");
    write(root, "tests/test_inventory.py", &loosened);
    write(
        root,
        "gate/freeze_ledger.json",
        "{\"schema\": 1, \"freezes\": []}\n",
    );
    std::fs::remove_file(root.join("tests/test_props.py")).unwrap();
    git(root, &["add", "-A"]);
    git(
        root,
        &["commit", "-q", "--amend", "-m", "the patch, loosened"],
    );
    run_record(root, "gate/run.json");
    let out = prove(root, &["--base", "HEAD~1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary = text(&out.stdout);
    assert_contains(
        &summary,
        "edited by the patch: the proof ran the base's version, and the patch's beside it",
    );
    // No property of the ledger's runs: the progress says what does.
    assert_contains(
        &text(&out.stderr),
        "test_reserve_takes_qty: the patch's version runs on its unique kills (",
    );
    // The patch's version is no deposit of the ledger's: the summary does not call it one.
    assert_contains(
        &summary,
        "  the patch's version: run as tests/test_inventory.py::test_reserve_takes_qty__as_patched\n",
    );
    assert_contains(&summary, "  caught by the patch's version, by a check: ");
    let edited: Vec<&str> = summary
        .lines()
        .skip_while(|l| *l != "tests/test_inventory.py::test_reserve_takes_qty")
        .skip(1)
        .take_while(|l| l.starts_with(' '))
        .collect();
    assert!(
        !edited.is_empty() && !edited.iter().any(|l| l.contains("deposit")),
        "{summary}"
    );
    let (code, report) = check_selected(root, "FZ214,FZ603,FZ610", &REMOVAL_JUDGED);
    assert_eq!(
        (code, codes(&report)),
        (1, vec!["FZ214".to_string()]),
        "{report}"
    );
    let v = &report["violations"][0];
    assert_eq!(
        (v["file"].as_str(), v["line"].as_u64()),
        (Some("tests/test_inventory.py"), Some(7)),
        "{v:#}"
    );
    assert_contains(
        v["message"].as_str().unwrap(),
        "tests/test_inventory.py::test_reserve_takes_qty as the patch edits it no longer catches 1 of ",
    );
    assert_contains(v["message"].as_str().unwrap(), "(- return 0 + return 1)");
}

/// A proof record of an older freezegate (version 1) does not say which kills are
/// unique: it is refused at its version, with the command that writes it again.
#[test]
fn an_older_proof_record_is_refused_with_the_command_that_rewrites_it() {
    let dir = project(EXACT, FROZEN);
    write(
        dir.path(),
        "gate/proof.json",
        "{\"kind\": \"freezegate proof record\",\n\"version\": 1}\n",
    );
    let mut command = common::freezegate(dir.path());
    let out = hermetic(&mut command)
        .args(["check", "--select", "FZ210", "--today", "2026-11-30"])
        .args(["--proof", "gate/proof.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert_contains(&stderr, "gate/proof.json");
    assert_contains(&stderr, "older freezegate (version 1)");
    assert_contains(&stderr, ":2:");
    assert_contains(&stderr, "freezegate prove");
}

/// The exact property kills what the frozen test kills: the proof passes, and the
/// reviewer's summary says so; the tree is as it was; one commit later the same proof
/// is FZ404.
#[test]
fn an_exact_property_passes_and_the_summary_shows_the_counts() {
    let dir = project(EXACT, FROZEN);
    let summary = proved(dir.path(), &[]);
    let (code, report) = check(dir.path(), &["gate/proof.json"]);
    assert_eq!(code, 0, "{report}");
    assert!(codes(&report).is_empty(), "{report}");
    let timing = regex_free_timing(&summary);
    insta::assert_snapshot!("prove_summary_exact", timing);

    // prove never writes into the user's tree but the proof record.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("inventory.py")).unwrap(),
        INVENTORY
    );
    assert_eq!(
        git(
            dir.path(),
            &[
                "status",
                "--porcelain",
                "--ignored",
                "--untracked-files=all"
            ]
        ),
        "!! gate/proof.json"
    );

    // The same proof, one commit later, judges its own commit: FZ404, and its verdicts
    // feed no other rule.
    write(dir.path(), "README.md", "inventory\n");
    git(dir.path(), &["add", "README.md"]);
    git(dir.path(), &["commit", "-q", "-m", "readme"]);
    let (code, report) = check(dir.path(), &["gate/proof.json"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(codes(&report), ["FZ404"], "{report}");
    assert_contains(&message(&report, "FZ404"), "is the proof of");
}

/// The summary without its wall times (the one line that varies run to run).
fn regex_free_timing(summary: &str) -> String {
    summary
        .lines()
        .map(|line| match line.find(" proven in ") {
            Some(i) => format!("{} proven in [time]", &line[..i]),
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A frozen test that asserts nothing kills no mutant: FZ211, and no FZ210.
#[test]
fn a_frozen_test_that_asserts_nothing_gives_fz211() {
    let dir = project(EXACT, "tests/test_inventory.py::test_reserve_runs");
    proved(dir.path(), &[]);
    let (code, report) = check(dir.path(), &["gate/proof.json"]);
    assert_eq!(code, 0, "FZ211 warns: {report}");
    assert_eq!(codes(&report), ["FZ211"], "{report}");
    assert_contains(&message(&report, "FZ211"), "kills none of the");
}

/// A budget or mutant limit hit makes the proof incomplete: FZ212, never a pass, even
/// for the exact property.
#[test]
fn a_budget_or_mutant_limit_hit_gives_fz212() {
    let dir = project(EXACT, FROZEN);
    let summary = proved(dir.path(), &["--budget", "0", "-j", "2"]);
    assert_contains(&summary, "INCOMPLETE");
    let proof = record(dir.path(), "gate/proof.json");
    assert_eq!(proof["complete"], false, "{proof}");
    let (code, report) = check(dir.path(), &["gate/proof.json"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(codes(&report), ["FZ212"], "{report}");

    proved(
        dir.path(),
        &["--max-mutants", "2", "--output", "gate/proof-limited.json"],
    );
    let (code, report) = check(dir.path(), &["gate/proof-limited.json"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(codes(&report), ["FZ212"], "{report}");
    assert_contains(&message(&report, "FZ212"), "2 of");
}

/// Two shards under `-j 2` prove what one run proves: merged, the same verdict; one
/// shard alone is incomplete.
#[test]
fn two_shards_merge_into_the_whole_proof() {
    let dir = project(NON_NEGATIVE, FROZEN);
    proved(
        dir.path(),
        &["--shard", "1/2", "-j", "2", "--output", "gate/proof-1.json"],
    );
    proved(
        dir.path(),
        &["--shard", "2/2", "-j", "2", "--output", "gate/proof-2.json"],
    );
    let one = record(dir.path(), "gate/proof-1.json");
    let two = record(dir.path(), "gate/proof-2.json");
    let ids = |r: &Value| -> Vec<String> {
        r["freezes"][0]["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_string())
            .collect()
    };
    let (a, b) = (ids(&one), ids(&two));
    assert!(!a.is_empty() && !b.is_empty(), "{a:?} {b:?}");
    assert!(
        a.iter().all(|id| !b.contains(id)),
        "shards overlap: {a:?} {b:?}"
    );
    assert_eq!(
        (a.len() + b.len()) as u64,
        one["freezes"][0]["mutants_total"].as_u64().unwrap()
    );
    let (code, report) = check(dir.path(), &["gate/proof-1.json", "gate/proof-2.json"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(codes(&report), ["FZ210"], "{report}");
    let (code, report) = check(dir.path(), &["gate/proof-1.json"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(codes(&report), ["FZ212"], "{report}");
    assert_contains(&message(&report, "FZ212"), "a shard is missing");
}

/// Without the engine, prove is exit 2 and names the extra that brings it.
#[test]
fn prove_without_the_engine_names_the_extra() {
    let dir = project(EXACT, FROZEN);
    let bare = tempfile::tempdir().unwrap();
    let made = std::process::Command::new(python())
        .args(["-m", "venv", "--without-pip"])
        .arg(bare.path())
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", text(&made.stderr));
    let mut command = common::freezegate(dir.path());
    let out = hermetic(&mut command)
        .arg("prove")
        .arg("--python")
        .arg(bare.path().join("bin").join("python"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_contains(&text(&out.stderr), "freezegate[prove]");
    assert!(!dir.path().join("gate/proof.json").exists());
}

/// A frozen test that cannot run alone (a missing fixture) is exit 2 naming it.
#[test]
fn a_frozen_test_that_cannot_run_alone_is_exit_2_naming_it() {
    let dir = project(EXACT, "tests/test_inventory.py::test_needs_a_fixture");
    let mut examples = EXAMPLES.to_string();
    examples.push_str("\n\ndef test_needs_a_fixture(warehouse):\n    assert warehouse\n");
    write(dir.path(), "tests/test_inventory.py", &examples);
    git(dir.path(), &["commit", "-q", "-am", "fixture"]);
    let out = prove(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert_contains(&text(&out.stderr), "test_needs_a_fixture");
    assert!(!dir.path().join("gate/proof.json").exists());
}

/// A malformed proof record is exit 2, naming the file, the line and the value.
#[test]
fn a_malformed_proof_record_is_exit_2_with_file_line_and_value() {
    let dir = project(EXACT, FROZEN);
    write(
        dir.path(),
        "gate/proof.json",
        "{\"version\": 2, \"kind\": \"freezegate proof record\",\n\"commit\": null,\n\"dirty\": \"maybe\"}\n",
    );
    let mut command = common::freezegate(dir.path());
    let out = hermetic(&mut command)
        .args([
            "check",
            "--select",
            "FZ210",
            "--today",
            "2026-11-30",
            "--proof",
            "gate/proof.json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert_contains(&stderr, "gate/proof.json");
    assert_contains(&stderr, "\"maybe\"");
    assert_contains(&stderr, ":3:");
}

/// A function that runs at import (a module constant) and in the test's call, and a
/// mutant that never ends.
const LIMITS: &str = r#""""Limits, computed at import."""


def doubled(n):
    return n * 2


MAX_STOCK = doubled(50)


def cap(stock):
    return min(stock, doubled(50))


def drain(n):
    while n > 0:
        n -= 1
    return n
"#;

/// The runs are forked from a warm pytest whose import ran every function unmutated: a
/// mutant of a function that also runs at import is active in the test's call alone,
/// judged by the test's own checks there, and the proof says so; a mutant that loops
/// forever is stopped at its limit and counts as a kill, with prove going on to the next.
#[test]
fn mutants_of_import_time_code_are_judged_in_the_call_and_endless_ones_stopped() {
    let dir = project(EXACT, FROZEN);
    let root = dir.path();
    write(root, "limits.py", LIMITS);
    write(
        root,
        "tests/test_limits.py",
        "from limits import cap, drain\n\n\ndef test_cap_and_drain():\n    assert cap(1000) == 100\n    assert drain(3) == 0\n",
    );
    // Two other tests run drain: its endless mutant hangs them, and the first hang is
    // their kill (the run stops at its first failure, not once per test after it).
    write(
        root,
        "tests/test_drain.py",
        "from limits import drain\n\n\ndef test_drain_one():\n    assert drain(1) == 0\n\n\ndef test_drain_two():\n    assert drain(2) == 0\n",
    );
    write(
        root,
        "tests/test_limits_props.py",
        "from hypothesis import given, strategies as st\nfrom limits import cap\n\n\n@given(st.integers(0, 1000))\ndef test_cap_prop(stock):\n    assert cap(stock) == min(stock, 100)\n",
    );
    let ledger = std::fs::read_to_string(root.join("gate/freeze_ledger.json"))
        .unwrap()
        .replace(FROZEN, "tests/test_limits.py::test_cap_and_drain")
        .replace(PROPERTY, "tests/test_limits_props.py::test_cap_prop");
    write(root, "gate/freeze_ledger.json", &ledger);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "limits"]);

    proved(root, &["-j", "2"]);
    let proof = record(root, "gate/proof.json");
    let mutants = proof["freezes"][0]["mutants"].as_array().unwrap().clone();
    let of = |function: &str| -> Vec<Value> {
        mutants
            .iter()
            .filter(|m| m["function"] == function)
            .cloned()
            .collect()
    };
    let at_import = of("doubled");
    assert!(!at_import.is_empty(), "no mutant of doubled: {proof}");
    for m in &at_import {
        // `assert cap(1000) == 100` fails on doubled(50) mutated in cap: a check; the
        // import's MAX_STOCK = doubled(50) ran unmutated.
        assert_eq!(m["unmutated_at"], serde_json::json!(["import"]), "{m}");
        assert_eq!(m["killed_by_frozen"], true, "{m}");
        assert_eq!(m["checked_by_frozen"], true, "{m}");
        assert_eq!(
            m["killed_by"],
            serde_json::json!(["tests/test_limits_props.py::test_cap_prop"]),
            "{m}"
        );
    }
    let endless: Vec<Value> = of("drain")
        .into_iter()
        .filter(|m| m["mutation"].as_str().unwrap().contains("n += 1"))
        .collect();
    assert_eq!(endless.len(), 1, "{proof}");
    assert_eq!(endless[0]["killed_by_frozen"], true, "{}", endless[0]);
    assert_eq!(endless[0]["checked_by_frozen"], false, "{}", endless[0]);
    assert_eq!(endless[0]["killed_by_others"], true, "{}", endless[0]);
    assert!(proof["complete"] == true, "{proof}");
}

/// A test whose call phase runs past its limit (prove's call-limits file, from its
/// unmutated time) is stopped inside the test process: it fails, as a hang does, and the
/// run goes on to the next test; so a mutant that loops forever in the first of a run's
/// tests costs that test's limit, not the whole run's. A limit given for a function's id
/// holds for each of its cases.
#[test]
fn a_call_past_its_limit_fails_inside_the_test_process_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "test_loop.py",
        "import pytest\n\n\ndef test_loop():\n    n = 1\n    while n > 0:\n        n += 1\n\n\n\
         @pytest.mark.parametrize('n', [1, 2])\ndef test_cases(n):\n    while n > 0:\n        n += 1\n\n\n\
         def test_after():\n    assert True\n",
    );
    // A limit by a function's id is each of its cases' (a frozen test is named so).
    write(
        root,
        "limits.json",
        r#"{"test_loop.py::test_loop": 0.5, "test_loop.py::test_cases": 0.5}"#,
    );
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/prove");
    let child = hermetic(&mut std::process::Command::new(python()))
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "driver",
        ])
        .args(["--freezegate-prove-call-limits=limits.json", "test_loop.py"])
        .env("PYTHONPATH", &driver)
        .env("FREEZEGATE_PLUGIN_OFF", "1")
        .current_dir(root)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Without the limit the loop never ends: the watchdog stops it, and the test fails.
    let out = common::ended_by_itself("the endless test, past its call limit", child);
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert_contains(
        &said,
        "test_loop.py::test_loop: its call phase ran past 0.5 s on this mutant",
    );
    assert_contains(
        &said,
        "test_loop.py::test_cases[2]: its call phase ran past 0.5 s on this mutant",
    );
    assert_contains(&said, "3 failed, 1 passed");
}

/// A src-layout package whose clamp also runs at import (`FULL = clamp(1000)`), as
/// hypothesis-jsonschema's `canonicalish` does.
const SHELF: &str = r#""""Shelf space."""


def clamp(n):
    if n < 0:
        return 0
    return min(n, 100)


FULL = clamp(1000)


def place(stock, qty):
    if qty <= 0:
        raise ValueError("qty must be positive")
    return clamp(stock + qty)
"#;

const SHELF_TESTS: &str = r#"import pytest

from shelf import (
    FULL,
    place as put,
)


def test_place():
    assert put(10, 5) == 15
    assert put(98, 5) == 100
    assert put(-20, 5) == 0
    with pytest.raises(ValueError):
        put(1, 0)
    assert FULL == 100
"#;

/// The deposit: calls and asserts nothing.
const SHELF_HOLLOW: &str = r#"
@given(st.integers(-200, 200), st.integers(-5, 200))
def test_place_prop(stock, qty):
    try:
        place(stock, qty)
    except ValueError:
        pass
"#;

/// The deposit: the exact result and the refusal.
const SHELF_HONEST: &str = r#"
@given(st.integers(-200, 200), st.integers(-5, 200))
def test_place_prop(stock, qty):
    if qty <= 0:
        with pytest.raises(ValueError):
            place(stock, qty)
    else:
        assert place(stock, qty) == max(0, min(stock + qty, 100))
"#;

const SHELF_FROZEN: &str = "tests/test_shelf.py::test_place";
const SHELF_PROPERTY: &str = "tests/test_shelf_props.py::test_place_prop";

/// A venv of its own over the pinned one (a `.pth` naming its site-packages), with
/// `project` installed editable by pip and setuptools, offline: its `.pth` puts the
/// user's `src/` on every interpreter's path.
fn editable_venv(project: &Path) -> (tempfile::TempDir, PathBuf) {
    let pinned = python();
    let venv = tempfile::tempdir().unwrap();
    let made = std::process::Command::new(&pinned)
        .args(["-m", "venv", "--without-pip"])
        .arg(venv.path())
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", text(&made.stderr));
    let site = |python: &Path| -> PathBuf {
        let out = std::process::Command::new(python)
            .args([
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            ])
            .output()
            .unwrap();
        PathBuf::from(text(&out.stdout).trim())
    };
    let own = venv.path().join("bin").join("python");
    write(
        &site(&own),
        "_pinned.pth",
        &format!("{}\n", site(&pinned).display()),
    );
    let mut pip = std::process::Command::new(&own);
    let installed = hermetic(&mut pip)
        .args(["-m", "pip", "install", "-q", "--no-deps", "--no-index"])
        .args(["--no-build-isolation", "--disable-pip-version-check", "-e"])
        .arg(project)
        .env_remove("VIRTUAL_ENV")
        .output()
        .unwrap();
    assert!(
        installed.status.success(),
        "{}{}",
        text(&installed.stdout),
        text(&installed.stderr)
    );
    (venv, own)
}

fn prove_with(dir: &Path, python: &Path) -> Output {
    let mut command = common::freezegate(dir);
    hermetic(&mut command)
        .arg("prove")
        .arg("--python")
        .arg(python)
        .env_remove("VIRTUAL_ENV")
        .output()
        .unwrap()
}

/// A src-layout project installed editable, with pytest-cov in `addopts` and a function
/// that also runs at import: prove imports its own copy, measures the frozen test's call
/// phase under the project's coverage, and judges the mutants of the import-time function
/// in the call phase alone; the hollow deposit fails FZ210, the honest one passes. With
/// the user's tree imported at startup on purpose, prove is exit 2 naming both paths.
#[test]
fn an_editable_src_layout_with_pytest_cov_is_proven_on_its_copy() {
    let dir = project(EXACT, FROZEN);
    let root = dir.path();
    for file in [
        "inventory.py",
        "tests/test_inventory.py",
        "tests/test_props.py",
    ] {
        std::fs::remove_file(root.join(file)).unwrap();
    }
    write(root, "src/shelf/__init__.py", SHELF);
    write(root, "tests/test_shelf.py", SHELF_TESTS);
    let props = |deposit: &str| {
        format!("import pytest\nfrom hypothesis import given, strategies as st\n\nfrom shelf import place\n\n{deposit}")
    };
    write(root, "tests/test_shelf_props.py", &props(SHELF_HOLLOW));
    write(
        root,
        "pyproject.toml",
        "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n\
         [project]\nname = \"shelf\"\nversion = \"0.1\"\n\n\
         [tool.setuptools.packages.find]\nwhere = [\"src\"]\n",
    );
    // No `pythonpath`: the editable install is how the tests find `shelf`.
    write(
        root,
        "pytest.ini",
        "[pytest]\ntestpaths = tests\nfreezegate = true\n\
         addopts = --strict-config --cov=shelf --cov-report= --cov-fail-under=100\n",
    );
    let ledger = std::fs::read_to_string(root.join("gate/freeze_ledger.json"))
        .unwrap()
        .replace(FROZEN, SHELF_FROZEN)
        .replace(PROPERTY, SHELF_PROPERTY);
    write(root, "gate/freeze_ledger.json", &ledger);
    write(
        root,
        ".gitignore",
        "gate/proof*.json\n__pycache__/\n.hypothesis/\n*.egg-info/\n.coverage*\n",
    );
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "shelf"]);
    let (_venv, editable) = editable_venv(root);

    let out = prove_with(root, &editable);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let proof = record(root, "gate/proof.json");
    let freeze = &proof["freezes"][0];
    let stake: Vec<String> = freeze["stake"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{}:{}",
                s["file"].as_str().unwrap(),
                s["function"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        stake,
        ["src/shelf/__init__.py:clamp", "src/shelf/__init__.py:place"],
        "{freeze}"
    );
    let mutants = freeze["mutants"].as_array().unwrap();
    let of = |function: &'static str| mutants.iter().filter(move |m| m["function"] == function);
    assert!(
        of("clamp").count() >= 3 && of("place").count() >= 3,
        "{freeze}"
    );
    for m in of("clamp") {
        // Active only in the call: the import's `FULL = clamp(1000)` ran unmutated (the
        // frozen test's `assert FULL == 100` holds), and the proof says so.
        assert_eq!(m["unmutated_at"], serde_json::json!(["import"]), "{m}");
    }
    let checked = of("clamp")
        .filter(|m| m["checked_by_frozen"] == true)
        .count();
    assert!(checked >= 2, "{freeze}");
    assert!(
        of("place").all(|m| m.get("unmutated_at").is_none()),
        "{freeze}"
    );
    let (code, report) = check(root, &["gate/proof.json"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(codes(&report), ["FZ210"], "{report}");
    assert_contains(&message(&report, "FZ210"), "src/shelf/__init__.py:");

    write(root, "tests/test_shelf_props.py", &props(SHELF_HONEST));
    git(root, &["commit", "-q", "-am", "an honest deposit"]);
    let out = prove_with(root, &editable);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let (code, report) = check(root, &["gate/proof.json"]);
    assert_eq!(code, 0, "{report}");
    assert!(codes(&report).is_empty(), "{report}");
    assert_eq!(
        std::fs::read_to_string(root.join("src/shelf/__init__.py")).unwrap(),
        SHELF
    );

    // A `.pth` that imports the package at startup, from the user's tree, before prove's
    // import hook is in place.
    let site = std::fs::read_dir(_venv.path().join("lib"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("site-packages");
    write(&site, "zz_eager.pth", "import shelf\n");
    let out = prove_with(root, &editable);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let stderr = text(&out.stderr);
    assert_contains(&stderr, "imported `shelf` from");
    assert_contains(
        &stderr,
        &format!(
            "{}/src/shelf/__init__.py",
            root.canonicalize().unwrap().display()
        ),
    );
    assert_contains(&stderr, "/tree/src/shelf/__init__.py");
}

/// A frozen test whose call phase runs no function of the project is exit 2 with the
/// cause, never a complete proof of nothing.
#[test]
fn a_frozen_test_that_runs_no_project_code_is_exit_2() {
    let dir = project(EXACT, "tests/test_inventory.py::test_arithmetic");
    let mut examples = EXAMPLES.to_string();
    examples.push_str("\n\ndef test_arithmetic():\n    assert sum([1, 2]) == 3\n");
    write(dir.path(), "tests/test_inventory.py", &examples);
    git(dir.path(), &["commit", "-q", "-am", "arithmetic"]);
    let out = prove(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert_contains(
        &stderr,
        "no code at stake measured for tests/test_inventory.py::test_arithmetic",
    );
    assert_contains(&stderr, "only test code");
    assert_contains(&stderr, "tests/test_inventory.py");
    assert!(!dir.path().join("gate/proof.json").exists());
}

/// A proof stopped by a signal stops the pytest runs it started, the fork server's
/// forked ones included, and removes its scratch copy: `signal` sent to prove alone (a
/// CI job's timeout) or to its whole process group (a terminal's Ctrl-C).
#[cfg(unix)]
fn a_proof_stopped_by(signal: libc::c_int, whole_group: bool) {
    use std::os::unix::process::CommandExt;
    let marks = tempfile::tempdir().unwrap();
    let started = marks.path().join("started");
    // The deposit says it runs (its pid), then takes far longer than the test waits.
    let slow = format!(
        "\nimport os, time\n\n@given(st.integers(0, 100), st.integers(1, 100))\ndef test_reserve_prop(stock, qty):\n    with open({:?}, \"a\") as mark:\n        mark.write(f\"{{os.getpid()}}\\n\")\n    time.sleep(120)\n",
        started.display().to_string()
    );
    let dir = project(&slow, FROZEN);
    let scratch_parent = marks.path().join("tmp");
    std::fs::create_dir(&scratch_parent).unwrap();
    let mut command = common::freezegate(dir.path());
    hermetic(&mut command)
        .arg("prove")
        .arg("--python")
        .arg(python())
        .env_remove("VIRTUAL_ENV")
        .env("TMPDIR", &scratch_parent)
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    let waited = std::time::Instant::now();
    while !started.exists() {
        if waited.elapsed() > std::time::Duration::from_secs(300)
            || child.try_wait().unwrap().is_some()
        {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "the deposit never ran:\n{}\n{}",
                text(&out.stdout),
                text(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        std::fs::read_dir(&scratch_parent).unwrap().count() > 0,
        "the scratch copy is under TMPDIR while the proof runs"
    );
    let pid = child.id() as libc::pid_t;
    // SAFETY: kill(2) of the child this test started (or its process group, which it
    // leads) before it is reaped.
    unsafe { libc::kill(if whole_group { -pid } else { pid }, signal) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(128 + signal),
        "{}",
        text(&out.stderr)
    );
    assert_contains(
        &text(&out.stderr),
        &format!("freezegate: stopped by signal {signal}; the pytest runs it started are stopped and its scratch copy removed"),
    );
    let left: Vec<_> = std::fs::read_dir(&scratch_parent)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "the scratch copy is removed: {left:?}");
    // The sleeping deposit's process is gone (or a zombie nobody has reaped yet).
    let pids = std::fs::read_to_string(&started).unwrap();
    for pid in pids.lines() {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().unwrap_or("").trim_start();
        assert!(
            stat.is_empty() || state.starts_with('Z'),
            "the deposit's process {pid} still runs: {stat}"
        );
    }
    assert!(!dir.path().join("gate/proof.json").exists());
}

#[cfg(unix)]
#[test]
fn a_proof_stopped_by_sigterm_leaves_no_process_and_no_scratch_copy() {
    a_proof_stopped_by(libc::SIGTERM, false);
}

#[cfg(unix)]
#[test]
fn a_proof_stopped_by_ctrl_c_on_its_process_group_leaves_no_process_and_no_scratch_copy() {
    a_proof_stopped_by(libc::SIGINT, true);
}
