//! `freezegate run [--check [CHECK ARGS]] -- pytest ARGS`: the supervised run (see
//! [`crate::supervise`]), then with `--check` the gate on the record as it came.

use std::path::Path;

use clap::Parser;

use crate::cli::{Cli, Command, RunArgs};
use crate::commands::{write_report, EXIT_ERROR, EXIT_PASS, EXIT_VIOLATIONS};
use crate::error::GateError;
use crate::source::SourceFile;
use crate::supervise::{self, describe_status, pytest_ran, record_path};

pub fn run(cwd: &Path, config_path: Option<&Path>, args: &RunArgs) -> Result<u8, GateError> {
    // The check's arguments are read before pytest starts: a typo stops the run at once.
    let check = args
        .check
        .as_ref()
        .map(|words| check_args(config_path, words))
        .transpose()?;
    // A report in a machine format on standard output must parse: pytest's own output
    // goes to standard error then.
    let machine_stdout = check.as_ref().is_some_and(|c| {
        c.output.is_none()
            && matches!(
                c.format,
                crate::report::Format::Json
                    | crate::report::Format::Sarif
                    | crate::report::Format::Junit
            )
    });
    let supervised = supervise::run(cwd, &args.command, machine_stdout)?;
    let received = &supervised.received;
    let ended = describe_status(&supervised.status);
    let Some(hello) = &received.hello else {
        return Err(GateError::usage(format!(
            "pytest {ended} and no run record came from it: the freezegate plugin did not start{}",
            received
                .broken
                .as_ref()
                .map(|why| format!(" ({why})"))
                .unwrap_or_default()
        ))
        .with_help("install freezegate into pytest's environment (the wheel carries the plugin), and do not pass `-p no:freezegate`; pytest's own output above says why it stopped"));
    };
    let (path, shown) = record_path(cwd, hello);
    let Some(record) = &received.record else {
        let why = received
            .no_record
            .clone()
            .or_else(|| received.broken.clone())
            .unwrap_or_else(|| format!("pytest {ended} before the session finished"));
        let kept = match received.partial_record(&why) {
            Some(partial) if received.no_record.is_none() => {
                write_report(&path, format!("{partial}\n").as_bytes())?;
                format!(
                    "; the partial record ({} finished) is kept in {shown} for inspection, marked incomplete",
                    crate::words::count_of(received.rows.len(), "test")
                )
            }
            _ => String::new(),
        };
        return Err(
            GateError::new(&shown, format!("no complete run record: {why}{kept}")).with_help(
                "the gate judges a whole test run: fix what stopped pytest and run it again",
            ),
        );
    };
    write_report(&path, format!("{record}\n").as_bytes())?;
    if let Some(broken) = &received.broken {
        return Err(GateError::new(
            &shown,
            format!("the pipe broke after the record: {broken}"),
        ));
    }
    if !pytest_ran(&supervised.status) {
        return Err(GateError::new(
            &shown,
            format!("pytest {ended}: the run did not happen as asked, so it is not judged"),
        )
        .with_help("pytest's own output above says why"));
    }
    // The rows came as each test finished; a record that says otherwise was rewritten in
    // the pytest process after them. The check still runs (its rules name the hook or
    // the line that did it); the run ends with this error.
    let rewritten = received.disagreement(record).map(|why| {
        GateError::new(
            &shown,
            format!("the record disagrees with the rows the plugin sent as each test finished: {why}"),
        )
        .with_help("something in the pytest process (a hook, a fixture, a patched plugin) rewrote the record after the tests ran: the report above names the hooks and lines the patch added; a run is judged by what its tests reported")
    });
    let record = SourceFile::new(shown, path, record.clone());
    if args.baseline {
        if let Some(rewritten) = rewritten {
            return Err(rewritten);
        }
        let Command::Baseline(mut baseline) = parsed_args(config_path, "baseline", &[])? else {
            return Err(GateError::usage(
                "freezegate run --baseline: not `baseline`",
            ));
        };
        baseline.facts.supervised_run = Some(record.clone());
        crate::commands::baseline::run(cwd, config_path, &baseline)?;
    }
    // Outcomes decide, not pytest's status: a hook can make a run with failures exit 0.
    let failed = received.failed();
    if !failed.is_empty() && supervised.status.code() == Some(0) {
        eprintln!(
            "freezegate run: pytest exited with status 0, but {} failed or errored ({}{}): the run is judged by its tests' outcomes",
            crate::words::count_of(failed.len(), "test"),
            failed[0],
            if failed.len() > 1 { ", …" } else { "" }
        );
    }
    let tests_failed = supervised.status.code() == Some(1) || !failed.is_empty();
    let Some(mut check) = check else {
        if let Some(rewritten) = rewritten {
            return Err(rewritten);
        }
        return Ok(if tests_failed {
            EXIT_VIOLATIONS
        } else {
            EXIT_PASS
        });
    };
    check.facts.supervised_run = Some(record);
    let code = crate::commands::check::run(cwd, config_path, &check)?;
    if let Some(rewritten) = rewritten {
        return Err(rewritten);
    }
    Ok(match code {
        EXIT_ERROR => EXIT_ERROR,
        code if tests_failed => code.max(EXIT_VIOLATIONS),
        code => code,
    })
}

/// `freezegate check`'s arguments, as `--check` gave them.
fn check_args(
    config_path: Option<&Path>,
    words: &[String],
) -> Result<Box<crate::cli::CheckArgs>, GateError> {
    match parsed_args(config_path, "check", words)? {
        Command::Check(check) => Ok(check),
        _ => Err(GateError::usage(
            "freezegate run --check: not the arguments of `check`",
        )),
    }
}

/// The arguments `words` of the subcommand `command`, parsed as its command line would.
fn parsed_args(
    config_path: Option<&Path>,
    command: &str,
    words: &[String],
) -> Result<Command, GateError> {
    let mut argv: Vec<String> = vec!["freezegate".into()];
    if let Some(config) = config_path {
        argv.push("--config".into());
        argv.push(config.display().to_string());
    }
    argv.push(command.into());
    argv.extend(words.iter().cloned());
    match Cli::try_parse_from(&argv) {
        Ok(cli) => Ok(cli.command),
        Err(e) => Err(GateError::usage(format!(
            "freezegate run --{command}: {}",
            e.render()
                .to_string()
                .trim_start_matches("error: ")
                .trim_end()
        ))),
    }
}
