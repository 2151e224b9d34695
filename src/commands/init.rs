//! `freezegate init`: scaffold config, an empty ledger, the `.gitignore` entries of the
//! records and pytest's `freezegate = true` in the repository root (with `--pack`, a copy
//! of the default pack), never overwriting a file.

use std::path::Path;

use crate::commands::{rewrite_atomic, write_atomic, EXIT_PASS};
use crate::config::{find_repo_root, Config};
use crate::document::Format;
use crate::engine::policy::{BUILTIN, PACK_TESTS};
use crate::error::GateError;

pub const CONFIG_TEMPLATE: &str = r#"# freezegate configuration. Paths are relative to this file.
# Every key is optional; the values below are the defaults.

# The freeze ledger: .json, .yaml/.yml or .toml.
ledger = "gate/freeze_ledger.json"

# Policy sources: "builtin" (the default pack compiled into freezegate, which a patch
# cannot edit) and/or directories of *.rhai scripts. `freezegate init --pack` copies the
# default pack to policies/; to customise it, replace "builtin" by "policies" and run
# the gate in CI with --trusted-ref so a patch cannot loosen its own gate.
policies = ["builtin"]

# The run record the pytest plugin writes (`pytest --freezegate`, or `freezegate = true`
# in pytest's ini options): `check --run gate/run.json` reads the collection, applied
# skips, results and sample counts from it (repeat --run for shards). Set it here to make
# it the default of every `check` (then a check without a record is an error, exit 2).
# run = "gate/run.json"

# pytest's rootdir (node ids are relative to it), and how `check --collect` collects.
pytest_root = "."
# `python` is the interpreter first on PATH when the gate runs: activate the project's
# virtualenv first, or name its interpreter here (e.g. ".venv/bin/python").
collect_command = ["python", "-m", "pytest", "--collect-only", "--verbosity=-1", "--no-header"]

[params]
# Longest allowed freeze window, in days (FZ104, FZ107).
max_window_days = 14
# Distinct inputs a compensating property must see (FZ301).
min_distinct = 8
# A freeze the patch adds or changes owes a proof record (`freezegate prove`, then
# `check --proof`; FZ212), the default. false where proofs run and are checked in
# another job.
proof_required = true

# Reviewed exceptions to FZ401 (inherited skips), pinned to target branches:
# [[params.allow_inherited]]
# test_id = "tests/test_sync.py::test_remote_clock"
# branch = "release/*"
# approver = "dana"

[rules]
# Severity per rule code: "error", "warn" or "off" (FZ001 cannot be turned off).
# FZ204 = "error"
"#;

/// An empty ledger in each format the ledger's extension names.
fn empty_ledger(format: Format) -> &'static str {
    match format {
        Format::Json => "{\n  \"schema\": 1,\n  \"freezes\": []\n}\n",
        Format::Yaml => "schema: 1\nfreezes: []\n",
        Format::Toml => "schema = 1\nfreezes = []\n",
    }
}

pub fn run(cwd: &Path, args: &crate::cli::InitArgs) -> Result<u8, GateError> {
    let root = find_repo_root(cwd);
    // A config already there names the ledger (and its format): the empty ledger is
    // written where, and as, it says.
    let ledger = match Config::discover(cwd, None) {
        Ok(config) if config.source.is_some() => config.ledger,
        _ => root.join("gate/freeze_ledger.json"),
    };
    let format = Format::from_path(&ledger).unwrap_or(Format::Json);
    let ledger = crate::config::display_path(&ledger, &root);
    let mut files: Vec<(String, &str)> = vec![
        ("freezegate.toml".into(), CONFIG_TEMPLATE),
        (ledger.clone(), empty_ledger(format)),
    ];
    if args.pack {
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
    }
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
    if args.pack {
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
    }
    ignore_generated(&root)?;
    let (plugin, pytest_config) = enable_plugin(&root)?;
    if let Some(name) = pytest_config {
        let text = read(&root, name)?;
        if let Some(strict) = text.and_then(|text| warnings_are_errors(name, &text)) {
            println!("note     {name} turns pytest's warnings into errors ({strict}): where freezegate is not installed, pytest stops at `Unknown config option: freezegate`; install it in every environment that runs the tests ({})", crate::docs_url!("faq/"));
        }
    }
    let default = crate::inputs::tools::default_branch(&root).unwrap_or_else(|| "main".into());
    // The steps below run on the default branch, its own base; elsewhere the gate judges
    // a patch, which needs --base (found on a pyrsistent clone, `master` by origin, with
    // a `main` made by hand).
    if let Some(branch) = crate::inputs::tools::current_branch(&root).filter(|b| *b != default) {
        println!("note     you are on {branch}, not {default} (origin's default branch): run the steps below on {default}, or give the run in step 2 --base {default} (on {branch} it judges a patch against {default})");
    }
    let scaffold = [
        "freezegate.toml",
        ledger.as_str(),
        ".gitignore",
        pytest_config.unwrap_or_default(),
        if args.pack { "policies" } else { "" },
    ]
    .into_iter()
    .filter(|name| !name.is_empty())
    .collect::<Vec<_>>()
    .join(" ");
    println!(
        "\nNext steps (one run of the suite, on the {default} branch):
  1. Commit what init wrote (a run record names its commit: the gate judges a
     committed tree):
       git add {scaffold} && git commit -m \"Adopt freezegate\"
  2. Run the suite once: its existing skips go into the skip baseline (reviewed
     once, like config; a skip added later fails FZ601), and the run is checked
     ({default} is its own base: no --base needed there):
       freezegate run --baseline --check -- {plugin}
  3. Review gate/skip_baseline.json and commit it:
       git add gate/skip_baseline.json && git commit -m \"freezegate: adopt the existing skips\"
  Push both commits to {default}: the adoption is what later patches are judged by.
  As a pull request instead, judge it once without --trusted-ref (the base has no
  gate to trust yet, so --trusted-ref would read no config and no baseline).
  4. In CI, on {default} keep its run record (on every push, cached by commit):
       freezegate run -- {plugin} --freezegate-record gate/base-run.json
     and on a patch, run and gate it against the base's run, config read from the base:
       freezegate run --check --base origin/{default} --base-run gate/base-run.json --trusted-ref origin/{default} -- {plugin}
     a patch that adds or changes a freeze owes its proof (FZ212): before the check
       freezegate prove --base origin/{default}
     and `--proof gate/proof.json` after --check
     (examples/ci/freezegate.yml does all of it in GitHub Actions)
  To freeze a test: freezegate freeze add TEST_ID --owner NAME --reason TEXT --invariant TEXT --property PROPERTY_ID"
    );
    Ok(EXIT_PASS)
}

/// The records the plugin, `freezegate run` and `prove` write under `gate/` (the run,
/// its shards, the base's run, the proof and its shards), kept out of git: each names
/// the commit it is of, so none belongs in one.
const GENERATED: &[&str] = &["gate/*run*.json", "gate/proof*.json"];

/// Adds the generated files to `.gitignore` (created when missing), once each.
fn ignore_generated(root: &Path) -> Result<(), GateError> {
    let path = root.join(".gitignore");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(GateError::io(".gitignore", e)),
    };
    let missing: Vec<&str> = GENERATED
        .iter()
        .copied()
        .filter(|pattern| !text.lines().any(|line| line.trim() == *pattern))
        .collect();
    if missing.is_empty() {
        println!(
            "kept     .gitignore (already ignores {})",
            GENERATED.join(", ")
        );
        return Ok(());
    }
    let mut edited = text.clone();
    if !edited.is_empty() && !edited.ends_with('\n') {
        edited.push('\n');
    }
    edited.push_str("# records freezegate writes (each names its commit)\n");
    for pattern in &missing {
        edited.push_str(pattern);
        edited.push('\n');
    }
    rewrite_atomic(&path, &text, &edited)?;
    println!("updated  .gitignore (ignores {})", missing.join(", "));
    Ok(())
}

/// Turns the pytest plugin on in pytest's own config (`freezegate = true`), in the file
/// pytest itself would read, in its order: `pytest.ini` / `.pytest.ini` (`[pytest]`),
/// `pyproject.toml` (`[tool.pytest.ini_options]`, or pytest 9's `[tool.pytest]`),
/// `tox.ini` (`[pytest]`), `setup.cfg` (`[tool:pytest]`). Returns the command that runs
/// the tests with the plugin, and the file that turns it on.
fn enable_plugin(root: &Path) -> Result<(&'static str, Option<&'static str>), GateError> {
    const ENABLED: &str = "python -m pytest";
    for (name, section) in [("pytest.ini", "[pytest]"), (".pytest.ini", "[pytest]")] {
        // pytest reads a pytest.ini even without a [pytest] section.
        if let Some(text) = read(root, name)? {
            enable_in_ini(root, name, &text, section)?;
            return Ok((ENABLED, Some(name)));
        }
    }
    if let Some(text) = read(root, "pyproject.toml")? {
        if enable_in_pyproject(root, &text)? {
            return Ok((ENABLED, Some("pyproject.toml")));
        }
    }
    for (name, section) in [("tox.ini", "[pytest]"), ("setup.cfg", "[tool:pytest]")] {
        if let Some(text) = read(root, name)? {
            if ini_section(&text, section).is_some() {
                enable_in_ini(root, name, &text, section)?;
                return Ok((ENABLED, Some(name)));
            }
        }
    }
    println!("note     no pytest config found: run pytest with --freezegate (or set freezegate = true in its ini options)");
    Ok(("python -m pytest --freezegate", None))
}

/// What in a pytest config makes an unknown option (`PytestConfigWarning`) an error:
/// pytest 9's `strict` or `strict_config`, `--strict-config` in addopts, or the last
/// warning filter that applies to it being an `error` (pytest applies `filterwarnings`
/// in order, then addopts' `-W`, and the last match wins). Read from the pytest section
/// of `name` alone (another tool's `strict` is not pytest's).
fn warnings_are_errors(name: &str, text: &str) -> Option<&'static str> {
    let options = pytest_options(name, text)?;
    let yes = |value: &str| value.eq_ignore_ascii_case("true") || value == "1";
    if options.strict.iter().any(|v| yes(v)) {
        return Some("strict");
    }
    let mut addopts = options.addopts.iter().map(String::as_str);
    let mut filters: Vec<(&str, &'static str)> = options
        .filterwarnings
        .iter()
        .map(|f| (f.as_str(), "filterwarnings = error"))
        .collect();
    while let Some(option) = addopts.next() {
        match option {
            "--strict-config" => return Some("--strict-config"),
            "-W" | "--pythonwarnings" => {
                if let Some(filter) = addopts.next() {
                    filters.push((filter, "-W error"));
                }
            }
            _ => {
                let filter = option
                    .strip_prefix("--pythonwarnings=")
                    .or_else(|| option.strip_prefix("-W"));
                if let Some(filter) = filter {
                    filters.push((filter.trim_start_matches('='), "-W error"));
                }
            }
        }
    }
    // The categories an unknown option's PytestConfigWarning is an instance of.
    const APPLIES: [&str; 8] = [
        "",
        "Warning",
        "UserWarning",
        "PytestWarning",
        "pytest.PytestWarning",
        "PytestConfigWarning",
        "pytest.PytestConfigWarning",
        "builtins.Warning",
    ];
    let (last, why) = filters.iter().rev().find(|(filter, _)| {
        let category = filter.split(':').nth(2).unwrap_or("").trim();
        APPLIES.contains(&category)
    })?;
    (last.split(':').next()?.trim() == "error").then_some(*why)
}

/// The options of a pytest config that decide whether warnings are errors.
#[derive(Default)]
struct PytestOptions {
    /// `strict` and `strict_config`, as written.
    strict: Vec<String>,
    /// addopts, split into its options.
    addopts: Vec<String>,
    filterwarnings: Vec<String>,
}

impl PytestOptions {
    /// One key's values as the config wrote them (a TOML array's strings, or an INI
    /// value over its continuation lines).
    fn take(&mut self, key: &str, values: Vec<String>) {
        match key {
            "strict" | "strict_config" => self.strict.extend(values),
            "addopts" => self.addopts.extend(
                values
                    .iter()
                    .flat_map(|s| s.split_whitespace().map(str::to_string)),
            ),
            "filterwarnings" => self.filterwarnings.extend(
                values
                    .iter()
                    .flat_map(|s| s.lines().map(|l| l.trim().to_string()))
                    .filter(|l| !l.is_empty()),
            ),
            _ => {}
        }
    }
}

/// The pytest section of `name`: `[tool.pytest.ini_options]` or `[tool.pytest]` of a
/// pyproject.toml, `[tool:pytest]` of a setup.cfg, `[pytest]` of a pytest.ini or tox.ini
/// (an INI value goes on over the indented lines after its key).
fn pytest_options(name: &str, text: &str) -> Option<PytestOptions> {
    let mut options = PytestOptions::default();
    if name.ends_with(".toml") {
        let doc: toml::Table = toml::from_str(text).ok()?;
        let tool = doc.get("tool")?.get("pytest")?;
        let section = tool.get("ini_options").unwrap_or(tool).as_table()?;
        let strings = |value: &toml::Value| -> Vec<String> {
            match value {
                toml::Value::Array(items) => items
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
                toml::Value::String(s) => vec![s.clone()],
                other => vec![other.to_string()],
            }
        };
        for (key, value) in section {
            options.take(key, strings(value));
        }
        return Some(options);
    }
    let header = if name == "setup.cfg" {
        "[tool:pytest]"
    } else {
        "[pytest]"
    };
    let body = &text[ini_section(text, header)?];
    let mut key: Option<String> = None;
    let mut values: Vec<(String, String)> = Vec::new();
    for line in body.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            if let (Some(_), Some(last)) = (&key, values.last_mut()) {
                last.1.push('\n');
                last.1.push_str(trimmed);
            }
            continue;
        }
        let Some((k, v)) = trimmed.split_once(['=', ':']) else {
            key = None;
            continue;
        };
        key = Some(k.trim().to_string());
        values.push((k.trim().to_string(), v.trim().to_string()));
    }
    for (key, value) in values {
        options.take(&key, vec![value]);
    }
    Some(options)
}

fn read(root: &Path, name: &str) -> Result<Option<String>, GateError> {
    match std::fs::read_to_string(root.join(name)) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(GateError::io(name, e)),
    }
}

/// The byte range of an INI section's body: after its header line, up to the next
/// header (or the end).
fn ini_section(text: &str, header: &str) -> Option<std::ops::Range<usize>> {
    let mut offset = 0;
    let mut start = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if start.is_some() && trimmed.starts_with('[') {
            return start.map(|s| s..offset);
        }
        offset += line.len();
        if trimmed == header {
            start = Some(offset);
        }
    }
    start.map(|s| s..text.len())
}

/// `freezegate = true` in an INI file's pytest section (added when the file has none).
fn enable_in_ini(root: &Path, name: &str, text: &str, header: &str) -> Result<(), GateError> {
    let edited = match ini_section(text, header) {
        Some(body) => {
            let set = text[body.clone()].lines().any(|line| {
                line.split(['=', ':'])
                    .next()
                    .is_some_and(|key| key.trim() == "freezegate")
            });
            if set {
                println!("kept     {name} ({header} already sets freezegate)");
                return Ok(());
            }
            format!(
                "{}freezegate = true\n{}",
                &text[..body.start],
                &text[body.start..]
            )
        }
        None => {
            let sep = if text.is_empty() || text.ends_with('\n') {
                ""
            } else {
                "\n"
            };
            format!("{text}{sep}{header}\nfreezegate = true\n")
        }
    };
    rewrite_atomic(&root.join(name), text, &edited)?;
    println!("updated  {name} (freezegate = true in {header})");
    Ok(())
}

/// `freezegate = true` in pyproject.toml's pytest table; `false` when it has none.
fn enable_in_pyproject(root: &Path, text: &str) -> Result<bool, GateError> {
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
    let Some(options) = options else {
        return Ok(false);
    };
    if options.get("freezegate").is_some() {
        println!("kept     pyproject.toml ({section} already sets freezegate)");
    } else {
        options.insert("freezegate", toml_edit::value(true));
        rewrite_atomic(&root.join("pyproject.toml"), text, &doc.to_string())?;
        println!("updated  pyproject.toml (freezegate = true in {section})");
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::ini_section;
    use super::warnings_are_errors;

    #[test]
    fn a_config_that_turns_warnings_into_errors_is_seen_in_each_format() {
        for (name, strict, why) in [
            ("setup.cfg", "[tool:pytest]\nfilterwarnings =\n    error\n    ignore::DeprecationWarning\n", "filterwarnings = error"),
            ("setup.cfg", "[tool:pytest]\nfilterwarnings =\n    ignore::UserWarning\n    error\n", "filterwarnings = error"),
            ("pytest.ini", "[pytest]\nfilterwarnings = error\n", "filterwarnings = error"),
            ("pytest.ini", "[pytest]\nfilterwarnings =\n    error::pytest.PytestWarning\n", "filterwarnings = error"),
            ("pyproject.toml", "[tool.pytest.ini_options]\nfilterwarnings = [\"error\", \"ignore::DeprecationWarning\"]\n", "filterwarnings = error"),
            ("pytest.ini", "[pytest]\naddopts = --strict-config -q\n", "--strict-config"),
            // On a continuation line of a multi-line addopts.
            ("tox.ini", "[pytest]\naddopts =\n    -q\n    --strict-config\n", "--strict-config"),
            ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = [\n  \"-q\",\n  \"--strict-config\",\n]\n", "--strict-config"),
            ("pytest.ini", "[pytest]\naddopts = -q -W error\n", "-W error"),
            ("pytest.ini", "[pytest]\naddopts = -q -Werror\n", "-W error"),
            ("pyproject.toml", "[tool.pytest]\nstrict = true\n", "strict"),
            ("pytest.ini", "[pytest]\nstrict = True\n", "strict"),
            ("pytest.ini", "[pytest]\nstrict_config = true\n", "strict"),
        ] {
            assert_eq!(warnings_are_errors(name, strict), Some(why), "{strict}");
        }
        for (name, lenient) in [
            ("pytest.ini", "[pytest]\nfilterwarnings =\n    error::DeprecationWarning\n"),
            ("setup.cfg", "[tool:pytest]\naddopts = -q\n\n[flake8]\nselect = error\n"),
            ("pyproject.toml", "[tool.pytest.ini_options]\nfilterwarnings = [\"ignore::UserWarning\"]\n"),
            // The last entry that applies wins: an ignore of UserWarning after `error`.
            ("pyproject.toml", "[tool.pytest.ini_options]\nfilterwarnings = [\"error\", \"ignore::UserWarning\"]\n"),
            ("pytest.ini", "[pytest]\n# addopts = --strict-config\naddopts = -q\n"),
            // Another tool's strict, and a -W of a category the config warning is not.
            ("pyproject.toml", "[tool.mypy]\nstrict = true\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n"),
            ("pytest.ini", "[pytest]\naddopts = -W error::DeprecationWarning\n"),
            // addopts' -W comes after filterwarnings: its ignore wins.
            ("pytest.ini", "[pytest]\nfilterwarnings = error\naddopts = -W ignore::UserWarning\n"),
        ] {
            assert_eq!(warnings_are_errors(name, lenient), None, "{lenient}");
        }
    }

    #[test]
    fn an_ini_section_ends_at_the_next_header() {
        let text = "[metadata]\nname = x\n[tool:pytest]\naddopts = -q\n\n[flake8]\nmax = 1\n";
        let body = ini_section(text, "[tool:pytest]").unwrap();
        assert_eq!(&text[body], "addopts = -q\n\n");
        assert_eq!(ini_section(text, "[pytest]"), None);
        let last = ini_section("[pytest]\nx = 1", "[pytest]").unwrap();
        assert_eq!(last, 9..14);
    }
}
