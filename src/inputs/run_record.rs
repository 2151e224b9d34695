//! The run record (`gate/run.json`, version 1): what one pytest run, written by the
//! freezegate pytest plugin, collected, deselected, ran and skipped, tied to its commit
//! and to the ledger its skips came from. Shards (one record each) merge: a test counts
//! as run if any shard ran it, and as deselected only if no shard ran it.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::error::InputError;
use crate::inputs::ids::{IdSet, IdSetBuilder};
use crate::inputs::junit::{Outcome, Results};
use crate::inputs::samples::{Count, Method, Samples};
use crate::inputs::InputPath;
use crate::source::Source;

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
    /// `module` for a marker set by a module's `pytestmark`.
    pub scope: Option<String>,
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
    pub collection_skips: Vec<CollectionSkip>,
    /// What asked pytest to deselect (`-k`, `-m`, `--deselect`, `addopts`), per record.
    pub selection: Vec<String>,
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
                let find = match (d.source, d.scope.as_deref(), kind) {
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
        }));
        skips
    }

    /// A test's first and last source line, when the record gave them.
    pub fn lines_of(&self, id: &str) -> Option<(u32, u32)> {
        let at = self.collected.position(id)?;
        self.lines.get(at).copied().filter(|span| *span != (0, 0))
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
    applied: IdSetBuilder,
    deselected: IdSetBuilder,
    dropped: IdSetBuilder,
    samples: Samples,
    markers: BTreeMap<String, Vec<String>>,
    details: BTreeMap<String, TestDetail>,
    collection_skips: Vec<CollectionSkip>,
    selection: Vec<String>,
}

impl Merge {
    /// The test's place in the collection (a test that ran was collected).
    fn place(&mut self, id: &str) -> usize {
        let at = self.collected.insert(id);
        if at >= self.outcomes.len() {
            self.outcomes.resize(at + 1, None);
            self.lines.resize(at + 1, (0, 0));
        }
        at
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
    saw_collected: bool,
    saw_tests: bool,
}

struct RecordSeed<'m> {
    merge: &'m mut Merge,
    header: &'m mut Header,
}

impl<'de> DeserializeSeed<'de> for RecordSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RecordSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a run record (a JSON object)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (merge, header) = (self.merge, self.header);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "version" => header.version = map.next_value()?,
                "kind" => header.kind = map.next_value()?,
                "commit" => header.commit = map.next_value()?,
                "dirty" => header.dirty = map.next_value()?,
                "ledger" => header.ledger = map.next_value()?,
                "ledger_sha256" => header.ledger_sha256 = map.next_value()?,
                "complete" => header.complete = map.next_value()?,
                "collected" => {
                    header.saw_collected = true;
                    map.next_value_seed(Ids(|id: &str| {
                        merge.place(id);
                    }))?
                }
                "deselected" => map.next_value_seed(Ids(|id: &str| {
                    merge.deselected.push(id);
                }))?,
                "dropped" => map.next_value_seed(Ids(|id: &str| {
                    merge.dropped.push(id);
                }))?,
                "tests" => {
                    header.saw_tests = true;
                    map.next_value_seed(Tests(merge))?
                }
                "markers" => {
                    let markers: BTreeMap<String, Vec<String>> = map.next_value()?;
                    merge.markers.extend(markers);
                }
                "selection" => {
                    let said: Vec<String> = map.next_value()?;
                    for item in said {
                        if !merge.selection.contains(&item) {
                            merge.selection.push(item);
                        }
                    }
                }
                "collection_skips" => {
                    let skips: Vec<CollectionSkip> = map.next_value()?;
                    merge.collection_skips.extend(skips);
                }
                "samples" => {
                    let counts: BTreeMap<String, RawCount> = map.next_value()?;
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
                    map.next_value::<de::IgnoredAny>()?;
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

/// The `tests` object, each row merged as it is read.
struct Tests<'m>(&'m mut Merge);

impl<'de> DeserializeSeed<'de> for Tests<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Tests<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of node id to {\"outcome\": ...}")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let merge = self.0;
        while let Some(id) = map.next_key::<Cow<'de, str>>()? {
            let raw: RawDetail<'de> = map.next_value()?;
            let outcome = parse_outcome(&raw.outcome).ok_or_else(|| {
                de::Error::custom(format!(
                    "`{id}`: outcome `{}` is not passed, failed, error, skipped, xfailed or xpassed",
                    raw.outcome
                ))
            })?;
            let at = merge.place(&id);
            merge.outcomes[at] = merge.outcomes[at].max(Some(outcome));
            if let Some(span) = raw.lines {
                merge.lines[at] = span;
            }
            if raw.reason.is_some() || raw.source.is_some() || raw.file.is_some() {
                if raw.source == Some(SkipSource::Ledger) && outcome == Outcome::Skipped {
                    merge.applied.push(&id);
                }
                merge.details.insert(
                    id.to_string(),
                    TestDetail {
                        outcome: Some(outcome),
                        reason: raw.reason.map(Cow::into_owned),
                        source: raw.source,
                        file: raw.file.map(Cow::into_owned),
                        line: raw.line,
                        scope: raw.scope,
                    },
                );
            }
        }
        Ok(())
    }
}

#[derive(Deserialize)]
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
    #[serde(default)]
    scope: Option<String>,
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

impl Runs {
    /// Reads and merges every record; an incomplete record, or a file that is not a run
    /// record, is an input error naming it.
    pub fn load(paths: &[InputPath]) -> Result<Option<Runs>, InputError> {
        if paths.is_empty() {
            return Ok(None);
        }
        let mut merge = Merge::default();
        let mut headers = Vec::new();
        for path in paths {
            // One record at a time: its text is freed before the next is read.
            let source = path.read()?;
            headers.push(read_one(&source, &mut merge)?);
        }
        Ok(Some(Runs::finish(headers, merge)))
    }

    pub fn parse(sources: &[Source]) -> Result<Runs, InputError> {
        let mut merge = Merge::default();
        let mut headers = Vec::new();
        for source in sources {
            headers.push(read_one(source, &mut merge)?);
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
            collection_skips: merge.collection_skips,
            selection: merge.selection,
        }
    }
}

fn read_one(source: &Source, merge: &mut Merge) -> Result<RecordHeader, InputError> {
    let help = "write it with the freezegate pytest plugin: `pytest --freezegate` (see the README's \"pytest plugin\")";
    let mut header = Header::default();
    let mut de = serde_json::Deserializer::from_str(&source.text);
    RecordSeed {
        merge,
        header: &mut header,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end())
    .map_err(|e| {
        let at = source.offset_of(e.line().max(1), e.column().max(1));
        InputError::new(
            &source.name,
            format!(
                "is not a freezegate run record: {}",
                crate::error::json_message(&e)
            ),
        )
        .at(source, at..at, "here")
        .with_help(help)
    })?;
    if header.kind.as_deref() != Some(KIND) {
        return Err(InputError::new(
            &source.name,
            format!("is not a freezegate run record (its `kind` is not \"{KIND}\")"),
        )
        .with_help(help));
    }
    if header.version != Some(VERSION) {
        return Err(InputError::new(
            &source.name,
            format!(
                "is a run record of version {}; this freezegate reads version {VERSION}",
                header.version.map_or("(none)".into(), |v| v.to_string())
            ),
        )
        .with_help("use the plugin of the same freezegate release as the gate"));
    }
    if !header.saw_collected || !header.saw_tests {
        return Err(InputError::new(
            &source.name,
            "is a run record without `collected` or `tests`",
        )
        .with_help(help));
    }
    if header.complete != Some(true) {
        return Err(InputError::new(
            &source.name,
            "is an incomplete run record: the session was interrupted, a worker crashed or collection failed",
        )
        .with_help("judge a complete run: a gate never passes on part of a test run"));
    }
    Ok(RecordHeader {
        file: source.name.clone(),
        commit: header.commit,
        dirty: header.dirty,
        ledger: header.ledger,
        ledger_sha256: header.ledger_sha256,
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

    fn parse(texts: &[String]) -> Result<Runs, InputError> {
        let sources: Vec<Source> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| SourceFile::new(format!("run{i}.json"), "r.json", t.clone()))
            .collect();
        Runs::parse(&sources)
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
}
