//! End-to-end: temporary git repositories built from `examples/pytest-demo`, real pytest
//! and Hypothesis (observability on), real git, and the built `freezegate` binary.
//!
//! Every scenario starts from a `main` commit holding the demo *without* the freeze (an
//! empty ledger, no frozen test, and usually no compensating property), then commits a
//! patch on a branch that adds the failing test, its freeze and the deposit. The test
//! run is the CI flow of the demo's README; the gate then gathers its own facts with
//! `--collect` and `--base main`.
//!
//! Needs the pinned Python venv: `bash .ci/python-env` (at `$FREEZEGATE_VENV`, else
//! `<repo>/.venv`). Without it the tests that run pytest fail, they never skip.

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

/// The demo's frozen test and its compensating property (pytest node ids).
const FROZEN: &str = "tests/test_billing.py::test_proration_rounding";
const PROPERTY: &str = "tests/props/test_proration_props.py::test_monotonic_in_period";
const TESTS_FILE: &str = "tests/test_billing.py";
const PROPS_FILE: &str = "tests/props/test_proration_props.py";
/// The property's strategies in the demo, and a weak replacement: one input, ever.
const STRONG_GIVEN: &str = "@given(amount=amounts, usage=usage())";
const WEAK_GIVEN: &str = "@given(amount=st.just(3000), usage=st.just((30, 10, 20)))";

fn demo_dir() -> PathBuf {
    Path::new(MANIFEST_DIR).join("examples/pytest-demo")
}

/// The venv's interpreter, checked once: it must import pytest and hypothesis.
fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| common::venv_python_importing(&["pytest", "hypothesis"]))
}

fn python_str() -> &'static str {
    python()
        .to_str()
        .expect("the venv path is valid UTF-8 (it goes into freezegate.toml)")
}

/// Copies the demo, leaving out run outputs and caches.
fn copy_demo(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if [".hypothesis", "__pycache__", ".pytest_cache", ".venv"].contains(&name.as_ref()) {
            continue;
        }
        let target = to.join(&*name);
        if entry.file_type().unwrap().is_dir() {
            copy_demo(&entry.path(), &target);
        } else if !(from.ends_with("gate") && (name == "skipped.json" || name == "junit.xml")) {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// `source` without the top-level Python function `name` (and the decorators and
/// comments right above it).
fn without_def(source: &str, name: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let head = format!("def {name}(");
    let def = lines
        .iter()
        .position(|l| l.starts_with(&head))
        .unwrap_or_else(|| panic!("the demo no longer defines `{name}`"));
    let mut start = def;
    while start > 0 && !lines[start - 1].trim().is_empty() {
        start -= 1;
    }
    let mut end = def + 1;
    while end < lines.len() && (lines[end].trim().is_empty() || lines[end].starts_with([' ', '\t']))
    {
        end += 1;
    }
    let mut out: Vec<&str> = lines[..start].to_vec();
    out.extend(&lines[end..]);
    let mut out = out.join("\n");
    out.push('\n');
    out
}

/// The relative path from repository folder `from` to repository folder `to` (both
/// `/`-separated, relative to the repository root, `""` for the root itself).
fn relative(from: &str, to: &str) -> PathBuf {
    let from: Vec<&str> = from.split('/').filter(|c| !c.is_empty()).collect();
    let to: Vec<&str> = to.split('/').filter(|c| !c.is_empty()).collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut path = PathBuf::new();
    for _ in common..from.len() {
        path.push("..");
    }
    for part in &to[common..] {
        path.push(part);
    }
    path
}

/// A freeze entry: the demo ledger's own, with the compensating property set.
fn freeze(property: &str, reused: bool) -> Value {
    let ledger: Value = serde_json::from_str(
        &fs::read_to_string(demo_dir().join("gate/freeze_ledger.json")).unwrap(),
    )
    .unwrap();
    let mut entry = ledger["freezes"][0].clone();
    assert_eq!(
        entry["test_id"], FROZEN,
        "the demo freezes another test now"
    );
    entry["compensating_property"] = json!(property);
    entry["reused_property"] = json!(reused);
    entry
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Layout {
    /// The demo is the repository.
    Root,
    /// The demo lives in `backend/`; the config at the repository root says
    /// `pytest_root = "backend"`.
    Backend,
}

/// What the patch does about the compensating property.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Deposit {
    /// Adds the demo's property.
    Added,
    /// Adds the property with `st.just(...)` strategies.
    Weak,
    /// Leaves it alone: the property was already in `main`.
    AlreadyInBase,
}

struct Repo {
    tmp: TempDir,
    root: PathBuf,
    /// pytest's rootdir, relative to `root` (`""` or `"backend"`).
    project: &'static str,
}

/// The outcome of one `freezegate` run.
#[derive(Debug)]
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn new(output: Output) -> Run {
        Run {
            code: output.status.code(),
            stdout: text(&output.stdout),
            stderr: text(&output.stderr),
        }
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "not a JSON report ({e}); exit {:?}\nstdout:\n{}\nstderr:\n{}",
                self.code, self.stdout, self.stderr
            )
        })
    }

    /// `(code, test_id)` of every violation, sorted.
    fn violations(&self) -> Vec<(String, String)> {
        let report = self.json();
        let mut found: Vec<(String, String)> = report["violations"]
            .as_array()
            .expect("violations is an array")
            .iter()
            .map(|v| {
                (
                    v["code"].as_str().expect("code").to_string(),
                    v["test_id"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        found.sort();
        found
    }

    #[track_caller]
    fn assert_verdict(&self, exit: i32, expected: &[(&str, &str)]) {
        let mut expected: Vec<(String, String)> = expected
            .iter()
            .map(|(c, t)| (c.to_string(), t.to_string()))
            .collect();
        expected.sort();
        let found = self.violations();
        assert!(
            self.code == Some(exit) && found == expected,
            "expected exit {exit} with {expected:?}\n     got exit {:?} with {found:?}\nstdout:\n{}\nstderr:\n{}",
            self.code,
            self.stdout,
            self.stderr
        );
    }

    #[track_caller]
    fn assert_error(&self, needles: &[&str]) {
        assert_eq!(
            self.code,
            Some(2),
            "expected exit 2 (could not evaluate)\nstdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        for needle in needles {
            assert!(
                self.stderr.contains(needle),
                "stderr does not mention `{needle}`:\n{}",
                self.stderr
            );
        }
        assert!(
            self.stdout.trim().is_empty(),
            "an input error must not print a report:\n{}",
            self.stdout
        );
    }
}

impl Repo {
    /// A repository whose `main` holds the demo without the freeze, checked out on a
    /// new branch `patch`. The compensating property is in `main` only for
    /// [`Deposit::AlreadyInBase`].
    fn base(layout: Layout, deposit: Deposit) -> Repo {
        let tmp = tempfile::Builder::new()
            .prefix("freezegate-e2e-")
            .tempdir()
            .unwrap();
        let root = tmp.path().canonicalize().unwrap().join("repo");
        let project = match layout {
            Layout::Root => "",
            Layout::Backend => "backend",
        };
        let repo = Repo { tmp, root, project };
        copy_demo(&demo_dir(), &repo.project_dir());
        repo.write(
            ".gitignore",
            "/.hypothesis/\n__pycache__/\n.pytest_cache/\n/gate/skipped.json\n/gate/junit.xml\n",
        );
        if layout == Layout::Backend {
            fs::remove_file(repo.project_dir().join("freezegate.toml")).unwrap();
        }
        repo.write_config("");

        let tests = repo.read(TESTS_FILE);
        repo.write(TESTS_FILE, &without_def(&tests, "test_proration_rounding"));
        if deposit != Deposit::AlreadyInBase {
            let props = repo.read(PROPS_FILE);
            repo.write(PROPS_FILE, &without_def(&props, "test_monotonic_in_period"));
        }
        repo.set_freezes(&[]);

        git(&repo.root, &["init", "-q", "-b", "main"]);
        repo.commit("base: the demo without the freeze");
        git(&repo.root, &["checkout", "-q", "-b", "patch"]);
        repo
    }

    /// [`Repo::base`] plus a committed patch: the failing test, its freeze `entry`, and
    /// the deposit.
    fn patched(layout: Layout, deposit: Deposit, entry: Value) -> Repo {
        let repo = Repo::base(layout, deposit);
        repo.restore(TESTS_FILE);
        match deposit {
            Deposit::Added => repo.restore(PROPS_FILE),
            Deposit::Weak => {
                let props = fs::read_to_string(demo_dir().join(PROPS_FILE)).unwrap();
                assert!(props.contains(STRONG_GIVEN), "the demo property changed");
                repo.write(PROPS_FILE, &props.replace(STRONG_GIVEN, WEAK_GIVEN));
            }
            Deposit::AlreadyInBase => {}
        }
        repo.set_freezes(&[entry]);
        repo.commit("freeze test_proration_rounding (BILL-412)");
        repo
    }

    fn project_dir(&self) -> PathBuf {
        self.root.join(self.project)
    }

    /// A path relative to the project (pytest's rootdir).
    fn path(&self, rel: &str) -> PathBuf {
        self.project_dir().join(rel)
    }

    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.path(rel)).unwrap()
    }

    fn write(&self, rel: &str, contents: &str) {
        let path = self.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, contents).unwrap();
    }

    /// Puts the demo's version of a project file back.
    fn restore(&self, rel: &str) {
        fs::copy(demo_dir().join(rel), self.path(rel)).unwrap();
    }

    fn set_freezes(&self, freezes: &[Value]) {
        let ledger = json!({ "schema": 1, "max_window_days": 14, "freezes": freezes });
        self.write(
            "gate/freeze_ledger.json",
            &(serde_json::to_string_pretty(&ledger).unwrap() + "\n"),
        );
    }

    /// `freezegate.toml` (in the project, or at the repository root for `backend/`),
    /// collecting with the venv's python; `extra` is appended.
    fn write_config(&self, extra: &str) {
        let prefix = if self.project.is_empty() {
            String::new()
        } else {
            format!("{}/", self.project)
        };
        let pytest_root = if self.project.is_empty() {
            "."
        } else {
            self.project
        };
        let python = serde_json::to_string(python_str()).unwrap();
        let config = format!(
            "# written by tests/e2e.rs\n\
             ledger = \"{prefix}gate/freeze_ledger.json\"\n\
             pytest_root = \"{pytest_root}\"\n\
             policies = [\"builtin\"]\n\
             collect_command = [{python}, \"-m\", \"pytest\", \"--collect-only\", \"-q\", \"--no-header\"]\n\
             \n\
             [params]\n\
             min_distinct = 8\n\
             # proofs run in another job here: tests/prove.rs judges them\n\
             proof_required = false\n\
             {extra}"
        );
        fs::write(self.root.join("freezegate.toml"), config).unwrap();
    }

    fn commit(&self, message: &str) {
        git(&self.root, &["add", "-A"]);
        git(&self.root, &["commit", "-q", "-m", message]);
    }

    /// The CI test run: ledger skips applied by the demo's conftest.py (through
    /// `freezegate skips`), Hypothesis observability on, junit XML written.
    fn pytest(&self, extra: &[&str]) -> Output {
        let _ = fs::remove_dir_all(self.path(".hypothesis/observed"));
        let _ = fs::remove_file(self.path("gate/skipped.json"));
        let _ = fs::remove_file(self.path("gate/junit.xml"));
        hermetic(&mut Command::new(python()))
            .args([
                "-m",
                "pytest",
                "-q",
                "--no-header",
                "-p",
                "no:cacheprovider",
            ])
            .args(["--junitxml", "gate/junit.xml"])
            .args(extra)
            .current_dir(self.project_dir())
            .env("HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY", "1")
            .env("FREEZEGATE", BIN)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env_remove("HYPOTHESIS_PROFILE")
            .env_remove("FREEZEGATE_SKIPS_FILE")
            .env_remove("PYTEST_ADDOPTS")
            .env_remove("PYTHONPATH")
            .output()
            .expect("the venv python runs")
    }

    /// [`Repo::pytest`] that must pass, and must have skipped exactly `skipped`.
    #[track_caller]
    fn pytest_ok(&self, skipped: &[&str]) {
        let output = self.pytest(&[]);
        assert!(
            output.status.success(),
            "pytest failed ({:?}):\n{}\n{}",
            output.status.code(),
            text(&output.stdout),
            text(&output.stderr)
        );
        let applied: Value = serde_json::from_str(&self.read("gate/skipped.json")).unwrap();
        assert_eq!(applied, json!(skipped), "conftest.py applied other skips");
    }

    /// `freezegate` with `args`, run in the repository folder `cwd`.
    fn freezegate(&self, cwd: &str, args: &[&str]) -> Run {
        Run::new(
            hermetic(&mut Command::new(BIN))
                .args(args)
                .current_dir(self.root.join(cwd))
                .output()
                .expect("the freezegate binary runs"),
        )
    }

    /// The gate as CI runs it, from the repository folder `cwd`, over the outputs of
    /// the last [`Repo::pytest`] run.
    fn check_from(&self, cwd: &str, base: &str, extra: &[&str]) -> Run {
        let to_project = relative(cwd, self.project);
        let input = |rel: &str| to_project.join(rel).to_str().unwrap().to_string();
        let (samples, junit, skipped) = (
            input(".hypothesis/observed"),
            input("gate/junit.xml"),
            input("gate/skipped.json"),
        );
        let mut args = vec![
            "check",
            "--collect",
            "--base",
            base,
            "--samples",
            &samples,
            "--junit",
            &junit,
            "--applied-skips",
            &skipped,
            "--today",
            TODAY,
            "--format",
            "json",
        ];
        args.extend(extra);
        self.freezegate(cwd, &args)
    }

    /// The gate from pytest's rootdir, against `main`.
    fn check(&self, extra: &[&str]) -> Run {
        self.check_from(self.project, "main", extra)
    }
}

// 1. A good deposit: the patch adds the failing test, its freeze and a real property.
#[test]
fn good_deposit_passes() {
    let repo = Repo::patched(Layout::Root, Deposit::Added, freeze(PROPERTY, false));
    repo.pytest_ok(&[FROZEN]);
    repo.check(&[]).assert_verdict(0, &[]);
}

// 2. The compensating property draws from `st.just(...)`: one distinct input.
#[test]
fn weak_property_has_too_few_samples() {
    let repo = Repo::patched(Layout::Root, Deposit::Weak, freeze(PROPERTY, false));
    repo.pytest_ok(&[FROZEN]);
    let run = repo.check(&[]);
    run.assert_verdict(1, &[("FZ301", FROZEN)]);
    let violation = &run.json()["violations"][0];
    assert_eq!(violation["field"], "compensating_property");
    assert!(
        violation["message"].as_str().unwrap().contains(PROPERTY),
        "{violation}"
    );
}

// 3. The property was already in `main`: the patch deposits nothing new.
#[test]
fn property_not_touched_by_the_patch() {
    let repo = Repo::patched(
        Layout::Root,
        Deposit::AlreadyInBase,
        freeze(PROPERTY, false),
    );
    repo.pytest_ok(&[FROZEN]);
    let run = repo.check(&[]);
    run.assert_verdict(1, &[("FZ202", FROZEN)]);
    assert_eq!(
        run.json()["violations"][0]["file"],
        "gate/freeze_ledger.json"
    );
}

// 4. The same, declared as a reused property.
#[test]
fn reused_property_is_accepted() {
    let repo = Repo::patched(Layout::Root, Deposit::AlreadyInBase, freeze(PROPERTY, true));
    repo.pytest_ok(&[FROZEN]);
    repo.check(&[]).assert_verdict(0, &[]);
}

// 5. A typo in the ledger's property id: reported once, as not collected, with the
// nearest collected id (not again as "did not run" and "no samples").
#[test]
fn misspelled_property_id() {
    let typo = "tests/props/test_proration_props.py::test_monotonic_in_perod";
    let repo = Repo::patched(Layout::Root, Deposit::Added, freeze(typo, false));
    repo.pytest_ok(&[FROZEN]);
    let run = repo.check(&[]);
    run.assert_verdict(1, &[("FZ201", FROZEN)]);
    let message = run.json()["violations"][0]["message"].clone();
    assert_eq!(
        message,
        format!("the property {typo} is not in the collection; did you mean {PROPERTY}?")
    );
}

// 6. The patch adds a test file that does not even parse. The CI run went on past the
// collection error (`--continue-on-collection-errors`), so every other input exists;
// the gate's own collection must still refuse to judge a smaller set.
#[test]
fn collection_error_is_exit_2() {
    let repo = Repo::base(Layout::Root, Deposit::Added);
    repo.restore(TESTS_FILE);
    repo.restore(PROPS_FILE);
    repo.set_freezes(&[freeze(PROPERTY, false)]);
    repo.write("tests/test_broken.py", "def test_broken(:\n    pass\n");
    repo.commit("freeze, and a broken test file");

    let output = repo.pytest(&["--continue-on-collection-errors"]);
    assert!(
        !output.status.success(),
        "pytest should report the collection error"
    );
    assert!(repo.path("gate/skipped.json").exists());
    assert!(repo.path(".hypothesis/observed").exists());

    let run = repo.check(&[]);
    run.assert_error(&["pytest", "tests/test_broken.py", "SyntaxError"]);
}

// 7. Merge queue: the parent patch freezes the test and its run applied the skip; the
// child patch on top removes the freeze but reuses the parent's run (skipped.json,
// samples, junit). The skip it did not derive is refused, unless a reviewed allow
// entry pins it to the target branch.
#[test]
fn merge_queue_inherited_skip() {
    let repo = Repo::patched(Layout::Root, Deposit::Added, freeze(PROPERTY, false));
    repo.pytest_ok(&[FROZEN]);
    repo.check(&[]).assert_verdict(0, &[]);

    git(&repo.root, &["checkout", "-q", "-b", "child"]);
    repo.set_freezes(&[]);
    repo.commit("child: unfreeze test_proration_rounding");
    // The child did not re-run the tests: the parent's skip set is what was applied.
    let reused: Value = serde_json::from_str(&repo.read("gate/skipped.json")).unwrap();
    assert_eq!(reused, json!([FROZEN]));
    let skips = repo.freezegate(repo.project, &["skips", "--format", "json"]);
    assert_eq!(skips.stdout.trim(), "[]", "{skips:?}");

    let refused = repo.check(&[]);
    refused.assert_verdict(1, &[("FZ401", FROZEN)]);
    assert!(
        refused.json()["violations"][0]["message"]
            .as_str()
            .unwrap()
            .contains("child"),
        "FZ401 names the target branch (git's current branch by default):\n{}",
        refused.stdout
    );

    repo.write_config(&format!(
        "\n[[params.allow_inherited]]\ntest_id = \"{FROZEN}\"\nbranch = \"main\"\napprover = \"finley\"\n"
    ));
    repo.commit("child: allow the inherited skip on main");
    // The allow entry is the patch's own config, and this check has no trusted ref:
    // FZ503 says so (in CI the allow entry lands first, reviewed, and is read from it).
    repo.check(&["--target-branch", "main"])
        .assert_verdict(0, &[("FZ503", "")]);
    // The allow entry is pinned: another target branch gets no exception.
    let other = repo.check(&["--target-branch", "release/2026.12"]);
    other.assert_verdict(1, &[("FZ401", FROZEN), ("FZ403", FROZEN), ("FZ503", "")]);
}

// 8. The Python project lives in `backend/`; the config at the repository root says
// `pytest_root = "backend"`. Node ids are backend-relative, diff paths are not.
#[test]
fn pytest_root_in_a_subfolder() {
    let repo = Repo::patched(Layout::Backend, Deposit::Added, freeze(PROPERTY, false));
    repo.pytest_ok(&[FROZEN]);
    repo.check_from("", "main", &[]).assert_verdict(0, &[]);
}

#[test]
fn pytest_root_in_a_subfolder_deposit_not_in_diff() {
    let repo = Repo::patched(
        Layout::Backend,
        Deposit::AlreadyInBase,
        freeze(PROPERTY, false),
    );
    repo.pytest_ok(&[FROZEN]);
    let run = repo.check_from("", "main", &[]);
    run.assert_verdict(1, &[("FZ202", FROZEN)]);
    let violation = &run.json()["violations"][0];
    assert_eq!(violation["file"], "backend/gate/freeze_ledger.json");
    assert!(
        violation["message"]
            .as_str()
            .unwrap()
            .contains("backend/tests/props/test_proration_props.py"),
        "FZ202 names the repository path of the property's file: {violation}"
    );
}

// 9. The gate run from any folder of the repository gives the same report.
#[test]
fn same_verdict_from_any_folder() {
    let repo = Repo::patched(
        Layout::Backend,
        Deposit::AlreadyInBase,
        freeze(PROPERTY, false),
    );
    repo.pytest_ok(&[FROZEN]);
    let from_root = repo.check_from("", "main", &[]);
    from_root.assert_verdict(1, &[("FZ202", FROZEN)]);
    for cwd in ["backend", "backend/tests", "backend/tests/props"] {
        let run = repo.check_from(cwd, "main", &[]);
        assert_eq!(
            (run.code, run.json()),
            (from_root.code, from_root.json()),
            "run from {cwd}/ differs from the run at the root\nstderr:\n{}",
            run.stderr
        );
    }
    // A base given as a commit id is the same base.
    let main = git(&repo.root, &["rev-parse", "main"]);
    let by_sha = repo.check_from("backend/tests", main.trim(), &[]);
    assert_eq!(
        (by_sha.code, by_sha.json()),
        (from_root.code, from_root.json())
    );
}

/// The recorded demo inputs (no Python needed) with `--base base`, from `cwd`.
fn check_recorded(cwd: &Path, base: &str) -> Run {
    Run::new(
        hermetic(&mut Command::new(BIN))
            .args([
                "check", "--base", base, "--today", TODAY, "--format", "json",
            ])
            .args(["--collected", "gate/recorded/collected.txt"])
            .args(["--samples", "gate/recorded/observed"])
            .args(["--applied-skips", "gate/recorded/skipped.json"])
            .args(["--junit", "gate/recorded/junit.xml"])
            .current_dir(cwd)
            // git must not find a repository above the temporary directory.
            .env("GIT_CEILING_DIRECTORIES", cwd.parent().unwrap())
            .output()
            .expect("the freezegate binary runs"),
    )
}

// 10. git failures are clear exit-2 errors carrying git's own words.
#[test]
fn unknown_base_ref_is_exit_2() {
    let repo = Repo::patched(Layout::Root, Deposit::Added, freeze(PROPERTY, false));
    check_recorded(&repo.root, "no-such-ref").assert_error(&["no-such-ref", "fatal: bad revision"]);
}

#[test]
fn not_a_git_repository_is_exit_2() {
    let tmp = tempfile::Builder::new()
        .prefix("freezegate-e2e-")
        .tempdir()
        .unwrap();
    let dir = tmp.path().canonicalize().unwrap().join("demo");
    copy_demo(&demo_dir(), &dir);
    let run = check_recorded(&dir, "main");
    // git's own words ("fatal: not a git repository ..."), with the hint for this case,
    // not `git diff`'s fallback to `--no-index` and its usage text.
    run.assert_error(&["not a git repository", "--changed"]);
    assert!(
        !run.stderr.contains("--no-index"),
        "outside a repository `git diff` falls back to --no-index mode; the gate should say \
         that this is not a git repository instead of showing git diff's usage:\n{}",
        run.stderr
    );
}

#[test]
fn shallow_clone_without_merge_base_is_exit_2() {
    let repo = Repo::patched(Layout::Root, Deposit::Added, freeze(PROPERTY, false));
    // main moves on after the patch branched off, so the merge base is not main's tip.
    git(&repo.root, &["checkout", "-q", "main"]);
    repo.write("NEWS.md", "main moved on\n");
    repo.commit("main: news");
    let clone = repo.tmp.path().canonicalize().unwrap().join("clone");
    let url = format!("file://{}", repo.root.display());
    git(
        repo.tmp.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            "--branch",
            "patch",
            &url,
            clone.to_str().unwrap(),
        ],
    );
    git(
        &clone,
        &["fetch", "-q", "--depth", "1", "origin", "main:main"],
    );
    check_recorded(&clone, "main").assert_error(&["no merge base", "fetch-depth"]);
}

// 11. `skips --format deselect` prints pytest arguments that really deselect the frozen
// ids, shell-quoted where an id needs it.
#[test]
fn skips_as_deselect_arguments() {
    let param = "tests/test_billing.py::TestFormatCents::test_format[123456-$1,234.56]";
    let repo = Repo::patched(Layout::Root, Deposit::Added, freeze(PROPERTY, false));
    let mut second = freeze(PROPERTY, false);
    second["test_id"] = json!(param);
    repo.set_freezes(&[freeze(PROPERTY, false), second]);

    let run = repo.freezegate("", &["skips", "--format", "deselect"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        run.stdout,
        format!("--deselect={FROZEN} --deselect='{param}'\n"),
        "{run:?}"
    );

    // The way a CI script uses them: `eval "pytest $(freezegate skips --format deselect)"`.
    let collected = hermetic(&mut Command::new("sh"))
        .args([
            "-c",
            r#"eval "set -- $1" && exec "$0" -m pytest --collect-only -q --no-header -p no:cacheprovider "$@""#,
            python_str(),
            run.stdout.trim(),
        ])
        .current_dir(repo.project_dir())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("sh runs");
    let out = text(&collected.stdout);
    assert!(
        collected.status.success(),
        "{out}\n{}",
        text(&collected.stderr)
    );
    assert!(out.contains("(2 deselected)"), "{out}");
    assert!(!out.contains(FROZEN) && !out.contains(param), "{out}");
    assert!(out.contains(PROPERTY), "{out}");
}

// 15. What a real project hits first.

/// `python -m pytest ARGS` in `dir` with the venv, no plugins from the environment.
fn pytest_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(python());
    hermetic(&mut command)
        .args(["-m", "pytest", "-p", "no:cacheprovider"])
        .args(args)
        .current_dir(dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY")
        .env_remove("HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY_CHOICES")
        .env_remove("PYTEST_ADDOPTS")
        .env_remove("PYTHONPATH")
        .env_remove("HYPOTHESIS_PROFILE");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("the venv python runs")
}

// 15a. After a freeze lands on main, an unrelated patch is not asked for its deposit
// again: the ledger at the base already has it.
#[test]
fn a_landed_freeze_does_not_fail_an_unrelated_patch() {
    let repo = Repo::patched(Layout::Root, Deposit::Added, freeze(PROPERTY, false));
    git(&repo.root, &["checkout", "-q", "main"]);
    git(&repo.root, &["merge", "-q", "--ff-only", "patch"]);
    git(&repo.root, &["checkout", "-q", "-b", "unrelated"]);
    repo.write("billing/notes.py", "\"\"\"An unrelated change.\"\"\"\n");
    repo.commit("an unrelated change");
    repo.pytest_ok(&[FROZEN]);
    let run = repo.check(&[]);
    run.assert_verdict(0, &[]);
    assert_eq!(run.json()["notes"], json!([]), "the base ledger was read");

    // Without a base ledger (the changed files given by hand) the same patch is judged
    // as if it added the freeze, and the report says so.
    repo.write("gate/changed.txt", "billing/notes.py\n");
    let run = repo.freezegate(
        "",
        &[
            "check",
            "--collect",
            "--changed",
            "gate/changed.txt",
            "--select",
            "FZ202",
            "--today",
            TODAY,
            "--format",
            "json",
        ],
    );
    run.assert_verdict(1, &[("FZ202", FROZEN)]);
    common::assert_contains(
        run.json()["notes"][0]["message"].as_str().unwrap(),
        "every freeze was judged as new",
    );
}

// 15b. Real `pytest --collect-only` output: `-q` with a `_private/` folder (collected
// first) is read whole; the tree format and `-qq` are exit 2 naming the format.
#[test]
fn real_collect_only_output_in_every_format() {
    let repo = Repo::patched(Layout::Root, Deposit::Added, freeze(PROPERTY, false));
    repo.write(
        "tests/_private/test_hidden.py",
        "def test_hidden():\n    assert True\n",
    );
    for (name, args) in [
        ("quiet", vec!["--collect-only", "-q"]),
        ("tree", vec!["--collect-only"]),
        ("counts", vec!["--collect-only", "-qq"]),
    ] {
        let out = pytest_in(&repo.project_dir(), &args, &[]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        repo.write(&format!("gate/{name}.txt"), &text(&out.stdout));
    }
    let quiet = repo.read("gate/quiet.txt");
    assert!(
        quiet.starts_with("tests/_private/test_hidden.py::test_hidden\n"),
        "{quiet}"
    );
    let check = |file: &str| {
        repo.freezegate(
            "",
            &[
                "check",
                "--collected",
                file,
                "--select",
                "FZ201,FZ204",
                "--today",
                TODAY,
                "--format",
                "json",
            ],
        )
    };
    check("gate/quiet.txt").assert_verdict(0, &[]);
    check("gate/tree.txt").assert_error(&[
        "gate/tree.txt",
        "is the tree output of `pytest --collect-only` without `-q`",
        "--collect-only --verbosity=-1",
    ]);
    check("gate/counts.txt").assert_error(&["gate/counts.txt", "-qq"]);
    // An id fewer than pytest counted is refused, never a smaller set.
    let cut: String = quiet.lines().skip(1).map(|l| format!("{l}\n")).collect();
    repo.write("gate/cut.txt", &cut);
    check("gate/cut.txt").assert_error(&["pytest says it collected"]);
}

const PROPERTIES_MODULE: &str = r#"from hypothesis import given, settings, strategies as st


class Dyn:
    pass


def make(n):
    cls = type("Dyn", (), {"n": n, "__repr__": lambda self: "Dyn()"})
    return cls()


@settings(max_examples=60, database=None, derandomize=True)
@given(st.one_of(st.sampled_from([float("nan"), float("inf"), float("-inf")]), st.floats()))
def test_floats(x):
    assert x == x or x != x


@settings(max_examples=60, database=None, derandomize=True)
@given(st.builds(make, st.integers()))
def test_dynamic_class(obj):
    assert repr(obj) == "Dyn()"
"#;

/// A ledger freezing two tests, each compensated by one of [`PROPERTIES_MODULE`]'s.
const PROPERTIES_LEDGER: &str = r#"{"schema": 1, "freezes": [
  {"test_id": "tests/test_a.py::test_one", "reason": "r", "owner": "o", "opened": "2026-11-20",
   "expires": "2026-12-04", "invariant": "i", "compensating_property": "tests/test_props.py::test_floats"},
  {"test_id": "tests/test_a.py::test_two", "reason": "r", "owner": "o", "opened": "2026-11-20",
   "expires": "2026-12-04", "invariant": "i", "compensating_property": "tests/test_props.py::test_dynamic_class"}
]}
"#;

// 15c. Real observability output: `st.floats()` writes bare NaN/Infinity (accepted);
// a dynamically built class prints one repr for every example, so arguments count 1 —
// and still 1 with Hypothesis's choice sequences, which count what it drew but not what
// the property was passed (the smaller count is the property's: a constant `map` is one
// input). The report says which method counted, per property.
#[test]
fn real_observability_floats_and_dynamic_classes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    common::write(root, "tests/test_props.py", PROPERTIES_MODULE);
    common::write(root, "gate/freeze_ledger.json", PROPERTIES_LEDGER);
    let gate = |extra: &[&str]| {
        let mut args = vec![
            "check",
            "--samples",
            ".hypothesis/observed",
            "--select",
            "FZ3",
            "--today",
            TODAY,
            "--format",
            "json",
        ];
        args.extend(extra);
        Run::new(
            hermetic(&mut Command::new(BIN))
                .args(&args)
                .current_dir(root)
                .output()
                .unwrap(),
        )
    };
    let samples = |run: &Run| -> Vec<(String, i64, String)> {
        run.json()["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| {
                (
                    row["property"].as_str().unwrap().to_string(),
                    row["distinct"].as_i64().unwrap(),
                    row["method"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };

    // Observability alone: arguments text.
    let out = pytest_in(
        root,
        &["-q"],
        &[("HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY", "1")],
    );
    assert!(out.status.success(), "{}", text(&out.stdout));
    let observed = fs::read_dir(root.join(".hypothesis/observed"))
        .unwrap()
        .map(|e| fs::read_to_string(e.unwrap().path()).unwrap())
        .collect::<String>();
    assert!(
        observed.contains("NaN") || observed.contains("Infinity"),
        "the floats property wrote no NaN or infinity"
    );
    let run = gate(&[]);
    run.assert_verdict(1, &[("FZ301", "tests/test_a.py::test_two")]);
    let rows = samples(&run);
    assert_eq!(rows[1].0, "tests/test_props.py::test_dynamic_class");
    assert_eq!((rows[1].1, rows[1].2.as_str()), (1, "arguments"));
    assert_eq!(rows[0].2, "arguments");
    assert!(rows[0].1 >= 8, "{rows:?}");
    common::assert_contains(
        run.json()["violations"][0]["message"].as_str().unwrap(),
        "saw 1 distinct input, fewer than 8 (counted by arguments)",
    );

    // With the choice sequences: what Hypothesis drew, unless what it passed shows fewer
    // values. A second run the same day appends to the day's file; only each property's
    // latest run counts.
    let out = pytest_in(
        root,
        &["-q"],
        &[
            ("HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY", "1"),
            ("HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY_CHOICES", "1"),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stdout));
    let run = gate(&[]);
    run.assert_verdict(1, &[("FZ301", "tests/test_a.py::test_two")]);
    let rows = samples(&run);
    assert_eq!(rows[0].2, "choice sequences", "{rows:?}");
    assert!(rows[0].1 >= 8, "{rows:?}");
    assert_eq!(
        (rows[1].1, rows[1].2.as_str()),
        (1, "arguments"),
        "{rows:?}"
    );
}
