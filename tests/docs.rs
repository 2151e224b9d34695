//! The README cannot drift: its rule table is the pack's metadata, its org-rule example
//! runs, and its main-job command passes on the shipped example.

mod common;

use common::World;

const README: &str = include_str!("../README.md");

fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("README lacks {start}"));
    let from = from + text[from..].find('\n').unwrap() + 1;
    let to = text[from..]
        .find(end)
        .unwrap_or_else(|| panic!("README lacks {end}"))
        + from;
    &text[from..to]
}

#[test]
fn readme_rule_table_matches_the_pack() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::freezegate(dir.path())
        .args(["rules", "--format", "markdown"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        between(README, "<!-- rules-table", "<!-- /rules-table -->"),
        table,
        "README's rule table is stale: paste `freezegate rules --format markdown` between the markers"
    );
}

#[test]
fn readme_org_rule_example_runs() {
    let block = between(README, "```rhai", "```");
    let mut world = World::passing();
    world.config = "policies = [\"builtin\", \"org\"]\n".into();
    world
        .files
        .push(("org/example.rhai".into(), block.to_string()));
    let verdict = world.run();
    let v = verdict.one("ORG101");
    assert_eq!(v["field"], "reason");
    world
        .entry_mut()
        .insert("reason".into(), serde_json::json!("BILL-7 upstream change"));
    assert!(world.run().codes().is_empty());
}

#[test]
fn readme_main_job_command_passes_on_the_shipped_example() {
    let line = README
        .lines()
        .find(|l| l.trim_start().starts_with("cargo run --release -- check"))
        .expect("README shows the main-job command");
    let args: Vec<&str> = line.split_whitespace().skip(4).collect();
    let repo = env!("CARGO_MANIFEST_DIR");
    let out = common::freezegate(std::path::Path::new(repo))
        .args(&args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("freezegate: passed: 0 errors, 0 warnings in 1 freeze"),
        "{stdout}"
    );
    // The same recording fails once the freeze has expired.
    let mut expired: Vec<&str> = args.clone();
    let at = expired.iter().position(|a| *a == "--today").unwrap();
    expired[at + 1] = "2026-12-05";
    let out = common::freezegate(std::path::Path::new(repo))
        .args(&expired)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("FZ103 expired-freeze"));
}
