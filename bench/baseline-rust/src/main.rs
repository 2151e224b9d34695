//! The four default checks (ledger shape/owner/window, compensating deposit, distinct
//! samples, inherited skips) in plain single-threaded Rust with a fast hasher and no
//! scripting layer. Prints the number of violations per rule code as JSON.
//!
//!     freezegate-baseline DIR TODAY

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;

#[derive(Deserialize)]
struct Ledger {
    max_window_days: Option<i64>,
    freezes: Vec<BTreeMap<String, serde_json::Value>>,
}

#[derive(Deserialize)]
struct Samples {
    properties: FxHashMap<String, Count>,
}

#[derive(Deserialize)]
struct Count {
    distinct: i64,
}

const REQUIRED: [&str; 7] = ["test_id", "reason", "owner", "opened", "expires", "invariant", "compensating_property"];

fn blank(v: Option<&serde_json::Value>) -> bool {
    match v {
        None | Some(serde_json::Value::Null) => true,
        Some(serde_json::Value::String(s)) => s.trim().is_empty(),
        Some(serde_json::Value::Array(a)) => a.is_empty(),
        _ => false,
    }
}

fn date(v: Option<&serde_json::Value>) -> Option<jiff::civil::Date> {
    let s = v?.as_str()?;
    if s.len() != 10 {
        return None;
    }
    s.parse().ok()
}

fn is_node_id(s: &str) -> bool {
    let head = s.split('[').next().unwrap_or("");
    let mut parts = head.split("::");
    let file = parts.next().unwrap_or("");
    !file.is_empty() && !file.contains(char::is_whitespace) && parts.clone().count() > 0 && parts.all(|p| !p.is_empty())
}

fn file_of(id: &str) -> &str {
    let head = id.split('[').next().unwrap_or(id);
    head.split("::").next().unwrap_or(head)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::Path::new(&args[1]);
    let today: jiff::civil::Date = args[2].parse().expect("today");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).expect(name);
    let config = read("freezegate.toml");
    let param = |key: &str, default: i64| {
        config
            .lines()
            .find_map(|l| l.strip_prefix(key).and_then(|r| r.trim().strip_prefix('=')).map(|v| v.trim().parse().unwrap()))
            .unwrap_or(default)
    };
    let min_distinct = param("min_distinct", 8);

    let ledger_text = read("freeze_ledger.json");
    let ledger: Ledger = serde_json::from_str(&ledger_text).expect("ledger");
    let collected_text = read("collected.txt");
    let mut collected: FxHashSet<&str> = FxHashSet::default();
    for line in collected_text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('=') {
            continue;
        }
        if line.as_bytes()[0].is_ascii_digit() {
            break;
        }
        assert!(line.contains("::"), "not a node id: {line}");
        collected.insert(line);
    }
    let changed_text = read("changed.txt");
    let changed: FxHashSet<&str> = changed_text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let samples: Samples = serde_json::from_str(&read("samples.json")).expect("samples");
    let skipped: Vec<String> = serde_json::from_str(&read("skipped.json")).expect("skipped");

    let max_window = param("max_window_days", ledger.max_window_days.unwrap_or(14));
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut hit = |code: &'static str| *counts.entry(code).or_default() += 1;
    let frozen: FxHashSet<&str> = ledger.freezes.iter().filter_map(|e| e.get("test_id")?.as_str()).collect();
    let mut seen: FxHashSet<&str> = FxHashSet::default();
    for e in &ledger.freezes {
        for field in REQUIRED {
            if blank(e.get(field)) {
                hit("FZ101");
            }
        }
        let (opened, expires) = (date(e.get("opened")), date(e.get("expires")));
        if opened.is_none() && !blank(e.get("opened")) {
            hit("FZ102");
        }
        if expires.is_none() && !blank(e.get("expires")) {
            hit("FZ102");
        }
        if let Some(x) = expires {
            if x < today {
                hit("FZ103");
            }
        }
        if let (Some(o), Some(x)) = (opened, expires) {
            if x < o {
                hit("FZ105");
            } else if (x - o).get_days() as i64 > max_window {
                hit("FZ104");
            }
        }
        if opened.is_some_and(|o| o > today) {
            hit("FZ105");
        }
        let test_id = e.get("test_id").and_then(|v| v.as_str()).unwrap_or("");
        if !test_id.is_empty() {
            if !is_node_id(test_id) {
                hit("FZ108");
            }
            if !seen.insert(test_id) {
                hit("FZ106");
            }
            if is_node_id(test_id) && !collected.contains(test_id) {
                hit("FZ204");
            }
        }
        let properties: Vec<&str> = match e.get("compensating_property") {
            Some(serde_json::Value::String(s)) => vec![s.as_str()],
            Some(serde_json::Value::Array(a)) => a.iter().filter_map(|v| v.as_str()).collect(),
            _ => Vec::new(),
        };
        let reused = e.get("reused_property").and_then(|v| v.as_bool()) == Some(true);
        for p in properties {
            if !is_node_id(p) {
                hit("FZ108");
                continue;
            }
            if p == test_id {
                hit("FZ206");
                continue;
            }
            if frozen.contains(p) {
                hit("FZ203");
            }
            if !collected.contains(p) {
                // An uncollected property is reported once (freezegate 0.2).
                hit("FZ201");
                continue;
            }
            if !reused && !changed.contains(file_of(p)) {
                hit("FZ202");
            }
            match samples.properties.get(p) {
                None => hit("FZ302"),
                Some(c) if c.distinct < min_distinct => hit("FZ301"),
                Some(_) => {}
            }
        }
    }
    let mut refused: FxHashSet<&str> = FxHashSet::default();
    for id in &skipped {
        if !frozen.contains(id.as_str()) && refused.insert(id) {
            hit("FZ401");
        }
    }
    println!("{}", serde_json::to_string(&counts).unwrap());
}
