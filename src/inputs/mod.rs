//! The facts a gate run looks at, each loaded from its file (or tool) once.

pub mod baseline;
pub mod coverage;
pub mod ids;
pub mod junit;
pub mod ledger;
pub mod load;
pub mod loading;
pub mod markers;
pub mod owners;
pub mod proof;
pub mod registry;
pub mod renamed;
pub mod run_record;
pub mod samples;
pub mod tamper;
pub mod tools;
pub mod weakened;

pub use registry::{FactArgs, Loaded, INPUTS};

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::error::GateError;
use crate::source::{Source, SourceFile};
use ids::IdSet;
use ledger::Ledger;

/// Everything the scripts can be shown. An input that was not given is `None`.
///
/// Only the ledger is read before rules start: every other input may still be loading
/// on a thread of its own (a million collected ids take longer than most scripts), and
/// a script that reads it waits for it.
#[derive(Debug)]
pub struct Facts {
    pub ledger: Ledger,
    /// The inputs loaded from files and tools (see [`registry`]): the collection, the
    /// changed files, samples, applied skips, results, coverage, run records, ...
    pub loaded: Loaded,
    /// The commit under judgement (`--commit`, else HEAD).
    pub commit: Option<String>,
    /// The skip baseline (`skip_baseline` in config; empty when there is none).
    pub baseline: baseline::Baseline,
    pub today: jiff::civil::Date,
    pub target_branch: Option<String>,
    /// The ref config and policies were read from (`--trusted-ref`).
    pub trusted_ref: Option<String>,
    /// pytest's rootdir relative to the repository root (`""` when the same).
    pub pytest_root: String,
    /// How many scripts may run at once (`--jobs`, else every core for large inputs).
    pub jobs: usize,
}

impl Facts {
    /// The facts of a run that gave nothing but the ledger.
    pub fn of_ledger(ledger: Ledger, today: jiff::civil::Date, pytest_root: String) -> Facts {
        Facts {
            ledger,
            loaded: Loaded::none(),
            commit: None,
            baseline: Default::default(),
            today,
            target_branch: None,
            trusted_ref: None,
            pytest_root,
            jobs: 1,
        }
    }

    /// These facts without the inputs besides the ledger, which are freed now.
    pub fn into_ledger_only(self) -> Facts {
        Facts {
            loaded: Loaded::none(),
            ..self
        }
    }
}

/// An input that may still be loading on another thread: [`Deferred::get`] waits for it.
/// `None` once set means not given (or its loader failed: [`loading::Loading::finish`] says why).
#[derive(Debug)]
pub struct Deferred<T>(Arc<OnceLock<Option<T>>>);

impl<T> Clone for Deferred<T> {
    fn clone(&self) -> Self {
        Deferred(Arc::clone(&self.0))
    }
}

impl<T> From<Option<T>> for Deferred<T> {
    fn from(value: Option<T>) -> Deferred<T> {
        Deferred::ready(value)
    }
}

impl<T> Deferred<T> {
    /// An input whose loader will set it (see [`loading::Loading::add`]).
    pub fn pending() -> Deferred<T> {
        Deferred(Arc::new(OnceLock::new()))
    }

    pub fn ready(value: Option<T>) -> Deferred<T> {
        Deferred(Arc::new(OnceLock::from(value)))
    }

    /// Sets a pending input (a second set is ignored: the first value stays).
    pub fn set(&self, value: Option<T>) {
        let _ = self.0.set(value);
    }

    pub fn is_ready(&self) -> bool {
        self.0.get().is_some()
    }

    /// Whether the input was given: one still loading was.
    pub fn is_given(&self) -> bool {
        self.0.get().is_none_or(Option::is_some)
    }

    /// The input, once loaded.
    pub fn get(&self) -> Option<&T> {
        self.0.wait().as_ref()
    }

    /// Like [`Deferred::get`], also saying how long it waited.
    pub fn get_timed(&self) -> (Option<&T>, Duration) {
        if let Some(value) = self.0.get() {
            return (value.as_ref(), Duration::ZERO);
        }
        let started = Instant::now();
        (self.0.wait().as_ref(), started.elapsed())
    }
}

/// A file named on the command line or in config: where it is and how to call it.
#[derive(Debug, Clone)]
pub struct InputPath {
    pub path: PathBuf,
    pub name: String,
}

impl InputPath {
    /// A path from the command line, relative to the working directory.
    pub fn from_cli(
        cwd: &std::path::Path,
        path: &std::path::Path,
        repo_root: &std::path::Path,
    ) -> InputPath {
        let path = cwd.join(path);
        InputPath {
            name: crate::config::display_path(&path, repo_root),
            path,
        }
    }

    /// A path the command line gives (`--ledger FILE`), else the one config names.
    pub fn from_cli_or_config(
        cwd: &std::path::Path,
        given: Option<&std::path::Path>,
        configured: &std::path::Path,
        repo_root: &std::path::Path,
    ) -> InputPath {
        match given {
            Some(path) => InputPath::from_cli(cwd, path, repo_root),
            None => InputPath::from_config(configured, repo_root),
        }
    }

    /// A path from config (already absolute).
    pub fn from_config(path: &std::path::Path, repo_root: &std::path::Path) -> InputPath {
        InputPath {
            name: crate::config::display_path(path, repo_root),
            path: path.to_path_buf(),
        }
    }

    pub fn read(&self) -> Result<Source, GateError> {
        SourceFile::read(&self.path, self.name.clone())
    }
}

/// Reads several files of one kind (shards) and merges what each parser returns into
/// one id set; `None` when no file was given.
pub fn read_merged(
    paths: &[InputPath],
    parse: fn(&Source) -> Result<ids::Ids, GateError>,
) -> Result<Option<IdSet>, GateError> {
    if paths.is_empty() {
        return Ok(None);
    }
    merge(paths.iter().map(InputPath::read), parse).map(Some)
}

/// One id set of every source, each parsed by `parse` (shards merge).
pub fn merge(
    sources: impl IntoIterator<Item = Result<Source, GateError>>,
    parse: fn(&Source) -> Result<ids::Ids, GateError>,
) -> Result<IdSet, GateError> {
    let mut builder = ids::IdSetBuilder::default();
    for source in sources {
        let source = source?;
        let ids = parse(&source)?;
        builder.add(source, ids)?;
    }
    Ok(builder.build())
}

/// The lines a patch added, changed or removed, per repository path (new-side hunks:
/// `(start, 0)` is lines removed after new line `start`), and the text of the lines it
/// added to Python files (for the tamper scan, [`tamper`]).
#[derive(Debug, Clone, Default)]
pub struct Hunks {
    spans: std::sync::Arc<rustc_hash::FxHashMap<String, Vec<(u32, u32)>>>,
    added: std::sync::Arc<rustc_hash::FxHashMap<String, Vec<(u32, String)>>>,
}

impl Hunks {
    pub fn add(&mut self, file: &str, start: u32, count: u32) {
        std::sync::Arc::make_mut(&mut self.spans)
            .entry(file.to_string())
            .or_default()
            .push((start, count));
    }

    /// A line the patch added to a Python file: its number on the new side and its text.
    pub fn add_python_line(&mut self, file: &str, line: u32, text: &str) {
        std::sync::Arc::make_mut(&mut self.added)
            .entry(file.to_string())
            .or_default()
            .push((line, text.to_string()));
    }

    /// The lines the patch added to each Python file.
    pub fn python_lines(&self) -> impl Iterator<Item = (&str, &[(u32, String)])> {
        self.added
            .iter()
            .map(|(file, lines)| (file.as_str(), lines.as_slice()))
    }

    /// Every file the patch added or changed lines of.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.spans.keys().map(String::as_str)
    }

    /// Whether the patch added or changed any line of `first..=last` in `file`, or
    /// removed lines between two of them (or after the last: a removed final assertion).
    pub fn touches(&self, file: &str, first: u32, last: u32) -> bool {
        self.spans.get(file).is_some_and(|hunks| {
            hunks.iter().any(|&(start, count)| match count {
                0 => first <= start && start <= last,
                _ => start <= last && start + count > first,
            })
        })
    }
}

/// Whether a gate run can be without an input, and what its absence means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// Always there (the ledger, dates, config).
    Always,
    /// Rules that need it report FZ001 when it was not given.
    Required,
    /// Rules that need it are not evaluated when it was not given (no FZ001): results,
    /// coverage, a target branch, a trusted ref.
    Optional,
}

/// An input scripts can `require` or a rule can declare in its `needs`.
#[derive(Debug, Clone, Copy)]
pub struct Input {
    pub name: &'static str,
    /// The flags (or config key) that provide it, as FZ001 names them.
    pub hint: &'static str,
    pub presence: Presence,
    /// The `check` option that gives it as a file, when one does.
    pub option: Option<&'static str>,
    /// The file names a `freezegate test` case gives it under (none: a case cannot).
    pub case_files: &'static [&'static str],
}

/// The input of that binding name.
pub fn input_named(name: &str) -> Option<&'static Input> {
    INPUTS.iter().find(|input| input.name == name)
}

/// What FZ001 says gives the input of that binding name.
pub fn hint_for(name: &str) -> &'static str {
    input_named(name).map_or("?", |input| input.hint)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registry and clap's `check` agree: each input's option is a flag of `check`,
    /// and FZ001's hint names it.
    #[test]
    fn every_input_option_is_a_flag_of_check_and_its_hint() {
        use clap::CommandFactory;
        let cli = crate::cli::Cli::command();
        let check = cli.find_subcommand("check").expect("a check subcommand");
        let longs: Vec<String> = check
            .get_arguments()
            .filter_map(|arg| arg.get_long().map(|long| format!("--{long}")))
            .collect();
        let mut files = 0;
        for input in INPUTS {
            if let Some(option) = input.option {
                assert!(
                    longs.iter().any(|l| l == option),
                    "{option} is no flag of check"
                );
                assert!(
                    input.hint.contains(option),
                    "{}: {}",
                    input.name,
                    input.hint
                );
                files += 1;
            }
        }
        assert_eq!(files, 12);
    }

    /// The data's way is config → inputs → engine: inputs read files into facts and know
    /// nothing of scripts (the engine turns facts into script values).
    #[test]
    fn inputs_never_import_the_engine_or_rhai() {
        fn scan(dir: &std::path::Path, found: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    scan(&path, found);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for (n, line) in text.lines().enumerate() {
                        // Spelt in two, so that this test does not find itself.
                        if [
                            concat!("crate::", "engine"),
                            concat!("rhai", "::"),
                            concat!("use ", "rhai"),
                        ]
                        .iter()
                        .any(|w| line.contains(w))
                        {
                            found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                        }
                    }
                }
            }
        }
        let mut found = Vec::new();
        let inputs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/inputs");
        scan(&inputs, &mut found);
        assert!(
            found.is_empty(),
            "inputs import the engine:\n{}",
            found.join("\n")
        );
    }
}
