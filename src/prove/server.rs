//! A warm pytest per worker: the driver's fork server (`driver.py serve`) imports pytest,
//! its plugins, Hypothesis, the conftests, the test modules and the code under test
//! once (`pytest --collect-only` on the unmutated code), then forks a child per run,
//! its mutant active only in each test's call phase, so a mutant's run pays for its
//! tests and not for Python's, pytest's and the project's start (mutmut's own fork
//! server, `forkserver_warmup = collect`, does the same). Code that runs at import runs
//! unmutated, before the fork, as it does in every run: a mutant is judged by what the
//! test's own checks see of it. The warm-up records which mutated functions ran then,
//! for the proof to say which mutants were judged so.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::Duration;

use super::engine::Driver;
use super::pool::{Runner, RUN_ALONE};
use crate::error::GateError;

/// What a run records besides each test's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    Nothing,
    /// The mutated functions that run outside the tests' call phase (the unmutated run
    /// of a freeze's tests).
    OutsideCall,
    /// The mutated functions each test's call phase runs (the run of the rest of the
    /// suite).
    Hits,
}

impl Record {
    fn as_str(self) -> &'static str {
        match self {
            Record::Nothing => "",
            Record::OutsideCall => "outside_call",
            Record::Hits => "hits",
        }
    }
}

pub struct ForkServer {
    child: Child,
    /// Stopped with prove when a signal ends it.
    _watched: super::interrupt::Watched,
    requests: Option<ChildStdin>,
    replies: BufReader<ChildStdout>,
    /// What the server printed before its warm-up, and the warm-up's output (where the
    /// server's own goes after it).
    logs: [PathBuf; 2],
    /// The warm-up's reply, once read.
    warm: Option<Reply>,
}

#[derive(serde::Deserialize)]
struct Reply {
    /// pytest's exit status; `None` for a run stopped at its limit.
    status: Option<i32>,
    /// (The warm-up) the mutated functions (`module.mangled_name`) that ran while the
    /// project was imported; `None` when the driver could not tell.
    #[serde(default)]
    imported: Option<Vec<String>>,
}

impl ForkServer {
    /// Starts worker `slot`'s server and sends it the warm-up for `tests`; the first
    /// run waits for it, so the servers of every slot warm up at once.
    pub fn start(
        driver: &Driver,
        runner: &Runner,
        tests: &[String],
        slot: usize,
    ) -> Result<ForkServer, GateError> {
        let log = runner.work.join(format!("server-{slot}.log"));
        let errors = std::fs::File::create(&log)
            .map_err(|e| GateError::write(log.display().to_string(), e.to_string()))?;
        let mut child = driver
            .command(&["serve"], &runner.cwd)
            .envs(runner.env())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(errors))
            .spawn()
            .map_err(|e| driver.cannot_run(e))?;
        let watched = super::interrupt::Watched::child(&child);
        let requests = child.stdin.take().expect("piped");
        let replies = BufReader::new(child.stdout.take().expect("piped"));
        let warm_log = runner.work.join(format!("warm-{slot}.log"));
        let mut server = ForkServer {
            child,
            _watched: watched,
            requests: Some(requests),
            replies,
            logs: [log, warm_log.clone()],
            warm: None,
        };
        server.send(&serde_json::json!({
            "warm": runner.pytest_args(tests, true),
            "log": warm_log,
        }))?;
        Ok(server)
    }

    fn send(&mut self, request: &serde_json::Value) -> Result<(), GateError> {
        let line = format!("{request}\n");
        let sent = self
            .requests
            .as_mut()
            .map(|pipe| pipe.write_all(line.as_bytes()).and_then(|()| pipe.flush()));
        match sent {
            Some(Ok(())) => Ok(()),
            _ => Err(self.ended()),
        }
    }

    fn reply(&mut self) -> Result<Reply, GateError> {
        let mut line = String::new();
        match self.replies.read_line(&mut line) {
            Ok(n) if n > 0 => serde_json::from_str(&line).map_err(|e| {
                GateError::usage(format!(
                    "prove: the driver's fork server replied {line:?}: {e}"
                ))
            }),
            _ => Err(self.ended()),
        }
    }

    /// The error for a server that ended (its runs happen in its children, so only a
    /// broken interpreter or warm-up ends it), with what it printed.
    fn ended(&mut self) -> GateError {
        let status = self.child.wait().ok().and_then(|s| s.code());
        let printed: String = self
            .logs
            .iter()
            .map(|log| std::fs::read_to_string(log).unwrap_or_default())
            .collect();
        GateError::usage(format!(
            "prove: pytest's fork server ended (exit status {}):\n{printed}",
            status.map_or("none".to_string(), |s| s.to_string())
        ))
        .with_help(RUN_ALONE)
    }

    /// The mutated functions (`module.mangled_name`) that ran while the project was
    /// imported and collected, once the warm-up is done (`None` before it, or when the
    /// driver could not tell).
    pub fn imported(&self) -> Option<&[String]> {
        self.warm.as_ref().and_then(|w| w.imported.as_deref())
    }

    /// Runs pytest with `args` on `mutant` ("" for the unmutated code), recording what
    /// `record` asks, each test's outcome streamed to `out`; (exit status, output,
    /// whether it was stopped at `limit`).
    pub fn run(
        &mut self,
        mutant: &str,
        args: &[String],
        out: &Path,
        limit: Duration,
        record: Record,
    ) -> Result<(Option<i32>, String, bool), GateError> {
        let warm = match self.warm.take() {
            Some(warm) => warm,
            // A failed collection is not the server's end: the run says what failed.
            None => self.reply()?,
        };
        self.warm = Some(warm);
        let log = out.with_extension("log");
        self.send(&serde_json::json!({
            "mutant": mutant,
            "args": args,
            "out": out,
            "log": log,
            "limit": limit.as_secs_f64(),
            "record": record.as_str(),
        }))?;
        let reply = self.reply()?;
        let output = std::fs::read_to_string(&log).unwrap_or_default();
        Ok((reply.status, output, reply.status.is_none()))
    }
}

impl Drop for ForkServer {
    fn drop(&mut self) {
        // End of requests: the server's loop ends; a server stuck anywhere is stopped.
        self.requests = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
