//! `--trusted-ref`: a patch cannot loosen its own gate. Config, policies and the owners
//! file come from the trusted commit (real git repositories); changes are FZ501.

mod common;

use std::path::Path;

use common::{freezegate, git, write, World, PROPERTY};
use serde_json::json;

const ORG_RULE: &str = r#"import "lib" as lib;
const RULES = #{ ORG101: #{ name: "reason-cites-ticket", severity: "error",
    summary: "A freeze reason must cite a ticket.", help: "Cite the ticket." } };
for e in ledger.freezes {
    if !lib::cites_ticket(e.reason) { report("ORG101", e, "reason", "no ticket"); }
}
"#;

/// A repository whose `main` commit holds the trusted gate: min_distinct 8 and an org rule.
fn trusted_repo(world: &World) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    world.run_in(dir.path(), "json");
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "trusted gate"]);
    dir
}

fn base_world() -> World {
    let mut world = World::passing();
    world.config = "policies = [\"builtin\", \"org\"]\n[params]\nmin_distinct = 8\n".into();
    world
        .files
        .push(("org/tickets.rhai".into(), ORG_RULE.into()));
    world.files.push((
        "org/lib.rhai".into(),
        "fn cites_ticket(text) { text.contains(\"BILL-\") }\n".into(),
    ));
    world
        .entry_mut()
        .insert("reason".into(), json!("BILL-9 upstream change"));
    world
}

fn check(dir: &Path, world: &World, trusted: bool) -> common::Verdict {
    let mut world_args = World {
        files: Vec::new(),
        ..clone_world(world)
    };
    if trusted {
        world_args
            .extra_args
            .extend(["--trusted-ref".to_string(), "main".to_string()]);
    }
    common::Verdict::from_output(world_args.run_in(dir, "json"))
}

/// What FZ501 said, in report order: the gate files the patch changed or added.
fn fz501_messages(verdict: &common::Verdict) -> Vec<String> {
    verdict
        .violations()
        .iter()
        .filter(|v| v["code"] == "FZ501")
        .map(|v| v["message"].as_str().unwrap().to_string())
        .collect()
}

fn clone_world(world: &World) -> World {
    World {
        ledger: world.ledger.clone(),
        ledger_name: world.ledger_name.clone(),
        collected: world.collected.clone(),
        changed: world.changed.clone(),
        samples: world.samples.clone(),
        applied: world.applied.clone(),
        junit: world.junit.clone(),
        today: world.today.clone(),
        config: world.config.clone(),
        target_branch: world.target_branch.clone(),
        extra_args: world.extra_args.clone(),
        files: world.files.clone(),
    }
}

#[test]
fn a_patch_that_loosens_thresholds_is_judged_by_the_trusted_config() {
    let mut world = base_world();
    let dir = trusted_repo(&world);
    // The patch's property is weak, and the patch lowers the threshold to hide it.
    world.samples = Some(json!({"properties": {PROPERTY: {"distinct": 2}}}));
    world.config = "policies = [\"builtin\", \"org\"]\n[params]\nmin_distinct = 1\n".into();
    let untrusted = check(dir.path(), &world, false);
    assert!(
        untrusted.codes().is_empty(),
        "the loosened gate passes: {:?}",
        untrusted.codes()
    );
    let verdict = check(dir.path(), &world, true);
    assert_eq!(verdict.codes(), ["FZ301", "FZ501"]);
    assert_eq!(verdict.code, 1);
    let v = verdict.one("FZ501");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("the patch changes freezegate.toml; the version at main was used instead"),
        "{v}"
    );
    assert_eq!(v["severity"], "warning");
}

#[test]
fn edited_policy_scripts_and_imported_helpers_are_ignored() {
    let mut world = base_world();
    let dir = trusted_repo(&world);
    world
        .entry_mut()
        .insert("reason".into(), json!("no ticket here"));
    // The patch rewrites the helper so every reason "cites a ticket", and drops a builtin
    // rule by adding a policy directory of its own.
    write(
        dir.path(),
        "org/lib.rhai",
        "fn cites_ticket(text) { true }\n",
    );
    write(dir.path(), "org/extra.rhai", "const RULES = #{ ORG900: #{ name: \"x\", severity: \"warn\", summary: \"s\", help: \"h\" } };\n");
    let untrusted = check(dir.path(), &world, false);
    assert!(!untrusted.codes().contains(&"ORG101".to_string()));
    let verdict = check(dir.path(), &world, true);
    assert_eq!(verdict.codes(), ["FZ501", "FZ501", "ORG101"]);
    let files: Vec<String> = verdict
        .violations()
        .iter()
        .filter(|v| v["code"] == "FZ501")
        .map(|v| v["message"].as_str().unwrap().to_string())
        .collect();
    assert!(
        files[0].contains("org/extra.rhai") && files[1].contains("org/lib.rhai"),
        "{files:?}"
    );
}

#[test]
fn a_raised_ledger_window_is_fz107_against_the_trusted_config() {
    let mut world = base_world();
    world.config.push_str("max_window_days = 10\n");
    let dir = trusted_repo(&world);
    world.config = world
        .config
        .replace("max_window_days = 10", "max_window_days = 30");
    world.ledger["max_window_days"] = json!(30);
    world
        .entry_mut()
        .insert("expires".into(), json!("2026-12-15"));
    let verdict = check(dir.path(), &world, true);
    assert_eq!(verdict.codes(), ["FZ104", "FZ107", "FZ501"]);
}

#[test]
fn a_shadowing_config_deeper_in_the_tree_is_noticed() {
    let world = base_world();
    let dir = trusted_repo(&world);
    write(
        dir.path(),
        "tests/.freezegate.toml",
        "policies = [\"builtin\"]\n[rules]\nFZ301 = \"off\"\n",
    );
    let out = freezegate(&dir.path().join("tests"))
        .args([
            "check",
            "--trusted-ref",
            "main",
            "--format",
            "json",
            "--today",
            "2026-11-30",
        ])
        .args(["--ledger", "../gate/freeze_ledger.json"])
        .output()
        .unwrap();
    let verdict = common::Verdict::from_output(out);
    let named = fz501_messages(&verdict);
    assert_eq!(named.len(), 2, "{named:?}");
    assert!(
        named[0].contains("changes freezegate.toml")
            && named[1].contains(
                "the patch adds tests/.freezegate.toml; the config at main was used instead"
            ),
        "{named:?}"
    );
    assert_eq!(
        verdict.json["summary"]["rules"], 46,
        "the trusted config (builtin + org) was used"
    );
}

#[test]
fn a_config_file_the_patch_adds_beside_the_trusted_one_is_named() {
    // freezegate.toml wins discovery today; the `.freezegate.toml` the patch adds would
    // be read once someone removes it, so the reviewer is told now.
    let world = base_world();
    let dir = trusted_repo(&world);
    write(
        dir.path(),
        ".freezegate.toml",
        "policies = [\"builtin\"]\n[rules]\nFZ301 = \"off\"\n",
    );
    let verdict = check(dir.path(), &world, true);
    let named = fz501_messages(&verdict);
    assert_eq!(
        named,
        ["the patch adds .freezegate.toml; the config at main was used instead"],
        "{named:?}"
    );
}

#[test]
fn an_unchanged_gate_reports_nothing_and_a_bad_ref_is_exit_2() {
    let world = base_world();
    let dir = trusted_repo(&world);
    let verdict = check(dir.path(), &world, true);
    assert!(verdict.codes().is_empty(), "{:?}", verdict.codes());
    let out = freezegate(dir.path())
        .args(["check", "--trusted-ref", "no-such-ref"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`no-such-ref` does not name a commit"));
    let elsewhere = tempfile::tempdir().unwrap();
    let out = freezegate(elsewhere.path())
        .args(["check", "--trusted-ref", "main"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    common::assert_contains(
        &String::from_utf8_lossy(&out.stderr),
        "not a git repository",
    );
}

/// A patch that moves the ledger (and points its own config at the new path) is judged by
/// the trusted config's path: the error says the path came from there.
#[test]
fn a_moved_ledger_under_trusted_ref_names_the_trusted_config() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    write(
        dir.path(),
        "freezegate.toml",
        "ledger = \"gate/freeze_ledger.json\"\n",
    );
    write(
        dir.path(),
        "gate/freeze_ledger.json",
        "{\"schema\": 1, \"freezes\": []}\n",
    );
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "the gate"]);
    git(dir.path(), &["checkout", "-q", "-b", "patch"]);
    git(
        dir.path(),
        &["mv", "gate/freeze_ledger.json", "gate/ledger.json"],
    );
    write(
        dir.path(),
        "freezegate.toml",
        "ledger = \"gate/ledger.json\"\n",
    );
    git(dir.path(), &["commit", "-qam", "move the ledger"]);
    let out = freezegate(dir.path())
        .args(["check", "--trusted-ref", "main", "--select", "FZ1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    common::assert_contains(&said, "gate/freeze_ledger.json");
    common::assert_contains(
        &said,
        "the ledger's path comes from the config at --trusted-ref main (freezegate.toml), as every gate setting does",
    );
}
