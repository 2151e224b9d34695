//! The one-screen summary `prove` prints per freeze: the code at stake, the mutants,
//! how many the frozen test and the deposit kill, and the survivors a reviewer should
//! see.

use std::fmt::Write;
use std::time::Duration;

use crate::inputs::proof::{FreezeProof, ProofRecord};
use crate::words::count;

/// Survivors listed per freeze; the rest are counted.
const SHOWN: usize = 5;

pub fn render(record: &ProofRecord, timings: &[Duration], path: &str) -> String {
    let mut out = String::new();
    if record.freezes.is_empty() {
        let _ = writeln!(
            out,
            "no freeze to prove: the patch adds or changes none (--all proves every freeze)"
        );
    }
    for (i, freeze) in record.freezes.iter().enumerate() {
        freeze_summary(&mut out, freeze, timings.get(i).copied());
    }
    let shard = record
        .shard
        .map_or(String::new(), |[i, n]| format!(", shard {i}/{n}"));
    let _ = writeln!(
        out,
        "proof: {}{shard}, {} {} -> {path}",
        if record.complete {
            "complete"
        } else {
            "INCOMPLETE"
        },
        record.engine.name,
        record.engine.version,
    );
    out
}

fn freeze_summary(out: &mut String, f: &FreezeProof, took: Option<Duration>) {
    let _ = writeln!(out, "{}", f.test_id);
    let _ = writeln!(out, "  deposit: {}", f.properties.join(", "));
    if f.stake.is_empty() {
        let _ = writeln!(
            out,
            "  code at stake: none (the frozen test runs no project function)"
        );
    } else {
        let functions: Vec<String> = f
            .stake
            .iter()
            .map(|s| format!("{}:{} ({}-{})", s.file, s.function, s.lines[0], s.lines[1]))
            .collect();
        let _ = writeln!(out, "  code at stake: {}", functions.join(", "));
    }
    for (p, outcome) in &f.properties_clean {
        if outcome != "passed" {
            let _ = writeln!(
                out,
                "  note: {p} {outcome} on the unmutated code: it kills nothing"
            );
        }
    }
    let by_deposit = f.mutants.iter().filter(|m| !m.killed_by.is_empty()).count();
    let _ = writeln!(out, "  mutants at stake: {}", f.mutants_total);
    if f.frozen_clean == "passed" {
        let all: Vec<_> = f
            .mutants
            .iter()
            .filter(|m| m.killed_by_frozen == Some(true))
            .collect();
        // As FZ210 counts: the kills by a check, unless the frozen test checked none.
        let checked: Vec<_> = all
            .iter()
            .copied()
            .filter(|m| m.checked_by_frozen != Some(false))
            .collect();
        let crashed = all.len() - checked.len();
        let checked_any = !checked.is_empty();
        let killed = if checked_any { checked } else { all };
        let caught = killed.iter().filter(|m| !m.killed_by.is_empty()).count();
        let n = killed.len();
        let _ = match (crashed, checked_any) {
            (0, _) => writeln!(out, "  killed by the frozen test: {n}"),
            (_, true) => writeln!(
                out,
                "  killed by the frozen test: {n} by a check (an assert or pytest.raises), {crashed} more it only crashed on (not counted)"
            ),
            (_, false) => writeln!(
                out,
                "  killed by the frozen test: {n} (each by a crash: it checks none)"
            ),
        };
        let share = match killed.len() {
            0 => String::new(),
            n => format!(": {}%", caught * 100 / n),
        };
        let _ = writeln!(
            out,
            "  killed by the deposit: {by_deposit} ({caught} of the frozen test's {}{share})",
            killed.len()
        );
        let survivors: Vec<_> = killed.iter().filter(|m| m.killed_by.is_empty()).collect();
        if !survivors.is_empty() {
            let _ = writeln!(
                out,
                "  survivors (the frozen test kills them, the deposit does not):"
            );
            for m in survivors.iter().take(SHOWN) {
                let _ = writeln!(out, "    {}:{}  {}", m.file, m.line, m.mutation);
            }
            if survivors.len() > SHOWN {
                let _ = writeln!(out, "    ... and {} more", survivors.len() - SHOWN);
            }
        }
    } else {
        let _ = writeln!(
            out,
            "  killed by the frozen test: unknown (it fails alone on the unmutated code)"
        );
        let _ = writeln!(
            out,
            "  killed by the deposit: {by_deposit} of {}",
            f.mutants.len()
        );
    }
    if let Some(why) = &f.incomplete {
        let _ = writeln!(out, "  INCOMPLETE: {why}");
    }
    if let Some(took) = took {
        let secs = took.as_secs_f64();
        let rate = if secs > 0.0 {
            f.mutants.len() as f64 / secs
        } else {
            0.0
        };
        let _ = writeln!(
            out,
            "  {} proven in {secs:.1} s ({rate:.1} mutants/s)",
            count(f.mutants.len() as i64, "mutant")
        );
    }
}
