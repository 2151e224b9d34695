//! The drafting step (`freezegate brief TEST_ID`): what the author of a freeze's
//! deposit, often an agent, needs to write a property that would catch a bug: the
//! ledger entry and its invariant, the frozen test's source, the code at stake, the
//! thresholds the gate will apply, the seed's ask, and with a proof record the mutants
//! the deposit lets through. Facts are gathered here; `markdown` words them.

mod markdown;
mod proof;
pub mod python;

use serde::Serialize;

use crate::config::Config;
use crate::document::{Node, Value};
use crate::error::GateError;
use crate::inputs::ledger::Ledger;
use crate::inputs::run_record::Runs;
use crate::source::Source;
use python::Code;

pub use proof::Survivor;

/// The seed's ask, word for word the brief's closing instruction.
pub const ASK: &str = "Give three candidate properties for the invariant, each a Hypothesis test that fails on a bug in the code at stake, plus the one input class you would not generate (and why).";

/// Everything the brief says, in the fields `--format json` prints (stable: fields are
/// only ever added).
#[derive(Debug, Serialize)]
pub struct Brief {
    pub version: u32,
    pub test_id: String,
    pub entry: EntryFacts,
    /// The frozen test's source; `null` when its file or def was not found.
    pub frozen_test: Option<Code>,
    /// How `frozen_test`'s lines were found: `run record` or `source`.
    pub frozen_test_lines_from: &'static str,
    /// The collected cases of the frozen test's function, when it is parametrized (from
    /// the run record; empty without one).
    pub cases: Vec<String>,
    /// With `--proof`: how the frozen test did alone on this commit's code, its freeze
    /// lifted (`passed`, `failed` every run of 3, `flaky`).
    pub frozen_alone: Option<String>,
    pub code_at_stake: Vec<Code>,
    /// How the code at stake was found.
    pub code_at_stake_from: String,
    pub thresholds: Thresholds,
    /// With `--proof`: the mutants of the code at stake no compensating property killed.
    pub survivors: Option<Vec<Survivor>>,
    pub ask: &'static str,
}

#[derive(Debug, Serialize)]
pub struct EntryFacts {
    pub ledger: String,
    pub reason: Option<String>,
    pub owner: Option<String>,
    pub expires: Option<String>,
    pub invariant: Option<String>,
    pub compensating_property: Vec<String>,
}

/// What the gate will ask of the deposit.
#[derive(Debug, Serialize)]
pub struct Thresholds {
    /// FZ301: distinct inputs each property must see.
    pub min_distinct: f64,
    /// FZ210: the share of the frozen test's kills the properties must kill.
    pub min_kill_share: f64,
    /// FZ210, when the frozen test's kills are unknown: the share of all mutants at stake.
    pub min_mutation_score: f64,
}

impl Brief {
    pub fn build(
        config: &Config,
        ledger: &Ledger,
        test_id: &str,
        runs: Option<&Runs>,
        proof: Option<&Source>,
        python: Option<&std::path::Path>,
    ) -> Result<Brief, GateError> {
        let entry = ledger
            .entries
            .iter()
            .find(|e| e.test_id() == Some(test_id))
            .ok_or_else(|| {
                GateError::new(
                    &ledger.source.name,
                    format!("no freeze of {test_id} in the ledger (freeze it first: `freezegate freeze add {test_id} ...`)"),
                )
            })?;
        let text = |field: &str| {
            entry
                .field(field)
                .and_then(Node::as_str)
                .map(str::to_string)
        };
        let facts = EntryFacts {
            ledger: ledger.source.name.clone(),
            reason: text("reason"),
            owner: text("owner"),
            expires: text("expires"),
            invariant: text("invariant"),
            compensating_property: entry.properties().iter().map(|p| p.to_string()).collect(),
        };
        let (frozen_test, from) = frozen_test(config, test_id, runs);
        let proven = proof
            .map(|p| proof::proven(p, test_id, |file| read(config, file)))
            .transpose()?;
        // Without a proof, the frozen test is run alone as prove runs it; its source is
        // read only when it cannot be (or `--static`).
        let measured = match (&proven, python) {
            (None, Some(python)) => Some(crate::prove::code_at_stake(config, python, test_id)),
            _ => None,
        };
        let read_from_source = |why: &str| {
            let stake = frozen_test
                .as_ref()
                .map(|test| code_at_stake(config, test))
                .unwrap_or_default();
            (stake, format!("the functions the frozen test calls directly from its body, read from its source (its own file and the project modules it imports them from){why}"))
        };
        let mut frozen_alone = proven.as_ref().map(|p| p.frozen_alone.clone());
        let (code_at_stake, code_at_stake_from) = match (&proven, measured) {
            (Some(proven), _) => (
                measured_stake(config, &proven.stake),
                "the project functions the frozen test ran alone under coverage (the proof record)"
                    .to_string(),
            ),
            (None, Some(Ok((stake, outcome)))) => {
                frozen_alone = Some(outcome);
                (
                    measured_stake(config, &stake),
                    "the project functions the frozen test ran in its call phase, run alone now with its freeze lifted (as `freezegate prove` measures it)".to_string(),
                )
            }
            (None, Some(Err(e))) => {
                let first = e.message.lines().next().unwrap_or_default().to_string();
                eprintln!("freezegate brief: the frozen test was not run alone ({first}); the code at stake is read from its source");
                read_from_source(", for it could not be run alone: see the message on stderr")
            }
            (None, None) => read_from_source(""),
        };
        let survivors = proven.map(|p| p.survivors);
        Ok(Brief {
            version: 1,
            test_id: test_id.to_string(),
            entry: facts,
            frozen_test,
            frozen_test_lines_from: from,
            cases: runs.map(|r| cases(test_id, r)).unwrap_or_default(),
            frozen_alone,
            code_at_stake,
            code_at_stake_from,
            thresholds: Thresholds {
                min_distinct: param(config, "min_distinct", 8.0),
                min_kill_share: param(config, "min_kill_share", 0.8),
                min_mutation_score: param(config, "min_mutation_score", 0.6),
            },
            survivors,
            ask: ASK,
        })
    }

    pub fn markdown(&self) -> String {
        markdown::render(self)
    }
}

fn param(config: &Config, key: &str, default: f64) -> f64 {
    match config
        .params
        .as_ref()
        .and_then(|p| p.get(key))
        .map(|n| &n.value)
    {
        Some(Value::Int(i)) => *i as f64,
        Some(Value::Float(f)) => *f,
        _ => default,
    }
}

/// The frozen test's file, nesting and function name from its node id
/// (`tests/t.py::TestA::test_b[1]`).
fn split_id(test_id: &str) -> Option<(&str, Vec<&str>)> {
    let head = test_id.split('[').next()?;
    let mut parts = head.split("::");
    let file = parts.next()?;
    let path: Vec<&str> = parts.collect();
    (!path.is_empty()).then_some((file, path))
}

/// The collected cases of the frozen test's function, when it has parameters.
fn cases(test_id: &str, runs: &Runs) -> Vec<String> {
    let function = crate::inputs::ids::strip_params(test_id);
    runs.collected
        .iter()
        .filter(|id| id.len() > function.len() && crate::inputs::ids::strip_params(id) == function)
        .map(str::to_string)
        .collect()
}

fn read(config: &Config, file: &str) -> Option<String> {
    std::fs::read_to_string(config.repo_root.join(file)).ok()
}

fn frozen_test(
    config: &Config,
    test_id: &str,
    runs: Option<&Runs>,
) -> (Option<Code>, &'static str) {
    let Some((file, path)) = split_id(test_id) else {
        return (None, "source");
    };
    let Some(text) = read(config, file) else {
        return (None, "source");
    };
    let function = path.last().copied().unwrap_or_default().to_string();
    let recorded = runs.and_then(|r| {
        r.lines_of(test_id)
            .or_else(|| r.lines_of(test_id.split('[').next().unwrap_or(test_id)))
    });
    let (span, from) = match recorded {
        Some(span) => (Some(span), "run record"),
        None => (python::find_def(&text, &path), "source"),
    };
    let code = span.map(|(first, last)| Code {
        file: file.to_string(),
        function,
        first,
        last,
        source: python::lines_of(&text, first, last),
        unmutated: None,
    });
    (code, from)
}

/// The code at stake `prove` measured, with its source as the tree has it now.
fn measured_stake(config: &Config, stake: &[crate::inputs::proof::StakeFunction]) -> Vec<Code> {
    stake
        .iter()
        .filter_map(|f| {
            let text = read(config, &f.file)?;
            let [first, last] = f.lines;
            Some(Code {
                file: f.file.clone(),
                function: f.function.clone(),
                first,
                last,
                source: python::lines_of(&text, first, last),
                unmutated: f.unmutated.clone(),
            })
        })
        .collect()
}

/// The functions the frozen test calls directly, defined in its own file or in a module
/// of the project it imports them from (never site-packages: a module not in the
/// repository is not code at stake).
fn code_at_stake(config: &Config, test: &Code) -> Vec<Code> {
    let Some(text) = read(config, &test.file) else {
        return Vec::new();
    };
    let body = test
        .source
        .lines()
        .skip_while(|l| {
            !l.trim_start().starts_with("def ") && !l.trim_start().starts_with("async def ")
        })
        .collect::<Vec<_>>()
        .join("\n");
    let imports = python::imports(&text, &test.file);
    let mut found = Vec::new();
    for name in python::called_names(&body) {
        if name == test.function {
            continue;
        }
        let (file, original) = match imports.iter().find(|(local, _)| *local == name) {
            Some((_, target)) => {
                let (module, original) = target
                    .split_once(':')
                    .unwrap_or((target.as_str(), name.as_str()));
                let module = module.replace('.', "/");
                // A module or a package's `__init__`, in a flat or a `src/` layout.
                let file = [
                    format!("{module}.py"),
                    format!("{module}/__init__.py"),
                    format!("src/{module}.py"),
                    format!("src/{module}/__init__.py"),
                ]
                .into_iter()
                .find(|f| config.repo_root.join(f).is_file());
                match file {
                    Some(file) => (file, original.to_string()),
                    None => continue,
                }
            }
            None => (test.file.clone(), name.clone()),
        };
        let Some(source) = read(config, &file) else {
            continue;
        };
        if let Some((first, last)) = python::find_def(&source, &[original.as_str()]) {
            found.push(Code {
                file,
                function: original,
                first,
                last,
                source: python::lines_of(&source, first, last),
                unmutated: None,
            });
        }
    }
    found
}
