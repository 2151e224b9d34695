//! The proof record (`gate/proof.json`, written by `freezegate prove`) as the brief reads
//! it: per freeze its mutants, and of those the ones no compensating property killed.
//! Only the fields the brief shows are read; any other is allowed.

use serde::{Deserialize, Serialize};

use crate::error::GateError;
use crate::source::Source;

#[derive(Deserialize)]
struct ProofFile {
    freezes: Vec<FreezeProof>,
}

#[derive(Deserialize)]
struct FreezeProof {
    test_id: String,
    mutants: Vec<Mutant>,
}

#[derive(Deserialize)]
struct Mutant {
    #[serde(default)]
    id: Option<String>,
    file: String,
    line: u32,
    mutation: String,
    killed_by_frozen: Option<bool>,
    #[serde(default)]
    killed_by: Vec<String>,
}

/// A mutant the deposit does not kill: a property that fails on it is what is missing.
#[derive(Debug, Serialize)]
pub struct Survivor {
    pub id: Option<String>,
    pub file: String,
    pub line: u32,
    /// The mutation as a one-line diff.
    pub mutation: String,
    /// Whether the frozen test killed it (`null`: unknown).
    pub killed_by_frozen: Option<bool>,
}

/// The freeze's survivors: mutants no property killed, those the frozen test killed (the
/// ones FZ210 counts) first. A proof that is not JSON, or whose fields are not what
/// `prove` writes, is an input error naming the line; a proof without this freeze is too.
pub fn survivors(source: &Source, test_id: &str) -> Result<Vec<Survivor>, GateError> {
    let proof: ProofFile = serde_json::from_str(&source.text).map_err(|e| {
        GateError::new(
            &source.name,
            format!(
                "not a freezegate proof record at line {}, column {}: {}",
                e.line(),
                e.column(),
                crate::error::json_message(&e)
            ),
        )
    })?;
    let freeze = proof
        .freezes
        .into_iter()
        .find(|f| f.test_id == test_id)
        .ok_or_else(|| {
            GateError::new(
                &source.name,
                format!(
                    "the proof has no freeze of {test_id}: run `freezegate prove` on this ledger"
                ),
            )
        })?;
    let mut survivors: Vec<Survivor> = freeze
        .mutants
        .into_iter()
        .filter(|m| m.killed_by.is_empty() && m.killed_by_frozen != Some(false))
        .map(|m| Survivor {
            id: m.id,
            file: m.file,
            line: m.line,
            mutation: m.mutation,
            killed_by_frozen: m.killed_by_frozen,
        })
        .collect();
    survivors.sort_by_key(|s| (s.killed_by_frozen != Some(true), s.file.clone(), s.line));
    Ok(survivors)
}
