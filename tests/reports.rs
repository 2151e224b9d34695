//! CI report formats (SARIF, GitHub workflow commands, JUnit, Markdown), several reports
//! from one run, and the everyday commands: init, freeze add/renew/remove, completions.

mod common;

use common::{freezegate, text, venv_python, write, World, PROPERTY};
use serde_json::{json, Value};

/// [`World::failing`], and a stale freeze (FZ204).
fn failing_world() -> World {
    let mut world = World::failing();
    world.collected.retain(|id| id != common::FROZEN);
    world
}

/// The JSON report of the same world, for comparing locations.
fn json_report(world: &World) -> Vec<Value> {
    world.run().violations()
}

#[test]
fn sarif_validates_against_the_schema_with_exact_locations() {
    let world = failing_world();
    let dir = tempfile::tempdir().unwrap();
    let out = world.run_in(dir.path(), "sarif");
    assert_eq!(out.status.code(), Some(1));
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The official schema's two `language` patterns have a stray `]`, which the draft-07
    // meta-schema rejects as a regex; use the pattern they mean (we never emit `language`).
    let raw = include_str!("data/sarif-schema-2.1.0.json");
    let stray = r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$""#;
    assert_eq!(raw.matches(stray).count(), 2);
    let schema: Value =
        serde_json::from_str(&raw.replace(stray, r#""^[a-zA-Z]{2}(-[a-zA-Z]{2})?$""#)).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&sarif)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "SARIF is invalid: {errors:#?}");
    let mut broken = sarif.clone();
    broken["runs"][0]["results"][0]["level"] = json!("fatal");
    assert!(!validator.is_valid(&broken), "the schema check has teeth");

    let run = &sarif["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 45);
    assert!(rules
        .iter()
        .all(|r| r["shortDescription"]["text"].is_string() && r["help"]["text"].is_string()));
    let results = run["results"].as_array().unwrap();
    let expected = json_report(&world);
    assert_eq!(results.len(), expected.len());
    for v in expected.iter().filter(|v| v["file"].is_string()) {
        let r = results
            .iter()
            .find(|r| r["ruleId"] == v["code"] && r["properties"]["field"] == v["field"])
            .unwrap_or_else(|| panic!("no SARIF result for {v}"));
        let location = &r["locations"][0]["physicalLocation"];
        assert_eq!(location["artifactLocation"]["uri"], v["file"]);
        assert_eq!(location["region"]["startLine"], v["line"]);
        assert_eq!(location["region"]["startColumn"], v["column"]);
        let level = if v["severity"] == "error" {
            "error"
        } else {
            "warning"
        };
        assert_eq!(r["level"], level);
        assert_eq!(
            rules[r["ruleIndex"].as_u64().unwrap() as usize]["id"],
            v["code"]
        );
    }
}

/// Parses a workflow command the way the Actions runner does (unescaping properties and data).
fn parse_command(line: &str) -> (String, Vec<(String, String)>, String) {
    let rest = line.strip_prefix("::").expect("a workflow command");
    let (head, data) = rest.split_once("::").expect("command data");
    let (command, props) = head.split_once(' ').unwrap_or((head, ""));
    let unescape = |s: &str| {
        s.replace("%0D", "\r")
            .replace("%0A", "\n")
            .replace("%3A", ":")
            .replace("%2C", ",")
            .replace("%25", "%")
    };
    let props = props
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap();
            (k.to_string(), unescape(v))
        })
        .collect();
    (command.to_string(), props, unescape(data))
}

#[test]
fn github_workflow_commands_carry_file_line_col_and_survive_escaping() {
    let mut world = failing_world();
    world.ledger_name = "gate/ledger, v1: 100%.json".into();
    let dir = tempfile::tempdir().unwrap();
    let out = world.run_in(dir.path(), "github");
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let commands: Vec<_> = stdout
        .lines()
        .filter(|l| l.starts_with("::"))
        .map(parse_command)
        .collect();
    let expected = json_report(&world);
    assert_eq!(commands.len(), expected.len(), "{stdout}");
    for v in &expected {
        let title = format!(
            "{} {}",
            v["code"].as_str().unwrap(),
            v["name"].as_str().unwrap()
        );
        let (command, props, message) = commands
            .iter()
            .find(|(_, props, _)| props.iter().any(|(k, val)| k == "title" && *val == title))
            .unwrap_or_else(|| panic!("no command titled {title}"));
        assert_eq!(
            command,
            if v["severity"] == "error" {
                "error"
            } else {
                "warning"
            }
        );
        assert!(
            message.starts_with(v["message"].as_str().unwrap()),
            "{message}"
        );
        assert!(message.contains('\n'), "help follows on its own line");
        let get = |key: &str| props.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        if v["file"].is_string() {
            assert_eq!(get("file").as_deref(), v["file"].as_str());
            assert_eq!(get("file").unwrap(), "gate/ledger, v1: 100%.json");
            assert_eq!(get("line"), Some(v["line"].to_string()));
            assert_eq!(get("col"), Some(v["column"].to_string()));
        } else {
            assert_eq!(get("file"), None);
        }
    }
}

#[test]
fn junit_is_read_by_a_real_junit_parser() {
    let world = failing_world();
    let dir = tempfile::tempdir().unwrap();
    let out = world.run_in(dir.path(), "junit");
    assert_eq!(out.status.code(), Some(1));
    let path = write(dir.path(), "report.xml", &text(&out.stdout));
    let script = r#"
import json, sys
from junitparser import JUnitXml, Failure
xml = JUnitXml.fromfile(sys.argv[1])
cases = {}
for suite in xml:
    for case in suite:
        cases[case.name] = {
            "failed": any(isinstance(r, Failure) for r in case.result),
            "message": " ".join((r.message or "") for r in case.result),
            "text": " ".join((r.text or "") for r in case.result),
            "out": case.system_out or "",
        }
print(json.dumps(cases))
"#;
    let out = std::process::Command::new(venv_python())
        .args(["-c", script])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "junitparser failed: {}",
        text(&out.stderr)
    );
    let cases: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        cases.as_object().unwrap().len(),
        45,
        "one case per enabled rule"
    );
    assert_eq!(cases["FZ101 missing-field"]["failed"], true);
    assert!(cases["FZ101 missing-field"]["text"]
        .as_str()
        .unwrap()
        .contains("gate/freeze_ledger.json:7:16"));
    assert_eq!(cases["FZ104 window-too-long"]["failed"], true);
    assert_eq!(
        cases["FZ401 inherited-skip"]["message"],
        "1 violation of FZ401"
    );
    assert_eq!(cases["FZ103 expired-freeze"]["failed"], false);
    // A warning does not fail its case but stays visible.
    assert_eq!(cases["FZ204 stale-freeze"]["failed"], false);
    assert!(cases["FZ204 stale-freeze"]["out"]
        .as_str()
        .unwrap()
        .contains("is not in the collection"));
}

#[test]
fn markdown_summary_has_verdict_violations_and_freezes() {
    let dir = tempfile::tempdir().unwrap();
    let out = failing_world().run_in(dir.path(), "markdown");
    let md = text(&out.stdout);
    assert!(
        md.contains("❌ **Failed**: 3 errors, 1 warning in 1 freeze, 27 rules checked."),
        "{md}"
    );
    assert!(
        md.contains("| ❌ | FZ104 | window-too-long | `tests/test_a.py::test_frozen` |"),
        "{md}"
    );
    assert!(md.contains("gate/freeze_ledger.json:9:18 |"), "{md}");
    assert!(
        md.contains("| (none) | `tests/test_a.py::test_frozen` | 2026-11-20 | 2026-12-06 |"),
        "{md}"
    );
    let out = World::passing().run_in(tempfile::tempdir().unwrap().path(), "markdown");
    assert!(text(&out.stdout).contains("✅ **Passed**: 0 errors, 0 warnings in 1 freeze"));
}

#[test]
fn one_run_writes_human_output_and_two_report_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut world = failing_world();
    world.extra_args = vec![
        "--report".into(),
        "sarif=out/gate.sarif".into(),
        "--report".into(),
        "json=out/gate.json".into(),
    ];
    let out = world.run_in(dir.path(), "human");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("× FZ104 window-too-long"));
    let json_file: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/gate.json")).unwrap())
            .unwrap();
    assert_eq!(json_file["summary"]["errors"], 3);
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/gate.sarif")).unwrap())
            .unwrap();
    assert_eq!(sarif["runs"][0]["results"].as_array().unwrap().len(), 4);
    let bad = freezegate(dir.path())
        .args(["check", "--report", "pdf=x.pdf"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("unknown report format `pdf`"));
}

#[test]
fn init_then_check_works_in_a_fresh_repository_and_never_overwrites() {
    let dir = common::repo_dir();
    let sub = dir.path().join("src/pkg");
    std::fs::create_dir_all(&sub).unwrap();
    let out = freezegate(&sub).args(["init", "--pack"]).output().unwrap();
    assert!(out.status.success());
    for file in [
        "freezegate.toml",
        "gate/freeze_ledger.json",
        "policies/shape.rhai",
        "policies/inheritance.rhai",
    ] {
        assert!(dir.path().join(file).is_file(), "{file} missing");
    }
    assert!(text(&out.stdout).contains("Next steps"));
    let check = freezegate(dir.path())
        .args(["check", "--select", "FZ1", "--today", "2026-11-30"])
        .output()
        .unwrap();
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}{}",
        text(&check.stdout),
        text(&check.stderr)
    );
    // The scaffolded policies/ copy is the default pack itself.
    let copy = freezegate(dir.path())
        .args(["--config", "alt.toml", "rules", "--format", "json"])
        .env("X", "1")
        .output()
        .unwrap();
    assert_eq!(copy.status.code(), Some(2), "no alt.toml: exit 2");
    write(dir.path(), "alt.toml", "policies = [\"policies\"]\n");
    let copy = freezegate(dir.path())
        .args(["--config", "alt.toml", "rules", "--format", "json"])
        .output()
        .unwrap();
    let rules: Value = serde_json::from_slice(&copy.stdout).unwrap();
    assert_eq!(rules.as_array().unwrap().len(), 45);

    write(dir.path(), "freezegate.toml", "# mine\n");
    let again = freezegate(dir.path()).arg("init").output().unwrap();
    assert!(text(&again.stdout).contains("kept     freezegate.toml (already exists)"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("freezegate.toml")).unwrap(),
        "# mine\n"
    );
}

/// `freeze ARGS`, its ids checked against a given collection of them (no pytest runs).
fn freeze(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    let ids = [
        "tests/t.py::test_old",
        "tests/t.py::test_new",
        "tests/p.py::test_p",
        "tests/p.py::test_q",
        PROPERTY,
    ];
    write(
        dir,
        "gate/collected.txt",
        &format!("{}\n\n5 tests collected in 0.01s\n", ids.join("\n")),
    );
    let mut args = args.to_vec();
    if args[0] != "remove" {
        args.extend(["--collected", "gate/collected.txt"]);
    }
    common::freeze(dir, &args)
}

#[test]
fn freeze_add_renew_remove_round_trip_json_without_loss() {
    let dir = common::repo_dir();
    let original = "{\n  \"schema\": 1,\n  \"freezes\": [\n    {\n      \"test_id\": \"tests/t.py::test_old\",\n      \"ticket\": \"BILL-9\",\n      \"reason\": \"r\",\n      \"owner\": \"o\",\n      \"opened\": \"2026-11-20\",\n      \"expires\": \"2026-11-30\",\n      \"invariant\": \"i\",\n      \"compensating_property\": \"tests/p.py::test_p\"\n    }\n  ]\n}\n";
    write(dir.path(), "gate/freeze_ledger.json", original);
    let out = freeze(
        dir.path(),
        &[
            "add",
            "tests/t.py::test_new",
            "--owner",
            "finley",
            "--reason",
            "BILL-1",
            "--invariant",
            "never decreases",
            "--property",
            PROPERTY,
            "--property",
            "tests/p.py::test_q",
            "--days",
            "7",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let ledger: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("gate/freeze_ledger.json")).unwrap(),
    )
    .unwrap();
    let freezes = ledger["freezes"].as_array().unwrap();
    assert_eq!(freezes.len(), 2);
    assert_eq!(freezes[0]["ticket"], "BILL-9", "unknown fields kept");
    let keys: Vec<&String> = freezes[0].as_object().unwrap().keys().collect();
    assert_eq!(keys[..2], ["test_id", "ticket"], "key order kept");
    assert_eq!(freezes[1]["expires"], "2026-12-07");
    assert_eq!(
        freezes[1]["compensating_property"],
        json!([PROPERTY, "tests/p.py::test_q"])
    );

    let out = freeze(
        dir.path(),
        &["renew", "tests/t.py::test_old", "--days", "3"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let text_now = std::fs::read_to_string(dir.path().join("gate/freeze_ledger.json")).unwrap();
    let ledger: Value = serde_json::from_str(&text_now).unwrap();
    assert_eq!(
        (
            ledger["freezes"][0]["opened"].clone(),
            ledger["freezes"][0]["expires"].clone()
        ),
        (json!("2026-11-30"), json!("2026-12-03"))
    );

    // An invalid entry is refused and the file is untouched.
    let out = freeze(
        dir.path(),
        &[
            "add",
            "tests/t.py::test_bad",
            "--owner",
            "x",
            "--reason",
            "r",
            "--invariant",
            "i",
            "--property",
            "not-an-id",
            "--days",
            "30",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    common::assert_contains(&text(&out.stdout), "FZ104");
    common::assert_contains(&text(&out.stdout), "FZ108");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("gate/freeze_ledger.json")).unwrap(),
        text_now
    );

    let out = freeze(
        dir.path(),
        &[
            "add",
            "tests/t.py::test_old",
            "--owner",
            "x",
            "--reason",
            "r",
            "--invariant",
            "i",
            "--property",
            PROPERTY,
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("already frozen"));
    let out = freeze(dir.path(), &["remove", "tests/t.py::test_old"]);
    assert!(out.status.success());
    let ledger: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("gate/freeze_ledger.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(ledger["freezes"].as_array().unwrap().len(), 1);
    assert_eq!(ledger["freezes"][0]["test_id"], "tests/t.py::test_new");
    let out = freeze(dir.path(), &["remove", "tests/t.py::test_old"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn freeze_edits_keep_toml_comments_and_refuse_commented_yaml() {
    let dir = common::repo_dir();
    write(
        dir.path(),
        "freezegate.toml",
        "ledger = \"gate/ledger.toml\"\n",
    );
    let original = "# The team's freezes.\nschema = 1\n\n[[freezes]]\n# flaky since the upstream bump\ntest_id = \"tests/t.py::test_old\"\nreason = \"r\"  # BILL-3\nowner = \"o\"\nopened = 2026-11-20\nexpires = 2026-11-30\ninvariant = \"i\"\ncompensating_property = \"tests/p.py::test_p\"\n";
    write(dir.path(), "gate/ledger.toml", original);
    let out = freeze(dir.path(), &["renew", "tests/t.py::test_old"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = freeze(
        dir.path(),
        &[
            "add",
            "tests/t.py::test_new",
            "--owner",
            "finley",
            "--reason",
            "BILL-1",
            "--invariant",
            "i",
            "--property",
            PROPERTY,
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let edited = std::fs::read_to_string(dir.path().join("gate/ledger.toml")).unwrap();
    for kept in [
        "# The team's freezes.",
        "# flaky since the upstream bump",
        "reason = \"r\"  # BILL-3",
    ] {
        assert!(edited.contains(kept), "lost `{kept}`:\n{edited}");
    }
    assert!(
        edited.contains("opened = 2026-11-30\nexpires = 2026-12-14"),
        "dates keep their TOML type:\n{edited}"
    );
    let check = freezegate(dir.path())
        .args([
            "check",
            "--select",
            "FZ1",
            "--today",
            "2026-11-30",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stdout));
    let report: Value = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(report["summary"]["freezes"], 2);

    write(
        dir.path(),
        "freezegate.toml",
        "ledger = \"gate/ledger.yaml\"\n",
    );
    let yaml = "# reviewed weekly\nschema: 1\nfreezes: []\n";
    write(dir.path(), "gate/ledger.yaml", yaml);
    let out = freeze(
        dir.path(),
        &[
            "add",
            "tests/t.py::test_new",
            "--owner",
            "f",
            "--reason",
            "r",
            "--invariant",
            "i",
            "--property",
            PROPERTY,
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    common::assert_contains(
        &text(&out.stderr),
        "has comments, which rewriting YAML would lose",
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("gate/ledger.yaml")).unwrap(),
        yaml
    );
    write(dir.path(), "gate/ledger.yaml", "schema: 1\nfreezes: []\n");
    let out = freeze(
        dir.path(),
        &[
            "add",
            "tests/t.py::test_new",
            "--owner",
            "f",
            "--reason",
            "r",
            "--invariant",
            "i",
            "--property",
            PROPERTY,
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let skips = freezegate(dir.path())
        .args(["skips", "--format", "lines"])
        .output()
        .unwrap();
    assert_eq!(text(&skips.stdout).trim(), "tests/t.py::test_new");
}

#[test]
fn shell_completions_and_help_examples() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let out = freezegate(dir.path())
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(text(&out.stdout).contains("freeze"), "{shell}");
    }
    let help = freezegate(dir.path()).args(["--help"]).output().unwrap();
    let help = text(&help.stdout);
    // The supervised run is the flow shown, adoption first, not files from five tools.
    common::assert_contains(
        &help,
        "Examples:\n  freezegate init\n  freezegate run --baseline --check -- python -m pytest",
    );
    common::assert_contains(
        &help,
        "freezegate run --check --base origin/main --trusted-ref origin/main \\\n      --base-run gate/base-run.json -- python -m pytest -n auto",
    );
    assert!(!help.contains("--applied-skips"), "{help}");
}
