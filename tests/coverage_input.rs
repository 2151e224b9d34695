//! `--coverage`: bad reports stop the gate (exit 2, naming the file and the place),
//! shards merge, and the `coverage` binding is `()` without the flag.

mod common;

use common::{World, FROZEN, OTHER, PROPERTY};
use serde_json::{json, Value};

fn report(contexts: Value) -> String {
    json!({ "meta": { "show_contexts": true },
            "files": { "app/m.py": { "executed_lines": [], "contexts": contexts } } })
    .to_string()
}

fn run_with(files: &[(&str, String)]) -> std::process::Output {
    let mut world = World::passing();
    for (name, text) in files {
        world.files.push((name.to_string(), text.clone()));
        world
            .extra_args
            .extend(["--coverage".to_string(), name.to_string()]);
    }
    let dir = tempfile::tempdir().unwrap();
    world.run_in(dir.path(), "json")
}

#[track_caller]
fn assert_input_error(out: &std::process::Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty(), "no report on an input error");
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "stderr lacks `{needle}`:\n{stderr}"
        );
    }
}

#[test]
fn malformed_json_names_the_file_line_and_column() {
    let out = run_with(&[(
        "gate/coverage.json",
        "{\"files\": {\n  \"app/m.py\": {\"contexts\": {\"1\": [\"t|run\",]}}}}".into(),
    )]);
    assert_input_error(&out, &["gate/coverage.json:2:", "show-contexts"]);
}

#[test]
fn a_wrong_value_names_its_place() {
    let text = "{\"files\": {\n\"app/m.py\": {\n\"contexts\": {\"seven\": [\"t|run\"]}}}}";
    let out = run_with(&[("gate/coverage.json", text.into())]);
    assert_input_error(
        &out,
        &["gate/coverage.json:3:", "`seven` is not a line number"],
    );
}

#[test]
fn a_report_without_contexts_says_how_to_make_one() {
    let text = json!({ "files": { "app/m.py": { "executed_lines": [1, 2] } } }).to_string();
    let out = run_with(&[("gate/coverage.json", text)]);
    assert_input_error(
        &out,
        &[
            "gate/coverage.json",
            "--show-contexts",
            "--cov-context=test",
        ],
    );
    let only_empty = report(json!({ "1": [""], "2": [""] }));
    let out = run_with(&[("gate/coverage.json", only_empty)]);
    assert_input_error(&out, &["gate/coverage.json", "no test contexts"]);
}

#[test]
fn a_missing_report_is_exit_2() {
    let mut world = World::passing();
    world
        .extra_args
        .extend(["--coverage".into(), "gate/nope.json".into()]);
    let dir = tempfile::tempdir().unwrap();
    let out = world.run_in(dir.path(), "json");
    assert_input_error(&out, &["gate/nope.json", "not found"]);
}

#[test]
fn shards_merge_into_one_table() {
    let frozen = format!("{FROZEN}|run");
    let setup = format!("{FROZEN}|setup");
    let property = format!("{PROPERTY}|run");
    let other = format!("{OTHER}|run");
    // The base run: the frozen test ran lines 2-5 (5 also under another test).
    let base = report(json!({
        "1": [""], "2": [frozen], "3": [setup], "4": [frozen], "5": [frozen, other] }));
    // The patch's run: the property ran line 2 only.
    let patch = report(json!({ "1": [""], "2": [property], "5": [other] }));
    let out = run_with(&[("gate/base.json", base.clone()), ("gate/patch.json", patch)]);
    assert_eq!(out.status.code(), Some(0));
    let verdict: Value = serde_json::from_slice(&out.stdout).unwrap();
    let violations = verdict["violations"].as_array().unwrap();
    assert_eq!(violations.len(), 1, "{verdict:#}");
    assert_eq!(violations[0]["code"], "FZ207");
    assert_eq!(
        violations[0]["message"],
        format!("at stake: 3 lines only {FROZEN} covered; the properties cover 1 of them (33%, below 50.0%); not covered: app/m.py:3, app/m.py:4")
    );

    // Only the base run: the property is in no report, and the message says why it
    // covers nothing rather than a bare 0%.
    let out = run_with(&[("gate/base.json", base)]);
    let verdict: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        verdict["violations"][0]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("but no coverage context names {PROPERTY}: the properties did not run in the covered runs")),
        "{verdict:#}"
    );
}

#[test]
fn without_the_flag_the_binding_is_unit_and_no_fz001() {
    let mut world = World::passing();
    world.config = "policies = [\"builtin\", \"org\"]\n".into();
    world.files.push((
        "org/probe.rhai".into(),
        "const RULES = #{ ORG001: #{ name: \"probe\", severity: \"warn\", summary: \"s\", help: \"h\" } };\nif coverage == () { report(\"ORG001\", \"no coverage\"); }\n".into(),
    ));
    let verdict = world.run();
    assert_eq!(verdict.codes(), ["ORG001"]);
}
