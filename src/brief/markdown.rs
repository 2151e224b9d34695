//! The brief in Markdown, for a person or an agent's prompt.

use std::fmt::Write;

use super::proof::Survivor;
use super::python::Code;
use super::Brief;

/// What the run record and the proof say of the frozen test: its cases, and how it did
/// alone on this commit's code.
fn cases(out: &mut String, brief: &Brief) {
    let n = brief.cases.len();
    if n > 0 {
        let cases: Vec<String> = brief.cases.iter().map(|c| format!("`{c}`")).collect();
        let shown = crate::words::join_and_more(&cases, 3);
        let _ = match brief.cases.iter().any(|c| c == &brief.test_id) {
            true => writeln!(out, "This freeze is of one case of a parametrized test ({n} cases in the run record: {shown}).\n"),
            false => writeln!(out, "It is parametrized: {n} cases in the run record ({shown}), each frozen. The properties should cover the input of every case.\n"),
        };
    }
    let _ = match brief.frozen_alone.as_deref() {
        Some("failed") => writeln!(out, "**It fails alone on this commit's code** (run 3 times, derandomized, its freeze lifted): if it passed at base, the patch broke what it checks, and FZ213 refuses the freeze. Fix the code (or the test, if the behaviour changed on purpose) rather than write a deposit.\n"),
        Some("flaky") => writeln!(out, "Run alone on this commit's code, it failed in some of 3 runs: a flake (what a freeze is for).\n"),
        Some("passed") => writeln!(out, "Run alone on this commit's code, it passes: it fails only in the full suite or only sometimes (what a freeze is for).\n"),
        _ => Ok(()),
    };
}

pub fn render(brief: &Brief) -> String {
    let mut out = String::new();
    let entry = &brief.entry;
    let _ = writeln!(out, "# Brief: the deposit for `{}`\n", brief.test_id);
    let _ = writeln!(out, "## The freeze ({})\n", entry.ledger);
    let _ = writeln!(
        out,
        "- invariant: {}",
        entry
            .invariant
            .as_deref()
            .unwrap_or("(none written: ask the owner)")
    );
    for (label, value) in [
        ("reason", &entry.reason),
        ("owner", &entry.owner),
        ("expires", &entry.expires),
    ] {
        if let Some(value) = value {
            let _ = writeln!(out, "- {label}: {value}");
        }
    }
    let properties: Vec<String> = entry
        .compensating_property
        .iter()
        .map(|p| format!("`{p}`"))
        .collect();
    let _ = writeln!(
        out,
        "- compensating property: {}\n",
        if properties.is_empty() {
            "(none yet)".to_string()
        } else {
            properties.join(", ")
        }
    );

    let _ = writeln!(out, "## The frozen test\n");
    match &brief.frozen_test {
        Some(code) => {
            let _ = writeln!(
                out,
                "`{}`, lines {}-{} (from the {}):\n",
                code.file, code.first, code.last, brief.frozen_test_lines_from
            );
            numbered(&mut out, code);
            cases(&mut out, brief);
        }
        None => {
            let _ = writeln!(
                out,
                "Its source was not found (is the file in this checkout?).\n"
            );
        }
    }

    let _ = writeln!(out, "## The code at stake\n");
    let _ = writeln!(out, "These are {}.\n", brief.code_at_stake_from);
    if brief.code_at_stake.is_empty() {
        let _ = match brief.survivors {
            Some(_) => writeln!(
                out,
                "None: the frozen test ran no function of the project's own code.\n"
            ),
            None => writeln!(
                out,
                "None found by reading the source (a method call such as `obj.pop(...)` is not followed): `freezegate prove` measures the code at stake by running the frozen test alone under coverage, and `freezegate brief {} --proof gate/proof.json` then lists it.\n",
                brief.test_id
            ),
        };
    }
    for code in &brief.code_at_stake {
        let unmutated = code.unmutated.as_ref().map_or(String::new(), |why| {
            format!(" (no mutant: {why}; the proof cannot judge what it does)")
        });
        let _ = writeln!(
            out,
            "`{}` in `{}`, lines {}-{}{unmutated}:\n",
            code.function, code.file, code.first, code.last
        );
        numbered(&mut out, code);
    }

    let t = &brief.thresholds;
    let _ = writeln!(out, "## What the gate will ask\n");
    let _ = writeln!(
        out,
        "- FZ301: each property sees at least {} distinct inputs (Hypothesis's choice sequences, explicit `@example`s included).",
        t.min_distinct
    );
    let _ = writeln!(
        out,
        "- FZ210 (`freezegate prove`): the properties fail by an assert on at least {:.0} % of the frozen test's unique kills: the mutants of the code at stake it fails on by a check and no other test of the suite fails on (when its kills are unknown: {:.0} % of all of them; a frozen test with no unique kill withdraws nothing and owes no share). A mutant they only crash on (the broken code raises) is not counted: a property that asserts nothing crashes on it too.",
        t.min_kill_share * 100.0,
        t.min_mutation_score * 100.0
    );
    let _ = writeln!(
        out,
        "- FZ202 and FZ209: the patch changes the property's code itself (a comment or a docstring is no change).\n"
    );

    let _ = writeln!(out, "## Surviving mutants\n");
    match &brief.survivors {
        None => {
            let _ = writeln!(
                out,
                "No proof given: `freezegate prove` will judge the deposit by mutating the code at stake (then `freezegate brief {} --proof gate/proof.json` lists what survives).\n",
                brief.test_id
            );
        }
        Some(survivors) if survivors.is_empty() => {
            let _ = writeln!(
                out,
                "None: the properties kill every mutant the frozen test kills.\n"
            );
        }
        Some(survivors) => survivors_shown(&mut out, survivors),
    }

    let _ = writeln!(out, "## The ask\n\n{}", brief.ask);
    out
}

/// Survivors shown, grouped by function; the rest are counted.
const SURVIVORS_SHOWN: usize = 10;

/// The first survivors as diffs under a heading per function (the frozen test's kills
/// first, as `proven` sorts them), and how many more.
fn survivors_shown(out: &mut String, survivors: &[Survivor]) {
    let _ = writeln!(out, "Write a property that fails on each of these:\n");
    let mut function = None;
    for s in survivors.iter().take(SURVIVORS_SHOWN) {
        if function != Some((&s.file, &s.function)) {
            function = Some((&s.file, &s.function));
            let _ = writeln!(out, "### `{}` in `{}`\n", s.function, s.file);
        }
        let frozen = match s.killed_by_frozen {
            Some(true) => "the frozen test kills it",
            Some(false) => "the frozen test does not kill it",
            None => "the frozen test's kills are unknown",
        };
        let _ = writeln!(
            out,
            "`{}:{}` ({frozen}):\n\n```diff\n{}\n```\n",
            s.file,
            s.line,
            s.diff.trim_end()
        );
    }
    if survivors.len() > SURVIVORS_SHOWN {
        let _ = writeln!(
            out,
            "… and {} more (`--format json` lists every one).\n",
            survivors.len() - SURVIVORS_SHOWN
        );
    }
}

fn numbered(out: &mut String, code: &Code) {
    let width = code.last.to_string().len();
    let _ = writeln!(out, "```python");
    for (n, line) in (code.first..).zip(code.source.lines()) {
        let _ = writeln!(out, "{n:>width$}  {line}");
    }
    let _ = writeln!(out, "```\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_ten_survivors_are_shown_under_a_heading_per_function() {
        let survivor = |function: &str, line: u32| Survivor {
            id: None,
            file: "app.py".into(),
            function: function.into(),
            line,
            mutation: "- a + b".into(),
            diff: "- a + b".into(),
            killed_by_frozen: Some(true),
        };
        let survivors: Vec<Survivor> = (1..=4)
            .map(|line| survivor("Cart.add", line))
            .chain((10..=17).map(|line| survivor("total", line)))
            .collect();
        let mut out = String::new();
        survivors_shown(&mut out, &survivors);
        assert_eq!(out.matches("```diff").count(), 10, "{out}");
        assert_eq!(
            out.matches("### `Cart.add` in `app.py`").count(),
            1,
            "{out}"
        );
        assert_eq!(out.matches("### `total` in `app.py`").count(), 1, "{out}");
        assert!(
            out.contains("`app.py:15`") && !out.contains("`app.py:16`"),
            "{out}"
        );
        assert!(out.contains("… and 2 more"), "{out}");
    }
}
