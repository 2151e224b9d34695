//! What a patch changed in the gate's own files (config, policies, owners file) compared
//! with the trusted commit: reported as FZ501, while the trusted versions are used.

use std::collections::BTreeSet;
use std::path::Path;

use super::file_tree::FileTree;
use super::{display_path, Config, PolicySpec};

/// A gate file the working tree changed, and whether the trusted commit has it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Modified {
    pub name: String,
    pub trusted_has_it: bool,
    /// A config file (without a trusted one, the defaults applied).
    pub is_config: bool,
    /// Whether the trusted commit has a config file of its own (for a config file the
    /// patch adds: that one was used).
    pub trusted_config: bool,
}

impl Modified {
    /// What FZ501 says of it.
    pub fn message(&self, rev: &str) -> String {
        match (self.trusted_has_it, self.is_config) {
            (true, _) => format!(
                "the patch changes {}; the version at {rev} was used instead",
                self.name
            ),
            (false, true) if self.trusted_config => format!(
                "the patch adds {}; the config at {rev} was used instead",
                self.name
            ),
            (false, true) => format!(
                "the patch changes {}; {rev} has no config, so the defaults applied",
                self.name
            ),
            (false, false) => format!(
                "the patch adds {}; {rev} has none, so it was not used",
                self.name
            ),
        }
    }
}

/// Every gate file the working tree has changed, by repository-relative name.
pub fn modified_files(
    cwd: &Path,
    explicit: Option<&Path>,
    trusted: &Config,
    trusted_tree: &FileTree,
) -> Vec<Modified> {
    let root = &trusted.repo_root;
    let mut changed = BTreeSet::new();
    let trusted_config = trusted.source.is_some();
    let config = |name: String, trusted_has_it: bool| Modified {
        name,
        trusted_has_it,
        is_config: true,
        trusted_config,
    };
    let work = Config::discover_in(cwd, explicit, &FileTree::WorkTree);
    let source_of = |c: &Config| c.source.as_ref().map(|s| (s.path.clone(), s.text.clone()));
    let in_trusted = |path: &Path| trusted_tree.read(path, "").ok().flatten().is_some();
    match (&work, source_of(trusted)) {
        (Err(_), Some((path, _))) => {
            changed.insert(config(display_path(&path, root), true));
        }
        (Err(e), None) => {
            let name = if e.file.is_empty() {
                "config".into()
            } else {
                e.file.clone()
            };
            changed.insert(config(name, false));
        }
        (Ok(work), trusted_source) => {
            if source_of(work) != trusted_source {
                for (path, _) in [source_of(work), trusted_source].into_iter().flatten() {
                    changed.insert(config(display_path(&path, root), in_trusted(&path)));
                }
            }
        }
    }
    // A config file the patch adds where discovery looks, even one another file shadows
    // today: the next patch would find it.
    if explicit.is_none() {
        for dir in cwd.ancestors() {
            for file_name in super::CONFIG_NAMES {
                let path = dir.join(file_name);
                if file_name != "pyproject.toml" && path.is_file() && !in_trusted(&path) {
                    changed.insert(config(display_path(&path, root), false));
                }
            }
            if dir == root.as_path() {
                break;
            }
        }
    }
    let mut files_to_compare = Vec::new();
    let mut dirs: Vec<&Path> = Vec::new();
    for spec in &trusted.policies {
        if let PolicySpec::Dir { path, .. } = spec {
            dirs.push(path);
        }
    }
    if let Ok(work) = &work {
        for spec in &work.policies {
            if let PolicySpec::Dir { path, .. } = spec {
                if !dirs.contains(&path.as_path()) {
                    dirs.push(path);
                }
            }
        }
        if let Some(owners) = &work.owners_file {
            files_to_compare.push(owners.clone());
        }
    }
    for dir in dirs {
        let mut files: BTreeSet<std::path::PathBuf> = BTreeSet::new();
        for tree in [trusted_tree, &FileTree::WorkTree] {
            if let Ok(Some(list)) = tree.list(dir) {
                files.extend(
                    list.into_iter()
                        .filter(|p| p.extension().is_some_and(|x| x == "rhai")),
                );
            }
        }
        files_to_compare.extend(files);
    }
    if let Some(owners) = &trusted.owners_file {
        files_to_compare.push(owners.clone());
    }
    // The skip baseline is gate config too: a patch cannot baseline its own skip.
    files_to_compare.push(trusted.skip_baseline.clone());
    if let Ok(work) = &work {
        files_to_compare.push(work.skip_baseline.clone());
    }
    files_to_compare.sort();
    files_to_compare.dedup();
    for file in files_to_compare {
        let name = display_path(&file, root);
        let text = |tree: &FileTree| {
            tree.read(&file, &name)
                .ok()
                .flatten()
                .map(|s| s.text.clone())
        };
        let trusted_text = text(trusted_tree);
        if trusted_text != text(&FileTree::WorkTree) {
            changed.insert(Modified {
                name,
                trusted_has_it: trusted_text.is_some(),
                is_config: false,
                trusted_config,
            });
        }
    }
    changed.into_iter().collect()
}

/// The gate's own files a patch changed, for FZ503 when the check has no trusted ref to
/// read them from: each with what it is to the gate. `changed` holds repository-relative
/// paths; a pyproject.toml counts when its `[tool.freezegate]` differs from the base's
/// (or when there is no base to compare with).
pub fn unguarded_changes(
    config: &Config,
    changed: &crate::inputs::ids::IdSet,
    base: Option<&str>,
) -> Vec<(String, &'static str)> {
    let root = &config.repo_root;
    let name = |path: &Path| display_path(path, root);
    let policy_dirs: Vec<String> = config
        .policies
        .iter()
        .filter_map(|spec| match spec {
            PolicySpec::Dir { path, .. } => Some(name(path)),
            PolicySpec::Builtin => None,
        })
        .collect();
    let config_file = config.source.as_ref().map(|s| name(&s.path));
    let baseline = name(&config.skip_baseline);
    let owners = config.owners_file.as_deref().map(name);
    let mut found = Vec::new();
    for file in changed.iter() {
        let base_name = file.rsplit('/').next().unwrap_or(file);
        let what = if config_file.as_deref() == Some(file) && base_name == "pyproject.toml" {
            crate::inputs::tools::section_changed(base, root, file, &["tool", "freezegate"])
                .then_some("config ([tool.freezegate])")
        } else if config_file.as_deref() == Some(file)
            || matches!(base_name, "freezegate.toml" | ".freezegate.toml")
        {
            Some("config")
        } else if file == baseline {
            Some("skip baseline")
        } else if owners.as_deref() == Some(file) {
            Some("owners file")
        } else if policy_dirs.iter().any(|dir| {
            file.strip_prefix(dir.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
        }) {
            Some("policy")
        } else {
            None
        };
        if let Some(what) = what {
            found.push((file.to_string(), what));
        }
    }
    found
}
