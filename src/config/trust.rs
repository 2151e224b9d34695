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
}

impl Modified {
    /// What FZ501 says of it.
    pub fn message(&self, rev: &str) -> String {
        match (self.trusted_has_it, self.is_config) {
            (true, _) => format!(
                "the patch changes {}; the version at {rev} was used instead",
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
    let config = |name: String, trusted_has_it: bool| Modified {
        name,
        trusted_has_it,
        is_config: true,
    };
    let work = Config::discover_in(cwd, explicit, &FileTree::WorkTree);
    let source_of = |c: &Config| c.source.as_ref().map(|s| (s.path.clone(), s.text.clone()));
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
                let has_it = trusted_source.is_some();
                for (path, _) in [source_of(work), trusted_source].into_iter().flatten() {
                    changed.insert(config(display_path(&path, root), has_it));
                }
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
            });
        }
    }
    changed.into_iter().collect()
}
