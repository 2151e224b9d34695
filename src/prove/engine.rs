//! The mutation engine, mutmut 3, driven as a library by a small Python driver
//! (`driver.py`, compiled into the binary): it lists the project functions a test ran in
//! its call phase, and writes the mutants of the lines at stake into the scratch copy
//! (decorated functions too, which mutmut alone skips: their decorators stay on the
//! trampoline), every mutant behind mutmut's trampoline, which the driver's plugin points at the
//! mutant of a run only during each test's call. The same file is the pytest plugin of
//! every run of a proof.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde::Deserialize;

use crate::error::GateError;

const DRIVER: &str = include_str!("driver.py");
/// The module name the driver is loaded under as a pytest plugin (`-p`).
pub const PLUGIN: &str = "freezegate_prove_driver";
/// The driver's exit status when the engine cannot be imported.
const ENGINE_MISSING: i32 = 3;
pub const EXTRA_HELP: &str = "install the engine with `pip install 'freezegate[prove]'` (mutmut 3) in the Python that runs your tests, or point --python at that interpreter";

pub struct Driver {
    pub python: PathBuf,
    /// Holds `freezegate_prove_driver.py`; on PYTHONPATH of every run.
    pub dir: PathBuf,
}

#[derive(Debug, Deserialize)]
pub struct EngineVersion {
    pub engine: String,
    pub version: String,
    /// pytest-xdist is installed: runs pass `-n 0` over the project's `addopts`.
    pub xdist: bool,
    /// pytest-cov is installed: the runs on mutants pass `--no-cov` over the project's
    /// `addopts` (the measure of what a test runs is prove's own, and survives it).
    #[serde(default)]
    pub cov: bool,
}

/// What a test ran in its call phase, as the driver lists it.
#[derive(Debug, Clone, Deserialize)]
pub struct CallPhase {
    /// The functions, with the lines of their bodies that ran.
    pub functions: Vec<Executed>,
    /// Every file it ran code of (relative to pytest's rootdir when inside it).
    pub files: Vec<String>,
}

/// A function a run executed, as the driver lists it.
#[derive(Debug, Clone, Deserialize)]
pub struct Executed {
    pub file: String,
    pub function: String,
    pub start: u32,
    pub end: u32,
    pub lines: Vec<u32>,
}

/// What the engine made of the lines at stake: the mutants, and per function at stake
/// how many and by which engine, or why none.
#[derive(Debug, Deserialize)]
pub struct Mutated {
    pub mutants: Vec<Made>,
    pub functions: Vec<MutatedFunction>,
}

#[derive(Debug, Deserialize)]
pub struct MutatedFunction {
    pub file: String,
    pub function: String,
    /// Its first line (its first decorator's), as `stake` lists it.
    pub start: u32,
    pub mutants: u64,
    pub engine: Option<String>,
    pub reason: Option<String>,
}

/// A mutant as the engine made it.
#[derive(Debug, Clone, Deserialize)]
pub struct Made {
    pub id: String,
    pub file: String,
    pub function: String,
    pub line: u32,
    pub mutation: String,
}

impl Driver {
    pub fn new(python: PathBuf, dir: &Path) -> Result<Driver, GateError> {
        let path = dir.join(format!("{PLUGIN}.py"));
        std::fs::write(&path, DRIVER)
            .map_err(|e| GateError::write(path.display().to_string(), e.to_string()))?;
        Ok(Driver {
            python,
            dir: dir.to_path_buf(),
        })
    }

    /// `python driver.py ARGS…`, in `cwd`.
    pub fn command(&self, args: &[&str], cwd: &Path) -> Command {
        let mut command = Command::new(&self.python);
        command
            .arg(self.dir.join(format!("{PLUGIN}.py")))
            .args(args)
            .current_dir(cwd)
            .env("PYTHONDONTWRITEBYTECODE", "1");
        command
    }

    /// The error for a Python that cannot be started.
    pub fn cannot_run(&self, e: std::io::Error) -> GateError {
        GateError::usage(format!("prove: cannot run {}: {e}", self.python.display()))
            .with_help("point --python at the interpreter of the project's tests")
    }

    fn run(&self, args: &[&str], cwd: &Path) -> Result<Output, GateError> {
        let child = self
            .command(args, cwd)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| self.cannot_run(e))?;
        let _watched = super::interrupt::Watched::child(&child);
        child.wait_with_output().map_err(|e| self.cannot_run(e))
    }

    fn json<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        out: Output,
    ) -> Result<T, GateError> {
        if !out.status.success() {
            return Err(GateError::usage(format!(
                "prove: the mutation engine failed ({what}):\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        serde_json::from_slice(&out.stdout).map_err(|e| {
            GateError::usage(format!(
                "prove: the engine's driver gave unreadable output ({what}): {e}"
            ))
        })
    }

    /// The engine and its version; exit 2 naming the extra when it is not installed.
    pub fn version(&self, cwd: &Path) -> Result<EngineVersion, GateError> {
        let out = self.run(&["version"], cwd)?;
        if out.status.code() == Some(ENGINE_MISSING) {
            return Err(GateError::usage(format!(
                "prove: the mutation engine (mutmut 3) is not installed for {} ({})",
                self.python.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ))
            .with_help(EXTRA_HELP));
        }
        self.json("version", out)
    }

    /// What `test_id` ran in its call phase, from what the plugin measured into
    /// `measured` (`FREEZEGATE_PROVE_MEASURE`).
    pub fn stake(
        &self,
        measured: &Path,
        test_id: &str,
        cwd: &Path,
    ) -> Result<CallPhase, GateError> {
        let measured = measured.display().to_string();
        let out = self.run(&["stake", &measured, test_id], cwd)?;
        self.json("listing the code at stake", out)
    }

    /// Writes the mutants of `lines` (file -> lines at stake) into the files under `cwd`.
    pub fn mutate(
        &self,
        lines: &std::collections::BTreeMap<String, Vec<u32>>,
        cwd: &Path,
    ) -> Result<Mutated, GateError> {
        let spec = self.dir.join("mutate.json");
        let text = serde_json::json!({ "files": lines }).to_string();
        std::fs::write(&spec, text)
            .map_err(|e| GateError::write(spec.display().to_string(), e.to_string()))?;
        let out = self.run(&["mutate", &spec.display().to_string()], cwd)?;
        self.json("making mutants", out)
    }
}
