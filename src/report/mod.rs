//! What the scripts reported, resolved to rules, severities and places in files, and
//! written in each output format.

pub mod github;
pub mod human;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod sarif;
pub mod stats;

use serde::Serialize;

use crate::config::Config;
use crate::engine::policy::{Pack, RuleMeta, Severity};
use crate::engine::selection::Selection;
use crate::engine::{Evaluation, RawReport, Target};
use crate::inputs::ledger::Ledger;
use crate::inputs::tree::Value;
use crate::source::{Source, Span};

#[derive(Debug, Clone, Serialize)]
pub struct Violation {
    pub code: String,
    pub name: String,
    pub severity: Severity,
    pub message: String,
    pub help: String,
    pub test_id: Option<String>,
    pub field: Option<String>,
    pub file: Option<String>,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub policy: String,
    #[serde(skip)]
    pub location: Option<(Source, Span)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RuleCount {
    pub code: String,
    pub policy: String,
    pub violations: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
    pub freezes: usize,
    pub rules: usize,
    pub not_evaluated: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub version: u32,
    pub summary: Summary,
    pub rules: Vec<RuleCount>,
    pub violations: Vec<Violation>,
    /// Metadata of every enabled rule (SARIF and JUnit describe each one).
    #[serde(skip)]
    pub meta: Vec<RuleMeta>,
    /// The ledger's freezes, for summaries.
    #[serde(skip)]
    pub freezes: Vec<FreezeRow>,
}

/// One freeze as summaries show it.
#[derive(Debug, Clone, Default)]
pub struct FreezeRow {
    pub test_id: String,
    pub owner: String,
    pub team: String,
    pub opened: String,
    pub expires: String,
}

/// The output formats of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Human,
    Json,
    Sarif,
    Github,
    Junit,
    Markdown,
}

impl Format {
    pub fn render(self, report: &Report, colour: bool) -> String {
        self.render_capped(report, colour, 0)
    }

    /// Like [`Format::render`], with the human output capped at `max` diagnostics.
    pub fn render_capped(self, report: &Report, colour: bool, max: usize) -> String {
        match self {
            Format::Human => human::render_capped(report, colour, max),
            Format::Json => json::render(report),
            Format::Sarif => sarif::render(report),
            Format::Github => github::render(report),
            Format::Junit => junit::render(report),
            Format::Markdown => markdown::render(report),
        }
    }
}

impl Report {
    pub fn build(
        evaluation: &Evaluation,
        pack: &Pack,
        selection: &Selection,
        ledger: &Ledger,
        config: &Config,
    ) -> Report {
        let mut violations: Vec<Violation> = evaluation
            .reports
            .iter()
            .filter_map(|raw| resolve(raw, pack, selection, ledger, config))
            .collect();
        violations.sort_by(|a, b| {
            let key = |v: &Violation| {
                (
                    v.file.clone(),
                    v.location.as_ref().map(|(_, s)| s.start),
                    v.code.clone(),
                )
            };
            key(a).cmp(&key(b))
        });
        let rules = pack
            .rules
            .iter()
            .filter(|r| selection.is_enabled(&r.code))
            .map(|r| RuleCount {
                code: r.code.clone(),
                policy: r.policy.clone(),
                violations: violations.iter().filter(|v| v.code == r.code).count(),
            })
            .collect();
        let count = |s: Severity| violations.iter().filter(|v| v.severity == s).count();
        let meta = pack
            .rules
            .iter()
            .filter(|r| selection.is_enabled(&r.code))
            .map(|r| RuleMeta {
                severity: selection.severity(&r.code).unwrap_or(r.severity),
                ..r.clone()
            })
            .collect();
        let text = |entry: &crate::inputs::ledger::Entry, field: &str| {
            entry
                .field(field)
                .and_then(|n| n.as_str())
                .unwrap_or("")
                .to_string()
        };
        let freezes = ledger
            .entries
            .iter()
            .map(|e| FreezeRow {
                test_id: text(e, "test_id"),
                owner: text(e, "owner"),
                team: text(e, "team"),
                opened: text(e, "opened"),
                expires: text(e, "expires"),
            })
            .collect();
        Report {
            version: 1,
            summary: Summary {
                errors: count(Severity::Error),
                warnings: count(Severity::Warning),
                freezes: ledger.entries.len(),
                rules: selection.count(),
                not_evaluated: evaluation.not_evaluated.clone(),
            },
            rules,
            violations,
            meta,
            freezes,
        }
    }

    /// Exit code: 1 when an error (or, with `deny_warnings`, a warning) was reported.
    pub fn failed(&self, deny_warnings: bool) -> bool {
        self.summary.errors > 0 || deny_warnings && self.summary.warnings > 0
    }
}

impl Violation {
    /// End of the offending value as (line, column), when known.
    pub fn end(&self) -> Option<(usize, usize)> {
        self.location
            .as_ref()
            .map(|(source, span)| source.line_col(span.end))
    }

    /// `file:line:column` or `-`.
    pub fn place(&self) -> String {
        match (&self.file, self.line, self.column) {
            (Some(file), Some(line), Some(column)) => format!("{file}:{line}:{column}"),
            (Some(file), _, _) => file.clone(),
            _ => "-".into(),
        }
    }
}

fn resolve(
    raw: &RawReport,
    pack: &Pack,
    selection: &Selection,
    ledger: &Ledger,
    config: &Config,
) -> Option<Violation> {
    let rule = pack.rule(&raw.code)?;
    let severity = selection.severity(&raw.code)?;
    let (location, field) =
        match &raw.target {
            Target::None => (None, None),
            Target::Entry { index, field } => {
                let entry = ledger.entries.get(*index)?;
                let (span, _) = entry.span_of(field.as_deref().unwrap_or(""));
                let span = if field.is_none() {
                    entry.node.span.clone()
                } else {
                    span
                };
                (Some((ledger.source.clone(), span)), field.clone())
            }
            Target::Ledger { field } => {
                let span = field
                    .as_deref()
                    .and_then(|f| ledger.root.get(f))
                    .map_or(ledger.root.span.clone(), |n| n.span.clone());
                (Some((ledger.source.clone(), span)), field.clone())
            }
            Target::Allow { index, field } => {
                let located = config.source.clone().zip(config.params.as_ref()).and_then(
                    |(source, params)| {
                        let Value::Seq(items) = &params.get("allow_inherited")?.value else {
                            return None;
                        };
                        let item = items.get(*index)?;
                        let span = field
                            .as_deref()
                            .and_then(|f| item.get(f))
                            .map_or(item.span.clone(), |n| n.span.clone());
                        Some((source, span))
                    },
                );
                (located, field.clone())
            }
        };
    let (file, line, column) = match &location {
        Some((source, span)) => {
            let (line, column) = source.line_col(span.start);
            (Some(source.name.clone()), Some(line), Some(column))
        }
        None => (None, None, None),
    };
    Some(Violation {
        code: rule.code.clone(),
        name: rule.name.clone(),
        severity,
        message: raw.message.clone(),
        help: rule.help.clone(),
        test_id: raw.test_id.clone(),
        field,
        file,
        line,
        column,
        policy: if raw.code == "FZ001" {
            rule.policy.clone()
        } else {
            raw.script.clone()
        },
        location,
    })
}
