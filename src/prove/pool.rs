//! Running tests on mutants: one pytest run per mutant (every test of the freeze in it,
//! each test stopping at its own first failing example), forked from one of `-j N` warm
//! servers (`server.rs`), each run's mutant active only in each test's call phase. The
//! freeze is lifted in these runs (the plugin loaded and off: `FREEZEGATE_PLUGIN_OFF=1`),
//! Hypothesis is derandomized without an example database (the driver's profile), and
//! each test's outcome is streamed to a file as it is known, so a run stopped at its
//! time limit still says which test hung on the mutant.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::engine::PLUGIN;
use super::server::{ForkServer, Record};
use crate::error::GateError;

/// The help of an error that stopped the tests of a freeze from running at all.
pub const RUN_ALONE: &str = "a frozen test and its properties must run alone (`FREEZEGATE_PLUGIN_OFF=1 pytest TEST_ID`): fix the collection error or missing fixture";

/// How a test did on one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    /// Failed on a check: an assert, `pytest.raises` or `pytest.fail` (what the test
    /// knew about the code, not a crash any call of it would give).
    Checked,
    /// Failed otherwise (an exception), or hung past the run's time limit.
    Failed,
    /// Failed in its setup or teardown (a missing fixture, a fixture that raised).
    Error,
    Skipped,
}

impl Verdict {
    /// Whether the test failed on a mutant: an error in its fixtures counts (the mutant
    /// broke what the test sets up).
    pub fn kills(self) -> bool {
        matches!(self, Verdict::Checked | Verdict::Failed | Verdict::Error)
    }
}

/// What one pytest run (with retries past a hang) found.
#[derive(Debug, Clone)]
pub struct TestRun {
    pub verdicts: BTreeMap<String, Verdict>,
    pub duration: Duration,
    /// The output of the last pytest process, for errors.
    pub output: String,
    /// (The unmutated run) the mutated functions (`module.mangled_name`) that ran outside
    /// a test's call phase, by phase (`setup`, `teardown`, `import`): their mutants are
    /// not active there.
    pub outside_call: BTreeMap<String, Vec<String>>,
}

impl TestRun {
    /// Whether test `id` failed in this run.
    pub fn kills(&self, id: &str) -> bool {
        self.verdicts.get(id).is_some_and(|v| v.kills())
    }

    /// Whether test `id` failed in this run on a check (an assert, `pytest.raises`).
    pub fn checks(&self, id: &str) -> bool {
        self.verdicts.get(id) == Some(&Verdict::Checked)
    }
}

#[derive(Clone)]
pub struct Runner {
    pub python: PathBuf,
    pub driver_dir: PathBuf,
    /// pytest's rootdir inside the scratch copy.
    pub cwd: PathBuf,
    pub work: PathBuf,
    /// Arguments after freezegate's own (`-n 0` when pytest-xdist is installed).
    pub extra: Vec<String>,
    /// Arguments of the warm servers' runs only (`--no-cov` when pytest-cov is
    /// installed: the runs on mutants need no coverage of the project's own).
    pub server_extra: Vec<String>,
    /// The user's tree and prove's copy of it: the driver imports from the copy what
    /// would be imported from the tree.
    pub source: PathBuf,
    pub copy: PathBuf,
}

/// Whether pytest reported `reported` for the requested id (a function id covers its
/// parametrized cases, a class id its methods).
pub fn covers(requested: &str, reported: &str) -> bool {
    reported == requested
        || reported
            .strip_prefix(requested)
            .is_some_and(|rest| rest.starts_with('[') || rest.starts_with("::"))
}

/// How a run's pytest starts.
pub enum Via<'a> {
    /// A new process, `python driver.py pytest …`, whose tests' call phases are measured
    /// into the file (the project's own pytest-cov and plugins as they are).
    Measuring(&'a Path),
    /// A child of a warm fork server.
    Server(&'a mut ForkServer),
}

impl Runner {
    /// pytest's arguments for a run of `tests` (to `pytest.main`); `served`: a warm
    /// server's run.
    pub fn pytest_args(&self, tests: &[String], served: bool) -> Vec<String> {
        let mut args: Vec<String> = ["-q", "--no-header", "-p", "no:cacheprovider", "-p", PLUGIN]
            .map(String::from)
            .to_vec();
        args.extend(self.extra.iter().cloned());
        if served {
            args.extend(self.server_extra.iter().cloned());
        }
        args.push("--".into());
        args.extend(tests.iter().cloned());
        args
    }

    /// The environment of every run: the driver importable, and the freeze lifted.
    pub fn env(&self) -> Vec<(&'static str, std::ffi::OsString)> {
        let pythonpath = match std::env::var_os("PYTHONPATH") {
            Some(old) if !old.is_empty() => {
                let mut joined = self.driver_dir.clone().into_os_string();
                joined.push(":");
                joined.push(old);
                joined
            }
            _ => self.driver_dir.clone().into_os_string(),
        };
        vec![
            ("PYTHONPATH", pythonpath),
            ("PYTHONDONTWRITEBYTECODE", "1".into()),
            // Loaded but off, not `-p no:freezegate`: the project's `freezegate = true`
            // stays a known ini key under `--strict-config`, and no ledger skip applies.
            ("FREEZEGATE_PLUGIN_OFF", "1".into()),
            (
                "FREEZEGATE_PROVE_SOURCE",
                self.source.clone().into_os_string(),
            ),
            ("FREEZEGATE_PROVE_COPY", self.copy.clone().into_os_string()),
        ]
    }

    /// `python driver.py pytest …` as a new process, measuring into `measure`.
    fn command(&self, measure: &Path, tests: &[String], out: &Path) -> Command {
        let mut command = Command::new(&self.python);
        command
            .arg(self.driver_dir.join(format!("{PLUGIN}.py")))
            .arg("pytest")
            .args(self.pytest_args(tests, false))
            .current_dir(&self.cwd)
            .envs(self.env())
            .env("FREEZEGATE_PROVE_MEASURE", measure)
            .env("FREEZEGATE_PROVE_OUT", out)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    /// Runs `tests` on `mutant` ("" for the unmutated code) in worker `slot`; a process
    /// past `limit` is stopped, the test it was running counts as failed and the tests it
    /// had not reached run again in a new process.
    pub fn run(
        &self,
        mutant: &str,
        tests: &[String],
        limit: Duration,
        slot: usize,
        via: &mut Via,
    ) -> Result<TestRun, GateError> {
        let started = Instant::now();
        let mut verdicts = BTreeMap::new();
        let mut remaining: Vec<String> = tests.to_vec();
        let mut output = String::new();
        let mut outside_call: BTreeMap<String, Vec<String>> = BTreeMap::new();
        while !remaining.is_empty() {
            let out = self.work.join(format!("outcomes-{slot}.jsonl"));
            let _ = std::fs::remove_file(&out);
            let (status, text, hung) = match via {
                Via::Measuring(measure) => {
                    let child = self
                        .command(measure, &remaining, &out)
                        .spawn()
                        .map_err(|e| {
                            GateError::usage(format!(
                                "prove: cannot run pytest with {}: {e}",
                                self.python.display()
                            ))
                        })?;
                    wait_for(child, limit)?
                }
                Via::Server(server) => {
                    let record = match mutant.is_empty() {
                        true => Record::OutsideCall,
                        false => Record::Nothing,
                    };
                    let args = self.pytest_args(&remaining, true);
                    server.run(mutant, &args, &out, limit, record)?
                }
            };
            output = text;
            let Outcomes {
                seen,
                running,
                outside,
                forged,
                ..
            } = read_outcomes(&out);
            if let Some(why) = forged {
                return Err(forged_outcomes(mutant, &why));
            }
            for (phase, functions) in outside {
                outside_call.entry(phase).or_default().extend(functions);
            }
            let mut reached_any = false;
            for id in &remaining {
                let mine: Vec<Verdict> = seen
                    .iter()
                    .filter(|(reported, _)| covers(id, reported))
                    .map(|(_, v)| *v)
                    .collect();
                if !mine.is_empty() {
                    reached_any = true;
                    let verdict = if mine.contains(&Verdict::Checked) {
                        Verdict::Checked
                    } else if mine.contains(&Verdict::Failed) {
                        Verdict::Failed
                    } else if mine.contains(&Verdict::Error) {
                        Verdict::Error
                    } else if mine.iter().all(|v| *v == Verdict::Skipped) {
                        Verdict::Skipped
                    } else {
                        Verdict::Passed
                    };
                    verdicts.insert(id.clone(), verdict);
                }
            }
            if hung {
                if let Some(id) =
                    running.and_then(|r| remaining.iter().find(|id| covers(id, &r)).cloned())
                {
                    verdicts.insert(id, Verdict::Failed);
                    reached_any = true;
                }
            }
            // A run that stops at its first failure (`-x`: is the mutant killed by any
            // other test?) has its answer: the tests after a hang are not run again, one
            // time limit each (pyrsistent: hours on a loop every map test runs).
            if self.extra.iter().any(|a| a == "-x") && verdicts.values().any(|v| v.kills()) {
                break;
            }
            let left: Vec<String> = remaining
                .iter()
                .filter(|id| !verdicts.contains_key(*id))
                .cloned()
                .collect();
            if !left.is_empty() && (!hung || !reached_any) {
                // pytest ended (or hung at start) without running these. On a mutant, the
                // mutant did it (an import-time function broken, a hang): every one of
                // them fails on it. On the unmutated code, they cannot run alone.
                if hung || !mutant.is_empty() {
                    for id in left {
                        verdicts.insert(id, Verdict::Failed);
                    }
                    break;
                }
                return Err(GateError::usage(format!(
                    "prove: pytest did not run {} (exit status {}){}:\n{output}",
                    left.join(", "),
                    status.map_or("none".to_string(), |s| s.to_string()),
                    if mutant.is_empty() {
                        String::new()
                    } else {
                        format!(" on mutant {mutant}")
                    },
                ))
                .with_help(RUN_ALONE));
            }
            remaining = left;
        }
        Ok(TestRun {
            verdicts,
            duration: started.elapsed(),
            output,
            outside_call,
        })
    }
}

/// The rest of the suite on the unmutated code: which tests passed, and which mutated
/// functions each test's call phase ran.
pub struct SuiteRun {
    pub passed: BTreeSet<String>,
    /// Test id -> the mutated functions (`module.mangled_name`) its call phase ran.
    pub hits: BTreeMap<String, Vec<String>>,
    /// Test id -> how long its call phase took on the unmutated code, in seconds.
    pub durations: BTreeMap<String, f64>,
    pub duration: Duration,
}

impl Runner {
    /// Runs the whole suite (pytest's own `testpaths`, every freeze lifted) on the
    /// unmutated code, recording which mutated functions each test's call phase runs:
    /// the tests a mutant's other killers are looked for among.
    pub fn run_suite(
        &self,
        server: &mut ForkServer,
        limit: Duration,
    ) -> Result<SuiteRun, GateError> {
        let started = Instant::now();
        let out = self.work.join("suite.jsonl");
        let _ = std::fs::remove_file(&out);
        let mut args = self.pytest_args(&[], true);
        // No test named after `--`: the suite's own testpaths; a module that does not
        // import does not stop the others.
        args.pop();
        args.push("--continue-on-collection-errors".into());
        let (status, output, hung) = server.run("", &args, &out, limit, Record::Hits)?;
        if hung || matches!(status, Some(2..=4)) {
            return Err(GateError::usage(format!(
                "prove: the rest of the suite {} (it is run once, to find the other tests that run the code at stake):\n{output}",
                match status {
                    None => format!("did not finish in {} s", limit.as_secs()),
                    Some(s) => format!("did not run (pytest's exit status {s})"),
                }
            ))
            .with_help("a freeze is judged by what only its test checks: the rest of the suite must run under `FREEZEGATE_PLUGIN_OFF=1 pytest` (a larger --budget gives it more time)"));
        }
        let outcomes = read_outcomes(&out);
        if let Some(why) = &outcomes.forged {
            return Err(forged_outcomes("", why));
        }
        let mut failed = BTreeSet::new();
        let mut reported = BTreeSet::new();
        for (id, verdict) in outcomes.seen {
            if verdict != Verdict::Passed {
                failed.insert(id.clone());
            }
            reported.insert(id);
        }
        Ok(SuiteRun {
            passed: reported.difference(&failed).cloned().collect(),
            hits: outcomes.hits,
            durations: outcomes.durations,
            duration: started.elapsed(),
        })
    }
}

/// Waits for a pytest process up to `limit`; (exit status, output, whether it was
/// stopped at the limit).
fn wait_for(
    mut child: std::process::Child,
    limit: Duration,
) -> Result<(Option<i32>, String, bool), GateError> {
    use std::io::Read;
    let watched = super::interrupt::Watched::child(&child);
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + limit;
    let mut hung = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.code(),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                hung = true;
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(GateError::usage(format!("prove: waiting for pytest: {e}"))),
        }
    };
    // Reaped: not to be signalled (its output may still be held open by a process it
    // left behind, which the readers wait for).
    drop(watched);
    let mut text: String = out_reader.join().unwrap_or_default();
    let errors: String = err_reader.join().unwrap_or_default();
    text.push_str(&errors);
    Ok((status, text, hung))
}

/// What the driver streamed of one run.
#[derive(Default)]
struct Outcomes {
    /// The verdict of each report.
    seen: Vec<(String, Verdict)>,
    /// The test that started last without a report (the one a hung run was in).
    running: Option<String>,
    /// (The unmutated run of a freeze's tests) the mutated functions that ran outside
    /// the call phase, by phase.
    outside: BTreeMap<String, Vec<String>>,
    /// (The run of the suite) the mutated functions each test's call phase ran.
    hits: BTreeMap<String, Vec<String>>,
    /// How long each test's call phase took, in seconds.
    durations: BTreeMap<String, f64>,
    /// A report pytest cannot have made: a phase of a test reported twice (but for a
    /// rerun plugin's `rerun`), or a call after its setup failed or skipped. Something in
    /// the test process wrote to the outcomes (a fixture forging kills).
    forged: Option<String>,
}

/// The error for a run whose outcomes something in the test process wrote to.
fn forged_outcomes(mutant: &str, why: &str) -> GateError {
    let run = match mutant {
        "" => "the unmutated run".to_string(),
        mutant => format!("the run of mutant {mutant}"),
    };
    GateError::usage(format!(
        "prove: the outcomes of {run} are not pytest's: {why}"
    ))
    .with_help("something in the test process (a fixture, a hook, the test itself) wrote to the proof's outcomes: a proof judges what pytest reported, so the patch's tests, conftests and fixtures must leave the driver's output alone")
}

fn read_outcomes(path: &Path) -> Outcomes {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut outcomes = Outcomes::default();
    let Outcomes {
        seen,
        running,
        outside,
        hits,
        durations,
        forged,
    } = &mut outcomes;
    // Each phase's last report by test, and whether its setup failed or skipped.
    let mut reported: BTreeMap<(String, String), String> = BTreeMap::new();
    for line in text.lines() {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if let Some(phases) = value.get("outside_call") {
            *outside = serde_json::from_value(phases.clone()).unwrap_or_default();
            continue;
        }
        if let Some(by_test) = value.get("hits") {
            *hits = serde_json::from_value(by_test.clone()).unwrap_or_default();
            continue;
        }
        if let Some(id) = value.get("start").and_then(|v| v.as_str()) {
            *running = Some(id.to_string());
            continue;
        }
        let (Some(id), Some(outcome), when) = (
            value.get("test").and_then(|v| v.as_str()),
            value.get("outcome").and_then(|v| v.as_str()),
            value.get("when").and_then(|v| v.as_str()),
        ) else {
            continue;
        };
        let verdict = match outcome {
            "failed" if when != Some("call") => Verdict::Error,
            "failed" if value.get("checked").and_then(|v| v.as_bool()) == Some(true) => {
                Verdict::Checked
            }
            "failed" => Verdict::Failed,
            "skipped" => Verdict::Skipped,
            // An xfail-marked test that passed: had it failed, pytest would have said
            // xfailed, never failed, so it kills no mutant and is not run on one.
            _ if value.get("xfail").and_then(|v| v.as_bool()) == Some(true) => Verdict::Skipped,
            _ => Verdict::Passed,
        };
        if running.as_deref() == Some(id) {
            *running = None;
        }
        let phase = when.unwrap_or("call");
        if let (Some(took), "call") = (value.get("duration").and_then(|v| v.as_f64()), phase) {
            durations.insert(id.to_string(), took);
        }
        let key = (id.to_string(), phase.to_string());
        let setup = reported.get(&(id.to_string(), "setup".to_string()));
        if forged.is_none() {
            if reported.get(&key).is_some_and(|earlier| earlier != "rerun") {
                *forged = Some(format!("{id}'s {phase} phase is reported twice"));
            } else if phase == "call" && setup.is_some_and(|s| s != "rerun") {
                *forged = Some(format!(
                    "{id}'s call phase is reported though its setup {}",
                    setup.expect("checked")
                ));
            }
        }
        reported.insert(key, outcome.to_string());
        seen.push((id.to_string(), verdict));
    }
    outcomes
}

/// What running every mutant found: each mutant's run, `None` for one not run because
/// the budget was spent.
pub struct PoolResult {
    pub runs: Vec<Option<TestRun>>,
    pub budget_hit: bool,
}

/// Runs each mutant's tests (`runs`: mutant, tests) on it, one run at a time on each of
/// `servers`, until `deadline`; a run of `tests` is stopped after `limit(tests)`.
pub fn run_all(
    runner: &Runner,
    servers: &mut [ForkServer],
    runs: &[(String, Vec<String>)],
    limit: &(dyn Fn(&[String]) -> Duration + Sync),
    deadline: Option<Instant>,
    progress: &(dyn Fn() + Sync),
) -> Result<PoolResult, GateError> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<TestRun>>> = Mutex::new(vec![None; runs.len()]);
    let failure: Mutex<Option<GateError>> = Mutex::new(None);
    let budget_hit = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        for (slot, server) in servers.iter_mut().enumerate() {
            let (next, results, failure, budget_hit) = (&next, &results, &failure, &budget_hit);
            scope.spawn(move || loop {
                if failure.lock().expect("not poisoned").is_some() {
                    return;
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    budget_hit.store(true, Ordering::SeqCst);
                    return;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some((mutant, tests)) = runs.get(i) else {
                    return;
                };
                // The budget bounds each run too: a run cut short by it proves nothing.
                let limit = match deadline {
                    Some(d) => limit(tests).min(d.saturating_duration_since(Instant::now())),
                    None => limit(tests),
                };
                match runner.run(mutant, tests, limit, slot, &mut Via::Server(server)) {
                    Ok(run) if deadline.is_some_and(|d| Instant::now() >= d) => {
                        drop(run);
                        budget_hit.store(true, Ordering::SeqCst);
                        return;
                    }
                    Ok(run) => {
                        results.lock().expect("not poisoned")[i] = Some(run);
                        progress();
                    }
                    Err(e) => {
                        *failure.lock().expect("not poisoned") = Some(e);
                        return;
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().expect("not poisoned") {
        return Err(e);
    }
    Ok(PoolResult {
        runs: results.into_inner().expect("not poisoned"),
        budget_hit: budget_hit.load(Ordering::SeqCst),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcomes(lines: &[&str]) -> Outcomes {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("outcomes.jsonl");
        std::fs::write(&path, lines.join("\n")).expect("written");
        read_outcomes(&path)
    }

    const START: &str = r#"{"start": "t.py::test_p"}"#;
    const CALL_PASSED: &str =
        r#"{"test": "t.py::test_p", "when": "call", "outcome": "passed", "checked": false}"#;
    const FORGED_KILL: &str =
        r#"{"test": "t.py::test_p", "when": "call", "outcome": "failed", "checked": true}"#;

    /// A non-strict xfail test that passes (xpassed) could never be failed by a mutant
    /// (pytest would say xfailed): it is not a passing test the kills are asked of.
    #[test]
    fn an_xpassed_test_is_not_a_passing_one() {
        let xpassed = r#"{"test": "t.py::test_p", "when": "call", "outcome": "passed", "checked": false, "xfail": true}"#;
        let read = outcomes(&[START, xpassed]);
        assert_eq!(read.seen, vec![("t.py::test_p".into(), Verdict::Skipped)]);
        assert!(!read.seen[0].1.kills());
    }

    #[test]
    fn a_kill_a_fixture_writes_beside_pytest_s_report_is_forged() {
        let honest = outcomes(&[START, CALL_PASSED]);
        assert_eq!(honest.forged, None);
        assert_eq!(honest.seen, vec![("t.py::test_p".into(), Verdict::Passed)]);
        // Written in setup, before pytest reports the call.
        let forged = outcomes(&[START, FORGED_KILL, CALL_PASSED]);
        assert_eq!(
            forged.forged.as_deref(),
            Some("t.py::test_p's call phase is reported twice")
        );
        // The test skipped at setup so that only the forged call is there.
        let skipped = r#"{"test": "t.py::test_p", "when": "setup", "outcome": "skipped"}"#;
        let forged = outcomes(&[START, skipped, FORGED_KILL]);
        assert_eq!(
            forged.forged.as_deref(),
            Some("t.py::test_p's call phase is reported though its setup skipped")
        );
        // A rerun plugin reports a phase again after `rerun`: pytest's own.
        let rerun = r#"{"test": "t.py::test_p", "when": "call", "outcome": "rerun"}"#;
        assert_eq!(outcomes(&[START, rerun, FORGED_KILL]).forged, None);
    }
}
