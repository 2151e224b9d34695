//! The pytest plugin, installed from the wheel this tree builds into the pinned venv (the
//! way a team installs it into its dev environment), run by real pytest, pytest-xdist and
//! Hypothesis in temporary git repositories; its run record judged by the built binary.
//!
//! Needs the venv of `.ci/python-env`; without it these tests fail, they never skip.

mod common;

use std::fs;
use std::process::Command;

use common::project::*;
use common::text;
use serde_json::{json, Value};

#[test]
fn the_record_applies_the_ledger_and_is_the_same_under_xdist() {
    let project = Project::new();
    let plain = project.record(&["-p", "no:xdist"], "gate/run0.json");
    let sharded = project.record(&["-n", "2"], "gate/run2.json");
    assert_eq!(plain, sharded, "-n 2 writes the record -n 0 writes");

    let collected = plain["collected"].as_array().unwrap();
    assert_eq!(collected.len(), 8, "{collected:?}");
    assert_eq!(plain["complete"], true);
    assert_eq!(plain["dirty"], false);
    let tests = &plain["tests"];
    assert_eq!(tests.as_object().unwrap().len(), 8);
    let frozen = &tests[FROZEN];
    assert_eq!(frozen["outcome"], "skipped");
    assert_eq!(frozen["source"], "ledger");
    assert_eq!(frozen["file"], "tests/test_app.py");
    assert_eq!(frozen["lines"], json!([10, 11]));
    assert_eq!(
        tests["tests/test_app.py::Legacy::test_unit"]["outcome"],
        "passed"
    );
    assert_eq!(plain["samples"][PROPERTY]["method"], "choice sequences");
    assert!(plain["samples"][PROPERTY]["distinct"].as_i64().unwrap() >= 8);

    // The gate reads the record alone: no second pytest collection, no other artifact.
    project.write("gate/changed.txt", "tests/test_props.py\n");
    let (code, report, stderr) =
        project.gate(&["--run", "gate/run2.json", "--changed", "gate/changed.txt"]);
    assert_eq!(code, Some(0), "{report:#}\n{stderr}");
    assert_eq!(
        report["summary"]["not_evaluated"],
        json!([
            "FZ207", "FZ208", "FZ209", "FZ210", "FZ211", "FZ213", "FZ214", "FZ304", "FZ501",
            "FZ603", "FZ604", "FZ606", "FZ607", "FZ610"
        ])
    );
}

#[test]
fn only_the_ledgers_properties_are_observed_unless_observability_is_on() {
    let project = Project::new();
    project.write(
        "tests/test_other_props.py",
        &PROPS.replace("test_never_negative", "test_not_in_the_ledger"),
    );
    project.commit("a property no freeze names");
    const OTHER: &str = "tests/test_other_props.py::test_not_in_the_ledger";
    for workers in [vec!["-p", "no:xdist"], vec!["-n", "2"]] {
        let record = project.record(&workers, "gate/run.json");
        let samples = record["samples"].as_object().unwrap();
        assert_eq!(
            samples.keys().collect::<Vec<_>>(),
            [PROPERTY],
            "{workers:?}: the ledger's property alone: {record:#}"
        );
        assert!(samples[PROPERTY]["distinct"].as_i64().unwrap() >= 8);
    }
    // Observability on for its files: every property is counted, as Hypothesis sees them all.
    let out = hermetic(&mut Command::new(python()))
        .args(["-m", "pytest", "-q", "-p", "no:xdist"])
        .env("HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY", "1")
        .current_dir(&project.root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let record: Value =
        serde_json::from_str(&fs::read_to_string(project.root.join("gate/run.json")).unwrap())
            .unwrap();
    for property in [PROPERTY, OTHER] {
        assert!(
            record["samples"][property]["distinct"].as_i64().unwrap() >= 8,
            "{property}: {record:#}"
        );
    }
}

/// A deposit whose strategy maps every draw to one constant draws many choice sequences
/// but passes one value: it counts 1, and FZ301 says so.
#[test]
fn a_property_whose_draws_map_to_one_value_counts_one_input() {
    let project = Project::new();
    project.write(
        "tests/test_props.py",
        &PROPS.replace(
            "@given(st.integers())",
            "@given(st.integers().map(lambda _: 3))",
        ),
    );
    project.commit("a constant deposit");
    for workers in [vec!["-p", "no:xdist"], vec!["-n", "2"]] {
        let record = project.record(&workers, "gate/run.json");
        assert_eq!(
            record["samples"][PROPERTY],
            json!({"distinct": 1, "method": "arguments"}),
            "{workers:?}: {record:#}"
        );
    }
    let (code, report, stderr) = project.gate(&["--run", "gate/run.json", "--select", "FZ3"]);
    assert_eq!(code, Some(1), "{report:#}\n{stderr}");
    common::assert_contains(
        violation(&report, "FZ301")["message"].as_str().unwrap(),
        "saw 1 distinct input, fewer than 8 (counted by arguments)",
    );
}

#[test]
fn a_function_or_class_id_freezes_every_case_under_it() {
    let project = Project::new();
    project.write_ledger(&[
        "tests/test_app.py::test_cases",
        "tests/test_app.py::TestGroup",
    ]);
    project.commit("freeze a parametrized function and a class");
    let record = project.record(&["-n", "2"], "gate/run.json");
    for id in [
        "tests/test_app.py::test_cases[1]",
        "tests/test_app.py::test_cases[3]",
        "tests/test_app.py::TestGroup::test_one",
        "tests/test_app.py::TestGroup::test_slow",
    ] {
        assert_eq!(record["tests"][id]["source"], "ledger", "{id}: {record:#}");
    }
    assert_eq!(record["tests"][FROZEN]["outcome"], "failed");
}

#[test]
fn a_reused_record_judges_another_commit_and_is_refused() {
    let project = Project::new();
    project.record(&[], "gate/run.json");
    project.write("gate/changed.txt", "tests/test_props.py\n");
    // The next commit reuses its parent's record: the merge queue's way a freeze lies.
    project.write("tests/test_more.py", "def test_more():\n    assert True\n");
    project.commit("a later commit");
    let (code, report, stderr) =
        project.gate(&["--run", "gate/run.json", "--changed", "gate/changed.txt"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(codes(&report), ["FZ404"]);
    // `--commit` names the commit the tests ran on (a merge commit checkout).
    let parent = {
        let out = hermetic(&mut Command::new("git"))
            .args(["rev-parse", "HEAD~1"])
            .current_dir(&project.root)
            .output()
            .unwrap();
        text(&out.stdout).trim().to_string()
    };
    let (code, _, stderr) = project.gate(&[
        "--run",
        "gate/run.json",
        "--changed",
        "gate/changed.txt",
        "--commit",
        &parent,
    ]);
    assert_eq!(code, Some(0), "{stderr}");

    // A ledger edited after the run: the record's skips came from another ledger.
    project.write_ledger(&[FROZEN, "tests/test_app.py::test_cases"]);
    project.commit("freeze more");
    let (code, report, _) = project.gate(&[
        "--run",
        "gate/run.json",
        "--changed",
        "gate/changed.txt",
        "--commit",
        &parent,
    ]);
    assert_eq!(code, Some(1));
    let messages: Vec<&str> = report["violations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["code"] == "FZ404")
        .map(|v| v["message"].as_str().unwrap())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("applied the skips of another ledger")),
        "{messages:?}"
    );
}

#[test]
fn deselected_and_dropped_tests_are_recorded_with_their_markers() {
    let project = Project::new();
    project.write(
        "tests/conftest.py",
        "def pytest_collection_modifyitems(items):\n    items[:] = [i for i in items if 'test_one' not in i.nodeid]\n",
    );
    project.commit("a hook that drops a test");
    for args in [vec!["-p", "no:xdist"], vec!["-n", "2"]] {
        let mut args = args;
        args.extend([
            "-m",
            "not slow",
            "--deselect",
            "tests/test_app.py::test_cases[2]",
        ]);
        let record = project.record(&args, "gate/run.json");
        assert_eq!(
            record["deselected"],
            json!([
                "tests/test_app.py::TestGroup::test_slow",
                "tests/test_app.py::test_cases[2]"
            ]),
            "{args:?}"
        );
        assert_eq!(
            record["dropped"],
            json!(["tests/test_app.py::TestGroup::test_one"])
        );
        assert_eq!(
            record["markers"]["tests/test_app.py::TestGroup::test_slow"],
            json!(["slow"])
        );
        assert_eq!(record["collected"].as_array().unwrap().len(), 8);
    }
}

#[test]
fn the_record_is_written_where_pytest_was_invoked_and_ids_stay_the_rootdirs() {
    let project = Project::new();
    let out = project.pytest_in("tests", &["-p", "no:cacheprovider"]);
    assert!(
        matches!(out.status.code(), Some(0)),
        "{}",
        text(&out.stdout)
    );
    let record: Value = serde_json::from_str(
        &fs::read_to_string(project.root.join("tests/gate/run.json")).unwrap(),
    )
    .unwrap();
    assert!(record["tests"][FROZEN].is_object(), "{record:#}");
    // --lf deselects what passed last time: recorded as deselected.
    let record = project.record(&["--lf"], "gate/run.json");
    assert_eq!(record["complete"], true);
}

#[test]
fn an_interrupted_or_failed_collection_is_an_incomplete_record_the_gate_refuses() {
    let project = Project::new();
    project.write("tests/test_broken.py", "import not_a_module_anywhere\n");
    let out = project.pytest(&[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let (code, _, stderr) = project.gate(&["--run", "gate/run.json", "--changed", "/dev/null"]);
    assert_eq!(code, Some(2));
    common::assert_contains(
        &stderr,
        "gate/run.json: is an incomplete run record: collection failed",
    );

    // `-x` stops at the first failure: the tests it did not reach did not run.
    project.write(
        "tests/test_broken.py",
        "def test_fails():\n    assert False\n",
    );
    let out = project.pytest(&["-x", "-p", "no:randomly"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let record: Value =
        serde_json::from_str(&fs::read_to_string(project.root.join("gate/run.json")).unwrap())
            .unwrap();
    assert_eq!(record["complete"], false);
    let (code, _, stderr) = project.gate(&["--run", "gate/run.json", "--changed", "/dev/null"]);
    assert_eq!(code, Some(2));
    common::assert_contains(
        &stderr,
        "is an incomplete run record: pytest stopped early (-x or --maxfail: stopping after 1 failures)",
    );
}

#[test]
fn init_enables_the_plugin_in_pytest_9s_native_toml_table() {
    let project = Project::new();
    fs::remove_file(project.root.join("pytest.ini")).unwrap();
    project.write(
        "pyproject.toml",
        "[tool.pytest]\nstrict = true\nmarkers = [\"slow: slow tests\"]\n",
    );
    let out = hermetic(&mut Command::new(BIN))
        .arg("init")
        .current_dir(&project.root)
        .output()
        .unwrap();
    common::assert_contains(
        &text(&out.stdout),
        "updated  pyproject.toml (freezegate = true in [tool.pytest])",
    );
    let out = project.pytest(&["-p", "no:cacheprovider"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(
        project.root.join("gate/run.json").exists(),
        "the plugin ran from [tool.pytest]"
    );
}

#[test]
fn init_enables_the_plugin_in_setup_cfg_and_tox_ini_and_ignores_every_record() {
    for (file, config) in [
        ("setup.cfg", "[metadata]\nname = app\n\n[tool:pytest]\naddopts = -q\n\n[flake8]\nmax-line-length = 99\n"),
        ("tox.ini", "[tox]\nenvlist = py311\n\n[pytest]\naddopts = -q\n"),
    ] {
        let project = Project::new();
        fs::remove_file(project.root.join("pytest.ini")).unwrap();
        fs::remove_file(project.root.join(".gitignore")).unwrap();
        project.write(file, config);
        let out = hermetic(&mut Command::new(BIN))
            .arg("init")
            .current_dir(&project.root)
            .output()
            .unwrap();
        let header = if file == "setup.cfg" { "[tool:pytest]" } else { "[pytest]" };
        common::assert_contains(
            &text(&out.stdout),
            &format!("updated  {file} (freezegate = true in {header})"),
        );
        let edited = fs::read_to_string(project.root.join(file)).unwrap();
        common::assert_contains(&edited, &format!("{header}\nfreezegate = true\naddopts = -q\n"));
        let out = project.pytest(&["-p", "no:cacheprovider"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
        assert!(
            project.root.join("gate/run.json").exists(),
            "the plugin ran from {file}"
        );
        // A second init keeps it, and every record the README names is ignored by git.
        let again = hermetic(&mut Command::new(BIN))
            .arg("init")
            .current_dir(&project.root)
            .output()
            .unwrap();
        common::assert_contains(
            &text(&again.stdout),
            &format!("kept     {file} ({header} already sets freezegate)"),
        );
        for record in ["gate/run.json", "gate/base-run.json", "gate/run-1.json", "gate/proof.json", "gate/proof-2.json"] {
            let out = hermetic(&mut Command::new("git"))
                .args(["check-ignore", "-q", record])
                .current_dir(&project.root)
                .output()
                .unwrap();
            assert!(out.status.success(), "{record} is not ignored after init");
        }
    }
}

#[test]
fn bad_setups_stop_pytest_before_any_test_runs() {
    let project = Project::new();
    // The binary named by $FREEZEGATE is missing.
    let out = hermetic(&mut Command::new(python()))
        .args(["-m", "pytest", "-q"])
        .current_dir(&project.root)
        .env("FREEZEGATE", project.root.join("no-such-binary"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(4),
        "a usage error: {}",
        text(&out.stdout)
    );
    common::assert_contains(&text(&out.stderr), "$FREEZEGATE=");
    assert!(!text(&out.stdout).contains("passed"), "no test ran");

    // A ledger that does not parse: the binary's error, named.
    project.write("gate/freeze_ledger.json", "{\"schema\": 1, \"freezes\": [");
    let out = project.pytest(&[]);
    assert_eq!(out.status.code(), Some(4));
    common::assert_contains(&text(&out.stderr), "gate/freeze_ledger.json");
    project.write_ledger(&[FROZEN]);

    // An unwritable record path.
    project.write(
        "gate/blocked",
        "a file where the record's directory should be",
    );
    let out = project.pytest(&["--freezegate-record", "gate/blocked/run.json"]);
    assert_eq!(out.status.code(), Some(4));
    common::assert_contains(&text(&out.stderr), "cannot write the run record");

    // Off by default: without the ini option nothing is skipped or written.
    project.write("pytest.ini", "[pytest]\n");
    fs::remove_file(project.root.join("gate/run.json")).ok();
    let out = project.pytest(&["-p", "no:cacheprovider"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the frozen test runs, and fails"
    );
    assert!(!project.root.join("gate/run.json").exists());
}

/// `freeze add` without `--run`: the last run's record (`gate/run.json`) stands for the
/// collection, else a fresh collection, so a mistyped test id is refused with the nearest
/// collected one; and the expiry can be given as a date.
#[test]
fn freeze_add_without_run_checks_against_the_last_record_and_takes_an_expiry_date() {
    let project = Project::new();
    let add = |test_id: &str, window: &[&str]| {
        hermetic(&mut Command::new(BIN))
            .args([
                "freeze", "add", test_id, "--owner", "finley", "--reason", "BILL-2",
            ])
            .args([
                "--invariant",
                "never negative",
                "--property",
                PROPERTY,
                "--today",
                TODAY,
            ])
            .args(window)
            .current_dir(&project.root)
            .output()
            .unwrap()
    };
    // The mistyped id is refused with the nearest collected one, the collection said by
    // `note`; what it printed on stderr.
    let mistyped_is_refused = |note: &str| -> String {
        let out = add("tests/test_app.py::test_case[2]", &[]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        common::assert_contains(&text(&out.stderr), note);
        common::assert_contains(
            &text(&out.stdout),
            "is not in the collection; did you mean tests/test_app.py::test_cases[2],",
        );
        text(&out.stderr)
    };
    // No record yet: pytest collects, and the mistyped id is refused all the same.
    mistyped_is_refused(
        "note: no run record (gate/run.json): the test ids are checked against the collection of `",
    );
    let ledger = fs::read_to_string(project.root.join("gate/freeze_ledger.json")).unwrap();
    assert!(
        !ledger.contains("test_case[2]"),
        "nothing written: {ledger}"
    );
    project.record(&[], "gate/run.json");
    let said =
        mistyped_is_refused("note: test ids checked against the collection of gate/run.json");
    assert!(
        !said.contains("not of HEAD"),
        "the record is of HEAD: {said}"
    );
    // A commit since the run: the record may lack a test added since, and says so.
    project.write("NOTES.md", "later\n");
    project.commit("a commit after the run");
    let out = add("tests/test_app.py::test_case[2]", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    common::assert_contains(&text(&out.stderr), "gate/run.json is the run of ");
    common::assert_contains(
        &text(&out.stderr),
        "a test added since is not in it (pass --collect to collect now)",
    );
    // A run of the properties' file alone says nothing of tests/test_app.py: collected
    // now, the mistyped id is refused with the nearest one (not as absent from the run).
    project.record(&["tests/test_props.py"], "gate/run.json");
    mistyped_is_refused(
        "note: gate/run.json did not run tests/test_app.py (a run of part of the suite): the test ids are checked against the collection of `",
    );
    // An expiry past the window is refused as --days would be (FZ104), then one inside it.
    let out = add(
        "tests/test_app.py::test_cases[2]",
        &["--expires", "2027-01-30"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    common::assert_contains(&text(&out.stdout), "FZ104");
    let out = add(
        "tests/test_app.py::test_cases[2]",
        &["--expires", "2026-12-07"],
    );
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let ledger = fs::read_to_string(project.root.join("gate/freeze_ledger.json")).unwrap();
    common::assert_contains(&ledger, "\"expires\": \"2026-12-07\"");
    let out = add(
        "tests/test_app.py::TestGroup::test_one",
        &["--expires", "2026-12-32"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    common::assert_contains(&text(&out.stderr), "--expires 2026-12-32");
}

#[test]
fn the_record_serves_freeze_add_and_stats() {
    let project = Project::new();
    project.record(&[], "gate/run.json");
    let freeze = |property: &str| {
        hermetic(&mut Command::new(BIN))
            .args([
                "freeze",
                "add",
                "tests/test_app.py::test_cases[2]",
                "--owner",
                "finley",
                "--reason",
                "BILL-2",
                "--invariant",
                "never negative",
                "--property",
                property,
                "--run",
                "gate/run.json",
                "--today",
                TODAY,
            ])
            .current_dir(&project.root)
            .output()
            .unwrap()
    };
    let out = freeze("tests/test_props.py::test_never_negativ");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    common::assert_contains(&text(&out.stdout), &format!("did you mean {PROPERTY}?"));
    let out = freeze(PROPERTY);
    assert!(out.status.success(), "{}", text(&out.stdout));

    let out = hermetic(&mut Command::new(BIN))
        .args([
            "stats",
            "--run",
            "gate/run.json",
            "--format",
            "json",
            "--today",
            TODAY,
        ])
        .args(["--changed", "/dev/null"])
        .current_dir(&project.root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stats: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stats["deposit"]["evaluated"], true, "{stats:#}");

    // Against the base, under the trusted config as `check` takes it: the freeze added
    // here fails FZ202 (its property is not in the diff); the committed one passes every
    // rule but nothing proved it, so it is unproven, not a passing deposit.
    let stats = |format: &str| {
        let out = hermetic(&mut Command::new(BIN))
            .args(["stats", "--run", "gate/run.json", "--base", "main"])
            .args([
                "--trusted-ref",
                "main",
                "--today",
                TODAY,
                "--format",
                format,
            ])
            .current_dir(&project.root)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let json: Value = serde_json::from_str(&stats("json")).unwrap();
    assert_eq!(
        (&json["deposit"]["failing"], &json["deposit"]["unproven"]),
        (&json!(1), &json!(1)),
        "{json:#}"
    );
    common::assert_contains(
        &stats("markdown"),
        "| 1 of 2 freezes; 1 unproven (no proof record: give --proof) |",
    );
}

#[test]
fn init_sets_the_plugin_up_and_its_next_steps_work() {
    let project = Project::new();
    fs::remove_file(project.root.join("pytest.ini")).unwrap();
    fs::remove_file(project.root.join(".gitignore")).unwrap();
    fs::remove_file(project.root.join("gate/freeze_ledger.json")).unwrap();
    project.write(
        "pyproject.toml",
        "[project]\nname = \"app\"\n\n[tool.pytest.ini_options]\nmarkers = [\"slow: slow tests\"]\n",
    );
    let out = hermetic(&mut Command::new(BIN))
        .arg("init")
        .current_dir(&project.root)
        .output()
        .unwrap();
    let shown = text(&out.stdout);
    assert!(out.status.success(), "{shown}{}", text(&out.stderr));
    common::assert_contains(
        &shown,
        "updated  pyproject.toml (freezegate = true in [tool.pytest.ini_options])",
    );
    common::assert_contains(
        &shown,
        "freezegate run -- python -m pytest --freezegate-record gate/base-run.json",
    );
    common::assert_contains(
        &shown,
        "freezegate run --check --base origin/main --base-run gate/base-run.json --trusted-ref origin/main -- python -m pytest",
    );
    assert!(!shown.contains("examples/pytest-demo"), "{shown}");
    let pyproject = fs::read_to_string(project.root.join("pyproject.toml")).unwrap();
    common::assert_contains(&pyproject, "freezegate = true");
    common::assert_contains(
        &fs::read_to_string(project.root.join(".gitignore")).unwrap(),
        "gate/*run*.json",
    );
    project.write_ledger(&[FROZEN]);
    project.commit("adopt freezegate");
    // The plugin is on from pytest's own config; the record is ignored by git.
    let out = project.pytest(&["-p", "no:cacheprovider"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let record: Value =
        serde_json::from_str(&fs::read_to_string(project.root.join("gate/run.json")).unwrap())
            .unwrap();
    assert_eq!(record["tests"][FROZEN]["source"], "ledger");
    assert_eq!(
        record["dirty"], false,
        "gate/run.json is ignored, the checkout stays clean"
    );
    let again = hermetic(&mut Command::new(BIN))
        .arg("init")
        .current_dir(&project.root)
        .output()
        .unwrap();
    common::assert_contains(&text(&again.stdout), "kept     pyproject.toml");
    common::assert_contains(&text(&again.stdout), "kept     .gitignore");

    // Steps 2 and 3 as printed (origin/main is this repository's main).
    let (code, _, said) = project.supervised(None, &["--freezegate-record", "gate/base-run.json"]);
    assert_eq!(code, Some(0), "{said}");
    project.git(&["checkout", "-q", "-b", "patch"]);
    let (code, report, said) = project.supervised(Some(SHIPPED), &[]);
    assert_eq!(
        (code, codes(&report)),
        (Some(0), vec![]),
        "{report:#}\n{said}"
    );
    // The base's record is ignored by git too (`git check-ignore` fails otherwise).
    project.git(&["check-ignore", "-q", "gate/base-run.json"]);
}

// ---------------------------------------------------------------------------------------
// Every skip accounted for: each way a patch can withdraw a test fails with its rule.

/// Judges a patch whose one kind of violation is FZ601 (with and without xdist), at
/// `file:line` and saying `message`; the violation, for more checks.
#[track_caller]
fn unledgered_skip(patch: impl Fn(&Project), file: &str, line: u64, message: &str) -> Value {
    let report = judge_patch(nothing, patch, 1, &["FZ601"], &[]);
    let v = violation(&report, "FZ601").clone();
    assert_eq!(
        (v["file"].as_str(), v["line"].as_u64()),
        (Some(file), Some(line)),
        "{v}"
    );
    common::assert_contains(v["message"].as_str().unwrap(), message);
    v
}

#[test]
fn an_inline_skip_marker_is_fz601_pointing_at_the_decorator() {
    let v = unledgered_skip(
        |p| {
            edit(
                p,
                "tests/test_app.py",
                "class TestGroup:\n    def test_one",
                "class TestGroup:\n    @pytest.mark.skip(reason=\"flaky\")\n    def test_one",
            )
        },
        "tests/test_app.py",
        20, // the decorator's line
        "is skipped by a marker: flaky",
    );
    assert_eq!(v["test_id"], "tests/test_app.py::TestGroup::test_one");
}

#[test]
fn a_skip_marker_below_another_decorator_is_fz601_at_the_skip() {
    // Python gives the function the first decorator's line; the skip is the second.
    let v = unledgered_skip(
        |p| {
            edit(
                p,
                "tests/test_app.py",
                "@pytest.mark.parametrize(\"amount\", [1, 2, 3])\ndef test_cases",
                "@pytest.mark.parametrize(\"amount\", [1, 2, 3])\n@pytest.mark.skip(reason=\"later\")\ndef test_cases",
            )
        },
        "tests/test_app.py",
        15, // the skip decorator's line, not parametrize's
        "is skipped by a marker: later",
    );
    assert_eq!(v["test_id"], "tests/test_app.py::test_cases[1]");
}

#[test]
fn pytest_skip_in_a_body_is_fz601_at_the_call() {
    unledgered_skip(
        |p| {
            edit(
                p,
                "tests/test_app.py",
                "    def test_one(self):\n",
                "    def test_one(self):\n        pytest.skip(\"not today\")\n",
            )
        },
        "tests/test_app.py",
        21, // the pytest.skip() call
        "skips itself (pytest.skip()): not today",
    );
}

#[test]
fn a_class_level_skip_points_at_the_class_decorator() {
    let report = judge_patch(
        nothing,
        |p| {
            edit(
                p,
                "tests/test_app.py",
                "class TestGroup:",
                "@pytest.mark.skip(reason=\"whole class\")\nclass TestGroup:",
            )
        },
        1,
        &["FZ601"],
        &[],
    );
    for v in report["violations"].as_array().unwrap() {
        assert_eq!(v["line"], 19, "the class decorator: {v}");
    }
}

#[test]
fn skipif_true_is_fz601() {
    judge_patch(
        nothing,
        |p| {
            edit(
                p,
                "tests/test_app.py",
                "class Legacy",
                "@pytest.mark.skipif(True, reason=\"later\")\nclass Legacy",
            )
        },
        1,
        &["FZ601"],
        &[],
    );
}

#[test]
fn an_xfail_on_a_failing_test_is_fz601() {
    judge_patch(
        nothing,
        |p| {
            p.write("tests/test_new.py", "import pytest\n\n\n@pytest.mark.xfail(reason=\"known bug\")\ndef test_new():\n    assert 1 == 2\n")
        },
        1,
        &["FZ601"],
        &[],
    );
}

#[test]
fn pytest_skip_in_a_fixture_is_fz601_and_says_so() {
    unledgered_skip(
        |p| {
            p.write("tests/test_new.py", "import pytest\n\n\n@pytest.fixture\ndef service():\n    pytest.skip(\"no service here\")\n\n\ndef test_new(service):\n    assert service\n")
        },
        "tests/test_new.py",
        6, // the pytest.skip() call in the fixture, not the test pytest reports
        "is skipped by pytest.skip() in the fixture service: no service here",
    );
}

#[test]
fn pytest_xfail_in_a_test_body_is_fz601_at_the_call() {
    unledgered_skip(
        |p| {
            p.write("tests/test_new.py", "import pytest\n\n\n@pytest.mark.parametrize(\"n\", [1])\ndef test_new(n):\n    if n:\n        pytest.xfail(\"not yet\")\n    assert False\n")
        },
        "tests/test_new.py",
        7, // the pytest.xfail() call
        "marks itself xfail (pytest.xfail()): not yet",
    );
}

#[test]
fn a_module_pytestmark_is_fz601() {
    let report = judge_patch(
        |p| p.write("tests/test_more.py", "def test_more():\n    assert True\n"),
        |p| {
            p.write("tests/test_more.py", "import pytest\n\npytestmark = pytest.mark.skip(reason=\"whole module\")\n\n\ndef test_more():\n    assert True\n")
        },
        1,
        &["FZ601"],
        &[],
    );
    assert_eq!(
        violation(&report, "FZ601")["line"],
        3,
        "the pytestmark line"
    );
}

#[test]
fn importorskip_of_a_missing_module_is_fz601() {
    judge_patch(
        nothing,
        |p| {
            p.write("tests/test_optional.py", "import pytest\n\npytest.importorskip(\"not_a_module_anywhere\")\n\n\ndef test_needs_it():\n    assert True\n")
        },
        1,
        &["FZ601"],
        &[],
    );
}

#[test]
fn deselect_and_k_in_addopts_are_fz602() {
    for addopts in [
        "--deselect tests/test_app.py::TestGroup::test_one",
        "-k \"not test_one\"",
    ] {
        let report = judge_patch(
            nothing,
            |p| {
                let ini = fs::read_to_string(p.root.join("pytest.ini")).unwrap();
                p.write("pytest.ini", &format!("{ini}addopts = {addopts}\n"));
            },
            1,
            &["FZ502", "FZ602"],
            &[],
        );
        common::assert_contains(
            violation(&report, "FZ602")["message"].as_str().unwrap(),
            "addopts",
        );
    }
}

/// A tox.ini whose addopts go on over several lines: each FZ602 and FZ604 quotes the
/// option that did it, at its own line, one diagnostic per option however many tests it
/// withdrew.
#[test]
fn multi_line_addopts_are_one_diagnostic_per_option_at_its_line() {
    const TOX: &str =
        "[tox]\nenvlist = py\n\n[pytest]\nfreezegate = true\nmarkers =\n    slow: slow tests\n";
    let report = judge_patch(
        |p| {
            fs::remove_file(p.root.join("pytest.ini")).unwrap();
            p.write("tox.ini", TOX);
            p.write("tests/test_more.py", "def test_more():\n    assert True\n");
        },
        |p| {
            p.write(
                "tox.ini",
                &format!("{TOX}addopts =\n    --deselect tests/test_app.py::test_cases\n    -k \"not TestGroup\"\n    --ignore=tests/test_more.py\n"),
            )
        },
        1,
        &["FZ502", "FZ602", "FZ604"],
        &[],
    );
    let found: Vec<(String, String, u64)> = report["violations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["code"] != "FZ502")
        .map(|v| {
            (
                v["message"].as_str().unwrap().to_string(),
                v["file"].as_str().unwrap_or_default().to_string(),
                v["line"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    let expected = [
        ("tests/test_app.py::test_cases (3 cases: [1], [2] and [3]) were deselected by --deselect tests/test_app.py::test_cases in addopts; no shard ran them", 9),
        ("2 tests (tests/test_app.py::TestGroup::test_one, tests/test_app.py::TestGroup::test_slow) were deselected by -k 'not TestGroup' in addopts; no shard ran them", 10),
        ("tests/test_more.py::test_more was collected at the base but not now, though tests/test_more.py did not change: --ignore tests/test_more.py in addopts ignores it", 11),
    ];
    assert_eq!(
        found,
        expected
            .iter()
            .map(|(message, line)| (message.to_string(), "tox.ini".to_string(), *line))
            .collect::<Vec<_>>(),
        "{report:#}"
    );
}

#[test]
fn a_conftest_hook_that_drops_a_test_is_fz602() {
    let report = judge_patch(
        nothing,
        |p| {
            p.write("tests/conftest.py", "def pytest_collection_modifyitems(items):\n    items[:] = [i for i in items if 'test_one' not in i.nodeid]\n")
        },
        1,
        &["FZ502", "FZ602"],
        &[],
    );
    let dropped = violation(&report, "FZ602");
    common::assert_contains(
        dropped["message"].as_str().unwrap(),
        "was dropped from the run without being reported, by pytest_collection_modifyitems in tests/conftest.py (line 1), which the patch changes",
    );
    assert_eq!(
        (dropped["file"].as_str(), dropped["line"].as_u64()),
        (Some("tests/conftest.py"), Some(1))
    );
}

#[test]
fn collect_ignore_is_fz604_at_its_line() {
    let report = judge_patch(
        |p| p.write("tests/test_more.py", "def test_more():\n    assert True\n"),
        |p| {
            p.write(
                "tests/conftest.py",
                "import sys\n\ncollect_ignore = [\"test_more.py\"]\n",
            )
        },
        1,
        &["FZ502", "FZ604"],
        &[],
    );
    let hidden = violation(&report, "FZ604");
    common::assert_contains(
        hidden["message"].as_str().unwrap(),
        "though tests/test_more.py did not change: the patch's tests/conftest.py sets collect_ignore (line 3)",
    );
    assert_eq!(
        (hidden["file"].as_str(), hidden["line"].as_u64()),
        (Some("tests/conftest.py"), Some(3))
    );
}

#[test]
fn a_deleted_test_is_fz603_an_error() {
    let report = judge_patch(
        |p| {
            p.write(
                "tests/test_more.py",
                "def test_more():\n    assert True\n\n\ndef test_gone():\n    assert True\n",
            )
        },
        |p| p.write("tests/test_more.py", "def test_more():\n    assert True\n"),
        1,
        &["FZ603"],
        &[],
    );
    let removed = violation(&report, "FZ603");
    assert_eq!(removed["test_id"], "tests/test_more.py::test_gone");
    common::assert_contains(
        removed["message"].as_str().unwrap(),
        "tests/test_more.py::test_gone was removed (the suite shrank by 1 test)",
    );
}

/// `git mv tests/test_bag.py tests/bag_tset.py`: the file left the collection by the
/// patch's rename, which the diff shows (not FZ604's "did not change ... hidden").
#[test]
fn a_test_module_renamed_out_of_collection_is_the_patchs_rename() {
    let report = judge_patch(
        |p| {
            p.write(
                "tests/test_bag.py",
                "def test_add():\n    assert True\n\n\ndef test_remove():\n    assert True\n",
            )
        },
        |p| p.git(&["mv", "tests/test_bag.py", "tests/bag_tset.py"]),
        1,
        &["FZ603"],
        &[],
    );
    let found: Vec<&Value> = report["violations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["code"] == "FZ603")
        .collect();
    assert_eq!(found.len(), 2, "one per test of the file: {report:#}");
    common::assert_contains(
        found[0]["message"].as_str().unwrap(),
        "tests/test_bag.py::test_add left the collection with its file: the patch renames tests/test_bag.py to tests/bag_tset.py, which pytest does not collect (a rename withdraws every test in the file; the suite shrank by 2 tests)",
    );
    let moved_out = serde_json::json!([
        {"test_id": "tests/test_bag.py::test_add", "cause": "moved-out", "to": "tests/bag_tset.py"},
        {"test_id": "tests/test_bag.py::test_remove", "cause": "moved-out", "to": "tests/bag_tset.py"},
    ]);
    assert_eq!(report["touched"], moved_out, "{report:#}");

    // Renamed to a module pytest collects: the same tests at their new ids.
    let report = judge_patch(
        |p| p.write("tests/test_bag.py", "def test_add():\n    assert True\n"),
        |p| p.git(&["mv", "tests/test_bag.py", "tests/test_sack.py"]),
        0,
        &[],
        &[],
    );
    let moved = serde_json::json!([
        {"test_id": "tests/test_bag.py::test_add", "cause": "moved", "to": "tests/test_sack.py::test_add"},
    ]);
    assert_eq!(report["touched"], moved, "{report:#}");
}

#[test]
fn a_test_renamed_out_of_collection_is_named_at_its_new_def() {
    let report = judge_patch(
        |p| {
            p.write(
                "tests/test_more.py",
                "def test_more():\n    assert True\n\n\ndef test_edge():\n    assert True\n\n\ndef test_other_edge():\n    assert True\n",
            )
        },
        |p| {
            p.write(
                "tests/test_more.py",
                "def test_more():\n    assert True\n\n\ndef xtest_edge():\n    assert True\n",
            )
        },
        1,
        &["FZ603"],
        &[],
    );
    let found: Vec<&Value> = report["violations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["code"] == "FZ603")
        .collect();
    assert_eq!(found.len(), 2, "one per removed test: {report:#}");
    let renamed = found
        .iter()
        .find(|v| v["test_id"] == "tests/test_more.py::test_edge")
        .expect("the renamed test is named");
    common::assert_contains(
        renamed["message"].as_str().unwrap(),
        "tests/test_more.py::test_edge was renamed out of collection: def xtest_edge in tests/test_more.py is not collected",
    );
    assert_eq!(
        (renamed["file"].as_str(), renamed["line"].as_u64()),
        (Some("tests/test_more.py"), Some(5))
    );
    let deleted = found
        .iter()
        .find(|v| v["test_id"] == "tests/test_more.py::test_other_edge")
        .expect("the deleted test is named");
    common::assert_contains(
        deleted["message"].as_str().unwrap(),
        "tests/test_more.py::test_other_edge was removed (the suite shrank by 2 tests)",
    );
}

#[test]
fn a_skip_the_patch_baselines_itself_is_refused_under_the_trusted_ref() {
    judge_patch(
        nothing,
        |p| {
            edit(
                p,
                "tests/test_app.py",
                "class TestGroup:\n    def test_one",
                "class TestGroup:\n    @pytest.mark.skip(reason=\"flaky\")\n    def test_one",
            );
            p.write(
                "gate/skip_baseline.json",
                r#"{"version": 1, "skips": [{"test_id": "tests/test_app.py::TestGroup::test_one", "kind": "skip", "reason": "flaky"}]}"#,
            );
        },
        1,
        // FZ501 names the baseline the patch added; the trusted ref's (none) was used.
        &["FZ501", "FZ601"],
        &["--trusted-ref", "main"],
    );
}

/// The deposit: the compensating property asserts more.
fn strengthen_the_property(project: &Project) {
    edit(
        project,
        "tests/test_props.py",
        "assert price(amount) >= 0",
        "assert price(amount) >= 0\n    assert price(amount) >= amount or amount < 0",
    );
}

#[test]
fn an_honest_freeze_with_its_property_in_the_diff_passes() {
    judge_patch(
        nothing,
        |p| {
            p.write_ledger(&[FROZEN, "tests/test_app.py::TestGroup::test_one"]);
            strengthen_the_property(p);
        },
        0,
        &[],
        &[],
    );
}

#[test]
fn a_freeze_of_a_function_whose_cases_come_from_a_fixture_passes() {
    // No id in the collection is the function's own: its cases come from a
    // parametrized fixture. The freeze still holds them (FZ204, FZ401 stay quiet).
    judge_patch(
        nothing,
        |p| {
            p.write("tests/test_flags.py", "import pytest\n\n\n@pytest.fixture(params=[True, False])\ndef flag(request):\n    return request.param\n\n\ndef test_flag(flag):\n    assert flag is None\n");
            p.write_ledger(&[FROZEN, "tests/test_flags.py::test_flag"]);
            strengthen_the_property(p);
        },
        0,
        &[],
        &[],
    );
}

#[test]
fn a_repository_with_existing_skips_adopts_with_one_baseline_run() {
    let project = Project::new();
    let mut module = String::from("import sys\n\nimport pytest\n");
    for i in 0..10 {
        module.push_str(&format!(
            "\n\n@pytest.mark.skipif(sys.platform != \"win32\", reason=\"windows only {i}\")\ndef test_windows_{i}():\n    assert True\n"
        ));
    }
    project.write("tests/test_windows.py", &module);
    project.commit("ten platform skips");
    // The skip family alone, on a record, for a patch that changes nothing.
    let gate_fz6 = |record: &str| {
        project.gate(&["--run", record, "--changed", "/dev/null", "--select", "FZ6"])
    };
    project.record(&["-n", "2"], "gate/run.json");
    let (code, report, _) = gate_fz6("gate/run.json");
    assert_eq!((code, codes(&report).len()), (Some(1), 10), "{report:#}");

    let out = hermetic(&mut Command::new(BIN))
        .args(["baseline", "--run", "gate/run.json"])
        .current_dir(&project.root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    common::assert_contains(
        &text(&out.stdout),
        "gate/skip_baseline.json: 10 added, 0 pruned, 0 kept",
    );
    // A reviewer annotates an entry; a later baseline run keeps the note.
    let path = project.root.join("gate/skip_baseline.json");
    let mut baseline: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    baseline["skips"][0]["reviewed_by"] = json!("dana");
    fs::write(&path, serde_json::to_string_pretty(&baseline).unwrap()).unwrap();
    project.commit("adopt the gate: the existing skips, reviewed");
    project.record(&[], "gate/run.json");
    let (code, report, stderr) = gate_fz6("gate/run.json");
    assert_eq!(code, Some(0), "{report:#}\n{stderr}");

    // One platform skip goes away: --prune drops only its entry, and keeps the review.
    let module = fs::read_to_string(project.root.join("tests/test_windows.py")).unwrap();
    project.write(
        "tests/test_windows.py",
        &module.replacen(
            "@pytest.mark.skipif(sys.platform != \"win32\", reason=\"windows only 9\")\n",
            "",
            1,
        ),
    );
    project.commit("test_windows_9 runs everywhere");
    project.record(&[], "gate/run.json");
    let (code, report, _) = gate_fz6("gate/run.json");
    assert_eq!((code, codes(&report)), (Some(0), vec!["FZ605".to_string()]));
    let prune = |record: &str| {
        let out = hermetic(&mut Command::new(BIN))
            .args(["baseline", "--run", record, "--prune"])
            .current_dir(&project.root)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    // A run of part of the suite says nothing of the tests it did not collect: their
    // entries are neither unused (FZ605) nor pruned.
    project.record(&["tests/test_app.py"], "gate/part.json");
    let (code, report, _) = gate_fz6("gate/part.json");
    assert_eq!((code, codes(&report)), (Some(0), vec![]), "{report:#}");
    common::assert_contains(&prune("gate/part.json"), "0 added, 0 pruned, 10 kept");
    // Nor of the tests it deselected (a -k): test_windows_1's skip entry stays (its
    // deselection is added), the stale entry of test_windows_9 goes; the full run then
    // prunes the deselection.
    project.record(&["-k", "not windows_1"], "gate/deselected.json");
    common::assert_contains(&prune("gate/deselected.json"), "1 added, 1 pruned, 9 kept");
    common::assert_contains(&prune("gate/run.json"), "0 added, 1 pruned, 9 kept");
    let baseline: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(baseline["skips"].as_array().unwrap().len(), 9);
    assert!(
        baseline["skips"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["test_id"] == "tests/test_windows.py::test_windows_1"),
        "{baseline:#}"
    );
    assert_eq!(baseline["skips"][0]["reviewed_by"], "dana");
}

/// One diagnostic per cause, as a reviewer reads it: a skip marker on a parametrized
/// test is one FZ601 at the decorator listing its cases, and a file a conftest's
/// `collect_ignore` hid is one FZ604 naming the conftest change (JSON keeps every id).
#[test]
fn human_output_groups_the_cases_of_one_skip_and_the_tests_of_one_hidden_file() {
    let project = patched(
        |p| {
            p.write(
                "tests/test_more.py",
                "def test_more():\n    assert True\n\n\ndef test_also():\n    assert True\n",
            )
        },
        |p| {
            edit(
                p,
                "tests/test_app.py",
                "@pytest.mark.parametrize(\"amount\", [1, 2, 3])\n",
                "@pytest.mark.skip(reason=\"slow on CI\")\n@pytest.mark.parametrize(\"amount\", [1, 2, 3])\n",
            );
            p.write("tests/conftest.py", "collect_ignore = [\"test_more.py\"]\n");
        },
    );
    project.record(&["-p", "no:xdist"], "gate/run.json");
    let args = JUDGED;
    let (_, report, stderr) = project.gate(&args);
    let mut found: Vec<(String, Vec<String>)> = report["violations"]
        .as_array()
        .unwrap_or_else(|| panic!("{stderr}"))
        .iter()
        .map(|v| {
            let ids = v["test_ids"].as_array().map_or(Vec::new(), |ids| {
                ids.iter()
                    .map(|id| id.as_str().unwrap().to_string())
                    .collect()
            });
            (v["code"].as_str().unwrap().to_string(), ids)
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("FZ502".to_string(), vec![]),
            (
                "FZ601".to_string(),
                (1..=3)
                    .map(|n| format!("tests/test_app.py::test_cases[{n}]"))
                    .collect()
            ),
            (
                "FZ604".to_string(),
                vec![
                    "tests/test_more.py::test_more".to_string(),
                    "tests/test_more.py::test_also".to_string()
                ]
            ),
        ],
        "{report:#}"
    );
    let out = hermetic(&mut Command::new(BIN))
        .args(["check", "--today", TODAY])
        .args(args)
        .current_dir(&project.root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    insta::assert_snapshot!(text(&out.stdout));
}

/// A decorator that wraps a test (functools.wraps: `@mock.patch`, `@unittest.skip`) leaves
/// the test's own lines in the record, not its wrapper's in the decorator's module.
#[test]
fn a_wrapped_test_keeps_its_own_lines() {
    let project = Project::new();
    project.write(
        "tests/test_wrapped.py",
        "from unittest import mock\n\n\n@mock.patch(\"os.getcwd\")\ndef test_patched(getcwd):\n    getcwd.return_value = \"/\"\n    assert True\n",
    );
    let record = project.record(&["-p", "no:xdist"], "gate/run.json");
    let row = &record["tests"]["tests/test_wrapped.py::test_patched"];
    assert_eq!(row["outcome"], "passed", "{row}");
    assert_eq!(row["lines"], json!([4, 7]), "{row}");
}

/// Every skip points at the line that caused it, worded for what it is, with and without
/// xdist (the place is found where the test ran and travels on its report).
#[test]
fn skips_point_at_the_line_that_set_them() {
    let project = patched(
        |p| {
            p.write("tests/test_legacy.py", "import unittest\n\n\nclass TestOff(unittest.TestCase):\n    def test_a(self):\n        pass\n\n    def test_b(self):\n        pass\n\n\nclass TestCalls(unittest.TestCase):\n    def test_call(self):\n        self.assertTrue(True)\n\n    def test_raise(self):\n        self.assertTrue(True)\n\n    def test_method(self):\n        self.assertTrue(True)\n");
            p.write("tests/test_store.py", "import pytest\n\n\n@pytest.fixture\ndef db():\n    yield 1\n\n\ndef test_read(db):\n    pass\n\n\ndef test_quarantined():\n    pass\n\n\ndef test_hooked():\n    pass\n");
            p.write(
                "tests/test_slow.py",
                "def test_s1():\n    pass\n\n\ndef test_s2():\n    pass\n",
            );
        },
        |p| {
            let legacy = "tests/test_legacy.py";
            edit(
                p,
                legacy,
                "class TestOff(",
                "@unittest.skip(\"legacy\")\nclass TestOff(",
            );
            edit(
                p,
                legacy,
                "    def test_call(self):\n        self.assertTrue(True)",
                "    def test_call(self):\n        x = 1\n        self.skipTest(\"no network\")",
            );
            edit(
                p,
                legacy,
                "    def test_raise(self):\n        self.assertTrue(True)",
                "    def test_raise(self):\n        raise unittest.SkipTest(\"no db\")",
            );
            // @unittest.skip wraps the method in a function of unittest's (case.py).
            edit(
                p,
                legacy,
                "    def test_method(self):",
                "    @unittest.skip(\"flaky\")\n    def test_method(self):",
            );
            p.write("tests/test_store.py", "import pytest\n\n\n@pytest.fixture\ndef db():\n    pytest.skip(\"no database\")\n    yield 1\n\n\ndef test_read(db):\n    pass\n\n\ndef test_quarantined():\n    pass\n\n\ndef test_hooked():\n    pass\n");
            p.write("tests/test_slow.py", "import pytest\n\npytestmark = pytest.mark.skip(reason=\"slow\")\n\n\ndef test_s1():\n    pass\n\n\ndef test_s2():\n    pass\n");
            p.write("tests/conftest.py", "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n    for item in items:\n        if item.name == \"test_quarantined\":\n            item.add_marker(pytest.mark.skip(reason=\"quarantined\"))\n\n\ndef pytest_runtest_setup(item):\n    if item.name == \"test_hooked\":\n        pytest.skip(\"hooked\")\n");
            p.write("pytest.ini", "[pytest]\nfreezegate = true\naddopts = -k \"not test_cases\"\nmarkers =\n    slow: slow tests\n");
        },
    );
    for workers in [vec!["-p", "no:xdist"], vec!["-n", "2"]] {
        project.record(&workers, "gate/run.json");
        let (_, report, stderr) = project.gate(&JUDGED);
        let at = |code: &str, test_id: &str| -> (String, String, u64) {
            let v = report["violations"]
                .as_array()
                .unwrap_or_else(|| panic!("{stderr}"))
                .iter()
                .find(|v| v["code"] == code && v["test_id"] == test_id)
                .unwrap_or_else(|| panic!("{workers:?}: no {code} for {test_id}: {report:#}"));
            (
                v["message"].as_str().unwrap().to_string(),
                v["file"].as_str().unwrap_or_default().to_string(),
                v["line"].as_u64().unwrap_or_default(),
            )
        };
        for (code, test_id, said, file, line) in [
            ("FZ601", "tests/test_legacy.py::TestOff::test_a", "are skipped by @unittest.skip on its class: legacy", "tests/test_legacy.py", 4),
            ("FZ601", "tests/test_legacy.py::TestCalls::test_call", "skips itself (self.skipTest()): no network", "tests/test_legacy.py", 16),
            ("FZ601", "tests/test_legacy.py::TestCalls::test_raise", "skips itself (raise unittest.SkipTest): no db", "tests/test_legacy.py", 19),
            ("FZ601", "tests/test_legacy.py::TestCalls::test_method", "is skipped by @unittest.skip: flaky", "tests/test_legacy.py", 21),
            ("FZ601", "tests/test_store.py::test_read", "is skipped by pytest.skip() in the fixture db: no database", "tests/test_store.py", 6),
            ("FZ601", "tests/test_store.py::test_quarantined", "is skipped by a marker that pytest_collection_modifyitems in tests/conftest.py added: quarantined", "tests/conftest.py", 7),
            ("FZ601", "tests/test_store.py::test_hooked", "is skipped by pytest.skip() in the hook pytest_runtest_setup of tests/conftest.py: hooked", "tests/conftest.py", 12),
            ("FZ601", "tests/test_slow.py::test_s1", "are skipped by its module's pytestmark: slow", "tests/test_slow.py", 3),
            ("FZ602", "tests/test_app.py::test_cases[1]", "were deselected by -k 'not test_cases' in addopts", "pytest.ini", 3),
        ] {
            let (message, at_file, at_line) = at(code, test_id);
            common::assert_contains(&message, said);
            assert_eq!((at_file.as_str(), at_line), (file, line), "{workers:?} {test_id}: {message}");
        }
    }
}

/// Adoption as `init` prints it, on a fresh clone of a suite that already skips and
/// deselects tests: four commands, one run of the suite, and the check passes on the
/// default branch itself (no `--base`: the commit is its own base).
#[test]
fn a_fresh_clone_adopts_the_gate_in_four_commands_and_one_run() {
    let project = Project::new();
    fs::remove_file(project.root.join("gate/freeze_ledger.json")).unwrap();
    project.write(
        "pytest.ini",
        // `-vv` in addopts, as bidict has it: `init`'s collect_command still reads a list
        // of ids (a `-q` would only offset it, and pytest would print its tree).
        "[pytest]\naddopts = -vv --deselect tests/test_app.py::test_rounding\nmarkers =\n    slow: slow tests\n",
    );
    project.write(
        "tests/test_windows.py",
        "import sys\n\nimport pytest\n\n\n@pytest.mark.skipif(sys.platform != \"win32\", reason=\"windows only\")\ndef test_windows():\n    assert True\n",
    );
    project.write(".gitignore", ".hypothesis/\n__pycache__/\n.pytest_cache/\n");
    project.commit("a suite with a skip and a deselection");
    let clones = tempfile::tempdir().unwrap();
    let (bare, work) = (clones.path().join("origin.git"), clones.path().join("work"));
    for (args, dir) in [
        (
            vec!["clone", "-q", "--bare", ".", bare.to_str().unwrap()],
            &project.root,
        ),
        (
            vec![
                "clone",
                "-q",
                bare.to_str().unwrap(),
                work.to_str().unwrap(),
            ],
            &project.root,
        ),
    ] {
        common::git(dir, &args);
    }
    // The newcomer's shell: the project's venv first on PATH, and freezegate.
    let path = format!(
        "{}:{}:{}",
        python().parent().unwrap().display(),
        std::path::Path::new(BIN).parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let shell = |line: &str| {
        let out = hermetic(&mut Command::new("sh"))
            .args(["-c", line])
            .env("PATH", &path)
            .current_dir(&work)
            .output()
            .unwrap();
        (
            out.status.code(),
            format!("{}{}", text(&out.stdout), text(&out.stderr)),
        )
    };

    let (code, printed) = shell("freezegate init");
    assert_eq!(code, Some(0), "{printed}");
    let steps: Vec<&str> = printed
        .lines()
        .map(str::trim)
        .filter(|line| {
            line.starts_with("git add ") || line.starts_with("freezegate run --baseline")
        })
        .collect();
    assert_eq!(
        steps,
        [
            "git add freezegate.toml gate/freeze_ledger.json .gitignore pytest.ini && git commit -m \"Adopt freezegate\"",
            "freezegate run --baseline --check -- python -m pytest",
            "git add gate/skip_baseline.json && git commit -m \"freezegate: adopt the existing skips\"",
        ],
        "{printed}"
    );
    let mut said = Vec::new();
    for step in steps {
        let (code, out) = shell(step);
        assert_eq!(code, Some(0), "{step}:\n{out}");
        said.push(out);
    }
    // The one run: the suite's skip and deselection adopted, and the check passed on main.
    common::assert_contains(
        &said[1],
        "gate/skip_baseline.json: 2 added, 0 pruned, 0 kept",
    );
    common::assert_contains(&said[1], "judged as the branch itself");
    common::assert_contains(&said[1], "passed");
    assert!(!said[1].contains("FZ001"), "{}", said[1]);
    let baseline: Value =
        serde_json::from_str(&fs::read_to_string(work.join("gate/skip_baseline.json")).unwrap())
            .unwrap();
    let kinds: Vec<(&str, &str)> = baseline["skips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["test_id"].as_str().unwrap(), s["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("tests/test_app.py::test_rounding", "deselected"),
            ("tests/test_windows.py::test_windows", "skip"),
        ]
    );
    // Both commits landed and the tree is clean: nothing else was left to commit.
    assert_eq!(
        common::git(&work, &["status", "--porcelain", "--untracked-files=no"]),
        ""
    );
    assert_eq!(
        common::git(&work, &["rev-list", "--count", "origin/main..HEAD"]),
        "2"
    );

    // `freeze add --collect` reads the collection despite the `-vv`: a mistyped id is
    // refused (FZ204, exit 1) with the ids pytest collected.
    let (code, out) = shell(
        "freezegate freeze add tests/test_app.py::test_casez --collect --owner me --reason FLAKE-1 --invariant 'rounds half up' --property tests/test_props.py::test_never_negative",
    );
    assert_eq!(code, Some(1), "{out}");
    assert!(!out.contains("tree output"), "{out}");
    common::assert_contains(&out, "did you mean tests/test_app.py::test_cases[1]");

    // A clone where git does not know origin's default branch: the check cannot tell it is
    // on it, asks for the patch's changes (FZ001), and says how to judge it anyway.
    common::git(&work, &["remote", "set-head", "origin", "--delete"]);
    let (code, out) = shell("freezegate run --check -- python -m pytest");
    assert_eq!(code, Some(1), "{out}");
    common::assert_contains(&out, "FZ001");
    common::assert_contains(
        &out,
        "git does not know origin's default branch here (no refs/remotes/origin/HEAD)",
    );
    common::assert_contains(&out, "give --base HEAD (the commit against itself)");
    let (code, out) = shell("freezegate run --check --base HEAD -- python -m pytest");
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("FZ001"), "{out}");
}

// ---------------------------------------------------------------------------------------
// A property must not get weaker (FZ304): every Hypothesis test's settings are in the
// record, and a patch that makes one search less fails at the line that did it.

/// A property with Hypothesis's default settings (100 examples, every phase), and a
/// state machine with its own; on `main` before the patch.
const WEAK: &str = r#"from hypothesis import example, given, settings, Phase, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from tests.test_app import price


@given(st.integers())
def test_price_is_idempotent(amount):
    assert price(price(amount)) == price(amount)


class Counter(RuleBasedStateMachine):
    total = 0

    @rule(amount=st.integers(min_value=0, max_value=9))
    def add(self, amount):
        self.total += price(amount)
        assert self.total >= 0


TestCounter = Counter.TestCase
"#;
const WEAK_ID: &str = "tests/test_weak.py::test_price_is_idempotent";
const COUNTER_ID: &str = "tests/test_weak.py::TestCounter::runTest";

fn weak_property(project: &Project) {
    project.write("tests/test_weak.py", WEAK);
}

/// A patch of `tests/test_weak.py` that makes a property search less: FZ304 (and
/// `also`) with and without xdist, at `file:line`, saying `message`.
#[track_caller]
fn weakened(patch: impl Fn(&Project), also: &[&str], file: &str, line: u64, message: &str) {
    let mut expected = vec!["FZ304"];
    expected.extend(also);
    expected.sort();
    let report = judge_patch(weak_property, patch, 1, &expected, &[]);
    let v = violation(&report, "FZ304");
    assert_eq!(v["severity"], "error", "{v}");
    assert_eq!(
        (v["file"].as_str(), v["line"].as_u64()),
        (Some(file), Some(line)),
        "{v}"
    );
    common::assert_contains(v["message"].as_str().unwrap(), message);
}

fn decorate(project: &Project, decorators: &str) {
    edit(
        project,
        "tests/test_weak.py",
        "@given(st.integers())\ndef test_price_is_idempotent",
        &format!("{decorators}@given(st.integers())\ndef test_price_is_idempotent"),
    );
}

#[test]
fn the_record_has_every_hypothesis_tests_settings_and_the_same_under_xdist() {
    let project = Project::new();
    weak_property(&project);
    project.commit("a property with default settings and a state machine");
    let plain = project.record(&["-p", "no:xdist"], "gate/run0.json");
    let sharded = project.record(&["-n", "2"], "gate/run2.json");
    assert_eq!(plain["hypothesis"], sharded["hypothesis"]);
    let tests = &plain["hypothesis"]["tests"];
    // Not only the ledger's property: every Hypothesis test, and no other test.
    let mut ids: Vec<&String> = tests.as_object().unwrap().keys().collect();
    ids.sort();
    assert_eq!(ids, [PROPERTY, COUNTER_ID, WEAK_ID], "{tests:#}");
    let all = json!(["explicit", "reuse", "generate", "target", "shrink", "explain"]);
    let default = &tests[WEAK_ID];
    assert_eq!(default["max_examples"], 100);
    assert_eq!(default["phases"], all);
    assert_eq!(default["database"], true);
    assert_eq!(default["derandomize"], false);
    assert_eq!(default["given"], true);
    assert_eq!(default["examples"], 0);
    assert_eq!(
        (&default["file"], &default["line"]),
        (&json!("tests/test_weak.py"), &json!(7))
    );
    assert!(default.get("settings_line").is_none(), "{default}");
    // The ledger's property sets its own: at its decorator, with what that line sets.
    let own = &tests[PROPERTY];
    assert_eq!(own["max_examples"], 50);
    assert_eq!(own["database"], false);
    assert_eq!(own["derandomize"], true);
    assert_eq!(own["settings_line"], 6);
    assert_eq!(
        own["settings_keys"],
        json!(["database", "derandomize", "max_examples"])
    );
    // The state machine, where pytest collected it.
    let machine = &tests[COUNTER_ID];
    assert_eq!(
        (&machine["file"], &machine["line"]),
        (&json!("tests/test_weak.py"), &json!(21))
    );
    assert_eq!(machine["given"], true);
    assert_eq!(machine["stateful_step_count"], 50);
    // Steps are a state machine's: a @given test has none to cut.
    assert!(default.get("stateful_step_count").is_none(), "{default}");
    assert_eq!(plain["hypothesis"]["profile"]["name"], "default");
}

#[test]
fn max_examples_cut_to_one_is_fz304_at_the_decorator() {
    weakened(
        |p| decorate(p, "@settings(max_examples=1)\n"),
        &[],
        "tests/test_weak.py",
        7,
        &format!("{WEAK_ID}: max_examples 100 at base, 1 in this patch"),
    );
}

#[test]
fn the_generate_phase_dropped_is_fz304() {
    weakened(
        |p| decorate(p, "@settings(phases=[Phase.explicit])\n"),
        // With no example to run, Hypothesis skips the test too.
        &["FZ601"],
        "tests/test_weak.py",
        7,
        "the generate phase ran at base, not in this patch (phases: explicit)",
    );
}

#[test]
fn a_property_left_only_its_examples_is_fz304() {
    weakened(
        |p| decorate(p, "@example(0)\n@example(7)\n@settings(phases=[Phase.explicit])\n"),
        &[],
        "tests/test_weak.py",
        9, // the settings line, below the examples
        "@example-only in this patch (2 explicit examples; phases: explicit), generated inputs at base",
    );
}

#[test]
fn a_state_machine_cut_by_its_testcase_settings_is_fz304() {
    // Fewer runs, and fewer steps in each (Hypothesis's default is 50).
    weakened(
        |p| {
            edit(
                p,
                "tests/test_weak.py",
                "TestCounter = Counter.TestCase\n",
                "TestCounter = Counter.TestCase\nTestCounter.settings = settings(max_examples=2, stateful_step_count=1)\n",
            )
        },
        &[],
        "tests/test_weak.py",
        22,
        &format!("{COUNTER_ID}: max_examples 100 at base, 2 in this patch and stateful_step_count 50 at base, 1 in this patch"),
    );
}

#[test]
fn a_settings_profile_in_a_conftest_is_fz304_at_its_load() {
    // The ledger's property sets its own max_examples: the profile cuts only the
    // others, and the report is at the conftest line that loads it (FZ502 warns that
    // the patch changed a conftest).
    weakened(
        |p| {
            p.write(
                "conftest.py",
                "from hypothesis import settings\n\nsettings.register_profile(\"quick\", max_examples=5)\nsettings.load_profile(\"quick\")\n",
            )
        },
        &["FZ502"],
        "conftest.py",
        4,
        "max_examples 100 at base, 5 in this patch",
    );
}

#[test]
fn more_examples_or_an_edited_body_is_no_fz304() {
    judge_patch(
        weak_property,
        |p| decorate(p, "@settings(max_examples=300)\n"),
        0,
        &[],
        &[],
    );
    judge_patch(
        weak_property,
        |p| {
            edit(
                p,
                "tests/test_weak.py",
                "    assert price(price(amount)) == price(amount)\n",
                "    once = price(amount)\n    assert price(once) == once\n",
            )
        },
        0,
        &[],
        &[],
    );
}
