//! `freezegate brief TEST_ID`: the drafting step's brief of the inventory project's
//! freeze, in Markdown (snapshot, no colour) and JSON, without and with a proof record;
//! a malformed proof is exit 2 naming the file and line.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{assert_contains, git, hermetic, text, write};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_freezegate");

const INVENTORY: &str = r#""""A small inventory: stock levels."""


def reserve(stock, qty):
    """Take qty units from stock; what is left. Never below zero."""
    if qty <= 0:
        raise ValueError("qty must be positive")
    if qty > stock:
        return 0
    return stock - qty


def label(sku):
    return "SKU-" + sku.strip().upper()
"#;

const EXAMPLES: &str = r#"import pytest
from inventory import label, reserve


def test_label():
    assert label(" ab ") == "SKU-AB"


def test_reserve_takes_qty():
    assert reserve(10, 3) == 7
    assert reserve(2, 3) == 0
    with pytest.raises(ValueError):
        reserve(5, 0)
"#;

const LEDGER: &str = r#"{"schema": 1, "freezes": [{"test_id": "tests/test_inventory.py::test_reserve_takes_qty",
  "reason": "INV-7: reserve moves to a new stock model", "owner": "ines", "opened": "2026-11-25",
  "expires": "2026-12-05", "invariant": "reserve never leaves stock below zero and takes exactly qty when there is enough",
  "compensating_property": "tests/test_props.py::test_reserve_never_negative"}]}"#;

const FROZEN: &str = "tests/test_inventory.py::test_reserve_takes_qty";

const PROOF: &str = r#"{"version": 2, "kind": "freezegate proof record", "commit": null, "dirty": false,
 "ledger": "gate/freeze_ledger.json", "ledger_sha256": "0", "engine": {"name": "mutmut", "version": "3.8.1"},
 "complete": true, "shard": null,
 "freezes": [{"test_id": "tests/test_inventory.py::test_reserve_takes_qty",
   "properties": ["tests/test_props.py::test_reserve_never_negative"],
   "stake": [{"file": "inventory.py", "function": "reserve", "lines": [4, 10], "covered": [6, 8, 10]}],
   "frozen_clean": "passed", "properties_clean": {"tests/test_props.py::test_reserve_never_negative": "passed"},
   "mutants_total": 3, "incomplete": null,
   "mutants": [
     {"id": "m1", "file": "inventory.py", "line": 10, "function": "reserve", "mutation": "- return stock - qty + return stock + qty", "killed_by_frozen": true, "killed_by": ["tests/test_props.py::test_reserve_never_negative"], "duration_s": 0.4},
     {"id": "m2", "file": "inventory.py", "line": 8, "function": "reserve", "mutation": "- if qty > stock: + if qty >= stock:", "killed_by_frozen": true, "killed_by": [], "duration_s": 0.4},
     {"id": "m3", "file": "inventory.py", "line": 6, "function": "reserve", "mutation": "- if qty <= 0: + if qty <= 1:", "killed_by_frozen": false, "killed_by": [], "duration_s": 0.4}
   ]}]}"#;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "inventory.py", INVENTORY);
    write(root, "tests/__init__.py", "");
    write(root, "tests/test_inventory.py", EXAMPLES);
    write(root, "gate/freeze_ledger.json", LEDGER);
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "inventory"]);
    dir
}

fn brief(root: &Path, args: &[&str]) -> Output {
    hermetic(&mut Command::new(BIN))
        .arg("brief")
        .args(args)
        .current_dir(root)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn the_markdown_brief_holds_the_invariant_the_frozen_test_and_the_code_at_stake() {
    let dir = project();
    let out = brief(dir.path(), &[FROZEN, "--static"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    insta::assert_snapshot!("brief_markdown_without_proof", text(&out.stdout));
}

/// Without a proof, the brief runs the frozen test alone with the project's Python, as
/// prove does: the code at stake is what its call phase ran, and how it did is said.
#[test]
fn without_a_proof_the_brief_runs_the_frozen_test_alone_for_the_code_at_stake() {
    let dir = project();
    let python = common::project::python().display().to_string();
    let json = |out: &Output| -> Value {
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let measured = json(&brief(
        dir.path(),
        &[FROZEN, "--python", &python, "--format", "json"],
    ));
    assert_contains(
        measured["code_at_stake_from"].as_str().unwrap(),
        "run alone now with its freeze lifted",
    );
    let stake = &measured["code_at_stake"][0];
    assert_eq!(
        (stake["file"].as_str(), stake["function"].as_str()),
        (Some("inventory.py"), Some("reserve")),
        "{measured:#}"
    );
    assert_eq!(measured["frozen_alone"], "passed");

    // The patch breaks reserve: the frozen test fails alone every time.
    write(
        dir.path(),
        "inventory.py",
        &INVENTORY.replace("return stock - qty", "return stock + qty"),
    );
    let out = brief(dir.path(), &[FROZEN, "--python", &python]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_contains(
        &text(&out.stdout),
        "**It fails alone on this commit's code**",
    );

    // A Python that cannot run it: the source is read instead, and stderr says why.
    let out = brief(dir.path(), &[FROZEN, "--python", "/nonexistent/python"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_contains(&text(&out.stdout), "could not be run alone");
    assert_contains(&text(&out.stderr), "the frozen test was not run alone");
}

/// The most common shape (pyrsistent's `seq.remove(2)`): a fixture hands the test an
/// object and the test calls its method. Run alone, the brief names the method the call
/// phase ran, not the fixture that built the object.
#[test]
fn run_alone_the_brief_finds_the_method_a_fixture_provided_object_runs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "shelf.py",
        "class Shelf:\n    def __init__(self, items):\n        self.items = list(items)\n\n    def remove(self, item):\n        i = self.items.index(item)\n        return Shelf(self.items[:i] + self.items[i + 1:])\n",
    );
    write(root, "tests/__init__.py", "");
    write(
        root,
        "tests/test_shelf.py",
        "import pytest\nfrom shelf import Shelf\n\n\n@pytest.fixture\ndef shelf():\n    return Shelf([1, 2, 3, 2, 1])\n\n\ndef test_remove_first_only(shelf):\n    assert shelf.remove(2).items == [1, 3, 2, 1]\n",
    );
    write(
        root,
        "gate/freeze_ledger.json",
        &LEDGER
            .replace(FROZEN, "tests/test_shelf.py::test_remove_first_only")
            .replace(
                "tests/test_props.py::test_reserve_never_negative",
                "tests/test_props.py::test_remove_matches_list",
            ),
    );
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "shelf"]);
    let python = common::project::python().display().to_string();
    let out = brief(
        root,
        &[
            "tests/test_shelf.py::test_remove_first_only",
            "--python",
            &python,
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stake: Vec<(&str, &str)> = json["code_at_stake"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["file"].as_str().unwrap(), f["function"].as_str().unwrap()))
        .collect();
    assert!(
        stake.contains(&("shelf.py", "Shelf.remove")),
        "the method the test calls: {json:#}"
    );
    assert!(
        stake.iter().all(|(file, _)| *file != "tests/test_shelf.py"),
        "not the fixture nor the test itself: {stake:?}"
    );
}

#[test]
fn with_a_proof_the_brief_lists_the_surviving_mutants_as_diffs() {
    let dir = project();
    write(dir.path(), "gate/proof.json", PROOF);
    let out = brief(dir.path(), &[FROZEN, "--proof", "gate/proof.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    insta::assert_snapshot!("brief_markdown_with_proof", text(&out.stdout));
}

#[test]
fn the_json_brief_has_stable_fields_for_agents() {
    let dir = project();
    write(dir.path(), "gate/proof.json", PROOF);
    let out = brief(
        dir.path(),
        &[FROZEN, "--format", "json", "--proof", "gate/proof.json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["version"], 1);
    assert_eq!(json["test_id"], FROZEN);
    assert_eq!(
        json["entry"]["invariant"],
        "reserve never leaves stock below zero and takes exactly qty when there is enough"
    );
    let test = &json["frozen_test"];
    assert_eq!(
        (
            test["file"].as_str(),
            test["first"].as_u64(),
            test["last"].as_u64()
        ),
        (Some("tests/test_inventory.py"), Some(9), Some(13)),
        "{test}"
    );
    assert_contains(
        test["source"].as_str().unwrap(),
        "assert reserve(10, 3) == 7",
    );
    let stake: Vec<(&str, &str, u64, u64)> = json["code_at_stake"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["file"].as_str().unwrap(),
                c["function"].as_str().unwrap(),
                c["first"].as_u64().unwrap(),
                c["last"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(stake, [("inventory.py", "reserve", 4, 10)]);
    assert_eq!(json["thresholds"]["min_kill_share"], 0.8);
    assert_eq!(json["thresholds"]["min_mutation_score"], 0.6);
    assert_eq!(json["thresholds"]["min_distinct"], 8.0);
    let survivors: Vec<&str> = json["survivors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        survivors,
        ["m2"],
        "the killed one and the one the frozen test lets through are not survivors"
    );
    // prove's one-line `- old + new`, as the diff of the line in the file.
    assert_eq!(
        json["survivors"][0]["diff"],
        "-    if qty > stock:\n+    if qty >= stock:"
    );
    // With a proof, the code at stake is what prove measured, not a reading of the source.
    assert_contains(
        json["code_at_stake_from"].as_str().unwrap(),
        "ran alone under coverage",
    );
    assert_contains(json["ask"].as_str().unwrap(), "three candidate properties");
    assert_contains(
        json["ask"].as_str().unwrap(),
        "the one input class you would not generate",
    );
}

/// A freeze of a parametrized test, recorded by a real pytest run: the brief says it has
/// cases, and which (they all carry the freeze).
#[test]
fn the_brief_says_the_frozen_test_is_parametrized_from_a_real_run() {
    let project = common::project::Project::new();
    project.write_ledger(&["tests/test_app.py::test_cases"]);
    project.record(&[], "gate/run.json");
    let out = brief(
        &project.root,
        &[
            "tests/test_app.py::test_cases",
            "--run",
            "gate/run.json",
            "--static",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_contains(
        &text(&out.stdout),
        "It is parametrized: 3 cases in the run record (`tests/test_app.py::test_cases[1]`, `tests/test_app.py::test_cases[2]` and `tests/test_app.py::test_cases[3]`), each frozen.",
    );
    // Without --run, the last run's record is read, as `freeze add` (which names this
    // command without --run) reads it.
    let out = brief(
        &project.root,
        &[
            "tests/test_app.py::test_cases",
            "--format",
            "json",
            "--static",
        ],
    );
    assert_contains(
        &text(&out.stderr),
        "note: the frozen test's cases are read from gate/run.json",
    );
    assert!(
        !text(&out.stderr).contains("not of HEAD"),
        "{}",
        text(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["cases"].as_array().map(Vec::len), Some(3), "{json:#}");
    assert_eq!(json["frozen_alone"], Value::Null, "no proof: unknown");
    // After a commit the record is of an older tree: read all the same, and said.
    project.write("NOTES.md", "later\n");
    project.commit("a commit after the run");
    let out = brief(
        &project.root,
        &["tests/test_app.py::test_cases", "--static"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_contains(&text(&out.stderr), "gate/run.json is the run of ");
    assert_contains(
        &text(&out.stderr),
        ": pass --run RECORD for this tree's cases",
    );
}

/// The proof ran the frozen test alone on this commit's code and it failed every time:
/// the brief says the patch may have broken it (FZ213), not to write a deposit.
#[test]
fn the_brief_says_when_the_frozen_test_fails_alone_on_this_commit() {
    let dir = project();
    let failed = PROOF.replace(r#""frozen_clean": "passed""#, r#""frozen_clean": "failed""#);
    write(dir.path(), "gate/proof.json", &failed);
    let out = brief(dir.path(), &[FROZEN, "--proof", "gate/proof.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_contains(
        &text(&out.stdout),
        "**It fails alone on this commit's code** (run 3 times, derandomized, its freeze lifted): if it passed at base, the patch broke what it checks, and FZ213 refuses the freeze.",
    );
}

#[test]
fn a_malformed_proof_or_an_unknown_freeze_is_exit_2_naming_the_file() {
    let dir = project();
    write(
        dir.path(),
        "gate/proof.json",
        "{\"version\": 2, \"kind\": \"freezegate proof record\",\n \"freezes\": [{\"test_id\": 3}]}",
    );
    let out = brief(dir.path(), &[FROZEN, "--proof", "gate/proof.json"]);
    assert_eq!(out.status.code(), Some(2));
    let said = text(&out.stderr);
    assert_contains(&said, "gate/proof.json");
    assert_contains(&said, "gate/proof.json:2:");

    let out = brief(dir.path(), &["tests/test_inventory.py::test_label"]);
    assert_eq!(out.status.code(), Some(2));
    assert_contains(
        &text(&out.stderr),
        "no freeze of tests/test_inventory.py::test_label",
    );
}
