//! What the brief shows of a proof record (`gate/proof.json`, read by the one parser
//! `check --proof` uses): the freeze's mutants no compensating property killed.

use serde::Serialize;

use crate::error::GateError;
use crate::inputs::proof;
use crate::source::Source;

/// A mutant the deposit does not kill: a property that fails on it is what is missing.
#[derive(Debug, Serialize)]
pub struct Survivor {
    pub id: Option<String>,
    pub file: String,
    /// The function it mutates (`Class.method`).
    pub function: String,
    pub line: u32,
    /// The mutation as `prove` records it, on one line: `- old + new`.
    pub mutation: String,
    /// The mutation as a unified diff of the line, in the file as it is (the recorded
    /// one-line form when the line no longer reads as the mutant's original).
    pub diff: String,
    /// Whether the frozen test killed it (`null`: unknown).
    pub killed_by_frozen: Option<bool>,
}

/// What the proof measured of one freeze.
pub struct Proven {
    /// The project functions the frozen test ran alone under coverage.
    pub stake: Vec<proof::StakeFunction>,
    /// Mutants no property killed, those the frozen test killed (the ones FZ210 counts)
    /// first.
    pub survivors: Vec<Survivor>,
    /// How the frozen test did alone on this commit's unmutated code: `passed`,
    /// `failed` (every run of 3), `flaky`.
    pub frozen_alone: String,
}

/// The freeze's code at stake and survivors. A record `check --proof` would refuse is an
/// input error naming the file and line; a proof without this freeze is too.
pub fn proven(
    source: &Source,
    test_id: &str,
    read: impl Fn(&str) -> Option<String>,
) -> Result<Proven, GateError> {
    let record = proof::parse(source)?;
    let freeze = record
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
    // The survivors FZ210 names.
    let judgement = proof::Judgement::of(&freeze.frozen_clean, &freeze.mutants);
    let mut survivors: Vec<Survivor> = judgement
        .survivors
        .into_iter()
        .map(|m| Survivor {
            diff: as_diff(read(&m.file).as_deref(), m.line, &m.mutation),
            id: Some(m.id.clone()),
            file: m.file.clone(),
            function: m.function.clone(),
            line: m.line,
            mutation: m.mutation.clone(),
            killed_by_frozen: m.killed_by_frozen,
        })
        .collect();
    // The frozen test's kills first (the ones FZ210 counts), then by function.
    survivors.sort_by_key(|s| {
        (
            s.killed_by_frozen != Some(true),
            s.file.clone(),
            s.function.clone(),
            s.line,
        )
    });
    Ok(Proven {
        stake: freeze.stake,
        survivors,
        frozen_alone: freeze.frozen_clean,
    })
}

/// `- old + new` as the two lines of a diff, with the line's own indentation: the
/// recorded `old` is the source line, stripped, so the split is where it ends.
fn as_diff(text: Option<&str>, line: u32, mutation: &str) -> String {
    let original = text.and_then(|t| t.lines().nth(line.saturating_sub(1) as usize));
    if let Some(original) = original {
        let old = original.trim();
        if let Some(new) = mutation.strip_prefix(&format!("- {old} + ")) {
            let indent = &original[..original.len() - original.trim_start().len()];
            return format!("-{original}\n+{indent}{new}");
        }
    }
    mutation.to_string()
}

#[cfg(test)]
mod tests {
    use super::as_diff;

    #[test]
    fn a_one_line_mutation_becomes_a_diff_of_its_line() {
        let text = "def f(a, b):\n    return a + b\n";
        assert_eq!(
            as_diff(Some(text), 2, "- return a + b + return a - b"),
            "-    return a + b\n+    return a - b"
        );
        // A line that changed since the proof: the recorded form, not a wrong diff.
        assert_eq!(
            as_diff(Some(text), 2, "- return a * b + return a / b"),
            "- return a * b + return a / b"
        );
        assert_eq!(as_diff(None, 2, "- x + y"), "- x + y");
    }
}
