//! `freezegate rules` and `freezegate explain CODE`.

use std::path::Path;

use crate::cli::{RulesArgs, RulesFormat};
use crate::commands::EXIT_PASS;
use crate::engine::selection::Selection;
use crate::error::GateError;
use crate::gate::Gate;

pub fn list(cwd: &Path, config_path: Option<&Path>, args: &RulesArgs) -> Result<u8, GateError> {
    if let Some(dir) = &args.pages {
        return crate::commands::rule_pages::write(cwd, config_path, dir, &args.cases);
    }
    let gate = Gate::load(cwd, config_path)?;
    let selection = Selection::new(&gate.pack, &gate.config, &[], &[])
        .unwrap_or_else(|_| Selection::all(&gate.pack));
    let rows: Vec<serde_json::Value> = gate
        .pack
        .rules
        .iter()
        .map(|r| {
            serde_json::json!({
                "code": r.code,
                "name": r.name,
                "severity": selection.severity(&r.code).map_or("off", |s| s.as_str()),
                "default_severity": r.severity.as_str(),
                "policy": r.policy,
                "category": r.category,
                "summary": r.summary,
            })
        })
        .collect();
    match args.format {
        RulesFormat::Markdown => print!("{}", markdown_table(&gate.pack)),
        RulesFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&rows).expect("rules serialize")
        ),
        RulesFormat::Human => {
            let width = gate
                .pack
                .rules
                .iter()
                .map(|r| r.name.len())
                .max()
                .unwrap_or(0);
            for row in &rows {
                println!(
                    "{:<7} {:<width$}  {:<7}  {:<24}  {}",
                    row["code"].as_str().unwrap_or(""),
                    row["name"].as_str().unwrap_or(""),
                    row["severity"].as_str().unwrap_or(""),
                    row["policy"].as_str().unwrap_or(""),
                    row["summary"].as_str().unwrap_or(""),
                );
            }
        }
    }
    Ok(EXIT_PASS)
}

/// The decision table: rule, when it fires, default severity, how to clear it.
pub fn markdown_table(pack: &crate::engine::policy::Pack) -> String {
    let mut out = String::from(
        "| Code | Name | Fires when | Default | How to clear it |\n|---|---|---|---|---|\n",
    );
    for rule in &pack.rules {
        let cell = crate::report::markdown::cell;
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            rule.code,
            rule.name,
            cell(&rule.summary),
            rule.severity.as_str(),
            cell(&rule.help)
        ));
    }
    out
}

pub fn explain(cwd: &Path, config_path: Option<&Path>, code: &str) -> Result<u8, GateError> {
    let gate = Gate::load(cwd, config_path)?;
    let code = code.to_ascii_uppercase();
    let Some(rule) = gate.pack.rule(&code) else {
        let known: Vec<&str> = gate.pack.rules.iter().map(|r| r.code.as_str()).collect();
        return Err(GateError::usage(format!(
            "unknown rule `{code}`; loaded rules: {}",
            known.join(", ")
        )));
    };
    println!("{} ({})", rule.code, rule.name);
    println!();
    println!("{}", rule.summary);
    println!();
    if let Some(doc) = gate.pack.doc(rule) {
        println!("{doc}");
        println!();
    }
    println!("Category: {}", rule.category);
    println!("Default severity: {}", rule.severity.as_str());
    // What this repository's config makes of it ([rules] only; --select/--ignore are
    // per run).
    let selection = crate::engine::selection::Selection::new(&gate.pack, &gate.config, &[], &[])?;
    let effective = selection
        .severity(&rule.code)
        .map_or("off", |severity| severity.as_str());
    if effective != rule.severity.as_str() {
        let config = gate
            .config
            .source
            .as_ref()
            .map_or("config".to_string(), |source| source.name.clone());
        println!("Severity here: {effective} (set in {config} [rules])");
    }
    if let Some(needs) = rule.needs.as_ref().filter(|needs| !needs.is_empty()) {
        let flags: Vec<&str> = needs.iter().map(|n| crate::inputs::hint_for(n)).collect();
        println!("Needs: {}", crate::words::join_and(&flags));
    }
    println!("Policy: {}", rule.policy);
    if rule.is_builtin() {
        println!(
            "Docs: {}",
            crate::commands::rule_pages::rule_url(&rule.code)
        );
    }
    println!();
    println!("How to clear it: {}", rule.help);
    Ok(EXIT_PASS)
}
