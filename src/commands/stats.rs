//! `freezegate stats`: the weekly freeze metrics. The deposit figure is the gate's own
//! verdict: the same [`gather`] and [`judge`] as `check`, with only the FZ2xx/FZ3xx rules
//! selected.

use std::collections::BTreeSet;
use std::path::Path;

use crate::cli::{StatsArgs, StatsFormat};
use crate::commands::{emit, EXIT_PASS};
use crate::engine::bindings::Date;
use crate::engine::policy::Severity;
use crate::engine::selection::Selection;
use crate::engine::Target;
use crate::error::GateError;
use crate::gate::{gather, judge, Gate};
use crate::inputs::InputPath;
use crate::stats::{self, DepositInput, FreezeFacts, HistoryInput, Inputs, Stats};

/// The rule categories whose error-severity violations make a deposit fail.
const DEPOSIT_CATEGORIES: [&str; 2] = ["deposit", "samples"];

pub fn run(cwd: &Path, config_path: Option<&Path>, args: &StatsArgs) -> Result<u8, GateError> {
    let since = args
        .since
        .as_deref()
        .map(|text| Date::of_flag("--since", text).map(|d| d.0))
        .transpose()?;
    let (config, _) = crate::gate::trusted_config(cwd, config_path, args.trusted_ref.as_deref())?;
    let gate = Gate::with_config(config)?;
    let facts = gather(cwd, &gate.config, &args.facts)?;

    let deposit_rules: Vec<String> = gate
        .pack
        .rules
        .iter()
        .filter(|r| DEPOSIT_CATEGORIES.contains(&r.category.as_str()))
        .map(|r| r.code.clone())
        .collect();
    let mut failing: Vec<BTreeSet<String>> = vec![BTreeSet::new(); facts.ledger.entries.len()];
    let deposit = if deposit_rules.is_empty() {
        DepositInput::NoRules
    } else {
        let selection = Selection::new(&gate.pack, &gate.config, &deposit_rules, &[])?;
        let (evaluation, report) = judge(&gate, &facts, &selection)?;
        for raw in &evaluation.reports {
            let is_deposit = deposit_rules.contains(&raw.code);
            if !is_deposit || selection.severity(&raw.code) != Some(Severity::Error) {
                continue;
            }
            if let Target::Entry { index, .. } = raw.target {
                if let Some(codes) = failing.get_mut(index) {
                    codes.insert(raw.code.clone());
                }
            }
        }
        let missing = report.missing_inputs();
        // Rules of optional inputs (results, coverage) not evaluated leave the count
        // standing; a missing required input (FZ001) does not.
        if missing.is_empty() {
            DepositInput::Evaluated
        } else {
            DepositInput::Missing(missing)
        }
    };

    let text = |entry: &crate::inputs::ledger::Entry, field: &str| {
        entry
            .field(field)
            .and_then(|n| n.as_str())
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let date = |entry: &crate::inputs::ledger::Entry, field: &str| {
        text(entry, field)
            .and_then(|t| Date::parse(&t))
            .map(|d| d.0)
    };
    let freezes = facts
        .ledger
        .entries
        .iter()
        .zip(failing)
        .map(|(entry, codes)| FreezeFacts {
            test_id: text(entry, "test_id").unwrap_or_default(),
            owner: text(entry, "owner"),
            team: text(entry, "team"),
            opened: date(entry, "opened"),
            expires: date(entry, "expires"),
            failing: codes.into_iter().collect(),
            coverage: facts.loaded.coverage.get().zip(entry.test_id()).map(
                |(coverage, test_id)| {
                    let deposit = coverage.deposit(test_id, &entry.properties());
                    (deposit.at_stake.len(), deposit.covered)
                },
            ),
            mutation: facts
                .loaded
                .proof
                .get()
                .zip(entry.test_id())
                .and_then(|(proof, test_id)| proof.freezes.get(test_id))
                .filter(|f| f.frozen_clean == "passed")
                .map(|f| {
                    // As FZ210 judges: the frozen test's kills by a check, and of those
                    // the ones the deposit catches by a check (crash-only ones left out).
                    let j =
                        crate::inputs::proof::Judgement::of(&f.frozen_clean, f.mutants.values());
                    (j.caught + j.survivors.len(), j.caught)
                }),
        })
        .collect();

    let history = match &args.history {
        Some(path) => {
            let input = InputPath::from_cli(cwd, path, &gate.config.repo_root);
            let history = crate::stats::history::load(&input.path, &input.name)?;
            for line in &history.torn_lines {
                eprintln!(
                    "warning: {}: line {line} is an unfinished record (an interrupted run); skipped",
                    input.name
                );
            }
            Some(HistoryInput {
                name: input.name,
                since,
                history,
            })
        }
        None if since.is_some() => {
            return Err(GateError::usage(
                "--since filters the run history: give --history PATH too",
            ))
        }
        None => None,
    };

    let figures = Stats::compute(&Inputs {
        today: facts.today,
        expiring_days: i64::from(args.expiring_days),
        freezes,
        deposit,
        history,
        baseline: facts.baseline.entries.len(),
    });
    let rendered = match args.format {
        StatsFormat::Human => stats::render_human(&figures),
        StatsFormat::Json => stats::render_json(&figures),
        StatsFormat::Markdown => stats::render_markdown(&figures),
    };
    emit(&rendered, args.output.as_deref(), cwd)?;
    Ok(EXIT_PASS)
}
