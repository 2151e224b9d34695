//! The scratch copy a proof works in: every file git tracks or would track (untracked
//! but not ignored), as it is in the working tree, so uncommitted changes are proven too.
//! The user's tree is never written; the copy is removed when dropped.

use std::path::{Path, PathBuf};

use crate::error::GateError;

pub struct Scratch {
    _dir: tempfile::TempDir,
    /// The copy of the repository root.
    pub root: PathBuf,
    source: PathBuf,
}

impl Scratch {
    pub fn copy(repo_root: &Path) -> Result<Scratch, GateError> {
        let listed = std::process::Command::new("git")
            .args([
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ])
            .current_dir(repo_root)
            .output()
            .map_err(|e| GateError::usage(format!("prove: cannot run git: {e}")))?;
        if !listed.status.success() {
            return Err(GateError::usage(format!(
                "prove: `git ls-files` failed in {}: {}",
                repo_root.display(),
                String::from_utf8_lossy(&listed.stderr).trim()
            ))
            .with_help("prove works in a git repository: it copies the files git tracks"));
        }
        let dir = tempfile::Builder::new()
            .prefix("freezegate-prove-")
            .tempdir()
            .map_err(|e| {
                GateError::usage(format!("prove: cannot make a scratch directory: {e}"))
            })?;
        let root = dir.path().join("tree");
        for name in listed.stdout.split(|b| *b == 0).filter(|n| !n.is_empty()) {
            let name = String::from_utf8_lossy(name);
            let from = repo_root.join(name.as_ref());
            let to = root.join(name.as_ref());
            let Ok(meta) = std::fs::symlink_metadata(&from) else {
                continue; // deleted in the working tree
            };
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| GateError::io(&to.display().to_string(), e))?;
            }
            #[cfg(unix)]
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&from).map_err(|e| GateError::io(&name, e))?;
                std::os::unix::fs::symlink(target, &to).map_err(|e| GateError::io(&name, e))?;
                continue;
            }
            if meta.is_file() {
                std::fs::copy(&from, &to).map_err(|e| GateError::io(&name, e))?;
            }
        }
        Ok(Scratch {
            _dir: dir,
            root,
            source: repo_root.to_path_buf(),
        })
    }

    /// Puts a file the engine mutated (or the proof wrote) back as it is in the user's
    /// tree: removed from the copy when the tree has none (a test file the patch deleted).
    pub fn restore(&self, file: &str) -> Result<(), GateError> {
        let from = self.source.join(file);
        if !from.exists() {
            return match std::fs::remove_file(self.root.join(file)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(GateError::io(file, e)),
                _ => Ok(()),
            };
        }
        std::fs::copy(from, self.root.join(file))
            .map(|_| ())
            .map_err(|e| GateError::io(file, e))
    }

    /// Writes a file of the copy (a test file as the base had it), making its folder.
    pub fn write(&self, file: &str, text: &str) -> Result<(), GateError> {
        let to = self.root.join(file);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| GateError::io(file, e))?;
        }
        std::fs::write(&to, text).map_err(|e| GateError::io(file, e))
    }

    /// A directory beside the copy for the proof's own files (driver, outputs).
    pub fn work_dir(&self) -> PathBuf {
        self.root
            .parent()
            .expect("the copy is inside the scratch dir")
            .to_path_buf()
    }
}
