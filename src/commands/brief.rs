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
    let runs: Vec<InputPath> = args
        .run
        .iter()
        .map(|p| InputPath::from_cli(cwd, p, &config.repo_root))
        .collect();
    let runs = Runs::load(&runs)?;
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
