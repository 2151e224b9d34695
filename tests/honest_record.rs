//! The record kept honest: each way to make the gate judge a run record that is not the
//! run's (a collection written over it, a hook rewriting it, a process rewriting it after
//! pytest exits, a config or baseline the patch loosened, another commit's record) tried
//! with real pytest, pytest-xdist and git in temporary repositories, the plugin from the
//! wheel; and the supervised run (`freezegate run`) under the shipped workflow's flags.
//!
//! Needs the venv of `.ci/python-env`; without it these tests fail, they never skip.

mod common;

use std::fs;
use std::process::Command;

use common::project::*;
use common::text;
use serde_json::Value;

fn read_record(project: &Project, name: &str) -> Value {
    serde_json::from_str(&fs::read_to_string(project.root.join(name)).unwrap()).unwrap()
}

#[track_caller]
fn assert_verdict(verdict: &(Option<i32>, Value, String), exit: i32, expected: &[&str]) {
    let (code, report, said) = verdict;
    let mut found = codes(report);
    found.dedup();
    assert_eq!(
        (*code, found),
        (Some(exit), expected.iter().map(|c| c.to_string()).collect()),
        "{report:#}\n{said}"
    );
}

fn message_of(report: &Value, code: &str) -> String {
    violation(report, code)["message"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_collection_after_the_run_leaves_its_record_and_a_collection_record_is_refused() {
    let project = Project::new();
    skip_test_one(&project);
    project.commit("an inline skip");
    let out = project.pytest(&["-p", "no:cacheprovider"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let written = fs::read(project.root.join("gate/run.json")).unwrap();

    // `pytest --collect-only` (the plugin on through the ini) and `check --collect`
    // (whose collect_command is pytest --collect-only) write no record over the run's.
    let out = project.pytest(&["--collect-only", "-p", "no:cacheprovider"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert_eq!(
        fs::read(project.root.join("gate/run.json")).unwrap(),
        written
    );
    let command = serde_json::json!([
        python(),
        "-m",
        "pytest",
        "--collect-only",
        "-q",
        "-p",
        "no:cacheprovider"
    ]);
    project.write("freezegate.toml", &format!("collect_command = {command}\n"));
    let (code, report, stderr) = project.gate(&[
        "--collect",
        "--run",
        "gate/run.json",
        "--changed",
        "/dev/null",
        "--select",
        "FZ6",
    ]);
    assert_eq!(code, Some(1), "{report:#}\n{stderr}");
    assert_eq!(
        fs::read(project.root.join("gate/run.json")).unwrap(),
        written
    );
    // The run's own record still shows its skip.
    assert_eq!(codes(&report), ["FZ601"], "{report:#}");

    // A record with every id collected and no outcome (what a collection wrote as a
    // record before) is incomplete: exit 2, naming how many.
    let mut record = read_record(&project, "gate/run.json");
    record["tests"] = serde_json::json!({});
    project.write("gate/run.json", &record.to_string());
    let (code, _, stderr) = project.gate(&["--run", "gate/run.json", "--changed", "/dev/null"]);
    assert_eq!(code, Some(2), "{stderr}");
    common::assert_contains(
        &stderr,
        "gate/run.json: is an incomplete run record: 8 tests it collected have no outcome, and were not deselected",
    );
}

const REWRITE_ON_UNCONFIGURE: &str = r#"import json

import pytest


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    # After the plugin wrote the record: the skipped test "passed".
    with open("gate/run.json") as f:
        record = json.load(f)
    for row in record["tests"].values():
        if row["outcome"] == "skipped" and row.get("source") == "mark":
            row.clear()
            row["outcome"] = "passed"
    with open("gate/run.json", "w") as f:
        json.dump(record, f)
"#;

#[test]
fn a_trylast_conftest_hook_that_rewrites_the_record_is_fz606_at_its_line() {
    let report = judge_patch(
        nothing,
        |p| {
            skip_test_one(p);
            p.write("conftest.py", REWRITE_ON_UNCONFIGURE);
        },
        1,
        &["FZ502", "FZ606"],
        &[],
    );
    let v = violation(&report, "FZ606");
    assert_eq!(
        (v["file"].as_str(), v["line"].as_u64()),
        (Some("conftest.py"), Some(6)),
        "{v}"
    );
    common::assert_contains(
        v["message"].as_str().unwrap(),
        "conftest.py:6 adds an implementation of pytest_unconfigure (pytest_unconfigure), which the base run did not have",
    );
}

/// A test that starts a process which outlives pytest and rewrites the record once
/// pytest is gone: the skipped test "passed".
const REWRITE_AFTER_EXIT: &str = r#"import subprocess
import sys

LATER = '''
import json, os, time
for _ in range(300):  # until the record is written, once pytest has exited
    if os.path.exists("gate/run.json"):
        break
    time.sleep(0.1)
time.sleep(0.5)
with open("gate/run.json") as f:
    record = json.load(f)
for row in record["tests"].values():
    if row["outcome"] == "skipped" and row.get("source") == "mark":
        row.clear()
        row["outcome"] = "passed"
with open("gate/run.json.tmp", "w") as f:
    json.dump(record, f)
os.replace("gate/run.json.tmp", "gate/run.json")
'''


def test_starts_a_rewriter():
    subprocess.Popen([sys.executable, "-c", LATER], start_new_session=True)
"#;

#[test]
fn a_record_rewritten_after_pytest_exits_changes_nothing_under_freezegate_run_check() {
    let project = Project::new();
    project.base_then_patch(|p| {
        skip_test_one(p);
        p.write("tests/test_later.py", REWRITE_AFTER_EXIT);
    });
    let verdict = project.supervised(Some(SHIPPED), &[]);
    assert_verdict(&verdict, 1, &["FZ601"]);
    // The rewrite did happen: a check of the file alone would now pass the skip.
    let one = "tests/test_app.py::TestGroup::test_one";
    for _ in 0..100 {
        if read_record(&project, "gate/run.json")["tests"][one]["outcome"] == "passed" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let record = read_record(&project, "gate/run.json");
    assert_eq!(record["tests"][one]["outcome"], "passed", "{record:#}");
    let mut args = vec!["--run", "gate/run.json"];
    args.extend(SHIPPED);
    let (code, report, stderr) = project.gate(&args);
    assert_eq!(
        (code, codes(&report)),
        (Some(0), vec![]),
        "{report:#}\n{stderr}"
    );
}

/// `run --check --format json`: the report on standard output parses; pytest's own
/// output goes to standard error.
#[test]
fn a_json_report_of_the_supervised_run_is_alone_on_standard_output() {
    let project = Project::new();
    let out = hermetic(&mut std::process::Command::new(BIN))
        .args(["run", "--check", "--today", TODAY, "--format", "json", "--"])
        .arg(python())
        .args(["-m", "pytest", "-p", "no:cacheprovider"])
        .current_dir(&project.root)
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    let report: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("stdout is not the JSON report ({e}):\n{stdout}\n{stderr}"));
    assert_eq!(report["version"], 1, "{report:#}");
    common::assert_contains(&stderr, "passed");
}

#[test]
fn collect_ignore_under_the_shipped_workflow_is_fz604_also_under_xdist() {
    for workers in [&[][..], &["-n", "2"][..]] {
        let project = Project::new();
        project.write("tests/test_more.py", "def test_more():\n    assert True\n");
        project.commit("another test file");
        project.base_then_patch(|p| {
            p.write("tests/conftest.py", "collect_ignore = [\"test_more.py\"]\n")
        });
        let verdict = project.supervised(Some(SHIPPED), workers);
        assert_verdict(&verdict, 1, &["FZ502", "FZ604"]);
    }
}

#[test]
fn a_rule_the_patch_turns_off_is_fz503_unguarded_and_fz501_under_the_trusted_ref() {
    let project = Project::new();
    project.write("freezegate.toml", "[params]\nmin_distinct = 8\n");
    project.commit("config");
    project.base_then_patch(|p| {
        skip_test_one(p);
        p.write(
            "freezegate.toml",
            "[params]\nmin_distinct = 8\n\n[rules]\nFZ601 = \"off\"\n",
        );
    });
    let unguarded = project.supervised(
        Some(&["--base", "main", "--base-run", "gate/base-run.json"]),
        &[],
    );
    assert_verdict(&unguarded, 0, &["FZ503"]);
    common::assert_contains(
        &message_of(&unguarded.1, "FZ503"),
        "the patch changes freezegate.toml (the gate's config) and this check has no --trusted-ref",
    );
    let shipped = project.supervised(Some(SHIPPED), &[]);
    assert_verdict(&shipped, 1, &["FZ501", "FZ601"]);
    common::assert_contains(
        &message_of(&shipped.1, "FZ501"),
        "the patch changes freezegate.toml",
    );

    // Nor can the patch's config turn FZ503 itself off.
    project.write(
        "freezegate.toml",
        "[rules]\nFZ601 = \"off\"\nFZ503 = \"off\"\n",
    );
    let (code, _, stderr) = project.gate(&["--run", "gate/run.json", "--base", "main"]);
    assert_eq!(code, Some(2), "{stderr}");
    common::assert_contains(&stderr, "FZ503 (unguarded-gate) cannot be turned off");
}

#[test]
fn a_skip_the_patch_baselines_itself_is_fz503_unguarded_and_fz501_with_fz601_under_the_trusted_ref()
{
    let project = Project::new();
    project.base_then_patch(|p| {
        skip_test_one(p);
        p.write(
            "gate/skip_baseline.json",
            r#"{"version": 1, "skips": [{"test_id": "tests/test_app.py::TestGroup::test_one", "kind": "skip", "reason": "flaky"}]}"#,
        );
    });
    let unguarded = project.supervised(
        Some(&["--base", "main", "--base-run", "gate/base-run.json"]),
        &[],
    );
    assert_verdict(&unguarded, 0, &["FZ503"]);
    common::assert_contains(
        &message_of(&unguarded.1, "FZ503"),
        "the patch changes gate/skip_baseline.json (the gate's skip baseline)",
    );
    let shipped = project.supervised(Some(SHIPPED), &[]);
    assert_verdict(&shipped, 1, &["FZ501", "FZ601"]);
    common::assert_contains(
        &message_of(&shipped.1, "FZ501"),
        "the patch adds gate/skip_baseline.json",
    );
}

#[test]
fn a_stale_record_is_fz404_alone() {
    let project = Project::new();
    project.base_then_patch(|p| {
        p.write("tests/test_more.py", "def test_more():\n    assert True\n");
    });
    // The patch's job reuses the base's record: nothing of it is judged but FZ404.
    let mut args = vec!["--run", "gate/base-run.json"];
    args.extend(SHIPPED);
    let (code, report, stderr) = project.gate(&args);
    assert_eq!(
        (code, codes(&report)),
        (Some(1), vec!["FZ404".to_string()]),
        "{report:#}\n{stderr}"
    );
    common::assert_contains(
        report["notes"][0]["message"].as_str().unwrap(),
        "gate/base-run.json of another commit or ledger feeds no rule",
    );
}

#[test]
fn an_honest_patch_passes_under_the_shipped_workflow() {
    // The patch freezes a test and strengthens the property that is its deposit.
    let honest = |p: &Project| {
        p.write_ledger(&[FROZEN, "tests/test_app.py::TestGroup::test_one"]);
        edit(
            p,
            "tests/test_props.py",
            "assert price(amount) >= 0",
            "assert price(amount) >= 0\n    assert price(amount) >= amount or amount < 0",
        );
    };
    // By default a freeze the patch adds owes a proof: without one, FZ212.
    let unproven = Project::new();
    unproven.base_then_patch(honest);
    let verdict = unproven.supervised(Some(SHIPPED), &[]);
    assert_verdict(&verdict, 1, &["FZ212"]);

    // Here the proof runs in another job (tests/prove.rs judges proofs): the base's
    // trusted config says so.
    let project = Project::new();
    proofs_elsewhere(&project);
    project.commit("proofs are checked in another job");
    project.base_then_patch(honest);
    for workers in [&[][..], &["-n", "2"][..]] {
        let verdict = project.supervised(Some(SHIPPED), workers);
        assert_verdict(&verdict, 0, &[]);
    }
}

#[test]
fn the_shipped_workflow_and_action_give_the_gate_these_flags() {
    let root = env!("CARGO_MANIFEST_DIR");
    let workflow = fs::read_to_string(format!("{root}/examples/ci/freezegate.yml")).unwrap();
    for said in [
        "pytest: python -m pytest",
        "base-run: gate/base-run.json",
        "freezegate-run-${{ github.event.pull_request.base.sha }}",
    ] {
        common::assert_contains(&workflow, said);
    }
    let action = fs::read_to_string(format!("{root}/action.yml")).unwrap();
    for said in [
        "default: ${{ github.event.pull_request.base.sha || github.event.merge_group.base_sha }}",
        r#""$FG_BIN" run --check "${args[@]}" -- "${command[@]}""#,
        "args+=(--base-run \"$line\")",
        "one --trusted-ref \"$FG_TRUSTED_REF\"",
    ] {
        common::assert_contains(&action, said);
    }
}

#[test]
fn a_pytest_killed_mid_run_keeps_a_partial_record_and_is_never_judged() {
    let project = Project::new();
    project.write(
        "tests/test_zz_dies.py",
        "import os, signal\n\n\ndef test_dies():\n    os.kill(os.getpid(), signal.SIGKILL)\n",
    );
    project.commit("a test that kills pytest");
    let (code, _, said) =
        project.supervised(Some(&["--changed", "/dev/null"]), &["-p", "no:randomly"]);
    assert_eq!(code, Some(2), "{said}");
    common::assert_contains(&said, "no complete run record: pytest was killed by signal 9 before the session finished; the partial record");
    let record = read_record(&project, "gate/run.json");
    assert_eq!(record["complete"], false, "{record:#}");
    assert!(
        record["tests"]["tests/test_app.py::test_cases[1]"].is_object(),
        "the tests that finished are kept: {record:#}"
    );
    let (code, _, stderr) = project.gate(&["--run", "gate/run.json", "--changed", "/dev/null"]);
    assert_eq!(code, Some(2));
    common::assert_contains(
        &stderr,
        "is an incomplete run record: pytest was killed by signal 9",
    );
}

#[test]
fn a_message_with_another_token_is_exit_2_and_no_record_is_taken() {
    let project = Project::new();
    // A conftest, imported before the plugin starts, writes a hello of its own.
    project.write(
        "conftest.py",
        "import os\n\nos.write(int(os.environ['FREEZEGATE_RUN_FD']), b'hello {\"token\": \"forged\", \"record\": \"gate/run.json\"}\\n')\n",
    );
    project.commit("a forging conftest");
    let (code, _, said) = project.supervised(Some(&["--changed", "/dev/null"]), &[]);
    assert_eq!(code, Some(2), "{said}");
    common::assert_contains(&said, "another token than this run handed it");
    assert!(
        !project.root.join("gate/run.json").exists(),
        "no record was written"
    );
}

#[test]
fn pytest_that_does_not_run_as_asked_is_never_exit_0() {
    let project = Project::new();
    // Without the plugin: no record comes.
    let (code, _, said) =
        project.supervised(None, &["-p", "no:freezegate", "-o", "freezegate=false"]);
    assert_eq!(code, Some(2), "{said}");
    common::assert_contains(
        &said,
        "no run record came from it: the freezegate plugin did not start",
    );
    // A collection error: the record is incomplete, pytest exits 2.
    project.write("tests/test_broken.py", "import not_a_module_anywhere\n");
    let (code, _, said) = project.supervised(Some(&["--changed", "/dev/null"]), &[]);
    assert_eq!(code, Some(2), "{said}");
    common::assert_contains(
        &said,
        "pytest exited with status 2 (interrupted): the run did not happen as asked",
    );
    fs::remove_file(project.root.join("tests/test_broken.py")).unwrap();
    // `--collect-only` under supervision: a collection is not a run.
    let (code, _, said) =
        project.supervised(Some(&["--changed", "/dev/null"]), &["--collect-only"]);
    assert_eq!(code, Some(2), "{said}");
    common::assert_contains(
        &said,
        "pytest ran with --collect-only: a collection is not a test run",
    );
    // Failing tests: the gate's verdict, and never better than 1.
    project.write(
        "tests/test_fails.py",
        "def test_fails():\n    assert False\n",
    );
    let (code, _, said) = project.supervised(None, &[]);
    assert_eq!(code, Some(1), "{said}");
}

#[test]
fn a_hook_of_a_plugin_outside_the_repository_is_in_the_census_by_its_name() {
    let project = Project::new();
    let outside = tempfile::tempdir().unwrap();
    fs::write(
        outside.path().join("rewrite_outcomes.py"),
        "def pytest_runtest_makereport(item, call):\n    return None\n",
    )
    .unwrap();
    let out = hermetic(&mut Command::new(python()))
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "rewrite_outcomes",
        ])
        .env("PYTHONPATH", outside.path())
        .current_dir(&project.root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let record = read_record(&project, "gate/run.json");
    let hooks = record["hooks"].as_array().unwrap();
    assert!(
        hooks.iter().any(|h| h["plugin"] == "rewrite_outcomes"
            && h["hook"] == "pytest_runtest_makereport"
            && h["file"].is_null()),
        "{hooks:#?}"
    );
    // pytest's, xdist's, Hypothesis's and freezegate's own hooks are not listed.
    assert!(
        hooks.iter().all(|h| h["plugin"] == "rewrite_outcomes"),
        "{hooks:#?}"
    );
}

/// A record plain pytest wrote is judged with one note that a file can be rewritten
/// after pytest exits, naming the supervised command; the supervised run has none.
#[test]
fn a_record_from_plain_pytest_is_noted_as_a_file_the_supervised_run_is_not() {
    let project = Project::new();
    project.record(&[], "gate/run.json");
    let out = hermetic(&mut Command::new(BIN))
        .args([
            "check",
            "--run",
            "gate/run.json",
            "--changed",
            "/dev/null",
            "--today",
            TODAY,
        ])
        .current_dir(&project.root)
        .output()
        .unwrap();
    let said = text(&out.stdout);
    let note = "note: FZ606: gate/run.json came from a file, not over the pipe of a supervised run: a hook or a process a test started could have rewritten it after pytest exited";
    assert_eq!(said.matches(note).count(), 1, "{said}");
    common::assert_contains(
        &said,
        "run the tests as `freezegate run --check [CHECK ARGS] -- python -m pytest`",
    );
    let (_, _, said) = project.supervised(Some(&["--changed", "/dev/null"]), &[]);
    assert!(!said.contains("came from a file"), "{said}");
}
