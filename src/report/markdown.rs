//! A Markdown job summary (for `$GITHUB_STEP_SUMMARY`): verdict, violations, freezes.

use super::Report;
use crate::engine::policy::Severity;

fn cell(text: &str) -> String {
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
    out.push_str(&format!(
        "{verdict}: {} error(s), {} warning(s) in {} freeze(s), {} rule(s) checked.\n\n",
        s.errors, s.warnings, s.freezes, s.rules
    ));
    if !s.not_evaluated.is_empty() {
        out.push_str(&format!(
            "Not evaluated (missing input): {}\n\n",
            s.not_evaluated.join(", ")
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
