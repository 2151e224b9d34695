//! Loading the facts: the inputs the registry declares start loading (see
//! [`Loaded::start`]), and the ledger is read while they load.

use std::path::Path;

use crate::config::{Config, FileTree};
use crate::engine::bindings::Date;
use crate::error::GateError;
use crate::inputs::ledger::Ledger;
use crate::inputs::load::Context;
use crate::inputs::loading::Loading;
use crate::inputs::{tools, FactArgs, Facts, InputPath, Loaded};

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
pub fn base_ledger(
    cwd: &Path,
    config: &Config,
    base_ledger: Option<&Path>,
    base: Option<&str>,
    ledger: &Ledger,
) -> Result<Option<Option<Ledger>>, GateError> {
    if let Some(path) = base_ledger {
        let input = InputPath::from_cli(cwd, path, &config.repo_root);
        return Ledger::load(&input.path, &input.name).map(|l| Some(Some(l)));
    }
    let Some(base) = base else {
        return Ok(None);
    };
    let rev = tools::merge_base(base, &config.repo_root).unwrap_or_else(|| base.to_string());
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

/// From this many freezes on, scripts run on every core even when the inputs are small.
const PARALLEL_FROM_FREEZES: usize = 1_000;

/// Inputs on their way: every input but the ledger loading, here or on threads as the
/// plan lays them out (see [`start_loading`]); [`Gathering::with_ledger`] reads the
/// ledger and hands out the facts.
pub struct Gathering {
    loaded: Loaded,
    today: jiff::civil::Date,
    loading: Loading,
    commit: tools::HeadCommit,
}

/// Starts loading every input but the ledger, so that they load while the pack compiles
/// and the ledger is read, and rules start as soon as those are done; a script that reads
/// an input still loading waits for it. [`Loading::finish`] reports the first input error.
pub fn start_loading(cwd: &Path, config: &Config, args: &FactArgs) -> Result<Gathering, GateError> {
    let today = Date::today_or(args.today.as_deref())?.0;
    let commit = tools::commit_under_judgement(args.commit.clone(), &config.repo_root);
    let cx = Context {
        cwd,
        config,
        args,
        commit: commit.clone(),
    };
    let (loaded, loading) = Loaded::start(&cx);
    Ok(Gathering {
        loaded,
        today,
        loading,
        commit,
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
        let ledger_path =
            InputPath::from_cli_or_config(cwd, args.ledger.as_deref(), &config.ledger, repo_root);
        let mut ledger = Ledger::load(&ledger_path.path, &ledger_path.name).map_err(|e| {
            if e.kind() == crate::error::Kind::Missing {
                e.with_help(
                    "create one with `freezegate init`, or point --ledger / `ledger` in config at it",
                )
            } else {
                e
            }
        })?;
        if let Some(base) = base_ledger(
            cwd,
            config,
            args.base_ledger.as_deref(),
            args.base.as_deref(),
            &ledger,
        )? {
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
            loaded: self.loaded,
            baseline: load_baseline(config)?,
            commit: self.commit.get(),
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
