//! Thousands of violations stay readable: the human output shows the first N in full,
//! then a count per rule; `--max-diagnostics 0` shows every one.

mod common;

use common::{entry, World};
use serde_json::json;

fn many_violations() -> World {
    let mut world = World::passing();
    world.applied.clear();
    let mut freezes = Vec::new();
    for i in 0..120 {
        let mut e = entry();
        let id = format!("tests/test_many.py::test_{i}");
        e["test_id"] = json!(id);
        e["owner"] = json!("");
        world.collected.push(id.clone());
        world.applied.push(id);
        freezes.push(e);
    }
    world.ledger["freezes"] = json!(freezes);
    // The run skipped exactly the frozen tests (FZ601 has nothing to say).
    world.junit = Some(
        std::iter::once((common::PROPERTY.to_string(), "passed"))
            .chain(world.applied.iter().map(|id| (id.clone(), "skipped")))
            .collect(),
    );
    world
}

#[test]
fn human_output_is_capped_with_a_count_per_rule() {
    let dir = tempfile::tempdir().unwrap();
    let out = many_violations().run_in(dir.path(), "human");
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("× FZ").count(), 50, "{text}");
    assert!(text.contains("… and 70 more not shown (--max-diagnostics 0 shows all; --format json lists every one):\n  FZ101 missing-field: 70\n"), "{text}");
    assert!(
        text.contains("freezegate: failed: 120 errors, 0 warnings in 120 freezes"),
        "{text}"
    );

    let mut world = many_violations();
    world.extra_args = vec!["--max-diagnostics".into(), "0".into()];
    let out = world.run_in(tempfile::tempdir().unwrap().path(), "human");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("× FZ").count(), 120);
    assert!(!text.contains("more not shown"));

    // Files written with --report are never capped.
    let mut world = many_violations();
    world.extra_args = vec![
        "--report".into(),
        "human=out.txt".into(),
        "--max-diagnostics".into(),
        "5".into(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let out = world.run_in(dir.path(), "json");
    assert_eq!(out.status.code(), Some(1));
    let file = std::fs::read_to_string(dir.path().join("out.txt")).unwrap();
    assert_eq!(file.matches("× FZ").count(), 120);
}
