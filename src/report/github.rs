//! GitHub Actions workflow commands: `::error file=…,line=…,col=…,title=…::message`.

use super::Report;
use crate::engine::policy::Severity;

/// Escapes a workflow-command message (`%`, CR, LF).
pub fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow-command property value (also `:` and `,`).
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for v in &report.violations {
        let command = match v.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut properties = Vec::new();
        if let (Some(file), Some(line), Some(column)) = (&v.file, v.line, v.column) {
            properties.push(format!("file={}", escape_property(file)));
            properties.push(format!("line={line}"));
            properties.push(format!("col={column}"));
            if let Some((end_line, end_column)) = v.end() {
                properties.push(format!("endLine={end_line}"));
                properties.push(format!("endColumn={end_column}"));
            }
        }
        properties.push(format!(
            "title={}",
            escape_property(&format!("{} {}", v.code, v.name))
        ));
        let message = match &v.test_id {
            Some(id) if !v.message.contains(id.as_str()) => {
                format!("{} ({id})\n{}", v.message, v.help)
            }
            _ => format!("{}\n{}", v.message, v.help),
        };
        out.push_str(&format!(
            "::{command} {}::{}\n",
            properties.join(","),
            escape_data(&message)
        ));
    }
    out.push_str(&format!("{}\n", super::human::summary_line(report)));
    out
}
