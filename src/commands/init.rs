//! `freezegate init`: scaffold config, an empty ledger and a copy of the default pack in
//! the repository root, never overwriting a file.

use std::path::Path;

use crate::commands::{rewrite_atomic, write_atomic, EXIT_PASS};
use crate::config::find_repo_root;
use crate::engine::policy::{BUILTIN, PACK_TESTS};
use crate::error::GateError;

pub const CONFIG_TEMPLATE: &str = r#"# freezegate configuration. Paths are relative to this file.
# Every key is optional; the values below are the defaults.

# The freeze ledger: .json, .yaml/.yml or .toml.
ledger = "gate/freeze_ledger.json"

# Policy sources: "builtin" (the default pack compiled into freezegate, which a patch
# cannot edit) and/or directories of *.rhai scripts. policies/ holds a copy of the
# default pack for reference; to customise it, replace "builtin" by "policies" and run
# the gate in CI with --trusted-ref so a patch cannot loosen its own gate.
policies = ["builtin"]

# The run record the pytest plugin writes (`pytest --freezegate`, or `freezegate = true`
# in pytest's ini options): `check --run gate/run.json` reads the collection, applied
# skips, results and sample counts from it (repeat --run for shards). Set it here to make
# it the default of every `check` (then a check without a record is an error, exit 2).
# run = "gate/run.json"

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

pub fn run(cwd: &Path) -> Result<u8, GateError> {
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
    ignore_generated(&root)?;
    let plugin = enable_plugin(&root)?;
    println!(
        "\nNext steps:\n  1. Record a freeze:  freezegate freeze add TEST_ID --owner NAME --reason TEXT --invariant TEXT --property PROPERTY_ID\n  2. On the base branch, keep its run record (CI: on every push, cached by commit):\n       freezegate run -- {plugin} --freezegate-record gate/base-run.json\n  3. Run and gate the patch, against the base's run, with config read from the base:\n       freezegate run --check --base origin/main --base-run gate/base-run.json --trusted-ref origin/main -- {plugin}\n     (`freezegate run` starts pytest, receives its record over a pipe and judges it;\n     examples/ci/freezegate.yml does both in GitHub Actions)"
    );
    Ok(EXIT_PASS)
}

/// The files the plugin and the gate write under `gate/`, kept out of git.
const GENERATED: &str = "gate/*run*.json";

/// Adds the generated files to `.gitignore` (created when missing), once.
fn ignore_generated(root: &Path) -> Result<(), GateError> {
    let path = root.join(".gitignore");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(GateError::io(".gitignore", e)),
    };
    if text.lines().any(|line| line.trim() == GENERATED) {
        println!("kept     .gitignore (already ignores {GENERATED})");
        return Ok(());
    }
    let mut edited = text.clone();
    if !edited.is_empty() && !edited.ends_with('\n') {
        edited.push('\n');
    }
    edited.push_str(&format!(
        "# written by freezegate's pytest plugin\n{GENERATED}\n"
    ));
    rewrite_atomic(&path, &text, &edited)?;
    println!("updated  .gitignore (ignores {GENERATED})");
    Ok(())
}

/// Turns the pytest plugin on in pytest's own config (`freezegate = true`): in
/// `[tool.pytest.ini_options]` of pyproject.toml, else `[pytest]` of pytest.ini, when
/// one is there. Returns the command that runs the tests with the plugin.
fn enable_plugin(root: &Path) -> Result<&'static str, GateError> {
    let pyproject = root.join("pyproject.toml");
    if let Ok(text) = std::fs::read_to_string(&pyproject) {
        let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
            GateError::new("pyproject.toml", format!("does not parse: {e}"))
        })?;
        // `[tool.pytest.ini_options]`, or pytest 9's native `[tool.pytest]`.
        let pytest = doc.get_mut("tool").and_then(|tool| tool.get_mut("pytest"));
        let native = pytest
            .as_ref()
            .is_some_and(|pytest| pytest.get("ini_options").is_none());
        let options = match native {
            true => pytest.and_then(toml_edit::Item::as_table_like_mut),
            false => pytest
                .and_then(|pytest| pytest.get_mut("ini_options"))
                .and_then(toml_edit::Item::as_table_like_mut),
        };
        let section = if native {
            "[tool.pytest]"
        } else {
            "[tool.pytest.ini_options]"
        };
        if let Some(options) = options {
            if options.get("freezegate").is_some() {
                println!("kept     pyproject.toml ({section} already sets freezegate)");
            } else {
                options.insert("freezegate", toml_edit::value(true));
                rewrite_atomic(&pyproject, &text, &doc.to_string())?;
                println!("updated  pyproject.toml (freezegate = true in {section})");
            }
            return Ok("python -m pytest");
        }
    }
    let ini = root.join("pytest.ini");
    if let Ok(text) = std::fs::read_to_string(&ini) {
        if text.lines().any(|line| line.trim() == "[pytest]") {
            if text
                .lines()
                .any(|line| line.trim_start().starts_with("freezegate"))
            {
                println!("kept     pytest.ini (already sets freezegate)");
            } else {
                let edited = text.replacen("[pytest]", "[pytest]\nfreezegate = true", 1);
                rewrite_atomic(&ini, &text, &edited)?;
                println!("updated  pytest.ini (freezegate = true)");
            }
            return Ok("python -m pytest");
        }
    }
    println!("note     no pytest config found: run pytest with --freezegate (or set freezegate = true in its ini options)");
    Ok("python -m pytest --freezegate")
}
