//! `freezegate brief TEST_ID`: the drafting step's brief, printed (see [`crate::brief`]).

use std::path::Path;

use crate::brief::Brief;
use crate::cli::{BriefArgs, BriefFormat};
use crate::commands::EXIT_PASS;
use crate::config::Config;
use crate::error::GateError;
use crate::inputs::ledger::Ledger;
use crate::inputs::run_record::Runs;
use crate::inputs::InputPath;

pub fn run(cwd: &Path, config_path: Option<&Path>, args: &BriefArgs) -> Result<u8, GateError> {
    let config = Config::discover(cwd, config_path)?;
    let input = InputPath::from_cli_or_config(
        cwd,
        args.ledger.as_deref(),
        &config.ledger,
        &config.repo_root,
    );
    let ledger = Ledger::load(&input.path, &input.name)?;
    let runs = if args.run.is_empty() {
        last_runs(cwd, &config)
    } else {
        let runs: Vec<InputPath> = args
            .run
            .iter()
            .map(|p| InputPath::from_cli(cwd, p, &config.repo_root))
            .collect();
        Runs::load(&runs)?
    };
    let proof = args
        .proof
        .as_ref()
        .map(|p| InputPath::from_cli(cwd, p, &config.repo_root))
        .map(|p| p.read())
        .transpose()?;
    let python = (!args.static_only && proof.is_none())
        .then(|| crate::commands::prove::python(args.python.as_deref(), cwd));
    let brief = Brief::build(
        &config,
        &ledger,
        &args.test_id,
        runs.as_ref(),
        proof.as_ref(),
        python.as_deref(),
    )?;
    let text = match args.format {
        BriefFormat::Markdown => brief.markdown(),
        BriefFormat::Json => {
            serde_json::to_string_pretty(&brief).expect("a brief serializes") + "\n"
        }
    };
    crate::commands::emit(&text, None, cwd)?;
    Ok(EXIT_PASS)
}

/// Without `--run`, the last run's record (as `freeze add` reads it) gives the frozen
/// test's cases; one that cannot be read is said and left out, since the brief does
/// without it.
fn last_runs(cwd: &Path, config: &Config) -> Option<Runs> {
    let last = crate::inputs::run_record::last_records(cwd, config);
    if last.is_empty() {
        return None;
    }
    let names: Vec<&str> = last.iter().map(|input| input.name.as_str()).collect();
    match Runs::load(&last) {
        Ok(runs) => {
            eprintln!(
                "note: the frozen test's cases are read from {}",
                names.join(", ")
            );
            if let Some(runs) = &runs {
                crate::commands::note_other_commits(
                    runs,
                    config,
                    "pass --run RECORD for this tree's cases",
                );
            }
            runs
        }
        Err(e) => {
            eprintln!(
                "warning: {} left out ({}: {}): pass --run RECORD for the frozen test's cases",
                names.join(", "),
                e.file,
                e.message
            );
            None
        }
    }
}
