//! End-to-end for FZ207/FZ208: real pytest, pytest-cov (`--cov-context=test`) and
//! Hypothesis in a temporary git repository, and the built `freezegate` binary.
//!
//! `main` holds a small `shop` package and its tests; the tests run there with coverage
//! (the "nightly" report, where the frozen test still ran). The patch on top changes
//! `split_cents`, freezes the test that now fails, and deposits a property; its own CI
//! run (the freeze applied by `conftest.py` through `freezegate skips`) writes the
//! second report. The gate gets both with `--coverage`.
//!
//! Needs the pinned Python venv: `bash .ci/python-env` (at `$FREEZEGATE_VENV`, else
//! `<repo>/.venv`). Without it the tests fail, they never skip.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::{json, Value};
use tempfile::TempDir;

use common::{git, hermetic, text};

const BIN: &str = env!("CARGO_BIN_EXE_freezegate");
const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");
const TODAY: &str = "2026-11-30";

const FROZEN: &str = "tests/test_pricing.py::test_split_remainder_goes_first";
const GOOD: &str = "tests/props/test_pricing_props.py::test_split_sums_to_total";
const UNRELATED: &str = "tests/props/test_pricing_props.py::test_label_has_two_decimals";
const PROPS_FILE: &str = "tests/props/test_pricing_props.py";

/// `split_cents` is the frozen test's code path: lines 8-12 run only under that test
/// (line 6 also under `test_split_rejects_zero_parts`); `label` (line 17) is unrelated.
const PRICING: &str = r#""""Splitting an amount into near-equal parts."""


def split_cents(total, parts):
    """Split ``total`` cents into ``parts`` near-equal shares, remainder first."""
    if parts <= 0:
        raise ValueError("parts must be positive")
    base, extra = divmod(total, parts)
    shares = [base] * parts
    for i in range(extra):
        shares[i] += 1
    return shares


def label(cents):
    """``1234`` -> ``"$12.34"``."""
    return f"${cents // 100}.{cents % 100:02d}"
"#;

/// The patch: the remainder now goes to the last shares (same line numbers).
const PRICING_PATCHED_LINE: (&str, &str) = (
    "        shares[i] += 1",
    "        shares[parts - 1 - i] += 1",
);

const TESTS: &str = r#"import pytest

from shop.pricing import label, split_cents


def test_split_rejects_zero_parts():
    with pytest.raises(ValueError):
        split_cents(100, 0)


def test_split_remainder_goes_first():
    assert split_cents(10, 3) == [4, 3, 3]


def test_label():
    assert label(1234) == "$12.34"
"#;

const PROPS_HEAD: &str = r#"from hypothesis import given
from hypothesis import strategies as st

from shop.pricing import label, split_cents
"#;

/// The properties the patch can add, by node id.
const PROPS: [(&str, &str); 2] = [
    (
        GOOD,
        r#"

@given(total=st.integers(min_value=0, max_value=10**6), parts=st.integers(min_value=1, max_value=50))
def test_split_sums_to_total(total, parts):
    shares = split_cents(total, parts)
    assert sum(shares) == total
    assert max(shares) - min(shares) <= 1
"#,
    ),
    (
        UNRELATED,
        r#"

@given(cents=st.integers(min_value=0, max_value=10**9))
def test_label_has_two_decimals(cents):
    assert len(label(cents).split(".")[1]) == 2
"#,
    ),
];

const PYPROJECT: &str = r#"[project]
name = "shop"
version = "0.1.0"

[tool.pytest.ini_options]
testpaths = ["tests"]
pythonpath = ["."]

[tool.coverage.run]
relative_files = true

[tool.coverage.json]
show_contexts = true
"#;

fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        common::venv_python_importing(&["pytest", "hypothesis", "pytest_cov", "coverage"])
    })
}

fn describe(what: &str, out: &Output) -> String {
    format!(
        "{what}: {}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    )
}

struct Repo {
    _tmp: TempDir,
    root: PathBuf,
}

impl Repo {
    fn write(&self, rel: &str, contents: &str) {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, contents).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.root.join(rel)).unwrap()
    }

    fn git(&self, args: &[&str]) {
        git(&self.root, args);
    }

    fn set_freezes(&self, freezes: &[Value]) {
        let ledger = json!({ "schema": 1, "max_window_days": 14, "freezes": freezes });
        self.write(
            "gate/freeze_ledger.json",
            &(serde_json::to_string_pretty(&ledger).unwrap() + "\n"),
        );
    }

    /// `main`: the package and its tests, no freeze, no property; then the "nightly"
    /// run with coverage, kept as `gate/base-coverage.json`.
    fn main_with_nightly_coverage() -> Repo {
        let tmp = tempfile::Builder::new()
            .prefix("freezegate-e2e-cov-")
            .tempdir()
            .unwrap();
        let root = tmp.path().canonicalize().unwrap().join("repo");
        let repo = Repo { _tmp: tmp, root };
        let demo = Path::new(MANIFEST_DIR).join("examples/pytest-demo");
        repo.write(
            "conftest.py",
            &fs::read_to_string(demo.join("conftest.py")).unwrap(),
        );
        repo.write(
            "tests/conftest.py",
            &fs::read_to_string(demo.join("tests/conftest.py")).unwrap(),
        );
        repo.write("pyproject.toml", PYPROJECT);
        repo.write("shop/__init__.py", "");
        repo.write("shop/pricing.py", PRICING);
        repo.write("tests/test_pricing.py", TESTS);
        repo.write(
            ".gitignore",
            "/.hypothesis/\n__pycache__/\n.pytest_cache/\n/gate/*.json\n!/gate/freeze_ledger.json\n/gate/junit.xml\n.coverage\n",
        );
        let python = serde_json::to_string(python().to_str().unwrap()).unwrap();
        repo.write(
            "freezegate.toml",
            &format!(
                "ledger = \"gate/freeze_ledger.json\"\npytest_root = \".\"\npolicies = [\"builtin\"]\n\
                 collect_command = [{python}, \"-m\", \"pytest\", \"--collect-only\", \"-q\", \"--no-header\"]\n\n\
                 [params]\nmin_distinct = 8\nproof_required = false  # proofs: tests/prove.rs\n"
            ),
        );
        repo.set_freezes(&[]);
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "base"]);

        repo.pytest_with_coverage("gate/base-coverage.json", &[]);
        repo.git(&["checkout", "-q", "-b", "patch"]);
        repo
    }

    /// The patch: `split_cents` changes, its test is frozen with `properties` as the
    /// deposit, and a property file with the properties `added` is added.
    fn patch(&self, properties: &[&str], added: &[&str]) {
        let pricing = self.read("shop/pricing.py");
        let (from, to) = PRICING_PATCHED_LINE;
        assert!(pricing.contains(from));
        self.write("shop/pricing.py", &pricing.replace(from, to));
        let mut props = PROPS_HEAD.to_string();
        for (id, source) in PROPS {
            if added.contains(&id) {
                props.push_str(source);
            }
        }
        self.write(PROPS_FILE, &props);
        let property = match properties {
            [one] => json!(one),
            many => json!(many),
        };
        self.set_freezes(&[json!({
            "test_id": FROZEN,
            "reason": "SHOP-7: the remainder moves to the last shares",
            "owner": "finley",
            "opened": "2026-11-20",
            "expires": "2026-12-04",
            "invariant": "shares sum to the total and differ by at most one cent",
            "compensating_property": property,
            "reused_property": false
        })]);
        self.git(&["add", "-A"]);
        self.git(&[
            "commit",
            "-q",
            "-m",
            "split remainder last; freeze the old test",
        ]);
    }

    /// The CI test run: skips applied from the ledger, Hypothesis observability on,
    /// JUnit XML, and coverage with test contexts written as JSON to `report`.
    fn pytest_with_coverage(&self, report: &str, skipped: &[&str]) {
        let _ = fs::remove_dir_all(self.root.join(".hypothesis/observed"));
        let out = hermetic(&mut Command::new(python()))
            .args([
                "-m",
                "pytest",
                "-q",
                "--no-header",
                "-p",
                "no:cacheprovider",
            ])
            .args(["--junitxml", "gate/junit.xml"])
            .args(["--cov=shop", "--cov-context=test"])
            .arg(format!("--cov-report=json:{report}"))
            .current_dir(&self.root)
            .env("HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY", "1")
            .env("FREEZEGATE", BIN)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env_remove("HYPOTHESIS_PROFILE")
            .env_remove("FREEZEGATE_SKIPS_FILE")
            .env_remove("PYTEST_ADDOPTS")
            .env_remove("PYTHONPATH")
            .env_remove("COVERAGE_PROCESS_START")
            .env_remove("COVERAGE_RCFILE")
            .output()
            .expect("the venv python runs");
        assert!(out.status.success(), "{}", describe("pytest", &out));
        let applied: Value = serde_json::from_str(&self.read("gate/skipped.json")).unwrap();
        assert_eq!(applied, json!(skipped), "conftest.py applied other skips");
        let cov: Value = serde_json::from_str(&self.read(report)).unwrap();
        assert_eq!(
            cov["meta"]["show_contexts"], true,
            "pytest-cov wrote no contexts"
        );
    }

    fn check(&self, extra: &[&str]) -> (Option<i32>, Value, String) {
        let out = hermetic(&mut Command::new(BIN))
            .args(["check", "--collect", "--base", "main"])
            .args([
                "--samples",
                ".hypothesis/observed",
                "--junit",
                "gate/junit.xml",
            ])
            .args(["--applied-skips", "gate/skipped.json"])
            .args(["--coverage", "gate/base-coverage.json"])
            .args(["--coverage", "gate/coverage.json"])
            .args(["--today", TODAY, "--format", "json"])
            .args(extra)
            .current_dir(&self.root)
            .output()
            .expect("the freezegate binary runs");
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not a JSON report ({e})\n{}", describe("check", &out)));
        (out.status.code(), report, text(&out.stderr))
    }
}

fn violations(report: &Value) -> Vec<&Value> {
    report["violations"].as_array().unwrap().iter().collect()
}

// A property that drives split_cents covers every line only the frozen test covered.
#[test]
fn a_property_on_the_frozen_code_path_passes() {
    let repo = Repo::main_with_nightly_coverage();
    repo.patch(&[GOOD], &[GOOD]);
    repo.pytest_with_coverage("gate/coverage.json", &[FROZEN]);
    let (code, report, stderr) = repo.check(&["--deny-warnings"]);
    assert_eq!(code, Some(0), "{report:#}\n{stderr}");
    assert!(violations(&report).is_empty(), "{report:#}");

    // The figures behind the pass, through the binding's helpers in an org rule.
    repo.write(
        "org/figures.rhai",
        r#"const RULES = #{ ORG001: #{ name: "figures", severity: "warn", summary: "s", help: "h" } };
for e in ledger.freezes {
    let p = e.compensating_property;
    report("ORG001", e, `lines=${coverage.lines(e.test_id)} unique=${coverage.unique_lines(e.test_id)} at_stake=${coverage.at_stake(e.test_id, p)} covered=${coverage.covered(e.test_id, p)} share=${coverage.share(e.test_id, p)} property_lines=${coverage.lines(p)} uncovered=${coverage.uncovered(e.test_id, p, 3)}`);
}
"#,
    );
    let config = repo.read("freezegate.toml");
    repo.write(
        "freezegate.toml",
        &config.replace(
            "policies = [\"builtin\"]",
            "policies = [\"builtin\", \"org\"]",
        ),
    );
    let (_, report, stderr) = repo.check(&[]);
    let found = violations(&report);
    assert_eq!(found.len(), 1, "{report:#}\n{stderr}");
    // The frozen test ran lines 6 and 8-12; line 6 also runs under
    // test_split_rejects_zero_parts, so 8-12 are at stake, all covered by the property
    // (which runs 6 and 8-12 too). Among all tests, the property included, nothing is
    // unique to the frozen test any more: that is what the deposit is for.
    assert_eq!(
        found[0]["message"],
        "lines=6 unique=0 at_stake=5 covered=5 share=1.0 property_lines=6 uncovered=[]",
        "{report:#}"
    );
}

// A property that only touches `label` covers none of the 5 lines at stake.
#[test]
fn a_property_on_an_unrelated_function_fires_fz207_with_the_numbers() {
    let repo = Repo::main_with_nightly_coverage();
    repo.patch(&[UNRELATED], &[UNRELATED]);
    repo.pytest_with_coverage("gate/coverage.json", &[FROZEN]);
    let (code, report, stderr) = repo.check(&[]);
    // A warning: the gate passes unless warnings are denied.
    assert_eq!(code, Some(0), "{report:#}\n{stderr}");
    let found = violations(&report);
    assert_eq!(found.len(), 1, "{report:#}");
    let v = found[0];
    assert_eq!(v["code"], "FZ207");
    assert_eq!(v["severity"], "warning");
    assert_eq!(v["test_id"], FROZEN);
    assert_eq!(v["field"], "compensating_property");
    assert_eq!(
        v["message"],
        format!(
            "at stake: 5 lines only {FROZEN} covered; the properties cover 0 of them \
             (0%, below 50.0%); not covered: shop/pricing.py:8, shop/pricing.py:9, \
             shop/pricing.py:10, shop/pricing.py:11, shop/pricing.py:12"
        ),
        "{report:#}"
    );
    let (code, _, _) = repo.check(&["--deny-warnings"]);
    assert_eq!(code, Some(1));

    // Without the nightly report the frozen test is in no report: nothing proves the
    // deposit, and the gate says so instead of passing quietly.
    let out = hermetic(&mut Command::new(BIN))
        .args(["check", "--collect", "--base", "main", "--format", "json"])
        .args([
            "--samples",
            ".hypothesis/observed",
            "--junit",
            "gate/junit.xml",
        ])
        .args(["--applied-skips", "gate/skipped.json", "--today", TODAY])
        .args(["--coverage", "gate/coverage.json"])
        .current_dir(&repo.root)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let found = violations(&report);
    assert_eq!(found.len(), 1, "{report:#}");
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("no coverage report has {FROZEN}")),
        "{report:#}"
    );
}

// Both properties together: the good one covers everything at stake.
#[test]
fn properties_together_and_the_real_report_shape() {
    let repo = Repo::main_with_nightly_coverage();
    repo.patch(&[UNRELATED, GOOD], &[UNRELATED, GOOD]);
    repo.pytest_with_coverage("gate/coverage.json", &[FROZEN]);
    let (code, report, stderr) = repo.check(&["--deny-warnings"]);
    assert_eq!(code, Some(0), "{report:#}\n{stderr}");
    assert!(violations(&report).is_empty(), "{report:#}");

    // The real report keys contexts as pytest-cov does: `<node id>|run`.
    let cov: Value = serde_json::from_str(&repo.read("gate/base-coverage.json")).unwrap();
    let line8 = &cov["files"]["shop/pricing.py"]["contexts"]["8"];
    assert_eq!(line8, &json!([format!("{FROZEN}|run")]), "{line8}");
}

// The ledger names only the unrelated property, but the patch also adds the good one:
// another test now covers every line the frozen test covered, so nothing is at stake.
#[test]
fn another_test_covering_everything_is_fz208() {
    let repo = Repo::main_with_nightly_coverage();
    repo.patch(&[UNRELATED], &[GOOD, UNRELATED]);
    repo.pytest_with_coverage("gate/coverage.json", &[FROZEN]);
    let (code, report, stderr) = repo.check(&[]);
    assert_eq!(code, Some(0), "{report:#}\n{stderr}");
    let found = violations(&report);
    assert_eq!(found.len(), 1, "{report:#}");
    assert_eq!(found[0]["code"], "FZ208");
    assert_eq!(found[0]["field"], "test_id");
    assert_eq!(
        found[0]["message"],
        format!(
            "every line {FROZEN} covered (6) is covered by other tests too: the freeze costs \
             no coverage, and deleting the test is the honest option"
        )
    );
}
