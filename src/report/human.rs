//! The human report: one miette diagnostic per violation, labelled on the offending
//! value, then a summary line.

use std::fmt;

use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, SourceCode};

use super::{Report, Violation};
use crate::engine::policy::Severity;

/// Whether the terminal gets colour: only on a TTY, and never with `NO_COLOR`.
pub fn use_colour(is_tty: bool) -> bool {
    is_tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

pub fn handler(colour: bool) -> GraphicalReportHandler {
    let theme = if colour {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    GraphicalReportHandler::new_themed(theme)
        .with_links(false)
        .with_wrap_lines(false)
}

struct ViolationDiagnostic<'a> {
    violation: &'a Violation,
    source: Option<crate::source::Source>,
}

impl fmt::Debug for ViolationDiagnostic<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ViolationDiagnostic")
            .field("code", &self.violation.code)
            .finish()
    }
}

impl fmt::Display for ViolationDiagnostic<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.violation;
        match &v.test_id {
            // A grouped violation's message names its tests itself.
            Some(id) if v.test_ids.is_empty() && !v.message.contains(id.as_str()) => {
                write!(f, "{} {}: {} ({id})", v.code, v.name, v.message)?
            }
            _ => write!(f, "{} {}: {}", v.code, v.name, v.message)?,
        }
        // Without a snippet, the place still belongs in the message.
        if self.source.is_none() && v.file.is_some() {
            write!(f, " [{}]", v.place())?;
        }
        Ok(())
    }
}

impl std::error::Error for ViolationDiagnostic<'_> {}

impl Diagnostic for ViolationDiagnostic<'_> {
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.violation.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(&self.violation.help))
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.source.as_deref().map(|s| s as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        self.source.as_ref()?;
        let (_, span) = self.violation.location.as_ref()?;
        let label = match &self.violation.field {
            Some(field) => format!("{field}: {}", self.violation.name),
            None => self.violation.name.clone(),
        };
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(
            Some(label),
            span.clone(),
        ))))
    }
}

/// Every violation as a diagnostic.
pub fn render(report: &Report, colour: bool) -> String {
    render_capped(report, colour, 0)
}

/// At most `max` diagnostics (0: all), then how many more there are per rule, so a
/// run with thousands of violations stays readable and fast.
pub fn render_capped(report: &Report, colour: bool, max: usize) -> String {
    let handler = handler(colour);
    let mut out = String::new();
    let shown = if max == 0 {
        report.violations.len()
    } else {
        max.min(report.violations.len())
    };
    for violation in &report.violations[..shown] {
        render_one(&handler, violation, &mut out);
    }
    let hidden = &report.violations[shown..];
    if !hidden.is_empty() {
        let mut per_rule: Vec<(&str, &str, usize)> = Vec::new();
        for v in hidden {
            match per_rule.iter_mut().find(|(code, _, _)| *code == v.code) {
                Some(entry) => entry.2 += 1,
                None => per_rule.push((&v.code, &v.name, 1)),
            }
        }
        per_rule.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(b.0)));
        out.push_str(&format!(
            "… and {} more not shown (--max-diagnostics 0 shows all; --format json lists every one):\n",
            hidden.len()
        ));
        for (code, name, count) in per_rule {
            out.push_str(&format!("  {code} {name}: {count}\n"));
        }
        out.push('\n');
    }
    for note in &report.notes {
        out.push_str(&format!("note: {}: {}\n", note.code, note.message));
    }
    for (codes, why) in report.not_evaluated_grouped() {
        out.push_str(&format!("not evaluated: {}: {why}\n", codes.join(", ")));
    }
    out.push_str(&summary_line(report));
    out.push('\n');
    out
}

/// One violation as a diagnostic, as the report shows it (the rule pages' examples).
pub fn render_violation(violation: &Violation, colour: bool) -> String {
    let mut out = String::new();
    render_one(&handler(colour), violation, &mut out);
    out
}

fn render_one(handler: &GraphicalReportHandler, violation: &Violation, out: &mut String) {
    let diagnostic = ViolationDiagnostic {
        violation,
        source: violation
            .location
            .as_ref()
            .filter(|(source, span)| source.snippet_fits_span(span))
            .map(|(source, _)| source.clone()),
    };
    let _ = handler.render_report(out, &diagnostic);
    out.push('\n');
}

pub fn summary_line(report: &Report) -> String {
    use crate::words::count_of;
    let s = &report.summary;
    let verdict = if report.failed() { "failed" } else { "passed" };
    let checked = report.checked_rules();
    let mut line = format!(
        "freezegate: {verdict}: {}, {} in {} ({} checked)",
        count_of(s.errors, "error"),
        count_of(s.warnings, "warning"),
        count_of(s.freezes, "freeze"),
        count_of(checked, "rule"),
    );
    if !s.not_evaluated.is_empty() {
        line.push_str(&format!("; not evaluated: {}", s.not_evaluated.join(", ")));
    }
    line
}

/// Renders an exit-2 error the same way as violations.
pub fn render_error(error: &dyn Diagnostic, colour: bool) -> String {
    let mut out = String::new();
    let _ = handler(colour).render_report(&mut out, error);
    out
}
