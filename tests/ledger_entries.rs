//! Ledger entries as scripts see them: they read like maps, a write changes only the copy
//! written to, and a ledger of any size fits the script size limits (they bound what a
//! script builds, not the input it is handed).

mod common;

use common::World;
use serde_json::json;

const HEADER: &str = "const RULES = #{ ORG1: #{ name: \"entry-check\", severity: \"error\", summary: \"s\", help: \"h\" } };\n";

/// `world` with one org script beside the default pack, under these `[limits]`.
fn with_script(mut world: World, limits: &str, body: &str) -> World {
    world.config = format!(
        "policies = [\"builtin\", \"org\"]\n[params]\nmin_distinct = 3\n[limits]\n{limits}\n"
    );
    world
        .files
        .push(("org/rule.rhai".into(), format!("{HEADER}{body}")));
    world
}

fn run_with_script(world: World, limits: &str, body: &str) -> common::Verdict {
    with_script(world, limits, body).run()
}

/// The org script ran to its end and none of its checks reported.
#[track_caller]
fn assert_ran_and_passed(verdict: common::Verdict) {
    verdict.assert_passes();
    verdict.assert_evaluated("ORG1");
}

/// Each check reports its own name when it does not hold, so a failure says which.
fn checks(checks: &[(&str, &str)]) -> String {
    checks
        .iter()
        .map(|(name, holds)| {
            format!("if !({holds}) {{ report(\"ORG1\", \"{name} does not hold\"); }}\n")
        })
        .collect()
}

#[test]
fn entries_read_like_maps() {
    let mut world = World::passing();
    world.entry_mut().insert("ticket".into(), json!("JIRA-7"));
    let body = format!(
        "let e = ledger.freezes[0];\n{}",
        checks(&[
            ("property", "e.owner == \"finley\""),
            ("unknown field by property", "e.ticket == \"JIRA-7\""),
            ("indexer", "e[\"owner\"] == e.owner"),
            ("index", "e.index == 0"),
            (
                "absent field is unit",
                "e.no_such_field == () && e[\"no_such_field\"] == ()"
            ),
            ("in", "\"ticket\" in e && !(\"no_such_field\" in e)"),
            (
                "keys",
                "e.keys().contains(\"ticket\") && e.keys().contains(\"index\")"
            ),
            ("values", "e.values().contains(\"finley\")"),
            ("len", "e.len() == e.keys().len() && !e.is_empty()"),
            (
                "to_map",
                "type_of(e.to_map()) == \"map\" && e.to_map().owner == \"finley\""
            ),
            ("type name", "type_of(e) == \"Freeze\""),
            ("prints like a map", "e.to_string().contains(\"finley\")"),
            (
                "is_blank on a field",
                "!is_blank(e.owner) && is_blank(e.no_such_field)"
            ),
            (
                "properties",
                "properties(e).len() == 1 && properties(e)[0].field == \"compensating_property\""
            ),
            (
                "index_by",
                "index_by(ledger.freezes, \"test_id\").get(e.test_id) == 0"
            ),
        ])
    );
    assert_ran_and_passed(run_with_script(world, "", &body));
}

#[test]
fn a_write_changes_only_the_copy_written_to() {
    let body = format!(
        "let e = ledger.freezes[0];\nlet copy = e;\ncopy.owner = \"someone else\";\ncopy[\"note\"] = 1;\n\
         for f in ledger.freezes {{ f.owner = \"loop\"; }}\n\
         ledger.freezes[0].reason = \"rewritten\";\n{}",
        checks(&[
            ("the copy changed", "copy.owner == \"someone else\" && copy.note == 1"),
            ("the original did not", "e.owner == \"finley\" && e.note == ()"),
            ("a loop variable is a copy", "ledger.freezes[0].owner == \"finley\""),
            ("a write through the ledger stays", "ledger.freezes[0].reason == \"rewritten\""),
            ("and is not in the earlier copy", "e.reason != \"rewritten\""),
        ])
    );
    assert_ran_and_passed(run_with_script(World::passing(), "", &body));
}

#[test]
fn a_value_read_from_an_entry_is_the_reader_s_own() {
    // What a read of a field or of properties() returns is the reader's own: a change to
    // it must not show in the next read, nor in another script's (the default pack's,
    // which must still pass), and properties() follows a field the script wrote.
    let mut world = World::passing();
    world.entry_mut().insert("tags".into(), json!(["a"]));
    let body = format!(
        "let e = ledger.freezes[0];\n\
         let tags = e.tags; tags.push(\"b\");\n\
         let owner = e.owner; owner += \"x\";\n\
         let props = properties(e); props[0].id = \"x.py::t\"; props.push(1);\n\
         let other = e; other.compensating_property = [\"a.py::t\", \"b.py::u\"];\n{}",
        checks(&[
            ("an array read is a copy", "tags.len() == 2 && e.tags == [\"a\"]"),
            ("a string read is a copy", "owner == \"finleyx\" && e.owner == \"finley\""),
            (
                "properties are a copy",
                "properties(e).len() == 1 && properties(e)[0].id != \"x.py::t\" && properties(e)[0].id == e.compensating_property"
            ),
            (
                "properties follow a written field",
                "properties(other).len() == 2 && properties(other)[1].id == \"b.py::u\" && properties(other)[1].field == \"compensating_property[1]\""
            ),
            ("and not the other copies'", "properties(e).len() == 1"),
        ])
    );
    assert_ran_and_passed(run_with_script(world, "", &body));
}

#[test]
fn a_report_on_an_entry_points_at_its_field() {
    let body =
        "for e in ledger.freezes { report(\"ORG1\", e, \"owner\", `owner is ${e.owner}`); }\n";
    let verdict = run_with_script(World::passing(), "", body);
    assert_eq!(verdict.code, 1, "{}", verdict.stderr);
    let found = verdict.one("ORG1");
    assert_eq!(found["message"], "owner is finley");
    assert_eq!(found["test_id"], common::FROZEN);
    assert_eq!(found["file"], "gate/freeze_ledger.json");
    assert!(found["line"].as_u64().unwrap() > 1, "{found:#}");
}

#[test]
fn a_ledger_larger_than_the_size_limits_is_still_whole_to_scripts() {
    // 60 entries of ~100-byte strings: every string fits string_size = 400, the ledger's
    // strings together (~12 KB) do not, and neither do its maps' fields together
    // (map_size = 100). The limits bound what a script builds.
    let mut world = World::passing();
    let template = common::entry();
    let freezes: Vec<serde_json::Value> = (0..60)
        .map(|i| {
            let mut e = template.clone();
            e["test_id"] = json!(format!("tests/test_many.py::test_{i}"));
            e["reason"] = json!(format!(
                "{i}: {}",
                "a reason long enough to add up ".repeat(3)
            ));
            e
        })
        .collect();
    world.ledger = json!({"schema": 1, "freezes": freezes});
    let body = format!(
        "let all = ledger.freezes;\nlet n = ledger.freezes.len();\nlet copy = ledger;\n{}",
        checks(&[
            (
                "every entry",
                "n == 60 && all.len() == 60 && copy.freezes.len() == 60"
            ),
            (
                "a field",
                "all[59].test_id == \"tests/test_many.py::test_59\""
            ),
        ])
    );
    let verdict = run_with_script(world, "string_size = 400\nmap_size = 100", &body);
    assert!(
        !verdict.stderr.contains("size limit"),
        "the ledger itself broke a size limit: {}",
        verdict.stderr
    );
    let org: Vec<_> = verdict
        .violations()
        .into_iter()
        .filter(|v| v["code"] == "ORG1")
        .collect();
    assert_eq!(org, Vec::<serde_json::Value>::new(), "{}", verdict.stderr);
}

#[test]
fn what_a_script_builds_is_still_bounded() {
    let world = with_script(
        World::passing(),
        "string_size = 400",
        "let s = \"x\"; for i in 0..20 { s += s; }\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let out = world.run_in(dir.path(), "json");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("org/rule.rhai"), "{stderr}");
    assert!(stderr.contains("string_size"), "{stderr}");
}
