//! Where config and policy files are read from: the working tree, or a trusted commit
//! (`--trusted-ref`), so a patch cannot loosen its own gate.

use std::path::{Path, PathBuf};

use crate::error::GateError;
use crate::source::{Source, SourceFile};

#[derive(Debug, Clone)]
pub enum FileTree {
    WorkTree,
    /// Files as they are at `rev` in the repository at `repo_root` (`git show REV:path`).
    Commit {
        rev: String,
        repo_root: PathBuf,
        /// The flag that named the commit, for messages (`--trusted-ref`, `--base`).
        flag: &'static str,
    },
}

use crate::git::git;

impl FileTree {
    /// A tree at a trusted commit; the ref must name a commit.
    pub fn commit(rev: &str, repo_root: &Path) -> Result<FileTree, GateError> {
        Self::commit_for("--trusted-ref", rev, repo_root)
    }

    /// A tree at the commit `flag` names; the ref must name a commit.
    pub fn commit_for(
        flag: &'static str,
        rev: &str,
        repo_root: &Path,
    ) -> Result<FileTree, GateError> {
        let out = git(
            repo_root,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{rev}^{{commit}}"),
            ],
        )?;
        if !out.status.success() {
            let probe = git(repo_root, &["rev-parse", "--git-dir"])?;
            let why = if probe.status.success() {
                format!("`{rev}` does not name a commit")
            } else {
                String::from_utf8_lossy(&probe.stderr).trim().to_string()
            };
            return Err(GateError::usage(format!("{flag} {rev}: {why}"))
                .with_help("fetch the ref first (e.g. `git fetch origin main`, fetch-depth: 0 in actions/checkout)"));
        }
        Ok(FileTree::Commit {
            rev: rev.to_string(),
            repo_root: repo_root.to_path_buf(),
            flag,
        })
    }

    pub fn is_trusted(&self) -> bool {
        matches!(self, FileTree::Commit { .. })
    }

    /// The path relative to the repository root, `/`-separated.
    fn relative(repo_root: &Path, path: &Path) -> Option<String> {
        let rel = path.strip_prefix(repo_root).ok()?;
        Some(crate::paths::normalize(&rel.to_string_lossy()))
    }

    /// Reads a file, `None` when it does not exist (in this tree).
    pub fn read(&self, path: &Path, name: &str) -> Result<Option<Source>, GateError> {
        match self {
            FileTree::WorkTree => {
                // Anything there but a regular file (a FIFO, a device, a link out of the
                // repository) is refused by the read, not taken for no file.
                if !path.exists() || path.is_dir() {
                    return Ok(None);
                }
                SourceFile::read(path, name).map(Some)
            }
            FileTree::Commit {
                rev,
                repo_root,
                flag,
            } => {
                let Some(rel) = Self::relative(repo_root, path) else {
                    return Err(GateError::new(
                        name,
                        format!("is outside the repository, so it cannot be read at {flag} {rev}"),
                    ));
                };
                let spec = format!("{rev}:{rel}");
                let kind = git(repo_root, &["cat-file", "-t", &spec])?;
                if !kind.status.success() || kind.stdout != b"blob\n" {
                    return Ok(None);
                }
                let out = git(repo_root, &["cat-file", "blob", &spec])?;
                if !out.status.success() {
                    return Err(GateError::new(
                        name,
                        format!(
                            "could not be read at {rev}: {}",
                            String::from_utf8_lossy(&out.stderr).trim()
                        ),
                    ));
                }
                SourceFile::decoded(name, path, out.stdout).map(Some)
            }
        }
    }

    /// Every file under a directory (recursively), sorted; `None` when the directory
    /// does not exist in this tree.
    pub fn list(&self, dir: &Path) -> Result<Option<Vec<PathBuf>>, GateError> {
        match self {
            FileTree::WorkTree => {
                if !dir.is_dir() {
                    return Ok(None);
                }
                let mut files = Vec::new();
                let mut stack = vec![dir.to_path_buf()];
                while let Some(next) = stack.pop() {
                    let entries = std::fs::read_dir(&next)
                        .map_err(|e| GateError::io(&next.display().to_string(), e))?;
                    for entry in entries.flatten() {
                        let path = entry.path();
                        match entry.file_type() {
                            Ok(t) if t.is_dir() => stack.push(path),
                            Ok(_) => files.push(path),
                            Err(_) => {}
                        }
                    }
                }
                files.sort();
                Ok(Some(files))
            }
            FileTree::Commit { rev, repo_root, .. } => {
                let Some(rel) = Self::relative(repo_root, dir) else {
                    return Ok(None);
                };
                let spec = format!("{rev}:{rel}");
                let kind = git(repo_root, &["cat-file", "-t", &spec])?;
                if kind.stdout != b"tree\n" {
                    return Ok(None);
                }
                let out = git(repo_root, &["ls-tree", "-r", "--name-only", "-z", &spec])?;
                let mut files: Vec<PathBuf> = String::from_utf8_lossy(&out.stdout)
                    .split('\0')
                    .filter(|p| !p.is_empty())
                    .map(|p| dir.join(p))
                    .collect();
                files.sort();
                Ok(Some(files))
            }
        }
    }
}
