//! What a test runs: the project functions it executes in its *call phase* (not at
//! import, not in its fixtures' setup, not test code), measured by running it alone in
//! the scratch copy with the driver's plugin, which starts a coverage.py measurement of
//! its own around each test's call. coverage pauses an outer measurement while an inner
//! one runs, so the project's own pytest-cov (`--cov` in `addopts`), a `coverage run`
//! or `--cov-fail-under` leave this one whole. The same run asks the interpreter where
//! the project's modules came from: a module imported from the user's tree rather than
//! the copy would make a proof of code its tests never ran.

use std::path::Path;
use std::time::Duration;

use super::engine::{CallPhase, Driver};
use super::pool::{Runner, TestRun, Via};
use crate::error::GateError;

/// One measured run of some tests, alone.
pub struct Measured {
    pub run: TestRun,
    /// Where the plugin wrote what each test's call phase ran (for `Driver::stake`).
    file: std::path::PathBuf,
}

#[derive(serde::Deserialize)]
struct Written {
    /// `[module, file]` of the project's modules imported from the user's tree.
    imported_from_source: Vec<(String, String)>,
}

impl Measured {
    /// What `test_id` (one of the tests measured) ran in its call phase.
    pub fn call_phase(
        &self,
        driver: &Driver,
        runner: &Runner,
        test_id: &str,
    ) -> Result<CallPhase, GateError> {
        driver.stake(&self.file, test_id, &runner.cwd)
    }
}

/// Runs `tests` alone, on the unmutated code, measuring each one's call phase; exit 2
/// when the project was imported from the user's tree instead of the copy.
pub fn run_alone(
    runner: &Runner,
    tests: &[String],
    limit: Duration,
) -> Result<Measured, GateError> {
    let file = runner.work.join("measured.json");
    let _ = std::fs::remove_file(&file);
    let run = runner.run("", tests, limit, 0, &mut Via::Measuring(&file))?;
    let text = std::fs::read_to_string(&file).map_err(|e| {
        GateError::usage(format!(
            "prove: the run of {} measured nothing ({e}):\n{}",
            tests.join(", "),
            run.output
        ))
        .with_help(super::engine::EXTRA_HELP)
    })?;
    let written: Written = serde_json::from_str(&text).map_err(|e| {
        GateError::usage(format!(
            "prove: the driver wrote an unreadable measurement {}: {e}",
            file.display()
        ))
    })?;
    if let Some((module, file)) = written.imported_from_source.first() {
        return Err(not_the_copy(
            runner,
            module,
            file,
            written.imported_from_source.len(),
        ));
    }
    Ok(Measured { run, file })
}

/// The error for a project module the tests imported from the user's tree.
fn not_the_copy(runner: &Runner, module: &str, file: &str, count: usize) -> GateError {
    let copy = Path::new(file)
        .strip_prefix(&runner.source)
        .map(|relative| runner.copy.join(relative).display().to_string())
        .unwrap_or_else(|_| format!("{} (the copy of your tree)", runner.copy.display()));
    let more = match count {
        1 => String::new(),
        n => format!(" (and {} more module(s) of your tree)", n - 1),
    };
    GateError::usage(format!(
        "prove: the tests imported `{module}` from {file}, not from prove's copy {copy}{more}: \
         a proof would mutate code they never run"
    ))
    .with_help(
        "something loads the project by its absolute path before prove's import hook can \
         move it to the copy: a `.pth` file that imports it at startup, a `-p` plugin or a \
         conftest that loads it by file path (`spec_from_file_location`); import it by \
         name instead (an editable install, a `src/` layout, `pythonpath` in the ini and \
         PYTHONPATH are all moved to the copy)",
    )
}
