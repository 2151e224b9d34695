//! The wheel, built once per test run by maturin from this tree, and the test venv with
//! the packaging tools: shared by the packaging tests and the pytest plugin's.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const TARGET_TMP: &str = env!("CARGO_TARGET_TMPDIR");

fn root() -> &'static Path {
    Path::new(ROOT)
}

use super::text;

pub fn describe(what: &str, out: &Output) -> String {
    format!(
        "{what}: {}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    )
}

pub fn run(what: &str, command: &mut Command) -> Output {
    command
        .output()
        .unwrap_or_else(|e| panic!("{what}: could not start: {e}"))
}

pub fn run_ok(what: &str, command: &mut Command) -> Output {
    let out = run(what, command);
    assert!(out.status.success(), "{}", describe(what, &out));
    out
}

/// `python -m pip install --no-index [extra] <this tree's wheel>`: offline, the way a user
/// installs a downloaded wheel.
pub fn install_wheel(what: &str, python: &Path, extra: &[&str]) -> Output {
    run_ok(
        what,
        Command::new(python)
            .args([
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "--no-index",
            ])
            .args(extra)
            .arg(&wheel().path),
    )
}

/// The venv of `.ci/python-env`, with the packaging tools installed (once per run).
pub fn tools_python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let python = super::venv_python();
        run_ok(
            "pip install -r .ci/requirements-packaging.txt (maturin, pre-commit) into the test venv",
            Command::new(&python)
                .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
                .arg("-r")
                .arg(root().join(".ci/requirements-packaging.txt")),
        );
        python
    })
}

pub struct Wheel {
    pub path: PathBuf,
    pub build_time: Duration,
}

/// The wheel, built once per run by maturin from this tree. The dev profile, unstripped,
/// is exactly what `cargo test` already compiled, so cargo has nothing to do (and does
/// not relink `target/debug/freezegate` under the other tests' feet); release wheels
/// (`maturin build --release`, stripped by pyproject.toml) differ only in the profile and
/// in the compression: zipping the unstripped binary at the default level took 10 s in
/// every test binary that installs the wheel, at level 1 it takes 1.5 s.
pub fn wheel() -> &'static Wheel {
    static WHEEL: OnceLock<Wheel> = OnceLock::new();
    WHEEL.get_or_init(|| {
        let python = tools_python();
        // One directory per run. Earlier runs' wheels (tens of MB each) go once they are
        // an hour old: a run still going elsewhere in this target directory keeps its own.
        let name = format!("wheels-{}", std::process::id());
        for entry in fs::read_dir(TARGET_TMP).into_iter().flatten().flatten() {
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > Duration::from_secs(3600));
            if old && entry.file_name().to_string_lossy().starts_with("wheels-") {
                let _ = fs::remove_dir_all(entry.path());
            }
        }
        let out_dir = Path::new(TARGET_TMP).join(name);
        let _ = fs::remove_dir_all(&out_dir);
        let started = Instant::now();
        run_ok(
            "maturin build",
            Command::new(python)
                .args([
                    "-m",
                    "maturin",
                    "build",
                    "--profile",
                    "dev",
                    "--strip",
                    "false",
                    "--compression-method",
                    "deflated",
                    "--compression-level",
                    "1",
                ])
                .arg("--out")
                .arg(&out_dir)
                .current_dir(root())
                .env_remove("CARGO_TARGET_DIR"),
        );
        let build_time = started.elapsed();
        let wheels: Vec<PathBuf> = fs::read_dir(&out_dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "whl"))
            .collect();
        assert_eq!(wheels.len(), 1, "maturin built one wheel: {wheels:?}");
        Wheel {
            path: wheels.into_iter().next().unwrap(),
            build_time,
        }
    })
}
