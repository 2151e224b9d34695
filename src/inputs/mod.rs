//! The facts a gate run looks at, each loaded from its file (or tool) once.

pub mod coverage;
pub mod ids;
pub mod junit;
pub mod ledger;
pub mod owners;
pub mod samples;
pub mod tools;
pub mod tree;

use std::path::PathBuf;

use crate::error::InputError;
use crate::source::{Source, SourceFile};
use coverage::Coverage;
use ids::IdSet;
use junit::Results;
use ledger::Ledger;
use samples::Samples;

/// Everything the scripts can be shown. An input that was not given is `None`.
#[derive(Debug)]
pub struct Facts {
    pub ledger: Ledger,
    pub collected: Option<IdSet>,
    pub changed: Option<IdSet>,
    pub samples: Option<Samples>,
    pub applied_skips: Option<IdSet>,
    pub results: Option<Results>,
    /// Lines per test from `--coverage` reports (optional, like `results`).
    pub coverage: Option<Coverage>,
    pub today: jiff::civil::Date,
    pub target_branch: Option<String>,
    /// pytest's rootdir relative to the repository root (`""` when the same).
    pub pytest_root: String,
}

/// A file named on the command line or in config: where it is and how to call it.
#[derive(Debug, Clone)]
pub struct InputPath {
    pub path: PathBuf,
    pub name: String,
}

impl InputPath {
    pub fn read(&self) -> Result<Source, InputError> {
        SourceFile::read(&self.path, self.name.clone())
    }
}

/// Reads several files of one kind (shards) and merges what each parser returns into
/// one id set; `None` when no file was given.
pub fn read_merged(
    paths: &[InputPath],
    parse: fn(&Source) -> Result<ids::Ids, InputError>,
) -> Result<Option<IdSet>, InputError> {
    if paths.is_empty() {
        return Ok(None);
    }
    let mut builder = ids::IdSetBuilder::default();
    for path in paths {
        let source = path.read()?;
        let ids = parse(&source)?;
        builder.add(source, ids)?;
    }
    Ok(Some(builder.build()))
}

/// The input names scripts can `require`, with the flags that provide each.
pub const INPUTS: [(&str, &str); 12] = [
    ("ledger", "--ledger FILE (or `ledger` in config)"),
    ("collected", "--collected FILE or --collect"),
    ("changed", "--changed FILE or --base REF"),
    ("samples", "--samples PATH"),
    ("applied_skips", "--applied-skips FILE"),
    ("derived_skips", "the ledger"),
    ("results", "--junit FILE"),
    ("params", "[params] in config"),
    ("today", "--today YYYY-MM-DD"),
    (
        "target_branch",
        "--target-branch NAME (or a git checkout on a branch)",
    ),
    ("owners", "`owners_file` in config (a CODEOWNERS file)"),
    ("coverage", "--coverage FILE"),
];

pub fn flag_for(input: &str) -> &'static str {
    INPUTS
        .iter()
        .find(|(name, _)| *name == input)
        .map_or("?", |(_, flag)| flag)
}
