//! What the scripts reported, resolved to rules, severities and places in files, and
//! written in each output format.

pub mod github;
pub mod human;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod sarif;

use serde::Serialize;

use crate::config::Config;
use crate::document::Value;
use crate::engine::policy::{Pack, RuleMeta, Severity};
use crate::engine::selection::Selection;
use crate::engine::{Evaluation, RawReport, Target};
use crate::inputs::ledger::Ledger;
use crate::source::{Source, Span};

#[derive(Debug, Clone, Serialize)]
pub struct Violation {
    pub code: String,
    pub name: String,
    pub severity: Severity,
    pub message: String,
    pub help: String,
    pub test_id: Option<String>,
    /// Every test the violation is about, when it is about more than one (grouped cases
    /// of one parametrized test, or the tests one cause hid); `test_id` is the first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub test_ids: Vec<String>,
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
    /// Whether the rule ran: a rule whose inputs were not given did not pass, it was
    /// not evaluated (and its `violations` count says nothing).
    pub evaluated: bool,
    pub violations: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
    pub freezes: usize,
    /// Every enabled rule, the core's included: the length of the `rules` array.
    pub rules: usize,
    /// The enabled rules that ran.
    pub evaluated: usize,
    /// The enabled rules that did not run, for want of an input.
    pub not_evaluated: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub version: u32,
    pub summary: Summary,
    pub rules: Vec<RuleCount>,
    pub violations: Vec<Violation>,
    /// What the scripts said about how they judged.
    pub notes: Vec<crate::engine::Note>,
    /// Every test of the base the patch removed, renamed, disabled or edited, with how.
    pub touched: Vec<crate::engine::Touched>,
    /// The distinct inputs counted for each compensating property, and how.
    pub samples: Vec<SampleRow>,
    /// How many tests the run collected, when the collection was given (for the history).
    #[serde(skip)]
    pub collected: Option<usize>,
    /// Metadata of every enabled rule (SARIF and JUnit describe each one).
    #[serde(skip)]
    pub meta: Vec<RuleMeta>,
    /// The ledger's freezes, for summaries.
    #[serde(skip)]
    pub freezes: Vec<FreezeRow>,
    /// For each rule not evaluated, the inputs it waited for that were not given.
    #[serde(skip)]
    pub absent: std::collections::BTreeMap<String, Vec<String>>,
    /// `--deny-warnings`: a warning fails the check, and every report says so.
    #[serde(skip)]
    pub deny_warnings: bool,
}

/// A compensating property's sample count, as the JSON report and `--trace` show it.
#[derive(Debug, Clone, Serialize)]
pub struct SampleRow {
    pub property: String,
    pub distinct: i64,
    pub method: crate::inputs::samples::Method,
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
        let rules: Vec<RuleCount> = pack
            .rules
            .iter()
            .filter(|r| selection.is_enabled(&r.code))
            .map(|r| RuleCount {
                code: r.code.clone(),
                policy: r.policy.clone(),
                evaluated: evaluation.evaluated.contains(&r.code),
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
                rules: rules.len(),
                evaluated: rules.iter().filter(|r| r.evaluated).count(),
                not_evaluated: evaluation.not_evaluated.clone(),
            },
            rules,
            violations,
            notes: evaluation.notes.clone(),
            touched: evaluation.touched.clone(),
            samples: Vec::new(),
            collected: None,
            meta,
            freezes,
            absent: evaluation.absent.clone(),
            deny_warnings: false,
        }
    }

    /// How many enabled rules ran: the JSON summary's `evaluated`, which the human and
    /// Markdown summaries say as "N rules checked".
    pub fn checked_rules(&self) -> usize {
        self.summary.evaluated
    }

    /// What a rule that did not run lacked: the inputs it waited for that were not
    /// given, in the words of FZ001.
    pub fn not_evaluated_why(&self, code: &str) -> String {
        match self.absent_hints(code) {
            None => "its script stopped for a missing input (see FZ001)".to_string(),
            Some(hints) => format!("it needs {hints}"),
        }
    }

    /// The inputs a rule not evaluated waited for, as FZ001 names them (`None` when its
    /// script stopped for an input before it reached the rule).
    fn absent_hints(&self, code: &str) -> Option<String> {
        // A run record FZ404 refused was given, and feeds no rule.
        let refused = self.notes.iter().any(|n| n.code == "FZ404");
        let absent: Vec<String> = self
            .absent
            .get(code)
            .into_iter()
            .flatten()
            .map(|input| {
                match refused && crate::inputs::load::FROM_RUNS.contains(&input.as_str()) {
                    true => format!(
                        "{} (the one given is refused: FZ404)",
                        crate::inputs::hint_for(input)
                    ),
                    false => crate::inputs::hint_for(input).to_string(),
                }
            })
            .collect();
        (!absent.is_empty()).then(|| crate::words::join_and(&absent))
    }

    /// The rules not evaluated, grouped by what they lacked: `(codes, what to give)`.
    pub fn not_evaluated_grouped(&self) -> Vec<(Vec<String>, String)> {
        let mut groups: Vec<(Vec<String>, String)> = Vec::new();
        for code in &self.summary.not_evaluated {
            let why = match self.absent_hints(code) {
                Some(hints) => format!("give {hints}"),
                None => "their script stopped for a missing input (see FZ001)".to_string(),
            };
            match groups.iter_mut().find(|(_, w)| *w == why) {
                Some((codes, _)) => codes.push(code.clone()),
                None => groups.push((vec![code.clone()], why)),
            }
        }
        groups
    }

    /// What FZ001 said: the required inputs that were not given, and the rules each kept
    /// from running.
    pub fn missing_inputs(&self) -> Vec<String> {
        self.violations
            .iter()
            .filter(|v| v.code == crate::engine::policy::INPUT_MISSING)
            .map(|v| v.message.clone())
            .collect()
    }

    /// Whether the rule ran (see [`RuleCount::evaluated`]).
    pub fn is_evaluated(&self, code: &str) -> bool {
        self.rules.iter().any(|r| r.code == code && r.evaluated)
    }

    /// Exit code: 1 when an error (or, with `--deny-warnings`, a warning) was reported.
    pub fn failed(&self) -> bool {
        self.summary.errors > 0 || self.deny_warnings && self.summary.warnings > 0
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

/// A line of a suite file, for a label on it: the file relative to the repository (pytest
/// names it relative to its rootdir), the span its text without the indentation.
fn source_line(
    config: &Config,
    file: &str,
    line: usize,
    find: Option<&str>,
) -> Option<(Source, Span)> {
    let in_repo = crate::inputs::ids::repo_file(&config.pytest_root_in_repo(), file);
    let source = crate::source::SourceFile::read(&config.repo_root.join(&in_repo), in_repo).ok()?;
    let lines: Vec<&str> = source.text.lines().collect();
    // Python gives a decorated function the line of its first decorator: the marker may
    // be any decorator down to the `def` (or `class`) it decorates.
    let statement = (line.max(1)..=lines.len())
        .take(30)
        .find(|&at| {
            let text = lines[at - 1].trim_start();
            ["def ", "async def ", "class "]
                .iter()
                .any(|start| text.starts_with(start))
        })
        .unwrap_or(line);
    // A decorator stands right above its `def`, or above its class: look up through it.
    let above = |word: &str| {
        (statement.saturating_sub(30).max(1)..=statement.min(lines.len()))
            .rev()
            .find(|&at| lines[at - 1].contains(word))
    };
    let line = match find {
        None => line,
        // The `def` (or `class`) itself, below its decorators (the first decorator's
        // line when they run longer than 30 lines: a long parametrize table).
        Some("statement") => statement,
        // pytest gives a class's markers like a module's: no `pytestmark` line means the
        // marker decorates the class.
        Some("pytestmark") => lines
            .iter()
            .position(|l| l.trim_start().starts_with("pytestmark"))
            .map(|at| at + 1)
            .or_else(|| above("skip"))
            .unwrap_or(line),
        Some(word) => above(word).unwrap_or(line),
    };
    let start = source.offset_of(line, 1);
    let text = source.text.get(start..)?;
    let end = start + text.find('\n').unwrap_or(text.len());
    let indent = text.len() - text.trim_start_matches([' ', '\t']).len();
    let begin = (start + indent).min(end);
    Some((source.clone(), begin..end.max(begin)))
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
            Target::Source { file, line, find } => {
                (source_line(config, file, *line, find.as_deref()), None)
            }
        };
    let (file, line, column) = match (&location, &raw.target) {
        (Some((source, span)), _) => {
            let (line, column) = source.line_col(span.start);
            (Some(source.name.clone()), Some(line), Some(column))
        }
        // A test file that cannot be read here still names its place.
        (None, Target::Source { file, line, .. }) => (Some(file.clone()), Some(*line), Some(1)),
        (None, _) => (None, None, None),
    };
    Some(Violation {
        code: rule.code.clone(),
        name: rule.name.clone(),
        severity,
        message: raw.message.clone(),
        help: rule.help.clone(),
        test_id: raw.test_id.clone(),
        test_ids: raw.test_ids.clone(),
        field,
        file,
        line,
        column,
        policy: if raw.code == crate::engine::policy::INPUT_MISSING {
            rule.policy.clone()
        } else {
            raw.script.clone()
        },
        location,
    })
}
