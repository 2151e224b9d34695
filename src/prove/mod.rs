//! `freezegate prove`: would the compensating properties catch the bugs the frozen test
//! caught? For each freeze the patch adds or changes, the code at stake (the project
//! functions the frozen test runs alone in its call phase, narrowed to the lines only it
//! covers when `--coverage` reports are given), the mutants the engine makes of it, and
//! which of them the frozen test (its freeze lifted) and each property fail on, each
//! mutant active only in a test's call phase, all in a scratch copy of the tree that is
//! what the tests import. The result is the proof record `check --proof` judges.

pub mod engine;
pub mod interrupt;
pub mod measure;
pub mod pool;
pub mod removed;
pub mod scratch;
pub mod server;
pub mod summary;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::error::GateError;
use crate::inputs::coverage::Coverage;
use crate::inputs::ledger::{Entry, Ledger};
use crate::inputs::proof::{self, FreezeProof, Mutant, ProofRecord, StakeFunction};
use crate::inputs::{tools, InputPath};
use engine::Driver;
use pool::{Runner, Verdict, Via};
use server::ForkServer;

/// What to prove and how (the command line of `prove`).
#[derive(Debug, Clone)]
pub struct Options {
    pub python: PathBuf,
    pub ledger: Option<PathBuf>,
    pub base: Option<String>,
    pub base_ledger: Option<PathBuf>,
    /// Every freeze, not only those the patch adds or changes.
    pub all: bool,
    pub coverage: Vec<PathBuf>,
    pub jobs: usize,
    pub max_mutants: Option<usize>,
    pub budget: Option<Duration>,
    /// `(index, count)`, 1-based.
    pub shard: Option<(u32, u32)>,
    /// Show a progress bar (on a terminal).
    pub progress: bool,
}

/// The record, and what each freeze's proof took, for the summary.
pub struct Proven {
    pub record: ProofRecord,
    pub timings: Vec<Timing>,
}

/// How long one freeze's proof took: all of it (the run under coverage, the mutants
/// made, the warm-up), and the runs of its mutants alone (what an engine's own
/// "mutations/second" counts).
#[derive(Debug, Clone, Copy, Default)]
pub struct Timing {
    pub total: Duration,
    pub mutants: Duration,
}

/// A run of a mutant longer than this many times the unmutated run is stopped (a mutant
/// that loops forever), and counts as failed for the test it was in.
const TIMEOUT_FACTOR: u32 = 10;
const MIN_TIMEOUT: Duration = Duration::from_secs(10);
/// The least time limit of a run whose own unmutated time is known (the frozen test
/// alone, the other tests on a kill): a mutant that loops forever costs this, not
/// [`MIN_TIMEOUT`] (pyrsistent: three loops were two thirds of a proof).
const MIN_RUN_TIMEOUT: Duration = Duration::from_secs(3);
/// The least time limit of one test's call phase in the other tests' runs on a kill.
const MIN_CALL_TIMEOUT: Duration = Duration::from_secs(2);
/// What starting a forked pytest session costs on top of its tests, at least.
const SESSION_START: Duration = Duration::from_millis(500);
/// The unmutated runs (one under coverage) get this long.
const CLEAN_TIMEOUT: Duration = Duration::from_secs(600);
/// How many times a frozen test that fails alone is run before it is said to fail
/// every time.
const ALONE_RUNS: usize = 3;
/// The run of the whole suite (once per freeze) gets this long, or what is left of the
/// budget.
const SUITE_TIMEOUT: Duration = Duration::from_secs(3600);

/// The freezes to prove: every entry with `--all`, else those new or whose test or
/// property changed against the base (every entry without a base).
fn selected<'l>(ledger: &'l Ledger, all: bool, edited: &BTreeSet<String>) -> Vec<&'l Entry> {
    ledger
        .entries
        .iter()
        .filter(|e| e.test_id().is_some_and(|id| !id.is_empty()) && !e.properties().is_empty())
        .filter(|e| {
            all || e.is_new
                || e.changed_fields()
                    .iter()
                    .any(|f| *f == "test_id" || *f == "compensating_property")
                // A deposit whose code the patch changed is judged again.
                || e.properties()
                    .iter()
                    .any(|p| edited.contains(crate::inputs::ids::strip_params(p)))
        })
        .collect()
}

/// What a proof is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A freeze: its test in the patch's code (as the base defined it, where changed).
    Freeze,
    /// A test the patch removed: a retired entry's, with its deposit, or one no entry
    /// names, with none.
    Removed,
    /// A test the patch edited: its base version, with the patch's version beside it as
    /// the "deposit" that must still catch what only the base's caught.
    Edited,
}

/// One test to prove.
struct Target {
    test_id: String,
    /// An edited test's line in the patch where the edit begins.
    line: Option<u32>,
    /// A removed test's name in its file now, where the patch renamed it out of
    /// collection.
    renamed_to: Option<String>,
    properties: Vec<String>,
    kind: Kind,
    /// The test file to put in the scratch copy for this proof (its repository path and
    /// text): the base's, for a removed or edited test.
    scratch: Option<(String, String)>,
    /// Tests of that file that are not the patch's suite (not "other tests").
    not_the_suite: Vec<String>,
}

/// The name the patch's version of an edited test runs under, beside the base's.
const AS_PATCHED: &str = "__as_patched";

/// The selected freezes, then every removed test no ledger entry names, then every
/// edited one. A retired entry's test the patch did not remove (against `--base`) is not
/// in any code to run: its entry is judged by the other rules.
fn targets(
    ledger: &Ledger,
    all: bool,
    test_files: &[removed::TestFile],
    pytest_root: &str,
) -> Vec<Target> {
    let removed_in = |test_id: &str| {
        let function = crate::inputs::ids::strip_params(test_id);
        test_files
            .iter()
            .find(|f| f.removed_ids(pytest_root).iter().any(|id| id == function))
    };
    let base_file = |file: &removed::TestFile| (file.file.clone(), file.base.clone());
    // The tests the patch edited, by their ids in the patch.
    let edited: BTreeSet<String> = test_files
        .iter()
        .filter(|f| f.kept)
        .flat_map(|f| {
            let suite = crate::inputs::ids::suite_file(pytest_root, &f.file);
            let changed = f.changes.changed.iter();
            changed.map(move |(_, now)| format!("{suite}::{now}"))
        })
        .collect();
    let mut targets: Vec<Target> = Vec::new();
    for entry in selected(ledger, all, &edited) {
        let test_id = entry.test_id().unwrap_or_default().to_string();
        let file = match entry.is_retired() {
            true => match removed_in(&test_id) {
                Some(file) => Some(file),
                None => continue,
            },
            false => None,
        };
        targets.push(Target {
            properties: entry.properties().iter().map(|p| p.to_string()).collect(),
            renamed_to: file.and_then(|f| f.renamed_out(&test_id)),
            test_id,
            line: None,
            kind: if file.is_some() {
                Kind::Removed
            } else {
                Kind::Freeze
            },
            scratch: file.map(base_file),
            not_the_suite: file.map_or_else(Vec::new, |f| f.not_the_suite(pytest_root)),
        });
    }
    // The functions the ledger names, as frozen tests and as their deposits.
    let functions = |ids: &mut dyn Iterator<Item = &str>| -> BTreeSet<String> {
        ids.map(|id| crate::inputs::ids::strip_params(id).to_string())
            .collect()
    };
    let frozen = functions(&mut ledger.entries.iter().filter_map(|e| e.test_id()));
    let deposits = functions(&mut ledger.entries.iter().flat_map(|e| e.properties()));
    for file in test_files {
        for id in file.removed_ids(pytest_root) {
            if !frozen.contains(&id) {
                targets.push(Target {
                    renamed_to: file.renamed_out(&id),
                    test_id: id,
                    line: None,
                    properties: Vec::new(),
                    kind: Kind::Removed,
                    scratch: Some(base_file(file)),
                    not_the_suite: file.not_the_suite(pytest_root),
                });
            }
        }
    }
    for file in test_files {
        let (Some(head), true) = (&file.head, file.kept) else {
            continue;
        };
        let suite = crate::inputs::ids::suite_file(pytest_root, &file.file);
        for (name, now) in &file.changes.changed {
            let test_id = format!("{suite}::{name}");
            if frozen.contains(&test_id) || deposits.contains(&format!("{suite}::{now}")) {
                continue; // a freeze, or its deposit: proven with the freeze, above
            }
            let (class, function) = crate::inputs::weakened::class_and_name(name);
            let copy_name = format!("{function}{AS_PATCHED}");
            let copy_id = match class {
                Some(class) => format!("{suite}::{class}::{copy_name}"),
                None => format!("{suite}::{copy_name}"),
            };
            let text = crate::inputs::weakened::with_patch_copy(
                &file.file,
                &file.base,
                head,
                (name, now),
                &copy_name,
            );
            let Ok(Some(text)) = text else {
                continue; // the same whitespace aside (both sides parsed before)
            };
            let mut not_the_suite = file.not_the_suite(pytest_root);
            not_the_suite.push(copy_id.clone());
            targets.push(Target {
                line: crate::inputs::weakened::edit_line(&file.file, &file.base, head, name, now),
                renamed_to: None,
                test_id,
                properties: vec![copy_id],
                kind: Kind::Edited,
                scratch: Some((file.file.clone(), text)),
                not_the_suite,
            });
        }
    }
    targets
}

impl Target {
    /// Its proof before anything is run: what the target is (removed, edited, its line),
    /// and whether the frozen test was put back as the base defined it.
    fn proof(&self, frozen_at_base: bool) -> FreezeProof {
        FreezeProof {
            test_id: self.test_id.clone(),
            properties: self.properties.clone(),
            stake: Vec::new(),
            frozen_clean: "unknown".into(),
            frozen_at_base: frozen_at_base && self.kind == Kind::Freeze,
            removed: self.kind == Kind::Removed,
            renamed_to: self.renamed_to.clone(),
            edited: self.kind == Kind::Edited,
            line: self.line,
            properties_clean: BTreeMap::new(),
            mutants_total: 0,
            incomplete: None,
            others: 0,
            mutants: Vec::new(),
        }
    }
}

/// The record of a removed or edited test the proof could not run, and why.
fn unproven(target: &Target, why: &str) -> FreezeProof {
    let first = why
        .lines()
        .next()
        .unwrap_or(why)
        .trim_start_matches("prove: ");
    FreezeProof {
        incomplete: Some(format!("its base version could not be proven: {first}")),
        ..target.proof(false)
    }
}

pub fn prove(cwd: &Path, config: &Config, options: &Options) -> Result<Proven, GateError> {
    let started = Instant::now();
    let deadline = options.budget.map(|b| started + b);
    let ledger_path = InputPath::from_cli_or_config(
        cwd,
        options.ledger.as_deref(),
        &config.ledger,
        &config.repo_root,
    );
    let mut ledger = Ledger::load(&ledger_path.path, &ledger_path.name)?;
    if let Some(base) = crate::gate::base_ledger(
        cwd,
        config,
        options.base_ledger.as_deref(),
        options.base.as_deref(),
        &ledger,
    )? {
        ledger.compare_with(base.as_ref());
    }
    let coverage = Coverage::load(
        &options
            .coverage
            .iter()
            .map(|p| InputPath::from_cli(cwd, p, &config.repo_root))
            .collect::<Vec<_>>(),
    )?;
    let Workshop {
        scratch,
        driver,
        engine,
        runner,
    } = Workshop::new(config, &options.python)?;
    let pytest_root = config.pytest_root_in_repo();
    // The tests the patch removed, proven from their files as the base had them.
    let rev = options
        .base
        .as_deref()
        .map(|b| crate::git::merge_base(b, &config.repo_root).unwrap_or_else(|| b.to_string()));
    let test_files = match &rev {
        Some(rev) => removed::changed_test_files(&config.repo_root, rev)?,
        None => Vec::new(),
    };
    // Not "the rest of the suite": every frozen test, every deposit and every removed test.
    let left_out: Vec<String> = ledger
        .entries
        .iter()
        .flat_map(|e| e.test_id().into_iter().chain(e.properties()))
        .filter(|id| !id.is_empty())
        .map(str::to_string)
        .chain(test_files.iter().flat_map(|f| f.removed_ids(&pytest_root)))
        .collect();
    let mut freezes = Vec::new();
    let mut timings = Vec::new();
    for target in targets(&ledger, options.all, &test_files, &pytest_root) {
        let begun = Instant::now();
        let mut left_out = left_out.clone();
        left_out.extend(target.not_the_suite.iter().cloned());
        let written = match &target.scratch {
            Some((file, text)) => {
                scratch.write(file, text)?;
                Some(file.clone())
            }
            None => {
                base_version_of_frozen(&target.test_id, &scratch, config, options, &pytest_root)?
            }
        };
        let proven = prove_one(
            target.proof(written.is_some()),
            &runner,
            &driver,
            &scratch,
            &pytest_root,
            coverage.as_ref(),
            &left_out,
            options,
            deadline,
        );
        if let Some(file) = &written {
            scratch.restore(file)?;
        }
        let (freeze, mutants) = match proven {
            // A test the patch removed or edited that the proof cannot run (it was
            // skipped, its fixtures are gone) is an unfinished proof of it, not the end
            // of every other proof.
            Err(e) if target.kind != Kind::Freeze => {
                (unproven(&target, &e.message), Duration::ZERO)
            }
            other => other?,
        };
        timings.push(Timing {
            total: begun.elapsed(),
            mutants,
        });
        freezes.push(freeze);
    }
    let commit = tools::head_commit(&config.repo_root);
    let dirty = commit.is_some() && tools::is_dirty(&config.repo_root);
    let record = ProofRecord {
        version: proof::VERSION,
        kind: proof::KIND.to_string(),
        commit,
        dirty,
        ledger: ledger.source.name.clone(),
        ledger_sha256: ledger.sha256(),
        engine: proof::Engine {
            name: engine.engine,
            version: engine.version,
        },
        complete: freezes.iter().all(|f| f.incomplete.is_none()),
        shard: options.shard.map(|(i, n)| [i, n]),
        freezes,
    };
    Ok(Proven { record, timings })
}

/// Where prove runs tests: a scratch copy of the tree, the driver and the engine it
/// found in the project's Python, and the runner of pytest in the copy.
struct Workshop {
    scratch: scratch::Scratch,
    driver: Driver,
    engine: engine::EngineVersion,
    runner: Runner,
}

impl Workshop {
    fn new(config: &Config, python: &Path) -> Result<Workshop, GateError> {
        interrupt::install();
        let scratch = scratch::Scratch::copy(&config.repo_root)?;
        let work = scratch.work_dir();
        let driver = Driver::new(python.to_path_buf(), &work)?;
        let engine = driver.version(&scratch.root)?;
        let canonical = |path: &Path| path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let runner = Runner {
            python: python.to_path_buf(),
            driver_dir: work.clone(),
            cwd: scratch.root.join(config.pytest_root_in_repo()),
            work: work.clone(),
            extra: match engine.xdist {
                true => vec!["-n".into(), "0".into()],
                false => Vec::new(),
            },
            server_extra: match engine.cov {
                true => vec!["--no-cov".into()],
                false => Vec::new(),
            },
            source: canonical(&config.repo_root),
            copy: canonical(&scratch.root),
        };
        Ok(Workshop {
            scratch,
            driver,
            engine,
            runner,
        })
    }
}

/// What the frozen test runs alone on this commit's code, its freeze lifted, without a
/// proof (for `brief`): the project functions its call phase ran, and how it did
/// (`passed`, `failed` every run, `flaky`).
pub fn code_at_stake(
    config: &Config,
    python: &Path,
    test_id: &str,
) -> Result<(Vec<StakeFunction>, String), GateError> {
    // The copy lives as long as the bindings: `..` would drop (and delete) it at once.
    let Workshop {
        scratch: _copy,
        driver,
        runner,
        ..
    } = Workshop::new(config, python)?;
    let (outcome, ran) = run_frozen_alone(&runner, &driver, test_id)?;
    let pytest_root = config.pytest_root_in_repo();
    let stake = project_functions(ran, test_id, &[])?
        .into_iter()
        .map(|function| StakeFunction {
            file: in_repo(&pytest_root, &function.file),
            function: function.function,
            lines: [function.start, function.end],
            covered: function.lines,
            mutants: None,
            engine: None,
            unmutated: None,
        })
        .collect();
    Ok((stake, outcome))
}

/// The frozen test run alone on the unmutated code: how it did (`passed`; `failed`
/// every time of [`ALONE_RUNS`], derandomized; or `flaky`) and what its call phase ran.
/// Exit 2 when it cannot run alone (its setup fails, it is skipped).
fn run_frozen_alone(
    runner: &Runner,
    driver: &Driver,
    test_id: &str,
) -> Result<(String, engine::CallPhase), GateError> {
    let id = test_id.to_string();
    let alone = measure::run_alone(runner, std::slice::from_ref(&id), CLEAN_TIMEOUT)?;
    let mut outcome = match alone.run.verdicts.get(test_id) {
        Some(Verdict::Passed) => "passed",
        Some(Verdict::Checked | Verdict::Failed) => "failed",
        Some(Verdict::Error) => {
            return Err(GateError::usage(format!(
                "prove: {test_id} cannot run alone: its setup failed (a missing fixture?):\n{}",
                alone.run.output
            ))
            .with_help("a frozen test must run alone (`FREEZEGATE_PLUGIN_OFF=1 pytest TEST_ID`): fix its fixtures, or freeze the test that needs them together"))
        }
        Some(Verdict::Skipped) | None => {
            return Err(GateError::usage(format!(
                "prove: {test_id} was skipped when run alone with its freeze lifted:\n{}",
                alone.run.output
            ))
            .with_help("a frozen test must run alone (`FREEZEGATE_PLUGIN_OFF=1 pytest TEST_ID`); a skip in its code or a missing optional dependency leaves nothing to prove"))
        }
    }
    .to_string();
    let ran = alone.call_phase(driver, runner, test_id)?;
    // One failure alone may be a flake: it fails every time of ALONE_RUNS
    // (derandomized), or it is "flaky" (its kills unknown either way; FZ213 refuses a
    // freeze of a test that fails every time alone and passed at base).
    if outcome == "failed" {
        for _ in 1..ALONE_RUNS {
            let again = measure::run_alone(runner, std::slice::from_ref(&id), CLEAN_TIMEOUT)?;
            if again.run.verdicts.get(test_id) == Some(&Verdict::Passed) {
                outcome = "flaky".into();
                break;
            }
        }
    }
    Ok((outcome, ran))
}

/// The project's functions a run of `test_id` executed (not its test files' nor the
/// properties'); exit 2 when it ran none.
fn project_functions(
    ran: engine::CallPhase,
    test_id: &str,
    properties: &[String],
) -> Result<Vec<engine::Executed>, GateError> {
    let test_files: BTreeSet<String> = std::iter::once(test_id)
        .chain(properties.iter().map(String::as_str))
        .map(|id| crate::inputs::ids::file_of(id).to_string())
        .collect();
    let project: Vec<engine::Executed> = ran
        .functions
        .into_iter()
        .filter(|f| is_project_code(&f.file, &test_files))
        .collect();
    if project.is_empty() {
        return Err(nothing_measured(test_id, &ran.files, &test_files));
    }
    Ok(project)
}

/// Puts the frozen test's definition back in the scratch copy as it was at `--base`
/// when the patch changed it, so the proof judges what the base checked; the test
/// file's path in the repository when it did (to restore after this freeze).
fn base_version_of_frozen(
    test_id: &str,
    scratch: &scratch::Scratch,
    config: &Config,
    options: &Options,
    pytest_root: &str,
) -> Result<Option<String>, GateError> {
    let Some(base) = options.base.as_deref() else {
        return Ok(None);
    };
    let suite_file = crate::inputs::ids::file_of(test_id);
    let file = in_repo(pytest_root, suite_file);
    let Some(at_base) = tools::file_at(&config.repo_root, base, &file) else {
        return Ok(None); // a test the patch adds (or moves): there is no base version
    };
    let copy = scratch.root.join(&file);
    let Ok(in_patch) = std::fs::read_to_string(&copy) else {
        return Ok(None);
    };
    let test = crate::inputs::ids::strip_params(test_id)
        .split_once("::")
        .map_or("", |(_, name)| name);
    match crate::inputs::weakened::with_base_version(suite_file, &at_base, &in_patch, test) {
        Ok(None) => Ok(None),
        Ok(Some(text)) => {
            std::fs::write(&copy, text).map_err(|e| GateError::io(&file, e))?;
            Ok(Some(file))
        }
        Err(why) => Err(GateError::usage(format!(
            "prove: cannot take {test_id} as it was at {base}: {file}: {why}"
        ))
        .with_help("the proof judges the frozen test as the base had it (the patch may have changed it): fix the file, or give a --base whose version of it parses")),
    }
}

/// The error for a frozen test whose call phase ran no function of the project: a proof
/// of it would be a proof of nothing.
fn nothing_measured(test_id: &str, files: &[String], test_files: &BTreeSet<String>) -> GateError {
    const SHOWN: usize = 5;
    let (tests, others): (Vec<&String>, Vec<&String>) =
        files.iter().filter(|f| f.ends_with(".py")).partition(|f| {
            !f.starts_with('/') && !f.starts_with("..") && !is_project_code(f, test_files)
        });
    let cause = match (tests.is_empty(), others.is_empty()) {
        (true, true) => "it ran no Python code of any file in its call phase".to_string(),
        _ => {
            let named: Vec<&str> = tests
                .iter()
                .chain(others.iter())
                .map(|f| f.as_ref())
                .collect();
            format!(
                "its call phase ran only test code and code outside the copy of the repository: {}",
                crate::words::join_and_more(&named, tests.len() + SHOWN)
            )
        }
    };
    GateError::usage(format!(
        "prove: no code at stake measured for {test_id}: {cause}; a proof would prove nothing"
    ))
    .with_help(
        "a test that runs no function of the project guards none: deleting it is the honest \
         option; if it does call the project, its code was imported from outside the \
         repository: an installed copy in site-packages, or another checkout an editable \
         install points at (a git worktree's main tree): install this checkout editable \
         (`pip install -e .`) or put its source first on PYTHONPATH",
    )
}

/// Joins a path relative to pytest's rootdir onto the repository root's terms.
fn in_repo(pytest_root: &str, path: &str) -> String {
    if pytest_root.is_empty() {
        path.to_string()
    } else {
        format!("{}/{path}", pytest_root.trim_end_matches('/'))
    }
}

/// Whether a file a run executed is the project's code, not test code (a test module, a
/// conftest, a helper in a `tests/` directory such as bidict's `bidict_test_fixtures.py`)
/// nor someone else's (anything in a virtualenv or a hidden directory).
fn is_project_code(file: &str, test_files: &BTreeSet<String>) -> bool {
    let (dirs, name) = file.rsplit_once('/').unwrap_or(("", file));
    let outside = file.starts_with('/') || file.starts_with("..");
    let tooling = file.split('/').any(|part| {
        part == "site-packages" || part == "venv" || (part.starts_with('.') && part.len() > 1)
    });
    let in_tests = dirs
        .split('/')
        .any(|dir| matches!(dir, "tests" | "test" | "testing"));
    let test = in_tests
        || name.starts_with("test_")
        || name.ends_with("_test.py")
        || name == "conftest.py";
    file.ends_with(".py") && !outside && !tooling && !test && !test_files.contains(file)
}

#[allow(clippy::too_many_arguments)]
fn prove_one(
    mut freeze: FreezeProof,
    runner: &Runner,
    driver: &Driver,
    scratch: &scratch::Scratch,
    pytest_root: &str,
    coverage: Option<&Coverage>,
    left_out: &[String],
    options: &Options,
    deadline: Option<Instant>,
) -> Result<(FreezeProof, Duration), GateError> {
    let test_id = freeze.test_id.clone();
    let properties = freeze.properties.clone();
    if deadline.is_some_and(|d| Instant::now() >= d) {
        freeze.incomplete = Some("the budget was spent before this freeze".into());
        return Ok((freeze, Duration::ZERO));
    }
    // The code at stake: what the frozen test runs alone, in its call phase.
    let (outcome, ran) = run_frozen_alone(runner, driver, &test_id)?;
    freeze.frozen_clean = outcome;
    let unique: Option<BTreeSet<(String, u32)>> = coverage.map(|c| {
        c.unique_lines_of(&test_id)
            .into_iter()
            .map(|(file, line)| (file.trim_start_matches("./").to_string(), line))
            .collect()
    });
    let project = project_functions(ran, &test_id, &properties)?;
    let mut lines: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for function in project {
        let repo_file = in_repo(pytest_root, &function.file);
        let covered: Vec<u32> = match &unique {
            // Narrowed to the lines only the frozen test covers.
            Some(unique) => function
                .lines
                .iter()
                .copied()
                .filter(|line| {
                    unique.contains(&(function.file.clone(), *line))
                        || unique.contains(&(repo_file.clone(), *line))
                })
                .collect(),
            None => function.lines.clone(),
        };
        if covered.is_empty() {
            continue;
        }
        lines
            .entry(function.file.clone())
            .or_default()
            .extend(&covered);
        freeze.stake.push(StakeFunction {
            file: repo_file,
            function: function.function,
            lines: [function.start, function.end],
            covered,
            mutants: None,
            engine: None,
            unmutated: None,
        });
    }
    let made = if lines.is_empty() {
        Vec::new()
    } else {
        let mutated = driver.mutate(&lines, &runner.cwd)?;
        for function in mutated.functions {
            let file = in_repo(pytest_root, &function.file);
            if let Some(stake) = freeze
                .stake
                .iter_mut()
                .find(|s| s.file == file && s.lines[0] == function.start)
            {
                stake.mutants = Some(function.mutants);
                stake.engine = function.engine;
                stake.unmutated = function.reason;
            }
        }
        mutated.mutants
    };
    let result = run_mutants(
        &mut freeze,
        made,
        runner,
        driver,
        left_out,
        options,
        deadline,
        pytest_root,
    );
    for file in lines.keys() {
        scratch.restore(&in_repo(pytest_root, file))?;
    }
    Ok((freeze, result?))
}

#[allow(clippy::too_many_arguments)]
fn run_mutants(
    freeze: &mut FreezeProof,
    mut made: Vec<engine::Made>,
    runner: &Runner,
    driver: &Driver,
    left_out: &[String],
    options: &Options,
    deadline: Option<Instant>,
    pytest_root: &str,
) -> Result<Duration, GateError> {
    made.sort_by(|a, b| a.id.cmp(&b.id));
    freeze.mutants_total = made.len() as u64;
    if let Some((index, count)) = options.shard {
        made = made
            .into_iter()
            .enumerate()
            .filter(|(i, _)| *i as u32 % count == index - 1)
            .map(|(_, m)| m)
            .collect();
    }
    if let Some(max) = options.max_mutants {
        if made.len() > max {
            freeze.incomplete = Some(format!(
                "--max-mutants {max} of {} in this shard",
                made.len()
            ));
            made.truncate(max);
        }
    }
    let mut tests = vec![freeze.test_id.clone()];
    tests.extend(freeze.properties.iter().cloned());
    // One warm server per worker (all warming up at once), on the mutated files.
    let jobs = options.jobs.clamp(1, made.len().max(1));
    let mut servers = (0..jobs)
        .map(|slot| ForkServer::start(driver, runner, &tests, slot))
        .collect::<Result<Vec<_>, _>>()?;
    // Every test on the unmutated code: the properties' own outcome there, and how long
    // a run takes (the limit for a mutant's run).
    let clean = runner.run(
        "",
        &tests,
        CLEAN_TIMEOUT,
        0,
        &mut Via::Server(&mut servers[0]),
    )?;
    for p in &freeze.properties {
        let outcome = match clean.verdicts.get(p) {
            Some(Verdict::Passed) => "passed",
            Some(Verdict::Checked | Verdict::Failed) => "failed",
            Some(Verdict::Error) => "error",
            _ => "skipped",
        };
        freeze
            .properties_clean
            .insert(p.clone(), outcome.to_string());
    }
    // Where the mutated functions also ran, unmutated: at import (the warm-up) and in
    // the tests' fixtures (the unmutated run).
    let mut outside_call = clean.outside_call.clone();
    if let Some(imported) = servers[0].imported() {
        outside_call
            .entry("import".to_string())
            .or_default()
            .extend(imported.iter().cloned());
    }
    let limit = (clean.duration * TIMEOUT_FACTOR).max(MIN_TIMEOUT);
    // The frozen test alone (without its properties' examples) runs far quicker: its own
    // unmutated run bounds its runs on the mutants.
    let frozen_known = freeze.frozen_clean == "passed";
    let (alone_limit, first_runner) = match frozen_known {
        true => {
            let alone = runner.run(
                "",
                std::slice::from_ref(&freeze.test_id),
                CLEAN_TIMEOUT,
                0,
                &mut Via::Server(&mut servers[0]),
            )?;
            let limits = BTreeMap::from([(
                freeze.test_id.clone(),
                call_limit(alone.duration.as_secs_f64()),
            )]);
            (
                (alone.duration.max(SESSION_START) * TIMEOUT_FACTOR).clamp(MIN_RUN_TIMEOUT, limit),
                stopping_calls(runner, &limits, "alone")?,
            )
        }
        false => (limit, runner.clone()),
    };
    // A frozen test that passes alone is judged by its unique kills: it runs alone on
    // every mutant, the rest of the suite on its kills, and the properties only on what
    // is left (on a slow deposit, a state machine, most of a proof's time). One that
    // fails alone has unknown kills: the properties run on every mutant beside it.
    let first: Vec<String> = match frozen_known {
        true => vec![freeze.test_id.clone()],
        false => tests.clone(),
    };
    let runs: Vec<(String, Vec<String>)> =
        made.iter().map(|m| (m.id.clone(), first.clone())).collect();
    let bar = options.progress.then(|| {
        let bar = indicatif::ProgressBar::new(runs.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} mutants {elapsed}",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        );
        bar.set_prefix(freeze.test_id.clone());
        bar
    });
    let tick = || {
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    };
    // Off a terminal (a CI log) each phase says it starts, so a long proof shows where
    // it is.
    let test_id = freeze.test_id.clone();
    let phase = move |what: String| {
        if !options.progress {
            eprintln!("freezegate prove: {test_id}: {what}");
        }
    };
    phase(format!(
        "{} on each of {} ({} at a time, each stopped after {} s)",
        if frozen_known {
            "the frozen test runs alone"
        } else {
            "the frozen test and its properties run"
        },
        crate::words::count_of(runs.len(), "mutant"),
        servers.len(),
        alone_limit.as_secs()
    ));
    let begun = Instant::now();
    let result = pool::run_all(
        &first_runner,
        &mut servers,
        &runs,
        &|_| alone_limit,
        deadline,
        &tick,
    )?;
    let mut took = begun.elapsed();
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    for (m, run) in made.into_iter().zip(result.runs) {
        let Some(run) = run else { continue };
        let unmutated_at = outside_call
            .iter()
            .filter(|(_, functions)| functions.iter().any(|f| is_mutant_of(&m.id, f)))
            .map(|(phase, _)| phase.clone())
            .collect();
        let mut mutant = Mutant {
            killed_by_frozen: frozen_known.then(|| run.kills(&freeze.test_id)),
            checked_by_frozen: frozen_known.then(|| run.checks(&freeze.test_id)),
            killed_by_others: None,
            killed_by: Vec::new(),
            checked_by: None,
            properties_not_run: frozen_known,
            duration_s: 0.0,
            id: m.id,
            file: in_repo(pytest_root, &m.file),
            line: m.line,
            function: m.function,
            mutation: m.mutation,
            unmutated_at,
        };
        if !frozen_known {
            properties_verdicts(freeze, &mut mutant, &run);
        }
        mutant.duration_s = run.duration.as_secs_f64();
        freeze.mutants.push(mutant);
    }
    let others_cut = !result.budget_hit
        && killed_by_others(
            freeze,
            runner,
            driver,
            &mut servers,
            left_out,
            limit,
            deadline,
            &phase,
        )?;
    let mut deposits_cut = false;
    if frozen_known && !result.budget_hit && !others_cut && !freeze.properties.is_empty() {
        // An edited test's one "property" is its patched version.
        let deposit = if freeze.edited {
            "the patch's version runs"
        } else {
            "its properties run"
        };
        phase(format!(
                "{deposit} on its unique kills ({})",
                crate::words::count_of(
                    freeze
                        .mutants
                        .iter()
                        .filter(|m| m.killed_by_frozen == Some(true)
                            && m.killed_by_others != Some(true))
                        .count(),
                    "mutant"
                )
            ));
        let begun = Instant::now();
        deposits_cut = properties_on_unique_kills(freeze, runner, &mut servers, limit, deadline)?;
        took += begun.elapsed();
    }
    for mutant in &mut freeze.mutants {
        mutant.duration_s = (mutant.duration_s * 1000.0).round() / 1000.0;
    }
    if result.budget_hit || others_cut || deposits_cut {
        let total = freeze.mutants.len();
        freeze.incomplete = Some(format!(
            "the budget ({} s) ran out after {total} mutants",
            options.budget.map_or(0, |b| b.as_secs())
        ));
    }
    Ok(took)
}

/// The properties' verdicts on a mutant from `run` (a property that fails on the
/// unmutated code kills nothing).
fn properties_verdicts(freeze: &FreezeProof, mutant: &mut Mutant, run: &pool::TestRun) {
    let killed_by: Vec<String> = freeze
        .properties
        .iter()
        .filter(|p| freeze.properties_clean.get(*p).map(String::as_str) == Some("passed"))
        .filter(|p| run.kills(p))
        .cloned()
        .collect();
    mutant.checked_by = Some(
        killed_by
            .iter()
            .filter(|p| run.checks(p))
            .cloned()
            .collect(),
    );
    mutant.killed_by = killed_by;
    mutant.properties_not_run = false;
}

/// The properties run on the frozen test's unique kills (killed by it, by no other
/// test of the suite, or not asked): the mutants a judgement counts. True when the
/// budget ran out first.
fn properties_on_unique_kills(
    freeze: &mut FreezeProof,
    runner: &Runner,
    servers: &mut [ForkServer],
    limit: Duration,
    deadline: Option<Instant>,
) -> Result<bool, GateError> {
    let unique: Vec<usize> = (0..freeze.mutants.len())
        .filter(|&i| {
            let m = &freeze.mutants[i];
            m.killed_by_frozen == Some(true) && m.killed_by_others != Some(true)
        })
        .collect();
    let runs: Vec<(String, Vec<String>)> = unique
        .iter()
        .map(|&i| (freeze.mutants[i].id.clone(), freeze.properties.clone()))
        .collect();
    let result = pool::run_all(runner, servers, &runs, &|_| limit, deadline, &|| {})?;
    for (i, run) in unique.into_iter().zip(result.runs) {
        if let Some(run) = run {
            let mut mutant = freeze.mutants[i].clone();
            properties_verdicts(freeze, &mut mutant, &run);
            mutant.duration_s += run.duration.as_secs_f64();
            freeze.mutants[i] = mutant;
        }
    }
    Ok(result.budget_hit)
}

/// Which of the frozen test's kills the rest of the suite kills too (what is left is its
/// unique coverage): the suite run once on the unmutated code, recording which tests run
/// each mutated function in their call phase, then each mutant the frozen test kills
/// run with those tests alone, the first kill ending the run (as mutmut's own runner
/// does). The frozen tests, the deposits and the tests that fail on the unmutated code
/// are not the rest of the suite. True when the budget ran out first.
#[allow(clippy::too_many_arguments)]
fn killed_by_others(
    freeze: &mut FreezeProof,
    runner: &Runner,
    driver: &Driver,
    servers: &mut [ForkServer],
    left_out: &[String],
    limit: Duration,
    deadline: Option<Instant>,
    phase: &dyn Fn(String),
) -> Result<bool, GateError> {
    let killed: Vec<usize> = (0..freeze.mutants.len())
        .filter(|i| freeze.mutants[*i].killed_by_frozen == Some(true))
        .collect();
    if killed.is_empty() {
        return Ok(false);
    }
    phase(format!(
        "it kills {}; the rest of the suite runs once, to find the other tests that run them",
        crate::words::count_of(killed.len(), "mutant")
    ));
    let suite_limit = deadline.map_or(SUITE_TIMEOUT, |d| {
        SUITE_TIMEOUT.min(d.saturating_duration_since(Instant::now()))
    });
    let suite = runner.run_suite(&mut servers[0], suite_limit)?;
    let others: Vec<(&String, &Vec<String>)> = suite
        .hits
        .iter()
        .filter(|(id, _)| suite.passed.contains(*id))
        .filter(|(id, _)| !left_out.iter().any(|out| pool::covers(out, id)))
        .collect();
    freeze.others = others.len() as u64;
    // The cheapest tests first: a quick test of the function alone is the likeliest
    // first kill, and a run that kills early stops early.
    let cost = |id: &str| {
        (
            suite.durations.get(id).copied().unwrap_or(f64::MAX),
            suite.hits.get(id).map_or(usize::MAX, Vec::len),
        )
    };
    let mut runs = Vec::new();
    let mut asked = Vec::new();
    for i in killed {
        let mutant = &mut freeze.mutants[i];
        let mut tests: Vec<String> = others
            .iter()
            .filter(|(_, ran)| ran.iter().any(|f| is_mutant_of(&mutant.id, f)))
            .map(|(id, _)| id.to_string())
            .collect();
        tests.sort_by(|a, b| {
            let (a_cost, b_cost) = (cost(a), cost(b));
            a_cost
                .0
                .total_cmp(&b_cost.0)
                .then(a_cost.1.cmp(&b_cost.1))
                .then(a.cmp(b))
        });
        if tests.is_empty() {
            mutant.killed_by_others = Some(false);
        } else {
            runs.push((mutant.id.clone(), tests));
            asked.push(i);
        }
    }
    phase(format!(
        "the other tests that reach them run on each of {} (each run stops at its first kill)",
        crate::words::count_of(runs.len(), "kill")
    ));
    // Each test's call phase is stopped in the test process after ten times its own
    // unmutated call: a loop in the first test ends the run at once; the run's limit
    // (below) is for a process that does not answer.
    let call_limits: BTreeMap<String, f64> = suite
        .durations
        .iter()
        .map(|(id, took)| (id.clone(), call_limit(*took)))
        .collect();
    let mut first_kill = stopping_calls(runner, &call_limits, "others")?;
    first_kill.extra.push("-x".into());
    // A run's limit: ten times what its tests took on the unmutated code (each test's
    // call, and its share of the suite's setup, teardown and collection), at least
    // MIN_RUN_TIMEOUT, at most twice the whole suite. Too short a limit would count a
    // slow run as a kill by the other tests, and take a unique kill away: the factor is
    // wide.
    let limit = limit.max(suite.duration * 2);
    let called: f64 = suite.durations.values().sum();
    let reported = suite.durations.len().max(1) as f64;
    let per_test = (suite.duration.as_secs_f64() - called).max(0.0) / reported;
    let run_limit = |tests: &[String]| {
        let took: f64 = tests
            .iter()
            .map(|t| {
                suite
                    .durations
                    .get(t)
                    .copied()
                    .unwrap_or(suite.duration.as_secs_f64())
                    + per_test
            })
            .sum();
        (Duration::from_secs_f64(took).max(SESSION_START) * TIMEOUT_FACTOR)
            .clamp(MIN_RUN_TIMEOUT, limit)
    };
    // In two waves: one mutant of each function, then the rest, each with the test that
    // killed its function's first mutant run first (the same check often kills them all).
    let mut functions = BTreeSet::new();
    let (first, rest): (Vec<usize>, Vec<usize>) =
        (0..runs.len()).partition(|&k| functions.insert(function_of(&runs[k].0)));
    // Servers warmed on the other tests' modules: a run forked from them does not import
    // its tests' modules again (a quarter of a second a run on pyrsistent).
    let modules: BTreeSet<&str> = runs
        .iter()
        .flat_map(|(_, tests)| tests.iter().map(|t| crate::inputs::ids::file_of(t)))
        .collect();
    let modules: Vec<String> = modules.into_iter().map(String::from).collect();
    let mut warmed = (0..servers.len())
        .map(|slot| ForkServer::start(driver, runner, &modules, servers.len() + slot))
        .collect::<Result<Vec<_>, _>>()?;
    let mut killers: BTreeMap<&str, String> = BTreeMap::new();
    let mut budget_hit = false;
    for wave in [first, rest] {
        if budget_hit || wave.is_empty() {
            continue;
        }
        let wave_runs: Vec<(String, Vec<String>)> = wave
            .iter()
            .map(|&k| {
                let (id, tests) = &runs[k];
                let mut tests = tests.clone();
                let killer = killers.get(function_of(id));
                if let Some(at) = killer.and_then(|killer| tests.iter().position(|t| t == killer)) {
                    let killer = tests.remove(at);
                    tests.insert(0, killer);
                }
                (id.clone(), tests)
            })
            .collect();
        let result = pool::run_all(
            &first_kill,
            &mut warmed,
            &wave_runs,
            &run_limit,
            deadline,
            &|| {},
        )?;
        budget_hit |= result.budget_hit;
        for (&k, run) in wave.iter().zip(result.runs) {
            let Some(run) = run else { continue };
            let killer = run.verdicts.iter().find(|(_, v)| v.kills());
            freeze.mutants[asked[k]].killed_by_others = Some(killer.is_some());
            if let Some((killer, _)) = killer {
                killers
                    .entry(function_of(&runs[k].0))
                    .or_insert_with(|| killer.clone());
            }
        }
    }
    Ok(budget_hit)
}

/// A test's call-phase limit in seconds, from its unmutated time: ten times it, at least
/// [`MIN_CALL_TIMEOUT`].
fn call_limit(took: f64) -> f64 {
    let limit = (took * f64::from(TIMEOUT_FACTOR)).max(MIN_CALL_TIMEOUT.as_secs_f64());
    (limit * 1000.0).round() / 1000.0
}

/// `runner` with each test's call phase stopped inside the test process after its limit
/// (`limits`: seconds by node id; the driver raises in the test, which fails as a hang
/// does): a mutant that loops forever costs that test's limit, not the whole run's.
fn stopping_calls(
    runner: &Runner,
    limits: &BTreeMap<String, f64>,
    name: &str,
) -> Result<Runner, GateError> {
    let file = runner.work.join(format!("call_limits-{name}.json"));
    std::fs::write(
        &file,
        serde_json::to_string(limits).expect("a map of numbers"),
    )
    .map_err(|e| GateError::io(&file.display().to_string(), e))?;
    let mut stopping = runner.clone();
    stopping
        .extra
        .push(format!("--freezegate-prove-call-limits={}", file.display()));
    Ok(stopping)
}

/// The function a mutant (`module.x_f__mutmut_3`) is of (`module.x_f`).
fn function_of(id: &str) -> &str {
    id.rsplit_once("__mutmut_")
        .map_or(id, |(function, _)| function)
}

/// Whether mutant `id` (`module.x_f__mutmut_3`) is a mutant of `function`
/// (`module.x_f`, as mutmut's trampoline names the functions it ran).
fn is_mutant_of(id: &str, function: &str) -> bool {
    id.strip_prefix(function)
        .is_some_and(|rest| rest.starts_with("__mutmut_"))
}

#[cfg(test)]
mod tests {
    use super::{is_mutant_of, is_project_code, targets, Kind};
    use crate::document::Format;
    use crate::inputs::ledger::Ledger;
    use crate::inputs::weakened::TestChanges;
    use crate::source::SourceFile;

    #[test]
    fn a_freeze_whose_deposit_the_patch_edits_is_proven_again_not_as_an_edited_test() {
        let text = r#"{"schema": 1, "freezes": [{"test_id": "tests/test_a.py::test_x",
            "reason": "r", "owner": "o", "opened": "2026-11-25", "expires": "2026-12-05",
            "invariant": "i", "compensating_property": "tests/test_p.py::test_p"}]}"#;
        let parse = || Ledger::parse(SourceFile::new("l", "l", text), Format::Json).unwrap();
        let mut ledger = parse();
        ledger.compare_with(Some(&parse()));
        let edited = |name: &str| super::removed::TestFile {
            file: "tests/test_p.py".into(),
            base: format!("def {name}():\n    assert f() == 1\n"),
            head: Some(format!("def {name}():\n    assert f() >= 1\n")),
            kept: true,
            changes: TestChanges {
                removed: Vec::new(),
                changed: vec![(name.to_string(), name.to_string())],
            },
        };
        let proven = |file| {
            targets(&ledger, false, &[file], "")
                .into_iter()
                .map(|t| (t.test_id, t.kind))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            proven(edited("test_p")),
            [("tests/test_a.py::test_x".to_string(), Kind::Freeze)],
            "the deposit is judged again with its freeze, once"
        );
        assert_eq!(
            proven(edited("test_other")),
            [("tests/test_p.py::test_other".to_string(), Kind::Edited)],
            "another edited test is proven as an edit, and the freeze owes nothing"
        );
    }

    #[test]
    fn a_mutant_belongs_to_its_function_only() {
        assert!(is_mutant_of(
            "inventory.x_reserve__mutmut_3",
            "inventory.x_reserve"
        ));
        assert!(!is_mutant_of(
            "inventory.x_reserve_all__mutmut_3",
            "inventory.x_reserve"
        ));
        assert!(!is_mutant_of(
            "inventory.x_reserve__mutmut_3",
            "inventory.x_restock"
        ));
    }
    use std::collections::BTreeSet;

    #[test]
    fn test_code_and_tooling_are_no_code_at_stake() {
        let none = BTreeSet::new();
        assert!(is_project_code("bidict/_base.py", &none));
        assert!(is_project_code("inventory.py", &none));
        assert!(is_project_code("src/pkg/testament.py", &none));
        for file in [
            "tests/bidict_test_fixtures.py",
            "pkg/tests/helpers.py",
            "tests/test_x.py",
            "conftest.py",
            "pkg/x_test.py",
            ".venv/lib/python3.11/site-packages/y.py",
            "/usr/lib/python3.11/z.py",
            "README.md",
        ] {
            assert!(!is_project_code(file, &none), "{file}");
        }
        let test_files = BTreeSet::from(["checks.py".to_string()]);
        assert!(!is_project_code("checks.py", &test_files));
    }
}
