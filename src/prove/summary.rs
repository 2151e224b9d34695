//! The one-screen summary `prove` prints per freeze: the code at stake, the mutants,
//! how many the frozen test and the deposit kill, and the survivors a reviewer should
//! see.

use std::fmt::Write;
use std::time::Duration;

use super::Timing;
use crate::inputs::proof::{Basis, FreezeProof, Judgement, ProofRecord};
use crate::words::{count, part_of};

/// The engine's name for the functions it mutates as they are (undecorated, or a lone
/// `staticmethod` / `classmethod`).
const ENGINE: &str = "mutmut";

/// How the summary words the functions an engine other than plain mutmut mutated (the
/// driver's names for them); any other engine is named as it is.
const ENGINE_NOTES: [(&str, &str); 3] = [
    (
        "mutmut, decorators kept on the trampoline",
        "decorated, mutated with their decorators kept on mutmut's trampoline",
    ),
    (
        "mutmut, special method opened to its trampoline",
        "special methods mutmut skips, mutated by its operators through its trampoline",
    ),
    (
        "mutmut, trampoline placed in a module-level block or a nested class",
        "in a module-level block or a nested class, mutated behind a trampoline prove placed there",
    ),
];

/// Survivors listed per freeze; the rest are counted.
const SHOWN: usize = 5;

pub fn render(record: &ProofRecord, timings: &[Timing], path: &str) -> String {
    let mut out = String::new();
    if record.freezes.is_empty() {
        let _ = writeln!(
            out,
            "no freeze to prove: the patch adds or changes none and removes no test (--all proves every freeze)"
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

/// Which functions at stake were mutated other than as plain mutmut does (decorators
/// kept, a special method opened), and which got no mutant (what they do, the proof
/// cannot judge), with why.
fn engine_note(out: &mut String, f: &FreezeProof) {
    let mut by_engine: Vec<(&str, Vec<&str>)> = Vec::new();
    for s in &f.stake {
        let Some(engine) = s.engine.as_deref().filter(|e| *e != ENGINE) else {
            continue;
        };
        match by_engine.iter_mut().find(|(e, _)| *e == engine) {
            Some((_, functions)) => functions.push(&s.function),
            None => by_engine.push((engine, vec![&s.function])),
        }
    }
    for (engine, functions) in by_engine {
        let label = ENGINE_NOTES
            .iter()
            .find(|(name, _)| *name == engine)
            .map_or_else(
                || format!("mutated by {engine}"),
                |(_, label)| label.to_string(),
            );
        let _ = writeln!(out, "  {label}: {}", functions.join(", "));
    }
    for s in &f.stake {
        if let Some(why) = &s.unmutated {
            let _ = writeln!(
                out,
                "  no mutant of {} ({}:{}): {why}; what it does, this proof cannot judge",
                s.function, s.file, s.lines[0]
            );
        }
    }
}

/// Which mutants were active in the tests' call phase alone while their function also
/// ran at import or in fixtures, unmutated there.
fn call_phase_note(out: &mut String, f: &FreezeProof) {
    let judged: Vec<_> = f
        .mutants
        .iter()
        .filter(|m| !m.unmutated_at.is_empty())
        .collect();
    if judged.is_empty() {
        return;
    }
    let mut functions: Vec<&str> = judged.iter().map(|m| m.function.as_str()).collect();
    functions.dedup();
    let mut phases: Vec<&str> = judged
        .iter()
        .flat_map(|m| m.unmutated_at.iter().map(String::as_str))
        .collect();
    phases.sort_unstable();
    phases.dedup();
    let _ = writeln!(
        out,
        "  judged in the call phase alone: {} of {} (they also run at {}, unmutated there)",
        count(judged.len() as i64, "mutant"),
        functions.join(", "),
        phases.join(", "),
    );
}

fn freeze_summary(out: &mut String, f: &FreezeProof, took: Option<Timing>) {
    let _ = writeln!(out, "{}", f.test_id);
    // A removed test is judged as a frozen one: what only it kills is what its removal
    // withdraws.
    let role = match (f.removed, f.edited) {
        (true, _) if f.renamed_to.is_some() => "renamed-out test",
        (true, _) => "removed test",
        (_, true) => "base's version",
        _ => "frozen test",
    };
    // What an edited test's version in the patch is to its base's: not a deposit of the
    // ledger's, though the proof runs it as one.
    let deposit = match f.edited {
        true => "the patch's version",
        false => "the deposit",
    };
    match (&f.renamed_to, f.removed) {
        (Some(to), true) => {
            let _ = writeln!(
                out,
                "  renamed out of collection by the patch (now def {to}, which pytest does not collect): the proof ran it as the base defined it"
            );
        }
        (_, true) => {
            let _ = writeln!(
                out,
                "  removed by the patch: the proof ran it as the base defined it"
            );
        }
        _ => {}
    }
    if f.edited {
        let _ = writeln!(
            out,
            "  edited by the patch: the proof ran the base's version, and the patch's beside it"
        );
    }
    let _ = match (f.properties.is_empty(), f.edited) {
        (true, _) => writeln!(out, "  deposit: none (no ledger entry retires it)"),
        (false, true) => writeln!(
            out,
            "  the patch's version: run as {}",
            f.properties.join(", ")
        ),
        (false, false) => writeln!(out, "  deposit: {}", f.properties.join(", ")),
    };
    if f.frozen_at_base {
        let _ = writeln!(
            out,
            "  frozen test: as the base defined it (the patch changed it; the proof ran the base's version)"
        );
    }
    if f.stake.is_empty() {
        // prove measured some (none is exit 2): the --coverage reports left none.
        let _ = writeln!(
            out,
            "  code at stake: none (the {role} covers no line only it covers)"
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
    let _ = writeln!(out, "  mutants at stake: {}", f.mutants_total);
    engine_note(out, f);
    call_phase_note(out, f);
    // As FZ210 judges (one judgement for both).
    let j = Judgement::of(&f.frozen_clean, &f.mutants);
    let n = j.judged;
    let shared = match j.shared {
        0 => String::new(),
        s => format!("; {s} more that other tests also kill (not counted)"),
    };
    let _ = match j.basis {
        Basis::Stake => writeln!(
            out,
            "  killed by the {role}: unknown (it fails alone on the unmutated code{})",
            match f.frozen_clean.as_str() {
                "flaky" => " in some runs of 3",
                _ => ", every run of 3",
            }
        ),
        Basis::Shared => writeln!(
            out,
            "  killed by the {role}: {}, each also by another test of the suite ({} run this code): {}",
            j.shared,
            count(f.others as i64, "other test"),
            match (f.removed, f.edited) {
                (true, _) if f.renamed_to.is_some() => {
                    "renaming it out withdraws no coverage (the rename is honest)"
                }
                (true, _) => "removing it withdraws no coverage (deletion is honest)",
                (_, true) => "the edit withdraws no coverage",
                _ => "it withdraws no coverage, any deposit passes",
            },
        ),
        Basis::Checked if j.frozen_crashed > 0 => writeln!(
            out,
            "  killed by the {role} alone: {n} by a check (an assert or pytest.raises), {} more it only crashed on (not counted){shared}",
            j.frozen_crashed
        ),
        Basis::Checked => writeln!(out, "  killed by the {role} alone: {n}{shared}"),
        Basis::Crashed => writeln!(
            out,
            "  killed by the {role} alone: {n} (each by a crash: it checks none){shared}"
        ),
    };
    if j.basis == Basis::Shared {
        return took_line(out, f, took);
    }
    let of = match j.basis {
        Basis::Stake => "at stake".to_string(),
        Basis::Crashed => format!("the {role} alone kills, by crashing"),
        _ => format!("the {role} alone kills"),
    };
    let share = j.share().map_or(String::new(), |share| {
        format!(" ({}%)", (share * 100.0).floor())
    });
    let crashed = match j.crashed_on.len() {
        0 => String::new(),
        c => format!("; {deposit} only crashed on {c} of them (not counted)"),
    };
    // A removal with no entry retiring it has no deposit: what only it caught, no test
    // catches now.
    let survivors = if f.properties.is_empty() {
        "  withdrawn (no test of the suite catches them now):"
    } else {
        let _ = writeln!(
            out,
            "  caught by {deposit}, by a check: {} {of}{share}{crashed}",
            part_of(j.caught as i64, n as i64, "mutant"),
        );
        match f.edited {
            true => "  survivors (the patch's version does not fail on them):",
            false => "  survivors (the deposit does not fail on them):",
        }
    };
    if !j.survivors.is_empty() {
        let _ = writeln!(out, "{survivors}");
        for m in j.survivors.iter().take(SHOWN) {
            let _ = writeln!(out, "    {}:{}  {}", m.file, m.line, m.mutation);
        }
        if j.survivors.len() > SHOWN {
            let _ = writeln!(out, "    ... and {} more", j.survivors.len() - SHOWN);
        }
    }
    took_line(out, f, took);
}

/// Whether the proof finished, and what it took.
fn took_line(out: &mut String, f: &FreezeProof, took: Option<Timing>) {
    if let Some(why) = &f.incomplete {
        let _ = writeln!(out, "  INCOMPLETE: {why}");
    }
    if let Some(took) = took {
        let rate = |d: Duration| match d.as_secs_f64() {
            secs if secs > 0.0 => f.mutants.len() as f64 / secs,
            _ => 0.0,
        };
        let _ = writeln!(
            out,
            "  {} proven in {:.1} s ({:.1} mutants/s; their runs alone {:.1} s, {:.1} mutants/s)",
            count(f.mutants.len() as i64, "mutant"),
            took.total.as_secs_f64(),
            rate(took.total),
            took.mutants.as_secs_f64(),
            rate(took.mutants),
        );
    }
}
