//! `freezegate check`: gather the facts, run the policies, report.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Instant;

use crate::cli::CheckArgs;
use crate::commands::{emit, EXIT_PASS, EXIT_VIOLATIONS};
use crate::config::Config;
use crate::error::GateError;
use crate::gate::{self, Checked};
use crate::inputs::Facts;
use crate::inputs::InputPath;
use crate::report::{human, Report};

pub fn run(cwd: &Path, config_path: Option<&Path>, args: &CheckArgs) -> Result<u8, GateError> {
    let Checked {
        gate,
        facts,
        evaluation,
        mut report,
        timings,
    } = gate::check(cwd, config_path, args)?;
    report.deny_warnings = args.deny_warnings;
    if args.trace {
        for timing in &evaluation.timings {
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
            let waited = if timing.waited.is_zero() {
                String::new()
            } else {
                format!(" (+{:.2} ms waiting for inputs)", ms(timing.waited))
            };
            eprintln!(
                "trace: {}: {:.2} ms{waited}, {} reported",
                timing.script,
                ms(timing.ran),
                timing.reported
            );
        }
        for row in &report.samples {
            eprintln!(
                "trace: samples: {}: {} distinct, counted by {}",
                row.property,
                row.distinct,
                row.method.as_str()
            );
        }
    }
    for target in &args.reports {
        let text = target.format.render(&report, false);
        crate::commands::write_report(&cwd.join(&target.path), text.as_bytes())?;
    }
    let colour = args.output.is_none() && human::use_colour(std::io::stdout().is_terminal());
    emit(
        &args
            .format
            .render_capped(&report, colour, args.max_diagnostics),
        args.output.as_deref(),
        cwd,
    )?;
    if let Some(path) = &args.history {
        record_history(cwd, path, &gate.config, &facts, &report)?;
    }
    if args.facts.verbose {
        timings.print(Instant::now());
    }
    let code = if report.failed() {
        EXIT_VIOLATIONS
    } else {
        EXIT_PASS
    };
    // The process ends after this: the OS takes the memory back faster than dropping a
    // million ids and ten thousand entries piece by piece would.
    std::mem::forget((gate, facts, evaluation, report));
    Ok(code)
}

/// Appends this run to the `--history` file (one JSON line; see [`crate::stats::history`]).
fn record_history(
    cwd: &Path,
    path: &Path,
    config: &Config,
    facts: &Facts,
    report: &Report,
) -> Result<(), GateError> {
    let input = InputPath::from_cli(cwd, path, &config.repo_root);
    let record = crate::stats::history::Record::of_run(
        report,
        facts.today,
        crate::inputs::tools::head_commit(&config.repo_root),
        facts.target_branch.clone(),
        report.failed(),
    );
    crate::stats::history::append(&input.path, &input.name, &record)
}
