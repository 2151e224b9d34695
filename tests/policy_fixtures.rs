//! `freezegate test`: the default pack passes its own fixture suite, the suite covers
//! every default rule both ways, and the runner itself reports what people need
//! (expected-vs-got diffs, broken cases, the closing line, `--policies`).

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::write;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn freezegate_test(cwd: &Path, args: &[&str]) -> Run {
    let out = common::freezegate(cwd)
        .arg("test")
        .args(args)
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn closing_line(stdout: &str) -> &str {
    stdout.lines().last().unwrap_or("")
}

/// Every case.toml under a suite, parsed.
fn case_files(dir: &Path) -> Vec<(PathBuf, toml::Table)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(case_files(&path));
        } else if path.file_name().is_some_and(|n| n == "case.toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            out.push((path, toml::from_str(&text).unwrap()));
        }
    }
    out
}

/// The codes of every rule in the embedded default pack that a case can exercise: the
/// scripts' rules and the core's FZ001 (FZ501 needs `--trusted-ref`, which cases lack).
fn default_rule_codes() -> BTreeSet<String> {
    let dir = tempfile::tempdir().unwrap();
    let out = common::freezegate(dir.path())
        .args(["rules", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let rules: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = rules
        .as_array()
        .or_else(|| rules["rules"].as_array())
        .expect("rules --format json lists the rules");
    list.iter()
        .filter(|r| r["policy"] != "builtin:core" || r["code"] == "FZ001")
        .map(|r| r["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_default_pack_passes_its_fixture_suite() {
    let run = freezegate_test(&repo(), &["policies/tests"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let closing = closing_line(&run.stdout);
    let (passed, failed) = closing
        .split_once(" passed, ")
        .unwrap_or_else(|| panic!("closing line `{closing}`"));
    assert_eq!(failed, "0 failed");
    let passed: usize = passed.parse().unwrap();
    let cases = case_files(&repo().join("policies/tests"));
    assert_eq!(passed, cases.len(), "every case ran");
    assert!(passed >= 40, "only {passed} cases");
    assert!(
        !run.stdout.contains("coverage:"),
        "the runner reports a coverage gap:\n{}",
        run.stdout
    );
}

#[test]
fn every_default_rule_fires_in_some_case_and_is_a_near_miss_in_another() {
    let codes = default_rule_codes();
    assert!(
        codes.contains("FZ001") && codes.contains("FZ403"),
        "{codes:?}"
    );
    let suite = repo().join("policies/tests");
    for (path, case) in case_files(&suite) {
        assert!(
            case.get("description").is_some(),
            "{} has no description",
            path.display()
        );
    }
    let (fired, near) = fired_and_near(&suite);
    let unfired: Vec<_> = codes.difference(&fired).collect();
    let unmissed: Vec<_> = codes.difference(&near).collect();
    assert!(unfired.is_empty(), "no case where these fire: {unfired:?}");
    assert!(unmissed.is_empty(), "no near miss for: {unmissed:?}");
}

/// A one-case suite in a temporary directory: the default pack's shared world with a
/// case that expects FZ103 the day after expiry.
fn tiny_suite(expect: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for file in [
        "freeze_ledger.json",
        "collected.txt",
        "changed.txt",
        "samples.json",
        "skipped.json",
        "junit.xml",
        "base_ledger.json",
        "freezegate.toml",
    ] {
        let text = std::fs::read_to_string(repo().join("policies/tests").join(file)).unwrap();
        write(dir.path(), &format!("suite/{file}"), &text);
    }
    write(
        dir.path(),
        "suite/expired/case.toml",
        &format!(
            "description = \"expired\"\ntoday = \"2026-12-05\"\ntarget_branch = \"main\"\n{expect}"
        ),
    );
    dir
}

#[test]
fn a_wrong_expectation_fails_with_expected_and_got() {
    let dir = tiny_suite("[[expect]]\ncode = \"FZ104\"\ntest_id = \"tests/test_billing.py::test_proration_rounding\"\nfield = \"expires\"\n");
    let run = freezegate_test(dir.path(), &["suite"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    common::assert_contains(&run.stdout, "FAILED  suite/expired");
    assert!(run.stdout.contains("(expired)"), "the description is shown");
    common::assert_contains(&run.stdout, "expected, not reported:\n      - FZ104 tests/test_billing.py::test_proration_rounding field=expires");
    common::assert_contains(&run.stdout, "reported, not expected:\n      + FZ103 tests/test_billing.py::test_proration_rounding field=expires severity=error: expired on 2026-12-04");
    common::assert_contains(&run.stdout, "[suite/freeze_ledger.json:9:18]");
    assert_eq!(closing_line(&run.stdout), "0 passed, 1 failed");
}

#[test]
fn optional_parts_of_an_expectation_are_checked_when_given() {
    let id = "test_id = \"tests/test_billing.py::test_proration_rounding\"\n";
    let ok = tiny_suite(&format!("[[expect]]\ncode = \"FZ103\"\n{id}"));
    assert_eq!(freezegate_test(ok.path(), &["suite"]).code, 0);
    let full = tiny_suite(&format!(
        "expect_exit = 1\n[[expect]]\ncode = \"FZ103\"\n{id}field = \"expires\"\nseverity = \"error\"\nmessage = \"1 day before\"\n"
    ));
    let run = freezegate_test(full.path(), &["suite"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    for wrong in [
        format!("[[expect]]\ncode = \"FZ103\"\n{id}field = \"opened\"\n"),
        format!("[[expect]]\ncode = \"FZ103\"\n{id}severity = \"warning\"\n"),
        format!("[[expect]]\ncode = \"FZ103\"\n{id}message = \"2 days\"\n"),
        // test_id is always compared: leaving it out means "about no test".
        "[[expect]]\ncode = \"FZ103\"\n".to_string(),
        format!("expect_exit = 0\n[[expect]]\ncode = \"FZ103\"\n{id}"),
        // Counts matter: the same violation expected twice is one too many.
        format!("[[expect]]\ncode = \"FZ103\"\n{id}[[expect]]\ncode = \"FZ103\"\n{id}"),
        // And no expectation at all means no violation.
        String::new(),
    ] {
        let dir = tiny_suite(&wrong);
        let run = freezegate_test(dir.path(), &["suite"]);
        assert_eq!(run.code, 1, "{wrong}\n{}", run.stdout);
    }
}

#[test]
fn a_broken_case_exits_2_naming_its_file() {
    let dir = tiny_suite("[[expect]]\ncode = \"FZ103\"\ntest_id = \"x::y\"\nfeild = \"expires\"\n");
    let run = freezegate_test(dir.path(), &["suite"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    common::assert_contains(&run.stdout, "BROKEN  suite/expired");
    common::assert_contains(
        &run.stderr,
        "suite/expired/case.toml:7:1: unknown field `feild`",
    );
    assert_eq!(closing_line(&run.stdout), "0 passed, 1 failed");

    // A malformed input file of the case: exit 2, the file named.
    let dir = tiny_suite("");
    write(
        dir.path(),
        "suite/expired/freeze_ledger.json",
        "{\"schema\": 1, \"freezes\": [",
    );
    let run = freezegate_test(dir.path(), &["suite"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    common::assert_contains(&run.stderr, "case suite/expired is broken");
    common::assert_contains(&run.stderr, "freeze_ledger.json:1:26: is not valid JSON");

    // An expectation naming a rule no policy declares is a broken case, not a failure.
    let dir = tiny_suite("[[expect]]\ncode = \"FZ999\"\n");
    let run = freezegate_test(dir.path(), &["suite"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("names rule FZ999"), "{}", run.stderr);

    // A near miss for a rule the case disabled proves nothing.
    let dir = tiny_suite("select = [\"FZ1\"]\nnear_miss = [\"FZ301\"]\n[[expect]]\ncode = \"FZ103\"\ntest_id = \"tests/test_billing.py::test_proration_rounding\"\n");
    let run = freezegate_test(dir.path(), &["suite"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("near_miss FZ301"), "{}", run.stderr);

    let run = freezegate_test(dir.path(), &["nowhere"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("nowhere"), "{}", run.stderr);
}

#[test]
fn policies_flag_runs_the_cases_against_another_directory() {
    let dir = tiny_suite("[[expect]]\ncode = \"FZ103\"\ntest_id = \"tests/test_billing.py::test_proration_rounding\"\n");
    // A copy of the pack whose expiry check is off by one day.
    for script in ["shape", "deposit", "samples", "inheritance"] {
        let text = std::fs::read_to_string(repo().join(format!("policies/{script}.rhai"))).unwrap();
        let text = text.replace("expires < today", "expires < today - 1");
        write(dir.path(), &format!("pack/{script}.rhai"), &text);
    }
    assert_eq!(freezegate_test(dir.path(), &["suite"]).code, 0);
    let run = freezegate_test(dir.path(), &["suite", "--policies", "pack"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("- FZ103"), "{}", run.stdout);
}

#[test]
fn filter_and_inherited_config_and_omit() {
    let dir = tiny_suite("[[expect]]\ncode = \"FZ103\"\ntest_id = \"tests/test_billing.py::test_proration_rounding\"\n");
    // A suite-level config every case inherits, and a case that merges a param over it.
    write(
        dir.path(),
        "suite/freezegate.toml",
        "[params]\nmin_distinct = 9\nproof_required = false\n",
    );
    write(
        dir.path(),
        "suite/lenient/case.toml",
        "description = \"min_distinct lowered again\"\ntoday = \"2026-11-30\"\ntarget_branch = \"main\"\n[config.params]\nmin_distinct = 8\n",
    );
    write(
        dir.path(),
        "suite/strict/case.toml",
        "description = \"inherits min_distinct = 9\"\ntoday = \"2026-11-30\"\ntarget_branch = \"main\"\n[[expect]]\ncode = \"FZ301\"\ntest_id = \"tests/test_billing.py::test_proration_rounding\"\n",
    );
    write(
        dir.path(),
        "suite/no-samples/case.toml",
        "description = \"omit\"\ntoday = \"2026-11-30\"\ntarget_branch = \"main\"\nomit = [\"samples\"]\n[config.params]\nmin_distinct = 8\n[[expect]]\ncode = \"FZ001\"\nmessage = \"--samples\"\n",
    );
    let run = freezegate_test(dir.path(), &["suite"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    // `expired` now also sees FZ301 (inherited min 9), the others pass.
    common::assert_contains(&run.stdout, "FAILED  suite/expired");
    common::assert_contains(&run.stdout, "ok      suite/lenient");
    common::assert_contains(&run.stdout, "ok      suite/strict");
    common::assert_contains(&run.stdout, "ok      suite/no-samples");
    assert_eq!(closing_line(&run.stdout), "3 passed, 1 failed");
    let run = freezegate_test(dir.path(), &["suite", "-k", "strict"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(closing_line(&run.stdout), "1 passed, 0 failed");
}

/// The codes a suite's cases expect somewhere, and those they declare near misses for.
fn fired_and_near(dir: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut fired = BTreeSet::new();
    let mut near = BTreeSet::new();
    for (_, case) in case_files(dir) {
        let codes = |key: &str| -> Vec<String> {
            case.get(key)
                .and_then(|e| e.as_array())
                .into_iter()
                .flatten()
                .map(|v| v.get("code").unwrap_or(v).as_str().unwrap().to_string())
                .collect()
        };
        fired.extend(codes("expect"));
        near.extend(codes("near_miss"));
    }
    (fired, near)
}

#[test]
fn the_org_rules_example_passes_its_own_fixtures() {
    let run = freezegate_test(&repo(), &["examples/org-rules/tests"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("coverage:"), "{}", run.stdout);
    let cases = case_files(&repo().join("examples/org-rules/tests"));
    assert_eq!(
        closing_line(&run.stdout),
        format!("{} passed, 0 failed", cases.len())
    );
    let (fired, near) = fired_and_near(&repo().join("examples/org-rules/tests"));
    for code in ["ORG101", "ORG201", "ORG301", "ORG401"] {
        assert!(fired.contains(code), "no case fires {code}");
        assert!(near.contains(code), "no near miss for {code}");
    }
}

#[test]
fn the_org_rules_example_config_loads_with_the_default_pack() {
    let out = common::freezegate(&repo())
        .args([
            "--config",
            "examples/org-rules/freezegate.toml",
            "rules",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for code in ["FZ103", "ORG101", "ORG201", "ORG301", "ORG401"] {
        assert!(
            text.contains(&format!("\"{code}\"")),
            "{code} not loaded:\n{text}"
        );
    }
    // The helper module is imported, never run as a policy of its own.
    assert!(!text.contains("lib.rhai"), "{text}");
}

#[test]
fn the_org_rules_suite_has_teeth_too() {
    // Dropping one line of each org rule's decision makes its suite fail.
    let dir = tempfile::tempdir().unwrap();
    let example = repo().join("examples/org-rules");
    for (script, from, to) in [
        (
            "ticket.rhai",
            "if !lib::cites_ticket(e.ticket",
            "if false && !lib::cites_ticket(e.ticket",
        ),
        ("ownership.rhai", "codeowners.is_empty()", "false"),
        ("quota.rhai", "count > max_open", "count > max_open + 1"),
        (
            "protected.rhai",
            "lib::matches_any(protected_paths, path)",
            "false",
        ),
        ("lib.rhai", "expires >= today", "expires > today"),
    ] {
        let copy = dir.path().join(script.trim_end_matches(".rhai"));
        std::fs::create_dir_all(copy.join("org-policies")).unwrap();
        for entry in std::fs::read_dir(example.join("org-policies")).unwrap() {
            let path = entry.unwrap().path();
            let mut text = std::fs::read_to_string(&path).unwrap();
            if path.file_name().unwrap() == script {
                assert!(text.contains(from), "{script} lacks `{from}`");
                text = text.replace(from, to);
            }
            std::fs::write(
                copy.join("org-policies").join(path.file_name().unwrap()),
                text,
            )
            .unwrap();
        }
        let run = freezegate_test(
            &repo(),
            &[
                "examples/org-rules/tests",
                "--policies",
                copy.join("org-policies").to_str().unwrap(),
            ],
        );
        assert_eq!(
            run.code, 1,
            "mutating {script} went unnoticed:\n{}",
            run.stdout
        );
    }
}
