//! `freezegate prove`: the proof record of each deposit (see [`crate::prove`]).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cli::ProveArgs;
use crate::commands::{write_atomic, EXIT_PASS};
use crate::config::Config;
use crate::error::GateError;
use crate::prove::{self, summary, Options};

/// The project's Python: `--python`, else the active virtualenv's, else `python3`. A
/// relative path (`.venv/bin/python`) is the user's, from where they ran prove (the runs
/// happen in a scratch copy); a bare name is looked up on PATH.
pub(crate) fn python(given: Option<&Path>, cwd: &Path) -> PathBuf {
    if let Some(python) = given {
        return match python.components().count() {
            0 | 1 => python.to_path_buf(),
            _ => cwd.join(python),
        };
    }
    match std::env::var_os("VIRTUAL_ENV") {
        Some(venv) if !venv.is_empty() => PathBuf::from(venv).join("bin").join("python"),
        _ => PathBuf::from("python3"),
    }
}

pub fn run(cwd: &Path, config_path: Option<&Path>, args: &ProveArgs) -> Result<u8, GateError> {
    let config = Config::discover(cwd, config_path)?;
    let options = Options {
        python: python(args.python.as_deref(), cwd),
        ledger: args.ledger.clone(),
        base: args.base.clone(),
        base_ledger: args.base_ledger.clone(),
        all: args.all,
        coverage: args.coverage.clone(),
        jobs: args.jobs.map_or(1, usize::from),
        max_mutants: args.max_mutants,
        budget: args.budget.map(Duration::from_secs),
        shard: args.shard,
        progress: std::io::stderr().is_terminal(),
    };
    let proven = prove::prove(cwd, &config, &options)?;
    let path = cwd.join(&args.output);
    let mut text = serde_json::to_string_pretty(&proven.record).expect("a proof record serializes");
    text.push('\n');
    // A proof a signal stopped is not written (the stopping thread ends the process).
    prove::interrupt::wait_if_stopping();
    write_atomic(&path, text.as_bytes())?;
    print!(
        "{}",
        summary::render(
            &proven.record,
            &proven.timings,
            &args.output.display().to_string()
        )
    );
    Ok(EXIT_PASS)
}

#[cfg(test)]
mod tests {
    use super::python;
    use crate::cli::ProveArgs;
    use clap::Parser;
    use std::path::{Path, PathBuf};

    fn with_python(python: &str) -> ProveArgs {
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            prove: ProveArgs,
        }
        Cli::parse_from(["prove", "--python", python]).prove
    }

    #[test]
    fn a_relative_python_is_the_users_not_the_scratch_copys() {
        let cwd = Path::new("/home/u/project");
        assert_eq!(
            python(with_python(".venv/bin/python").python.as_deref(), cwd),
            PathBuf::from("/home/u/project/.venv/bin/python")
        );
        assert_eq!(
            python(with_python("python3.11").python.as_deref(), cwd),
            PathBuf::from("python3.11")
        );
        assert_eq!(
            python(with_python("/usr/bin/python3").python.as_deref(), cwd),
            PathBuf::from("/usr/bin/python3")
        );
    }
}
