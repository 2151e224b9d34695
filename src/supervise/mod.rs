//! The supervised run (`freezegate run -- pytest ARGS`): freezegate starts pytest
//! itself, hands the plugin a one-time token and the write end of a pipe, and receives
//! the run record over it while the run goes. The record it writes is the one it
//! received, and `--check` judges that text in this process: a file rewritten after
//! pytest exits, by a hook or a process a test started, changes nothing.
//!
//! The plugin's side is `python/freezegate/pipe.py`; the messages are one line each,
//! `KIND JSON` ([`Message`]).

mod pipe;
mod protocol;

use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use crate::error::GateError;

pub use protocol::{Message, Received};

/// What a supervised run ended with.
pub struct Supervised {
    /// How pytest ended.
    pub status: ExitStatus,
    /// What came over the pipe.
    pub received: Received,
}

/// The environment variables the plugin reads (see `pipe.py`).
pub const FD_VARIABLE: &str = "FREEZEGATE_RUN_FD";
pub const TOKEN_VARIABLE: &str = "FREEZEGATE_RUN_TOKEN";

/// A fresh token: 128 random bits, hex.
fn token() -> Result<String, GateError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| GateError::usage(format!("cannot draw a random token: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Starts `command` (pytest and its arguments) in `cwd` and supervises it to its end.
/// `quiet_stdout`: pytest's standard output goes to this process's standard error, so
/// that a report in a machine format on standard output parses.
pub fn run(cwd: &Path, command: &[String], quiet_stdout: bool) -> Result<Supervised, GateError> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| GateError::usage("freezegate run: no test command after `--`"))?;
    let token = token()?;
    let binary = std::env::current_exe()
        .map_err(|e| GateError::usage(format!("cannot find this executable: {e}")))?;
    let mut child = std::process::Command::new(program);
    child
        .args(args)
        .current_dir(cwd)
        .env(TOKEN_VARIABLE, &token)
        // The plugin asks this binary for the skips: the supervisor is the one source
        // of truth for the run it supervises.
        .env("FREEZEGATE", &binary)
        .env_remove(crate::supervise::OFF_VARIABLE);
    #[cfg(unix)]
    if quiet_stdout {
        use std::os::fd::AsFd;
        let stderr = std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| {
                GateError::usage(format!(
                    "freezegate run: cannot hand pytest standard error: {e}"
                ))
            })?;
        child.stdout(std::process::Stdio::from(stderr));
    }
    #[cfg(not(unix))]
    let _ = quiet_stdout;
    // A `pytest.py` in the working directory must not stand in for pytest: Python starts
    // without the working directory on its import path (3.11+; older ones ignore this).
    // The plugin puts back what `python -m` would have put first once pytest, pluggy and
    // the plugin are imported, for the project's own imports, and unsets the variable for
    // the processes the tests start.
    if std::env::var_os(SAFE_PATH_VARIABLE).is_none() {
        child.env(SAFE_PATH_VARIABLE, "1");
        let first = if runs_module(program, args) {
            cwd.canonicalize()
                .unwrap_or_else(|_| cwd.to_path_buf())
                .display()
                .to_string()
        } else {
            String::new()
        };
        child.env(PATH0_VARIABLE, first);
    }
    let (status, received) = pipe::supervise(child, program, &token)?;
    Ok(Supervised { status, received })
}

/// Python's own: do not put the script's directory (or the working directory) first on
/// the import path.
pub const SAFE_PATH_VARIABLE: &str = "PYTHONSAFEPATH";
/// What `python` would have put first on the import path without it (empty: nothing, a
/// console script's folder); the plugin restores it (see `pipe.py`).
pub const PATH0_VARIABLE: &str = "FREEZEGATE_RUN_PATH0";

/// Whether the command is a Python running a module (`python -m pytest`): then the
/// working directory would have been first on the import path.
fn runs_module(program: &str, args: &[String]) -> bool {
    let name = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if !name.starts_with("python") {
        return false;
    }
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-m" => return true,
            // Options that take the next word as their value.
            "-X" | "-W" => {
                args.next();
            }
            arg if arg.starts_with("-m") => return true,
            arg if arg.starts_with('-') && arg != "-c" => {}
            _ => return false,
        }
    }
    false
}

/// Set by `check --collect` for its pytest collection (the plugin stays off).
pub const OFF_VARIABLE: &str = "FREEZEGATE_PLUGIN_OFF";

/// How pytest ended, in words: `exited with status 2 (interrupted)`.
pub fn describe_status(status: &ExitStatus) -> String {
    if let Some(code) = status.code() {
        let meaning = match code {
            0 => "all tests passed",
            1 => "some tests failed",
            2 => "interrupted",
            3 => "an internal error",
            4 => "a usage error",
            5 => "no tests were collected",
            _ => "not one of pytest's exit statuses",
        };
        return format!("exited with status {code} ({meaning})");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal}");
        }
    }
    "ended without an exit status".into()
}

/// Whether pytest itself ran: it passed, or tests failed (1). Any other status is a run
/// that did not happen as asked (interrupted, an internal or usage error, nothing
/// collected, a signal).
pub fn pytest_ran(status: &ExitStatus) -> bool {
    matches!(status.code(), Some(0 | 1))
}

/// Where the record goes: the path the plugin named (pytest's `--freezegate-record`, or
/// its ini `freezegate_record`), shown relative to `cwd` where it is inside.
pub fn record_path(cwd: &Path, hello: &protocol::Hello) -> (PathBuf, String) {
    let path = cwd.join(&hello.record);
    let shown = path
        .strip_prefix(cwd)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string());
    (path, shown)
}

#[cfg(test)]
mod tests {
    use super::runs_module;

    fn words(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn a_python_running_pytest_as_a_module_is_told_from_a_console_script() {
        assert!(runs_module("python", &words(&["-m", "pytest", "-q"])));
        assert!(runs_module(
            "/venv/bin/python3.11",
            &words(&["-X", "dev", "-W", "error", "-m", "pytest"])
        ));
        assert!(runs_module("python3", &words(&["-mpytest"])));
        assert!(!runs_module("pytest", &words(&["-m", "not slow"])));
        assert!(!runs_module(
            "python",
            &words(&["tools/run_tests.py", "-m", "x"])
        ));
        assert!(!runs_module(
            "python",
            &words(&["-c", "import pytest; pytest.main()"])
        ));
    }
}
