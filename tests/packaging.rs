//! The ways freezegate is installed and run, exercised for real:
//!
//! - the Python wheel: built with maturin from this tree, installed with pip into a fresh
//!   virtualenv (offline: `--no-index`), and run there (`--version`, the README's gate);
//! - `--version` names the commit it was built from (`build.rs`, also run on its own
//!   outside any git repository and without git);
//! - the pre-commit hook of `.pre-commit-hooks.yaml`, run by the real pre-commit tool in
//!   a temporary git repository, installing the wheel without network;
//! - `action.yml`, `examples/ci/freezegate.yml` and the README's workflow use only the
//!   action's declared inputs, and the action's shell steps run locally the way a runner
//!   would (their schemas, zizmor and the one version: tests/shipping.rs).
//!
//! Needs the venv of `.ci/python-env` (at `$FREEZEGATE_VENV`, else `<repo>/.venv`); the
//! tests install `.ci/requirements-packaging.txt` (maturin, pre-commit) into it. Without
//! Python they fail with a message that says so; they never skip.

mod common;

use common::wheel::{describe, install_wheel, run, run_ok, tools_python, wheel};
use common::{git, hermetic, text};

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_freezegate");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The fallback flow's check of the shipped example (the five recorded files, as the
/// demo's README shows it), from the repository root.
const EXAMPLE_CHECK: [&str; 15] = [
    "check",
    "--config",
    "examples/pytest-demo/freezegate.toml",
    "--today",
    "2026-11-30",
    "--collected",
    "examples/pytest-demo/gate/recorded/collected.txt",
    "--changed",
    "examples/pytest-demo/gate/recorded/changed.txt",
    "--samples",
    "examples/pytest-demo/gate/recorded/observed",
    "--applied-skips",
    "examples/pytest-demo/gate/recorded/skipped.json",
    "--junit",
    "examples/pytest-demo/gate/recorded/junit.xml",
];

// ---------------------------------------------------------------------------------------
// Helpers: processes, the venv, the wheel.

fn root() -> &'static Path {
    Path::new(ROOT)
}

fn venv_bin(venv: &Path, name: &str) -> PathBuf {
    venv.join("bin").join(name)
}

/// A fresh virtualenv (created by the stdlib `venv`, as a user would).
fn fresh_venv(dir: &Path) -> PathBuf {
    let venv = dir.join("venv");
    run_ok(
        &format!("python -m venv {}: {}", venv.display(), common::FIX_PYTHON),
        Command::new(tools_python()).args(["-m", "venv"]).arg(&venv),
    );
    venv
}

fn wheel_dir() -> &'static Path {
    wheel().path.parent().unwrap()
}

struct Installed {
    _dir: TempDir,
    venv: PathBuf,
    install_time: Duration,
}

/// The wheel installed into a fresh venv with pip, offline.
fn installed() -> &'static Installed {
    static INSTALLED: OnceLock<Installed> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let venv = fresh_venv(dir.path());
        install_wheel(
            "pip install <wheel> into a fresh venv (no index)",
            &venv_bin(&venv, "python"),
            &[],
        );
        let install_time = started.elapsed();
        Installed {
            _dir: dir,
            venv,
            install_time,
        }
    })
}

/// Runs the installed `freezegate` from the repository root, with nothing but the venv
/// on PATH before the system's.
fn installed_freezegate(args: &[&str]) -> Output {
    let venv = &installed().venv;
    let exe = venv_bin(venv, "freezegate");
    assert!(
        exe.exists(),
        "pip put no `freezegate` in {}",
        venv.join("bin").display()
    );
    run(
        "installed freezegate",
        Command::new(exe)
            .args(args)
            .current_dir(root())
            .env("NO_COLOR", "1"),
    )
}

/// YAML to JSON with the project's own YAML parser.
fn yaml(path: &str) -> Value {
    let source = fs::read_to_string(root().join(path)).unwrap();
    serde_saphyr::from_str::<Value>(&source)
        .unwrap_or_else(|e| panic!("{path} is not valid YAML: {e}"))
}

/// The ```yaml block of a Markdown file (the README, a docs page) that contains
/// `needle`, parsed.
fn markdown_yaml(file: &str, needle: &str) -> Value {
    let text = fs::read_to_string(root().join(file)).unwrap();
    let block = text
        .split("```yaml\n")
        .skip(1)
        .map(|rest| &rest[..rest.find("```").expect("a closed code block")])
        .find(|block| block.contains(needle))
        .unwrap_or_else(|| panic!("{file} has no ```yaml block with `{needle}`"));
    serde_saphyr::from_str::<Value>(block)
        .unwrap_or_else(|e| panic!("{file}'s block with `{needle}` is not valid YAML: {e}"))
}

// ---------------------------------------------------------------------------------------
// The wheel.

#[test]
fn wheel_installs_into_a_fresh_venv_and_runs_the_gate() {
    let wheel = wheel();
    let name = wheel.path.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with(&format!("freezegate-{VERSION}-py3-none-")),
        "a binary-only wheel for any Python 3: {name}"
    );
    let first_check = Instant::now();

    let version = installed_freezegate(&["--version"]);
    assert!(
        version.status.success(),
        "{}",
        describe("--version", &version)
    );
    let ours = run_ok("freezegate --version", Command::new(BIN).arg("--version"));
    assert_eq!(
        text(&version.stdout),
        text(&ours.stdout),
        "the wheel's binary is this tree's build"
    );

    let out = installed_freezegate(&EXAMPLE_CHECK);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        describe("the fallback check from the wheel", &out)
    );
    let total = installed().install_time + first_check.elapsed();

    // The README's main command, with the wheel's binary.
    let venv = &installed().venv;
    let replay = run(
        "bash examples/pytest-demo/replay.sh",
        Command::new("bash")
            .arg(root().join("examples/pytest-demo/replay.sh"))
            .env("FREEZEGATE", venv_bin(venv, "freezegate"))
            .env("NO_COLOR", "1"),
    );
    assert_eq!(
        replay.status.code(),
        Some(0),
        "{}",
        describe("the README's main command with the wheel's binary", &replay)
    );
    assert!(text(&replay.stdout).contains("freezegate: passed: 0 errors"));

    // The same gate, a week later: a real evaluation, not a stub that exits 0.
    let mut late = EXAMPLE_CHECK.to_vec();
    late[4] = "2026-12-05";
    late.extend(["--format", "json"]);
    let out = installed_freezegate(&late);
    assert_eq!(out.status.code(), Some(1), "{}", describe("expired", &out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["violations"][0]["code"], "FZ103");

    eprintln!(
        "wheel {name}: {} bytes, built in {:.1?}; fresh venv + pip install + first check: {:.1?}",
        fs::metadata(&wheel.path).unwrap().len(),
        wheel.build_time,
        total
    );
}

/// The release workflow's smoke test of each wheel on its platform, run here on this
/// machine's: the script the workflow runs, so a broken script fails here first.
#[test]
fn release_smoke_test_passes_on_this_machines_wheel() {
    let out = run(
        ".ci/smoke-wheel <the wheel's directory>",
        Command::new("sh")
            .arg(root().join(".ci/smoke-wheel"))
            .arg(wheel_dir())
            .arg(tools_python())
            .env_remove("FREEZEGATE")
            .env("NO_COLOR", "1"),
    );
    assert!(out.status.success(), "{}", describe("smoke-wheel", &out));
    let shown = text(&out.stdout);
    common::assert_contains(&shown, &format!("smoke: freezegate {VERSION}"));
    common::assert_contains(&shown, "2 passed");
    common::assert_contains(&shown, "smoke: passed");
}

#[test]
fn wheel_metadata_is_complete() {
    let python = venv_bin(&installed().venv, "python");
    let script = r#"
import importlib.metadata as m, json
md = m.metadata("freezegate")
files = [str(f) for f in m.files("freezegate")]
print(json.dumps({"meta": {k: md.get_all(k) for k in set(md.keys())}, "files": files}))
"#;
    let out = run_ok(
        "read the installed metadata",
        Command::new(python).args(["-c", script]),
    );
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    let meta = &info["meta"];
    let one = |key: &str| -> String {
        meta[key][0]
            .as_str()
            .unwrap_or_else(|| panic!("the wheel's metadata lacks {key}: {meta:#}"))
            .to_string()
    };
    assert_eq!(one("Name"), "freezegate");
    assert_eq!(one("Version"), VERSION, "the version is Cargo.toml's");
    assert_eq!(one("Summary"), env!("CARGO_PKG_DESCRIPTION"));
    assert_eq!(one("License-Expression"), "MIT");
    assert_eq!(one("Requires-Python"), ">=3.9");
    assert!(
        one("Description-Content-Type").starts_with("text/markdown"),
        "the README renders as Markdown on PyPI"
    );
    assert!(
        one("Description").contains("**Keeps skipped tests honest.**"),
        "the README is the long description"
    );
    let all = |key: &str| -> Vec<String> {
        meta[key]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    let classifiers = all("Classifier");
    for c in [
        "Environment :: Console",
        "Programming Language :: Rust",
        "Topic :: Software Development :: Testing",
    ] {
        assert!(
            classifiers.iter().any(|x| x == c),
            "classifier {c}: {classifiers:?}"
        );
    }
    let urls = all("Project-URL");
    for label in ["Homepage", "Repository", "Issues", "Changelog"] {
        assert!(
            urls.iter()
                .any(|u| u.starts_with(&format!("{label}, https://"))),
            "Project-URL {label}: {urls:?}"
        );
    }
    assert!(all("License-File").iter().any(|f| f == "LICENSE"));
    let files: Vec<&str> = info["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(
        files.iter().any(|f| f.ends_with("bin/freezegate")),
        "the wheel carries the binary as a script: {files:?}"
    );
    // The only Python code is the pytest plugin (found through its entry point), in its
    // modules by concern.
    let python: Vec<&&str> = files.iter().filter(|f| f.ends_with(".py")).collect();
    assert_eq!(
        python,
        [
            &"freezegate/__init__.py",
            &"freezegate/addopts.py",
            &"freezegate/binary.py",
            &"freezegate/census.py",
            &"freezegate/code.py",
            &"freezegate/outcomes.py",
            &"freezegate/pipe.py",
            &"freezegate/places.py",
            &"freezegate/plugin.py",
            &"freezegate/properties.py",
            &"freezegate/samples.py",
        ],
        "{files:?}"
    );
}

/// `PATH` with the test venv's `bin` first.
fn with_venv_on_path() -> std::ffi::OsString {
    let bin = tools_python().parent().unwrap().to_path_buf();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&rest))).unwrap()
}

/// `maturin sdist` of this tree, once per run.
fn sdist() -> &'static Path {
    static SDIST: OnceLock<(TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = SDIST.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        run_ok(
            "maturin sdist",
            Command::new(tools_python())
                .args(["-m", "maturin", "sdist", "--out"])
                .arg(dir.path())
                .current_dir(root()),
        );
        let sdist = dir.path().join(format!("freezegate-{VERSION}.tar.gz"));
        assert!(sdist.exists(), "maturin sdist wrote {}", sdist.display());
        (dir, sdist)
    });
    path
}

#[test]
fn sdist_carries_what_a_source_build_needs() {
    let sdist = sdist();
    let script = "import sys, tarfile\nprint('\\n'.join(tarfile.open(sys.argv[1]).getnames()))";
    let out = run_ok(
        "list the sdist",
        Command::new(tools_python()).args(["-c", script]).arg(sdist),
    );
    let names = text(&out.stdout);
    let prefix = format!("freezegate-{VERSION}/");
    for file in [
        "pyproject.toml",
        "Cargo.toml",
        "Cargo.lock",
        "build.rs",
        "LICENSE",
        "README.md",
        "src/main.rs",
        "policies/shape.rhai",
    ] {
        assert!(
            names.lines().any(|n| n == format!("{prefix}{file}")),
            "the sdist lacks {file}:\n{names}"
        );
    }
}

/// What `pip install freezegate` does where no wheel matches: build a wheel from the sdist
/// (pip's PEP 517 build, offline with the venv's maturin), then install and run it.
#[test]
fn a_wheel_built_from_the_sdist_installs_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let wheels = dir.path().join("wheels");
    let started = Instant::now();
    run_ok(
        "pip wheel <sdist> (PEP 517, maturin)",
        Command::new(tools_python())
            .args([
                "-m",
                "pip",
                "wheel",
                "-q",
                "--disable-pip-version-check",
                "--no-index",
                "--no-deps",
                "--no-build-isolation",
                "--wheel-dir",
            ])
            .arg(&wheels)
            .arg(sdist())
            // The dev profile without debug info, in a target directory of its own kept
            // between runs: the sdist's crate is another path to cargo, and building it in
            // target/debug would replace the binary the other tests run.
            // pip's build backend runs `maturin` by name: the venv's, as after `source
            // .ci/python-env`.
            .env("PATH", with_venv_on_path())
            // Dependencies unoptimized: this build only has to show that the sdist
            // builds and runs, and it is the longest step of `.ci/run`.
            .env(
                "MATURIN_PEP517_ARGS",
                "--profile dev --config 'profile.dev.package.\"*\".opt-level=0'",
            )
            .env("CARGO_PROFILE_DEV_DEBUG", "0")
            .env(
                "CARGO_TARGET_DIR",
                Path::new(env!("CARGO_TARGET_TMPDIR")).join("sdist-target"),
            ),
    );
    let build_time = started.elapsed();
    let built: Vec<PathBuf> = fs::read_dir(&wheels)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(built.len(), 1, "one wheel: {built:?}");
    let name = built[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(
        name.starts_with(&format!("freezegate-{VERSION}-py3-none-")),
        "{name}"
    );

    let venv = fresh_venv(dir.path());
    run_ok(
        "pip install <the wheel built from the sdist>",
        Command::new(venv_bin(&venv, "python"))
            .args([
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "--no-index",
            ])
            .arg(&built[0]),
    );
    let exe = venv_bin(&venv, "freezegate");
    let version = run_ok("freezegate --version", Command::new(&exe).arg("--version"));
    // Unpacked outside any git repository, the build names no commit.
    assert_eq!(
        text(&version.stdout).trim(),
        format!("freezegate {VERSION}")
    );
    let gate = run(
        "the fallback check from the sdist's wheel",
        Command::new(&exe)
            .args(EXAMPLE_CHECK)
            .current_dir(root())
            .env("NO_COLOR", "1"),
    );
    assert_eq!(gate.status.code(), Some(0), "{}", describe("gate", &gate));
    eprintln!("wheel {name} from the sdist: built in {build_time:.1?}");
}

// ---------------------------------------------------------------------------------------
// --version and build.rs.

#[test]
fn version_names_the_commit_it_was_built_from() {
    let out = run_ok("freezegate --version", Command::new(BIN).arg("--version"));
    let line = text(&out.stdout);
    let head = hermetic(&mut Command::new("git"))
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| text(&o.stdout).trim().to_string());
    match head {
        Some(hash) => {
            let date = git(root(), &["log", "-1", "--format=%cs", "HEAD"]);
            assert_eq!(line, format!("freezegate {VERSION} ({hash} {date})\n"));
            assert_eq!(freezegate::COMMIT, Some(hash.as_str()));
        }
        // Built from a tarball: the version alone.
        None => assert_eq!(line, format!("freezegate {VERSION}\n")),
    }
    assert_eq!(
        freezegate::VERSION_LINE,
        line.trim_end().strip_prefix("freezegate ").unwrap()
    );
}

/// `build.rs`, compiled on its own and run the way cargo runs it.
struct BuildScript {
    _dir: TempDir,
    exe: PathBuf,
}

fn build_script() -> &'static BuildScript {
    static SCRIPT: OnceLock<BuildScript> = OnceLock::new();
    SCRIPT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("build-script");
        run_ok(
            "rustc build.rs",
            Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
                .args(["--edition", "2021", "-o"])
                .arg(&exe)
                .arg(root().join("build.rs")),
        );
        BuildScript { _dir: dir, exe }
    })
}

/// The build script's `cargo:` lines for a crate in `manifest_dir`.
fn run_build_script(manifest_dir: &Path, env: &[(&str, &str)]) -> Vec<String> {
    // The script embeds the pack's fixture cases and rule docs: a stand-in source tree
    // gets one of each.
    for (dir, file, text) in [
        ("policies/tests", "case.toml", "today = \"2026-11-30\"\n"),
        ("policies/docs", "FZ001.md", "Why.\n"),
    ] {
        let dir = manifest_dir.join(dir);
        if !dir.exists() {
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join(file), text).unwrap();
        }
    }
    // Its own OUT_DIR: cargo gives the tests the crate's, which this run must not touch.
    let out_dir = tempfile::tempdir().unwrap();
    let out = run_ok(
        "build script",
        hermetic(&mut Command::new(&build_script().exe))
            .current_dir(manifest_dir)
            .env("OUT_DIR", out_dir.path())
            .env("CARGO_MANIFEST_DIR", manifest_dir)
            .env("CARGO_PKG_VERSION", "9.8.7")
            .env_remove("FREEZEGATE_BUILD_COMMIT")
            .env_remove("FREEZEGATE_BUILD_COMMIT_DATE")
            .envs(env.iter().copied()),
    );
    text(&out.stdout).lines().map(str::to_string).collect()
}

fn emitted<'a>(lines: &'a [String], key: &str) -> Option<&'a str> {
    lines
        .iter()
        .find_map(|l| l.strip_prefix(&format!("cargo:rustc-env={key}=")))
}

#[test]
fn build_script_without_git_or_a_repository_gives_the_bare_version() {
    // A directory outside any repository (an unpacked sdist or crate).
    let plain = tempfile::tempdir().unwrap();
    let lines = run_build_script(plain.path(), &[]);
    assert_eq!(emitted(&lines, "FREEZEGATE_VERSION_LINE"), Some("9.8.7"));
    assert_eq!(emitted(&lines, "FREEZEGATE_COMMIT"), None);

    // This repository, but no git on PATH.
    let empty = tempfile::tempdir().unwrap();
    let lines = run_build_script(root(), &[("PATH", empty.path().to_str().unwrap())]);
    assert_eq!(emitted(&lines, "FREEZEGATE_VERSION_LINE"), Some("9.8.7"));
    assert_eq!(emitted(&lines, "FREEZEGATE_COMMIT"), None);

    // Sources unpacked inside some other repository (a home directory kept in git): that
    // repository's commit is not ours.
    let outer = tempfile::tempdir().unwrap();
    git(outer.path(), &["init", "-q"]);
    fs::write(outer.path().join("dotfile"), "x").unwrap();
    git(outer.path(), &["add", "dotfile"]);
    git(outer.path(), &["commit", "-q", "-m", "outer"]);
    let nested = outer.path().join("freezegate-9.8.7");
    fs::create_dir(&nested).unwrap();
    let lines = run_build_script(&nested, &[]);
    assert_eq!(emitted(&lines, "FREEZEGATE_VERSION_LINE"), Some("9.8.7"));
    assert_eq!(emitted(&lines, "FREEZEGATE_COMMIT"), None);
}

#[test]
fn build_script_in_a_git_checkout_names_head_and_watches_it() {
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    git(dir, &["init", "-q", "-b", "trunk"]);
    fs::write(dir.join("Cargo.toml"), "[package]\n").unwrap();
    git(dir, &["add", "Cargo.toml"]);
    git(dir, &["commit", "-q", "-m", "one"]);
    let hash = git(dir, &["rev-parse", "--short", "HEAD"]);
    let date = git(dir, &["log", "-1", "--format=%cs"]);
    let lines = run_build_script(dir, &[]);
    assert_eq!(
        emitted(&lines, "FREEZEGATE_VERSION_LINE"),
        Some(format!("9.8.7 ({hash} {date})").as_str())
    );
    assert_eq!(emitted(&lines, "FREEZEGATE_COMMIT"), Some(hash.as_str()));
    let watched: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("cargo:rerun-if-changed="))
        .collect();
    for file in [".git/HEAD", ".git/refs/heads/trunk"] {
        assert!(
            watched.iter().any(|w| Path::new(w) == dir.join(file)),
            "reruns when {file} changes: {watched:?}"
        );
    }

    // A packager's override wins (e.g. building from the sdist of a known commit).
    let lines = run_build_script(
        dir,
        &[
            ("FREEZEGATE_BUILD_COMMIT", "abc1234"),
            ("FREEZEGATE_BUILD_COMMIT_DATE", "2026-01-02"),
        ],
    );
    assert_eq!(
        emitted(&lines, "FREEZEGATE_VERSION_LINE"),
        Some("9.8.7 (abc1234 2026-01-02)")
    );
    // Garbage in the override is ignored, not stamped into --version.
    let lines = run_build_script(dir, &[("FREEZEGATE_BUILD_COMMIT", "$(rm -rf /)")]);
    assert_eq!(emitted(&lines, "FREEZEGATE_COMMIT"), Some(hash.as_str()));
}

// ---------------------------------------------------------------------------------------
// pre-commit.

/// The `freezegate` hook of `.pre-commit-hooks.yaml`.
fn hook() -> Value {
    let hooks = yaml(".pre-commit-hooks.yaml");
    hooks
        .as_array()
        .expect(".pre-commit-hooks.yaml is a list of hooks")
        .iter()
        .find(|h| h["id"] == "freezegate")
        .expect(".pre-commit-hooks.yaml offers a `freezegate` hook")
        .clone()
}

fn ledger(opened: &str, expires: &str) -> String {
    serde_json::to_string_pretty(&serde_json::json!({
        "schema": 1,
        "freezes": [{
            "test_id": "tests/test_billing.py::test_proration_rounding",
            "reason": "Finance moved proration to round-half-even (BILL-412)",
            "owner": "finley",
            "opened": opened,
            "expires": expires,
            "invariant": "the prorated charge never decreases as more of the period is used",
            "compensating_property": "tests/props/test_proration_props.py::test_monotonic_in_period",
            "reused_property": false
        }]
    }))
    .unwrap()
}

#[test]
fn pre_commit_hook_runs_for_real_and_blocks_an_expired_freeze() {
    let hook = hook();
    assert_eq!(
        hook["language"], "python",
        "installs the wheel, no Rust needed"
    );
    assert_eq!(hook["pass_filenames"], false);
    let tools = tools_python();
    let pre_commit = tools.parent().unwrap().join("pre-commit");
    let seed_wheels = run_ok(
        "find virtualenv's bundled seed wheels",
        Command::new(tools).args([
            "-c",
            "import virtualenv.seed.wheels.embed as e; print(e.BUNDLE_FOLDER)",
        ]),
    );
    let seed_wheels = text(&seed_wheels.stdout).trim().to_string();

    let work = tempfile::tempdir().unwrap();
    let repo = work.path().join("repo");
    fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    // The user's config is the CI page's snippet, as printed: the hook as published, with
    // the wheel pinned (`additional_dependencies: [freezegate==VERSION]`), resolved here
    // from the wheel just built, without network.
    let config = markdown_yaml("docs/ci.md", "repo: local");
    let local = &config["repos"][0]["hooks"][0];
    for key in [
        "id",
        "name",
        "entry",
        "args",
        "language",
        "pass_filenames",
        "require_serial",
        "files",
    ] {
        assert_eq!(
            local[key], hook[key],
            "docs/ci.md's hook and .pre-commit-hooks.yaml differ in {key}"
        );
    }
    assert_eq!(
        local["additional_dependencies"],
        serde_json::json!([format!("freezegate=={VERSION}")])
    );
    fs::write(
        repo.join(".pre-commit-config.yaml"),
        serde_json::to_string_pretty(&config).unwrap(),
    )
    .unwrap();
    fs::write(
        repo.join("freezegate.toml"),
        "ledger = \"gate/freeze_ledger.json\"\n",
    )
    .unwrap();
    fs::create_dir(repo.join("gate")).unwrap();
    let today = jiff::Timestamp::now()
        .to_zoned_datetime(jiff::tz::TimeZone::UTC)
        .date();
    let day = |n: i64| (today + jiff::Span::new().days(n)).to_string();
    fs::write(
        repo.join("gate/freeze_ledger.json"),
        ledger(&day(-3), &day(7)),
    )
    .unwrap();
    fs::write(repo.join("README.md"), "demo\n").unwrap();

    // Every command that may run pre-commit (itself, or git through the installed hook).
    let tool = |program: &Path| -> Command {
        let mut command = Command::new(program);
        hermetic(&mut command)
            .current_dir(&repo)
            .env("PRE_COMMIT_HOME", work.path().join("pre-commit-home"))
            .env("PRE_COMMIT_COLOR", "never")
            .env("PIP_NO_INDEX", "1")
            .env(
                "PIP_FIND_LINKS",
                format!("{} {seed_wheels}", wheel_dir().display()),
            )
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
            .env(
                "VIRTUALENV_OVERRIDE_APP_DATA",
                work.path().join("virtualenv"),
            )
            .env("VIRTUALENV_NO_PERIODIC_UPDATE", "1");
        command
    };
    run_ok("pre-commit install", tool(&pre_commit).arg("install"));

    // 1. A good ledger: the hook runs on it (as a real git hook) and passes.
    git(&repo, &["add", "-A"]);
    let commit = run(
        "git commit",
        tool(Path::new("git")).args(["commit", "-m", "ledger"]),
    );
    let log = format!("{}{}", text(&commit.stdout), text(&commit.stderr));
    assert!(
        commit.status.success(),
        "{}",
        describe("commit of a good ledger", &commit)
    );
    assert!(
        log.lines()
            .any(|l| l.starts_with("freezegate (freeze ledger)") && l.ends_with("Passed")),
        "the hook ran and passed:\n{log}"
    );

    // 2. An expired freeze: the commit is refused, with the rule and the value.
    fs::write(
        repo.join("gate/freeze_ledger.json"),
        ledger(&day(-20), &day(-8)),
    )
    .unwrap();
    git(&repo, &["add", "gate/freeze_ledger.json"]);
    let refused = run(
        "git commit",
        tool(Path::new("git")).args(["commit", "-m", "expired"]),
    );
    let log = format!("{}{}", text(&refused.stdout), text(&refused.stderr));
    assert!(
        !refused.status.success(),
        "an expired freeze must not commit:\n{log}"
    );
    assert!(log.contains("FZ103 expired-freeze"), "{log}");
    assert!(log.contains("gate/freeze_ledger.json"), "{log}");
    assert_eq!(git(&repo, &["rev-list", "--count", "HEAD"]), "1");

    // 3. `pre-commit run` on the same staged ledger says the same.
    let out = run("pre-commit run", &mut tool(&pre_commit));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        describe("pre-commit run", &out)
    );
    assert!(text(&out.stdout).contains("FZ103"));

    // 4. A commit that touches none of the gate's files does not run the hook.
    git(&repo, &["reset", "-q", "gate/freeze_ledger.json"]);
    fs::write(repo.join("README.md"), "demo, edited\n").unwrap();
    git(&repo, &["add", "README.md"]);
    let skipped = run(
        "git commit",
        tool(Path::new("git")).args(["commit", "-m", "docs"]),
    );
    let log = format!("{}{}", text(&skipped.stdout), text(&skipped.stderr));
    assert!(
        skipped.status.success(),
        "{}",
        describe("docs-only commit", &skipped)
    );
    assert!(log.contains("(no files to check)Skipped"), "{log}");
}

#[test]
fn pre_commit_hook_files_pattern_covers_ledger_config_and_policies() {
    let pattern = hook()["files"].as_str().unwrap().to_string();
    // pre-commit matches with Python's re.search; this pattern uses nothing beyond
    // what Python and the `regex` crate share, so the crate jsonschema brings decides.
    let check = |path: &str| {
        let schema = serde_json::json!({"type": "string", "pattern": pattern});
        jsonschema::is_valid(&schema, &Value::String(path.into()))
    };
    for hit in [
        "gate/freeze_ledger.json",
        "gate/freeze_ledger.yaml",
        "gate/freeze_ledger.yml",
        "backend/gate/freeze_ledger.toml",
        "freezegate.toml",
        ".freezegate.toml",
        "pyproject.toml",
        "org-policies/tickets.rhai",
    ] {
        assert!(check(hit), "{hit} runs the hook");
    }
    for miss in [
        "README.md",
        "src/app.py",
        "gate/skipped.json",
        "my_freezegate.toml.bak",
    ] {
        assert!(!check(miss), "{miss} does not run the hook");
    }
}

// ---------------------------------------------------------------------------------------
// The GitHub Action and the example workflow.

// Their schemas and zizmor: tests/shipping.rs.

#[test]
fn action_uses_only_declared_inputs_and_known_flags() {
    let action = yaml("action.yml");
    assert_eq!(action["runs"]["using"], "composite");
    let inputs = action["inputs"].as_object().unwrap();
    assert_eq!(
        inputs["version"]["default"], VERSION,
        "the action installs the release it is tagged with"
    );
    // Every `${{ inputs.x }}` and `steps.y.outputs.z` the action uses exists.
    let source = fs::read_to_string(root().join("action.yml")).unwrap();
    let steps = action["runs"]["steps"].as_array().unwrap();
    let ids: Vec<&str> = steps.iter().filter_map(|s| s["id"].as_str()).collect();
    for (at, _) in source.match_indices("inputs.") {
        let name: String = source[at + 7..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        assert!(
            inputs.contains_key(&name),
            "action.yml uses undeclared input {name}"
        );
    }
    for (at, _) in source.match_indices("steps.") {
        let id: String = source[at + 6..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        assert!(
            ids.contains(&id.as_str()),
            "action.yml uses unknown step {id}"
        );
    }
    // Every flag the gate step can pass is one `freezegate check` knows.
    let help = run_ok(
        "freezegate check --help",
        Command::new(BIN).args(["check", "--help"]),
    );
    let help = text(&help.stdout);
    let script = steps
        .iter()
        .find(|s| s["id"] == "gate")
        .and_then(|s| s["run"].as_str())
        .expect("a gate step");
    let mut flags = 0;
    // The lines that add to the gate's arguments (git's and pytest's own flags aside).
    let gate_lines = script.lines().filter(|l| {
        l.contains("one --")
            || l.contains("each --")
            || l.contains("args+=(--")
            || l.contains("args=(--")
    });
    for line in gate_lines {
        for (at, _) in line.match_indices("--") {
            let flag: String = line[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if flag.len() < 3 || !flag.as_bytes()[2].is_ascii_lowercase() {
                continue;
            }
            flags += 1;
            assert!(
                help.contains(&format!("{flag} ")),
                "action.yml passes {flag}, which `freezegate check` does not know"
            );
        }
    }
    assert!(flags >= 15, "found the gate step's flags ({flags})");
    let upload = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("github/codeql-action/upload-sarif@"))
        })
        .expect("the action uploads SARIF with github/codeql-action/upload-sarif");
    assert!(upload["if"]
        .as_str()
        .unwrap()
        .contains("inputs.sarif == 'true'"));
}

#[test]
fn example_workflow_uses_the_action() {
    let workflow = yaml("examples/ci/freezegate.yml");
    assert!(
        workflow["on"].get("merge_group").is_some(),
        "runs in the merge queue"
    );
    let jobs = workflow["jobs"].as_object().unwrap();
    let action = yaml("action.yml");
    let mut gates = 0;
    for (name, job) in jobs {
        for step in job["steps"].as_array().unwrap() {
            let Some(uses) = step["uses"].as_str() else {
                continue;
            };
            if uses.starts_with("freezegate/freezegate@") {
                gates += 1;
                assert_eq!(uses, format!("freezegate/freezegate@v{VERSION}"));
                for key in step["with"].as_object().unwrap().keys() {
                    assert!(
                        action["inputs"].get(key).is_some(),
                        "{name} passes undeclared input {key}"
                    );
                }
                // The tests run under supervision; their record, received over the pipe,
                // stands for the collection, the applied skips, the results and the
                // samples. The base's own record is the base run.
                assert_eq!(step["with"]["pytest"], "python -m pytest -n auto", "{name}");
                assert_eq!(step["with"]["base-run"], "gate/base-run.json", "{name}");
                for separate in ["applied-skips", "junit", "samples", "collect", "run"] {
                    assert!(
                        step["with"].get(separate).is_none(),
                        "{name} passes {separate}"
                    );
                }
            }
        }
        if job["if"]
            .as_str()
            .is_some_and(|c| c.contains("merge_group"))
        {
            let steps = serde_json::to_string(&job["steps"]).unwrap();
            assert!(
                steps.contains("merge_group.base_sha"),
                "{name} diffs against the queue's base"
            );
            assert!(
                steps.contains("\"pytest\":\"python -m pytest"),
                "{name} runs the tests on the queued commit, supervised"
            );
        }
    }
    assert_eq!(gates, 2, "a pull_request gate and a merge_group gate");
    // Copied into a project whose default branch is `master`, the base run still runs: the
    // branch comes from the event, not from this file.
    assert!(
        workflow["on"]["push"].get("branches").is_none(),
        "{:?}",
        workflow["on"]
    );
    assert_eq!(
        jobs["base-run"]["if"],
        "github.event_name == 'push' && github.ref_name == github.event.repository.default_branch"
    );
    // The action's prove step installs the `package` the gate step installs, not the
    // release of `version` from the index.
    let prove = action["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "prove")
        .expect("a prove step");
    assert_eq!(prove["env"]["FG_PACKAGE"], "${{ inputs.package }}");
    let script = prove["run"].as_str().unwrap();
    let package_first = script
        .find("if [ -n \"$FG_PACKAGE\" ]")
        .expect("package is honoured");
    let version = script.find("freezegate[prove]==$FG_VERSION").unwrap();
    assert!(package_first < version, "{script}");
}

#[test]
fn readme_workflow_snippet_uses_declared_inputs() {
    let workflow = markdown_yaml("README.md", "freezegate/freezegate@v");
    let action = yaml("action.yml");
    let steps = workflow["jobs"]["gate"]["steps"].as_array().unwrap();
    let step = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("freezegate/"))
        })
        .unwrap();
    assert_eq!(step["uses"], format!("freezegate/freezegate@v{VERSION}"));
    for key in step["with"].as_object().unwrap().keys() {
        assert!(
            action["inputs"].get(key).is_some(),
            "README passes undeclared input {key}"
        );
    }
}

/// The action's steps, run the way a runner runs a composite action: `${{ }}` expressions
/// substituted, `bash --noprofile --norc -eo pipefail`, and GITHUB_OUTPUT, GITHUB_PATH and
/// GITHUB_STEP_SUMMARY files per step. `uses:` steps are recorded, not run.
struct ActionRun {
    outputs: BTreeMap<String, BTreeMap<String, String>>,
    summaries: BTreeMap<String, String>,
    uploaded: Vec<String>,
    failed_step: Option<(String, Output)>,
}

impl ActionRun {
    /// A step's output; a missing one panics with what the steps printed.
    fn output(&self, step: &str, name: &str) -> &str {
        self.outputs
            .get(step)
            .and_then(|o| o.get(name))
            .unwrap_or_else(|| {
                let failed = self
                    .failed_step
                    .as_ref()
                    .map(|(id, out)| describe(&format!("step {id}"), out))
                    .unwrap_or_default();
                panic!("no output {step}.{name}: {:?}\n{failed}", self.outputs)
            })
    }
}

fn run_action(inputs: &[(&str, &str)], temp: &Path) -> ActionRun {
    let action = yaml("action.yml");
    let declared = action["inputs"].as_object().unwrap();
    let input = |name: &str| -> String {
        inputs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
            .unwrap_or_else(|| {
                let default = declared[name]["default"].as_str().unwrap_or("");
                // The local runner is on no pull request: `github.event` defaults are empty.
                match default.starts_with("${{ github.event.") {
                    true => String::new(),
                    false => default.to_string(),
                }
            })
    };
    let mut result = ActionRun {
        outputs: BTreeMap::new(),
        summaries: BTreeMap::new(),
        uploaded: Vec::new(),
        failed_step: None,
    };
    for (i, step) in action["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let id = step["id"]
            .as_str()
            .map(str::to_string)
            .unwrap_or(format!("step{i}"));
        let subst = |value: &str, outputs: &BTreeMap<String, BTreeMap<String, String>>| -> String {
            let mut out = String::new();
            let mut rest = value;
            while let Some(start) = rest.find("${{") {
                out.push_str(&rest[..start]);
                let end = rest[start..].find("}}").unwrap() + start;
                let expr = rest[start + 3..end].trim();
                let parts: Vec<&str> = expr.split('.').collect();
                out.push_str(&match parts.as_slice() {
                    ["inputs", name] => input(name),
                    ["runner", "temp"] => temp.display().to_string(),
                    ["steps", step, "outputs", name] => outputs
                        .get(*step)
                        .and_then(|o| o.get(*name))
                        .cloned()
                        .unwrap_or_default(),
                    _ => panic!("the local runner does not know `{expr}`: keep the action's expressions simple"),
                });
                rest = &rest[end + 2..];
            }
            out.push_str(rest);
            out
        };
        if let Some(condition) = step["if"].as_str() {
            // The only condition in the action: the SARIF upload.
            assert!(condition.contains("inputs.sarif == 'true'"), "{condition}");
            let wanted = input("sarif") == "true"
                && result
                    .outputs
                    .get("gate")
                    .and_then(|o| o.get("sarif-file"))
                    .is_some_and(|f| !f.is_empty());
            if !wanted {
                continue;
            }
        }
        if step.get("uses").is_some() {
            result.uploaded.push(subst(
                step["with"]["sarif_file"].as_str().unwrap(),
                &result.outputs,
            ));
            continue;
        }
        assert_eq!(step["shell"], "bash");
        let files = temp.join(format!("files-{id}"));
        fs::create_dir_all(&files).unwrap();
        let (output, path, summary) = (
            files.join("output"),
            files.join("path"),
            files.join("summary"),
        );
        for f in [&output, &path, &summary] {
            fs::write(f, "").unwrap();
        }
        let mut command = Command::new("bash");
        command
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c"])
            .arg(step["run"].as_str().unwrap())
            .env("GITHUB_OUTPUT", &output)
            .env("GITHUB_PATH", &path)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("RUNNER_TEMP", temp)
            .env("NO_COLOR", "1")
            .env("PIP_NO_INDEX", "1")
            .current_dir(root().join(subst(
                step["working-directory"].as_str().unwrap_or("."),
                &result.outputs,
            )));
        if let Some(env) = step["env"].as_object() {
            for (k, v) in env {
                command.env(k, subst(v.as_str().unwrap(), &result.outputs));
            }
        }
        let out = run(&format!("action step {id}"), &mut command);
        let mut map = BTreeMap::new();
        for line in fs::read_to_string(&output).unwrap().lines() {
            let (k, v) = line.split_once('=').expect("name=value outputs");
            map.insert(k.to_string(), v.to_string());
        }
        result.outputs.insert(id.clone(), map);
        result
            .summaries
            .insert(id.clone(), fs::read_to_string(&summary).unwrap());
        if !out.status.success() {
            result.failed_step = Some((id, out));
            break;
        }
    }
    result
}

#[test]
fn action_steps_install_the_wheel_gate_summarise_and_fail_like_a_runner() {
    let wheel = wheel().path.to_str().unwrap().to_string();
    let facts: Vec<(&str, &str)> = vec![
        ("package", wheel.as_str()),
        ("config", "examples/pytest-demo/freezegate.toml"),
        (
            "collected",
            "examples/pytest-demo/gate/recorded/collected.txt\n",
        ),
        ("changed", "examples/pytest-demo/gate/recorded/changed.txt"),
        (
            "samples",
            "  examples/pytest-demo/gate/recorded/observed  \n\n",
        ),
        (
            "applied-skips",
            "examples/pytest-demo/gate/recorded/skipped.json",
        ),
        ("junit", "examples/pytest-demo/gate/recorded/junit.xml"),
        ("sarif", "true"),
    ];

    // Passing: every step runs, the summary is written, SARIF is uploaded.
    let temp = tempfile::tempdir().unwrap();
    let mut inputs = facts.clone();
    inputs.push(("args", "--today 2026-11-30"));
    let pass = run_action(&inputs, temp.path());
    if let Some((id, out)) = &pass.failed_step {
        panic!("{}", describe(&format!("step {id} of a passing gate"), out));
    }
    assert_eq!(pass.output("gate", "exit-code"), "0");
    let installed = pass.output("install", "freezegate");
    assert!(
        installed.starts_with(&temp.path().display().to_string()),
        "{installed}"
    );
    let summary = &pass.summaries["gate"];
    assert!(!summary.trim().is_empty(), "the job summary is written");
    let sarif = pass.output("gate", "sarif-file");
    assert_eq!(pass.uploaded, vec![sarif.to_string()]);
    let log: Value = serde_json::from_str(&fs::read_to_string(sarif).unwrap()).unwrap();
    assert_eq!(log["version"], "2.1.0");
    let json: Value =
        serde_json::from_str(&fs::read_to_string(pass.output("gate", "json-file")).unwrap())
            .unwrap();
    assert_eq!(json["version"], 1);
    assert_eq!(json["summary"]["errors"], 0);

    // Failing: the gate step records exit 1, SARIF still goes up, the verdict step fails.
    let temp = tempfile::tempdir().unwrap();
    let mut inputs = facts.clone();
    inputs.push(("args", "--today 2026-12-05"));
    let fail = run_action(&inputs, temp.path());
    assert_eq!(fail.output("gate", "exit-code"), "1");
    common::assert_contains(&fail.summaries["gate"], "FZ103");
    assert_eq!(
        fail.uploaded.len(),
        1,
        "SARIF is uploaded when the gate fails too"
    );
    let sarif: Value =
        serde_json::from_str(&fs::read_to_string(&fail.uploaded[0]).unwrap()).unwrap();
    assert_eq!(sarif["runs"][0]["results"][0]["ruleId"], "FZ103");
    let (id, out) = fail.failed_step.expect("the action fails");
    assert_eq!(id, "verdict", "the verdict step, after the upload");
    assert_eq!(out.status.code(), Some(1));

    // No SARIF unless asked; a missing input is exit 2, reported as such.
    let temp = tempfile::tempdir().unwrap();
    let inputs = vec![
        ("package", wheel.as_str()),
        ("config", "examples/pytest-demo/freezegate.toml"),
        ("args", "--today 2026-11-30"),
    ];
    let missing = run_action(&inputs, temp.path());
    assert!(missing.uploaded.is_empty());
    assert_eq!(
        missing.output("gate", "exit-code"),
        "1",
        "FZ001: inputs missing"
    );
}
