//! A temporary git repository with a small pytest + Hypothesis project, the pinned venv
//! with this tree's wheel installed, and the gate run over the project's records: shared
//! by the plugin's tests and the honest-record tests.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use super::text;
use super::wheel::install_wheel;
use serde_json::{json, Value};

pub const BIN: &str = env!("CARGO_BIN_EXE_freezegate");
pub const TODAY: &str = "2026-11-30";
pub const FROZEN: &str = "tests/test_app.py::test_rounding";
pub const PROPERTY: &str = "tests/test_props.py::test_never_negative";

/// The pinned venv's python, with this tree's wheel installed into it (once per run).
pub fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let python = super::venv_python_importing(&["pytest", "hypothesis", "xdist"]);
        install_wheel(
            "pip install <this tree's wheel> into the test venv",
            &python,
            &["--no-deps", "--force-reinstall"],
        );
        python
    })
}

/// Hermetic git, and none of the caller's pytest, Hypothesis or CI settings.
pub fn hermetic(command: &mut Command) -> &mut Command {
    super::hermetic(command)
        .env_remove("FREEZEGATE")
        .env_remove("PYTEST_ADDOPTS")
        .env_remove("PYTHONPATH")
        .env_remove("HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY")
        .env_remove("HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY_CHOICES")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITLAB_CI")
        // Hypothesis loads its `ci` profile (derandomized, no database) where these are
        // set: the project's own settings, not the machine's, are under test.
        .env_remove("CI")
        .env_remove("TF_BUILD")
        .env("PYTHONDONTWRITEBYTECODE", "1")
}

pub const APP: &str = r#"import unittest

import pytest


def price(amount):
    return max(0, amount)


def test_rounding():
    assert price(3) == 4  # fails until the rounding fix lands: frozen


@pytest.mark.parametrize("amount", [1, 2, 3])
def test_cases(amount):
    assert price(amount) == amount


class TestGroup:
    def test_one(self):
        assert price(1) == 1

    @pytest.mark.slow
    def test_slow(self):
        assert price(2) == 2


class Legacy(unittest.TestCase):
    def test_unit(self):
        self.assertEqual(price(5), 5)
"#;

pub const PROPS: &str = r#"from hypothesis import given, settings, strategies as st

from tests.test_app import price


@settings(max_examples=50, database=None, derandomize=True)
@given(st.integers())
def test_never_negative(amount):
    assert price(amount) >= 0
"#;

pub struct Project {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
}

impl Project {
    /// A repository with the app's tests, a property, a ledger freezing `test_rounding`,
    /// and `pytest.ini` enabling the plugin; committed.
    pub fn new() -> Project {
        let dir = tempfile::Builder::new()
            .prefix("freezegate-plugin-")
            .tempdir()
            .unwrap();
        let root = dir.path().canonicalize().unwrap();
        let project = Project { _dir: dir, root };
        project.write("tests/__init__.py", "");
        project.write("tests/test_app.py", APP);
        project.write("tests/test_props.py", PROPS);
        project.write(
            "pytest.ini",
            "[pytest]\nfreezegate = true\nmarkers =\n    slow: slow tests\n",
        );
        project.write(
            ".gitignore",
            "gate/*run*.json\n.hypothesis/\n__pycache__/\n",
        );
        project.write_ledger(&[FROZEN]);
        project.git(&["init", "-q", "-b", "main"]);
        project.commit("tests, a freeze and its property");
        project
    }

    pub fn write(&self, rel: &str, contents: &str) {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, contents).unwrap();
    }

    pub fn write_ledger(&self, frozen: &[&str]) {
        let freezes: Vec<Value> = frozen
            .iter()
            .map(|id| {
                json!({"test_id": id, "reason": "BILL-1: rounding moves to half-even", "owner": "finley",
                       "opened": "2026-11-25", "expires": "2026-12-05", "invariant": "never negative",
                       "compensating_property": PROPERTY})
            })
            .collect();
        self.write(
            "gate/freeze_ledger.json",
            &serde_json::to_string_pretty(&json!({"schema": 1, "freezes": freezes})).unwrap(),
        );
    }

    pub fn git(&self, args: &[&str]) {
        super::git(&self.root, args);
    }

    pub fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }

    /// `python -m pytest ARGS` from `cwd` (relative to the root), with the plugin.
    pub fn pytest_in(&self, cwd: &str, args: &[&str]) -> Output {
        hermetic(&mut Command::new(python()))
            .args(["-m", "pytest", "-q"])
            .args(args)
            .current_dir(self.root.join(cwd))
            .output()
            .expect("the venv python runs")
    }

    pub fn pytest(&self, args: &[&str]) -> Output {
        self.pytest_in("", args)
    }

    /// pytest that must end with `exit` (0 passed, 1 failures), and its record.
    #[track_caller]
    pub fn record(&self, args: &[&str], record: &str) -> Value {
        let mut all = vec!["--freezegate-record", record];
        all.extend(args);
        let out = self.pytest(&all);
        assert!(
            matches!(out.status.code(), Some(0) | Some(1)),
            "pytest {all:?}: {:?}\n{}\n{}",
            out.status.code(),
            text(&out.stdout),
            text(&out.stderr)
        );
        serde_json::from_str(&fs::read_to_string(self.root.join(record)).unwrap()).unwrap()
    }

    pub fn gate(&self, args: &[&str]) -> (Option<i32>, Value, String) {
        let out = hermetic(&mut Command::new(BIN))
            .args(["check", "--format", "json", "--today", TODAY])
            .args(args)
            .current_dir(&self.root)
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out.status.code(), report, stderr)
    }
}

pub fn codes(report: &Value) -> Vec<String> {
    let mut codes: Vec<String> = report["violations"]
        .as_array()
        .map(|v| {
            v.iter()
                .map(|v| v["code"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default();
    codes.sort();
    codes
}

/// How the gate judges a patch's record: `gate/run.json` against `main` and its run.
pub const JUDGED: [&str; 6] = [
    "--run",
    "gate/run.json",
    "--base",
    "main",
    "--base-run",
    "gate/base.json",
];

/// The project with `before` committed on `main` and run with the plugin (its record
/// is `gate/base.json`), then `patch` committed on a branch (not yet run).
pub fn patched(before: impl Fn(&Project), patch: impl Fn(&Project)) -> Project {
    let project = Project::new();
    proofs_elsewhere(&project);
    before(&project);
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "--allow-empty", "-m", "the base"]);
    project.record(&["-p", "no:xdist"], "gate/base.json");
    project.git(&["checkout", "-q", "-b", "patch"]);
    patch(&project);
    project.commit("the patch");
    project
}

/// The base's config where a patch is judged by its runs alone: a freeze it adds owes a
/// proof (FZ212) unless the config says proofs are checked in another job. The proof's
/// own tests are tests/prove.rs's.
pub fn proofs_elsewhere(project: &Project) {
    project.write(
        "freezegate.toml",
        "[params]\nproof_required = false  # proven in another job\n",
    );
}

/// A patch on a branch: `main` runs first (its record is the base's collection), then
/// the patch is committed and run with the plugin, without and with xdist; the gate
/// judges each record against `main`. Returns the JSON report of the xdist run.
#[track_caller]
pub fn judge_patch(
    before: impl Fn(&Project),
    patch: impl Fn(&Project),
    exit: i32,
    expected: &[&str],
    extra: &[&str],
) -> Value {
    let project = patched(before, patch);
    let mut last = Value::Null;
    for workers in [vec!["-p", "no:xdist"], vec!["-n", "2"]] {
        project.record(&workers, "gate/run.json");
        let mut args = JUDGED.to_vec();
        args.extend(extra);
        let (code, report, stderr) = project.gate(&args);
        let mut found = codes(&report);
        found.dedup();
        assert_eq!(
            (code, found.clone()),
            (
                Some(exit),
                expected.iter().map(|c| c.to_string()).collect::<Vec<_>>()
            ),
            "{workers:?}: {report:#}\n{stderr}"
        );
        last = report;
    }
    last
}

pub fn nothing(_: &Project) {}

pub fn edit(project: &Project, file: &str, from: &str, to: &str) {
    let text = fs::read_to_string(project.root.join(file)).unwrap();
    assert!(text.contains(from), "{file} has no `{from}`");
    project.write(file, &text.replacen(from, to, 1));
}

pub fn violation<'a>(report: &'a Value, code: &str) -> &'a Value {
    report["violations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {report:#}"))
}

/// The flags the shipped workflow (`examples/ci/freezegate.yml`, through the action)
/// gives the gate in a pull request: the base, its run record, and config read from it.
pub const SHIPPED: &[&str] = &[
    "--base",
    "main",
    "--base-run",
    "gate/base-run.json",
    "--trusted-ref",
    "main",
];

impl Project {
    /// `freezegate run [--check --format json ... CHECK] -- python -m pytest -q ARGS`:
    /// the exit status, the JSON report (when checked), and the output.
    pub fn supervised(
        &self,
        check: Option<&[&str]>,
        pytest: &[&str],
    ) -> (Option<i32>, Value, String) {
        let report = self.root.join("gate/report.json");
        let _ = fs::remove_file(&report);
        let mut command = Command::new(BIN);
        hermetic(&mut command).arg("run").current_dir(&self.root);
        if let Some(check) = check {
            command.args(["--check", "--today", TODAY, "--report"]);
            command.arg(format!("json={}", report.display()));
            command.args(check);
        }
        command
            .arg("--")
            .arg(python())
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .args(pytest);
        let out = command.output().unwrap();
        let said = format!("{}\n{}", text(&out.stdout), text(&out.stderr));
        let report = fs::read_to_string(&report)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null);
        (out.status.code(), report, said)
    }

    /// The base: `main` as committed, its record written by a supervised run (as the
    /// shipped workflow's push job keeps it), then a `patch` branch with `patch` committed.
    pub fn base_then_patch(&self, patch: impl Fn(&Project)) {
        let (code, _, said) = self.supervised(None, &["--freezegate-record", "gate/base-run.json"]);
        assert_eq!(code, Some(0), "the base's run: {said}");
        self.git(&["checkout", "-q", "-b", "patch"]);
        patch(self);
        self.commit("the patch");
    }
}

/// An inline skip of `TestGroup::test_one`, at line 20 of the test file.
pub fn skip_test_one(project: &Project) {
    edit(
        project,
        "tests/test_app.py",
        "class TestGroup:\n    def test_one",
        "class TestGroup:\n    @pytest.mark.skip(reason=\"flaky\")\n    def test_one",
    );
}
