//! `freezegate.toml`, `.freezegate.toml` or `[tool.freezegate]` in `pyproject.toml`:
//! found from the working directory upward to the repository root.

pub mod file_tree;
pub mod trust;

use std::path::{Path, PathBuf};

pub use file_tree::FileTree;

use crate::document::{Format, Node, Value};
use crate::error::GateError;
use crate::source::{Source, Span};

pub const CONFIG_NAMES: [&str; 3] = ["freezegate.toml", ".freezegate.toml", "pyproject.toml"];
pub const DEFAULT_LEDGER: &str = "gate/freeze_ledger.json";
pub const DEFAULT_COLLECT_COMMAND: [&str; 6] = [
    "python3",
    "-m",
    "pytest",
    "--collect-only",
    // Not `-q`: a `-v` in the project's addopts offsets it, and pytest prints the tree.
    "--verbosity=-1",
    "--no-header",
];
const KNOWN_KEYS: [&str; 12] = [
    "ledger",
    "run",
    "proof",
    "skip_baseline",
    "owners_file",
    "policies",
    "pytest_root",
    "collect_command",
    "params",
    "rules",
    "limits",
    "schema",
];

#[derive(Debug, Clone, PartialEq)]
pub enum PolicySpec {
    Builtin,
    Dir { path: PathBuf, name: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleSetting {
    Error,
    Warn,
    Off,
}

/// Sandbox limits for policy scripts (`[limits]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    pub operations: u64,
    pub call_depth: usize,
    pub expr_depth: usize,
    pub string_size: usize,
    pub array_size: usize,
    pub map_size: usize,
    pub wall_time_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            operations: 200_000_000,
            call_depth: 64,
            expr_depth: 64,
            string_size: 1 << 20,
            array_size: 2_000_000,
            map_size: 200_000,
            wall_time_ms: 30_000,
        }
    }
}

#[derive(Debug)]
pub struct Config {
    /// The config file, when one was found or given.
    pub source: Option<Source>,
    /// The freezegate table inside it (the whole file, or `tool.freezegate`).
    pub table: Option<Node>,
    /// Paths in the config are relative to this directory.
    pub dir: PathBuf,
    pub repo_root: PathBuf,
    pub ledger: PathBuf,
    pub policies: Vec<PolicySpec>,
    pub pytest_root: PathBuf,
    pub collect_command: Vec<String>,
    /// Run records (`run`) read when `check --run` is not given.
    pub run: Vec<PathBuf>,
    /// Proof records (`proof`) read when `check --proof` is not given.
    pub proof: Vec<PathBuf>,
    /// The skip baseline (`skip_baseline`), read from the trusted tree like config.
    pub skip_baseline: PathBuf,
    pub params: Option<Node>,
    pub rules: Vec<(String, RuleSetting, Span)>,
    pub limits: Limits,
    /// A CODEOWNERS-style file (`owners_file`), read by the core for the `owners` binding.
    pub owners_file: Option<PathBuf>,
    /// Where this config (and so its policies and owners file) was read from.
    pub tree: FileTree,
}

/// The repository root: the nearest ancestor holding `.git`, else `start` itself.
pub fn find_repo_root(start: &Path) -> PathBuf {
    start
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(start)
        .to_path_buf()
}

/// A path shown to users: relative to the repository root when inside it.
pub fn display_path(path: &Path, repo_root: &Path) -> String {
    let shown = path.strip_prefix(repo_root).unwrap_or(path);
    let text = shown.to_string_lossy().replace('\\', "/");
    if text.is_empty() {
        ".".into()
    } else {
        text
    }
}

impl Config {
    /// Finds and loads the config for `cwd` in the working tree, or uses `explicit`.
    pub fn discover(cwd: &Path, explicit: Option<&Path>) -> Result<Config, GateError> {
        Self::discover_in(cwd, explicit, &FileTree::WorkTree)
    }

    /// Finds and loads the config for `cwd` as it is in `tree`.
    pub fn discover_in(
        cwd: &Path,
        explicit: Option<&Path>,
        tree: &FileTree,
    ) -> Result<Config, GateError> {
        let repo_root = find_repo_root(cwd);
        let with_tree = |config: Config| Config {
            tree: tree.clone(),
            ..config
        };
        if let Some(path) = explicit {
            let path = cwd.join(path);
            let name = display_path(&path, &repo_root);
            let source = tree.read(&path, &name)?.ok_or_else(|| match tree {
                FileTree::WorkTree => GateError::missing(&name),
                FileTree::Commit { rev, .. } => {
                    GateError::new(&name, format!("does not exist at --trusted-ref {rev}"))
                }
            })?;
            let is_pyproject = path.file_name().is_some_and(|n| n == "pyproject.toml");
            return Self::from_source(source, is_pyproject, &repo_root)?
                .map(with_tree)
                .ok_or_else(|| GateError::new(name, "has no [tool.freezegate] table"));
        }
        for dir in cwd.ancestors() {
            for file_name in CONFIG_NAMES {
                let path = dir.join(file_name);
                let Some(source) = tree.read(&path, &display_path(&path, &repo_root))? else {
                    continue;
                };
                if let Some(config) =
                    Self::from_source(source, file_name == "pyproject.toml", &repo_root)?
                {
                    return Ok(with_tree(config));
                }
            }
            if dir == repo_root {
                break;
            }
        }
        Ok(with_tree(Self::defaults(&repo_root, &repo_root)))
    }

    pub(crate) fn defaults(dir: &Path, repo_root: &Path) -> Config {
        Config {
            source: None,
            table: None,
            dir: dir.to_path_buf(),
            repo_root: repo_root.to_path_buf(),
            ledger: dir.join(DEFAULT_LEDGER),
            policies: vec![PolicySpec::Builtin],
            pytest_root: dir.to_path_buf(),
            collect_command: DEFAULT_COLLECT_COMMAND
                .iter()
                .map(|s| s.to_string())
                .collect(),
            run: Vec::new(),
            proof: Vec::new(),
            skip_baseline: dir.join(crate::inputs::baseline::DEFAULT_PATH),
            params: None,
            rules: Vec::new(),
            limits: Limits::default(),
            owners_file: None,
            tree: FileTree::WorkTree,
        }
    }

    /// Parses a config file; `None` for a `pyproject.toml` without `[tool.freezegate]`.
    pub fn from_source(
        source: Source,
        is_pyproject: bool,
        repo_root: &Path,
    ) -> Result<Option<Config>, GateError> {
        let root = crate::document::parse(&source, Format::Toml)?;
        let (table, prefix) = if is_pyproject {
            match root.get("tool").and_then(|t| t.get("freezegate")) {
                Some(table) => (table.clone(), "tool.freezegate."),
                None => return Ok(None),
            }
        } else {
            (root, "")
        };
        let dir = source
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let mut config = Self::defaults(&dir, repo_root);
        let err = |node: &Node, message: String| {
            GateError::new(&source.name, message).at(&source, node.span.clone(), "here")
        };
        let Value::Map(entries) = &table.value else {
            return Err(err(&table, "the freezegate config must be a table".into()));
        };
        for (key, value) in entries {
            match key.as_str() {
                "ledger" => {
                    config.ledger = dir.join(string(value, &format!("{prefix}ledger"), &err)?)
                }
                "skip_baseline" => {
                    config.skip_baseline =
                        dir.join(string(value, &format!("{prefix}skip_baseline"), &err)?)
                }
                "run" => {
                    config.run = match &value.value {
                        Value::Str(path) => vec![dir.join(path.as_str())],
                        _ => strings(value, &format!("{prefix}run"), &err)?
                            .into_iter()
                            .map(|path| dir.join(path))
                            .collect(),
                    }
                }
                "proof" => {
                    config.proof = match &value.value {
                        Value::Str(path) => vec![dir.join(path.as_str())],
                        _ => strings(value, &format!("{prefix}proof"), &err)?
                            .into_iter()
                            .map(|path| dir.join(path))
                            .collect(),
                    }
                }
                "owners_file" => {
                    config.owners_file =
                        Some(dir.join(string(value, &format!("{prefix}owners_file"), &err)?))
                }
                "pytest_root" => {
                    config.pytest_root =
                        dir.join(string(value, &format!("{prefix}pytest_root"), &err)?)
                }
                "policies" => {
                    config.policies = strings(value, &format!("{prefix}policies"), &err)?
                        .into_iter()
                        .map(|p| match p.as_str() {
                            "builtin" => PolicySpec::Builtin,
                            dir_name => {
                                let path = dir.join(dir_name);
                                PolicySpec::Dir {
                                    name: display_path(&path, repo_root),
                                    path,
                                }
                            }
                        })
                        .collect();
                    if config.policies.is_empty() {
                        return Err(err(
                            value,
                            format!(
                                "`{prefix}policies` is empty: a gate with no rules checks nothing"
                            ),
                        ));
                    }
                }
                "collect_command" => {
                    config.collect_command = match &value.value {
                        Value::Str(s) => s.split_whitespace().map(str::to_string).collect(),
                        _ => strings(value, &format!("{prefix}collect_command"), &err)?,
                    };
                    if config.collect_command.is_empty() {
                        return Err(err(value, format!("`{prefix}collect_command` is empty")));
                    }
                }
                "params" => {
                    if !matches!(value.value, Value::Map(_)) {
                        return Err(err(value, format!("`{prefix}params` must be a table")));
                    }
                    config.params = Some(value.clone());
                }
                "rules" => config.rules = rule_settings(value, prefix, &err)?,
                "limits" => config.limits = limits(value, prefix, &err)?,
                "schema" => {}
                unknown => {
                    let hint = closest(unknown, &KNOWN_KEYS);
                    let mut e =
                        GateError::new(&source.name, format!("unknown key `{prefix}{unknown}`"))
                            .at(&source, value.span.clone(), "unknown key");
                    e = match hint {
                        Some(h) => e.with_help(format!(
                            "did you mean `{h}`? (a misspelt key would silently disable a check)"
                        )),
                        None => e.with_help(format!("known keys: {}", KNOWN_KEYS.join(", "))),
                    };
                    return Err(e);
                }
            }
        }
        config.table = Some(table);
        config.source = Some(source);
        Ok(Some(config))
    }

    /// `pytest_root` relative to the repository root (`""` when they are the same).
    pub fn pytest_root_in_repo(&self) -> String {
        let root = self
            .pytest_root
            .canonicalize()
            .unwrap_or_else(|_| self.pytest_root.clone());
        let repo = self
            .repo_root
            .canonicalize()
            .unwrap_or_else(|_| self.repo_root.clone());
        match root.strip_prefix(&repo) {
            Ok(rel) => crate::paths::normalize(&rel.to_string_lossy()),
            Err(_) => crate::paths::normalize(&self.pytest_root.to_string_lossy()),
        }
    }
}

type ErrFn<'a> = dyn Fn(&Node, String) -> GateError + 'a;

fn string(node: &Node, key: &str, err: &ErrFn) -> Result<String, GateError> {
    match &node.value {
        Value::Str(s) if !s.is_empty() => Ok(s.to_string()),
        _ => Err(err(node, format!("`{key}` must be a non-empty string"))),
    }
}

fn strings(node: &Node, key: &str, err: &ErrFn) -> Result<Vec<String>, GateError> {
    match &node.value {
        Value::Seq(items) => items.iter().map(|i| string(i, key, err)).collect(),
        _ => Err(err(node, format!("`{key}` must be a list of strings"))),
    }
}

fn rule_settings(
    node: &Node,
    prefix: &str,
    err: &ErrFn,
) -> Result<Vec<(String, RuleSetting, Span)>, GateError> {
    let Value::Map(entries) = &node.value else {
        return Err(err(
            node,
            format!("`{prefix}rules` must be a table of CODE = \"error\" | \"warn\" | \"off\""),
        ));
    };
    entries
        .iter()
        .map(|(code, value)| {
            let setting = match value.as_str() {
                Some("error") => RuleSetting::Error,
                Some("warn") | Some("warning") => RuleSetting::Warn,
                Some("off") => RuleSetting::Off,
                _ => {
                    return Err(err(
                        value,
                        format!("`{prefix}rules.{code}` must be \"error\", \"warn\" or \"off\""),
                    ))
                }
            };
            Ok((code.to_string(), setting, value.span.clone()))
        })
        .collect()
}

fn limits(node: &Node, prefix: &str, err: &ErrFn) -> Result<Limits, GateError> {
    let mut limits = Limits::default();
    let Value::Map(entries) = &node.value else {
        return Err(err(node, format!("`{prefix}limits` must be a table")));
    };
    for (key, value) in entries {
        let n = match value.value {
            Value::Int(n) if n > 0 => n as u64,
            _ => {
                return Err(err(
                    value,
                    format!(
                    "`{prefix}limits.{key}` must be a positive integer (0 would mean unlimited)"
                ),
                ))
            }
        };
        match key.as_str() {
            "operations" => limits.operations = n,
            "call_depth" => limits.call_depth = n as usize,
            "expr_depth" => limits.expr_depth = n as usize,
            "string_size" => limits.string_size = n as usize,
            "array_size" => limits.array_size = n as usize,
            "map_size" => limits.map_size = n as usize,
            "wall_time_ms" => limits.wall_time_ms = n,
            other => {
                return Err(err(value, format!(
                    "unknown key `{prefix}limits.{other}`; known: operations, call_depth, expr_depth, string_size, array_size, map_size, wall_time_ms"
                )))
            }
        }
    }
    Ok(limits)
}

/// The known word nearest to a misspelt one, if it is close.
pub fn closest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (edit_distance(word, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 3))
        .min()
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            prev = current;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    fn load(text: &str) -> Result<Option<Config>, GateError> {
        Config::from_source(
            SourceFile::new("freezegate.toml", "/r/freezegate.toml", text),
            false,
            Path::new("/r"),
        )
    }

    #[test]
    fn unknown_keys_are_named_with_a_hint() {
        let err = load("ledgr = \"x.json\"\n").unwrap_err();
        assert!(err.to_string().contains("unknown key `ledgr`"), "{err}");
        assert!(err.help_text().unwrap().contains("did you mean `ledger`"));
    }

    #[test]
    fn paths_are_relative_to_the_config_file() {
        let config = load("ledger = \"gate/l.yaml\"\npolicies = [\"builtin\", \"org\"]\n")
            .unwrap()
            .unwrap();
        assert_eq!(config.ledger, Path::new("/r/gate/l.yaml"));
        assert_eq!(
            config.policies[1],
            PolicySpec::Dir {
                path: "/r/org".into(),
                name: "org".into()
            }
        );
    }

    #[test]
    fn pyproject_without_table_is_not_a_config() {
        let source = SourceFile::new(
            "pyproject.toml",
            "/r/pyproject.toml",
            "[tool.black]\nx = 1\n",
        );
        assert!(Config::from_source(source, true, Path::new("/r"))
            .unwrap()
            .is_none());
    }
}
