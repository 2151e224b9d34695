//! A Markdown job summary (for `$GITHUB_STEP_SUMMARY`): verdict, violations, freezes.

use super::Report;
use crate::engine::policy::Severity;

/// Text made safe for one Markdown table cell: no column break, no line break.
pub fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

pub fn render(report: &Report) -> String {
    let s = &report.summary;
    let mut out = String::from("## freezegate\n\n");
    let verdict = if s.errors > 0 {
        "❌ **Failed**"
    } else {
        "✅ **Passed**"
    };
    use crate::words::count_of;
    out.push_str(&format!(
        "{verdict}: {}, {} in {}, {} checked.\n\n",
        count_of(s.errors, "error"),
        count_of(s.warnings, "warning"),
        count_of(s.freezes, "freeze"),
        count_of(report.checked_rules(), "rule"),
    ));
    if !s.not_evaluated.is_empty() {
        out.push_str("Not evaluated (neither passed nor failed):\n\n");
        for code in &s.not_evaluated {
            out.push_str(&format!(
                "- {code}: {}\n",
                cell(&report.not_evaluated_why(code))
            ));
        }
        out.push('\n');
    }
    for note in &report.notes {
        out.push_str(&format!(
            "> **Note ({})**: {}\n\n",
            note.code,
            cell(&note.message)
        ));
    }
    if !report.violations.is_empty() {
        out.push_str("| | Code | Rule | Test | Message | Location |\n|---|---|---|---|---|---|\n");
        for v in &report.violations {
            let icon = match v.severity {
                Severity::Error => "❌",
                Severity::Warning => "⚠️",
            };
            out.push_str(&format!(
                "| {icon} | {} | {} | {} | {} | {} |\n",
                v.code,
                v.name,
                v.test_id
                    .as_deref()
                    .map_or("-".to_string(), |id| format!("`{}`", cell(id))),
                cell(&v.message),
                cell(&v.place()),
            ));
        }
        out.push('\n');
    }
    if !report.freezes.is_empty() {
        let mut rows: Vec<_> = report.freezes.iter().collect();
        rows.sort_by(|a, b| {
            (&a.owner, &a.expires, &a.test_id).cmp(&(&b.owner, &b.expires, &b.test_id))
        });
        out.push_str(
            "### Freezes by owner\n\n| Owner | Test | Opened | Expires |\n|---|---|---|---|\n",
        );
        for f in rows {
            out.push_str(&format!(
                "| {} | `{}` | {} | {} |\n",
                cell(if f.owner.is_empty() {
                    "(none)"
                } else {
                    &f.owner
                }),
                cell(&f.test_id),
                cell(&f.opened),
                cell(&f.expires)
            ));
        }
    }
    out
}
