//! `freezegate check`: gather the facts, run the policies, report.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::cli::{CheckArgs, FactArgs};
use crate::commands::{cli_input, emit, EXIT_PASS, EXIT_VIOLATIONS};
use crate::config::{trust, Config, FileTree, PolicySpec};
use crate::engine::bindings::Date;
use crate::engine::policy::{self, Pack, PolicyDirResolver};
use crate::engine::selection::Selection;
use crate::engine::ScriptEngine;
use crate::engine::{RawReport, Target};
use crate::error::InputError;
use crate::inputs::coverage::Coverage;
use crate::inputs::ids::{self, IdSet};
use crate::inputs::junit::Results;
use crate::inputs::ledger::Ledger;
use crate::inputs::run_record::Runs;
use crate::inputs::samples::Samples;
use crate::inputs::{merge, read_merged, tools, Deferred, Facts, InputPath, Loading, Plan, Size};
use crate::report::{human, Report};

/// The loaded policy pack with the engine that compiled it.
pub struct Gate {
    pub config: Config,
    pub engine: ScriptEngine,
    pub pack: Pack,
    /// What the core reports on its own (FZ501 under `--trusted-ref`).
    pub core_reports: Vec<RawReport>,
}

impl Gate {
    pub fn load(cwd: &Path, config_path: Option<&Path>) -> Result<Gate, InputError> {
        Self::with_config(Config::discover(cwd, config_path)?)
    }

    pub fn with_config(config: Config) -> Result<Gate, InputError> {
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
        let mut engine = ScriptEngine::new(&config.limits, config.pytest_root_in_repo(), resolver);
        engine.set_owners(crate::inputs::owners::Owners::from_config(&config)?);
        let pack = policy::load(
            engine.engine(),
            &config.policies,
            &config.repo_root,
            &config.tree,
        )?;
        Ok(Gate {
            config,
            engine,
            pack,
            core_reports: Vec::new(),
        })
    }
}

pub fn run(cwd: &Path, config_path: Option<&Path>, args: &CheckArgs) -> Result<u8, InputError> {
    let started = Instant::now();
    let (config, trusted) = match &args.trusted_ref {
        Some(rev) => {
            let tree = FileTree::commit(rev, &crate::config::find_repo_root(cwd))?;
            (
                Config::discover_in(cwd, config_path, &tree)?,
                Some((rev, tree)),
            )
        }
        None => (Config::discover(cwd, config_path)?, None),
    };
    let configured = Instant::now();
    // Large inputs start loading on threads of their own, then the pack compiles; small
    // inputs load right here (threads cost more than they save on a few milliseconds).
    let gathering = start_loading(cwd, &config, &args.facts)?;
    let started_loading = Instant::now();
    let mut gate = Gate::with_config(config)?;
    if let Some((rev, tree)) = &trusted {
        for file in trust::modified_files(cwd, config_path, &gate.config, tree) {
            gate.core_reports.push(RawReport {
                code: "FZ501".into(),
                message: file.message(rev),
                script: crate::engine::policy::CORE_POLICY.into(),
                target: Target::None,
                test_id: None,
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
    let (mut facts, loading) = gathering.with_ledger(cwd, &gate.config, &args.facts)?;
    facts.trusted_ref = args.trusted_ref.clone();
    let inputs_phase = match loading.is_threaded() {
        true => "inputs started",
        false => "inputs",
    };
    let gathered = Instant::now();
    let judged = judge(&gate, &facts, &selection);
    // An input that failed to load is the error, whatever the rules made of its absence.
    loading.finish()?;
    let (evaluation, report) = judged?;
    require_evaluated(&report)?;
    // The reports need only the ledger: the other inputs (a million collected ids) are
    // given back before the reports are rendered beside them.
    let facts = facts.into_ledger_only();
    let judged = Instant::now();
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
        record_history(cwd, path, &gate.config, &facts, &report, args.deny_warnings)?;
    }
    if args.facts.verbose {
        let ms = |from: Instant, to: Instant| (to - from).as_secs_f64() * 1000.0;
        let now = Instant::now();
        eprintln!(
            "timing: config {:.1} ms, {inputs_phase} {:.1} ms, policies {:.1} ms, ledger {:.1} ms, rules {:.1} ms, output {:.1} ms",
            ms(started, configured),
            ms(configured, started_loading),
            ms(started_loading, compiled),
            ms(compiled, gathered),
            ms(gathered, judged),
            ms(judged, now)
        );
        eprintln!("checked in {:.1} ms", ms(started, now));
    }
    let code = if report.failed(args.deny_warnings) {
        EXIT_VIOLATIONS
    } else {
        EXIT_PASS
    };
    // The process ends after this: the OS takes the memory back faster than dropping a
    // million ids and ten thousand entries piece by piece would.
    std::mem::forget((gate, facts, evaluation, report));
    Ok(code)
}

/// Appends this run to the `--history` file (one JSON line; see [`crate::history`]).
fn record_history(
    cwd: &Path,
    path: &Path,
    config: &Config,
    facts: &Facts,
    report: &Report,
    deny_warnings: bool,
) -> Result<(), InputError> {
    let input = cli_input(cwd, path, &config.repo_root);
    let record = crate::history::Record::of_run(
        report,
        facts.today,
        crate::history::head_commit(&config.repo_root),
        facts.target_branch.clone(),
        report.failed(deny_warnings),
    );
    crate::history::append(&input.path, &input.name, &record)
}

/// Runs the enabled rules over the facts and resolves what they reported: the one
/// evaluation both `check` (which prints it) and `test` (which compares it with a
/// fixture's expectations) use.
pub fn judge(
    gate: &Gate,
    facts: &Facts,
    selection: &Selection,
) -> Result<(crate::engine::Evaluation, Report), InputError> {
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
    if let Some(samples) = facts.samples.get() {
        report.samples = sample_rows(&facts.ledger, samples);
    }
    report.collected = facts.collected.get().map(IdSet::len);
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
fn require_evaluated(report: &Report) -> Result<(), InputError> {
    let pack_rules = || {
        report
            .rules
            .iter()
            .filter(|r| r.policy != crate::engine::policy::CORE_POLICY)
    };
    if pack_rules().any(|r| r.evaluated) {
        return Ok(());
    }
    let codes: Vec<&str> = pack_rules().map(|r| r.code.as_str()).collect();
    let missing = report.missing_inputs();
    let why = match missing.is_empty() {
        true => "their inputs were not given (results with --junit, coverage with --coverage)"
            .to_string(),
        false => missing.join("; "),
    };
    Err(InputError::usage(format!(
        "no selected rule was evaluated ({}): {why}",
        crate::words::join_and(&codes)
    ))
    .with_help("give the inputs the selected rules need, or select rules that can run: a gate that checked nothing never passes"))
}

/// Loads every input that was given; inputs not given stay `None` for `require`.
pub fn gather(cwd: &Path, config: &Config, args: &FactArgs) -> Result<Facts, InputError> {
    let (facts, loading) = start_loading(cwd, config, args)?.with_ledger(cwd, config, args)?;
    loading.finish()?;
    Ok(facts)
}

/// The skip baseline, from the tree config came from (the trusted ref's under
/// `--trusted-ref`: a patch cannot baseline its own skip); empty when there is none.
fn load_baseline(config: &Config) -> Result<crate::inputs::baseline::Baseline, InputError> {
    let name = crate::config::display_path(&config.skip_baseline, &config.repo_root);
    match config.tree.read(&config.skip_baseline, &name)? {
        Some(source) => crate::inputs::baseline::Baseline::parse(&source),
        None => Ok(Default::default()),
    }
}

/// The ledger at the base: `--base-ledger FILE`, else with `--base REF` the ledger's
/// file at the merge base of REF and HEAD (`Some(None)` when it has none: every entry
/// is new); `None` without either flag.
fn base_ledger(
    cwd: &Path,
    config: &Config,
    args: &FactArgs,
    ledger: &Ledger,
) -> Result<Option<Option<Ledger>>, InputError> {
    if let Some(path) = &args.base_ledger {
        let input = cli_input(cwd, path, &config.repo_root);
        return Ledger::load(&input.path, &input.name).map(|l| Some(Some(l)));
    }
    let Some(base) = &args.base else {
        return Ok(None);
    };
    let rev = tools::merge_base(base, &config.repo_root).unwrap_or_else(|| base.clone());
    let Ok(tree) = FileTree::commit_for("--base", &rev, &config.repo_root) else {
        // The diff against the same ref fails too, and its error (which names the
        // ref and the fix) is the one reported: the run never judges without a base.
        return Ok(None);
    };
    let name = format!("{base}:{}", ledger.source.name);
    match tree.read(&ledger.source.path, &name)? {
        None => Ok(Some(None)),
        Some(source) => Ledger::parse(source, ledger.format)
            .map(|l| Some(Some(l)))
            .map_err(|e| {
                e.with_help(format!("this is the ledger at the merge base of --base {base} and HEAD ({rev}); pass --base-ledger FILE to give the base ledger another way"))
            }),
    }
}

/// From this size on (all inputs together, or the small ones together), inputs are
/// worth a thread: below, starting one costs more than it saves.
const PARALLEL_FROM_BYTES: u64 = 256 << 10;
const PARALLEL_FROM_FREEZES: usize = 1_000;

/// Where the inputs load: on threads with `--jobs` above 1, when a tool runs (pytest,
/// git) or a directory is read, or when the files come to [`PARALLEL_FROM_BYTES`]; the
/// small inputs get a thread of their own only when they are that large themselves or
/// come from a tool.
fn plan_loading(cwd: &Path, config: &Config, args: &FactArgs) -> Plan {
    let size = |paths: &mut dyn Iterator<Item = &PathBuf>| -> Option<u64> {
        let mut bytes = 0;
        for path in paths {
            match std::fs::metadata(cli_input(cwd, path, &config.repo_root).path) {
                Ok(meta) if meta.is_dir() => return None,
                Ok(meta) => bytes += meta.len(),
                Err(_) => {} // the loader names the missing file
            }
        }
        Some(bytes)
    };
    let large = size(&mut args.collected.iter().chain(&args.coverage).chain(&args.run));
    let small = size(
        &mut args
            .changed
            .iter()
            .chain(&args.samples)
            .chain(&args.applied_skips)
            .chain(&args.junit),
    );
    let small_needs_thread =
        args.base.is_some() || small.is_none_or(|bytes| bytes >= PARALLEL_FROM_BYTES);
    let threaded = match args.jobs {
        Some(jobs) => jobs > 1,
        None => {
            args.collect
                || small_needs_thread
                || large.is_none_or(|large| large + small.unwrap_or(0) >= PARALLEL_FROM_BYTES)
        }
    };
    match (threaded, small_needs_thread) {
        (false, _) => Plan::Inline,
        (true, false) => Plan::LargeOnThreads,
        (true, true) => Plan::AllOnThreads,
    }
}

/// Inputs on their way: every input but the ledger loading on threads of its own (see
/// [`start_loading`]); [`Gathering::with_ledger`] reads the ledger and hands out the facts.
pub struct Gathering {
    collected: Deferred<IdSet>,
    changed: Deferred<IdSet>,
    samples: Deferred<Samples>,
    applied_skips: Deferred<IdSet>,
    results: Deferred<Results>,
    coverage: Deferred<Coverage>,
    runs: Deferred<Runs>,
    base_collected: Deferred<IdSet>,
    selection_changes: Deferred<Vec<(String, String)>>,
    hunks: Deferred<crate::inputs::Hunks>,
    today: jiff::civil::Date,
    loading: Loading,
}

/// Starts loading every input but the ledger, so that they load while the pack compiles
/// and the ledger is read, and rules start as soon as those are done; a script that reads
/// an input still loading waits for it. [`Loading::finish`] reports the first input error.
pub fn start_loading(
    cwd: &Path,
    config: &Config,
    args: &FactArgs,
) -> Result<Gathering, InputError> {
    let repo_root = &config.repo_root;
    let input = |p: &Path| cli_input(cwd, p, repo_root);
    let inputs =
        |paths: &[std::path::PathBuf]| paths.iter().map(|p| input(p)).collect::<Vec<InputPath>>();
    let today = match &args.today {
        Some(text) => {
            Date::parse(text)
                .ok_or_else(|| {
                    InputError::usage(format!(
                        "--today `{text}` is not a real date in YYYY-MM-DD form"
                    ))
                })?
                .0
        }
        None => jiff::Timestamp::now()
            .to_zoned_datetime(jiff::tz::TimeZone::UTC)
            .date(),
    };

    let mut loading = Loading::new(plan_loading(cwd, config, args), args.verbose);
    // Run records come first: the inputs they stand in for wait on them.
    let run_paths = match args.run.is_empty() {
        false => inputs(&args.run),
        true => config
            .run
            .iter()
            .map(|path| InputPath {
                name: crate::config::display_path(path, repo_root),
                path: path.clone(),
            })
            .collect(),
    };
    let has_runs = !run_paths.is_empty();
    let runs = loading.add("runs", Size::Large, has_runs, move || {
        Runs::load(&run_paths)
    });
    // An input its own flags do not give comes from the run records, when there are any.
    fn from_runs<T: Send + Sync + 'static>(
        runs: &Deferred<Runs>,
        part: fn(&Runs) -> T,
    ) -> impl FnOnce() -> Result<Option<T>, InputError> + Send + 'static {
        let runs = runs.clone();
        move || Ok(runs.get().map(part))
    }
    // The collection is by far the largest input (a million ids in a monorepo).
    let collected = {
        let (collect, verbose, paths) = (args.collect, args.verbose, inputs(&args.collected));
        let (command, pytest_root) = (config.collect_command.clone(), config.pytest_root.clone());
        let recorded = from_runs(&runs, |r| r.collected.clone());
        let given = collect || !paths.is_empty();
        loading.add("collected", Size::Large, given || has_runs, move || {
            if !given {
                return recorded();
            }
            if !collect {
                return read_merged(&paths, ids::parse_collected);
            }
            let (source, elapsed) = tools::collect(&command, &pytest_root)?;
            if verbose {
                eprintln!("collect: {:.2} s", elapsed.as_secs_f64());
            }
            merge([Ok(source)], ids::parse_collected).map(Some)
        })
    };
    let changed = {
        let (base, path) = (args.base.clone(), args.changed.as_deref().map(input));
        let repo_root = repo_root.clone();
        loading.add(
            "changed",
            Size::Small,
            base.is_some() || path.is_some(),
            move || match (base, path) {
                (Some(base), _) => Ok(Some(
                    tools::changed_since(&base, &repo_root)?
                        .into_iter()
                        .collect(),
                )),
                (None, Some(path)) => read_merged(&[path], ids::parse_changed),
                (None, None) => Ok(None),
            },
        )
    };
    let applied_skips = {
        let paths = inputs(&args.applied_skips);
        let recorded = from_runs(&runs, |r| r.applied_skips.clone());
        loading.add(
            "applied_skips",
            Size::Small,
            !paths.is_empty() || has_runs,
            move || match paths.is_empty() {
                true => recorded(),
                false => read_merged(&paths, ids::parse_id_list),
            },
        )
    };
    let samples = {
        let paths: Vec<_> = inputs(&args.samples)
            .into_iter()
            .map(|p| (p.path, p.name))
            .collect();
        let recorded = from_runs(&runs, |r| r.samples.clone());
        loading.add(
            "samples",
            Size::Small,
            !paths.is_empty() || has_runs,
            move || match paths.is_empty() {
                true => recorded(),
                false => Samples::load(&paths).map(Some),
            },
        )
    };
    let results = {
        let paths = inputs(&args.junit);
        let recorded = from_runs(&runs, |r| r.results.clone());
        loading.add(
            "results",
            Size::Small,
            !paths.is_empty() || has_runs,
            move || {
                if paths.is_empty() {
                    return recorded();
                }
                let sources = paths
                    .iter()
                    .map(InputPath::read)
                    .collect::<Result<Vec<_>, _>>()?;
                Results::load(&sources).map(Some)
            },
        )
    };
    // Coverage reports can be large too.
    let coverage = {
        let paths = inputs(&args.coverage);
        loading.add("coverage", Size::Large, !paths.is_empty(), move || {
            Coverage::load(&paths)
        })
    };

    // The base's collection: from its run records, or a collection file.
    let base_collected = {
        let (runs, file) = (
            inputs(&args.base_run),
            args.base_collected.as_deref().map(input),
        );
        loading.add(
            "base_collected",
            Size::Large,
            !runs.is_empty() || file.is_some(),
            move || match file {
                Some(file) => read_merged(&[file], ids::parse_collected),
                None => Ok(Runs::load(&runs)?.map(|r| r.collected)),
            },
        )
    };

    // What the patch changed in what decides collection: from the changed files (and
    // with --base, pytest's sections of shared config files compared with the base's).
    let selection_changes = {
        let (base, changed, repo_root) = (args.base.clone(), changed.clone(), repo_root.clone());
        let given = args.base.is_some() || args.changed.is_some();
        loading.add("selection_changes", Size::Small, given, move || {
            Ok(changed
                .get()
                .map(|changed| tools::selection_changes(base.as_deref(), &repo_root, changed)))
        })
    };

    let hunks = {
        let (base, repo_root) = (args.base.clone(), repo_root.clone());
        let diff = args.diff.as_deref().map(input);
        let given = base.is_some() || diff.is_some();
        loading.add("hunks", Size::Small, given, move || match (diff, base) {
            (Some(diff), _) => Ok(Some(tools::parse_unified_diff(&diff.read()?.text))),
            (None, Some(base)) => tools::changed_lines(&base, &repo_root).map(Some),
            (None, None) => Ok(None),
        })
    };

    loading.start_small();
    Ok(Gathering {
        base_collected,
        selection_changes,
        hunks,
        collected,
        changed,
        samples,
        applied_skips,
        results,
        coverage,
        runs,
        today,
        loading,
    })
}

impl Gathering {
    /// Reads the ledger (on this thread: rules need it first) and hands out the facts with
    /// the loaders still running.
    pub fn with_ledger(
        self,
        cwd: &Path,
        config: &Config,
        args: &FactArgs,
    ) -> Result<(Facts, Loading), InputError> {
        let repo_root = &config.repo_root;
        let ledger_path = match &args.ledger {
            Some(path) => cli_input(cwd, path, repo_root),
            None => InputPath {
                name: crate::config::display_path(&config.ledger, repo_root),
                path: config.ledger.clone(),
            },
        };
        let mut ledger = Ledger::load(&ledger_path.path, &ledger_path.name).map_err(|e| {
            if e.message == "not found" {
                e.with_help(
                    "create one with `freezegate init`, or point --ledger / `ledger` in config at it",
                )
            } else {
                e
            }
        })?;
        if let Some(base) = base_ledger(cwd, config, args, &ledger)? {
            ledger.compare_with(base.as_ref());
        }
        let ledger_entries = ledger.entries.len();
        let target_branch = args
            .target_branch
            .clone()
            .or_else(|| tools::ci_target_branch(|name| std::env::var(name).ok()))
            .or_else(|| tools::current_branch(repo_root));
        let facts = Facts {
            ledger,
            collected: self.collected,
            changed: self.changed,
            samples: self.samples,
            applied_skips: self.applied_skips,
            results: self.results,
            coverage: self.coverage,
            runs: self.runs,
            base_collected: self.base_collected,
            selection_changes: self.selection_changes,
            hunks: self.hunks,
            baseline: load_baseline(config)?,
            commit: args
                .commit
                .clone()
                .or_else(|| crate::history::head_commit(repo_root)),
            today: self.today,
            target_branch,
            trusted_ref: None,
            pytest_root: config.pytest_root_in_repo(),
            jobs: match args.jobs {
                Some(jobs) => usize::from(jobs),
                None if self.loading.is_threaded() || ledger_entries >= PARALLEL_FROM_FREEZES => {
                    std::thread::available_parallelism().map_or(1, |n| n.get())
                }
                None => 1,
            },
        };
        Ok((facts, self.loading))
    }
}
