//! The gate pipeline every command runs: config → inputs → engine → report.
//!
//! [`Gate`] is the config with the policy pack compiled for it; [`gather`] loads the
//! facts the command line and config name (each input declared once in
//! the inputs' registry, [`crate::inputs::INPUTS`]); [`judge`] runs the selected rules over them and builds
//! the [`Report`]. Commands (`check`, `freeze`, `stats`, `test`, `baseline`) only choose
//! their inputs and render the outcome.

mod gather;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::cli::CheckArgs;
use crate::config::{trust, FileTree};
use crate::engine::Target;

use crate::config::{Config, PolicySpec};
use crate::engine::policy::{self, PackCache, PolicyDirResolver};
use crate::engine::selection::Selection;
use crate::engine::{RawReport, ScriptEngine};
use crate::error::GateError;
use crate::inputs::ids::IdSet;
use crate::inputs::ledger::Ledger;
use crate::inputs::samples::Samples;
use crate::inputs::Facts;
use crate::report::Report;

pub use crate::inputs::loading::{Loading, Plan, Size};
pub use gather::{base_ledger, gather, start_loading, Gathering};
pub use policy::Pack;

/// What `check` concluded, before it is rendered.
pub struct Checked {
    pub gate: Gate,
    /// The ledger only: the other inputs are given back before the reports render.
    pub facts: Facts,
    pub evaluation: crate::engine::Evaluation,
    pub report: Report,
    pub timings: Timings,
}

/// When each stage of a check ended (`--verbose`).
pub struct Timings {
    pub started: Instant,
    pub configured: Instant,
    pub started_loading: Instant,
    pub compiled: Instant,
    pub gathered: Instant,
    pub judged: Instant,
    /// Whether inputs loaded on threads.
    pub threaded: bool,
}

impl Timings {
    /// The `--verbose` line of how long each stage took, up to `now`.
    pub fn print(&self, now: Instant) {
        let inputs_phase = match self.threaded {
            true => "inputs started",
            false => "inputs",
        };
        let ms = |from: Instant, to: Instant| (to - from).as_secs_f64() * 1000.0;
        eprintln!(
            "timing: config {:.1} ms, {inputs_phase} {:.1} ms, policies {:.1} ms, ledger {:.1} ms, rules {:.1} ms, output {:.1} ms",
            ms(self.started, self.configured),
            ms(self.configured, self.started_loading),
            ms(self.started_loading, self.compiled),
            ms(self.compiled, self.gathered),
            ms(self.gathered, self.judged),
            ms(self.judged, now)
        );
        eprintln!("checked in {:.1} ms", ms(self.started, now));
    }
}

/// The whole gate on what the command line and config name: the config (from the
/// trusted ref under `--trusted-ref`), the inputs loading while the pack compiles, the
/// rules, and the report; exit 2 (an error) when no selected rule could run.
pub fn check(
    cwd: &Path,
    config_path: Option<&Path>,
    args: &CheckArgs,
) -> Result<Checked, GateError> {
    let started = Instant::now();
    let (config, tree) = trusted_config(cwd, config_path, args.trusted_ref.as_deref())?;
    let trusted = args.trusted_ref.as_ref().zip(tree);
    let configured = Instant::now();
    let implied = implied_base(&config, &args.facts);
    let fact_args = match &implied {
        Some(_) => std::borrow::Cow::Owned(crate::inputs::FactArgs {
            base: Some("HEAD".into()),
            ..args.facts.clone()
        }),
        None => std::borrow::Cow::Borrowed(&args.facts),
    };
    let fact_args = fact_args.as_ref();
    // Large inputs start loading on threads of their own, then the pack compiles; small
    // inputs load right here (threads cost more than they save on a few milliseconds).
    let gathering = start_loading(cwd, &config, fact_args)?;
    let started_loading = Instant::now();
    let mut gate = Gate::with_config(config)?;
    if let Some((rev, tree)) = &trusted {
        for file in trust::modified_files(cwd, config_path, &gate.config, tree) {
            gate.core_reports.push(RawReport {
                code: policy::GATE_MODIFIED.into(),
                message: file.message(rev),
                script: crate::engine::policy::CORE_POLICY.into(),
                target: Target::None,
                test_id: None,
                test_ids: Vec::new(),
            });
        }
    }
    let selection = Selection::new(&gate.pack, &gate.config, &args.select, &args.ignore)?;
    if args.facts.verbose {
        match &gate.config.source {
            Some(source) => eprintln!("config: {}", source.name),
            None => eprintln!("config: none found, using defaults"),
        }
        eprintln!(
            "policies: {} scripts, {} rules enabled",
            gate.pack.scripts.len(),
            selection.count()
        );
    }
    let compiled = Instant::now();
    let (mut facts, loading) = gathering
        .with_ledger(cwd, &gate.config, fact_args)
        .map_err(|e| match (&args.trusted_ref, e.kind()) {
            // The path is the trusted config's, not the patch's: say so, or a patch that
            // moved its ledger reads as one that lost it.
            (Some(rev), crate::error::Kind::Missing) if args.facts.ledger.is_none() => {
                let config = gate
                    .config
                    .source
                    .as_ref()
                    .map_or("the defaults".to_string(), |s| s.name.clone());
                e.with_help(format!(
                    "the ledger's path comes from the config at --trusted-ref {rev} ({config}), as every gate setting does: a patch that moves the ledger keeps it at that path until the move lands on the base branch"
                ))
            }
            _ => e,
        })?;
    facts.trusted_ref = args.trusted_ref.clone();
    if trusted.is_none() && selection.is_enabled(policy::UNGUARDED_GATE) {
        if let Some(changed) = facts.loaded.changed.get() {
            let base = fact_args.base.as_deref();
            for (file, what) in trust::unguarded_changes(&gate.config, changed, base) {
                gate.core_reports.push(RawReport {
                    code: policy::UNGUARDED_GATE.into(),
                    message: format!(
                        "the patch changes {file} (the gate's {what}) and this check has no --trusted-ref: the patch was judged by its own version"
                    ),
                    script: policy::CORE_POLICY.into(),
                    target: Target::None,
                    test_id: None,
                    test_ids: Vec::new(),
                });
            }
        }
    }
    let threaded = loading.is_threaded();
    let gathered = Instant::now();
    let judged = judge(&gate, &facts, &selection);
    // An input that failed to load is the error, whatever the rules made of its absence.
    loading.finish()?;
    let (evaluation, mut report) = judged?;
    // A record read from a file is what the file says now, whatever wrote it last.
    let from_files = facts.loaded.runs.get().map(|runs| {
        runs.headers
            .iter()
            .map(|h| h.file.clone())
            .filter(|file| {
                fact_args
                    .supervised_run
                    .as_ref()
                    .is_none_or(|s| &s.name != file)
            })
            .collect::<Vec<_>>()
    });
    if let Some(files) = from_files.filter(|files| !files.is_empty()) {
        report.notes.push(crate::engine::Note {
            code: "FZ606".into(),
            message: format!(
                "{} came from a file, not over the pipe of a supervised run: a hook or a process a test started could have rewritten it after pytest exited, and nothing here can tell; run the tests as `freezegate run --check [CHECK ARGS] -- python -m pytest`",
                crate::words::join_and(&files)
            ),
        });
    }
    if let Some(note) = unknown_default_branch(&gate.config, &args.facts, &report) {
        report.notes.push(note);
    }
    if let Some(branch) = implied {
        report.notes.push(crate::engine::Note {
            code: "FZ202".into(),
            message: format!("no --base or --changed was given on {branch}, origin's default branch: judged as the branch itself (its commit against itself, nothing changed; a ledger edit not yet committed is new); on a patch, give --base"),
        });
    }
    require_evaluated(&report, &selection)?;
    // The reports need only the ledger: the other inputs (a million collected ids) are
    // given back before the reports are rendered beside them.
    let facts = facts.into_ledger_only();
    let judged = Instant::now();
    Ok(Checked {
        gate,
        facts,
        evaluation,
        report,
        timings: Timings {
            started,
            configured,
            started_loading,
            compiled,
            gathered,
            judged,
            threaded,
        },
    })
}

/// The config, from the commit `trusted_ref` names (with that commit's tree, which the
/// policies and the skip baseline are read from too) or else from the working tree.
pub fn trusted_config(
    cwd: &Path,
    config_path: Option<&Path>,
    trusted_ref: Option<&str>,
) -> Result<(Config, Option<FileTree>), GateError> {
    match trusted_ref {
        Some(rev) => {
            let tree = FileTree::commit(rev, &crate::config::find_repo_root(cwd))?;
            Ok((Config::discover_in(cwd, config_path, &tree)?, Some(tree)))
        }
        None => Ok((Config::discover(cwd, config_path)?, None)),
    }
}

/// The default branch checked out, when the check names no base (`--base`, `--changed`,
/// `--base-ledger`, `--diff`): the commit is then its own base, its diff empty, so the
/// base branch's own check (its CI, or adoption's first check) needs no base to pass.
fn implied_base(config: &Config, args: &crate::inputs::FactArgs) -> Option<String> {
    match names_base(args) {
        true => None,
        false => crate::inputs::tools::on_default_branch(&config.repo_root),
    }
}

fn names_base(args: &crate::inputs::FactArgs) -> bool {
    args.base.is_some()
        || args.changed.is_some()
        || args.base_ledger.is_some()
        || args.diff.is_some()
}

/// Why a check with no base found none, when FZ001 asks for the patch's changes and git
/// does not know origin's default branch (a clone without `origin`, or one whose
/// `origin/HEAD` was never set): the default branch cannot be recognised, so say how to
/// judge it anyway.
fn unknown_default_branch(
    config: &Config,
    args: &crate::inputs::FactArgs,
    report: &crate::report::Report,
) -> Option<crate::engine::Note> {
    let asks_for_changes = report
        .absent
        .values()
        .any(|inputs| inputs.iter().any(|input| input == "changed"));
    if !asks_for_changes
        || names_base(args)
        || crate::inputs::tools::default_branch(&config.repo_root).is_some()
    {
        return None;
    }
    Some(crate::engine::Note {
        code: crate::engine::policy::INPUT_MISSING.into(),
        message: "no --base was given and git does not know origin's default branch here (no refs/remotes/origin/HEAD), so this branch is not judged as the default one: on the default branch, give --base HEAD (the commit against itself) or run `git remote set-head origin --auto`; on a patch, give --base".into(),
    })
}

/// The loaded policy pack with the engine that compiled it.
pub struct Gate {
    pub config: Config,
    pub engine: ScriptEngine,
    pub pack: Arc<Pack>,
    /// What the core reports on its own (FZ501 under `--trusted-ref`).
    pub core_reports: Vec<RawReport>,
}

impl Gate {
    pub fn load(cwd: &Path, config_path: Option<&Path>) -> Result<Gate, GateError> {
        Self::with_config(Config::discover(cwd, config_path)?)
    }

    pub fn with_config(config: Config) -> Result<Gate, GateError> {
        Self::with_pack_cache(config, &mut PackCache::default())
    }

    /// Like `with_config`, with the compiled scripts taken from `cache` when an earlier
    /// gate compiled the same policies under the same limits (`freezegate test` compiles
    /// the pack once for its hundreds of cases, not once per case).
    pub fn with_pack_cache(config: Config, cache: &mut PackCache) -> Result<Gate, GateError> {
        let resolver = PolicyDirResolver {
            dirs: config
                .policies
                .iter()
                .filter_map(|p| match p {
                    PolicySpec::Dir { path, name } => Some((name.clone(), path.clone())),
                    PolicySpec::Builtin => None,
                })
                .collect(),
            tree: config.tree.clone(),
            sources: Default::default(),
        };
        let mut engine = ScriptEngine::new(
            &config.limits,
            config.pytest_root_in_repo(),
            config.repo_root.clone(),
            resolver,
        );
        engine.set_owners(crate::inputs::owners::Owners::from_config(&config)?);
        let pack = cache.load(engine.engine(), &config)?;
        Ok(Gate {
            config,
            engine,
            pack,
            core_reports: Vec::new(),
        })
    }
}

/// Runs the enabled rules over the facts and resolves what they reported: the one
/// evaluation both `check` (which prints it) and `test` (which compares it with a
/// fixture's expectations) use.
pub fn judge(
    gate: &Gate,
    facts: &Facts,
    selection: &Selection,
) -> Result<(crate::engine::Evaluation, Report), GateError> {
    let mut evaluation =
        gate.engine
            .evaluate(&gate.pack, facts, gate.config.params.as_ref(), selection)?;
    evaluation.reports.extend(gate.core_reports.iter().cloned());
    let mut report = Report::build(
        &evaluation,
        &gate.pack,
        selection,
        &facts.ledger,
        &gate.config,
    );
    if let Some(samples) = facts.loaded.samples.get() {
        report.samples = sample_rows(&facts.ledger, samples);
    }
    report.collected = facts.loaded.collected.get().map(IdSet::len);
    Ok((evaluation, report))
}

/// The sample count of every compensating property the ledger names, and how it was
/// counted, in ledger order.
fn sample_rows(ledger: &Ledger, samples: &Samples) -> Vec<crate::report::SampleRow> {
    let mut rows: Vec<crate::report::SampleRow> = Vec::new();
    let mut seen = rustc_hash::FxHashSet::default();
    for entry in ledger.entries.iter() {
        for property in entry.properties() {
            let Some(count) = samples.properties.get(property) else {
                continue;
            };
            if seen.insert(property) {
                rows.push(crate::report::SampleRow {
                    property: property.to_string(),
                    distinct: count.distinct,
                    method: count.method,
                });
            }
        }
    }
    rows
}

/// A run in which no rule of the selection ran checked nothing: exit 2, never a pass.
fn require_evaluated(report: &Report, selection: &Selection) -> Result<(), GateError> {
    // The selected checks: the pack's rules, and a core rule `--select` named (FZ501);
    // FZ001 and the core rules that only guard the others do not count.
    let checks = || {
        report.rules.iter().filter(|r| {
            r.code != crate::engine::policy::INPUT_MISSING
                && (r.policy != crate::engine::policy::CORE_POLICY
                    || selection.is_named(&r.code) && selection.count() == 0)
        })
    };
    if checks().any(|r| r.evaluated) {
        return Ok(());
    }
    let codes: Vec<&str> = checks().map(|r| r.code.as_str()).collect();
    let missing = report.missing_inputs();
    let why = match missing.is_empty() {
        true => match report.not_evaluated_grouped().as_slice() {
            [(_, give)] => give.clone(),
            groups => groups
                .iter()
                .map(|(codes, give)| format!("{}: {give}", codes.join(", ")))
                .collect::<Vec<_>>()
                .join("; "),
        },
        false => missing.join("; "),
    };
    Err(GateError::usage(format!(
        "no selected rule was evaluated ({}): {why}",
        crate::words::join_and(&codes)
    ))
    .with_help("give the inputs the selected rules need, or select rules that can run: a gate that checked nothing never passes"))
}
