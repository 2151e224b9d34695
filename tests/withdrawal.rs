//! No withdrawal in any form. A patch that turns a failing test green without fixing it,
//! judged as the shipped workflow judges a pull request — `freezegate run --check` with
//! the base, its run record and the trusted ref — ends with exit 1:
//! - by making it check less (`assert True`, the assert deleted, an `except` that
//!   swallows it, `pytest.raises` widened, a later `def` that shadows the test): FZ610 at
//!   the line; a reformatted test, or a reviewed `[[params.allow_weakened]]` entry in the
//!   trusted config, passes;
//! - by taking it out of the suite (deleted, renamed `_test_…`, its module disabled with
//!   `__test__ = False`): FZ603, an error; a test retired in the ledger with a
//!   compensating property, or renamed to another collected name, passes.
//!
//! Needs the venv of `.ci/python-env`; without it these tests fail, they never skip.

mod common;

use common::project::*;
use serde_json::Value;
use std::fs;

/// The patch breaks `price` for one case, then applies `weaken` to the test file: the
/// verdict's exit status, report and output.
fn judged(project: &Project, weaken: impl Fn(&Project)) -> (Option<i32>, Value, String) {
    project.base_then_patch(|p| {
        edit(
            p,
            "tests/test_app.py",
            "def price(amount):\n    return max(0, amount)",
            "def price(amount):\n    return 0 if amount == 3 else max(0, amount)",
        );
        weaken(p);
    });
    project.supervised(Some(SHIPPED), &[])
}

/// The FZ610 diagnostics: (line, message).
fn weakened(report: &Value) -> Vec<(u64, String)> {
    report["violations"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .filter(|v| v["code"] == "FZ610")
        .map(|v| {
            assert_eq!(v["file"], "tests/test_app.py", "{v:#}");
            (
                v["line"].as_u64().unwrap(),
                v["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The report's touched tests, each `ID: cause` or `ID: cause -> TO`.
fn touched(report: &Value) -> Vec<String> {
    let rows = report["touched"]
        .as_array()
        .expect("the report lists touched tests");
    rows.iter()
        .map(|t| {
            let (id, cause) = (t["test_id"].as_str().unwrap(), t["cause"].as_str().unwrap());
            match t["to"].as_str() {
                Some(to) => format!("{id}: {cause} -> {to}"),
                None => format!("{id}: {cause}"),
            }
        })
        .collect()
}

/// `test_cases`, whose three cases all went one way: one entry, `ID: cause`, by its
/// function's id (as an edited test is listed), not one per case.
fn whole_function(cause: &str) -> Vec<String> {
    vec![format!("tests/test_app.py::test_cases: {cause}")]
}

/// `test_cases`'s assert, at line 16 of the test file (its decorator at 14).
const CASES_ASSERT: &str = "    assert price(amount) == amount\n";

#[track_caller]
fn refused(verdict: &(Option<i32>, Value, String), line: u64, says: &str) {
    let (exit, report, said) = verdict;
    assert_eq!(*exit, Some(1), "{report:#}\n{said}");
    let found = weakened(report);
    assert!(
        found
            .iter()
            .any(|(at, message)| *at == line && message.contains(says)),
        "no FZ610 at line {line} saying {says:?}: {found:?}\n{said}"
    );
    common::assert_contains(said, "FZ610");
}

#[test]
fn assert_true_in_place_of_the_failing_assert_is_refused_at_its_line() {
    let verdict = judged(&Project::new(), |p| {
        edit(p, "tests/test_app.py", CASES_ASSERT, "    assert True\n");
    });
    refused(&verdict, 16, "`assert True` always holds (constant-assert)");
    assert_eq!(
        touched(&verdict.1),
        ["tests/test_app.py::test_cases: edited"]
    );
    let verdict = judged(&Project::new(), |p| {
        edit(
            p,
            "tests/test_app.py",
            CASES_ASSERT,
            "    assert amount == amount\n",
        );
    });
    refused(&verdict, 16, "`assert amount == amount` always holds");
}

#[test]
fn a_deleted_assert_is_refused_at_the_test_naming_the_check() {
    let verdict = judged(&Project::new(), |p| {
        edit(p, "tests/test_app.py", CASES_ASSERT, "    price(amount)\n");
    });
    refused(
        &verdict,
        14,
        "test_cases makes 1 check at base, 0 in this patch: `assert price(amount) == amount` (line 16 at base) is gone (check-removed)",
    );
}

#[test]
fn an_except_that_swallows_the_assertion_is_refused_at_the_except() {
    let verdict = judged(&Project::new(), |p| {
        edit(
            p,
            "tests/test_app.py",
            CASES_ASSERT,
            "    try:\n        assert price(amount) == amount\n    except AssertionError:\n        pass\n",
        );
    });
    refused(&verdict, 18, "swallowed-assert");
}

#[test]
fn a_later_def_that_shadows_the_test_is_refused_at_it() {
    let verdict = judged(&Project::new(), |p| {
        let app = std::fs::read_to_string(p.root.join("tests/test_app.py")).unwrap();
        p.write(
            "tests/test_app.py",
            &format!("{app}\n\ndef test_cases():\n    assert price(1) == 1\n"),
        );
    });
    refused(
        &verdict,
        33,
        "test_cases (line 14) is defined again at line 33",
    );
}

#[test]
fn a_reformatted_test_and_a_reviewed_allow_entry_pass() {
    // No break: the patch only reformats the test and adds a comment.
    let project = Project::new();
    project.base_then_patch(|p| {
        edit(
            p,
            "tests/test_app.py",
            CASES_ASSERT,
            "    # the price of a whole amount is the amount\n    assert (\n        price(amount)\n        == amount\n    )\n",
        );
    });
    let (exit, report, said) = project.supervised(Some(SHIPPED), &[]);
    assert_eq!((exit, weakened(&report)), (Some(0), vec![]), "{said}");
    assert_eq!(
        touched(&report),
        Vec::<String>::new(),
        "not an edit: {report:#}"
    );

    // A reviewed refactor: the trusted config (the base's) allows the one test.
    let project = Project::new();
    project.write(
        "freezegate.toml",
        "[[params.allow_weakened]]\nfile = \"tests/test_app.py\"\ntest = \"test_cases\"\nreason = \"checked by test_props now\"\napprover = \"dana\"\n",
    );
    project.commit("allow the refactor");
    let (exit, report, said) = project_without_break(&project, |p| {
        edit(p, "tests/test_app.py", CASES_ASSERT, "    price(amount)\n");
    });
    assert_eq!(
        (exit, weakened(&report)),
        (Some(0), vec![]),
        "{report:#}\n{said}"
    );
    // The same entry without an approver allows nothing.
    let project = Project::new();
    project.write(
        "freezegate.toml",
        "[[params.allow_weakened]]\nfile = \"tests/test_app.py\"\ntest = \"test_cases\"\nreason = \"checked by test_props now\"\n",
    );
    project.commit("allow the refactor, unapproved");
    let (exit, report, said) = project_without_break(&project, |p| {
        edit(p, "tests/test_app.py", CASES_ASSERT, "    price(amount)\n");
    });
    assert_eq!(exit, Some(1), "{report:#}\n{said}");
    assert_eq!(weakened(&report).len(), 1, "{report:#}");
}

fn project_without_break(
    project: &Project,
    patch: impl Fn(&Project),
) -> (Option<i32>, Value, String) {
    project.base_then_patch(patch);
    project.supervised(Some(SHIPPED), &[])
}

#[test]
fn a_changed_test_file_that_does_not_parse_is_named_and_the_other_rules_run() {
    let project = Project::new();
    project.base_then_patch(|p| {
        let app = std::fs::read_to_string(p.root.join("tests/test_app.py")).unwrap();
        p.write("tests/test_app.py", &format!("{app}\ndef broken(:\n"));
        edit(
            p,
            "tests/test_app.py",
            "def test_rounding",
            "@pytest.mark.skip\ndef test_rounding",
        );
    });
    // pytest cannot import the file either, so the gate is asked alone.
    let out = hermetic(&mut std::process::Command::new(BIN))
        .args(["check", "--today", TODAY, "--base", "main"])
        .current_dir(&project.root)
        .output()
        .unwrap();
    let said = format!("{}{}", common::text(&out.stdout), common::text(&out.stderr));
    assert!(matches!(out.status.code(), Some(0 | 1)), "{said}");
    common::assert_contains(
        &said,
        "tests/test_app.py was not compared with its base: it does not parse in the patch",
    );
    assert!(
        !said.contains("FZ610 test-weakened") && !said.contains("× FZ610"),
        "{said}"
    );
}

/// The verdict's FZ603 diagnostics: (test id, message).
fn removed(report: &Value) -> Vec<(String, String)> {
    report["violations"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .filter(|v| v["code"] == "FZ603")
        .map(|v| {
            assert_eq!(v["severity"], "error", "{v:#}");
            (
                v["test_id"].as_str().unwrap_or("").to_string(),
                v["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// `test_cases` (decorator and all), which the broken price fails for one case.
const CASES: &str = "@pytest.mark.parametrize(\"amount\", [1, 2, 3])\ndef test_cases(amount):\n    assert price(amount) == amount\n";

#[test]
fn a_deleted_failing_test_is_refused_naming_whole_function() {
    let verdict = judged(&Project::new(), |p| edit(p, "tests/test_app.py", CASES, ""));
    let (exit, report, said) = &verdict;
    assert_eq!(*exit, Some(1), "{report:#}\n{said}");
    let found = removed(report);
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(found[2].0, "tests/test_app.py::test_cases[3]");
    assert_eq!(touched(report), whole_function("removed"));
    common::assert_contains(
        &found[2].1,
        "tests/test_app.py::test_cases[3] was removed (the suite shrank by 3 tests)",
    );
}

#[test]
fn a_test_renamed_out_of_collection_is_refused_at_its_def() {
    let verdict = judged(&Project::new(), |p| {
        edit(
            p,
            "tests/test_app.py",
            "def test_cases(",
            "def _test_cases(",
        )
    });
    let (exit, report, said) = &verdict;
    assert_eq!(*exit, Some(1), "{report:#}\n{said}");
    let v = violation(report, "FZ603");
    assert_eq!(
        (v["file"].as_str(), v["line"].as_u64()),
        (Some("tests/test_app.py"), Some(15)),
        "{v:#}"
    );
    common::assert_contains(
        v["message"].as_str().unwrap(),
        "was renamed out of collection: def _test_cases",
    );
    let to = " -> tests/test_app.py::_test_cases";
    let cases: Vec<String> = whole_function("renamed-out")
        .iter()
        .map(|c| format!("{c}{to}"))
        .collect();
    assert_eq!(touched(report), cases);
}

#[test]
fn a_module_disabled_with_dunder_test_is_refused_as_disabled_not_deleted() {
    let verdict = judged(&Project::new(), |p| {
        edit(
            p,
            "tests/test_app.py",
            "import pytest\n",
            "import pytest\n\n__test__ = False\n",
        )
    });
    let (exit, report, said) = &verdict;
    assert_eq!(*exit, Some(1), "{report:#}\n{said}");
    let messages: Vec<String> = removed(report).into_iter().map(|(_, m)| m).collect();
    assert!(
        messages.iter().any(|m| m.contains("tests/test_app.py::test_cases[3] is no longer collected, though tests/test_app.py still defines it at line")
            && m.contains("its module or class was disabled")),
        "{messages:#?}"
    );
    // The whole module: every test of it, each disabled.
    let mut module = whole_function("disabled");
    for test in [
        "Legacy::test_unit",
        "TestGroup::test_one",
        "TestGroup::test_slow",
        "test_rounding",
    ] {
        module.push(format!("tests/test_app.py::{test}: disabled"));
    }
    module.sort();
    assert_eq!(touched(report), module);
}

#[test]
fn a_test_retired_in_the_ledger_with_a_compensating_property_passes() {
    // The retirement's proof is tests/prove.rs's (FZ603 reads it there).
    let project = Project::new();
    proofs_elsewhere(&project);
    project.commit("proofs are checked in another job");
    let (exit, report, said) = judged(&project, |p| {
        edit(p, "tests/test_app.py", CASES, "");
        let out = hermetic(&mut std::process::Command::new(BIN))
            .args([
                "freeze",
                "add",
                "tests/test_app.py::test_cases",
                "--retired",
                "--owner",
                "finley",
                "--today",
                TODAY,
            ])
            .args([
                "--reason",
                "BILL-2: amounts are covered by the property now",
            ])
            .args([
                "--invariant",
                "a price is never negative",
                "--property",
                PROPERTY,
                "--reused",
            ])
            .current_dir(&p.root)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}{}",
            common::text(&out.stdout),
            common::text(&out.stderr)
        );
        assert!(
            common::text(&out.stdout)
                .starts_with("retired tests/test_app.py::test_cases in gate/freeze_ledger.json"),
            "{}",
            common::text(&out.stdout)
        );
    });
    assert_eq!(
        (exit, removed(&report)),
        (Some(0), vec![]),
        "{report:#}\n{said}"
    );
    assert_eq!(touched(&report), whole_function("retired"));
    let ledger: Value = serde_json::from_str(
        &std::fs::read_to_string(project.root.join("gate/freeze_ledger.json")).unwrap(),
    )
    .unwrap();
    let entry = &ledger["freezes"][1];
    assert_eq!(
        entry["test_id"], "tests/test_app.py::test_cases",
        "{ledger:#}"
    );
    assert_eq!(entry["retired"], true, "{ledger:#}");
    assert_eq!(
        entry.get("expires"),
        None,
        "a retired entry has no expiry: {ledger:#}"
    );

    // The same entry while the test is still in the suite is a freeze without an expiry.
    let project = Project::new();
    let (exit, report, said) = judged(&project, |p| {
        edit(
            p,
            "tests/test_app.py",
            CASES,
            CASES
                .replace("amount == amount", "amount == amount  # kept")
                .as_str(),
        );
        let out = hermetic(&mut std::process::Command::new(BIN))
            .args([
                "freeze",
                "add",
                "tests/test_app.py::test_cases",
                "--retired",
                "--owner",
                "finley",
                "--today",
                TODAY,
            ])
            .args([
                "--reason",
                "r",
                "--invariant",
                "i",
                "--property",
                PROPERTY,
                "--reused",
            ])
            .current_dir(&p.root)
            .output()
            .unwrap();
        // `freeze add` checks against a collection, where the test is still there.
        assert_eq!(out.status.code(), Some(1), "{}", common::text(&out.stderr));
        common::assert_contains(
            &common::text(&out.stdout),
            "retires tests/test_app.py::test_cases, which is still collected",
        );
        // Written by hand, the gate refuses it all the same.
        let path = p.root.join("gate/freeze_ledger.json");
        let mut ledger: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        ledger["freezes"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({
            "test_id": "tests/test_app.py::test_cases", "retired": true, "owner": "finley",
            "reason": "r", "opened": TODAY, "invariant": "i",
            "compensating_property": PROPERTY, "reused_property": true}));
        fs::write(&path, serde_json::to_string_pretty(&ledger).unwrap()).unwrap();
    });
    assert_eq!(exit, Some(1), "{report:#}\n{said}");
    common::assert_contains(
        violation(&report, "FZ101")["message"].as_str().unwrap(),
        "retires tests/test_app.py::test_cases, which is still collected",
    );
}

#[test]
fn a_test_renamed_to_another_collected_name_is_the_same_test() {
    let project = Project::new();
    project.base_then_patch(|p| {
        edit(
            p,
            "tests/test_app.py",
            "def test_cases(",
            "def test_whole_amounts(",
        );
    });
    let (exit, report, said) = project.supervised(Some(SHIPPED), &[]);
    assert_eq!(
        (exit, removed(&report), weakened(&report)),
        (Some(0), vec![], vec![]),
        "{report:#}\n{said}"
    );
    let to = " -> tests/test_app.py::test_whole_amounts";
    let cases: Vec<String> = whole_function("renamed")
        .iter()
        .map(|c| format!("{c}{to}"))
        .collect();
    assert_eq!(touched(&report), cases);
    // Renamed and weakened: judged against its base version.
    let project = Project::new();
    project.base_then_patch(|p| {
        edit(
            p,
            "tests/test_app.py",
            "def test_cases(",
            "def test_whole_amounts(",
        );
        edit(
            p,
            "tests/test_app.py",
            CASES_ASSERT.replace("def test_cases", "").as_str(),
            "    assert True\n",
        );
    });
    let (exit, report, said) = project.supervised(Some(SHIPPED), &[]);
    assert_eq!(
        (exit, removed(&report)),
        (Some(1), vec![]),
        "{report:#}\n{said}"
    );
    assert_eq!(weakened(&report).len(), 1, "{report:#}");
    let edited = "tests/test_app.py::test_cases: edited -> tests/test_app.py::test_whole_amounts";
    assert!(touched(&report).contains(&edited.to_string()), "{report:#}");
}
