//! Deposit facts a comment cannot fake: the plugin's digest of each Hypothesis test's
//! code (normalized to the AST), FZ209 judging by it against the base run, state-machine tests
//! placed at their machine in the test file, and explicit `@example`s counted as inputs.
//! Real pytest, pytest-xdist and Hypothesis in temporary git repositories, the plugin
//! from the wheel.
//!
//! Needs the venv of `.ci/python-env`; without it these tests fail, they never skip.

mod common;

use common::project::*;
use serde_json::{json, Value};

/// The base has no freeze; the patch adds the freeze of `test_rounding` with the
/// property as its deposit, and `patch` is what it does to the property.
#[track_caller]
fn judge_deposit(
    property_before: &str,
    patch: impl Fn(&Project),
    exit: i32,
    expected: &[&str],
) -> Value {
    let base = property_before.to_string();
    judge_patch(
        move |p| {
            p.write_ledger(&[]);
            p.write("tests/test_props.py", &base);
        },
        move |p| {
            p.write_ledger(&[FROZEN]);
            patch(p);
        },
        exit,
        expected,
        &[],
    )
}

const TWO_ASSERTIONS: &str = r#"from hypothesis import given, settings, strategies as st

from tests.test_app import price


@settings(max_examples=50, database=None, derandomize=True)
@given(st.integers())
def test_never_negative(amount):
    """The price is never negative."""
    assert price(amount) >= 0
    assert price(amount) >= amount
"#;

/// A deposit is a Hypothesis test (FZ302 refuses any other, which has no sample count):
/// only such a test's code is digested; a plain test's row has its lines alone, and its
/// file is never parsed for it.
#[test]
fn only_hypothesis_tests_are_digested() {
    let project = Project::new();
    project.write("tests/test_props.py", TWO_ASSERTIONS);
    let record = project.record(&["-p", "no:xdist"], "gate/run.json");
    let property = &record["tests"]["tests/test_props.py::test_never_negative"];
    assert!(
        property["digest"].as_str().is_some_and(|d| d.len() == 16),
        "{property}"
    );
    let plain = &record["tests"][FROZEN];
    assert!(plain["lines"].is_array(), "{plain}");
    assert_eq!(plain.get("digest"), None, "{plain}");
}

#[test]
fn a_comment_only_edit_inside_the_property_is_no_change() {
    let report = judge_deposit(
        TWO_ASSERTIONS,
        |p| {
            edit(
                p,
                "tests/test_props.py",
                "    assert price(amount) >= 0\n",
                "    # a price below zero would be a refund\n    assert price(amount) >= 0  # never a refund\n",
            );
            edit(
                p,
                "tests/test_props.py",
                "\"\"\"The price is never negative.\"\"\"",
                "\"\"\"The price is never negative, whatever the amount.\"\"\"",
            );
        },
        0,
        &["FZ209"],
    );
    let v = violation(&report, "FZ209");
    assert_eq!(
        v["message"],
        "tests/test_props.py changed, but no code of tests/test_props.py::test_never_negative did: its code is the same as in the base run (comments, docstrings and formatting aside)",
        "{v}"
    );
}

#[test]
fn a_removed_assertion_is_a_change_of_the_property() {
    judge_deposit(
        TWO_ASSERTIONS,
        |p| {
            edit(
                p,
                "tests/test_props.py",
                "    assert price(amount) >= amount\n",
                "",
            )
        },
        // A change of the property (no FZ209), and one that checks less than the base's
        // (FZ610): a deposit made of a test the patch weakens is refused.
        1,
        &["FZ610"],
    );
}

#[test]
fn a_changed_strategy_is_a_change_of_the_property() {
    judge_deposit(
        TWO_ASSERTIONS,
        |p| {
            edit(
                p,
                "tests/test_props.py",
                "@given(st.integers())",
                "@given(st.integers(min_value=-10**6))",
            )
        },
        0,
        &[],
    );
}

const MACHINE: &str = r#"from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from hypothesis import strategies as st

from tests.test_app import price


class Prices(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.total = 0

    @rule(amount=st.integers())
    def add(self, amount):
        self.total += price(amount)

    @invariant()
    def never_negative(self):
        assert self.total >= 0


Prices.TestCase.settings = settings(max_examples=20, database=None, derandomize=True)
TestPrices = Prices.TestCase
"#;

const MACHINE_ID: &str = "tests/test_machine.py::TestPrices::runTest";

fn write_machine_ledger(project: &Project) {
    let ledger = json!({"schema": 1, "freezes": [{
        "test_id": FROZEN, "reason": "BILL-1: rounding moves to half-even", "owner": "finley",
        "opened": "2026-11-25", "expires": "2026-12-05", "invariant": "never negative",
        "compensating_property": MACHINE_ID}]});
    project.write(
        "gate/freeze_ledger.json",
        &serde_json::to_string_pretty(&ledger).unwrap(),
    );
}

#[test]
fn a_new_rule_in_a_state_machine_is_a_change_and_its_span_is_the_machine() {
    let report = judge_patch(
        |p| {
            p.write_ledger(&[]);
            p.write("tests/test_machine.py", MACHINE);
        },
        |p| {
            write_machine_ledger(p);
            edit(
                p,
                "tests/test_machine.py",
                "    @invariant()",
                "    @rule(amount=st.integers(min_value=0))\n    def add_positive(self, amount):\n        self.total += price(amount)\n\n    @invariant()",
            );
        },
        0,
        &[],
        &[],
    );
    assert_eq!(report["violations"], json!([]), "{report:#}");

    // The record places the machine's test at its class in the test file, with a digest.
    let project = Project::new();
    project.write("tests/test_machine.py", MACHINE);
    let record = project.record(&["-p", "no:xdist"], "gate/run.json");
    let row = &record["tests"][MACHINE_ID];
    assert_eq!(row["lines"], json!([8, 19]), "{row}");
    assert!(
        row["digest"].as_str().is_some_and(|d| d.len() == 16),
        "{row}"
    );
}

#[test]
fn an_edit_outside_the_machine_at_runtest_s_lines_is_no_change() {
    // Hypothesis's own runTest sits at lines 557-558 of its stateful.py: an edit there
    // in the test file (below the machine) is not a change of the machine.
    let padded = format!("{MACHINE}{}", "\n".repeat(533) + "X = 1\n");
    let report = judge_patch(
        move |p| {
            p.write_ledger(&[]);
            p.write("tests/test_machine.py", &padded);
        },
        |p| {
            write_machine_ledger(p);
            edit(p, "tests/test_machine.py", "X = 1\n", "X = 2\n");
        },
        0,
        &["FZ209"],
        &[],
    );
    common::assert_contains(
        violation(&report, "FZ209")["message"].as_str().unwrap(),
        &format!("no code of {MACHINE_ID} did"),
    );
}

#[test]
fn a_skipped_state_machine_is_reported_in_the_test_file() {
    let report = judge_patch(
        |p| p.write("tests/test_machine.py", MACHINE),
        |p| {
            edit(
                p,
                "tests/test_machine.py",
                "TestPrices = Prices.TestCase",
                "TestPrices = pytest.mark.skip(reason=\"flaky\")(Prices.TestCase)",
            );
            edit(
                p,
                "tests/test_machine.py",
                "from hypothesis import settings\n",
                "import pytest\nfrom hypothesis import settings\n",
            );
        },
        1,
        &["FZ601"],
        &[],
    );
    let v = violation(&report, "FZ601");
    assert_eq!(
        (v["file"].as_str(), v["line"].as_u64()),
        (Some("tests/test_machine.py"), Some(24)),
        "{v}"
    );
}

#[test]
fn ten_different_examples_are_ten_distinct_inputs() {
    let project = Project::new();
    let examples: String = (0..10).map(|n| format!("@example({n})\n")).collect();
    project.write(
        "tests/test_props.py",
        &format!(
            "from hypothesis import Phase, example, given, settings, strategies as st\n\nfrom tests.test_app import price\n\n\n@settings(phases=[Phase.explicit], database=None)\n{examples}@given(st.integers())\ndef test_never_negative(amount):\n    assert price(amount) >= 0\n"
        ),
    );
    let record = project.record(&["-p", "no:xdist"], "gate/run.json");
    assert_eq!(
        record["samples"][PROPERTY]["distinct"],
        json!(10),
        "{record:#}"
    );
    // The same example twice is one input.
    project.write(
        "tests/test_props.py",
        "from hypothesis import Phase, example, given, settings, strategies as st\n\nfrom tests.test_app import price\n\n\n@settings(phases=[Phase.explicit], database=None)\n@example(1)\n@example(1)\n@example(2)\n@given(st.integers())\ndef test_never_negative(amount):\n    assert price(amount) >= 0\n",
    );
    let record = project.record(&["-p", "no:xdist"], "gate/run.json");
    assert_eq!(
        record["samples"][PROPERTY]["distinct"],
        json!(2),
        "{record:#}"
    );
}
