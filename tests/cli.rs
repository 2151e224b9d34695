//! The binary end to end over file inputs: formats, config, org rules, selection, bad
//! input, and the human output (snapshot-tested, no colour).

mod common;

use common::{freezegate, write, World, FROZEN, PROPERTY};
use serde_json::json;

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// [`World::failing`], and too few samples (FZ301).
fn failing_world() -> World {
    let mut world = World::failing();
    world.samples = Some(json!({"properties": {PROPERTY: {"distinct": 3}}}));
    world
}

#[test]
fn json_yaml_and_toml_ledgers_give_the_same_verdict() {
    let mut results = Vec::new();
    for name in [
        "gate/freeze_ledger.json",
        "gate/freeze_ledger.yaml",
        "gate/freeze_ledger.toml",
    ] {
        let mut world = failing_world();
        world.ledger_name = name.into();
        let verdict = world.run();
        assert_eq!(verdict.code, 1, "{name}: {}", verdict.stderr);
        let mut seen: Vec<(String, String, String)> = verdict
            .violations()
            .iter()
            .map(|v| {
                (
                    v["code"].to_string(),
                    v["test_id"].to_string(),
                    v["field"].to_string(),
                )
            })
            .collect();
        seen.sort();
        results.push(seen);
    }
    assert_eq!(results[0].len(), 4, "{:#?}", results[0]);
    assert_eq!(results[0], results[1]);
    assert_eq!(results[0], results[2]);
}

#[test]
fn yaml_and_toml_locations_point_at_the_value() {
    for (name, line, column) in [
        ("gate/freeze_ledger.yaml", 7, 14),
        ("gate/freeze_ledger.toml", 8, 11),
    ] {
        let mut world = World::passing();
        world.ledger_name = name.into();
        world.today = "2026-12-05".into();
        let verdict = world.run();
        let v = verdict.one("FZ103");
        assert_eq!(
            (v["line"].clone(), v["column"].clone()),
            (json!(line), json!(column)),
            "{name}: {v}"
        );
    }
}

#[test]
fn config_thresholds_change_the_outcome_without_rebuilding() {
    let mut world = World::passing();
    world.samples = Some(json!({"properties": {PROPERTY: {"distinct": 5}}}));
    assert_eq!(world.run().codes(), ["FZ301"]);
    world.config = "[params]\nmin_distinct = 5\n".into();
    assert!(world.run().codes().is_empty());

    let mut world = World::passing();
    world
        .entry_mut()
        .insert("expires".into(), json!("2026-12-10"));
    assert_eq!(world.run().codes(), ["FZ104"]);
    world.config = "[params]\nmax_window_days = 20\n".into();
    assert!(world.run().codes().is_empty());
}

#[test]
fn rule_severities_and_selection_from_config_and_flags() {
    let mut world = failing_world();
    world.config = "[rules]\nFZ301 = \"warn\"\nFZ401 = \"off\"\n".into();
    let verdict = world.run();
    assert_eq!(verdict.codes(), ["FZ101", "FZ104", "FZ301"]);
    assert_eq!(verdict.one("FZ301")["severity"], "warning");
    // Every enabled rule, the core's FZ001, FZ501 and FZ503 included (the `rules` array's length).
    assert_eq!(verdict.json["summary"]["rules"], 44);
    assert_eq!(
        verdict.json["summary"]["rules"].as_u64().unwrap() as usize,
        verdict.json["rules"].as_array().unwrap().len()
    );

    let mut world = failing_world();
    world.extra_args = vec![
        "--select".into(),
        "FZ1".into(),
        "--ignore".into(),
        "FZ104".into(),
    ];
    let verdict = world.run();
    assert_eq!(verdict.codes(), ["FZ101"]);
    assert_eq!(verdict.json["summary"]["rules"], 10);

    // A prefix that matches nothing is a usage error, not a silently empty gate.
    let mut world = World::passing();
    world.extra_args = vec!["--select".into(), "ZZ9".into()];
    let out = world.run_in(tempfile::tempdir().unwrap().path(), "json");
    assert_eq!(out.status.code(), Some(2));
    // Filtering every rule out is exit 2: a gate that checked nothing never passes.
    let mut world = World::passing();
    world.extra_args = vec!["--select".into(), "FZ001".into()];
    let out = world.run_in(tempfile::tempdir().unwrap().path(), "json");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no rule is enabled"));
}

#[test]
fn fz001_cannot_be_turned_off() {
    let mut world = World::passing();
    world.config = "[rules]\nFZ001 = \"off\"\n".into();
    let out = world.run_in(tempfile::tempdir().unwrap().path(), "json");
    assert_eq!(out.status.code(), Some(2));
    common::assert_contains(&stderr(&out), "FZ001 (input-missing) cannot be turned off");
}

const ORG_RULE: &str = r#"
import "helpers" as h;

const RULES = #{
    ORG101: #{ name: "reason-cites-ticket", severity: "error",
               summary: "A freeze reason must cite a ticket.",
               help: "Mention the ticket, e.g. BILL-412, in the reason." },
};

fn check_entry(e) {
    // Bindings are visible inside functions too.
    if !h::cites_ticket(e.reason, params.ticket_prefix ?? "BILL-") {
        report("ORG101", e, "reason", `reason of ${e.test_id} cites no ticket; today is ${today}`);
    }
}

for e in ledger.freezes {
    check_entry(e);
}
"#;

#[test]
fn an_org_rule_directory_works_without_rebuilding() {
    let mut world = World::passing();
    world.config =
        "policies = [\"builtin\", \"org-policies\"]\n[params]\nticket_prefix = \"BILL-\"\n".into();
    world
        .files
        .push(("org-policies/tickets.rhai".into(), ORG_RULE.into()));
    world.files.push((
        "org-policies/helpers.rhai".into(),
        "fn cites_ticket(text, prefix) { text.contains(prefix) }\n".into(),
    ));
    let verdict = world.run();
    let v = verdict.one("ORG101");
    assert_eq!(v["policy"], "org-policies/tickets.rhai");
    assert_eq!(v["field"], "reason");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("today is 2026-11-30"),
        "{v}"
    );
    assert_eq!(verdict.json["summary"]["rules"], 46);

    world.entry_mut().insert(
        "reason".into(),
        json!("BILL-412: rounding moves to half-even"),
    );
    assert!(world.run().codes().is_empty());

    let dir = tempfile::tempdir().unwrap();
    world.run_in(dir.path(), "json");
    let out = freezegate(dir.path())
        .args(["explain", "ORG101"])
        .output()
        .unwrap();
    assert!(stdout(&out).contains("reason-cites-ticket"));
    // A rule without a category takes its script's file stem, which --select takes.
    assert!(
        stdout(&out).contains("Category: tickets\n"),
        "{}",
        stdout(&out)
    );
    world
        .entry_mut()
        .insert("reason".into(), json!("no ticket"));
    world.extra_args = vec!["--select".into(), "tickets".into()];
    let verdict = world.run();
    assert_eq!(verdict.codes(), ["ORG101"]);
    assert_eq!(
        verdict.json["summary"]["rules"], 4,
        "ORG101 and the core's three"
    );
}

#[test]
fn select_and_ignore_take_categories() {
    let mut world = failing_world();
    world.extra_args = vec!["--select".into(), "shape,samples".into()];
    assert_eq!(world.run().codes(), ["FZ101", "FZ104", "FZ301"]);
    world.extra_args = vec!["--ignore".into(), "shape".into()];
    assert_eq!(world.run().codes(), ["FZ301", "FZ401"]);
}

#[test]
fn a_category_is_one_kebab_case_word() {
    let mut world = World::passing();
    world.config = "policies = [\"builtin\", \"org\"]\n".into();
    world.files.push((
        "org/rule.rhai".into(),
        "const RULES = #{ ORG1: #{ name: \"n\", severity: \"error\", summary: \"s\", help: \"h\", category: \"Not A Word\" } };\n".into(),
    ));
    let out = world.run_in(tempfile::tempdir().unwrap().path(), "json");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    common::assert_contains(
        &stderr(&out),
        "ORG1: category `Not A Word` is not a lowercase-kebab-case word",
    );
}

#[test]
fn two_scripts_declaring_one_code_is_a_load_error() {
    let mut world = World::passing();
    world.config = "policies = [\"builtin\", \"org\"]\n".into();
    world.files.push((
        "org/dup.rhai".into(),
        "const RULES = #{ FZ103: #{ name: \"x\", severity: \"error\", summary: \"s\", help: \"h\" } };\n".into(),
    ));
    let out = world.run_in(tempfile::tempdir().unwrap().path(), "json");
    assert_eq!(out.status.code(), Some(2));
    common::assert_contains(
        &stderr(&out),
        "declares rule FZ103 which builtin:shape.rhai already declares",
    );
}

#[test]
fn script_errors_are_exit_2_naming_the_script_and_line() {
    let cases = [
        ("let x = ;\n", "org/broken.rhai:2"),
        ("report(\"ORG1\", 1 / 0);\n", "org/broken.rhai:2"),
        ("loop { }\n", "operation limit"),
        ("fn f(n) { f(n + 1) }\nf(0);\n", "call-depth limit"),
        ("report(\"ORG2\", \"undeclared\");\n", "declare only ORG1"),
        ("eval(\"1\");\n", "org/broken.rhai"),
        ("import \"../escape\" as e;\n", "plain relative paths"),
        ("let s = \"x\"; loop { s += s; }\n", "size limit"),
    ];
    for (body, expected) in cases {
        let mut world = World::passing();
        world.config =
            "policies = [\"builtin\", \"org\"]\n[limits]\noperations = 100000\ncall_depth = 32\n"
                .into();
        let script = format!(
            "const RULES = #{{ ORG1: #{{ name: \"x\", severity: \"error\", summary: \"s\", help: \"h\" }} }};\n{body}"
        );
        world.files.push(("org/broken.rhai".into(), script));
        let out = world.run_in(tempfile::tempdir().unwrap().path(), "json");
        assert_eq!(out.status.code(), Some(2), "{body}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(expected),
            "{body}: expected `{expected}` in\n{}",
            stderr(&out)
        );
    }
}

#[test]
fn a_script_catching_require_still_fails_the_gate() {
    let mut world = World::passing();
    world.samples = None;
    world.config = "policies = [\"builtin\", \"org\"]\n".into();
    world.files.push((
        "org/sneaky.rhai".into(),
        "const RULES = #{ ORG1: #{ name: \"x\", severity: \"error\", summary: \"s\", help: \"h\" } };\ntry { require(\"samples\"); } catch { }\n".into(),
    ));
    let verdict = world.run();
    let fz001: Vec<_> = verdict
        .violations()
        .into_iter()
        .filter(|v| v["code"] == "FZ001")
        .collect();
    assert_eq!(fz001.len(), 2, "{fz001:#?}");
    assert_eq!(verdict.code, 1);
}

#[test]
fn bad_inputs_are_exit_2_with_file_line_and_value() {
    let cases: Vec<(&str, &str, &str)> = vec![
        (
            "gate/freeze_ledger.json",
            "{\"schema\": 1, \"freezes\": [",
            "gate/freeze_ledger.json:1:",
        ),
        (
            "gate/freeze_ledger.json",
            "",
            "gate/freeze_ledger.json: is empty",
        ),
        (
            "gate/freeze_ledger.json",
            "{\"schema\": 7, \"freezes\": []}",
            "unknown `schema`",
        ),
        (
            "gate/freeze_ledger.json",
            "{\"schema\": 1, \"freezes\": [{\"owner\": 5}]}",
            "gate/freeze_ledger.json:1:37: freeze #0: `owner` must be a string",
        ),
        (
            "gate/collected.txt",
            "tests/a.py::t\n\n1 test collected, 1 error in 0.1s\n",
            "collection error",
        ),
        ("gate/changed.txt", "/abs/path.py\n", "gate/changed.txt:1:1"),
        (
            "gate/samples.json",
            "{\"distinct\": \"many\"}",
            "gate/samples.json:1:14",
        ),
        (
            "gate/skipped.json",
            "[\"not an id\"]",
            "`not an id` is not a pytest node id",
        ),
        (
            "freezegate.toml",
            "ledger = \"gate/freeze_ledger.json\"\nmin_distinct = 4\n",
            "unknown key `min_distinct`",
        ),
    ];
    // In order on this thread; on loader threads while the rules run, with the small
    // inputs on this thread; and with the small inputs on a thread of their own too (a
    // changed-files list of 300 KiB): the input's error wins every way.
    let padding: String = (0..20_000)
        .map(|i| format!("src/pad/file_{i}.py\n"))
        .collect();
    for (file, text, expected, (jobs, padded)) in cases.iter().flat_map(|(file, text, expected)| {
        [("1", false), ("2", false), ("2", true)].map(|mode| (file, text, expected, mode))
    }) {
        let dir = tempfile::tempdir().unwrap();
        let world = World::passing();
        world.run_in(dir.path(), "json");
        if padded {
            write(dir.path(), "gate/changed.txt", &padding);
        }
        match (padded, *file) {
            (true, "gate/changed.txt") => write(dir.path(), file, &format!("{text}{padding}")),
            _ => write(dir.path(), file, text),
        };
        let out = freezegate(dir.path())
            .args([
                "check",
                "--today",
                "2026-11-30",
                "--collected",
                "gate/collected.txt",
                "--changed",
                "gate/changed.txt",
            ])
            .args([
                "--samples",
                "gate/samples.json",
                "--applied-skips",
                "gate/skipped.json",
                "--jobs",
                jobs,
            ])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{file} (--jobs {jobs}, padded: {padded}): {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains(expected),
            "{file}: expected `{expected}` in\n{}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("panicked"));
    }
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "gate/freeze_ledger.json",
        "{\"schema\": 1, \"freezes\": [{\"owner\": \"\u{ff}\"}]}",
    );
    std::fs::write(
        dir.path().join("gate/freeze_ledger.json"),
        b"{\"schema\": 1,\n \"freezes\": [\xff]}",
    )
    .unwrap();
    let out = freezegate(dir.path())
        .args(["check", "--today", "2026-11-30"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    common::assert_contains(
        &stderr(&out),
        "not valid UTF-8 (invalid byte at line 2, column 14)",
    );
    let out = freezegate(dir.path())
        .args(["check", "--today", "2026-02-30"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_missing_ledger_says_how_to_create_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = freezegate(dir.path()).args(["check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    common::assert_contains(&stderr(&out), "gate/freeze_ledger.json: not found");
    assert!(stderr(&out).contains("freezegate init"));
}

#[test]
fn human_output_failing() {
    let dir = tempfile::tempdir().unwrap();
    let out = failing_world().run_in(dir.path(), "human");
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn human_output_passing() {
    let dir = tempfile::tempdir().unwrap();
    let out = World::passing().run_in(dir.path(), "human");
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!(stdout(&out));
}

/// FZ606 at the hook's line in the conftest, and FZ503 naming each gate file the patch
/// changed without a trusted ref, as a reviewer reads them.
#[test]
fn human_output_of_an_outcome_hook_and_an_unguarded_gate() {
    use sha2::Digest;
    let dir = tempfile::tempdir().unwrap();
    let mut world = World::passing();
    let ledger = serde_json::to_string_pretty(&world.ledger).unwrap();
    let sha: String = sha2::Sha256::digest(ledger.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let record = |hooks: serde_json::Value| {
        json!({"version": 1, "kind": "freezegate run record", "commit": "c0ffee", "dirty": false,
               "ledger": "gate/freeze_ledger.json", "ledger_sha256": sha, "complete": true,
               "collected": [FROZEN, PROPERTY], "deselected": [], "dropped": [],
               "tests": {FROZEN: {"outcome": "skipped", "source": "ledger", "reason": "frozen"},
                         PROPERTY: {"outcome": "passed"}},
               "samples": {PROPERTY: {"distinct": 8, "method": "choice sequences"}},
               "hooks": hooks})
        .to_string()
    };
    let hook = json!({"hook": "pytest_runtest_makereport", "plugin": "conftest",
                      "function": "pytest_runtest_makereport", "file": "conftest.py", "line": 4, "wrapper": true});
    world.files = vec![
        ("gate/run.json".into(), record(json!([hook]))),
        ("gate/base-run.json".into(), record(json!([]))),
        (
            "conftest.py".into(),
            "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n".into(),
        ),
    ];
    world.changed.extend([
        "freezegate.toml".into(),
        "gate/skip_baseline.json".into(),
        "conftest.py".into(),
    ]);
    world.extra_args = [
        "--run",
        "gate/run.json",
        "--base-run",
        "gate/base-run.json",
        "--commit",
        "c0ffee",
        "--select",
        "FZ606",
    ]
    .map(String::from)
    .to_vec();
    let out = world.run_in(dir.path(), "human");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn human_output_of_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    World::passing().run_in(dir.path(), "human");
    write(
        dir.path(),
        "gate/freeze_ledger.json",
        "{\n  \"schema\": 1,\n  \"freezes\": [],\n  \"schema\": 1\n}\n",
    );
    let out = freezegate(dir.path()).args(["check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(stderr(&out));
}

#[test]
fn rules_and_explain() {
    let dir = tempfile::tempdir().unwrap();
    World::passing().run_in(dir.path(), "json");
    let out = freezegate(dir.path())
        .args(["rules", "--format", "json"])
        .output()
        .unwrap();
    let rules: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<&str> = rules
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes.len(), 45);
    assert_eq!(codes[0], "FZ001");
    assert!(codes.contains(&"FZ403"));
    let out = freezegate(dir.path())
        .args(["explain", "fz103"])
        .output()
        .unwrap();
    insta::assert_snapshot!(stdout(&out));
    // Every default rule carries a category and a longer doc that explain prints.
    for rule in rules.as_array().unwrap() {
        let code = rule["code"].as_str().unwrap();
        let category = rule["category"].as_str().unwrap();
        let expected = match &code[..3] {
            "FZ0" => "core",
            "FZ1" => "shape",
            "FZ2" => "deposit",
            "FZ3" => "samples",
            "FZ4" => "inheritance",
            _ if code == "FZ501" || code == "FZ503" => "core",
            _ if ["FZ607", "FZ608", "FZ609"].contains(&code) => "tampering",
            _ if code == "FZ610" => "withdrawal",
            _ => "accounting",
        };
        assert_eq!(category, expected, "{code}");
        let out = freezegate(dir.path())
            .args(["explain", code])
            .output()
            .unwrap();
        let text = stdout(&out);
        assert!(text.contains("\n\nExample: "), "{code} has no doc:\n{text}");
        assert!(text.contains(&format!("Category: {category}\n")), "{text}");
    }
    let out = freezegate(dir.path())
        .args(["explain", "FZ999"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown rule `FZ999`"));
}

#[test]
fn skips_prints_the_derived_set() {
    let dir = tempfile::tempdir().unwrap();
    let mut world = World::passing();
    let mut second = common::entry();
    second["test_id"] = json!("tests/test_a.py::test_u[a b]");
    world.ledger["freezes"].as_array_mut().unwrap().push(second);
    world.run_in(dir.path(), "json");
    let out = freezegate(dir.path()).args(["skips"]).output().unwrap();
    let ids: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ids, [FROZEN, "tests/test_a.py::test_u[a b]"]);
    let out = freezegate(dir.path())
        .args(["skips", "--format", "deselect"])
        .output()
        .unwrap();
    assert_eq!(
        stdout(&out).trim(),
        format!("--deselect={FROZEN} --deselect='tests/test_a.py::test_u[a b]'")
    );
}

#[test]
fn loading_on_threads_reaches_the_same_verdict_as_loading_in_order() {
    // A world that trips a rule of every default script: an expired freeze (shape), a
    // property not collected (deposit, which waits for the collection), no sample count
    // (samples) and an inherited skip (inheritance).
    let mut world = World::passing();
    world.today = "2026-12-05".into();
    world.collected.retain(|id| id != common::PROPERTY);
    world.samples = Some(serde_json::json!({"properties": {}}));
    world.applied.push(common::OTHER.into());
    let verdicts: Vec<(i32, serde_json::Value)> = ["1", "2", "4"]
        .iter()
        .map(|jobs| {
            let mut world = world.clone();
            world.extra_args = vec!["--jobs".into(), jobs.to_string()];
            let verdict = world.run();
            (verdict.code, verdict.json["violations"].clone())
        })
        .collect();
    let codes: Vec<&str> = verdicts[0]
        .1
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["code"].as_str().unwrap())
        .collect();
    for code in ["FZ103", "FZ201", "FZ401"] {
        assert!(codes.contains(&code), "{code} in {codes:?}");
    }
    // The uncollected property is reported once (FZ201), not again as unsampled.
    assert!(!codes.contains(&"FZ302"), "{codes:?}");
    assert_eq!(verdicts[0].0, 1);
    assert!(verdicts.iter().all(|v| *v == verdicts[0]), "{verdicts:#?}");
}

/// A reader that goes away (`freezegate rules | head -1`) ends the process as it ends
/// any Unix tool, by SIGPIPE: never a panic on the closed pipe.
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    // More than a pipe holds (64 KiB): the pack's fixture suite, verbose.
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = freezegate(repo)
        .args(["test", "policies/tests", "-v"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 1];
    let mut stdout = child.stdout.take().unwrap();
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.signal(), Some(13), "{:?}: {stderr}", out.status);
}
