//! The subcommands. Each returns its exit code; errors are rendered here (exit 2).

pub mod baseline;
pub mod brief;
pub mod check;
pub mod freeze;
pub mod init;
pub mod prove;
pub mod rule_pages;
pub mod rules;
pub mod run;
pub mod skips;
pub mod stats;
pub mod test;

use std::io::IsTerminal;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::error::GateError;
use crate::report::human;

pub const EXIT_PASS: u8 = 0;
pub const EXIT_VIOLATIONS: u8 = 1;
pub const EXIT_ERROR: u8 = 2;

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() {
                EXIT_ERROR
            } else {
                EXIT_PASS
            });
        }
    };
    let outcome = run(cli);
    crate::prove::interrupt::wait_if_stopping();
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprint!(
                "{}",
                human::render_error(&err, human::use_colour(std::io::stderr().is_terminal()))
            );
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// For a command that read the last run's record because it was given none: a note for
/// each record of another commit than HEAD, with what to do about it.
pub(crate) fn note_other_commits(
    runs: &crate::inputs::run_record::Runs,
    config: &crate::config::Config,
    instead: &str,
) {
    let head = crate::git::head_commit(&config.repo_root);
    for stale in runs.other_commits(head.as_deref()) {
        eprintln!("note: {stale}: {instead}");
    }
}

pub fn run(cli: Cli) -> Result<u8, GateError> {
    let cwd = std::env::current_dir()
        .map_err(|e| GateError::usage(format!("cannot read the working directory: {e}")))?;
    let config_path = cli.config.clone();
    match cli.command {
        Command::Check(args) => check::run(&cwd, config_path.as_deref(), &args),
        Command::Rules(args) => rules::list(&cwd, config_path.as_deref(), &args),
        Command::Explain { code } => rules::explain(&cwd, config_path.as_deref(), &code),
        Command::Skips(args) => skips::run(&cwd, config_path.as_deref(), &args),
        Command::Init(args) => init::run(&cwd, &args),
        Command::Freeze(args) => freeze::run(&cwd, config_path.as_deref(), &args),
        Command::Test(args) => test::run(&cwd, config_path.as_deref(), &args),
        Command::Stats(args) => stats::run(&cwd, config_path.as_deref(), &args),
        Command::Baseline(args) => baseline::run(&cwd, config_path.as_deref(), &args),
        Command::Run(args) => run::run(&cwd, config_path.as_deref(), &args),
        Command::Prove(args) => prove::run(&cwd, config_path.as_deref(), &args),
        Command::Brief(args) => brief::run(&cwd, config_path.as_deref(), &args),
        Command::Completions(args) => {
            use clap::CommandFactory;
            clap_complete::generate(
                args.shell,
                &mut Cli::command(),
                "freezegate",
                &mut std::io::stdout(),
            );
            Ok(EXIT_PASS)
        }
    }
}

/// Writes output to a file atomically, or to stdout.
pub fn emit(
    text: &str,
    output: Option<&std::path::Path>,
    cwd: &std::path::Path,
) -> Result<(), GateError> {
    match output {
        None => {
            use std::io::Write;
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(text.as_bytes());
            let _ = stdout.flush();
            Ok(())
        }
        Some(path) => write_report(&cwd.join(path), text.as_bytes()),
    }
}

/// Writes a user's file (ledger, config) via a temporary file in the same directory,
/// flushed to disk, and a rename: readers see either the old or the new content, never a
/// torn file, and a crash right after leaves the new content.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<(), GateError> {
    write_atomic_with(path, Durability::Synced, |file| {
        std::io::Write::write_all(file, bytes)
    })
}

/// [`write_atomic`] of an edit of a user's file whose text was `original`: the new text
/// keeps the file's line ends, so a file checked out with CRLF (Windows, `core.autocrlf`)
/// is written back with CRLF, not turned into LF or a mix of both by the lines an edit adds.
pub fn rewrite_atomic(path: &std::path::Path, original: &str, text: &str) -> Result<(), GateError> {
    write_atomic(path, with_line_ends_of(original, text).as_bytes())
}

/// `text` with CRLF line ends when `original`'s first line ends with CRLF, else as it is.
pub fn with_line_ends_of<'a>(original: &str, text: &'a str) -> std::borrow::Cow<'a, str> {
    let crlf = original
        .find('\n')
        .is_some_and(|end| original[..end].ends_with('\r'));
    if !crlf {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.replace("\r\n", "\n").replace('\n', "\r\n"))
}

/// Writes a report the same way but without waiting for the disk: readers still never
/// see a torn file, and a report lost to a crash is made again by the next run.
pub fn write_report(path: &std::path::Path, bytes: &[u8]) -> Result<(), GateError> {
    write_atomic_with(path, Durability::Renamed, |file| {
        std::io::Write::write_all(file, bytes)
    })
}

/// Whether an atomic write also waits for the content to reach the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    Synced,
    Renamed,
}

/// [`write_atomic`] with the content produced by `write`: if it fails part-way, the
/// original file is untouched and the temporary file is removed.
pub fn write_atomic_with(
    path: &std::path::Path,
    durability: Durability,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<(), GateError> {
    let shown = path.display().to_string();
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    std::fs::create_dir_all(dir)
        .map_err(|e| GateError::write(&shown, format!("cannot create its directory: {e}")))?;
    let mut tmp = temporary_file_for(path, dir)
        .map_err(|e| GateError::write(&shown, format!("cannot write: {e}")))?;
    write(tmp.as_file_mut())
        .and_then(|_| match durability {
            Durability::Synced => tmp.as_file().sync_all(),
            Durability::Renamed => Ok(()),
        })
        .map_err(|e| GateError::write(&shown, format!("was not changed: the write failed: {e}")))?;
    tmp.persist(path)
        .map_err(|e| GateError::write(&shown, format!("cannot replace: {}", e.error)))?;
    Ok(())
}

/// A temporary file beside `path` with the mode `path` will keep: the mode of the file
/// it replaces, else what a new file gets under the umask (`0666 & !umask`), never the
/// temporary file's own 0600.
fn temporary_file_for(
    path: &std::path::Path,
    dir: &std::path::Path,
) -> std::io::Result<tempfile::NamedTempFile> {
    let existing = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    if existing.is_none() {
        use std::os::unix::fs::PermissionsExt;
        // The mode is given to open(2), which applies the umask.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let tmp = builder.tempfile_in(dir)?;
    if let Some(permissions) = existing {
        tmp.as_file().set_permissions(permissions)?;
    }
    Ok(tmp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn an_interrupted_write_leaves_the_original_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.json");
        std::fs::write(&path, "original").unwrap();
        let err = write_atomic_with(&path, Durability::Synced, |file| {
            file.write_all(b"half of the new con")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("was not changed: the write failed: disk full"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "original");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left behind");
        write_atomic(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    }

    #[test]
    fn an_edit_keeps_the_files_line_ends() {
        // A CRLF file (a Windows checkout): the edit's added lines get CRLF too, and lines
        // that already had it are not doubled.
        let crlf = "{\r\n  \"freezes\": []\r\n}\r\n";
        for (edited, want) in [
            (
                "{\n  \"freezes\": [1]\n}\n",
                "{\r\n  \"freezes\": [1]\r\n}\r\n",
            ),
            (
                "{\r\n  \"a\": 1,\n  \"b\": 2\r\n}\n",
                "{\r\n  \"a\": 1,\r\n  \"b\": 2\r\n}\r\n",
            ),
            ("no line end", "no line end"),
        ] {
            assert_eq!(with_line_ends_of(crlf, edited), want, "{edited:?}");
        }
        // An LF file, an empty one, or a CR only inside a line: the edit as it is.
        for original in ["{\n}\n", "", "a\rb\n", "one line"] {
            assert_eq!(
                with_line_ends_of(original, "x\ny\r\n"),
                "x\ny\r\n",
                "{original:?}"
            );
        }

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pytest.ini");
        std::fs::write(&path, "[pytest]\r\ntestpaths = tests\r\n").unwrap();
        let original = std::fs::read_to_string(&path).unwrap();
        let edited = original.replacen("[pytest]", "[pytest]\nfreezegate = true", 1);
        rewrite_atomic(&path, &original, &edited).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[pytest]\r\nfreezegate = true\r\ntestpaths = tests\r\n"
        );
    }
}
