//! Every default rule fires where it should and stays quiet on the near miss, through
//! file inputs and the real binary.

mod common;

use common::{entry, World, FROZEN, OTHER, PROPERTY};
use serde_json::json;

#[test]
fn the_base_world_passes_every_rule() {
    let world = World::passing();
    let verdict = world.run();
    assert_eq!(verdict.code, 0, "{:#?}", verdict.violations());
    assert_eq!(verdict.json["summary"]["rules"], 45);
    // Without --coverage, --proof, --run and --trusted-ref their rules did not run: not
    // passed, not counted (FZ404/FZ405 check whatever run or proof records are given).
    assert_eq!(
        verdict.json["summary"]["not_evaluated"],
        json!([
            "FZ207", "FZ208", "FZ209", "FZ210", "FZ211", "FZ213", "FZ214", "FZ304", "FZ501",
            "FZ602", "FZ603", "FZ604", "FZ605", "FZ606", "FZ607", "FZ608", "FZ609", "FZ610"
        ])
    );
    assert_eq!(verdict.json["summary"]["evaluated"], 27);
    assert_eq!(verdict.json["summary"]["freezes"], 1);
    assert_eq!(verdict.json["version"], 1);
}

#[test]
fn fz001_fires_when_an_input_is_missing_and_names_the_flag() {
    let mut world = World::passing();
    world.samples = None;
    let verdict = world.run();
    assert_eq!(verdict.code, 1);
    let v = verdict.one("FZ001");
    assert!(v["message"].as_str().unwrap().contains("--samples"), "{v}");
    assert_eq!(
        verdict.json["summary"]["not_evaluated"],
        json!([
            "FZ207", "FZ208", "FZ209", "FZ210", "FZ211", "FZ213", "FZ214", "FZ301", "FZ302",
            "FZ303", "FZ304", "FZ501", "FZ602", "FZ603", "FZ604", "FZ605", "FZ606", "FZ607",
            "FZ608", "FZ609", "FZ610"
        ])
    );
    // Near miss: results are optional for FZ205, so leaving out --junit is not FZ001 for
    // it (FZ601, which needs JUnit or a run record to see skips, is left out here).
    let mut world = World::passing();
    world.junit = None;
    world.extra_args = vec!["--ignore".into(), "FZ601".into()];
    world.run().assert_passes();
}

#[test]
fn fz101_missing_or_blank_field() {
    let mut world = World::passing();
    world.entry_mut().insert("owner".into(), json!("  "));
    world.entry_mut().remove("invariant");
    let verdict = world.run();
    let fields: Vec<_> = verdict
        .violations()
        .iter()
        .filter(|v| v["code"] == "FZ101")
        .map(|v| v["field"].clone())
        .collect();
    assert_eq!(fields.len(), 2, "{fields:?}");
    assert!(fields.contains(&json!("owner")) && fields.contains(&json!("invariant")));
    let owner = verdict
        .violations()
        .into_iter()
        .find(|v| v["field"] == "owner")
        .unwrap();
    assert_eq!(owner["test_id"], FROZEN);
    assert_eq!(owner["file"], "gate/freeze_ledger.json");
    // Near miss: a one-character owner is an owner.
    let mut world = World::passing();
    world.entry_mut().insert("owner".into(), json!("x"));
    world.run().assert_passes();
}

#[test]
fn fz102_invalid_date() {
    let mut world = World::passing();
    world
        .entry_mut()
        .insert("opened".into(), json!("2026-02-30"));
    let verdict = world.run();
    assert_eq!(verdict.one("FZ102")["field"], "opened");
    let mut world = World::passing();
    world
        .entry_mut()
        .insert("opened".into(), json!("2026-11-2"));
    assert_eq!(world.run().one("FZ102")["field"], "opened");
    // Near miss: the last day of November is a real date.
    let mut world = World::passing();
    world
        .entry_mut()
        .insert("opened".into(), json!("2026-11-30"));
    world.run().assert_passes();
}

#[test]
fn fz103_expired_but_not_on_the_expiry_day() {
    let mut world = World::passing();
    world.today = "2026-12-05".into();
    let verdict = world.run();
    assert_eq!(verdict.codes(), ["FZ103"]);
    assert_eq!(verdict.one("FZ103")["field"], "expires");
    world.today = "2026-12-04".into();
    world.run().assert_passes();
}

#[test]
fn fz104_window_of_exactly_the_maximum_passes() {
    let mut world = World::passing();
    world
        .entry_mut()
        .insert("expires".into(), json!("2026-12-05"));
    let verdict = world.run();
    assert_eq!(verdict.codes(), ["FZ104"]);
    assert!(verdict.one("FZ104")["message"]
        .as_str()
        .unwrap()
        .contains("15 days"));
    world
        .entry_mut()
        .insert("expires".into(), json!("2026-12-04"));
    world.run().assert_passes();
}

#[test]
fn fz105_dates_out_of_order_or_opened_in_the_future() {
    let mut world = World::passing();
    world
        .entry_mut()
        .insert("expires".into(), json!("2026-11-19"));
    world.today = "2026-11-19".into();
    world
        .entry_mut()
        .insert("opened".into(), json!("2026-11-19"));
    world.run().assert_passes();
    world
        .entry_mut()
        .insert("expires".into(), json!("2026-11-18"));
    world.today = "2026-11-18".into();
    world
        .entry_mut()
        .insert("opened".into(), json!("2026-11-18"));
    world.run().assert_passes();
    let mut world = World::passing();
    world
        .entry_mut()
        .insert("expires".into(), json!("2026-11-19"));
    world.today = "2026-11-20".into();
    let verdict = world.run();
    assert_eq!(verdict.codes(), ["FZ103", "FZ105"]);
    assert_eq!(verdict.one("FZ105")["field"], "expires");
    let mut world = World::passing();
    world.today = "2026-11-19".into();
    let verdict = world.run();
    assert_eq!(verdict.one("FZ105")["field"], "opened");
}

#[test]
fn fz106_duplicate_freeze() {
    let mut world = World::passing();
    world.ledger["freezes"]
        .as_array_mut()
        .unwrap()
        .push(entry());
    let verdict = world.run();
    let v = verdict.one("FZ106");
    assert!(v["message"].as_str().unwrap().contains("freeze #0"), "{v}");
    assert_eq!(v["line"], 15, "points at the second entry's test_id: {v}");
    // Near miss: two different tests each frozen once.
    let mut world = World::passing();
    let mut second = entry();
    second["test_id"] = json!(OTHER);
    world.ledger["freezes"].as_array_mut().unwrap().push(second);
    world.applied.push(OTHER.into());
    assert!(!world.run().codes().contains(&"FZ106".to_string()));
}

#[test]
fn fz107_ledger_cannot_raise_the_configured_window() {
    let mut world = World::passing();
    world.config = "[params]\nmax_window_days = 10\n".into();
    world.ledger["max_window_days"] = json!(30);
    world
        .entry_mut()
        .insert("expires".into(), json!("2026-11-30"));
    let verdict = world.run();
    assert_eq!(verdict.codes(), ["FZ107"]);
    let v = verdict.one("FZ107");
    let text = serde_json::to_string_pretty(&world.ledger).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("\"max_window_days\""))
        .unwrap()
        + 1;
    assert_eq!(
        (v["field"].clone(), v["line"].clone()),
        (json!("max_window_days"), json!(line))
    );
    // Without params the default 14 is the ceiling.
    let mut world = World::passing();
    world.ledger["max_window_days"] = json!(15);
    assert_eq!(world.run().codes(), ["FZ107"]);
    world.ledger["max_window_days"] = json!(14);
    world.run().assert_passes();
}

#[test]
fn fz108_bad_node_ids() {
    let mut world = World::passing();
    world.entry_mut().insert(
        "compensating_property".into(),
        json!("tests/props/test_p.py"),
    );
    let verdict = world.run();
    assert_eq!(verdict.one("FZ108")["field"], "compensating_property");
    let mut world = World::passing();
    world
        .entry_mut()
        .insert("test_id".into(), json!("test frozen"));
    assert!(world.run().codes().contains(&"FZ108".to_string()));
    // Near miss: parametrized ids with `::` inside the brackets are node ids.
    let mut world = World::passing();
    let id = "tests/test_a.py::test_u[a::b]";
    world.entry_mut().insert("test_id".into(), json!(id));
    world.collected.push(id.into());
    world.applied = vec![id.into()];
    // The run skipped the frozen case (and ran the test that is no longer frozen).
    world.junit = Some(vec![
        (common::PROPERTY.into(), "passed"),
        (id.into(), "skipped"),
        (FROZEN.into(), "passed"),
    ]);
    world.run().assert_passes();
}

#[test]
fn fz201_property_not_collected() {
    let mut world = World::passing();
    world.collected.retain(|id| id != PROPERTY);
    let verdict = world.run();
    assert_eq!(verdict.one("FZ201")["test_id"], FROZEN);
}

#[test]
fn fz202_property_not_in_diff_unless_reused() {
    let mut world = World::passing();
    world.changed = vec!["gate/freeze_ledger.json".into()];
    assert_eq!(world.run().codes(), ["FZ202"]);
    world
        .entry_mut()
        .insert("reused_property".into(), json!(true));
    world.run().assert_passes();
}

#[test]
fn fz202_joins_pytest_root_with_the_node_id_file() {
    let mut world = World::passing();
    world.config = "pytest_root = \"backend\"\n".into();
    world.files.push(("backend/.keep".into(), String::new()));
    assert_eq!(world.run().codes(), ["FZ202"]);
    world.changed = vec!["backend/tests/props/test_p.py".into()];
    world.run().assert_passes();
}

#[test]
fn fz203_property_frozen_itself() {
    let mut world = World::passing();
    let mut second = entry();
    second["test_id"] = json!(PROPERTY);
    second["compensating_property"] = json!(OTHER);
    world.ledger["freezes"].as_array_mut().unwrap().push(second);
    world.applied.push(PROPERTY.into());
    let verdict = world.run();
    let v = verdict.one("FZ203");
    assert_eq!(v["test_id"], FROZEN);
}

#[test]
fn fz204_stale_freeze_is_a_warning() {
    let mut world = World::passing();
    world.collected.retain(|id| id != FROZEN);
    let verdict = world.run();
    assert_eq!(verdict.codes(), ["FZ204"]);
    assert_eq!(verdict.code, 0, "a warning alone passes");
    assert_eq!(verdict.one("FZ204")["severity"], "warning");
    world.extra_args.push("--deny-warnings".into());
    assert_eq!(world.run().code, 1);
    // The summary line says what the exit status says.
    let dir = tempfile::tempdir().unwrap();
    let human = String::from_utf8(world.run_in(dir.path(), "human").stdout).unwrap();
    assert!(
        human.contains("freezegate: failed: 0 errors, 1 warning"),
        "{human}"
    );
}

#[test]
fn fz205_property_must_pass() {
    for (outcome, expected) in [
        ("failed", "failed"),
        ("error", "errored"),
        ("skipped", "was skipped"),
    ] {
        let mut world = World::passing();
        world.junit = Some(vec![(PROPERTY.into(), outcome)]);
        let verdict = world.run();
        assert!(
            verdict.one("FZ205")["message"]
                .as_str()
                .unwrap()
                .ends_with(expected),
            "{outcome}"
        );
    }
    let mut world = World::passing();
    world.junit = Some(vec![(OTHER.into(), "passed")]);
    assert!(world.run().one("FZ205")["message"]
        .as_str()
        .unwrap()
        .contains("did not run"));
}

#[test]
fn fz206_self_deposit() {
    let mut world = World::passing();
    world
        .entry_mut()
        .insert("compensating_property".into(), json!(FROZEN));
    let verdict = world.run();
    assert!(
        verdict.codes().contains(&"FZ206".to_string()),
        "{:?}",
        verdict.codes()
    );
    assert!(!verdict.codes().contains(&"FZ203".to_string()));
}

#[test]
fn fz301_too_few_distinct_samples() {
    let mut world = World::passing();
    world.samples = Some(json!({"properties": {PROPERTY: {"distinct": 7}}}));
    let verdict = world.run();
    assert_eq!(verdict.codes(), ["FZ301"]);
    assert!(verdict.one("FZ301")["message"]
        .as_str()
        .unwrap()
        .contains("7 distinct"));
}

#[test]
fn fz302_counts_given_but_not_for_this_property() {
    let mut world = World::passing();
    world.samples = Some(json!({"properties": {OTHER: {"distinct": 80}}}));
    assert_eq!(world.run().codes(), ["FZ302"]);
}

#[test]
fn fz303_only_a_session_wide_count() {
    let mut world = World::passing();
    world.samples = Some(json!({"distinct": 50}));
    let verdict = world.run();
    assert_eq!(verdict.codes(), ["FZ303"]);
    assert_eq!(verdict.code, 0);
    world.samples = Some(json!({"distinct": 3}));
    assert_eq!(world.run().codes(), ["FZ301", "FZ303"]);
}

#[test]
fn fz401_inherited_skip_refused_unless_allowed_for_the_branch() {
    let mut world = World::passing();
    world.applied.push(OTHER.into());
    let verdict = world.run();
    assert_eq!(verdict.codes(), ["FZ401"]);
    assert_eq!(verdict.one("FZ401")["test_id"], OTHER);
    world.config = format!(
        "[[params.allow_inherited]]\ntest_id = \"{OTHER}\"\nbranch = \"release/*\"\napprover = \"dana\"\n"
    );
    world.target_branch = Some("release/2026.12".into());
    world.run().assert_passes();
    // The same allow entry does not excuse the skip on another branch, or an unknown one.
    world.target_branch = Some("main".into());
    assert_eq!(world.run().codes(), ["FZ401", "FZ403"]);
    world.target_branch = None;
    world.extra_args = vec![];
    let verdict = world.run();
    assert!(
        verdict.codes().contains(&"FZ401".to_string()),
        "{:?}",
        verdict.codes()
    );
}

#[test]
fn fz402_incomplete_allow_entry_points_into_config() {
    let mut world = World::passing();
    world.applied.push(OTHER.into());
    world.config =
        format!("[[params.allow_inherited]]\ntest_id = \"{OTHER}\"\nbranch = \"main\"\n");
    let verdict = world.run();
    assert_eq!(verdict.codes(), ["FZ401", "FZ402"]);
    let v = verdict.one("FZ402");
    assert_eq!(v["file"], "freezegate.toml");
    assert_eq!(v["field"], "approver");
}

#[test]
fn fz403_unused_allow_entry() {
    let mut world = World::passing();
    world.config = format!("[[params.allow_inherited]]\ntest_id = \"{OTHER}\"\nbranch = \"main\"\napprover = \"dana\"\n");
    let verdict = world.run();
    assert_eq!(verdict.codes(), ["FZ403"]);
    let v = verdict.one("FZ403");
    assert_eq!(
        (v["file"].clone(), v["line"].clone(), v["column"].clone()),
        (json!("freezegate.toml"), json!(3), json!(11))
    );
}

#[test]
fn compensating_property_lists_are_checked_item_by_item() {
    let mut world = World::passing();
    let second = "tests/props/test_p.py::test_other_prop";
    world
        .entry_mut()
        .insert("compensating_property".into(), json!([PROPERTY, second]));
    world.collected.push(second.into());
    world.samples =
        Some(json!({"properties": {PROPERTY: {"distinct": 9}, second: {"distinct": 2}}}));
    world.junit = Some(vec![(PROPERTY.into(), "passed"), (second.into(), "passed")]);
    let verdict = world.run();
    assert_eq!(verdict.codes(), ["FZ301"]);
    assert_eq!(verdict.one("FZ301")["field"], "compensating_property[1]");
}
