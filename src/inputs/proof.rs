//! The proof record (`gate/proof.json`, version 2) that `freezegate prove` writes: for
//! each freeze, the mutants of the code the frozen test guards, which of them the frozen
//! test kills, which of those the rest of the suite kills too (what is left is the
//! frozen test's *unique* coverage, what its freeze takes away) and which the
//! compensating properties kill, tied to its commit and ledger.
//! Shards (one record each) merge: a freeze is proven once the union of its mutants over
//! every record is all the mutants at stake.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::GateError;
use crate::inputs::InputPath;
use crate::source::Source;
#[cfg(test)]
use crate::source::SourceFile;

pub const VERSION: i64 = 2;
/// Records before version 2 do not say which kills the rest of the suite shares.
const OLDER: &str = "1";
/// The `kind` every proof record carries, so another JSON file is never read as one.
pub const KIND: &str = "freezegate proof record";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProofRecord {
    pub version: i64,
    pub kind: String,
    pub commit: Option<String>,
    pub dirty: bool,
    pub ledger: String,
    pub ledger_sha256: String,
    pub engine: Engine,
    /// Every freeze finished: no budget or mutant limit was hit.
    pub complete: bool,
    /// `[index, count]` of a sharded proof (1-based index).
    pub shard: Option<[u32; 2]>,
    pub freezes: Vec<FreezeProof>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Engine {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FreezeProof {
    pub test_id: String,
    pub properties: Vec<String>,
    /// The code at stake: the project functions the frozen test runs.
    pub stake: Vec<StakeFunction>,
    /// The frozen test's outcome alone on the unmutated code: `passed`, `failed` (every
    /// time of three, derandomized) or `flaky` (some of them).
    pub frozen_clean: String,
    /// The patch changed the frozen test's definition: the proof ran it as it was at
    /// base (a patch can gut the test it freezes, and the skip hides it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub frozen_at_base: bool,
    /// A test the patch removed (or the ledger retires), proven from its file as the base
    /// had it: the "frozen test" is the removed one, and its unique kills are what the
    /// removal withdraws.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub removed: bool,
    /// A removed test the patch renamed out of collection: the name its file defines it
    /// under now, which pytest does not collect (`xtest_total`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renamed_to: Option<String>,
    /// A test the patch edited, proven as the base defined it, with the patch's version
    /// (`name__as_patched`) as its one property: FZ214 asks it to catch every mutant only
    /// the base's version caught by a check.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub edited: bool,
    /// The edited test's line in the patch where the edit begins (its first line whose
    /// code changed; its `def` where none can be told), for FZ214.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// Each property's outcome on the unmutated code; one that fails there kills nothing.
    pub properties_clean: BTreeMap<String, String>,
    /// Every mutant at stake, over all shards.
    pub mutants_total: u64,
    /// Why this record did not finish the freeze (`budget`, `max-mutants`), if it did not.
    pub incomplete: Option<String>,
    /// How many other tests of the suite (not frozen, not a deposit, passing on the
    /// unmutated code) ran the code at stake in their call phase: those the frozen
    /// test's kills were tried on.
    #[serde(default)]
    pub others: u64,
    pub mutants: Vec<Mutant>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StakeFunction {
    pub file: String,
    pub function: String,
    /// First and last line of the function.
    pub lines: [u32; 2],
    /// The lines of it the frozen test ran (and, with `--coverage`, only it covers).
    pub covered: Vec<u32>,
    /// How many mutants the engine made of those lines (none in `brief`'s measure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutants: Option<u64>,
    /// The engine that made them: `mutmut`, or for a decorated function `mutmut,
    /// decorators kept on the trampoline`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// Why the engine made no mutant of it (nested in a class, a `pragma: no mutate`, no
    /// operator applies): a function at stake the proof cannot judge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmutated: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Mutant {
    pub id: String,
    pub file: String,
    pub line: u32,
    pub function: String,
    /// The mutation as a one-line diff: `- old + new`.
    pub mutation: String,
    /// Whether the frozen test fails on it; `None` when its clean run failed (unknown).
    pub killed_by_frozen: Option<bool>,
    /// Whether the frozen test failed on it on a check (an assert, `pytest.raises`),
    /// not by crashing; `None` when unknown (its clean run failed, or an older record).
    #[serde(default)]
    pub checked_by_frozen: Option<bool>,
    /// Whether another test of the suite (one that runs its function in its call
    /// phase; not frozen, not a deposit) fails on it; `None` when not asked (the frozen
    /// test does not kill it, or its kills are unknown).
    #[serde(default)]
    pub killed_by_others: Option<bool>,
    /// The compensating properties that fail on it.
    pub killed_by: Vec<String>,
    /// Those of them that failed on a check (an assert, `pytest.raises`), not by
    /// crashing; `None` in an older record (every kill then counts as a check).
    #[serde(default)]
    pub checked_by: Option<Vec<String>>,
    /// The properties were not run on it: the frozen test passes alone, and this is not
    /// one of its unique kills (it does not kill it, or another test does), so no
    /// judgement counts it (`killed_by` is then empty, `checked_by` none).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub properties_not_run: bool,
    /// Wall time of the run(s) of this mutant, in seconds.
    pub duration_s: f64,
    /// Where its function also ran, unmutated, outside the tests' call phase (`import`,
    /// `setup`, `teardown`): the mutant is active only in a test's call, so it was
    /// judged by what the tests' own checks see, not by a broken import or fixture.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmutated_at: Vec<String>,
}

impl Mutant {
    /// A compensating property failed on it by a check.
    pub fn caught(&self) -> bool {
        match &self.checked_by {
            Some(checked) => !checked.is_empty(),
            None => !self.killed_by.is_empty(),
        }
    }

    /// The compensating properties only crashed on it: any call of the broken code
    /// fails, so killing it says nothing of what they check.
    pub fn only_crashed_on(&self) -> bool {
        !self.killed_by.is_empty() && !self.caught()
    }
}

/// What a deposit is judged on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// The mutants only the frozen test kills, by a check (its crash-only kills not
    /// counted).
    Checked,
    /// The frozen test kills mutants, but another test of the suite kills each of
    /// them too: its freeze withdraws no coverage, any deposit will do.
    Shared,
    /// The mutants only the frozen test kills, each only by crashing: it checks none.
    Crashed,
    /// Every mutant at stake: the frozen test fails alone on the unmutated code.
    Stake,
}

/// How a proof judges one deposit: what FZ210 compares to its threshold, `prove`
/// prints and `stats` scores. Of the mutants judged, those the properties only crash
/// on are neither for nor against them (a property asserting nothing crashes on them
/// too); the share is of the rest: caught by a check, or surviving.
#[derive(Debug, Clone)]
pub struct Judgement<'a> {
    pub basis: Basis,
    pub judged: usize,
    /// The frozen test's kills no other test of the suite kills (its unique coverage).
    pub unique: usize,
    /// The frozen test's kills another test kills too (not judged).
    pub shared: usize,
    /// The frozen test's kills by a crash only, left out (basis `Checked`).
    pub frozen_crashed: usize,
    pub caught: usize,
    /// The mutants judged the properties only crashed on.
    pub crashed_on: Vec<&'a Mutant>,
    pub survivors: Vec<&'a Mutant>,
}

impl<'a> Judgement<'a> {
    pub fn of(frozen_clean: &str, mutants: impl IntoIterator<Item = &'a Mutant>) -> Judgement<'a> {
        let mutants: Vec<&Mutant> = mutants.into_iter().collect();
        let (mut unique, mut shared) = (0, 0);
        let (basis, judged, frozen_crashed): (Basis, Vec<&Mutant>, usize) =
            if frozen_clean != "passed" {
                (Basis::Stake, mutants, 0)
            } else {
                let killed: Vec<&Mutant> = mutants
                    .into_iter()
                    .filter(|m| m.killed_by_frozen == Some(true))
                    .collect();
                // Not asked (a budget cut): counted as unique, never as shared.
                let only: Vec<&Mutant> = killed
                    .iter()
                    .copied()
                    .filter(|m| m.killed_by_others != Some(true))
                    .collect();
                (unique, shared) = (only.len(), killed.len() - only.len());
                let checked: Vec<&Mutant> = only
                    .iter()
                    .copied()
                    .filter(|m| m.checked_by_frozen != Some(false))
                    .collect();
                if only.is_empty() && !killed.is_empty() {
                    (Basis::Shared, Vec::new(), 0)
                } else if checked.is_empty() {
                    (Basis::Crashed, only, 0)
                } else {
                    let crashed = only.len() - checked.len();
                    (Basis::Checked, checked, crashed)
                }
            };
        Judgement {
            basis,
            judged: judged.len(),
            unique,
            shared,
            frozen_crashed,
            caught: judged.iter().filter(|m| m.caught()).count(),
            crashed_on: judged
                .iter()
                .copied()
                .filter(|m| m.only_crashed_on())
                .collect(),
            survivors: judged
                .into_iter()
                .filter(|m| m.killed_by.is_empty())
                .collect(),
        }
    }

    /// Caught by a check of the mutants judged the properties did not only crash on;
    /// `None` when there is none (nothing tells this deposit from another).
    pub fn share(&self) -> Option<f64> {
        let counted = self.caught + self.survivors.len();
        (counted > 0).then(|| self.caught as f64 / counted as f64)
    }
}

/// One record's identity, for FZ404.
#[derive(Debug, Clone)]
pub struct ProofHeader {
    pub file: String,
    pub commit: Option<String>,
    pub dirty: bool,
    pub ledger_sha256: String,
    pub engine: String,
}

/// One freeze's proof over every record given.
#[derive(Debug, Clone)]
pub struct MergedFreeze {
    pub test_id: String,
    pub files: Vec<String>,
    pub frozen_clean: String,
    pub frozen_at_base: bool,
    pub removed: bool,
    pub edited: bool,
    pub line: Option<u32>,
    pub mutants_total: u64,
    /// Why a record stopped short, when one did.
    pub incomplete: Option<String>,
    pub mutants: BTreeMap<String, Mutant>,
    /// The compensating properties that did not pass on the unmutated code (they kill
    /// nothing).
    pub deposits_failing: BTreeSet<String>,
}

impl MergedFreeze {
    pub fn is_complete(&self) -> bool {
        self.incomplete.is_none() && self.mutants.len() as u64 >= self.mutants_total
    }
}

/// Every proof record given, merged.
#[derive(Debug, Clone, Default)]
pub struct Proofs {
    pub headers: Vec<ProofHeader>,
    pub freezes: BTreeMap<String, MergedFreeze>,
}

impl Proofs {
    pub fn load(paths: &[InputPath]) -> Result<Option<Proofs>, GateError> {
        if paths.is_empty() {
            return Ok(None);
        }
        let mut records = Vec::new();
        for path in paths {
            let source = path.read()?;
            records.push((source.name.clone(), parse(&source)?));
        }
        Ok(Some(Proofs::merge(records)))
    }

    pub fn merge(records: Vec<(String, ProofRecord)>) -> Proofs {
        let mut proofs = Proofs::default();
        for (file, record) in records {
            proofs.headers.push(ProofHeader {
                file: file.clone(),
                commit: record.commit,
                dirty: record.dirty,
                ledger_sha256: record.ledger_sha256,
                engine: format!("{} {}", record.engine.name, record.engine.version),
            });
            for freeze in record.freezes {
                let merged = proofs
                    .freezes
                    .entry(freeze.test_id.clone())
                    .or_insert_with(|| MergedFreeze {
                        test_id: freeze.test_id.clone(),
                        files: Vec::new(),
                        frozen_clean: freeze.frozen_clean.clone(),
                        frozen_at_base: freeze.frozen_at_base,
                        removed: freeze.removed,
                        edited: freeze.edited,
                        line: freeze.line,
                        mutants_total: freeze.mutants_total,
                        incomplete: None,
                        mutants: BTreeMap::new(),
                        deposits_failing: BTreeSet::new(),
                    });
                let failing = freeze
                    .properties_clean
                    .iter()
                    .filter(|(_, o)| *o != "passed");
                merged
                    .deposits_failing
                    .extend(failing.map(|(property, _)| property.clone()));
                merged.files.push(file.clone());
                merged.mutants_total = merged.mutants_total.max(freeze.mutants_total);
                // A clean failure in any shard makes the frozen test's kills unknown.
                if freeze.frozen_clean != "passed" {
                    merged.frozen_clean = freeze.frozen_clean.clone();
                }
                if let Some(why) = freeze.incomplete {
                    merged.incomplete = Some(format!("{file}: {why}"));
                }
                for mutant in freeze.mutants {
                    merged.mutants.insert(mutant.id.clone(), mutant);
                }
            }
        }
        proofs
    }
}

/// One record: its version and kind checked first (pointing at the value), then every
/// field typed (serde_json's error names the value and its line).
pub fn parse(source: &Source) -> Result<ProofRecord, GateError> {
    let not_json = |e: serde_json::Error| {
        let span = source.json_error_span(&e).unwrap_or(0..0);
        GateError::new(
            &source.name,
            format!(
                "is not a valid proof record: {}",
                crate::error::json_message(&e)
            ),
        )
        .at(source, span, "here")
        .with_help("write it with `freezegate prove`")
    };
    let top: BTreeMap<&str, &RawValue> = serde_json::from_str(&source.text).map_err(not_json)?;
    let span_of = |raw: &RawValue| {
        let start = raw.get().as_ptr() as usize - source.text.as_ptr() as usize;
        start..start + raw.get().len()
    };
    match top.get("kind") {
        Some(raw) if raw.get() == format!("\"{KIND}\"") => {}
        Some(raw) => {
            return Err(GateError::new(
                &source.name,
                format!("is not a proof record: its kind is {}", raw.get()),
            )
            .at(source, span_of(raw), format!("expected \"{KIND}\""))
            .with_help("pass the gate/proof.json that `freezegate prove` wrote"))
        }
        None => {
            return Err(
                GateError::new(&source.name, "is not a proof record: it has no `kind`")
                    .with_help("pass the gate/proof.json that `freezegate prove` wrote"),
            )
        }
    }
    if let Some(raw) = top.get("version") {
        if raw.get() == OLDER {
            return Err(GateError::new(
                &source.name,
                "is a proof record of an older freezegate (version 1): it does not say which of the frozen test's kills the rest of the suite shares, which is what a freeze is judged on now",
            )
            .at(source, span_of(raw), "version 1")
            .with_help("write it again with `freezegate prove` (the same options; the record is rewritten in place)"));
        }
        if raw.get() != VERSION.to_string() {
            return Err(GateError::new(
                &source.name,
                format!(
                    "has proof record version {}, this freezegate reads version {VERSION}",
                    raw.get()
                ),
            )
            .at(source, span_of(raw), "unknown version"));
        }
    }
    serde_json::from_str(&source.text).map_err(not_json)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mutant(frozen: Option<bool>, killed: bool, checked: Option<bool>) -> Mutant {
        let by = vec!["tests/test_p.py::test_p".to_string()];
        Mutant {
            id: "m".into(),
            file: "app.py".into(),
            line: 1,
            function: "f".into(),
            mutation: "- a + b".into(),
            killed_by_frozen: frozen,
            checked_by_frozen: frozen,
            killed_by_others: None,
            killed_by: if killed { by.clone() } else { Vec::new() },
            checked_by: checked.map(|c| if c && killed { by.clone() } else { Vec::new() }),
            properties_not_run: false,
            duration_s: 0.0,
            unmutated_at: Vec::new(),
        }
    }

    #[test]
    fn mutants_a_property_only_crashes_on_count_neither_way() {
        // Kills unknown: 3 crashes, 2 survivors (a property that asserts nothing).
        let hollow: Vec<Mutant> = (0..5).map(|i| mutant(None, i < 3, Some(false))).collect();
        let j = Judgement::of("failed", &hollow);
        assert_eq!(
            (j.basis, j.judged, j.caught, j.crashed_on.len()),
            (Basis::Stake, 5, 0, 3)
        );
        assert_eq!((j.survivors.len(), j.share()), (2, Some(0.0)));
        // The same kills by an assert: 5 of 5.
        let honest: Vec<Mutant> = (0..5).map(|i| mutant(None, i < 5, Some(true))).collect();
        assert_eq!(Judgement::of("failed", &honest).share(), Some(1.0));
        // A record without `checked_by` counts every kill, as it always did.
        let older: Vec<Mutant> = (0..5).map(|i| mutant(None, i < 3, None)).collect();
        assert_eq!(Judgement::of("failed", &older).share(), Some(0.6));
        // Every mutant judged is a crash: nothing tells this deposit from another.
        let crashes: Vec<Mutant> = (0..2)
            .map(|_| mutant(Some(true), true, Some(false)))
            .collect();
        assert_eq!(Judgement::of("passed", &crashes).share(), None);
    }

    fn source(text: &str) -> Source {
        SourceFile::new(
            "gate/proof.json",
            std::path::PathBuf::from("gate/proof.json"),
            text.to_string(),
        )
    }

    #[test]
    fn a_wrong_value_is_named_with_its_line() {
        let text = format!(
            "{{\"version\": {VERSION}, \"kind\": \"freezegate proof record\",\n \"commit\": null, \"dirty\": \"no\"}}"
        );
        let err = parse(&source(&text)).unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains("gate/proof.json"), "{shown}");
        assert!(shown.contains("\"no\""), "{shown}");
        assert_eq!(err.location().map(|l| l.0), Some(2), "{shown}");
    }

    #[test]
    fn another_kind_or_version_is_refused_at_its_value() {
        let err = parse(&source(
            "{\"version\": 1,\n\"kind\": \"freezegate run record\"}",
        ))
        .unwrap_err();
        assert!(err.to_string().contains("freezegate run record"), "{err}");
        assert_eq!(err.location().map(|l| l.0), Some(2));
        let err = parse(&source(
            "{\"kind\": \"freezegate proof record\",\n\"version\": 7}",
        ))
        .unwrap_err();
        assert!(err.to_string().contains("version 7"), "{err}");
    }
}
