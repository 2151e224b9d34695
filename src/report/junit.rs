//! JUnit XML: one test case per enabled rule; errors are failures, warnings stay visible
//! in the passing case's output.

use quick_junit::{NonSuccessKind, Report as JunitReport, TestCase, TestCaseStatus, TestSuite};

use super::Report;
use crate::engine::policy::Severity;

pub fn render(report: &Report) -> String {
    let mut suite = TestSuite::new("freezegate");
    for rule in &report.meta {
        let violations: Vec<_> = report
            .violations
            .iter()
            .filter(|v| v.code == rule.code)
            .collect();
        let lines: Vec<String> = violations
            .iter()
            .map(|v| {
                let who = v
                    .test_id
                    .as_deref()
                    .map(|id| format!(" [{id}]"))
                    .unwrap_or_default();
                match &v.file {
                    Some(_) => format!("{}: {}{who}", v.place(), v.message),
                    None => format!("{}{who}", v.message),
                }
            })
            .collect();
        let name = format!("{} {}", rule.code, rule.name);
        let errors = violations
            .iter()
            .filter(|v| v.severity == Severity::Error)
            .count();
        let mut case = if !report.is_evaluated(&rule.code) {
            // A rule that did not run neither passed nor failed.
            let mut status = TestCaseStatus::skipped();
            status.set_message(format!(
                "not evaluated: {}",
                report.not_evaluated_why(&rule.code)
            ));
            TestCase::new(name, status)
        } else if errors > 0 {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status
                .set_message(format!(
                    "{} of {}",
                    crate::words::count_of(errors, "violation"),
                    rule.code
                ))
                .set_type(rule.code.clone())
                .set_description(format!("{}\n\nhelp: {}", lines.join("\n"), rule.help));
            TestCase::new(name, status)
        } else {
            let mut case = TestCase::new(name, TestCaseStatus::success());
            if !lines.is_empty() {
                case.set_system_out(format!(
                    "warnings:\n{}\n\nhelp: {}",
                    lines.join("\n"),
                    rule.help
                ));
            }
            case
        };
        case.set_classname(format!(
            "freezegate.{}",
            rule.policy.replace([':', '/'], ".")
        ));
        suite.add_test_case(case);
    }
    let mut junit = JunitReport::new("freezegate");
    junit.add_test_suite(suite);
    junit.to_string().expect("JUnit serializes")
}
