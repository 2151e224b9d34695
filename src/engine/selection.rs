//! Which rules run and at what severity: `[rules]` in config, then `--select` /
//! `--ignore` (codes, prefixes or categories, like ruff).

use std::collections::HashMap;

use crate::config::{Config, RuleSetting};
use crate::engine::policy::{Pack, Severity};
use crate::error::GateError;

#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Effective severity of every enabled rule.
    enabled: HashMap<String, Severity>,
    /// The core's rule codes (policy `builtin:core`): they fire on behalf of the others.
    core: Vec<String>,
    /// The rules `--select` named (every rule without one): a core rule it did not
    /// name still runs, but is not listed as not evaluated.
    named: Vec<String>,
}

/// Whether `--select`/`--ignore` names the rule: a code, a code prefix, or a category.
fn matches(rule: &crate::engine::policy::RuleMeta, pattern: &str) -> bool {
    rule.code.starts_with(pattern) || rule.category == pattern
}

fn core_codes(pack: &Pack) -> Vec<String> {
    pack.rules
        .iter()
        .filter(|r| r.policy == crate::engine::policy::CORE_POLICY)
        .map(|r| r.code.clone())
        .collect()
}

/// Why config may not turn a core rule off: FZ001 guards every rule's inputs, and FZ503
/// speaks when the config itself is the patch's.
fn cannot_be_off(code: &str) -> Option<&'static str> {
    match code {
        crate::engine::policy::INPUT_MISSING => Some("a gate never passes by having less to look at; give the missing input instead"),
        crate::engine::policy::UNGUARDED_GATE => Some("without --trusted-ref this config is the patch's own; pass --trusted-ref to read config from reviewed history"),
        _ => None,
    }
}

impl Selection {
    pub fn new(
        pack: &Pack,
        config: &Config,
        select: &[String],
        ignore: &[String],
    ) -> Result<Selection, GateError> {
        for prefix in select.iter().chain(ignore) {
            if !pack.rules.iter().any(|r| matches(r, prefix)) {
                return Err(GateError::usage(format!(
                    "`{prefix}` matches no loaded rule (see `freezegate rules`)"
                )));
            }
        }
        let mut enabled = HashMap::new();
        for rule in &pack.rules {
            let mut severity = Some(rule.severity);
            if let Some((_, setting, span)) =
                config.rules.iter().find(|(code, _, _)| *code == rule.code)
            {
                severity = match setting {
                    RuleSetting::Error => Some(Severity::Error),
                    RuleSetting::Warn => Some(Severity::Warning),
                    RuleSetting::Off => {
                        if let Some(help) = cannot_be_off(&rule.code) {
                            let source = config
                                .source
                                .as_ref()
                                .expect("rules come from a config file");
                            return Err(GateError::new(
                                &source.name,
                                format!("{} ({}) cannot be turned off", rule.code, rule.name),
                            )
                            .at(source, span.clone(), "here")
                            .with_help(help));
                        }
                        None
                    }
                };
            }
            // The core's rules (FZ001, FZ501) guard every other rule: filters never remove them.
            if rule.policy != crate::engine::policy::CORE_POLICY {
                let selected = select.is_empty() || select.iter().any(|p| matches(rule, p));
                let ignored = ignore.iter().any(|p| matches(rule, p));
                if !selected || ignored {
                    severity = None;
                }
            }
            if let Some(severity) = severity {
                enabled.insert(rule.code.clone(), severity);
            }
        }
        for (code, _, span) in &config.rules {
            if pack.rule(code).is_none() {
                let source = config
                    .source
                    .as_ref()
                    .expect("rules come from a config file");
                return Err(GateError::new(
                    &source.name,
                    format!("[rules] names `{code}`, which no loaded policy declares"),
                )
                .at(source, span.clone(), "unknown rule")
                .with_help("see `freezegate rules` for the loaded rule codes"));
            }
        }
        let named: Vec<String> = pack
            .rules
            .iter()
            .filter(|r| select.is_empty() || select.iter().any(|p| matches(r, p)))
            .map(|r| r.code.clone())
            .collect();
        let selection = Selection {
            enabled,
            core: core_codes(pack),
            named,
        };
        // A core rule named on purpose (`--select FZ501`) is a check of its own.
        let core_selected = !select.is_empty()
            && selection.core.iter().any(|c| {
                selection.is_enabled(c)
                    && selection.is_named(c)
                    && c != crate::engine::policy::INPUT_MISSING
            });
        if selection.count() == 0 && !core_selected {
            return Err(GateError::usage(
                "no rule is enabled: a gate that checks nothing never passes (check --select/--ignore and [rules])",
            ));
        }
        Ok(selection)
    }

    /// Every rule enabled at its declared severity.
    pub fn all(pack: &Pack) -> Selection {
        Selection {
            enabled: pack
                .rules
                .iter()
                .map(|r| (r.code.clone(), r.severity))
                .collect(),
            core: core_codes(pack),
            named: pack.rules.iter().map(|r| r.code.clone()).collect(),
        }
    }

    /// Whether `--select` named the rule (every rule, without `--select`).
    pub fn is_named(&self, code: &str) -> bool {
        self.named.iter().any(|c| c == code)
    }

    pub fn severity(&self, code: &str) -> Option<Severity> {
        self.enabled.get(code).copied()
    }

    pub fn is_enabled(&self, code: &str) -> bool {
        self.enabled.contains_key(code)
    }

    /// Enabled rules other than the core's, which fire on behalf of others.
    pub fn count(&self) -> usize {
        self.enabled
            .keys()
            .filter(|code| !self.core.contains(code))
            .count()
    }
}
