//! `proof` as scripts see it: the proof records' facts, with each freeze's judgement
//! ([`Judgement`]) worked out once by the core.

use rhai::{Dynamic, Map};

use super::bindings::{optional_int, optional_text};
use super::ScriptValue;
use crate::inputs::proof::{Basis, Judgement, Mutant, Proofs};

/// A mutant as scripts see it: `#{id, file, line, mutation, killed_by_frozen,
/// checked_by_frozen, killed_by, caught}`.
fn mutant_value(m: &Mutant) -> Dynamic {
    let mut map = Map::new();
    map.insert("id".into(), m.id.clone().into());
    map.insert("file".into(), m.file.clone().into());
    map.insert("line".into(), i64::from(m.line).into());
    map.insert("mutation".into(), m.mutation.clone().into());
    map.insert(
        "killed_by_frozen".into(),
        m.killed_by_frozen.map_or(Dynamic::UNIT, Dynamic::from),
    );
    map.insert(
        "checked_by_frozen".into(),
        m.checked_by_frozen.map_or(Dynamic::UNIT, Dynamic::from),
    );
    let by: rhai::Array = m.killed_by.iter().map(|p| p.clone().into()).collect();
    map.insert("killed_by".into(), Dynamic::from_array(by));
    map.insert(
        "killed_by_others".into(),
        m.killed_by_others.map_or(Dynamic::UNIT, Dynamic::from),
    );
    map.insert("caught".into(), m.caught().into());
    Dynamic::from_map(map)
}

/// `proof` as scripts see it: `records` (each `file`, `commit`, `dirty`,
/// `ledger_sha256`, `engine`) and `freezes`, keyed by the frozen test's id.
impl ScriptValue for Proofs {
    fn to_script(&self) -> Dynamic {
        let records: rhai::Array = self
            .headers
            .iter()
            .map(|h| {
                let mut map = Map::new();
                map.insert("file".into(), h.file.clone().into());
                map.insert("commit".into(), optional_text(&h.commit));
                map.insert("dirty".into(), h.dirty.into());
                map.insert("ledger_sha256".into(), h.ledger_sha256.clone().into());
                map.insert("engine".into(), h.engine.clone().into());
                Dynamic::from_map(map)
            })
            .collect();
        let mut freezes = Map::new();
        for (id, f) in &self.freezes {
            let mutants: rhai::Array = f.mutants.values().map(mutant_value).collect();
            let judgement = Judgement::of(&f.frozen_clean, f.mutants.values());
            let mut judged = Map::new();
            let basis = match judgement.basis {
                Basis::Checked => "checked",
                Basis::Shared => "shared",
                Basis::Crashed => "crashed",
                Basis::Stake => "stake",
            };
            judged.insert("basis".into(), basis.into());
            judged.insert("judged".into(), (judgement.judged as i64).into());
            judged.insert("unique".into(), (judgement.unique as i64).into());
            judged.insert("also_killed".into(), (judgement.shared as i64).into());
            judged.insert(
                "frozen_crashed".into(),
                (judgement.frozen_crashed as i64).into(),
            );
            judged.insert("caught".into(), (judgement.caught as i64).into());
            judged.insert(
                "crashed_on".into(),
                (judgement.crashed_on.len() as i64).into(),
            );
            let crashed: rhai::Array = judgement
                .crashed_on
                .iter()
                .copied()
                .map(mutant_value)
                .collect();
            judged.insert("crashed".into(), Dynamic::from_array(crashed));
            judged.insert(
                "share".into(),
                judgement.share().map_or(Dynamic::UNIT, Dynamic::from),
            );
            let survivors: rhai::Array = judgement
                .survivors
                .iter()
                .copied()
                .map(mutant_value)
                .collect();
            judged.insert("survivors".into(), Dynamic::from_array(survivors));
            let mut map = Map::new();
            map.insert("test_id".into(), f.test_id.clone().into());
            map.insert("file".into(), f.files.join(", ").into());
            map.insert("frozen_clean".into(), f.frozen_clean.clone().into());
            map.insert("frozen_at_base".into(), f.frozen_at_base.into());
            map.insert("removed".into(), f.removed.into());
            map.insert("edited".into(), f.edited.into());
            map.insert("line".into(), optional_int(f.line));
            map.insert("total".into(), (f.mutants_total as i64).into());
            map.insert("proven".into(), (f.mutants.len() as i64).into());
            map.insert("complete".into(), f.is_complete().into());
            map.insert("incomplete".into(), optional_text(&f.incomplete));
            map.insert("mutants".into(), Dynamic::from_array(mutants));
            map.insert("judgement".into(), Dynamic::from_map(judged));
            let failing: rhai::Array = f
                .deposits_failing
                .iter()
                .map(|p| Dynamic::from(p.clone()))
                .collect();
            map.insert("deposits_failing".into(), Dynamic::from_array(failing));
            freezes.insert(id.as_str().into(), Dynamic::from_map(map));
        }
        let mut map = Map::new();
        map.insert("records".into(), Dynamic::from_array(records));
        map.insert("freezes".into(), Dynamic::from_map(freezes));
        Dynamic::from_map(map)
    }
}
