//! `freezegate stats`: the freeze metrics a team watches every week, computed from the
//! ledger, the deposit rules' verdict on the given facts, and the run history; written as
//! aligned tables, JSON (version 1) or Markdown with a Mermaid chart of freeze ages.
//!
//! Definitions (docs/weekly-numbers.md states them for users):
//! - An *open* freeze is any ledger entry. Its *age* is `today - opened` in days; entries
//!   whose `opened` is not a real date or lies after today have no age and are left out
//!   of the age figures (they are still open and counted everywhere else).
//! - Percentiles use the **nearest-rank** method: over the n ages sorted ascending, the
//!   p-th percentile is the value at 1-based rank `ceil(p/100 * n)`. The median is the
//!   50th percentile, so with an even n it is the lower of the two middle values; every
//!   figure is a real freeze's age in whole days.
//! - *Expiring*: `today <= expires <= today + N` (N = `--expiring-days`, default 3).
//!   *Expired*: `expires < today` (the FZ103 condition).
//! - A freeze *fails its deposit* when an error-severity FZ2xx or FZ3xx rule reports on
//!   it; a freeze with several such violations counts once.
//! - *Inherited skips refused*: the FZ401 ids over the history records whose `time` falls
//!   on or after `--since`; `refused` counts every refusal, `distinct` each id once.

pub mod history;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::stats::history::History;

pub type Date = jiff::civil::Date;

/// Everything the figures are computed from, gathered by the command.
#[derive(Debug, Clone)]
pub struct Inputs {
    pub today: Date,
    pub expiring_days: i64,
    pub freezes: Vec<FreezeFacts>,
    pub deposit: DepositInput,
    pub history: Option<HistoryInput>,
    /// Entries of the skip baseline.
    pub baseline: usize,
}

/// One ledger entry, as the figures need it.
#[derive(Debug, Clone, Default)]
pub struct FreezeFacts {
    pub test_id: String,
    pub owner: Option<String>,
    pub team: Option<String>,
    pub opened: Option<Date>,
    pub expires: Option<Date>,
    /// Error-severity FZ2xx/FZ3xx codes reported on this entry.
    pub failing: Vec<String>,
    /// With `--coverage`: lines only the frozen test covered, and how many of them its
    /// compensating properties cover.
    pub coverage: Option<(usize, usize)>,
    /// With `--proof` holding the freeze: the mutants the frozen test kills, and how many
    /// of them its compensating properties kill (`None` when its kills are unknown).
    pub mutation: Option<(usize, usize)>,
}

/// What the deposit rules could say.
#[derive(Debug, Clone)]
pub enum DepositInput {
    /// The rules ran on every input they need.
    Evaluated,
    /// Some rules could not run: the FZ001 messages naming the missing inputs.
    Missing(Vec<String>),
    /// No FZ2xx/FZ3xx rule is loaded and enabled.
    NoRules,
}

#[derive(Debug, Clone)]
pub struct HistoryInput {
    pub name: String,
    pub since: Option<Date>,
    pub history: History,
}

/// The figures; serialised as the JSON output.
#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    pub version: u32,
    pub today: String,
    pub expiring_days: i64,
    pub headline: Headline,
    pub freezes: FreezeFigures,
    pub deposit: DepositFigures,
    pub inherited: Option<Inherited>,
    pub owners: Vec<Group>,
    pub teams: Vec<Group>,
    /// With `--coverage`: what the open freezes put at stake; `null` without it.
    pub coverage: Option<CoverageAtStake>,
    /// With `--proof`: each proven deposit's mutation score; `null` without it.
    pub mutation: Option<MutationScores>,
    /// Skips outside the ledger: the baseline, and (with `--history`) what FZ601
    /// refused and how many tests each run collected.
    pub outside: Outside,
}

/// Skips outside the ledger, and whether the suite shrinks.
#[derive(Debug, Clone, Serialize)]
pub struct Outside {
    pub baseline_entries: usize,
    /// Skips FZ601 refused in the period (per run, each id once), `null` without history.
    pub refused: Option<usize>,
    pub refused_distinct: Option<usize>,
    /// Tests collected per run in the period, oldest first (runs that gave a collection).
    pub collected_per_run: Vec<usize>,
}

impl Outside {
    pub fn text(&self) -> String {
        let mut text = format!(
            "baseline {}",
            crate::words::count_as(self.baseline_entries as i64, "entry", "entries")
        );
        if let (Some(refused), Some(distinct)) = (self.refused, self.refused_distinct) {
            text.push_str(&format!("; FZ601 refused {refused} ({distinct} distinct)"));
        }
        text
    }

    /// `1,200 → 1,188 tests collected over 5 runs`, when the history has sizes.
    pub fn suite_text(&self) -> Option<String> {
        let (first, last) = (
            self.collected_per_run.first()?,
            self.collected_per_run.last()?,
        );
        Some(format!(
            "{first} → {last} collected over {}",
            crate::words::count_of(self.collected_per_run.len(), "run")
        ))
    }
}

/// Lines only frozen tests covered, summed over the open freezes with coverage data.
#[derive(Debug, Clone, Serialize)]
pub struct CoverageAtStake {
    pub freezes: usize,
    pub lines_at_stake: usize,
    pub lines_covered_by_properties: usize,
    pub lines_uncovered: usize,
}

/// The three weekly numbers; `null` where the input was not given.
#[derive(Debug, Clone, Serialize)]
pub struct Headline {
    pub deposit_failures: Option<usize>,
    pub median_age_days: Option<i64>,
    pub inherited_refused: Option<usize>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FreezeFigures {
    pub open: usize,
    /// Freezes with an age (a real `opened` not after today).
    pub dated: usize,
    pub age_days: Option<Ages>,
    pub expiring: usize,
    pub expired: usize,
    pub age_buckets: Vec<Bucket>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Ages {
    pub median: i64,
    pub p90: i64,
    pub max: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Bucket {
    pub label: String,
    pub min: i64,
    /// Inclusive; `null` for the open-ended last bucket.
    pub max: Option<i64>,
    pub freezes: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct DepositFigures {
    pub evaluated: bool,
    /// Freezes failing their deposit; `null` unless evaluated.
    pub failing: Option<usize>,
    /// Of the others, those no proof judged (no `--proof`, or none for the freeze): a
    /// hollow deposit passes every other rule, so these are unproven, not passing; `null`
    /// unless evaluated.
    pub unproven: Option<usize>,
    /// Why not evaluated: the inputs to give (FZ001 messages), or that no rule is loaded.
    pub missing_inputs: Vec<String>,
    pub failing_freezes: Vec<FailingFreeze>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FailingFreeze {
    pub test_id: String,
    pub owner: Option<String>,
    pub codes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Inherited {
    pub history: String,
    pub since: Option<String>,
    /// Records in the period.
    pub runs: usize,
    pub refused: usize,
    pub distinct: usize,
    /// Lines skipped as interrupted appends.
    pub torn_lines: Vec<usize>,
    /// Each refused id with the number of runs that refused it, most refused first.
    pub ids: Vec<RefusedId>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RefusedId {
    pub test_id: String,
    pub runs: usize,
}

/// One owner's or one team's freezes. `name` is `null` for entries without one.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub name: Option<String>,
    pub freezes: usize,
    /// The age of the oldest dated freeze.
    pub oldest_days: Option<i64>,
    pub expiring: usize,
    pub expired: usize,
    /// `null` unless the deposit rules were evaluated.
    pub failing: Option<usize>,
}

/// Age buckets of the chart: (label, min, inclusive max).
const BUCKETS: [(&str, i64, Option<i64>); 5] = [
    ("0-3", 0, Some(3)),
    ("4-7", 4, Some(7)),
    ("8-14", 8, Some(14)),
    ("15-30", 15, Some(30)),
    ("31+", 31, None),
];

/// The nearest-rank percentile of ascending `sorted` (non-empty): rank `ceil(p*n/100)`.
pub fn nearest_rank(sorted: &[i64], p: usize) -> i64 {
    let n = sorted.len();
    let rank = (p * n).div_ceil(100).clamp(1, n);
    sorted[rank - 1]
}

fn days(from: Date, to: Date) -> i64 {
    i64::from((to - from).get_days())
}

struct Per {
    age: Option<i64>,
    expiring: bool,
    expired: bool,
}

/// The deposits' mutation scores: of the mutants each frozen test kills, the share its
/// compensating properties kill (what FZ210 judges).
#[derive(Debug, Clone, Serialize)]
pub struct MutationScores {
    pub freezes: usize,
    pub killed_by_frozen: usize,
    pub killed_by_deposit: usize,
    /// `killed_by_deposit / killed_by_frozen` over every proven freeze; `null` when the
    /// frozen tests kill nothing.
    pub score: Option<f64>,
    /// Per freeze, lowest score first.
    pub deposits: Vec<DepositScore>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DepositScore {
    pub test_id: String,
    pub killed_by_frozen: usize,
    pub killed_by_deposit: usize,
    pub score: Option<f64>,
}

fn share(of: usize, by: usize) -> Option<f64> {
    (of > 0).then(|| by as f64 / of as f64)
}

impl MutationScores {
    fn of(freezes: &[FreezeFacts]) -> Option<MutationScores> {
        let mut deposits: Vec<DepositScore> = freezes
            .iter()
            .filter_map(|f| {
                let (killed, caught) = f.mutation?;
                Some(DepositScore {
                    test_id: f.test_id.clone(),
                    killed_by_frozen: killed,
                    killed_by_deposit: caught,
                    score: share(killed, caught),
                })
            })
            .collect();
        if deposits.is_empty() {
            return None;
        }
        deposits.sort_by(|a, b| {
            a.score
                .unwrap_or(f64::INFINITY)
                .total_cmp(&b.score.unwrap_or(f64::INFINITY))
                .then_with(|| a.test_id.cmp(&b.test_id))
        });
        let killed_by_frozen = deposits.iter().map(|d| d.killed_by_frozen).sum();
        let killed_by_deposit = deposits.iter().map(|d| d.killed_by_deposit).sum();
        Some(MutationScores {
            freezes: deposits.len(),
            killed_by_frozen,
            killed_by_deposit,
            score: share(killed_by_frozen, killed_by_deposit),
            deposits,
        })
    }

    /// `2 proven deposits kill 9 of 12 mutants their frozen tests kill (75%); lowest: ...`
    pub fn text(&self) -> String {
        let mut text = format!(
            "{} kill {} their frozen tests kill",
            crate::words::count_of(self.freezes, "proven deposit"),
            crate::words::part_of(
                i64::try_from(self.killed_by_deposit).unwrap_or(i64::MAX),
                i64::try_from(self.killed_by_frozen).unwrap_or(i64::MAX),
                "mutant"
            ),
        );
        if let Some(score) = self.score {
            text.push_str(&format!(" ({}%)", (score * 100.0).floor()));
        }
        if let Some(lowest) = self.deposits.first().filter(|d| d.score.is_some()) {
            text.push_str(&format!(
                "; lowest: {} {}%",
                lowest.test_id,
                (lowest.score.unwrap_or(0.0) * 100.0).floor()
            ));
        }
        text
    }
}

impl CoverageAtStake {
    /// `12 lines only frozen tests covered (3 freezes): 9 covered by their properties, 3 not`
    pub fn text(&self) -> String {
        format!(
            "{} only frozen tests covered ({}): {} covered by their properties, {} not",
            crate::words::count_of(self.lines_at_stake, "line"),
            crate::words::count_of(self.freezes, "freeze"),
            self.lines_covered_by_properties,
            self.lines_uncovered
        )
    }
}

impl Stats {
    pub fn compute(inputs: &Inputs) -> Stats {
        let today = inputs.today;
        let per: Vec<Per> = inputs
            .freezes
            .iter()
            .map(|f| {
                let age = f.opened.map(|o| days(o, today)).filter(|a| *a >= 0);
                let left = f.expires.map(|e| days(today, e));
                Per {
                    age,
                    expiring: left.is_some_and(|d| (0..=inputs.expiring_days).contains(&d)),
                    expired: left.is_some_and(|d| d < 0),
                }
            })
            .collect();
        let mut ages: Vec<i64> = per.iter().filter_map(|p| p.age).collect();
        ages.sort_unstable();
        let age_days = (!ages.is_empty()).then(|| Ages {
            median: nearest_rank(&ages, 50),
            p90: nearest_rank(&ages, 90),
            max: *ages.last().expect("non-empty"),
        });
        let age_buckets = BUCKETS
            .iter()
            .map(|(label, min, max)| Bucket {
                label: label.to_string(),
                min: *min,
                max: *max,
                freezes: ages
                    .iter()
                    .filter(|a| **a >= *min && max.is_none_or(|m| **a <= m))
                    .count(),
            })
            .collect();
        let evaluated = matches!(inputs.deposit, DepositInput::Evaluated);
        let failing_freezes: Vec<FailingFreeze> = inputs
            .freezes
            .iter()
            .filter(|f| !f.failing.is_empty())
            .map(|f| FailingFreeze {
                test_id: f.test_id.clone(),
                owner: f.owner.clone(),
                codes: f.failing.clone(),
            })
            .collect();
        let deposit = DepositFigures {
            evaluated,
            failing: evaluated.then_some(failing_freezes.len()),
            unproven: evaluated.then(|| {
                inputs
                    .freezes
                    .iter()
                    .filter(|f| f.failing.is_empty() && f.mutation.is_none())
                    .count()
            }),
            missing_inputs: match &inputs.deposit {
                DepositInput::Evaluated => Vec::new(),
                DepositInput::Missing(messages) => messages.clone(),
                DepositInput::NoRules => {
                    vec!["no FZ2xx/FZ3xx rule is loaded and enabled".to_string()]
                }
            },
            failing_freezes: if evaluated {
                failing_freezes
            } else {
                Vec::new()
            },
        };
        let group = |key: &dyn Fn(&FreezeFacts) -> Option<String>| -> Vec<Group> {
            let mut groups: BTreeMap<Option<String>, Group> = BTreeMap::new();
            for (f, p) in inputs.freezes.iter().zip(&per) {
                let name = key(f);
                let g = groups.entry(name.clone()).or_insert(Group {
                    name,
                    freezes: 0,
                    oldest_days: None,
                    expiring: 0,
                    expired: 0,
                    failing: evaluated.then_some(0),
                });
                g.freezes += 1;
                g.oldest_days = g.oldest_days.max(p.age);
                g.expiring += usize::from(p.expiring);
                g.expired += usize::from(p.expired);
                if let Some(n) = g.failing.as_mut() {
                    *n += usize::from(!f.failing.is_empty());
                }
            }
            let mut groups: Vec<Group> = groups.into_values().collect();
            // Most freezes first; named before unnamed; then by name.
            groups.sort_by(|a, b| {
                (b.freezes, a.name.is_none(), &a.name).cmp(&(a.freezes, b.name.is_none(), &b.name))
            });
            groups
        };
        let coverage = inputs
            .freezes
            .iter()
            .any(|f| f.coverage.is_some())
            .then(|| {
                let with: Vec<(usize, usize)> =
                    inputs.freezes.iter().filter_map(|f| f.coverage).collect();
                let lines_at_stake: usize = with.iter().map(|(s, _)| s).sum();
                let lines_covered_by_properties: usize = with.iter().map(|(_, c)| c).sum();
                CoverageAtStake {
                    freezes: with.len(),
                    lines_at_stake,
                    lines_covered_by_properties,
                    lines_uncovered: lines_at_stake - lines_covered_by_properties,
                }
            });
        let mutation = MutationScores::of(&inputs.freezes);
        let owners = group(&|f| f.owner.clone());
        let teams = if inputs.freezes.iter().any(|f| f.team.is_some()) {
            group(&|f| f.team.clone())
        } else {
            Vec::new()
        };
        let inherited = inputs.history.as_ref().map(|h| {
            let mut runs = 0;
            let mut refused = 0;
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for (_, record) in &h.history.records {
                let in_period = match (h.since, record.date()) {
                    (Some(since), Some(date)) => date >= since,
                    _ => true,
                };
                if !in_period {
                    continue;
                }
                runs += 1;
                let ids: BTreeSet<&str> = record
                    .refused_inherited
                    .iter()
                    .map(String::as_str)
                    .collect();
                refused += ids.len();
                for id in ids {
                    *counts.entry(id).or_default() += 1;
                }
            }
            let mut ids: Vec<RefusedId> = counts
                .into_iter()
                .map(|(id, runs)| RefusedId {
                    test_id: id.to_string(),
                    runs,
                })
                .collect();
            ids.sort_by(|a, b| b.runs.cmp(&a.runs).then_with(|| a.test_id.cmp(&b.test_id)));
            Inherited {
                history: h.name.clone(),
                since: h.since.map(|d| d.to_string()),
                runs,
                refused,
                distinct: ids.len(),
                torn_lines: h.history.torn_lines.clone(),
                ids,
            }
        });
        Stats {
            version: 1,
            today: today.to_string(),
            expiring_days: inputs.expiring_days,
            headline: Headline {
                deposit_failures: deposit.failing,
                median_age_days: age_days.map(|a| a.median),
                inherited_refused: inherited.as_ref().map(|i| i.refused),
            },
            freezes: FreezeFigures {
                open: inputs.freezes.len(),
                dated: ages.len(),
                age_days,
                expiring: per.iter().filter(|p| p.expiring).count(),
                expired: per.iter().filter(|p| p.expired).count(),
                age_buckets,
            },
            deposit,
            outside: {
                let in_period =
                    |record: &&crate::stats::history::Record| match inputs.history.as_ref() {
                        Some(h) => match (h.since, record.date()) {
                            (Some(since), Some(date)) => date >= since,
                            _ => true,
                        },
                        None => false,
                    };
                let records: Vec<&crate::stats::history::Record> = inputs
                    .history
                    .iter()
                    .flat_map(|h| h.history.records.iter().map(|(_, r)| r))
                    .filter(in_period)
                    .collect();
                let distinct: BTreeSet<&str> = records
                    .iter()
                    .flat_map(|r| r.unledgered.iter().map(String::as_str))
                    .collect();
                Outside {
                    baseline_entries: inputs.baseline,
                    refused: inputs
                        .history
                        .as_ref()
                        .map(|_| records.iter().map(|r| r.unledgered.len()).sum()),
                    refused_distinct: inputs.history.as_ref().map(|_| distinct.len()),
                    collected_per_run: records.iter().filter_map(|r| r.collected).collect(),
                }
            },
            inherited,
            owners,
            teams,
            coverage,
            mutation,
        }
    }
}

fn opt<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or("-".to_string(), |v| v.to_string())
}

fn plural(n: usize, one: &str, many: &str) -> String {
    crate::words::count_as(i64::try_from(n).unwrap_or(i64::MAX), one, many)
}

impl Stats {
    /// The deposit failures, and how many passing deposits no proof judged.
    fn deposit_text(&self) -> String {
        match self.deposit.failing {
            Some(n) => format!(
                "{n} of {}{}",
                plural(self.freezes.open, "freeze", "freezes"),
                match self.deposit.unproven {
                    Some(u) if u > 0 => {
                        format!("; {u} unproven (no proof record: give --proof)")
                    }
                    _ => String::new(),
                }
            ),
            None => "n/a (not evaluated: give the inputs below)".to_string(),
        }
    }

    fn median_text(&self) -> String {
        match self.headline.median_age_days {
            Some(d) => plural(d as usize, "day", "days"),
            None => "n/a (no dated freeze)".to_string(),
        }
    }

    fn refused_text(&self) -> String {
        match &self.inherited {
            Some(i) => {
                let period = match &i.since {
                    Some(since) => format!("since {since}"),
                    None => "(all history)".to_string(),
                };
                format!(
                    "{} ({} distinct) in {} {period}",
                    i.refused,
                    i.distinct,
                    plural(i.runs, "run", "runs")
                )
            }
            None => "n/a (give --history)".to_string(),
        }
    }

    fn group_rows(groups: &[Group]) -> Vec<Vec<String>> {
        groups
            .iter()
            .map(|g| {
                vec![
                    g.name.clone().unwrap_or_else(|| "(none)".into()),
                    g.freezes.to_string(),
                    opt(g.oldest_days),
                    g.expiring.to_string(),
                    g.expired.to_string(),
                    opt(g.failing),
                ]
            })
            .collect()
    }

    fn group_header(&self, first: &'static str) -> Vec<String> {
        vec![
            first.to_string(),
            "freezes".into(),
            "oldest (days)".into(),
            format!("expiring (≤{}d)", self.expiring_days),
            "expired".into(),
            "failing deposit".into(),
        ]
    }
}

/// Columns padded to their widest cell; the first column left-aligned, the rest right.
fn table(header: &[String], rows: &[Vec<String>], indent: &str) -> String {
    let width = |s: &str| s.chars().count();
    let mut widths: Vec<usize> = header.iter().map(|h| width(h)).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(width(cell));
        }
    }
    let line = |cells: &[String]| {
        let mut out = String::from(indent);
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = " ".repeat(w - width(cell));
            if i == 0 {
                out.push_str(cell);
                out.push_str(&pad);
            } else {
                out.push_str("  ");
                out.push_str(&pad);
                out.push_str(cell);
            }
        }
        out.trim_end().to_string() + "\n"
    };
    let mut out = line(header);
    for row in rows {
        out.push_str(&line(row));
    }
    out
}

pub fn render_human(s: &Stats) -> String {
    let mut out = format!("freezegate stats: {}\n\n", s.today);
    let label = |l: &str| format!("{l:<28}");
    out.push_str("Weekly numbers\n");
    out.push_str(&format!(
        "  {}{}\n  {}{}\n  {}{}\n",
        label("deposit failures"),
        s.deposit_text(),
        label("median age of open freezes"),
        s.median_text(),
        label("inherited skips refused"),
        s.refused_text()
    ));
    out.push_str(&format!(
        "  {}{}\n",
        label("skips outside the ledger"),
        s.outside.text()
    ));
    if let Some(suite) = s.outside.suite_text() {
        out.push_str(&format!("  {}{}\n", label("suite size"), suite));
    }
    out.push('\n');
    let f = &s.freezes;
    out.push_str(&format!("Open freezes: {}\n", f.open));
    match &f.age_days {
        Some(a) => out.push_str(&format!(
            "  {}median {}, p90 {}, max {} (nearest rank, {} dated)\n",
            label("age (days)"),
            a.median,
            a.p90,
            a.max,
            f.dated
        )),
        None => out.push_str(&format!("  {}none dated\n", label("age (days)"))),
    }
    out.push_str(&format!(
        "  {}{}\n  {}{}\n",
        label(&format!(
            "expiring within {}",
            crate::words::count(s.expiring_days, "day")
        )),
        f.expiring,
        label("expired"),
        f.expired
    ));
    let buckets: Vec<String> = f
        .age_buckets
        .iter()
        .map(|b| format!("{}: {}", b.label, b.freezes))
        .collect();
    out.push_str(&format!("  {}{}\n", label("ages"), buckets.join(", ")));
    if let Some(c) = &s.coverage {
        out.push_str(&format!("  {}{}\n", label("coverage at stake"), c.text()));
    }
    if let Some(m) = &s.mutation {
        out.push_str(&format!("  {}{}\n", label("mutation scores"), m.text()));
    }
    out.push_str("\nBy owner\n");
    out.push_str(&table(
        &s.group_header("owner"),
        &Stats::group_rows(&s.owners),
        "  ",
    ));
    if !s.teams.is_empty() {
        out.push_str("\nBy team\n");
        out.push_str(&table(
            &s.group_header("team"),
            &Stats::group_rows(&s.teams),
            "  ",
        ));
    }
    if !s.deposit.missing_inputs.is_empty() {
        out.push_str("\nDeposit checks not evaluated\n");
        for m in &s.deposit.missing_inputs {
            out.push_str(&format!("  {m}\n"));
        }
    }
    if !s.deposit.failing_freezes.is_empty() {
        out.push_str("\nFailing deposits\n");
        let rows: Vec<Vec<String>> = s
            .deposit
            .failing_freezes
            .iter()
            .map(|f| {
                vec![
                    f.test_id.clone(),
                    f.owner.clone().unwrap_or_else(|| "(none)".into()),
                    f.codes.join(", "),
                ]
            })
            .collect();
        out.push_str(&left_table(&["test", "owner", "rules"], &rows));
    }
    if let Some(i) = &s.inherited {
        if !i.ids.is_empty() {
            out.push_str(&format!("\nRefused inherited skips ({})\n", i.history));
            let rows: Vec<Vec<String>> = i
                .ids
                .iter()
                .map(|r| vec![r.test_id.clone(), r.runs.to_string()])
                .collect();
            out.push_str(&table(&["test".into(), "runs".into()], &rows, "  "));
        }
        if !i.torn_lines.is_empty() {
            out.push_str(&format!(
                "\nnote: {} skipped {} from an interrupted run: {}\n",
                i.history,
                plural(i.torn_lines.len(), "torn line", "torn lines"),
                i.torn_lines
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    out
}

/// A table whose columns are all left-aligned (text columns).
fn left_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let width = |s: &str| s.chars().count();
    let mut widths: Vec<usize> = header.iter().map(|h| width(h)).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(width(cell));
        }
    }
    let line = |cells: Vec<&str>| {
        let mut out = String::from(" ");
        for (cell, w) in cells.iter().zip(&widths) {
            out.push(' ');
            out.push_str(cell);
            out.push_str(&" ".repeat(w - width(cell) + 1));
        }
        out.trim_end().to_string() + "\n"
    };
    let mut out = line(header.to_vec());
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

pub fn render_json(s: &Stats) -> String {
    serde_json::to_string_pretty(s).expect("stats serialise") + "\n"
}

use crate::report::markdown::cell;

pub fn render_markdown(s: &Stats) -> String {
    let mut out = format!("## freezegate weekly numbers ({})\n\n", s.today);
    out.push_str("| Deposit failures | Median age of open freezes | Inherited skips refused |\n");
    out.push_str("|---:|---:|---:|\n");
    out.push_str(&format!(
        "| {} | {} | {} |\n\n",
        cell(&s.deposit_text()),
        cell(&s.median_text()),
        cell(&s.refused_text())
    ));
    let f = &s.freezes;
    let ages = match &f.age_days {
        Some(a) => format!(
            "age median {}, p90 {}, max {} days (nearest rank, {} dated)",
            a.median, a.p90, a.max, f.dated
        ),
        None => "no dated freeze".to_string(),
    };
    out.push_str(&format!(
        "{} open: {ages}; {} expiring within {}; {} expired.\n\n",
        plural(f.open, "freeze", "freezes"),
        f.expiring,
        crate::words::count(s.expiring_days, "day"),
        f.expired
    ));
    if let Some(c) = &s.coverage {
        out.push_str(&format!("Coverage at stake: {}.\n\n", c.text()));
    }
    if let Some(m) = &s.mutation {
        out.push_str(&format!("Mutation scores: {}.\n\n", m.text()));
    }
    out.push_str(&format!("Skips outside the ledger: {}.", s.outside.text()));
    if let Some(suite) = s.outside.suite_text() {
        out.push_str(&format!(" Suite size: {suite}."));
    }
    out.push_str("\n\n");
    if f.dated > 0 {
        let top = f.age_buckets.iter().map(|b| b.freezes).max().unwrap_or(0);
        let labels: Vec<String> = f
            .age_buckets
            .iter()
            .map(|b| format!("\"{}\"", b.label))
            .collect();
        let counts: Vec<String> = f
            .age_buckets
            .iter()
            .map(|b| b.freezes.to_string())
            .collect();
        out.push_str("### Freeze ages\n\n```mermaid\nxychart-beta\n");
        out.push_str("    title \"Open freezes by age\"\n");
        out.push_str(&format!(
            "    x-axis \"age (days)\" [{}]\n",
            labels.join(", ")
        ));
        out.push_str(&format!("    y-axis \"freezes\" 0 --> {}\n", top.max(1)));
        out.push_str(&format!("    bar [{}]\n```\n\n", counts.join(", ")));
    }
    let group_table = |title: &str, first: &'static str, groups: &[Group]| {
        let header = s.group_header(first);
        let mut t = format!("### {title}\n\n| ");
        t.push_str(
            &header
                .iter()
                .map(|h| {
                    let mut c = h.chars();
                    c.next()
                        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                        .unwrap_or_default()
                })
                .collect::<Vec<_>>()
                .join(" | "),
        );
        t.push_str(" |\n|---|---:|---:|---:|---:|---:|\n");
        for row in Stats::group_rows(groups) {
            t.push_str(&format!(
                "| {} |\n",
                row.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
            ));
        }
        t.push('\n');
        t
    };
    out.push_str(&group_table("By owner", "owner", &s.owners));
    if !s.teams.is_empty() {
        out.push_str(&group_table("By team", "team", &s.teams));
    }
    if !s.deposit.missing_inputs.is_empty() {
        out.push_str("### Deposit checks not evaluated\n\n");
        for m in &s.deposit.missing_inputs {
            out.push_str(&format!("- {}\n", cell(m)));
        }
        out.push('\n');
    }
    if !s.deposit.failing_freezes.is_empty() {
        out.push_str("### Failing deposits\n\n| Test | Owner | Rules |\n|---|---|---|\n");
        for f in &s.deposit.failing_freezes {
            out.push_str(&format!(
                "| `{}` | {} | {} |\n",
                cell(&f.test_id),
                cell(f.owner.as_deref().unwrap_or("(none)")),
                f.codes.join(", ")
            ));
        }
        out.push('\n');
    }
    if let Some(i) = &s.inherited {
        if !i.ids.is_empty() {
            out.push_str("### Refused inherited skips\n\n| Test | Runs |\n|---|---:|\n");
            for r in &i.ids {
                out.push_str(&format!("| `{}` | {} |\n", cell(&r.test_id), r.runs));
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutation_scores_sum_the_proven_deposits_and_list_the_weakest_first() {
        let freeze = |id: &str, mutation| FreezeFacts {
            test_id: id.into(),
            mutation,
            ..FreezeFacts::default()
        };
        let freezes = [
            freeze("t::strong", Some((4, 4))),
            freeze("t::weak", Some((8, 2))),
            freeze("t::unproven", None),
            freeze("t::guards_nothing", Some((0, 0))),
        ];
        let scores = MutationScores::of(&freezes).expect("three proven");
        assert_eq!(scores.freezes, 3);
        assert_eq!((scores.killed_by_frozen, scores.killed_by_deposit), (12, 6));
        assert_eq!(scores.score, Some(0.5));
        let order: Vec<&str> = scores.deposits.iter().map(|d| d.test_id.as_str()).collect();
        assert_eq!(order, ["t::weak", "t::strong", "t::guards_nothing"]);
        assert_eq!(
            scores.text(),
            "3 proven deposits kill 6 of 12 mutants their frozen tests kill (50%); lowest: t::weak 25%"
        );
        assert!(MutationScores::of(&[freeze("t::x", None)]).is_none());
    }

    #[test]
    fn nearest_rank_percentiles() {
        let ages = [0, 2, 3, 5, 6, 8, 10, 12, 14, 20];
        assert_eq!(nearest_rank(&ages, 50), 6);
        assert_eq!(nearest_rank(&ages, 90), 14);
        assert_eq!(nearest_rank(&ages, 100), 20);
        assert_eq!(nearest_rank(&[7], 50), 7);
        assert_eq!(nearest_rank(&[7], 90), 7);
        assert_eq!(nearest_rank(&[1, 9], 50), 1, "lower middle");
        assert_eq!(nearest_rank(&[1, 2, 3], 50), 2);
        assert_eq!(nearest_rank(&[1, 2, 3], 0), 1, "rank is at least 1");
    }
}
