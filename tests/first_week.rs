//! What a team meets in its first week (issue "What real projects hit first"): each test
//! tries one of the defects a real suite showed, against the built binary.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{freeze, freezegate, text, write, World, FROZEN, PROPERTY};
use serde_json::{json, Value};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

const LEDGER: &str = "gate/freeze_ledger.json";

fn ledger_with(freezes: Value) -> String {
    serde_json::to_string_pretty(&json!({"schema": 1, "freezes": freezes})).unwrap() + "\n"
}

/// `freeze add` checks its ids against a collection: these tests give one (no pytest runs).
const COLLECTED: &str = "gate/collected.txt";

fn add(test_id: &str, property: &str) -> Vec<String> {
    [
        "add",
        test_id,
        "--owner",
        "finley",
        "--reason",
        "BILL-1",
        "--invariant",
        "i",
        "--property",
        property,
        "--collected",
        COLLECTED,
    ]
    .map(String::from)
    .to_vec()
}

/// Every id these tests freeze or deposit, as `pytest --collect-only -q` prints them.
fn collect_all(dir: &Path) {
    let ids = [
        FROZEN,
        PROPERTY,
        "tests/t.py::test_x",
        "tests/t.py::test_y",
        "tests/t.py::test_z",
        "tests/t.py::test_a",
        "tests/t.py::test_b",
        "tests/props/test_q.py::test_q",
    ];
    write(
        dir,
        COLLECTED,
        &format!(
            "{}\n\n{} tests collected in 0.01s\n",
            ids.join("\n"),
            ids.len()
        ),
    );
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn freeze_add_refuses_what_the_ledger_alone_shows_is_wrong_and_writes_nothing() {
    let dir = common::repo_dir();
    collect_all(dir.path());
    let original = ledger_with(json!([common::entry()]));
    write(dir.path(), LEDGER, &original);

    // A self-deposit (FZ206).
    let out = freeze(
        dir.path(),
        &args(&add("tests/t.py::test_x", "tests/t.py::test_x")),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    common::assert_contains(&text(&out.stdout), "FZ206");
    // A property that is itself frozen (FZ203).
    let out = freeze(dir.path(), &args(&add("tests/t.py::test_y", FROZEN)));
    assert_eq!(out.status.code(), Some(1));
    common::assert_contains(&text(&out.stdout), "FZ203");
    // A window too long (FZ104): the snippet is the proposed edit, named as such.
    let mut long = add("tests/t.py::test_z", PROPERTY);
    long.extend(["--days".into(), "30".into()]);
    let out = freeze(dir.path(), &args(&long));
    assert_eq!(out.status.code(), Some(1));
    let shown = text(&out.stdout);
    common::assert_contains(&shown, "FZ104");
    common::assert_contains(
        &shown,
        "gate/freeze_ledger.json (proposed edit, not written)",
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join(LEDGER)).unwrap(),
        original,
        "nothing was written"
    );

    // With a collection, a misspelt property is refused with the nearest collected id.
    write(
        dir.path(),
        COLLECTED,
        &format!("{FROZEN}\n{PROPERTY}\ntests/t.py::test_w\n\n3 tests collected in 0.01s\n"),
    );
    let typo = add("tests/t.py::test_w", "tests/props/test_p.py::test_porp");
    let out = freeze(dir.path(), &args(&typo));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    common::assert_contains(&text(&out.stdout), &format!("did you mean {PROPERTY}?"));
    // A frozen test the collection does not have is a misspelt id: refused, with the
    // nearest collected one.
    let uncollected = add("tests/t.py::test_ww", PROPERTY);
    let out = freeze(dir.path(), &args(&uncollected));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let shown = text(&out.stdout);
    common::assert_contains(&shown, "FZ204");
    common::assert_contains(&shown, "did you mean tests/t.py::test_w?");
    assert_eq!(
        std::fs::read_to_string(dir.path().join(LEDGER)).unwrap(),
        original,
        "nothing was written"
    );
    let good = add("tests/t.py::test_w", PROPERTY);
    let out = freeze(dir.path(), &args(&good));
    assert!(out.status.success(), "{}", text(&out.stdout));
}

/// A parametrized test misspelt by its function's id: a frozen test's id is suggested as
/// the function's id (a freeze holds every case), a property's is not (FZ201 would refuse
/// the function's id in turn).
#[test]
fn a_misspelt_parametrized_function_is_suggested_for_a_freeze_not_for_a_property() {
    let dir = common::repo_dir();
    write(dir.path(), LEDGER, &ledger_with(json!([])));
    let cases = [
        "first-case-with-a-long-name",
        "second-case-with-a-long-name",
    ]
    .map(|case| format!("tests/t.py::test_quantity[{case}]"));
    write(
        dir.path(),
        COLLECTED,
        &format!(
            "{}\n{PROPERTY}\n\n3 tests collected in 0.01s\n",
            cases.join("\n")
        ),
    );
    let out = freeze(
        dir.path(),
        &args(&add("tests/t.py::test_quantiyt", PROPERTY)),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    common::assert_contains(
        &text(&out.stdout),
        "tests/t.py::test_quantiyt is not in the collection; did you mean tests/t.py::test_quantity?",
    );
    let out = freeze(
        dir.path(),
        &args(&add(
            PROPERTY.replace("test_prop", "test_pr").as_str(),
            "tests/t.py::test_quantiyt",
        )),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    common::assert_contains(
        &shown,
        "the property tests/t.py::test_quantiyt is not in the collection",
    );
    assert!(
        !shown.contains("did you mean tests/t.py::test_quantity"),
        "{shown}"
    );
}

#[test]
fn freeze_add_refuses_freezing_another_freezes_property() {
    let dir = common::repo_dir();
    collect_all(dir.path());
    let original = ledger_with(json!([common::entry()]));
    write(dir.path(), LEDGER, &original);
    // The existing freeze's deposit is PROPERTY: freezing it leaves that freeze with a
    // frozen property (FZ203 on the other entry), so nothing is written.
    let out = freeze(
        dir.path(),
        &args(&add(PROPERTY, "tests/props/test_q.py::test_q")),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let shown = text(&out.stdout);
    common::assert_contains(&shown, "FZ203");
    common::assert_contains(&shown, &format!("the property {PROPERTY} is frozen itself"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join(LEDGER)).unwrap(),
        original
    );
}

#[test]
fn freeze_add_after_the_last_toml_entry_was_removed_writes_freezes_tables() {
    let dir = common::repo_dir();
    collect_all(dir.path());
    write(
        dir.path(),
        "freezegate.toml",
        "ledger = \"gate/freeze_ledger.toml\"\n",
    );
    write(
        dir.path(),
        "gate/freeze_ledger.toml",
        "schema = 1\nfreezes = []\n",
    );
    for id in ["tests/t.py::test_a", "tests/t.py::test_b"] {
        let out = freeze(dir.path(), &args(&add(id, PROPERTY)));
        assert!(out.status.success(), "{}", text(&out.stdout));
    }
    let now = std::fs::read_to_string(dir.path().join("gate/freeze_ledger.toml")).unwrap();
    assert_eq!(now.matches("[[freezes]]").count(), 2, "{now}");
    assert!(!now.contains("freezes = ["), "{now}");
    common::assert_contains(&now, "test_id = \"tests/t.py::test_b\"\n");
}

#[test]
fn freeze_remove_of_the_last_toml_entry_leaves_an_empty_list() {
    let dir = common::repo_dir();
    write(
        dir.path(),
        "freezegate.toml",
        "ledger = \"gate/freeze_ledger.toml\"\n",
    );
    let ledger = common::convert(
        &json!({"schema": 1, "freezes": [common::entry()]}),
        "x.toml",
    );
    write(dir.path(), "gate/freeze_ledger.toml", &ledger);
    let out = freeze(dir.path(), &["remove", FROZEN]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let now = std::fs::read_to_string(dir.path().join("gate/freeze_ledger.toml")).unwrap();
    common::assert_contains(&now, "freezes = []");
    let out = freezegate(dir.path())
        .args(["check", "--select", "FZ1", "--today", "2026-11-30"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the emptied ledger parses: {}",
        text(&out.stderr)
    );
}

#[test]
fn writes_keep_the_mode_of_the_file_they_replace_and_new_files_follow_the_umask() {
    let dir = common::repo_dir();
    let out = freezegate(dir.path()).arg("init").output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    collect_all(dir.path());
    // The test process runs under the usual umask 022 (CI and the shell alike).
    assert_eq!(mode(&dir.path().join("freezegate.toml")), 0o644);
    assert_eq!(mode(&dir.path().join(LEDGER)), 0o644);

    let ledger = dir.path().join(LEDGER);
    std::fs::set_permissions(&ledger, std::fs::Permissions::from_mode(0o664)).unwrap();
    let out = freeze(dir.path(), &args(&add(FROZEN, PROPERTY)));
    assert!(out.status.success(), "{}", text(&out.stdout));
    assert_eq!(mode(&ledger), 0o664, "freeze add kept the ledger's mode");

    let world = World::passing();
    let report = dir.path().join("out/report.json");
    let mut world = world;
    world.extra_args = vec![
        "--output".into(),
        report.to_str().unwrap().into(),
        "--report".into(),
        format!("sarif={}", dir.path().join("out/r.sarif").display()),
    ];
    let run_dir = tempfile::tempdir().unwrap();
    world.run_in(run_dir.path(), "json");
    assert_eq!(mode(&report), 0o644);
    assert_eq!(mode(&dir.path().join("out/r.sarif")), 0o644);
}

#[test]
fn test_runs_right_after_init() {
    let dir = common::repo_dir();
    let out = freezegate(dir.path()).arg("test").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    common::assert_contains(&text(&out.stderr), "policies/tests: does not exist");
    common::assert_contains(&text(&out.stderr), "freezegate init --pack");

    // A plain init copies no pack (its config uses the builtin one); --pack does.
    let out = freezegate(dir.path()).arg("init").output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !dir.path().join("policies").exists(),
        "{}",
        text(&out.stdout)
    );
    let out = freezegate(dir.path())
        .args(["init", "--pack"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    common::assert_contains(&text(&out.stdout), "fixture files");
    let out = freezegate(dir.path()).arg("test").output().unwrap();
    let shown = text(&out.stdout);
    assert!(out.status.success(), "{shown}\n{}", text(&out.stderr));
    assert!(shown.contains(" passed, 0 failed"), "{shown}");
}

#[test]
fn rules_that_did_not_run_are_never_passed() {
    let dir = tempfile::tempdir().unwrap();
    let mut world = World::passing();
    world.extra_args = vec!["--select".into(), "FZ207,FZ208".into()];
    let out = world.run_in(dir.path(), "human");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let shown = text(&out.stderr);
    common::assert_contains(
        &shown,
        "no selected rule was evaluated (FZ207 and FZ208): give --coverage FILE",
    );
    assert!(!shown.contains("--junit"), "the run gave results: {shown}");

    // A core rule selected on its own is a check: it runs (here, not evaluated for want
    // of --trusted-ref, so nothing was checked: exit 2 naming it).
    let mut world = World::passing();
    world.extra_args = vec!["--select".into(), "FZ501".into()];
    let out = world.run_in(dir.path(), "human");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    common::assert_contains(
        &text(&out.stderr),
        "no selected rule was evaluated (FZ501): give --trusted-ref REF",
    );

    // In every format, a rule without its input is marked, not passed.
    let mut world = World::passing();
    world.extra_args = vec!["--select".into(), "FZ2,FZ3".into()];
    let json: Value = serde_json::from_slice(&world.run_in(dir.path(), "json").stdout).unwrap();
    let rule = |code: &str| {
        json["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["code"] == code)
            .cloned()
            .unwrap()
    };
    assert_eq!(rule("FZ207")["evaluated"], false);
    assert_eq!(rule("FZ201")["evaluated"], true);
    assert_eq!(
        json["summary"]["rules"].as_u64().unwrap() as usize,
        json["rules"].as_array().unwrap().len()
    );
    let junit = text(&world.run_in(dir.path(), "junit").stdout);
    let case = junit
        .split("<testcase")
        .find(|case| case.contains("FZ207 deposit-misses-coverage"))
        .unwrap();
    common::assert_contains(
        case,
        "<skipped message=\"not evaluated: it needs --coverage FILE\"",
    );
    let human = text(&world.run_in(dir.path(), "human").stdout);
    let summary = human.lines().last().unwrap();
    common::assert_contains(
        summary,
        "not evaluated: FZ207, FZ208, FZ209, FZ210, FZ211, FZ213",
    );
    // FZ501 was not selected (--select FZ2,FZ3): it is not listed as not evaluated.
    assert!(!summary.contains("FZ501"), "{summary}");
    // Each one explained on its own line, saying what to give.
    common::assert_contains(
        &human,
        "not evaluated: FZ207, FZ208: give --coverage FILE\n",
    );
    // The human count is the JSON's.
    common::assert_contains(
        summary,
        &format!("({} rules checked)", json["summary"]["evaluated"]),
    );
    let sarif: Value = serde_json::from_slice(&world.run_in(dir.path(), "sarif").stdout).unwrap();
    let notes = &sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"];
    common::assert_contains(&notes.to_string(), "FZ207 was not evaluated");

    // FZ001 in JUnit starts with its message, not a placeholder location.
    let mut world = World::passing();
    world.samples = None;
    let junit = text(&world.run_in(dir.path(), "junit").stdout);
    assert!(!junit.contains("-: builtin"), "{junit}");
    common::assert_contains(&junit, "builtin:samples.rhai needs `samples`");
}

#[test]
fn explain_shows_the_severity_config_gives_it() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "freezegate.toml", "[rules]\nFZ204 = \"off\"\n");
    let out = freezegate(dir.path())
        .args(["explain", "FZ204"])
        .output()
        .unwrap();
    let shown = text(&out.stdout);
    common::assert_contains(&shown, "Default severity: warning");
    common::assert_contains(
        &shown,
        "Severity here: off (set in freezegate.toml [rules])",
    );
    common::assert_contains(&shown, "Needs: --collected FILE or --collect");
}

#[test]
fn the_ci_environment_names_the_target_branch_of_a_detached_checkout() {
    let mut world = World::passing();
    world.target_branch = None;
    world.applied.push("tests/test_a.py::test_other".into());
    world.config = "[[params.allow_inherited]]\ntest_id = \"tests/test_a.py::test_other\"\nbranch = \"release/*\"\napprover = \"dana\"\n".into();
    let dir = tempfile::tempdir().unwrap();
    let verdict = common::Verdict::from_output(
        world
            .command_in(dir.path(), "json")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_BASE_REF", "release/2.1")
            .output()
            .unwrap(),
    );
    assert_eq!(verdict.code, 0, "{:#?}", verdict.violations());
    let verdict = common::Verdict::from_output(
        world
            .command_in(dir.path(), "json")
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITLAB_CI")
            .output()
            .unwrap(),
    );
    assert_eq!(verdict.codes(), ["FZ401"]);
    common::assert_contains(
        verdict.one("FZ401")["message"].as_str().unwrap(),
        "pass --target-branch",
    );
}

#[test]
fn a_base_ledger_that_does_not_parse_is_exit_2_naming_the_ref() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let git = |args: &[&str]| common::git(root, args);
    git(&["init", "-q", "-b", "main"]);
    write(root, LEDGER, "{\"schema\": 1, \"freezes\": [\n");
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "a broken ledger"]);
    git(&["checkout", "-q", "-b", "fix"]);
    write(root, LEDGER, &ledger_with(json!([common::entry()])));
    git(&["commit", "-q", "-am", "fix it"]);
    let out = freezegate(root)
        .args([
            "check",
            "--base",
            "main",
            "--select",
            "FZ202",
            "--today",
            "2026-11-30",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    common::assert_contains(&text(&out.stderr), "main:gate/freeze_ledger.json");
    common::assert_contains(&text(&out.stderr), "--base-ledger FILE");
}

/// dateutil's setup.cfg turns warnings into errors: a contributor without freezegate
/// installed would meet `Unknown config option: freezegate`, so init says so.
#[test]
fn init_warns_when_the_pytest_config_makes_an_unknown_option_an_error() {
    let dir = common::repo_dir();
    write(
        dir.path(),
        "setup.cfg",
        "[tool:pytest]\nfilterwarnings =\n    error\n    ignore:invalid escape sequence:DeprecationWarning\n",
    );
    let out = freezegate(dir.path()).arg("init").output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    common::assert_contains(
        &text(&out.stdout),
        "note     setup.cfg turns pytest's warnings into errors (filterwarnings = error): where freezegate is not installed, pytest stops at `Unknown config option: freezegate`",
    );
    let lenient = common::repo_dir();
    write(lenient.path(), "setup.cfg", "[tool:pytest]\naddopts = -q\n");
    let out = freezegate(lenient.path()).arg("init").output().unwrap();
    assert!(
        !text(&out.stdout).contains("into errors"),
        "{}",
        text(&out.stdout)
    );
}

/// A clone whose origin names `master` as its default branch, on a `main` made by hand:
/// the next steps run on `master`; init says so instead of letting step 2 fail FZ001.
#[test]
fn init_names_the_default_branch_when_another_is_checked_out() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    common::git(root, &["init", "-q", "-b", "master"]);
    write(root, "README.md", "a project\n");
    common::git(root, &["add", "-A"]);
    common::git(root, &["commit", "-q", "-m", "first"]);
    common::git(root, &["update-ref", "refs/remotes/origin/master", "HEAD"]);
    common::git(
        root,
        &[
            "symbolic-ref",
            "refs/remotes/origin/HEAD",
            "refs/remotes/origin/master",
        ],
    );
    common::git(root, &["checkout", "-q", "-b", "main"]);
    let out = freezegate(root).arg("init").output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    common::assert_contains(
        &text(&out.stdout),
        "note     you are on main, not master (origin's default branch): run the steps below on master, or give the run in step 2 --base master",
    );
    // On the default branch itself: no such note.
    common::git(root, &["checkout", "-q", "master"]);
    common::git(root, &["clean", "-qfdx"]);
    let out = freezegate(root).arg("init").output().unwrap();
    assert!(
        !text(&out.stdout).contains("you are on"),
        "{}",
        text(&out.stdout)
    );
}

/// A config that names a TOML (or YAML) ledger gets its empty ledger in that format, at
/// that path, and the gate reads it; the scaffolded config collects with `python`.
#[test]
fn init_writes_the_ledger_the_config_names_in_its_format() {
    for (name, text_of) in [
        ("gate/freezes.toml", "schema = 1\nfreezes = []\n"),
        ("gate/freezes.yaml", "schema: 1\nfreezes: []\n"),
    ] {
        let dir = common::repo_dir();
        write(
            dir.path(),
            "freezegate.toml",
            &format!("ledger = \"{name}\"\n"),
        );
        let out = freezegate(dir.path()).arg("init").output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        common::assert_contains(&text(&out.stdout), &format!("created  {name}"));
        assert_eq!(
            std::fs::read_to_string(dir.path().join(name)).unwrap(),
            text_of
        );
        assert!(
            !dir.path().join(LEDGER).exists(),
            "no JSON ledger beside it"
        );
        let out = freezegate(dir.path())
            .args(["check", "--select", "FZ1"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let dir = common::repo_dir();
    let out = freezegate(dir.path()).arg("init").output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let config = std::fs::read_to_string(dir.path().join("freezegate.toml")).unwrap();
    common::assert_contains(
        &config,
        "collect_command = [\"python\", \"-m\", \"pytest\", \"--collect-only\", \"--verbosity=-1\", \"--no-header\"]",
    );
}
