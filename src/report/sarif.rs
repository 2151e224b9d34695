//! SARIF 2.1.0: one result per violation with its exact region, and every loaded rule
//! described in `tool.driver.rules`.

use serde_json::{json, Value};

use super::Report;
use crate::engine::policy::Severity;

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

pub fn render(report: &Report) -> String {
    let rules: Vec<Value> = report
        .meta
        .iter()
        .map(|rule| {
            json!({
                "id": rule.code,
                "name": rule.name,
                "shortDescription": { "text": rule.summary },
                "fullDescription": { "text": format!("{} {}", rule.summary, rule.help) },
                "help": { "text": rule.help },
                "defaultConfiguration": { "level": level(rule.severity) },
                "properties": { "policy": rule.policy, "evaluated": report.is_evaluated(&rule.code) },
            })
        })
        .collect();
    let results: Vec<Value> = report
        .violations
        .iter()
        .map(|v| {
            let mut result = json!({
                "ruleId": v.code,
                "ruleIndex": report.meta.iter().position(|r| r.code == v.code),
                "level": level(v.severity),
                "message": { "text": match &v.test_id {
                    Some(id) if !v.message.contains(id.as_str()) => format!("{} ({id})", v.message),
                    _ => v.message.clone(),
                } },
                "properties": { "policy": v.policy, "testId": v.test_id, "field": v.field },
            });
            if let (Some(file), Some(line), Some(column)) = (&v.file, v.line, v.column) {
                let (end_line, end_column) = v.end().unwrap_or((line, column));
                result["locations"] = json!([{
                    "physicalLocation": {
                        "artifactLocation": { "uri": file, "uriBaseId": "%SRCROOT%" },
                        "region": {
                            "startLine": line,
                            "startColumn": column,
                            "endLine": end_line,
                            "endColumn": end_column.max(column + usize::from(end_line == line)),
                        },
                    },
                }]);
            }
            result
        })
        .collect();
    // A rule that did not run is said so, never left to read as a clean pass.
    let notifications: Vec<Value> = report
        .summary
        .not_evaluated
        .iter()
        .map(|code| {
            json!({
                "level": "warning",
                "message": { "text": format!("{code} was not evaluated: {}", report.not_evaluated_why(code)) },
                "descriptor": { "id": code },
                "associatedRule": { "id": code, "index": report.meta.iter().position(|r| &r.code == code) },
            })
        })
        .collect();
    let sarif = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "freezegate",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            } },
            "originalUriBaseIds": { "%SRCROOT%": { "description": { "text": "The repository root." } } },
            "columnKind": "unicodeCodePoints",
            "invocations": [{
                "executionSuccessful": true,
                "toolExecutionNotifications": notifications,
            }],
            "results": results,
        }],
    });
    let mut text = serde_json::to_string_pretty(&sarif).expect("SARIF serializes");
    text.push('\n');
    text
}
