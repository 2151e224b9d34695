//! The run record (`gate/run.json`, version 1): what one pytest run, written by the
//! freezegate pytest plugin, collected, deselected, ran and skipped, tied to its commit
//! and to the ledger its skips came from. Shards (one record each) merge: a test counts
//! as run if any shard ran it, and as deselected only if no shard ran it.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::error::GateError;
use crate::inputs::ids::{IdSet, IdSetBuilder};
use crate::inputs::junit::{Outcome, Results};
use crate::inputs::samples::{Count, Method, Samples};
use crate::inputs::InputPath;
use crate::source::Source;

mod scan;

pub const VERSION: i64 = 1;
/// The `kind` every run record carries, so another JSON file is never read as one.
pub const KIND: &str = "freezegate run record";

/// One record's identity, for FZ404: which commit and ledger the run was of.
#[derive(Debug, Clone)]
pub struct RecordHeader {
    pub file: String,
    pub commit: Option<String>,
    pub dirty: bool,
    pub ledger: Option<String>,
    pub ledger_sha256: Option<String>,
    /// What the plugin's census covered (`hooks`, `autouse fixtures`, `usefixtures`): a
    /// record of an older plugin covers less.
    pub census: Vec<String>,
    /// Why FZ404 refuses the record (another commit, another ledger); empty when it is
    /// of the commit and ledger under judgement. See [`Runs::judge_identity`].
    pub refused: Vec<String>,
}

impl RecordHeader {
    /// Why a record is not of `commit` and the ledger `ledger_sha256` (its name
    /// `ledger`): FZ404's findings.
    pub fn refusals(&self, commit: Option<&str>, ledger: &str, ledger_sha256: &str) -> Vec<String> {
        let mut why = Vec::new();
        if self.commit.as_deref() != commit {
            let none = "no commit (outside git)";
            why.push(format!(
                "{} is the run of {}, not of the commit under judgement, {}",
                self.file,
                self.commit.as_deref().unwrap_or(none),
                commit.unwrap_or(none)
            ));
        }
        if self.ledger_sha256.as_deref() != Some(ledger_sha256) {
            why.push(format!(
                "{} applied the skips of another ledger than {ledger} (sha256 {}, not {ledger_sha256})",
                self.file,
                self.ledger_sha256.as_deref().unwrap_or("none")
            ));
        }
        why
    }
}

/// Where a skip or xfail came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SkipSource {
    Ledger,
    Mark,
    Imperative,
    Collection,
}

/// What a record says of one test beyond its outcome (skips and xfails).
#[derive(Debug, Clone, Default)]
pub struct TestDetail {
    pub outcome: Option<Outcome>,
    pub reason: Option<String>,
    pub source: Option<SkipSource>,
    pub file: Option<String>,
    pub line: Option<u32>,
    /// Where the marker or call is beyond the test itself (see [`RunSkip::scope`]).
    pub scope: Option<String>,
    /// What set it there: the fixture's name, the hook's, `unittest`, `self.skipTest()`.
    pub origin: Option<String>,
}

/// A module skipped at collection (`pytest.importorskip`, `skip(allow_module_level)`).
#[derive(Debug, Clone, Deserialize)]
pub struct CollectionSkip {
    pub nodeid: String,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub line: Option<u32>,
}

/// One hook implementation of the census (see the plugin's `census.py`): outside pytest,
/// pytest-xdist, Hypothesis and freezegate, of a hook that can change an outcome or the
/// record.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
pub struct HookImpl {
    pub hook: String,
    pub plugin: String,
    #[serde(default)]
    pub function: String,
    /// Relative to pytest's rootdir; `None` for a plugin outside it (site-packages, a
    /// zip, C code), which its `plugin` names.
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub line: Option<u32>,
    #[serde(default)]
    pub wrapper: bool,
    /// An autouse or usefixtures fixture's reach: the node ids (a directory, a module, a
    /// class; `""` for the ini file's `usefixtures`) that list or mark it.
    #[serde(default)]
    pub reaches: Vec<String>,
}

/// A selecting option of pytest's ini `addopts` (`--deselect`, `-k`, `-m`, `--ignore`,
/// `--ignore-glob`), at its own line of the config file (relative to pytest's rootdir).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AddoptsOption {
    /// As a command line would write it: `-k 'not slow'`.
    pub option: String,
    pub flag: String,
    pub value: String,
    pub file: String,
    pub line: u32,
}

impl HookImpl {
    /// What identifies an implementation across runs: not its line, which moves with
    /// every edit above it, nor, where its file is known, its module's name, which
    /// pytest's import mode and an `__init__.py` decide (`test_a` or `tests.test_a`).
    pub fn key_text(&self) -> String {
        match &self.file {
            Some(file) => format!("{}||{}|{file}", self.hook, self.function),
            None => format!("{}|{}|{}|", self.hook, self.plugin, self.function),
        }
    }
}

/// How hard one Hypothesis test searches, as the plugin read its settings object
/// (`properties.py`): FZ304 compares a test's with the base run's.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PropertySettings {
    pub max_examples: u32,
    /// Hypothesis's `Phase` names (`explicit`, `reuse`, `generate`, ...).
    #[serde(default)]
    pub phases: Vec<String>,
    #[serde(default)]
    pub derandomize: bool,
    /// Whether an example database is on.
    #[serde(default)]
    pub database: bool,
    /// A `@given` test or a state machine (not only `@example`s).
    #[serde(default)]
    pub given: bool,
    /// Its explicit `@example`s.
    #[serde(default)]
    pub examples: u32,
    /// A state machine's steps per run (none for a `@given` test, whose search this
    /// setting does not touch).
    #[serde(default)]
    pub stateful_step_count: Option<u32>,
    /// Where the test is (its first decorator), relative to pytest's rootdir.
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub line: Option<u32>,
    /// The line of the test's own settings (`@settings(...)`, `TestX.settings = ...`)
    /// in `file`, when it has them; else the profile's are in force.
    #[serde(default)]
    pub settings_line: Option<u32>,
    /// The settings those set themselves (`max_examples`, `phases`, ...; `*` for a
    /// settings object with a parent, or not a call): the rest are the profile's.
    #[serde(default)]
    pub settings_keys: Option<Vec<String>>,
}

impl PropertySettings {
    /// Whether Hypothesis generates inputs for it (a `@given` test with the generate
    /// phase), rather than only running its explicit examples.
    pub fn generates(&self) -> bool {
        self.given && self.phases.iter().any(|p| p == "generate")
    }
}

/// The Hypothesis settings profile a run had in force, and the conftest line that
/// loads (else registers) it, when the plugin found one.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct SettingsProfile {
    pub name: String,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub line: Option<u32>,
}

/// The record's `hypothesis` object: every Hypothesis test's settings, by node id.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Properties {
    #[serde(default)]
    pub tests: BTreeMap<String, PropertySettings>,
    #[serde(default)]
    pub profile: Option<SettingsProfile>,
}

/// A tool module a run imported from outside the interpreter's install paths (see the
/// plugin's `census.tools`): FZ608 judges one from the repository.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
pub struct ToolModule {
    pub module: String,
    /// Relative to pytest's rootdir where it is inside it, else absolute.
    pub file: String,
}

impl ToolModule {
    /// Whether the module came from the repository (a file inside pytest's rootdir).
    pub fn is_shadowed(&self) -> bool {
        !self.file.starts_with('/') && !self.file.starts_with("../")
    }
}

/// Every run record given, merged.
#[derive(Debug, Clone)]
pub struct Runs {
    pub headers: Vec<RecordHeader>,
    /// Every id any shard collected, before deselection.
    pub collected: IdSet,
    /// The skips the ledger applied (source `ledger`) in the run.
    pub applied_skips: IdSet,
    pub results: Results,
    pub samples: Samples,
    /// Deselected (reported to `pytest_deselected`) and run by no shard.
    pub deselected: IdSet,
    /// Removed from the items without being reported, and run by no shard.
    pub dropped: IdSet,
    /// Markers of deselected and dropped items.
    pub markers: BTreeMap<String, Vec<String>>,
    /// Skips and xfails, by node id.
    pub details: BTreeMap<String, TestDetail>,
    /// Each collected test's first and last source line, by its place in `collected`
    /// (`(0, 0)` where unknown).
    pub lines: std::sync::Arc<Vec<(u32, u32)>>,
    /// Each collected test's code digest (its AST's sha256, first 64 bits), by its place
    /// in `collected` (`0` where unknown).
    pub digests: std::sync::Arc<Vec<u64>>,
    pub collection_skips: Vec<CollectionSkip>,
    /// What asked pytest to deselect (`-k`, `-m`, `--deselect`, `addopts`), per record.
    pub selection: Vec<String>,
    /// The line of pytest's config file that sets `addopts` (file relative to pytest's
    /// rootdir), when a record gave it.
    pub addopts_at: Option<(String, u32)>,
    /// Each selecting option of `addopts`, at its own line, when a record gave them.
    pub addopts_options: Vec<AddoptsOption>,
    /// The hook census of every record (each implementation once), sorted.
    pub hooks: Vec<HookImpl>,
    /// Where each record's run imported pytest, pluggy, Hypothesis and freezegate from.
    pub tools: Vec<ToolModule>,
    /// Every Hypothesis test's settings; `None` when no record had them (a record of an
    /// older plugin).
    pub properties: Option<std::sync::Arc<Properties>>,
}

/// A skip, xfail or collection skip of the run that the ledger did not apply.
#[derive(Debug, Clone)]
pub struct RunSkip {
    pub test_id: String,
    /// `skip`, `xfail` or `collection`.
    pub kind: &'static str,
    pub source: Option<SkipSource>,
    pub reason: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
    /// The text of the line that set it, to find above the reported line (a decorator,
    /// a module's `pytestmark`).
    pub find: Option<&'static str>,
    /// Where a marker or call is beyond the test itself: `module` (a `pytestmark`),
    /// `class` (a marker or `@unittest.skip` on its class), `method` (`@unittest.skip`
    /// on the method), `fixture` (`pytest.skip()` in a fixture), `hook` (a marker a
    /// conftest hook added), `hook-call` (`pytest.skip()` in a hook such as
    /// `pytest_runtest_setup`), `unittest` (`self.skipTest()`, `raise unittest.SkipTest`).
    pub scope: Option<String>,
    /// What set it: the fixture's or hook's name, `unittest`, `self.skipTest()`.
    pub origin: Option<String>,
}

impl Runs {
    /// Every skip and xfail of the run but the ledger's, and every collection skip.
    pub fn skips(&self) -> Vec<RunSkip> {
        let mut skips: Vec<RunSkip> = self
            .details
            .iter()
            .filter(|(_, d)| d.source != Some(SkipSource::Ledger))
            .filter_map(|(id, d)| {
                let kind = match d.outcome? {
                    Outcome::Skipped => "skip",
                    Outcome::Xfailed | Outcome::Xpassed => "xfail",
                    _ => return None,
                };
                // The plugin names the exact line of a fixture's, a hook's or unittest's
                // call; a marker is found from the reported line up.
                let find = match (d.source, d.scope.as_deref(), kind) {
                    (_, Some("fixture" | "hook" | "hook-call" | "unittest"), _) => None,
                    (Some(SkipSource::Mark), Some("module"), _) => Some("pytestmark"),
                    (Some(SkipSource::Mark), _, "xfail") => Some("xfail"),
                    (Some(SkipSource::Mark), _, _) => Some("skip"),
                    _ => None,
                };
                Some(RunSkip {
                    test_id: id.clone(),
                    kind,
                    source: d.source,
                    reason: d.reason.clone(),
                    file: d.file.clone(),
                    line: d.line,
                    find,
                    scope: d.scope.clone(),
                    origin: d.origin.clone(),
                })
            })
            .collect();
        skips.extend(self.collection_skips.iter().map(|c| RunSkip {
            test_id: c.nodeid.clone(),
            kind: "collection",
            source: Some(SkipSource::Collection),
            reason: c.reason.clone(),
            file: c.file.clone(),
            line: c.line,
            find: None,
            scope: None,
            origin: None,
        }));
        skips
    }

    /// Compares every record with the commit and the ledger under judgement: a record
    /// of another is refused (FZ404) and feeds no other rule.
    pub fn judge_identity(&mut self, commit: Option<&str>, ledger: &str, ledger_sha256: &str) {
        for header in &mut self.headers {
            header.refused = header.refusals(commit, ledger, ledger_sha256);
        }
    }

    /// Whether the run saw `test_id` (a test, or a file for a collection skip): it
    /// collected it and did not deselect or drop it. What FZ605 and `baseline --prune`
    /// judge a skip baseline's entry by: a run of part of the suite says nothing of the
    /// rest.
    pub fn saw(&self, test_id: &str) -> bool {
        self.collected.any_under(test_id)
            && !self.deselected.contains(test_id)
            && !self.dropped.contains(test_id)
    }

    /// For a command that reads the last run when given none (`freeze add`, `brief`): a
    /// note for each record of another commit than `head`, whose tests may not be this
    /// tree's (a test added since is not in it).
    pub fn other_commits(&self, head: Option<&str>) -> Vec<String> {
        let short = |c: &str| c.chars().take(12).collect::<String>();
        self.headers
            .iter()
            .filter(|h| h.commit.as_deref() != head)
            .map(|h| {
                format!(
                    "{} is the run of {}, not of HEAD ({})",
                    h.file,
                    h.commit.as_deref().map_or("no commit".into(), short),
                    head.map_or("no commit".into(), short)
                )
            })
            .collect()
    }

    /// What every record's census covered (FZ606 compares a run's census with the base
    /// run's only in what both covered).
    pub fn census(&self) -> Vec<String> {
        let mut covered = self
            .headers
            .first()
            .map(|h| h.census.clone())
            .unwrap_or_default();
        covered.retain(|kind| self.headers.iter().all(|h| h.census.contains(kind)));
        covered
    }

    /// Whether FZ404 refuses a record: then nothing of the run is a fact for the rules.
    pub fn is_refused(&self) -> bool {
        self.headers.iter().any(|h| !h.refused.is_empty())
    }

    /// The tests the record shows failed or errored, in collection order: the gate's
    /// verdict on outcomes, whatever pytest's exit status said.
    pub fn failures(&self) -> Vec<(&str, Outcome)> {
        self.collected
            .iter()
            .filter_map(|id| match self.results.outcome(id) {
                Some(outcome @ (Outcome::Failed | Outcome::Error)) => Some((id, outcome)),
                _ => None,
            })
            .collect()
    }

    /// A test's first and last source line, when the record gave them.
    pub fn lines_of(&self, id: &str) -> Option<(u32, u32)> {
        let at = self.collected.position(id)?;
        self.lines.get(at).copied().filter(|span| *span != (0, 0))
    }

    /// A test's code digest (normalized to the AST), when the record gave it.
    pub fn digest_of(&self, id: &str) -> Option<u64> {
        let at = self.collected.position(id)?;
        self.digests.get(at).copied().filter(|digest| *digest != 0)
    }
}

/// What the records add up to while they are read: every list goes straight into its
/// set, every test row into the arrays kept by the test's place in the collection, so a
/// record of a million tests is never held as a million parsed values.
#[derive(Default)]
struct Merge {
    collected: IdSetBuilder,
    /// By place in `collected`: the worst outcome any shard ran.
    outcomes: Vec<Option<Outcome>>,
    lines: Vec<(u32, u32)>,
    digests: Vec<u64>,
    applied: IdSetBuilder,
    deselected: IdSetBuilder,
    dropped: IdSetBuilder,
    samples: Samples,
    markers: BTreeMap<String, Vec<String>>,
    details: BTreeMap<String, TestDetail>,
    collection_skips: Vec<CollectionSkip>,
    selection: Vec<String>,
    addopts_at: Option<(String, u32)>,
    addopts_options: Vec<AddoptsOption>,
    hooks: std::collections::BTreeSet<HookImpl>,
    tools: std::collections::BTreeSet<ToolModule>,
    properties: Option<Properties>,
    /// Where the next `tests` row is expected in `collected`.
    next_row: usize,
    /// How many records were merged: the number of the one being read.
    records: usize,
    /// By place in `collected`: the number of the last record that listed the test as
    /// collected, and of the last that accounted for it (a row, a deselection).
    listed: Vec<u32>,
    accounted: Vec<u32>,
    /// The ids the record being read deselected or dropped.
    withdrawn_here: Vec<String>,
}

/// The record's lists of node ids.
#[derive(Clone, Copy)]
enum List {
    Collected,
    Deselected,
    Dropped,
}

impl List {
    fn of(key: &str) -> Option<List> {
        Some(match key {
            "collected" => List::Collected,
            "deselected" => List::Deselected,
            "dropped" => List::Dropped,
            _ => return None,
        })
    }
}

impl Merge {
    fn add(&mut self, list: List, id: &str) {
        match list {
            List::Collected => {
                let at = self.place(id);
                self.listed[at] = self.stamp();
            }
            List::Deselected => {
                self.deselected.push(id);
                self.withdrawn_here.push(id.to_string());
            }
            List::Dropped => {
                self.dropped.push(id);
                self.withdrawn_here.push(id.to_string());
            }
        }
    }

    /// The number of the record being read.
    fn stamp(&self) -> u32 {
        u32::try_from(self.records).unwrap_or(u32::MAX)
    }

    /// How many tests the record just read collected without accounting for them: no
    /// row, not deselected, not dropped. A record of a `--collect-only` run, or one a
    /// hook cut short, has them.
    fn unaccounted(&mut self, scanned: bool) -> usize {
        let stamp = self.stamp();
        if scanned {
            // The scanner read the first record's `collected` into the set directly.
            self.listed.iter_mut().for_each(|l| *l = stamp);
        }
        for id in std::mem::take(&mut self.withdrawn_here) {
            if let Some(at) = self.collected.position(&id) {
                self.accounted[at] = stamp;
            }
        }
        self.listed
            .iter()
            .zip(&self.accounted)
            .filter(|(listed, accounted)| **listed == stamp && **accounted != stamp)
            .count()
    }

    /// The test's place in the collection (a test that ran was collected).
    fn place(&mut self, id: &str) -> usize {
        let at = self.collected.insert(id);
        self.grow(at + 1);
        at
    }

    /// Room in the arrays kept by place for `len` collected tests.
    fn grow(&mut self, len: usize) {
        if len > self.outcomes.len() {
            self.outcomes.resize(len, None);
            self.lines.resize(len, (0, 0));
            self.digests.resize(len, 0);
            self.listed.resize(len, 0);
            self.accounted.resize(len, 0);
        }
    }

    /// The place of a `tests` row: the plugin writes them in collection order, so the
    /// place after the last row's is tried before the id is hashed.
    fn place_of_row(&mut self, id: &str) -> usize {
        let next = self.next_row;
        let at = if next < self.collected.len() && self.collected.get(next) == id {
            next
        } else {
            self.place(id)
        };
        self.next_row = at + 1;
        at
    }

    /// One `tests` row.
    fn row<E: de::Error>(&mut self, id: &str, raw: RawDetail) -> Result<(), E> {
        let at = self.place_of_row(id);
        self.row_at(at, id, raw)
    }

    /// One `tests` row, of the test at `at` in the collection.
    fn row_at<E: de::Error>(&mut self, at: usize, id: &str, raw: RawDetail) -> Result<(), E> {
        if self.accounted[at] == self.stamp() {
            return Err(E::custom(format!("duplicate key `{id}` in `tests`")));
        }
        let outcome = parse_outcome(&raw.outcome).ok_or_else(|| {
            E::custom(format!(
                "`{id}`: outcome `{}` is not passed, failed, error, skipped, xfailed or xpassed",
                raw.outcome
            ))
        })?;
        self.outcomes[at] = self.outcomes[at].max(Some(outcome));
        self.accounted[at] = self.stamp();
        if let Some(span) = raw.lines {
            self.lines[at] = span;
        }
        if let Some(digest) = raw.digest {
            self.digests[at] = parse_digest(&digest).ok_or_else(|| {
                E::custom(format!(
                    "`{id}`: digest `{digest}` is not 1 to 16 hexadecimal digits"
                ))
            })?;
        }
        if raw.reason.is_some() || raw.source.is_some() || raw.file.is_some() {
            if raw.source == Some(SkipSource::Ledger) && outcome == Outcome::Skipped {
                self.applied.push(id);
            }
            self.details.insert(
                id.to_string(),
                TestDetail {
                    outcome: Some(outcome),
                    reason: raw.reason.map(Cow::into_owned),
                    source: raw.source,
                    file: raw.file.map(Cow::into_owned),
                    line: raw.line,
                    scope: raw.scope,
                    origin: raw.origin,
                },
            );
        }
        Ok(())
    }
}

/// A record's own fields, read beside the merged lists.
#[derive(Default)]
struct Header {
    version: Option<i64>,
    kind: Option<String>,
    commit: Option<String>,
    dirty: bool,
    ledger: Option<String>,
    ledger_sha256: Option<String>,
    complete: Option<bool>,
    /// Why the plugin found the run incomplete.
    incomplete: Option<String>,
    census: Option<Vec<String>>,
    saw_collected: bool,
    saw_tests: bool,
    /// The top-level keys read so far: a key twice is an error, never "last one wins".
    keys: Vec<String>,
}

impl Header {
    /// Whether `key` was read before (and notes it).
    fn repeats(&mut self, key: &str) -> bool {
        if self.keys.iter().any(|k| k == key) {
            return true;
        }
        self.keys.push(key.to_string());
        false
    }
}

/// The value of one top-level key of a record, whichever reader found it.
struct Field<'k, 'm> {
    key: &'k str,
    merge: &'m mut Merge,
    header: &'m mut Header,
}

impl<'de> DeserializeSeed<'de> for Field<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        let (merge, header) = (self.merge, self.header);
        if let Some(list) = List::of(self.key) {
            header.saw_collected |= matches!(list, List::Collected);
            return Ids(|id: &str| merge.add(list, id)).deserialize(de);
        }
        match self.key {
            "version" => header.version = Deserialize::deserialize(de)?,
            "kind" => header.kind = Deserialize::deserialize(de)?,
            "commit" => header.commit = Deserialize::deserialize(de)?,
            "dirty" => header.dirty = Deserialize::deserialize(de)?,
            "ledger" => header.ledger = Deserialize::deserialize(de)?,
            "ledger_sha256" => header.ledger_sha256 = Deserialize::deserialize(de)?,
            "complete" => header.complete = Deserialize::deserialize(de)?,
            "census" => header.census = Deserialize::deserialize(de)?,
            "incomplete" => header.incomplete = Deserialize::deserialize(de)?,
            "tests" => {
                header.saw_tests = true;
                Seed {
                    merge,
                    header,
                    level: Level::Tests,
                }
                .deserialize(de)?
            }
            "markers" => {
                let markers: BTreeMap<String, Vec<String>> = Deserialize::deserialize(de)?;
                merge.markers.extend(markers);
            }
            "selection" => {
                let said: Vec<String> = Deserialize::deserialize(de)?;
                for item in said {
                    if !merge.selection.contains(&item) {
                        merge.selection.push(item);
                    }
                }
            }
            "addopts_at" => {
                #[derive(Deserialize)]
                struct At {
                    file: String,
                    line: u32,
                }
                let at: Option<At> = Deserialize::deserialize(de)?;
                if let Some(at) = at {
                    merge.addopts_at.get_or_insert((at.file, at.line));
                }
            }
            "addopts_options" => {
                let options: Vec<AddoptsOption> = Deserialize::deserialize(de)?;
                for option in options {
                    if !merge.addopts_options.contains(&option) {
                        merge.addopts_options.push(option);
                    }
                }
            }
            "hooks" => {
                let hooks: Vec<HookImpl> = Deserialize::deserialize(de)?;
                merge.hooks.extend(hooks);
            }
            "tools" => {
                let tools: Vec<ToolModule> = Deserialize::deserialize(de)?;
                merge.tools.extend(tools);
            }
            "hypothesis" => {
                let found: Properties = Deserialize::deserialize(de)?;
                let properties = merge.properties.get_or_insert_with(Properties::default);
                for (id, settings) in found.tests {
                    properties.tests.entry(id).or_insert(settings);
                }
                if properties.profile.is_none() {
                    properties.profile = found.profile;
                }
            }
            "collection_skips" => {
                let skips: Vec<CollectionSkip> = Deserialize::deserialize(de)?;
                merge.collection_skips.extend(skips);
            }
            "samples" => {
                let counts: BTreeMap<String, RawCount> = Deserialize::deserialize(de)?;
                for (property, count) in counts {
                    let method = match count.method.as_deref() {
                        Some("choice sequences") => Method::Choices,
                        Some("arguments") => Method::Arguments,
                        _ => Method::Given,
                    };
                    merge.samples.keep(
                        property,
                        Count {
                            distinct: count.distinct,
                            method,
                        },
                    );
                }
            }
            _ => {
                de::IgnoredAny::deserialize(de)?;
            }
        }
        Ok(())
    }
}

/// Which object a [`Seed`] reads.
#[derive(Clone, Copy)]
enum Level {
    /// The whole record: any JSON, with the parser's errors.
    Record,
    /// The `tests` object, each row merged as it is read.
    Tests,
}

/// The serde reader of a record, for both of its objects.
struct Seed<'m> {
    merge: &'m mut Merge,
    header: &'m mut Header,
    level: Level,
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self.level {
            Level::Record => "a run record (a JSON object)",
            Level::Tests => "an object of node id to {\"outcome\": ...}",
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match self.level {
                Level::Record if self.header.repeats(&key) => {
                    return Err(de::Error::custom(format!("duplicate key `{key}`")));
                }
                Level::Record => map.next_value_seed(Field {
                    key: &key,
                    merge: self.merge,
                    header: self.header,
                })?,
                Level::Tests => {
                    let raw: RawDetail<'de> = map.next_value()?;
                    self.merge.row(&key, raw)?;
                }
            }
        }
        Ok(())
    }
}

/// A list of node ids, each handed to `add` as it is read.
struct Ids<F>(F);

impl<'de, F: FnMut(&str)> DeserializeSeed<'de> for Ids<F> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(&str)> Visitor<'de> for Ids<F> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of node ids")
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        while let Some(id) = seq.next_element::<Cow<'de, str>>()? {
            (self.0)(&id);
        }
        Ok(())
    }
}

#[derive(Deserialize, Default)]
struct RawDetail<'a> {
    #[serde(borrow)]
    outcome: Cow<'a, str>,
    #[serde(default, borrow)]
    reason: Option<Cow<'a, str>>,
    #[serde(default)]
    source: Option<SkipSource>,
    #[serde(default, borrow)]
    file: Option<Cow<'a, str>>,
    #[serde(default)]
    line: Option<u32>,
    #[serde(default)]
    lines: Option<(u32, u32)>,
    #[serde(default, borrow)]
    digest: Option<Cow<'a, str>>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    origin: Option<String>,
}

/// A code digest as the plugin writes it: hex, the first 64 bits of a sha256.
fn parse_digest(text: &str) -> Option<u64> {
    (!text.is_empty() && text.len() <= 16 && text.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| u64::from_str_radix(text, 16).ok())
        .flatten()
}

#[derive(Deserialize)]
struct RawCount {
    distinct: i64,
    #[serde(default)]
    method: Option<String>,
}

fn parse_outcome(text: &str) -> Option<Outcome> {
    Some(match text {
        "passed" => Outcome::Passed,
        "failed" => Outcome::Failed,
        "error" => Outcome::Error,
        "skipped" => Outcome::Skipped,
        "xfailed" => Outcome::Xfailed,
        "xpassed" => Outcome::Xpassed,
        _ => return None,
    })
}

/// Where the plugin writes its record by default: the last run, when nothing else is named.
pub const LAST_RUN: &str = "gate/run.json";

/// The records an authoring command (`freeze`, `brief`) reads when none is given: those
/// `run` in config names, else the last run's [`LAST_RUN`] when there is one.
pub fn last_records(cwd: &std::path::Path, config: &crate::config::Config) -> Vec<InputPath> {
    let named: Vec<InputPath> = config
        .run
        .iter()
        .map(|path| InputPath::from_config(path, &config.repo_root))
        .collect();
    let last = config.repo_root.join(LAST_RUN);
    if named.is_empty() && last.is_file() {
        return vec![InputPath::from_cli(cwd, &last, &config.repo_root)];
    }
    named
}

impl Runs {
    /// Reads and merges every record; an incomplete record, or a file that is not a run
    /// record, is an input error naming it.
    pub fn load(paths: &[InputPath]) -> Result<Option<Runs>, GateError> {
        Runs::load_with(None, paths)
    }

    /// [`Runs::load`] with, first, the record a supervised run received (its text as it
    /// came over the pipe, not the file's).
    pub fn load_with(
        supervised: Option<&Source>,
        paths: &[InputPath],
    ) -> Result<Option<Runs>, GateError> {
        if paths.is_empty() && supervised.is_none() {
            return Ok(None);
        }
        let mut merge = Merge::default();
        let mut headers = Vec::new();
        if let Some(source) = supervised {
            headers.push(read_one(source, &mut merge)?);
        }
        for path in paths {
            // One record at a time: its text is freed before the next is read.
            let source = path.read()?;
            headers.push(read_one(&source, &mut merge)?);
        }
        Ok(Some(Runs::finish(headers, merge)))
    }

    #[cfg(test)]
    fn parse(sources: &[Source], reader: Reader) -> Result<Runs, GateError> {
        let mut merge = Merge::default();
        let mut headers = Vec::new();
        for source in sources {
            headers.push(read_with(source, &mut merge, reader)?);
        }
        Ok(Runs::finish(headers, merge))
    }

    fn finish(headers: Vec<RecordHeader>, merge: Merge) -> Runs {
        let collected = merge.collected.build();
        let results = Results::by_place(collected.clone(), merge.outcomes);
        // A test that ran in another shard was not withdrawn.
        let not_run = |set: IdSetBuilder| -> IdSet {
            set.build()
                .iter()
                .filter(|id| results.outcome(id).is_none())
                .collect()
        };
        Runs {
            headers,
            applied_skips: merge.applied.build(),
            deselected: not_run(merge.deselected),
            dropped: not_run(merge.dropped),
            collected,
            results,
            samples: Samples {
                has_properties: true,
                ..merge.samples
            },
            markers: merge.markers,
            details: merge.details,
            lines: std::sync::Arc::new(merge.lines),
            digests: std::sync::Arc::new(merge.digests),
            collection_skips: merge.collection_skips,
            selection: merge.selection,
            addopts_at: merge.addopts_at,
            addopts_options: merge.addopts_options,
            hooks: merge.hooks.into_iter().collect(),
            tools: merge.tools.into_iter().collect(),
            properties: merge.properties.map(std::sync::Arc::new),
        }
    }
}

const HELP: &str = concat!(
    "write it with the freezegate pytest plugin: `pytest --freezegate` (see ",
    crate::docs_url!("pytest-plugin/"),
    ")"
);

/// Which reader a record goes through.
#[derive(Clone, Copy, PartialEq)]
enum Reader {
    /// The scanner for the first record, serde for the rest.
    Fastest,
    #[cfg(test)]
    Serde,
}

fn read_one(source: &Source, merge: &mut Merge) -> Result<RecordHeader, GateError> {
    read_with(source, merge, Reader::Fastest)
}

fn read_with(
    source: &Source,
    merge: &mut Merge,
    reader: Reader,
) -> Result<RecordHeader, GateError> {
    let mut header = Header::default();
    // The first record is scanned the way the plugin writes it; anything else, and any
    // record after the first, goes through serde, which also words the errors.
    let first = merge.records == 0;
    merge.records += 1;
    let scanned =
        reader == Reader::Fastest && first && scan::read(source, merge, &mut header).is_ok();
    if !scanned && first {
        (*merge, header) = Default::default();
        merge.records = 1;
    }
    if scanned {
        return check_header(source, header).and_then(|h| check_accounted(source, merge, h, true));
    }
    let mut de = serde_json::Deserializer::from_str(&source.text);
    Seed {
        merge,
        header: &mut header,
        level: Level::Record,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end())
    .map_err(|e| {
        let at = source.json_error_span(&e).unwrap_or(0..0);
        GateError::new(
            &source.name,
            format!(
                "is not a freezegate run record: {}",
                crate::error::json_message(&e)
            ),
        )
        .at(source, at, "here")
        .with_help(HELP)
    })?;
    check_header(source, header).and_then(|h| check_accounted(source, merge, h, false))
}

/// A complete record accounts for every test it collected: a row for each, unless it
/// was deselected or dropped. One that does not (a `--collect-only` run written as a
/// record, a record a hook cut down) is incomplete.
fn check_accounted(
    source: &Source,
    merge: &mut Merge,
    header: RecordHeader,
    scanned: bool,
) -> Result<RecordHeader, GateError> {
    match merge.unaccounted(scanned) {
        0 => Ok(header),
        n => Err(GateError::new(
            &source.name,
            format!(
                "is an incomplete run record: {} it collected {} no outcome, and {} not deselected",
                crate::words::count_of(n, "test"),
                if n == 1 { "has" } else { "have" },
                if n == 1 { "was" } else { "were" },
            ),
        )
        .with_help("judge the record of a whole test run (`pytest --freezegate`, or `freezegate run`): a collection (`--collect-only`) is not a run")),
    }
}

fn check_header(source: &Source, header: Header) -> Result<RecordHeader, GateError> {
    if header.kind.as_deref() != Some(KIND) {
        return Err(GateError::new(
            &source.name,
            format!("is not a freezegate run record (its `kind` is not \"{KIND}\")"),
        )
        .with_help(HELP));
    }
    if header.version != Some(VERSION) {
        return Err(GateError::new(
            &source.name,
            format!(
                "is a run record of version {}; this freezegate reads version {VERSION}",
                header.version.map_or("(none)".into(), |v| v.to_string())
            ),
        )
        .with_help("use the plugin of the same freezegate release as the gate"));
    }
    if !header.saw_collected || !header.saw_tests {
        return Err(GateError::new(
            &source.name,
            "is a run record without `collected` or `tests`",
        )
        .with_help(HELP));
    }
    if header.complete != Some(true) {
        let why = header
            .incomplete
            .as_deref()
            .unwrap_or("the session was interrupted, a worker crashed or collection failed");
        return Err(
            GateError::new(&source.name, format!("is an incomplete run record: {why}"))
                .with_help("judge a complete run: a gate never passes on part of a test run"),
        );
    }
    Ok(RecordHeader {
        file: source.name.clone(),
        commit: header.commit,
        dirty: header.dirty,
        ledger: header.ledger,
        ledger_sha256: header.ledger_sha256,
        census: header.census.unwrap_or_else(|| vec!["hooks".to_string()]),
        refused: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    fn record(extra: &str) -> String {
        format!(
            "{{\"version\": 1, \"kind\": \"{KIND}\", \"commit\": \"abc\", \"dirty\": false, \"ledger\": \"gate/l.json\", \"ledger_sha256\": \"00\", \"complete\": true, {extra}}}"
        )
    }

    fn sources(texts: &[String]) -> Vec<Source> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| SourceFile::new(format!("run{i}.json"), "r.json", t.clone()))
            .collect()
    }

    /// Through the reader `load` uses, checked against serde's reading of the same text.
    fn parse(texts: &[String]) -> Result<Runs, GateError> {
        let fastest = Runs::parse(&sources(texts), Reader::Fastest);
        let serde = Runs::parse(&sources(texts), Reader::Serde);
        match (&fastest, &serde) {
            (Ok(fastest), Ok(serde)) => assert_eq!(summary(fastest), summary(serde)),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            _ => panic!("the readers disagree: {fastest:?} against {serde:?}"),
        }
        fastest
    }

    /// Everything a record gave, in one comparable text.
    fn summary(runs: &Runs) -> String {
        let ids = |set: &IdSet| set.iter().collect::<Vec<_>>().join(" ");
        let tests: Vec<String> = runs
            .collected
            .iter()
            .map(|id| {
                format!(
                    "{id}={:?}@{:?}#{:?}",
                    runs.results.outcome(id),
                    runs.lines_of(id),
                    runs.digest_of(id)
                )
            })
            .collect();
        let headers: Vec<_> = runs
            .headers
            .iter()
            .map(|h| (&h.commit, h.dirty, &h.ledger, &h.ledger_sha256))
            .collect();
        format!(
            "{headers:?}\ncollected {}\napplied {}\ndeselected {}\ndropped {}\n{tests:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
            ids(&runs.collected),
            ids(&runs.applied_skips),
            ids(&runs.deselected),
            ids(&runs.dropped),
            runs.details,
            runs.markers,
            runs.collection_skips,
            runs.selection,
            runs.samples.distinct("p.py::p"),
        )
    }

    /// Whether the scanner takes the text (the first record as the plugin writes it).
    fn scanned(text: &str) -> bool {
        let source = SourceFile::new("run.json", "run.json", text.to_string());
        // The first record, as `read_with` numbers it.
        let mut merge = Merge {
            records: 1,
            ..Merge::default()
        };
        scan::read(&source, &mut merge, &mut Header::default()).is_ok()
    }

    /// The record in the plugin's spelling: one line, no spaces.
    fn compact(extra: &str) -> String {
        let value: serde_json::Value = serde_json::from_str(&record(extra)).unwrap();
        serde_json::to_string(&value).unwrap()
    }

    #[test]
    fn the_scanner_reads_what_the_plugin_writes_as_serde_does() {
        let plugin = compact(
            r#""collected": ["t.py::a", "t.py::b[x-1]", "t.py::c", "u.py::d"],
               "deselected": ["u.py::d"], "dropped": [], "markers": {"u.py::d": ["slow"]},
               "tests": {"t.py::a": {"outcome": "passed", "lines": [3, 5], "digest": "9f86d081884c7d65"},
                         "t.py::b[x-1]": {"outcome": "skipped", "reason": "frozen", "source": "ledger", "file": "t.py", "line": 7, "lines": [7, 9], "digest": "00000000000000a1"},
                         "t.py::c": {"outcome": "xfailed", "reason": "bug", "source": "mark", "file": "t.py", "line": 11}},
               "collection_skips": [{"nodeid": "v.py", "reason": "no numpy", "file": "v.py", "line": 1}],
               "samples": {"p.py::p": {"distinct": 9, "method": "choice sequences"}},
               "selection": ["-k not d"]"#,
        );
        assert!(scanned(&plugin), "{plugin}");
        let runs = parse(&[plugin]).unwrap();
        assert_eq!(runs.collected.len(), 4);
        assert_eq!(runs.results.outcome("t.py::c"), Some(Outcome::Xfailed));
        assert!(runs.applied_skips.contains("t.py::b[x-1]"));
        assert_eq!(runs.lines_of("t.py::a"), Some((3, 5)));
        assert_eq!(runs.lines_of("t.py::b[x-1]"), Some((7, 9)));
        assert_eq!(runs.digest_of("t.py::a"), Some(0x9f86_d081_884c_7d65));
        assert_eq!(runs.digest_of("t.py::b[x-1]"), Some(0xa1));
        assert_eq!(runs.digest_of("t.py::c"), None);
        assert_eq!(runs.deselected.iter().collect::<Vec<_>>(), ["u.py::d"]);
        assert_eq!(runs.samples.distinct("p.py::p"), Some(9));
    }

    /// What a census covered is what every merged record's covered: a shard of an older
    /// plugin (no `census`) makes the whole run's hooks alone.
    #[test]
    fn the_census_covers_what_every_record_covered() {
        let full = r#""collected": ["t.py::a"], "tests": {"t.py::a": {"outcome": "passed"}}, "census": ["hooks", "autouse fixtures"]"#;
        let older = r#""collected": ["t.py::b"], "tests": {"t.py::b": {"outcome": "passed"}}"#;
        let runs = parse(&[compact(full)]).unwrap();
        assert_eq!(runs.census(), ["hooks", "autouse fixtures"]);
        let runs = parse(&[compact(full), compact(older)]).unwrap();
        assert_eq!(runs.census(), ["hooks"]);
    }

    /// On Windows the plugin's text-mode write ends the record with CRLF, and a record
    /// pretty-printed by hand there has CRLF between its lines: the same record.
    #[test]
    fn a_record_with_crlf_line_ends_reads_like_its_lf_twin() {
        let rows = r#""collected": ["t.py::a", "t.py::b"],
               "tests": {"t.py::a": {"outcome": "passed", "lines": [3, 5]},
                         "t.py::b": {"outcome": "skipped", "reason": "frozen", "source": "ledger", "file": "t.py", "line": 7}},
               "samples": {"p.py::p": {"distinct": 9, "method": "choice sequences"}}"#;
        let plugin = compact(rows);
        let lf = summary(&parse(&[format!("{plugin}\n")]).unwrap());
        assert!(
            scanned(&format!("{plugin}\r\n")),
            "the scanner takes a CRLF end"
        );
        for crlf in [format!("{plugin}\r\n"), record(rows).replace('\n', "\r\n")] {
            assert_eq!(summary(&parse(&[crlf]).unwrap()), lf);
        }
    }

    #[test]
    fn records_the_scanner_hands_to_serde_read_the_same() {
        let cases = [
            // Pretty-printed, with an escape, rows before `collected` and out of its
            // order, an id collected twice.
            record(
                r#""tests": {"t.py::b": {"outcome": "failed"}, "t.py::a": {"outcome": "passed", "lines": [1, 2]}, "t.py::\"q\"": {"outcome": "passed"}},
                   "collected": ["t.py::a", "t.py::b", "t.py::a", "t.py::\"q\""]"#,
            ),
            // An id collected twice; a row of a test not collected.
            compact(
                r#""collected": ["t.py::a", "t.py::b", "t.py::a"], "tests": {"t.py::a": {"outcome": "passed"}, "t.py::b": {"outcome": "error", "lines": [4, 4]}, "t.py::z": {"outcome": "passed"}}"#,
            ),
            // Rows out of collection order.
            compact(
                r#""collected": ["t.py::a", "t.py::b"], "tests": {"t.py::b": {"outcome": "passed", "lines": [4, 6]}, "t.py::a": {"outcome": "skipped", "lines": [1, 3]}}"#,
            ),
            compact(
                r#""collected": ["t.py::\u00e9"], "tests": {"t.py::é": {"outcome": "passed", "lines": [10, 4000000000]}}"#,
            ),
            compact(
                r#""collected": ["a.py::x"], "tests": {"a.py::x": {"outcome": "passed", "lines": [1, 2], "extra": null}}"#,
            ),
            // With the one before it, two shards: the second is serde's whatever it is.
            compact(
                r#""collected": ["a.py::x", "a.py::y"], "deselected": ["a.py::x"], "tests": {"a.py::y": {"outcome": "passed"}}"#,
            ),
        ];
        for case in &cases {
            parse(std::slice::from_ref(case)).unwrap();
        }
        let shards = parse(&cases[4..]).unwrap();
        assert_eq!(shards.collected.len(), 2);
        assert!(!scanned(&cases[0]), "an escaped id is serde's");
        assert!(!scanned(&cases[1]), "an id collected twice is serde's");
    }

    #[test]
    fn bad_records_get_serde_s_error_whichever_reader_met_them() {
        let good = compact(
            r#""collected": ["a.py::x"], "tests": {"a.py::x": {"outcome": "passed", "lines": [1, 2]}}"#,
        );
        assert!(scanned(&good));
        for bad in [
            good.replace("\"passed\"", "\"maybe\""),
            good.replace("[1,2]", "[01,2]"),
            good.replace("[1,2]", "[1,2,]"),
            good.replace("[1,2]", "[1,4294967296]"),
            good.replace("[\"a.py::x\"]", "[,\"a.py::x\"]"),
            good.replace("[\"a.py::x\"]", "[\"a.py::x\",]"),
            good.replace("}}", "},}"),
            format!("{good}x"),
            good.replace("\"outcome\":\"passed\",", ""),
            good.replace(
                "\"outcome\":\"passed\"",
                "\"outcome\":\"passed\",\"outcome\":\"failed\"",
            ),
            good.replace("a.py::x\"]", "a.py::\u{1}x\"]"),
            good.replace("[1,2]", "[1,2],\"digest\":\"xyz\""),
            good.replace("[1,2]", "[1,2],\"digest\":\"\""),
            good.replace("[1,2]", "[1,2],\"digest\":\"00112233445566778\""),
        ] {
            assert!(!scanned(&bad), "{bad}");
            let err = parse(std::slice::from_ref(&bad)).unwrap_err();
            assert!(
                err.to_string().contains("is not a freezegate run record"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn a_key_or_a_test_given_twice_is_refused_never_last_one_wins() {
        let good =
            compact(r#""collected": ["a.py::x"], "tests": {"a.py::x": {"outcome": "failed"}}"#);
        assert!(scanned(&good));
        for (bad, said) in [
            (
                good.replace("\"tests\":", "\"complete\":true,\"tests\":"),
                "duplicate key `complete`",
            ),
            (
                good.replace(
                    "{\"a.py::x\":{\"outcome\":\"failed\"}}",
                    "{\"a.py::x\":{\"outcome\":\"failed\"},\"a.py::x\":{\"outcome\":\"passed\"}}",
                ),
                "duplicate key `a.py::x` in `tests`",
            ),
        ] {
            assert_ne!(bad, good);
            assert!(!scanned(&bad), "{bad}");
            let err = parse(std::slice::from_ref(&bad)).unwrap_err();
            assert!(err.to_string().contains(said), "{bad}: {err}");
        }
    }

    #[test]
    fn shards_merge_a_test_run_anywhere_was_not_withdrawn() {
        let one = record(
            r#""collected": ["t.py::a", "t.py::b", "t.py::c"], "deselected": ["t.py::b", "t.py::c"],
               "tests": {"t.py::a": {"outcome": "passed", "lines": [3, 5]}}"#,
        );
        let two = record(
            r#""collected": ["t.py::a", "t.py::b", "t.py::c"], "deselected": ["t.py::a", "t.py::c"],
               "tests": {"t.py::b": {"outcome": "skipped", "reason": "frozen", "source": "ledger"}},
               "samples": {"p.py::p": {"distinct": 9, "method": "choice sequences"}}"#,
        );
        let runs = parse(&[one, two]).unwrap();
        assert_eq!(runs.collected.len(), 3);
        assert_eq!(runs.deselected.iter().collect::<Vec<_>>(), ["t.py::c"]);
        assert_eq!(runs.results.outcome("t.py::a"), Some(Outcome::Passed));
        assert_eq!(runs.results.outcome("t.py::b"), Some(Outcome::Skipped));
        assert!(runs.applied_skips.contains("t.py::b"));
        assert_eq!(runs.samples.distinct("p.py::p"), Some(9));
        assert_eq!(runs.lines_of("t.py::a"), Some((3, 5)));
        assert_eq!(runs.lines_of("t.py::b"), None);
    }

    #[test]
    fn a_record_that_does_not_account_for_a_collected_test_is_incomplete() {
        // What `pytest --collect-only` wrote as a record before 0.3: every id, no outcome.
        let collection = compact(r#""collected": ["t.py::a", "t.py::b", "t.py::c"], "tests": {}"#);
        assert!(scanned(&collection));
        let err = parse(&[collection]).unwrap_err();
        assert!(
            err.to_string()
                .contains("is an incomplete run record: 3 tests it collected have no outcome"),
            "{err}"
        );
        // A row or a deselection accounts for a test, in each record on its own.
        let one = compact(
            r#""collected": ["t.py::a", "t.py::b"], "deselected": ["t.py::b"], "tests": {"t.py::a": {"outcome": "passed"}}"#,
        );
        let two = record(
            r#""collected": ["t.py::a", "t.py::b"], "tests": {"t.py::b": {"outcome": "passed"}}"#,
        );
        let err = parse(&[one.clone(), two]).unwrap_err();
        assert!(
            err.to_string()
                .contains("1 test it collected has no outcome"),
            "{err}"
        );
        assert!(err.to_string().starts_with("run1.json"), "{err}");
        let two = record(
            r#""collected": ["t.py::a", "t.py::b"], "deselected": ["t.py::a"], "tests": {"t.py::b": {"outcome": "passed"}}"#,
        );
        assert_eq!(parse(&[one, two]).unwrap().collected.len(), 2);
    }

    #[test]
    fn an_incomplete_or_foreign_file_is_refused() {
        let incomplete = record(r#""collected": [], "tests": {}"#)
            .replace("\"complete\": true", "\"complete\": false");
        let err = parse(&[incomplete]).unwrap_err();
        assert!(err.to_string().contains("incomplete run record"), "{err}");
        let err = parse(&["{\"schema\": 1, \"freezes\": []}".into()]).unwrap_err();
        assert!(
            err.to_string().contains("is not a freezegate run record"),
            "{err}"
        );
        let bad = record(r#""collected": [], "tests": {"t.py::a": {"outcome": "maybe"}}"#);
        let err = parse(&[bad]).unwrap_err();
        assert!(err.to_string().contains("outcome `maybe`"), "{err}");
    }

    #[test]
    fn hypothesis_settings_are_read_and_merged_and_an_older_record_has_none() {
        let settings = |n: u32, extra: &str| {
            format!(
                r#"{{"max_examples": {n}, "phases": ["explicit", "generate"], "derandomize": false, "database": true, "given": true, "examples": 0, "file": "p.py", "line": 3{extra}}}"#
            )
        };
        let first = compact(&format!(
            r#""collected": ["p.py::p"], "tests": {{"p.py::p": {{"outcome": "passed"}}}},
               "hypothesis": {{"tests": {{"p.py::p": {}}}, "profile": {{"name": "ci", "file": "conftest.py", "line": 4}}}}"#,
            settings(100, "")
        ));
        let second = compact(&format!(
            r#""collected": ["q.py::q"], "tests": {{"q.py::q": {{"outcome": "passed"}}}},
               "hypothesis": {{"tests": {{"q.py::q": {}}}, "profile": null}}"#,
            settings(
                5,
                r#", "settings_line": 2, "settings_keys": ["max_examples"]"#
            )
        ));
        let runs = parse(&[first.clone(), second]).unwrap();
        let properties = runs.properties.as_deref().unwrap();
        let p = &properties.tests["p.py::p"];
        assert_eq!((p.max_examples, p.settings_line), (100, None));
        assert!(p.generates());
        let q = &properties.tests["q.py::q"];
        assert_eq!(q.max_examples, 5);
        assert_eq!(q.settings_line, Some(2));
        assert_eq!(
            q.settings_keys.as_deref(),
            Some(&["max_examples".to_string()][..])
        );
        let profile = properties.profile.as_ref().unwrap();
        assert_eq!((profile.name.as_str(), profile.line), ("ci", Some(4)));
        // Only explicit examples: no generation.
        let explicit = PropertySettings {
            phases: vec!["explicit".into()],
            ..p.clone()
        };
        assert!(!explicit.generates());

        // A record of a plugin that did not record settings: none, and no error.
        let older =
            record(r#""collected": ["p.py::p"], "tests": {"p.py::p": {"outcome": "passed"}}"#);
        assert!(parse(&[older]).unwrap().properties.is_none());
        // A malformed count is an error, not a silent zero.
        let bad = first.replace("\"max_examples\":100", "\"max_examples\":\"many\"");
        assert_ne!(bad, first);
        assert!(parse(&[bad]).is_err());
    }
}
