//! What the scripts reported, resolved to rules, severities and places in files, and
//! written in each output format.

pub mod human;
pub mod json;

use serde::Serialize;

use crate::config::Config;
use crate::engine::policy::{Pack, Severity};
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
        }
    }

    /// Exit code: 1 when an error (or, with `deny_warnings`, a warning) was reported.
    pub fn failed(&self, deny_warnings: bool) -> bool {
        self.summary.errors > 0 || deny_warnings && self.summary.warnings > 0
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
