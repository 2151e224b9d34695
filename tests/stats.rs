//! `freezegate stats` and `check --history`: figures computed by hand from a ledger and
//! a history written here, in every format, and the history file's append-only promise.
//!
//! The ledger (today 2026-11-30, expiring window 3 days):
//!
//! | # | owner  | team    | opened     | age | expires    | left | deposit |
//! |---|--------|---------|------------|-----|------------|------|---------|
//! | 1 | finley | billing | 2026-11-28 |   2 | 2026-12-02 |  +2 expiring | ok |
//! | 2 | finley | billing | 2026-11-20 |  10 | 2026-12-04 |  +4 | FZ201+FZ205 (property not collected, did not run) |
//! | 3 | dana   | sync    | 2026-11-16 |  14 | 2026-11-29 |  -1 expired | ok |
//! | 4 | dana   | -       | 2026-11-27 |   3 | 2026-12-03 |  +3 expiring (edge) | ok |
//! | 5 | ari    | sync    | 2026-11-10 |  20 | 2026-11-24 |  -6 expired | ok |
//! | 6 | ari    | billing | 2026-11-30 |   0 | 2026-11-30 |   0 expiring (today, not expired) | ok |
//! | 7 | finley | sync    | 2026-11-25 |   5 | 2026-12-09 |  +9 | FZ202 (property file not in diff) |
//! | 8 | dana   | sync    | 2026-11-22 |   8 | 2026-12-06 |  +6 | FZ301 (3 distinct inputs) |
//! | 9 | ari    | -       | 2026-11-24 |   6 | 2026-12-08 |  +8 | ok (FZ204 is a warning: not counted) |
//! |10 | finley | billing | 2026-11-18 |  12 | 2026-12-01 |  +1 expiring | FZ205 (property failed) |
//! |11 | dana   | sync    | someday    |   - | 2026-12-05 |  +5 | ok (no age) |
//!
//! Ages sorted: 0 2 3 5 6 8 10 12 14 20 (n = 10). Nearest rank: median = rank
//! ceil(0.5*10) = 5 → 6; p90 = rank ceil(0.9*10) = 9 → 14; max 20. Expiring: #1 #4 #6 #10
//! = 4; expired: #3 #5 = 2. Deposit failures: #2 #7 #8 #10 = 4 (five violations).
//! Buckets 0-3: 3, 4-7: 2, 8-14: 4, 15-30: 1, 31+: 0.

mod common;

use std::path::Path;

use common::{freezegate, junit_xml, write, World};
use serde_json::{json, Value};

const TODAY: &str = "2026-11-30";

/// (owner, team, opened, expires)
const ROWS: [(&str, Option<&str>, &str, &str); 11] = [
    ("finley", Some("billing"), "2026-11-28", "2026-12-02"),
    ("finley", Some("billing"), "2026-11-20", "2026-12-04"),
    ("dana", Some("sync"), "2026-11-16", "2026-11-29"),
    ("dana", None, "2026-11-27", "2026-12-03"),
    ("ari", Some("sync"), "2026-11-10", "2026-11-24"),
    ("ari", Some("billing"), "2026-11-30", "2026-11-30"),
    ("finley", Some("sync"), "2026-11-25", "2026-12-09"),
    ("dana", Some("sync"), "2026-11-22", "2026-12-06"),
    ("ari", None, "2026-11-24", "2026-12-08"),
    ("finley", Some("billing"), "2026-11-18", "2026-12-01"),
    ("dana", Some("sync"), "someday", "2026-12-05"),
];

fn test_id(n: usize) -> String {
    format!("tests/test_mod.py::test_a{n}")
}

fn property(n: usize) -> String {
    format!("tests/props/test_p{n}.py::test_p{n}")
}

/// Four runs: 11-20 refuses `old`; 11-23 refuses `a` and `b`; 11-25 nothing; 11-27 `a`.
fn history_lines() -> Vec<String> {
    let record = |time: &str, refused: &[&str]| {
        json!({
            "version": 1, "time": time, "today": &time[..10], "commit": "0123abcd",
            "target_branch": "main", "failed": !refused.is_empty(),
            "errors": refused.len(), "warnings": 0, "freezes": 11,
            "rules": {"FZ401": refused.len()},
            "refused_inherited": refused,
        })
        .to_string()
    };
    vec![
        record("2026-11-20T09:00:00Z", &["tests/test_x.py::test_old"]),
        record(
            "2026-11-23T10:00:00Z",
            &["tests/test_x.py::test_a", "tests/test_x.py::test_b"],
        ),
        record("2026-11-25T10:00:00Z", &[]),
        record("2026-11-27T23:59:59Z", &["tests/test_x.py::test_a"]),
    ]
}

/// Writes the ledger, the facts and the history into `dir`.
fn setup(dir: &Path) {
    std::fs::create_dir(dir.join(".git")).ok();
    let freezes: Vec<Value> = ROWS
        .iter()
        .enumerate()
        .map(|(i, (owner, team, opened, expires))| {
            let n = i + 1;
            let mut e = json!({
                "test_id": test_id(n), "reason": "upstream change", "owner": owner,
                "opened": opened, "expires": expires, "invariant": "never overcharges",
                "compensating_property": property(n), "reused_property": false,
            });
            if let Some(team) = team {
                e["team"] = json!(team);
            }
            e
        })
        .collect();
    write(
        dir,
        "gate/freeze_ledger.json",
        &serde_json::to_string_pretty(&json!({"schema": 1, "freezes": freezes})).unwrap(),
    );
    write(
        dir,
        "freezegate.toml",
        "ledger = \"gate/freeze_ledger.json\"\n",
    );
    let mut collected: Vec<String> = (1..=11).filter(|n| *n != 9).map(test_id).collect();
    collected.extend((1..=11).filter(|n| *n != 2).map(property));
    write(dir, "gate/collected.txt", &(collected.join("\n") + "\n"));
    let changed: Vec<String> = (1..=11)
        .filter(|n| *n != 7)
        .map(|n| format!("tests/props/test_p{n}.py"))
        .collect();
    write(dir, "gate/changed.txt", &(changed.join("\n") + "\n"));
    let samples: serde_json::Map<String, Value> = (1..=11)
        .map(|n| (property(n), json!({"distinct": if n == 8 { 3 } else { 8 }})))
        .collect();
    write(
        dir,
        "gate/samples.json",
        &json!({ "properties": samples }).to_string(),
    );
    let mut cases: Vec<(String, &str)> = (1..=11)
        .filter(|n| *n != 2)
        .map(|n| (property(n), if n == 10 { "failed" } else { "passed" }))
        .collect();
    cases.extend((1..=11).map(|n| (test_id(n), "skipped")));
    write(dir, "gate/junit.xml", &junit_xml(&cases));
    let applied: Vec<String> = (1..=11).map(test_id).collect();
    write(
        dir,
        "gate/skipped.json",
        &serde_json::to_string(&applied).unwrap(),
    );
    write(
        dir,
        "gate/history.jsonl",
        &(history_lines().join("\n") + "\n"),
    );
}

const FACTS: [&str; 10] = [
    "--collected",
    "gate/collected.txt",
    "--changed",
    "gate/changed.txt",
    "--samples",
    "gate/samples.json",
    "--junit",
    "gate/junit.xml",
    "--applied-skips",
    "gate/skipped.json",
];

fn stats(dir: &Path, extra: &[&str]) -> std::process::Output {
    freezegate(dir)
        .args(["stats", "--today", TODAY])
        .args(FACTS)
        .args(extra)
        .output()
        .unwrap()
}

fn stats_json(dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["--format", "json"];
    args.extend(extra);
    let out = stats(dir, &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn world() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    dir
}

fn group(
    name: Option<&str>,
    freezes: u64,
    oldest: u64,
    expiring: u64,
    expired: u64,
    failing: u64,
) -> Value {
    json!({"name": name, "freezes": freezes, "oldest_days": oldest,
           "expiring": expiring, "expired": expired, "failing": failing})
}

#[test]
fn the_figures_match_the_hand_computed_values() {
    let dir = world();
    let s = stats_json(
        dir.path(),
        &["--history", "gate/history.jsonl", "--since", "2026-11-23"],
    );
    assert_eq!(s["version"], 1);
    assert_eq!(s["today"], TODAY);
    assert_eq!(
        s["headline"],
        json!({"deposit_failures": 4, "median_age_days": 6, "inherited_refused": 3})
    );
    let f = &s["freezes"];
    assert_eq!(f["open"], 11);
    assert_eq!(f["dated"], 10);
    assert_eq!(f["age_days"], json!({"median": 6, "p90": 14, "max": 20}));
    assert_eq!(f["expiring"], 4);
    assert_eq!(f["expired"], 2);
    let buckets: Vec<(String, u64)> = f["age_buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["label"].as_str().unwrap().to_string(),
                b["freezes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        buckets,
        [
            ("0-3", 3),
            ("4-7", 2),
            ("8-14", 4),
            ("15-30", 1),
            ("31+", 0)
        ]
        .map(|(l, n)| (l.to_string(), n))
    );

    // Per freeze, not per violation (#2's uncollected property is reported once, FZ201).
    assert_eq!(s["deposit"]["evaluated"], true);
    assert_eq!(s["deposit"]["failing"], 4);
    assert_eq!(
        s["deposit"]["failing_freezes"],
        json!([
            {"test_id": test_id(2), "owner": "finley", "codes": ["FZ201"]},
            {"test_id": test_id(7), "owner": "finley", "codes": ["FZ202"]},
            {"test_id": test_id(8), "owner": "dana", "codes": ["FZ301"]},
            {"test_id": test_id(10), "owner": "finley", "codes": ["FZ205"]},
        ])
    );

    // Most freezes first, then by name.
    assert_eq!(
        s["owners"],
        json!([
            group(Some("dana"), 4, 14, 1, 1, 1),
            group(Some("finley"), 4, 12, 2, 0, 3),
            group(Some("ari"), 3, 20, 1, 1, 0),
        ])
    );
    assert_eq!(
        s["teams"],
        json!([
            group(Some("sync"), 5, 20, 0, 2, 2),
            group(Some("billing"), 4, 12, 3, 0, 2),
            group(None, 2, 6, 1, 0, 0),
        ])
    );

    let i = &s["inherited"];
    assert_eq!(i["history"], "gate/history.jsonl");
    assert_eq!(i["since"], "2026-11-23");
    assert_eq!(i["runs"], 3);
    assert_eq!(i["refused"], 3);
    assert_eq!(i["distinct"], 2);
    assert_eq!(
        i["ids"],
        json!([
            {"test_id": "tests/test_x.py::test_a", "runs": 2},
            {"test_id": "tests/test_x.py::test_b", "runs": 1},
        ])
    );
}

#[test]
fn since_limits_the_refused_skips_to_the_period() {
    let dir = world();
    let period = |extra: &[&str]| {
        let mut args = vec!["--history", "gate/history.jsonl"];
        args.extend(extra);
        let s = stats_json(dir.path(), &args);
        let i = &s["inherited"];
        assert_eq!(s["headline"]["inherited_refused"], i["refused"]);
        (
            i["runs"].as_u64().unwrap(),
            i["refused"].as_u64().unwrap(),
            i["distinct"].as_u64().unwrap(),
        )
    };
    assert_eq!(period(&[]), (4, 4, 3), "all history");
    assert_eq!(
        period(&["--since", "2026-11-20"]),
        (4, 4, 3),
        "since is inclusive"
    );
    assert_eq!(period(&["--since", "2026-11-23"]), (3, 3, 2));
    assert_eq!(period(&["--since", "2026-11-24"]), (2, 1, 1));
    assert_eq!(
        period(&["--since", "2026-11-27"]),
        (1, 1, 1),
        "23:59:59Z is still the 27th"
    );
    assert_eq!(period(&["--since", "2026-11-28"]), (0, 0, 0));

    // Without a history the number is unknown, not zero.
    let s = stats_json(dir.path(), &[]);
    assert_eq!(s["headline"]["inherited_refused"], Value::Null);
    assert_eq!(s["inherited"], Value::Null);
}

#[test]
fn expiring_days_moves_the_window() {
    let dir = world();
    let expiring =
        |n: &str| stats_json(dir.path(), &["--expiring-days", n])["freezes"]["expiring"].clone();
    assert_eq!(expiring("0"), 1, "only #6, which expires today");
    assert_eq!(expiring("3"), 4);
    assert_eq!(expiring("5"), 6, "adds #2 (+4) and #11 (+5)");
    let s = stats_json(dir.path(), &[]);
    assert_eq!(s["expiring_days"], 3, "the default");
    assert_eq!(
        s["freezes"]["expired"], 2,
        "the window does not change expired"
    );
}

#[test]
fn without_the_facts_the_deposit_figure_is_unknown_and_names_the_flags() {
    let dir = world();
    let out = freezegate(dir.path())
        .args(["stats", "--today", TODAY, "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["headline"]["deposit_failures"], Value::Null);
    assert_eq!(
        s["headline"]["median_age_days"], 6,
        "ages need only the ledger"
    );
    assert_eq!(s["deposit"]["evaluated"], false);
    assert_eq!(s["owners"][0]["failing"], Value::Null);
    let missing = s["deposit"]["missing_inputs"].to_string();
    assert!(missing.contains("--collected"), "{missing}");
    assert!(missing.contains("--samples"), "{missing}");
}

#[test]
fn human_output() {
    let dir = world();
    let out = stats(
        dir.path(),
        &["--history", "gate/history.jsonl", "--since", "2026-11-23"],
    );
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    insta::assert_snapshot!(text);
    // The headline reads the same figures as the JSON.
    assert!(
        text.contains("deposit failures            4 of 11 freezes"),
        "{text}"
    );
    assert!(
        text.contains("median age of open freezes  6 days"),
        "{text}"
    );
    assert!(
        text.contains("inherited skips refused     3 (2 distinct) in 3 runs since 2026-11-23"),
        "{text}"
    );
}

#[test]
fn markdown_output_has_the_headline_a_mermaid_chart_and_the_tables() {
    let dir = world();
    let out = stats(
        dir.path(),
        &[
            "--history",
            "gate/history.jsonl",
            "--since",
            "2026-11-23",
            "--format",
            "markdown",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains(
        "| Deposit failures | Median age of open freezes | Inherited skips refused |\n|---:|---:|---:|\n| 4 of 11 freezes; 7 unproven (no proof record: give --proof) | 6 days | 3 (2 distinct) in 3 runs since 2026-11-23 |\n"
    ), "{md}");
    assert!(md.contains(
        "```mermaid\nxychart-beta\n    title \"Open freezes by age\"\n    x-axis \"age (days)\" [\"0-3\", \"4-7\", \"8-14\", \"15-30\", \"31+\"]\n    y-axis \"freezes\" 0 --> 4\n    bar [3, 2, 4, 1, 0]\n```\n"
    ), "{md}");
    assert!(md.contains("| dana | 4 | 14 | 1 | 1 | 1 |\n| finley | 4 | 12 | 2 | 0 | 3 |\n| ari | 3 | 20 | 1 | 1 | 0 |\n"), "{md}");
    assert!(md.contains("### By team"), "{md}");
    assert!(md.contains("| sync | 5 | 20 | 0 | 2 | 2 |\n| billing | 4 | 12 | 3 | 0 | 2 |\n| (none) | 2 | 6 | 1 | 0 | 0 |\n"), "{md}");
    assert!(
        md.contains("| `tests/test_mod.py::test_a2` | finley | FZ201 |"),
        "{md}"
    );
    assert!(md.contains("| `tests/test_x.py::test_a` | 2 |"), "{md}");
    // --output writes the same text (for $GITHUB_STEP_SUMMARY).
    let out = stats(
        dir.path(),
        &[
            "--history",
            "gate/history.jsonl",
            "--since",
            "2026-11-23",
            "--format",
            "markdown",
            "--output",
            "gate/summary.md",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("gate/summary.md")).unwrap(),
        md
    );
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn check_appends_one_line_per_run_and_never_rewrites_older_lines() {
    let mut w = World::passing();
    w.applied.push(common::OTHER.into()); // refused: FZ401
    w.extra_args = vec!["--history".into(), "gate/history.jsonl".into()];
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("gate/history.jsonl");
    let mut previous: Vec<u8> = Vec::new();
    for run in 1..=3 {
        let out = w.run_in(dir.path(), "json");
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let now = std::fs::read(&history).unwrap();
        assert!(now.starts_with(&previous), "run {run}: older bytes changed");
        assert!(now.ends_with(b"\n"));
        assert_eq!(lines(&history).len(), run, "one line per run");
        previous = now;
    }
    let record: Value = serde_json::from_str(lines(&history).last().unwrap()).unwrap();
    assert_eq!(record["version"], 1);
    assert_eq!(record["today"], "2026-11-30");
    assert_eq!(record["target_branch"], "main");
    assert_eq!(record["failed"], true);
    assert_eq!(record["errors"], 1);
    assert_eq!(record["warnings"], 0);
    assert_eq!(record["freezes"], 1);
    assert_eq!(record["rules"]["FZ401"], 1);
    assert_eq!(record["rules"]["FZ103"], 0);
    assert_eq!(record["refused_inherited"], json!([common::OTHER]));
    let time: &str = record["time"].as_str().unwrap();
    assert!(time.len() == 20 && time.ends_with('Z'), "{time}");

    // stats reads it back: three refusals of one id.
    let s: Value = serde_json::from_slice(
        &freezegate(dir.path())
            .args([
                "stats",
                "--today",
                "2026-11-30",
                "--format",
                "json",
                "--history",
                "gate/history.jsonl",
            ])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(s["inherited"]["refused"], 3);
    assert_eq!(s["inherited"]["distinct"], 1);

    // An input error records nothing.
    w.today = "not-a-date".into();
    let out = w.run_in(dir.path(), "json");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&history).unwrap(), previous);
}

#[test]
fn the_record_names_the_commit() {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    git(&["init", "-q"]);
    let mut w = World::passing();
    w.extra_args = vec!["--history".into(), "history.jsonl".into()];
    w.run_in(dir.path(), "json"); // writes the inputs
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "inputs"]);
    let head = git(&["rev-parse", "HEAD"]);
    let out = w.run_in(dir.path(), "json");
    assert_eq!(out.status.code(), Some(0));
    let last: Value =
        serde_json::from_str(lines(&dir.path().join("history.jsonl")).last().unwrap()).unwrap();
    assert_eq!(last["commit"], head.as_str());
    assert_eq!(last["refused_inherited"], json!([]));
    assert_eq!(last["failed"], false);
}

#[test]
fn an_interrupted_append_keeps_the_earlier_lines_and_the_next_run_still_parses() {
    let mut w = World::passing();
    w.extra_args = vec!["--history".into(), "gate/history.jsonl".into()];
    let dir = tempfile::tempdir().unwrap();
    let good = history_lines()[..2].join("\n") + "\n";
    // A run died half-way through its record.
    let torn = format!("{good}{}", &history_lines()[2][..40]);
    write(dir.path(), "gate/history.jsonl", &torn);
    let out = w.run_in(dir.path(), "json");
    assert_eq!(out.status.code(), Some(0));
    let text = std::fs::read_to_string(dir.path().join("gate/history.jsonl")).unwrap();
    assert!(text.starts_with(&torn), "nothing rewritten");
    let all = lines(&dir.path().join("gate/history.jsonl"));
    assert_eq!(all.len(), 4, "the torn fragment keeps its own line");
    assert_eq!(all[..2], history_lines()[..2]);
    let last: Value = serde_json::from_str(&all[3]).unwrap();
    assert_eq!(last["today"], "2026-11-30");

    let out = freezegate(dir.path())
        .args([
            "stats",
            "--today",
            "2026-11-30",
            "--format",
            "json",
            "--history",
            "gate/history.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("gate/history.jsonl: line 3 is an unfinished record"),
        "{stderr}"
    );
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["inherited"]["runs"], 3);
    assert_eq!(s["inherited"]["refused"], 3, "1 + 2 + 0");
    assert_eq!(s["inherited"]["torn_lines"], json!([3]));
}

#[test]
fn a_bad_history_line_is_exit_2_naming_the_file_and_line() {
    let dir = world();
    let mut history = history_lines();
    history.insert(
        2,
        r#"{"version": 1, "time": "2026-11-24T00:00:00Z", "refused_inherited": 7}"#.into(),
    );
    write(
        dir.path(),
        "gate/history.jsonl",
        &(history.join("\n") + "\n"),
    );
    let out = stats(dir.path(), &["--history", "gate/history.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("gate/history.jsonl:3:1"), "{stderr}");
    assert!(
        stderr.contains("line 3: is not a history record"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());

    for (line, why) in [
        ("this is not json", "is not a history record"),
        (
            r#"{"version": 2, "time": "2026-11-24T00:00:00Z", "today": "2026-11-24", "commit": null, "target_branch": null, "failed": false, "errors": 0, "warnings": 0, "freezes": 0, "rules": {}, "refused_inherited": []}"#,
            "record version 2",
        ),
        (
            r#"{"version": 1, "time": "last tuesday", "today": "2026-11-24", "commit": null, "target_branch": null, "failed": false, "errors": 0, "warnings": 0, "freezes": 0, "rules": {}, "refused_inherited": []}"#,
            "is not an RFC 3339 timestamp",
        ),
    ] {
        let text = format!("{}\n{line}\n", history_lines()[0]);
        write(dir.path(), "gate/history.jsonl", &text);
        let out = stats(dir.path(), &["--history", "gate/history.jsonl"]);
        assert_eq!(out.status.code(), Some(2), "{line}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("gate/history.jsonl:2:1"), "{stderr}");
        assert!(stderr.contains(why), "{stderr}");
    }

    let out = stats(dir.path(), &["--history", "gate/nope.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("gate/nope.jsonl"));
}

#[test]
fn bad_stats_usage_is_exit_2() {
    let dir = world();
    for (args, why) in [
        (
            vec!["--history", "gate/history.jsonl", "--since", "2026-02-30"],
            "--since `2026-02-30` is not a real date",
        ),
        (vec!["--since", "2026-11-23"], "give --history PATH too"),
        (
            vec!["--expiring-days=-1"],
            "invalid value '-1' for '--expiring-days <N>'",
        ),
        (vec!["--ledger", "gate/missing.json"], "gate/missing.json"),
        (vec!["--samples", "gate/nope.json"], "gate/nope.json"),
        (vec!["--coverage", "gate/nocov.json"], "gate/nocov.json"),
    ] {
        let out = stats(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(why), "{args:?}: {stderr}");
    }
}

/// The shipped example: one freeze (finley, opened 2026-11-23, expires 2026-12-04) whose
/// deposit passes on the recorded facts. On 2026-11-30: 0 deposit failures, median age 7
/// days, and (after one recorded `check` run) 0 inherited skips refused.
#[test]
fn stats_on_the_example_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let history = tmp.path().join("history.jsonl");
    let recorded = "examples/pytest-demo/gate/recorded";
    let facts = [
        "--config".to_string(),
        "examples/pytest-demo/freezegate.toml".into(),
        "--today".into(),
        TODAY.into(),
        "--collected".into(),
        format!("{recorded}/collected.txt"),
        "--changed".into(),
        format!("{recorded}/changed.txt"),
        "--samples".into(),
        format!("{recorded}/observed"),
        "--applied-skips".into(),
        format!("{recorded}/skipped.json"),
        "--junit".into(),
        format!("{recorded}/junit.xml"),
    ];
    let out = freezegate(root)
        .arg("check")
        .args(&facts)
        .arg("--history")
        .arg(&history)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(lines(&history).len(), 1);

    let run = |format: &str| {
        let out = freezegate(root)
            .arg("stats")
            .args(&facts)
            .args(["--format", format, "--history"])
            .arg(&history)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let s: Value = serde_json::from_str(&run("json")).unwrap();
    assert_eq!(
        s["headline"],
        json!({"deposit_failures": 0, "median_age_days": 7, "inherited_refused": 0})
    );
    assert_eq!(
        s["freezes"]["age_days"],
        json!({"median": 7, "p90": 7, "max": 7})
    );
    assert_eq!(s["freezes"]["expiring"], 0, "expires in 4 days");
    assert_eq!(s["owners"], json!([group(Some("finley"), 1, 7, 0, 0, 0)]));

    let human = run("human");
    assert!(
        human.contains(
            "deposit failures            0 of 1 freeze; 1 unproven (no proof record: give --proof)\n"
        ),
        "{human}"
    );
    assert!(
        human.contains("median age of open freezes  7 days\n"),
        "{human}"
    );
    assert!(
        human.contains("inherited skips refused     0 (0 distinct) in 1 run (all history)\n"),
        "{human}"
    );
    assert!(
        human.contains(
            "  finley        1              7               0        0                0\n"
        ),
        "{human}"
    );

    let md = run("markdown");
    assert!(
        md.contains("| 0 of 1 freeze; 1 unproven (no proof record: give --proof) | 7 days | 0 (0 distinct) in 1 run (all history) |"),
        "{md}"
    );
    assert!(md.contains("| finley | 1 | 7 | 0 | 0 | 0 |"), "{md}");
    assert!(md.contains("    bar [0, 1, 0, 0, 0]\n"), "{md}");
}

/// The docs' "Weekly numbers" commands run as shown and print the output it shows.
#[test]
fn the_weekly_numbers_page_is_what_stats_prints() {
    let page = include_str!("../docs/weekly-numbers.md");
    let section = &page[page
        .find("# Weekly numbers")
        .expect("docs/weekly-numbers.md has its title")..];
    let tmp = tempfile::tempdir().unwrap();
    let history = tmp.path().join("history.jsonl");
    let command = |name: &str| -> Vec<String> {
        let line = section
            .lines()
            .find(|l| l.starts_with(&format!("    freezegate {name} ")))
            .unwrap_or_else(|| panic!("the section shows `freezegate {name}`"));
        line.split_whitespace()
            .skip(1)
            .map(|a| {
                if a == "gate/history.jsonl" {
                    history.display().to_string()
                } else {
                    a.to_string()
                }
            })
            .collect()
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = freezegate(root).args(command("check")).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = freezegate(root).args(command("stats")).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let start = section.find("```text\n").unwrap() + "```text\n".len();
    let shown = &section[start..start + section[start..].find("```").unwrap()];
    assert_eq!(String::from_utf8(out.stdout).unwrap(), shown);
}

/// With `--coverage`, stats adds up what the open freezes put at stake (issue 9): the
/// fixture's frozen test alone covered 4 lines, of which its property covers 1.
#[test]
fn coverage_at_stake_across_open_freezes() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = |format: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_freezegate"))
            .current_dir(repo)
            .args([
                "stats",
                "--ledger",
                "policies/tests/freeze_ledger.json",
                "--today",
                "2026-11-30",
            ])
            .args([
                "--coverage",
                "policies/tests/fz207/quarter-covered/coverage.json",
                "--format",
                format,
            ])
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    assert_eq!(
        json["coverage"],
        serde_json::json!({"freezes": 1, "lines_at_stake": 4, "lines_covered_by_properties": 1, "lines_uncovered": 3})
    );
    let expected =
        "4 lines only frozen tests covered (1 freeze): 1 covered by their properties, 3 not";
    assert!(run("human").contains(&format!("coverage at stake           {expected}")));
    assert!(run("markdown").contains(&format!("Coverage at stake: {expected}.")));
    // Without coverage the figure is absent, not zero.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_freezegate"))
        .current_dir(repo)
        .args([
            "stats",
            "--ledger",
            "policies/tests/freeze_ledger.json",
            "--today",
            "2026-11-30",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json["coverage"].is_null());
}

#[test]
fn skips_outside_the_ledger_and_the_suite_size_over_the_history() {
    let dir = common::repo_dir();
    let write = |name: &str, text: &str| common::write(dir.path(), name, text);
    write("gate/freeze_ledger.json", r#"{"schema": 1, "freezes": []}"#);
    write(
        "gate/skip_baseline.json",
        r#"{"version": 1, "skips": [{"test_id": "t.py::a", "kind": "skip"}, {"test_id": "t.py::b", "kind": "xfail"}, {"test_id": "t.py", "kind": "collection"}]}"#,
    );
    let record = |time: &str, collected: usize, unledgered: &[&str]| {
        serde_json::json!({"version": 1, "time": time, "today": "2026-11-30", "commit": null,
            "target_branch": "main", "failed": !unledgered.is_empty(), "errors": unledgered.len(),
            "warnings": 0, "freezes": 0, "rules": {}, "refused_inherited": [],
            "unledgered": unledgered, "collected": collected})
        .to_string()
    };
    write(
        "gate/history.jsonl",
        &[
            record("2026-11-20T09:00:00Z", 25, &["t.py::old"]),
            record("2026-11-24T09:00:00Z", 20, &["t.py::c", "t.py::d"]),
            record("2026-11-28T09:00:00Z", 18, &["t.py::d"]),
        ]
        .join("\n"),
    );
    let stats = |format: &str| {
        let out = freezegate(dir.path())
            .args([
                "stats",
                "--history",
                "gate/history.jsonl",
                "--since",
                "2026-11-23",
            ])
            .args(["--today", "2026-11-30", "--format", format])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let json: serde_json::Value = serde_json::from_str(&stats("json")).unwrap();
    assert_eq!(
        json["outside"],
        serde_json::json!({"baseline_entries": 3, "refused": 3, "refused_distinct": 2, "collected_per_run": [20, 18]})
    );
    let expected = "baseline 3 entries; FZ601 refused 3 (2 distinct)";
    assert!(stats("human").contains(&format!("skips outside the ledger    {expected}\n  suite size                  20 → 18 collected over 2 runs")));
    assert!(stats("markdown").contains(&format!(
        "Skips outside the ledger: {expected}. Suite size: 20 → 18 collected over 2 runs."
    )));
}
