//! The JSON report, version 1 (see DESIGN.md).

use super::Report;

pub fn render(report: &Report) -> String {
    let mut text = serde_json::to_string_pretty(report).expect("a report always serializes");
    text.push('\n');
    text
}
