//! Policy scripts: the builtin pack and directories of `*.rhai` files, each compiled
//! once, with its `RULES` metadata read from the AST without running the script.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rhai::{Dynamic, Engine, EvalAltResult, Module, Position, Scope, AST};

use crate::config::PolicySpec;
use crate::error::GateError;
use crate::source::{Source, SourceFile};

/// The default pack, compiled into the binary so a patch cannot edit it.
pub const BUILTIN: [(&str, &str); 8] = [
    ("shape.rhai", include_str!("../../policies/shape.rhai")),
    ("deposit.rhai", include_str!("../../policies/deposit.rhai")),
    ("proof.rhai", include_str!("../../policies/proof.rhai")),
    ("samples.rhai", include_str!("../../policies/samples.rhai")),
    (
        "inheritance.rhai",
        include_str!("../../policies/inheritance.rhai"),
    ),
    (
        "accounting.rhai",
        include_str!("../../policies/accounting.rhai"),
    ),
    (
        "tampering.rhai",
        include_str!("../../policies/tampering.rhai"),
    ),
    (
        "withdrawal.rhai",
        include_str!("../../policies/withdrawal.rhai"),
    ),
];

include!(concat!(env!("OUT_DIR"), "/pack_tests.rs"));
include!(concat!(env!("OUT_DIR"), "/pack_docs.rs"));

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct RuleMeta {
    pub code: String,
    pub name: String,
    pub severity: Severity,
    pub summary: String,
    pub help: String,
    pub policy: String,
    /// The rule's family (`deposit`, `samples`, ...), like ruff's linter prefixes: what
    /// the core and `--select` ask for instead of code prefixes. Default: the script's
    /// file stem.
    pub category: String,
    /// The longer explanation `explain` prints (why the rule matters, a violation, its
    /// fix) when the script's `RULES` gives one; see [`Pack::doc`] for where else it is.
    pub doc: Option<String>,
    /// The inputs the rule reads (`needs: ["collected"]`); `None` when the script does
    /// not say, and then the rule counts as evaluated only when its script ran to its end.
    pub needs: Option<Vec<String>>,
}

impl RuleMeta {
    /// A rule of the core or the embedded pack (with a doc and a page on the site), not
    /// an org rule.
    pub fn is_builtin(&self) -> bool {
        self.policy == CORE_POLICY || self.policy.starts_with("builtin:")
    }
}

/// The rule the core itself reports when a script needs an input that was not given.
pub fn input_missing_rule() -> RuleMeta {
    RuleMeta {
        code: INPUT_MISSING.into(),
        name: "input-missing".into(),
        severity: Severity::Error,
        summary: "A rule needs an input that was not given.".into(),
        help: "Pass the flag named in the message (or set it in config); a gate never passes by having less to look at.".into(),
        policy: CORE_POLICY.into(),
        category: CORE_CATEGORY.into(),
        doc: None,
        needs: Some(Vec::new()),
    }
}

/// The rule the core reports when, under `--trusted-ref`, the patch changed the gate's
/// own files.
pub fn gate_modified_rule() -> RuleMeta {
    RuleMeta {
        code: GATE_MODIFIED.into(),
        name: "gate-modified".into(),
        severity: Severity::Warning,
        summary: "With --trusted-ref, the patch changes config or policy files; the trusted versions were used instead.".into(),
        help: "Land gate changes (config, policies, owners file) in their own reviewed change; a patch is always judged by the gate of the trusted ref.".into(),
        policy: CORE_POLICY.into(),
        category: CORE_CATEGORY.into(),
        doc: None,
        needs: Some(vec!["trusted_ref".into()]),
    }
}

/// The rule the core reports when the patch changes the gate's own files and the check
/// has no trusted ref to read them from.
pub fn unguarded_gate_rule() -> RuleMeta {
    RuleMeta {
        code: UNGUARDED_GATE.into(),
        name: "unguarded-gate".into(),
        severity: Severity::Warning,
        summary: "The patch changes the gate's own config, policies or skip baseline, and the check has no --trusted-ref: the patch was judged by its own gate.".into(),
        help: "Pass --trusted-ref (the base commit, e.g. origin/main) so config, policies and the skip baseline come from reviewed history; the shipped action and workflow do.".into(),
        policy: CORE_POLICY.into(),
        category: CORE_CATEGORY.into(),
        doc: None,
        needs: Some(vec!["changed".into()]),
    }
}

/// The policy name of rules the core itself reports.
pub const CORE_POLICY: &str = "builtin:core";

/// The core's own rules: an input a rule needs was not given; the patch changed the gate.
pub const INPUT_MISSING: &str = "FZ001";
pub const GATE_MODIFIED: &str = "FZ501";
pub const UNGUARDED_GATE: &str = "FZ503";

/// The category of the rules the core itself reports.
pub const CORE_CATEGORY: &str = "core";

#[derive(Debug)]
pub struct Script {
    /// `builtin:shape.rhai` or the script's path relative to the repository root.
    pub name: String,
    pub source: Source,
    pub ast: AST,
    pub rules: Vec<RuleMeta>,
}

/// Every loaded script, and every rule (the core's FZ001 first).
#[derive(Debug)]
pub struct Pack {
    pub scripts: Vec<Script>,
    pub rules: Vec<RuleMeta>,
}

impl Pack {
    pub fn rule(&self, code: &str) -> Option<&RuleMeta> {
        self.rules.iter().find(|r| r.code == code)
    }

    pub fn script(&self, name: &str) -> Option<&Script> {
        self.scripts.iter().find(|s| s.name == name)
    }

    /// A rule's longer doc: its `RULES` entry's `doc`, else, for the default pack and the
    /// core, `policies/docs/<CODE>.md` (kept out of the scripts, so that no check pays
    /// for parsing prose only `explain` prints).
    pub fn doc<'r>(&self, rule: &'r RuleMeta) -> Option<&'r str> {
        if let Some(doc) = &rule.doc {
            return Some(doc);
        }
        let file = format!("{}.md", rule.code);
        PACK_DOCS
            .iter()
            .find(|(name, _)| rule.is_builtin() && *name == file)
            .map(|(_, text)| text.trim_end())
    }
}

/// Packs compiled so far, by what their compilation depends on: the policy sources, where
/// they are read from, and the engine's limits (which bound parsing).
#[derive(Default)]
pub struct PackCache {
    packs: HashMap<String, Arc<Pack>>,
}

impl PackCache {
    pub fn load(
        &mut self,
        engine: &Engine,
        config: &crate::config::Config,
    ) -> Result<Arc<Pack>, GateError> {
        // The repository root names only the scripts of a policy directory named ".".
        let named_from_root = config
            .policies
            .iter()
            .any(|p| matches!(p, PolicySpec::Dir { name, .. } if name == "."));
        let key = format!(
            "{:?}|{:?}|{:?}|{:?}",
            config.policies,
            config.tree,
            named_from_root.then_some(&config.repo_root),
            config.limits
        );
        if let Some(pack) = self.packs.get(&key) {
            return Ok(Arc::clone(pack));
        }
        let pack = Arc::new(load(
            engine,
            &config.policies,
            &config.repo_root,
            &config.tree,
        )?);
        self.packs.insert(key, Arc::clone(&pack));
        Ok(pack)
    }
}

/// Loads every policy source; two scripts declaring one code is a load error.
pub fn load(
    engine: &Engine,
    specs: &[PolicySpec],
    repo_root: &Path,
    tree: &crate::config::FileTree,
) -> Result<Pack, GateError> {
    let mut scripts = Vec::new();
    for spec in specs {
        match spec {
            PolicySpec::Builtin => {
                // Compiling is most of a small check: half of the pack compiles on
                // another core (the inputs load beside it on a third thread).
                let compile_builtin = |files: &[(&str, &str)]| {
                    files
                        .iter()
                        .map(|(file, text)| {
                            let name = format!("builtin:{file}");
                            let source = SourceFile::new(name.clone(), PathBuf::from(&name), *text);
                            compile(engine, name, source)
                        })
                        .collect::<Vec<_>>()
                };
                let total: usize = BUILTIN.iter().map(|(_, text)| text.len()).sum();
                let mut size = 0;
                let half = BUILTIN
                    .iter()
                    .position(|(_, text)| {
                        size += text.len();
                        size * 2 >= total
                    })
                    .map_or(BUILTIN.len(), |at| at + 1);
                let (first, second) = BUILTIN.split_at(half);
                let compiled = std::thread::scope(|scope| {
                    let other = crate::threads::spawn_scoped(scope, || compile_builtin(second));
                    let mut compiled = compile_builtin(first);
                    compiled.extend(other.join().expect("compiling does not panic"));
                    compiled
                });
                for script in compiled {
                    scripts.extend(script?);
                }
            }
            PolicySpec::Dir { path, name } => {
                let files: Vec<PathBuf> = tree
                    .list(path)?
                    .ok_or_else(|| {
                        GateError::new(name, "is not a directory").with_help(
                            "`policies` lists \"builtin\" and/or directories of *.rhai scripts",
                        )
                    })?
                    .into_iter()
                    .filter(|p| {
                        p.parent() == Some(path.as_path())
                            && p.extension().is_some_and(|x| x == "rhai")
                    })
                    .collect();
                for file in files {
                    // Named after the directory's own name, so `import` resolves against
                    // it (PolicyDirResolver) however the directory was written.
                    let file_name = file.file_name().unwrap_or_default().to_string_lossy();
                    let shown = if name == "." {
                        crate::config::display_path(&file, repo_root)
                    } else {
                        format!("{name}/{file_name}")
                    };
                    let source = tree
                        .read(&file, &shown)?
                        .ok_or_else(|| GateError::new(&shown, "is not a readable file"))?;
                    scripts.extend(compile(engine, shown, source)?);
                }
            }
        }
    }
    let mut rules = vec![
        input_missing_rule(),
        gate_modified_rule(),
        unguarded_gate_rule(),
    ];
    let mut declared: HashMap<String, String> = HashMap::new();
    for rule in &rules {
        declared.insert(rule.code.clone(), CORE_POLICY.into());
    }
    for script in &scripts {
        for rule in &script.rules {
            if let Some(first) = declared.insert(rule.code.clone(), script.name.clone()) {
                let at = script.source.text.find(&rule.code).unwrap_or(0);
                return Err(GateError::script(
                    &script.name,
                    format!("declares rule {} which {first} already declares", rule.code),
                )
                .at(&script.source, at..at + rule.code.len(), "declared again here")
                .with_help("give the rule a code of its own (org rules usually take a prefix such as ORG101)"));
            }
            rules.push(rule.clone());
        }
    }
    Ok(Pack { scripts, rules })
}

/// Compiles a script; one without a `RULES` constant is a helper module (only imported).
fn compile(engine: &Engine, name: String, source: Source) -> Result<Option<Script>, GateError> {
    let mut ast = engine
        .compile(&source.text)
        .map_err(|e| script_parse_error(&source, &e))?;
    ast.set_source(name.as_str());
    let Some(rules_value) = ast
        .iter_literal_variables(true, false)
        .find(|(var, _, _)| *var == "RULES")
        .map(|(_, _, value)| value)
    else {
        // A RULES the reader cannot see (`let RULES`, `const RULES = make()`): an error,
        // never a silently rule-less script. A mention in a comment is no declaration.
        let declared = source.text.lines().find(|line| {
            let line = line.trim_start();
            ["const RULES", "let RULES"]
                .iter()
                .any(|decl| line.starts_with(decl))
        });
        if let Some(line) = declared {
            let at = line.as_ptr() as usize - source.text.as_ptr() as usize;
            let at = at + line.find("RULES").unwrap_or(0);
            return Err(GateError::script(
                &name,
                "`RULES` must be a top-level `const` holding only literal values",
            )
            .at(&source, at..at + 5, "not a literal constant"));
        }
        return Ok(None);
    };
    let rules = read_rules(&name, &source, rules_value)?;
    Ok(Some(Script {
        name,
        source,
        ast,
        rules,
    }))
}

pub fn script_parse_error(source: &Source, err: &rhai::ParseError) -> GateError {
    let at = position_offset(source, err.position());
    GateError::script(
        &source.name,
        format!("script does not parse: {}", err.err_type()),
    )
    .at(source, at..at, "here")
}

/// Byte offset of a Rhai position (line and character column) in the script.
pub fn position_offset(source: &Source, pos: Position) -> usize {
    match (pos.line(), pos.position()) {
        (Some(line), column) => source.offset_of(line, column.unwrap_or(1)),
        _ => 0,
    }
}

fn read_rules(name: &str, source: &Source, value: Dynamic) -> Result<Vec<RuleMeta>, GateError> {
    let at = source.text.find("RULES").unwrap_or(0);
    let err = |message: String| {
        GateError::script(name, message)
            .at(source, at..at + 5, "in this RULES table")
            .with_help("each rule is CODE: #{ name: \"kebab-name\", severity: \"error\"|\"warn\", summary: \"...\", help: \"...\" }")
    };
    let Some(map) = value.try_cast::<rhai::Map>() else {
        return Err(err("`RULES` must be a map of rule code to metadata".into()));
    };
    let mut rules = Vec::with_capacity(map.len());
    for (code, meta) in map {
        let code = code.to_string();
        if !is_rule_code(&code) {
            return Err(err(format!(
                "`{code}` is not a rule code (letters then digits, e.g. FZ103 or ORG101)"
            )));
        }
        let Some(meta) = meta.try_cast::<rhai::Map>() else {
            return Err(err(format!("{code}: metadata must be a map")));
        };
        let field = |key: &str| -> Result<String, GateError> {
            match meta.get(key).and_then(|v| v.clone().into_string().ok()) {
                Some(s) if !s.trim().is_empty() => Ok(s),
                _ => Err(err(format!("{code}: `{key}` must be a non-empty string"))),
            }
        };
        let severity = match field("severity")?.as_str() {
            "error" => Severity::Error,
            "warn" | "warning" => Severity::Warning,
            other => {
                return Err(err(format!(
                    "{code}: severity `{other}` is not \"error\" or \"warn\""
                )))
            }
        };
        let needs = match meta.get("needs") {
            None => None,
            Some(value) => {
                let items = value
                    .clone()
                    .try_cast::<rhai::Array>()
                    .ok_or_else(|| err(format!("{code}: `needs` must be a list of input names")))?;
                let mut needs = Vec::with_capacity(items.len());
                for item in items {
                    let input = item
                        .into_string()
                        .ok()
                        .filter(|n| crate::inputs::input_named(n).is_some());
                    let Some(input) = input else {
                        let known: Vec<&str> =
                            crate::inputs::INPUTS.iter().map(|i| i.name).collect();
                        return Err(err(format!(
                            "{code}: `needs` names an unknown input; inputs are {}",
                            known.join(", ")
                        )));
                    };
                    needs.push(input);
                }
                Some(needs)
            }
        };
        let optional = |key: &str| -> Result<Option<String>, GateError> {
            match meta.get(key) {
                None => Ok(None),
                Some(_) => field(key).map(Some),
            }
        };
        let category = match optional("category")? {
            Some(category) if is_kebab(&category) => category,
            Some(category) => {
                return Err(err(format!(
                "{code}: category `{category}` is not a lowercase-kebab-case word (e.g. `deposit`)"
            )))
            }
            None => script_stem(name),
        };
        rules.push(RuleMeta {
            code: code.clone(),
            name: field("name")?,
            severity,
            summary: field("summary")?,
            help: field("help")?,
            policy: name.to_string(),
            category,
            doc: optional("doc")?,
            needs,
        });
    }
    if rules.is_empty() {
        return Err(err("`RULES` declares no rule".into()));
    }
    rules.sort_by(|a, b| a.code.cmp(&b.code));
    Ok(rules)
}

fn is_kebab(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with('-')
        && word
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// `deposit` for `builtin:deposit.rhai` or `policies/org/deposit.rhai`.
fn script_stem(name: &str) -> String {
    let file = name.rsplit(['/', ':']).next().unwrap_or(name);
    file.strip_suffix(".rhai").unwrap_or(file).to_string()
}

pub fn is_rule_code(code: &str) -> bool {
    let letters = code.chars().take_while(|c| c.is_ascii_uppercase()).count();
    letters > 0 && code.len() > letters && code[letters..].chars().all(|c| c.is_ascii_digit())
}

/// `import` resolves only inside the importing script's own policy directory: no
/// absolute paths, no `..`, no symlink leading out.
pub struct PolicyDirResolver {
    /// Script name prefix (its directory's display name) → directory.
    pub dirs: Vec<(String, PathBuf)>,
    /// Where the directories are read from (a trusted commit under `--trusted-ref`).
    pub tree: crate::config::FileTree,
    /// Every module loaded so far by its shown name, so an error inside one can be
    /// rendered with its own source.
    pub sources: ModuleSources,
}

/// Imported modules' sources by shown name (shared with the engine for diagnostics).
pub type ModuleSources = std::sync::Arc<std::sync::Mutex<HashMap<String, Source>>>;

impl rhai::ModuleResolver for PolicyDirResolver {
    fn resolve(
        &self,
        engine: &Engine,
        source: Option<&str>,
        path: &str,
        pos: Position,
    ) -> Result<rhai::Shared<Module>, Box<EvalAltResult>> {
        let refuse = |why: &str| -> Box<EvalAltResult> {
            EvalAltResult::ErrorRuntime(format!("import \"{path}\" refused: {why}").into(), pos)
                .into()
        };
        let source = source.unwrap_or("");
        let Some((prefix, dir)) = self
            .dirs
            .iter()
            .filter(|(prefix, _)| source.starts_with(&format!("{prefix}/")))
            .max_by_key(|(prefix, _)| prefix.len())
        else {
            return Err(refuse("import works only in scripts of a policy directory"));
        };
        let relative = Path::new(path);
        if relative.is_absolute()
            || path.contains('\\')
            || relative
                .components()
                .any(|c| !matches!(c, Component::Normal(_)))
        {
            return Err(refuse(
                "imports must be plain relative paths inside the policy directory",
            ));
        }
        let mut file = dir.join(relative);
        if file.extension().is_none() {
            file.set_extension("rhai");
        }
        let shown = format!(
            "{prefix}/{}",
            file.strip_prefix(dir).unwrap_or(relative).to_string_lossy()
        );
        let text = if self.tree.is_trusted() {
            // Git trees hold no symlinks to follow: the blob at that path or nothing.
            match self.tree.read(&file, &shown) {
                Ok(Some(source)) => source.text.clone(),
                _ => return Err(refuse("no such file in the policy directory")),
            }
        } else {
            let (Ok(real_dir), Ok(real_file)) = (dir.canonicalize(), file.canonicalize()) else {
                return Err(refuse("no such file in the policy directory"));
            };
            if !real_file.starts_with(&real_dir) {
                return Err(refuse("it leads outside the policy directory"));
            }
            std::fs::read_to_string(&real_file).map_err(|e| refuse(&e.to_string()))?
        };
        self.sources
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                shown.clone(),
                SourceFile::new(shown.clone(), file.clone(), text.clone()),
            );
        let mut ast = engine
            .compile(&text)
            .map_err(|e| Box::new(EvalAltResult::ErrorInModule(shown.clone(), e.into(), pos)))?;
        ast.set_source(shown.as_str());
        // Errors while the module runs its top level are the module's, not the importer's.
        let module = Module::eval_ast_as_new(Scope::new(), &ast, engine)
            .map_err(|e| Box::new(EvalAltResult::ErrorInModule(shown.clone(), e, pos)))?;
        Ok(module.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pack_cache_compiles_a_pack_once_per_sources_and_limits() {
        let engine = Engine::new();
        let mut cache = PackCache::default();
        let config = |root: &str| crate::config::Config::defaults(Path::new(root), Path::new(root));
        let first = cache.load(&engine, &config("/a")).unwrap();
        // The builtin pack does not depend on where the repository is.
        assert!(Arc::ptr_eq(
            &first,
            &cache.load(&engine, &config("/b")).unwrap()
        ));
        let mut tighter = config("/a");
        tighter.limits.expr_depth -= 1;
        assert!(!Arc::ptr_eq(
            &first,
            &cache.load(&engine, &tighter).unwrap()
        ));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("org.rhai"),
            "const RULES = #{ ORG1: #{ name: \"org\", summary: \"s\", help: \"h\", severity: \"error\" } };\nfn check(f) {}\n",
        )
        .unwrap();
        let mut own = config("/a");
        own.policies = vec![PolicySpec::Dir {
            path: dir.path().to_path_buf(),
            name: "org".into(),
        }];
        let org = cache.load(&engine, &own).unwrap();
        assert_eq!(
            org.rules
                .iter()
                .map(|r| r.code.as_str())
                .filter(|c| c.starts_with("ORG"))
                .collect::<Vec<_>>(),
            ["ORG1"]
        );
        assert!(first.rule("ORG1").is_none());
    }

    #[test]
    fn every_rule_has_a_doc_and_every_doc_file_a_rule() {
        let engine = Engine::new();
        let pack = load(
            &engine,
            &[PolicySpec::Builtin],
            Path::new("."),
            &crate::config::FileTree::WorkTree,
        )
        .unwrap();
        for (file, text) in PACK_DOCS {
            let code = file.strip_suffix(".md").unwrap_or(file);
            let rule = pack
                .rule(code)
                .unwrap_or_else(|| panic!("{file}: no rule {code}"));
            assert_eq!(pack.doc(rule), Some(text.trim_end()), "{file}");
        }
        for rule in &pack.rules {
            assert!(pack.doc(rule).is_some(), "{} has no doc", rule.code);
        }
    }
}
