//! What a patch changed in the gate's own files (config, policies, owners file) compared
//! with the trusted commit: reported as FZ501, while the trusted versions are used.

use std::collections::BTreeSet;
use std::path::Path;

use super::tree::FileTree;
use super::{display_path, Config, PolicySpec};

/// Repository-relative names of every gate file the working tree has changed.
pub fn modified_files(
    cwd: &Path,
    explicit: Option<&Path>,
    trusted: &Config,
    trusted_tree: &FileTree,
) -> Vec<String> {
    let root = &trusted.repo_root;
    let mut changed = BTreeSet::new();
    let work = Config::discover_in(cwd, explicit, &FileTree::WorkTree);
    let source_of = |c: &Config| c.source.as_ref().map(|s| (s.path.clone(), s.text.clone()));
    match (&work, source_of(trusted)) {
        (Err(_), Some((path, _))) => {
            changed.insert(display_path(&path, root));
        }
        (Err(e), None) => {
            changed.insert(if e.file.is_empty() {
                "config".into()
            } else {
                e.file.clone()
            });
        }
        (Ok(work), trusted_source) => {
            if source_of(work) != trusted_source {
                for (path, _) in [source_of(work), trusted_source].into_iter().flatten() {
                    changed.insert(display_path(&path, root));
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
        if text(trusted_tree) != text(&FileTree::WorkTree) {
            changed.insert(name);
        }
    }
    changed.into_iter().collect()
}
