//! How each loaded input loads: one loader per entry of the [registry](super::registry),
//! saying what it reads and doing the work (which [`Loading`](super::loading::Loading)
//! runs here or on a thread). `None`: the input was not given.
//!
//! An input its own flags do not give may come from another input (the collection,
//! applied skips, results and samples from the run records): its loader waits for that
//! one, which the registry declares before it.

use std::path::{Path, PathBuf};

use super::coverage::Coverage;
use super::ids::{self, IdSet};
use super::junit::Results;
use super::loading::{Load, Reads};
use super::proof::Proofs;
use super::run_record::{RecordHeader, Runs};
use super::samples::Samples;
use super::tamper::{self, Finding};
use super::weakened::{self, Weakened};
use super::{merge, read_merged, tools, Deferred, FactArgs, Hunks, InputPath, Loaded};
use crate::config::Config;
use crate::error::GateError;

/// What the loaders are given: the command line and config of this run.
pub struct Context<'a> {
    pub cwd: &'a Path,
    pub config: &'a Config,
    pub args: &'a FactArgs,
    /// The commit under judgement, which git is asked for as loading starts.
    pub commit: tools::HeadCommit,
}

impl Context<'_> {
    fn input(&self, path: &Path) -> InputPath {
        InputPath::from_cli(self.cwd, path, &self.config.repo_root)
    }

    fn inputs(&self, paths: &[PathBuf]) -> Vec<InputPath> {
        paths.iter().map(|path| self.input(path)).collect()
    }
}

fn files(paths: &[InputPath]) -> Reads {
    Reads::Files(paths.iter().map(|p| p.path.clone()).collect())
}

/// The inputs that come from the run records when their own flags are not given.
pub const FROM_RUNS: &[&str] = &["runs", "collected", "applied_skips", "results", "samples"];

/// The files of an input's own flag, read by `read`; without any, `part` of the run
/// records when they were given.
fn files_else_runs<T: Send + Sync + 'static>(
    cx: &Context,
    paths: &[PathBuf],
    loaded: &Loaded,
    part: fn(&Runs) -> T,
    read: fn(&[InputPath]) -> Result<Option<T>, GateError>,
) -> Option<Load<T>> {
    let paths = cx.inputs(paths);
    if !paths.is_empty() {
        return Some(Load::new(files(&paths), move || read(&paths)));
    }
    let runs = loaded.runs.clone();
    // A record FZ404 refuses feeds no rule: what it says is of another commit or ledger.
    runs.is_given().then(|| {
        Load::new(Reads::Input, move || {
            Ok(runs.get().filter(|r| !r.is_refused()).map(part))
        })
    })
}

/// `--run FILE...`, else `run` in config.
pub fn runs(cx: &Context, _: &Loaded) -> Option<Load<Runs>> {
    let paths = match cx.args.run.is_empty() {
        false => cx.inputs(&cx.args.run),
        true => cx
            .config
            .run
            .iter()
            .map(|path| InputPath::from_config(path, &cx.config.repo_root))
            .collect(),
    };
    let supervised = cx.args.supervised_run.clone();
    let ledger = InputPath::from_cli_or_config(
        cx.cwd,
        cx.args.ledger.as_deref(),
        &cx.config.ledger,
        &cx.config.repo_root,
    );
    let commit = cx.commit.clone();
    (supervised.is_some() || !paths.is_empty()).then(|| {
        Load::new(files(&paths), move || {
            let Some(mut runs) = Runs::load_with(supervised.as_ref(), &paths)? else {
                return Ok(None);
            };
            let commit = commit.get();
            // A ledger that cannot be read is its own loader's error.
            if let Ok(source) = ledger.read() {
                let digest = crate::inputs::ledger::sha256_hex(&source.text);
                runs.judge_identity(commit.as_deref(), &ledger.name, &digest);
            }
            Ok(Some(runs))
        })
    })
}

/// The records' identities (commit, ledger digest, and why FZ404 refuses them), even
/// when a refused record feeds no other rule.
pub fn run_records(_: &Context, loaded: &Loaded) -> Option<Load<Vec<RecordHeader>>> {
    let runs = loaded.runs.clone();
    runs.is_given().then(|| {
        Load::new(Reads::Input, move || {
            Ok(runs.get().map(|r| r.headers.clone()))
        })
    })
}

/// `--proof FILE...`, else `proof` in config.
pub fn proofs(cx: &Context, _: &Loaded) -> Option<Load<Proofs>> {
    let paths = match cx.args.proof.is_empty() {
        false => cx.inputs(&cx.args.proof),
        true => cx
            .config
            .proof
            .iter()
            .map(|path| InputPath::from_config(path, &cx.config.repo_root))
            .collect(),
    };
    (!paths.is_empty()).then(|| Load::new(files(&paths), move || Proofs::load(&paths)))
}

/// `--collect` (pytest), `--collected FILE...`, else the run records'. By far the
/// largest input: a million ids in a monorepo.
pub fn collected(cx: &Context, loaded: &Loaded) -> Option<Load<IdSet>> {
    if cx.args.collect {
        let verbose = cx.args.verbose;
        let (command, pytest_root) = (
            cx.config.collect_command.clone(),
            cx.config.pytest_root.clone(),
        );
        return Some(Load::new(Reads::Tool, move || {
            let (source, elapsed) = tools::collect(&command, &pytest_root)?;
            if verbose {
                eprintln!("collect: {:.2} s", elapsed.as_secs_f64());
            }
            merge([Ok(source)], ids::parse_collected).map(Some)
        }));
    }
    files_else_runs(
        cx,
        &cx.args.collected,
        loaded,
        |r| r.collected.clone(),
        |paths| read_merged(paths, ids::parse_collected),
    )
}

/// `--base REF` (git), else `--changed FILE`.
pub fn changed(cx: &Context, _: &Loaded) -> Option<Load<IdSet>> {
    if let Some(base) = cx.args.base.clone() {
        let repo_root = cx.config.repo_root.clone();
        return Some(Load::new(Reads::Tool, move || {
            Ok(Some(
                tools::changed_since(&base, &repo_root)?
                    .into_iter()
                    .collect(),
            ))
        }));
    }
    let path = cx.input(cx.args.changed.as_deref()?);
    Some(Load::new(files(std::slice::from_ref(&path)), move || {
        read_merged(&[path], ids::parse_changed)
    }))
}

/// `--applied-skips FILE...`, else the run records'.
pub fn applied_skips(cx: &Context, loaded: &Loaded) -> Option<Load<IdSet>> {
    files_else_runs(
        cx,
        &cx.args.applied_skips,
        loaded,
        |r| r.applied_skips.clone(),
        |paths| read_merged(paths, ids::parse_id_list),
    )
}

/// `--samples PATH...`, else the run records'.
pub fn samples(cx: &Context, loaded: &Loaded) -> Option<Load<Samples>> {
    files_else_runs(
        cx,
        &cx.args.samples,
        loaded,
        |r| r.samples.clone(),
        |paths| Samples::load(paths).map(Some),
    )
}

/// `--junit FILE...`, else the run records'.
pub fn results(cx: &Context, loaded: &Loaded) -> Option<Load<Results>> {
    files_else_runs(
        cx,
        &cx.args.junit,
        loaded,
        |r| r.results.clone(),
        |paths| {
            let sources = paths
                .iter()
                .map(InputPath::read)
                .collect::<Result<Vec<_>, _>>()?;
            Results::load(&sources).map(Some)
        },
    )
}

/// `--coverage FILE...`: coverage reports can be large too.
pub fn coverage(cx: &Context, _: &Loaded) -> Option<Load<Coverage>> {
    let paths = cx.inputs(&cx.args.coverage);
    (!paths.is_empty()).then(|| Load::new(files(&paths), move || Coverage::load(&paths)))
}

/// `--base-run FILE...`: the base branch's records, as they are (of the base's commit).
pub fn base_runs(cx: &Context, _: &Loaded) -> Option<Load<Runs>> {
    let runs = cx.inputs(&cx.args.base_run);
    (!runs.is_empty()).then(|| Load::new(files(&runs), move || Runs::load(&runs)))
}

/// The base's collection: `--base-collected FILE`, else the base run records'.
pub fn base_collected(cx: &Context, loaded: &Loaded) -> Option<Load<IdSet>> {
    if let Some(path) = &cx.args.base_collected {
        let path = cx.input(path);
        return Some(Load::new(files(std::slice::from_ref(&path)), move || {
            read_merged(&[path], ids::parse_collected)
        }));
    }
    let runs = loaded.base_runs.clone();
    runs.is_given().then(|| {
        Load::new(Reads::Input, move || {
            Ok(runs.get().map(|r| r.collected.clone()))
        })
    })
}

/// What the patch changed in what decides collection: from the changed files (and with
/// `--base`, pytest's sections of shared config files compared with the base's).
pub fn selection_changes(
    cx: &Context,
    loaded: &Loaded,
) -> Option<Load<Vec<tools::SelectionChange>>> {
    let changed = loaded.changed.clone();
    if !changed.is_given() {
        return None;
    }
    let (base, repo_root) = (cx.args.base.clone(), cx.config.repo_root.clone());
    let reads = match base {
        Some(_) => Reads::Tool,
        None => Reads::Input,
    };
    Some(Load::new(reads, move || {
        Ok(changed
            .get()
            .map(|changed| tools::selection_changes(base.as_deref(), &repo_root, changed)))
    }))
}

/// The lines the patch changed: `--diff FILE`, else with `--base REF` from git.
pub fn hunks(cx: &Context, _: &Loaded) -> Option<Load<Hunks>> {
    if let Some(diff) = &cx.args.diff {
        let diff = cx.input(diff);
        return Some(Load::new(files(std::slice::from_ref(&diff)), move || {
            Ok(Some(tools::parse_unified_diff(&diff.read()?.text)))
        }));
    }
    let (base, repo_root) = (cx.args.base.clone()?, cx.config.repo_root.clone());
    Some(Load::new(Reads::Tool, move || {
        tools::changed_lines(&base, &repo_root).map(Some)
    }))
}

/// The tamper scan of the lines the patch added (see [`super::tamper`]), in the folders of
/// the collected tests when the collection is known.
pub fn tampering(cx: &Context, loaded: &Loaded) -> Option<Load<Vec<Finding>>> {
    let hunks = loaded.hunks.clone();
    if !hunks.is_given() {
        return None;
    }
    let collected = loaded.collected.clone();
    let pytest_root = cx.config.pytest_root_in_repo();
    Some(Load::new(Reads::Input, move || {
        let Some(hunks) = hunks.get() else {
            return Ok(None);
        };
        let dirs = collected_dirs(&collected, &pytest_root);
        let mut findings = tamper::scan(hunks, &dirs);
        for finding in &mut findings {
            finding.file = ids::suite_file(&pytest_root, &finding.file);
        }
        Ok(Some(findings))
    }))
}

/// The folders (repository-relative) of the collected tests' files, when the collection
/// is known.
fn collected_dirs(collected: &Deferred<IdSet>, pytest_root: &str) -> rustc_hash::FxHashSet<String> {
    let files: rustc_hash::FxHashSet<&str> = collected
        .get()
        .map(|ids| ids.iter().map(ids::file_of).collect())
        .unwrap_or_default();
    let files: Vec<String> = files
        .into_iter()
        .map(|file| ids::repo_file(pytest_root, file))
        .collect();
    tamper::test_dirs(files.iter().map(String::as_str))
}

/// The weakened-test pre-check (see [`super::weakened`]): each test file the patch
/// changed, at both sides: with `--base`, from git (the merge base and HEAD); else from
/// `--diff FILE` where it holds whole files.
pub fn weakened(cx: &Context, loaded: &Loaded) -> Option<Load<Weakened>> {
    let collected = loaded.collected.clone();
    let pytest_root = cx.config.pytest_root_in_repo();
    if let Some(base) = cx.args.base.clone() {
        let hunks = loaded.hunks.clone();
        let repo_root = cx.config.repo_root.clone();
        return Some(Load::new(Reads::Tool, move || {
            let Some(hunks) = hunks.get() else {
                return Ok(None);
            };
            let dirs = collected_dirs(&collected, &pytest_root);
            let mut files: Vec<&str> = hunks.files().filter(|f| is_test_py(f, &dirs)).collect();
            files.sort_unstable();
            let rev = crate::git::merge_base(&base, &repo_root).unwrap_or_else(|| base.clone());
            let sides = files.into_iter().filter_map(|file| {
                // A file added or deleted has no tests in common with the other side (a
                // deleted test is FZ603's).
                let then = tools::file_at(&repo_root, &rev, file)?;
                let now = tools::file_at(&repo_root, "HEAD", file)?;
                Some((file.to_string(), (then, now)))
            });
            Ok(Some(compare_files(sides, &pytest_root)))
        }));
    }
    let diff = cx.input(cx.args.diff.as_ref()?);
    Some(Load::new(files(std::slice::from_ref(&diff)), move || {
        let source = diff.read()?;
        let dirs = collected_dirs(&collected, &pytest_root);
        let mut sides = Vec::new();
        for (file, whole) in weakened::sides_from_diff(&source.text) {
            if !is_test_py(&file, &dirs) {
                continue;
            }
            // A diff of some lines (`git diff -U0`) cannot show a test at both sides: the
            // rule is not evaluated (and says what to give), never judged on less.
            let Some(whole) = whole else {
                return Ok(None);
            };
            sides.push((file, whole));
        }
        Ok(Some(compare_files(sides.into_iter(), &pytest_root)))
    }))
}

/// A Python file where tests live (not a conftest, which defines none).
pub(crate) fn is_test_py(file: &str, dirs: &rustc_hash::FxHashSet<String>) -> bool {
    file.ends_with(".py") && !file.ends_with("conftest.py") && tamper::is_test_file(file, dirs)
}

/// Each file's two sides compared (repository paths in, suite paths out), or why not.
fn compare_files(
    files: impl Iterator<Item = (String, (String, String))>,
    pytest_root: &str,
) -> Weakened {
    let mut found = Weakened::default();
    for (file, sides) in files {
        let file = ids::suite_file(pytest_root, &file);
        match weakened::compare(&file, &sides.0, &sides.1) {
            Ok(compared) => {
                found.findings.extend(compared.findings);
                let renames = compared.renames.into_iter();
                found.renames.extend(renames.map(|r| (file.clone(), r)));
                let edited = compared.edited.into_iter();
                found.edited.extend(edited.map(|e| (file.clone(), e)));
            }
            Err(why) => found.uncompared.push((file, why)),
        }
    }
    found
}
