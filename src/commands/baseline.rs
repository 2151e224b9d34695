//! `freezegate baseline`: record every skip, xfail, deselection and collection skip of a
//! run that the ledger does not derive into the skip baseline, for review. Adopting the
//! gate on a repository with existing skips is: run the suite once, `freezegate
//! baseline`, commit; from then on a new skip needs a ledger entry (FZ601).

use std::path::Path;

use serde_json::{json, Map as JsonMap, Value as Json};

use crate::cli::BaselineArgs;
use crate::commands::{write_atomic, EXIT_PASS};
use crate::document::{Node, Value};
use crate::error::GateError;
use crate::gate::{gather, Gate};
use crate::inputs::baseline::VERSION;

pub fn run(cwd: &Path, config_path: Option<&Path>, args: &BaselineArgs) -> Result<u8, GateError> {
    let gate = Gate::load(cwd, config_path)?;
    let config = &gate.config;
    let facts = gather(cwd, config, &args.facts)?;
    let derived: crate::inputs::ids::IdSet = facts.ledger.derived_skips().into_iter().collect();
    let mut current: Vec<Json> = Vec::new();
    let mut add =
        |test_id: &str, kind: &str, reason: Option<&str>, file: Option<&str>, line: Option<u32>| {
            if derived.covers(test_id) {
                return;
            }
            let mut entry = JsonMap::new();
            entry.insert("test_id".into(), json!(test_id));
            entry.insert("kind".into(), json!(kind));
            for (key, value) in [("reason", reason), ("file", file)] {
                if let Some(value) = value {
                    entry.insert(key.into(), json!(value));
                }
            }
            if let Some(line) = line {
                entry.insert("line".into(), json!(line));
            }
            current.push(Json::Object(entry));
        };
    if let Some(runs) = facts.loaded.runs.get() {
        for skip in runs.skips() {
            add(
                &skip.test_id,
                skip.kind,
                skip.reason.as_deref(),
                skip.file.as_deref(),
                skip.line,
            );
        }
        for id in runs.deselected.iter() {
            add(id, "deselected", None, None, None);
        }
        for id in runs.dropped.iter() {
            add(id, "dropped", None, None, None);
        }
    } else if let (Some(results), Some(collected)) =
        (facts.loaded.results.get(), facts.loaded.collected.get())
    {
        for id in collected.iter() {
            if results.outcome(id) == Some(crate::inputs::junit::Outcome::Skipped) {
                add(id, "skip", None, None, None);
            }
        }
    } else {
        return Err(GateError::usage(
            "`freezegate baseline` needs the run to look at: --run gate/run.json (or --junit FILE with --collected FILE)",
        ));
    }

    // The baseline as gather read it (Gate::load reads the working tree: the file this
    // command rewrites); empty when there is none.
    let existing = &facts.baseline;
    let name = crate::config::display_path(&config.skip_baseline, &config.repo_root);
    let key = |entry: &Json| {
        (
            entry["test_id"].as_str().unwrap_or_default().to_string(),
            entry["kind"].as_str().unwrap_or_default().to_string(),
        )
    };
    let now: std::collections::BTreeSet<(String, String)> = current.iter().map(key).collect();
    // Kept entries stay exactly as reviewed (extra fields included); --prune removes only
    // what no longer matches.
    let mut entries: std::collections::BTreeMap<(String, String), Json> = Default::default();
    let mut pruned = 0;
    // A test (or, for a collection skip, a file) the run did not collect, or deselected or
    // dropped, may still skip where it runs: only what this run saw can be pruned (as
    // FZ605 reports it).
    let runs = facts.loaded.runs.get();
    let collected = facts.loaded.collected.get();
    let seen = |test_id: &str| match runs {
        Some(runs) => runs.saw(test_id),
        None => collected.is_some_and(|set| set.any_under(test_id)),
    };
    for entry in &existing.entries {
        let id = (entry.test_id.clone(), entry.kind.clone());
        if args.prune && !now.contains(&id) && seen(&entry.test_id) {
            pruned += 1;
            continue;
        }
        entries.insert(id, node_to_json(&entry.node));
    }
    let before = entries.len();
    for entry in current {
        entries.entry(key(&entry)).or_insert(entry);
    }
    let added = entries.len() - before;
    let text = serde_json::to_string_pretty(&json!({
        "version": VERSION,
        "skips": entries.into_values().collect::<Vec<_>>(),
    }))
    .expect("JSON serializes")
        + "\n";
    write_atomic(&config.skip_baseline, text.as_bytes())?;
    println!(
        "{name}: {} added, {} pruned, {} kept",
        added, pruned, before
    );
    Ok(EXIT_PASS)
}

/// A document node as JSON, fields in their order.
fn node_to_json(node: &Node) -> Json {
    match &node.value {
        Value::Null => Json::Null,
        Value::Bool(b) => json!(b),
        Value::Int(i) => json!(i),
        Value::Float(f) => json!(f),
        Value::Str(s) => json!(s.as_str()),
        Value::Seq(items) => Json::Array(items.iter().map(node_to_json).collect()),
        Value::Map(fields) => Json::Object(
            fields
                .iter()
                .map(|(key, value)| (key.to_string(), node_to_json(value)))
                .collect(),
        ),
    }
}
