//! `freezegate init`: scaffold config, an empty ledger and a copy of the default pack in
//! the repository root, never overwriting a file.

use std::path::Path;

use crate::commands::{write_atomic, EXIT_PASS};
use crate::config::find_repo_root;
use crate::engine::policy::{BUILTIN, PACK_TESTS};
use crate::error::InputError;

pub const CONFIG_TEMPLATE: &str = r#"# freezegate configuration. Paths are relative to this file.
# Every key is optional; the values below are the defaults.

# The freeze ledger: .json, .yaml/.yml or .toml.
ledger = "gate/freeze_ledger.json"

# Policy sources: "builtin" (the default pack compiled into freezegate, which a patch
# cannot edit) and/or directories of *.rhai scripts. policies/ holds a copy of the
# default pack for reference; to customise it, replace "builtin" by "policies" and run
# the gate in CI with --trusted-ref so a patch cannot loosen its own gate.
policies = ["builtin"]

# pytest's rootdir (node ids are relative to it), and how `check --collect` collects.
pytest_root = "."
collect_command = ["python3", "-m", "pytest", "--collect-only", "-q", "--no-header"]

[params]
# Longest allowed freeze window, in days (FZ104, FZ107).
max_window_days = 14
# Distinct inputs a compensating property must see (FZ301).
min_distinct = 8

# Reviewed exceptions to FZ401 (inherited skips), pinned to target branches:
# [[params.allow_inherited]]
# test_id = "tests/test_sync.py::test_remote_clock"
# branch = "release/*"
# approver = "dana"

[rules]
# Severity per rule code: "error", "warn" or "off" (FZ001 cannot be turned off).
# FZ204 = "error"
"#;

pub const EMPTY_LEDGER: &str = "{\n  \"schema\": 1,\n  \"freezes\": []\n}\n";

pub fn run(cwd: &Path) -> Result<u8, InputError> {
    let root = find_repo_root(cwd);
    let mut files: Vec<(String, &str)> = vec![
        ("freezegate.toml".into(), CONFIG_TEMPLATE),
        ("gate/freeze_ledger.json".into(), EMPTY_LEDGER),
    ];
    files.extend(
        BUILTIN
            .iter()
            .map(|(name, text)| (format!("policies/{name}"), *text)),
    );
    // The pack's fixture cases, so `freezegate test` runs on the copy straight away.
    files.extend(
        PACK_TESTS
            .iter()
            .map(|(name, text)| (format!("policies/tests/{name}"), *text)),
    );
    let mut kept = 0;
    for (name, text) in files {
        let path = root.join(&name);
        let fixture = name.starts_with("policies/tests/");
        if path.exists() {
            match fixture {
                true => kept += 1,
                false => println!("kept     {name} (already exists)"),
            }
        } else {
            write_atomic(&path, text.as_bytes())?;
            if !fixture {
                println!("created  {name}");
            }
        }
    }
    println!(
        "{} policies/tests/ ({}{})",
        if kept == PACK_TESTS.len() {
            "kept    "
        } else {
            "created "
        },
        crate::words::count_of(PACK_TESTS.len(), "fixture file"),
        if kept > 0 {
            format!(", {kept} already there and kept")
        } else {
            String::new()
        },
    );
    println!(
        "\nNext steps:\n  1. Record a freeze:   freezegate freeze add TEST_ID --owner NAME --reason TEXT --invariant TEXT --property PROPERTY_ID\n  2. Apply exactly the ledger's skips in pytest (see examples/pytest-demo/conftest.py): freezegate skips --format json\n  3. Gate every patch:  freezegate check --collect --base origin/main --samples .hypothesis/observed --junit gate/junit.xml --applied-skips gate/skipped.json"
    );
    Ok(EXIT_PASS)
}
