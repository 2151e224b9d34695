//! Loading the facts: which inputs were given, where each loads (see [`Plan`]), and the
//! ledger, read while the rest load.

use std::path::{Path, PathBuf};

use super::loading::{Loading, Plan, Size};
use crate::cli::FactArgs;
use crate::commands::cli_input;
use crate::config::{Config, FileTree};
use crate::engine::bindings::Date;
use crate::error::GateError;
use crate::inputs::coverage::Coverage;
use crate::inputs::ids::{self, IdSet};
use crate::inputs::junit::Results;
use crate::inputs::ledger::Ledger;
use crate::inputs::run_record::Runs;
use crate::inputs::samples::Samples;
use crate::inputs::{merge, read_merged, tools, Deferred, Facts, InputPath};

/// Loads every input that was given; inputs not given stay `None` for `require`.
pub fn gather(cwd: &Path, config: &Config, args: &FactArgs) -> Result<Facts, GateError> {
    let (facts, loading) = start_loading(cwd, config, args)?.with_ledger(cwd, config, args)?;
    loading.finish()?;
    Ok(facts)
}

/// The skip baseline, from the tree config came from (the trusted ref's under
/// `--trusted-ref`: a patch cannot baseline its own skip); empty when there is none.
fn load_baseline(config: &Config) -> Result<crate::inputs::baseline::Baseline, GateError> {
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
) -> Result<Option<Option<Ledger>>, GateError> {
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
pub fn start_loading(cwd: &Path, config: &Config, args: &FactArgs) -> Result<Gathering, GateError> {
    let repo_root = &config.repo_root;
    let input = |p: &Path| cli_input(cwd, p, repo_root);
    let inputs =
        |paths: &[std::path::PathBuf]| paths.iter().map(|p| input(p)).collect::<Vec<InputPath>>();
    let today = match &args.today {
        Some(text) => {
            Date::parse(text)
                .ok_or_else(|| {
                    GateError::usage(format!(
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
    ) -> impl FnOnce() -> Result<Option<T>, GateError> + Send + 'static {
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
    ) -> Result<(Facts, Loading), GateError> {
        let repo_root = &config.repo_root;
        let ledger_path = match &args.ledger {
            Some(path) => cli_input(cwd, path, repo_root),
            None => InputPath {
                name: crate::config::display_path(&config.ledger, repo_root),
                path: config.ledger.clone(),
            },
        };
        let mut ledger = Ledger::load(&ledger_path.path, &ledger_path.name).map_err(|e| {
            if e.kind() == crate::error::Kind::Missing {
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
                .or_else(|| crate::inputs::tools::head_commit(repo_root)),
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
