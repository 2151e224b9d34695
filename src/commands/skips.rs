//! `freezegate skips`: the skip set derived from the ledger at this commit.

use std::path::Path;

use crate::cli::{SkipsArgs, SkipsFormat};
use crate::commands::EXIT_PASS;
use crate::config::Config;
use crate::error::GateError;
use crate::inputs::ledger::Ledger;
use crate::inputs::InputPath;

pub fn run(cwd: &Path, config_path: Option<&Path>, args: &SkipsArgs) -> Result<u8, GateError> {
    let config = Config::discover(cwd, config_path)?;
    let input = InputPath::from_cli_or_config(
        cwd,
        args.ledger.as_deref(),
        &config.ledger,
        &config.repo_root,
    );
    let ledger = Ledger::load(&input.path, &input.name)?;
    let skips = ledger.derived_skips();
    match args.format {
        SkipsFormat::Json => println!(
            "{}",
            serde_json::to_string(&skips).expect("strings serialize")
        ),
        SkipsFormat::Lines => skips.iter().for_each(|id| println!("{id}")),
        SkipsFormat::Plugin => {
            let commit = crate::inputs::tools::head_commit(&config.repo_root);
            let dirty = commit
                .as_ref()
                .is_some_and(|_| crate::inputs::tools::is_dirty(&config.repo_root));
            // The plugin counts samples of these properties only (see its `Samples`).
            let observe: std::collections::BTreeSet<&str> = ledger
                .entries
                .iter()
                .flat_map(|entry| entry.properties())
                .collect();
            let payload = serde_json::json!({
                "skips": skips,
                "observe": observe,
                "ledger": ledger.source.name,
                "ledger_sha256": ledger.sha256(),
                "commit": commit,
                "dirty": dirty,
            });
            println!("{payload}");
        }
        SkipsFormat::Deselect => {
            let args: Vec<String> = skips
                .iter()
                .map(|id| format!("--deselect={}", shell_quote(id)))
                .collect();
            println!("{}", args.join(" "));
        }
    }
    Ok(EXIT_PASS)
}

/// Quotes an argument for a POSIX shell when it needs it.
pub fn shell_quote(arg: &str) -> String {
    if arg
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-:=+,@".contains(c))
    {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}
