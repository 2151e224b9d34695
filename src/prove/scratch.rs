//! The scratch copy a proof works in: every file git tracks or would track (untracked
//! but not ignored), as it is in the working tree, so uncommitted changes are proven too,
//! and the compiled extension modules built in place (ignored `*.so`, `*.pyd`: a
//! package's C speedups, which its tests import from beside its Python code). The
//! user's tree is never written; the copy is removed when dropped.

use std::path::{Path, PathBuf};

use crate::error::GateError;

pub struct Scratch {
    _dir: tempfile::TempDir,
    /// Removed when a signal ends prove, as when the scratch is dropped.
    _watched: super::interrupt::WatchedDir,
    /// The copy of the repository root.
    pub root: PathBuf,
    source: PathBuf,
}

/// `git ls-files -z ARGS` in `repo_root`: the paths, relative to it.
fn ls_files(repo_root: &Path, args: &[&str]) -> Result<Vec<String>, GateError> {
    let listed = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .args(args)
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
    Ok(listed
        .stdout
        .split(|b| *b == 0)
        .filter(|n| !n.is_empty())
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect())
}

/// An extension module built in place beside the package's code (`pkg/_speedups.cpython-
/// 311-x86_64-linux-gnu.so`), not one of a virtualenv, a build folder or a hidden one.
fn is_built_extension(name: &str) -> bool {
    let path = Path::new(name);
    let extension = matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("so" | "pyd")
    );
    extension
        && path
            .parent()
            .into_iter()
            .flat_map(Path::components)
            .all(|c| {
                let c = c.as_os_str().to_string_lossy();
                !c.starts_with('.')
                    && !matches!(
                        c.as_ref(),
                        "site-packages"
                            | "build"
                            | "dist"
                            | "venv"
                            | "env"
                            | "__pycache__"
                            | "node_modules"
                    )
            })
}

impl Scratch {
    pub fn copy(repo_root: &Path) -> Result<Scratch, GateError> {
        let mut names = ls_files(repo_root, &["--cached", "--others", "--exclude-standard"])?;
        names.extend(
            ls_files(repo_root, &["--others", "--ignored", "--exclude-standard"])?
                .into_iter()
                .filter(|name| is_built_extension(name)),
        );
        let dir = tempfile::Builder::new()
            .prefix("freezegate-prove-")
            .tempdir()
            .map_err(|e| {
                GateError::usage(format!("prove: cannot make a scratch directory: {e}"))
            })?;
        let watched = super::interrupt::WatchedDir::new(dir.path());
        let root = dir.path().join("tree");
        for name in &names {
            if super::interrupt::stopping() {
                break; // the stopping thread removes the copy and ends the process
            }
            let from = repo_root.join(name);
            let to = root.join(name);
            let Ok(meta) = std::fs::symlink_metadata(&from) else {
                continue; // deleted in the working tree
            };
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| GateError::io(&to.display().to_string(), e))?;
            }
            #[cfg(unix)]
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&from).map_err(|e| GateError::io(name, e))?;
                std::os::unix::fs::symlink(target, &to).map_err(|e| GateError::io(name, e))?;
                continue;
            }
            if meta.is_file() {
                std::fs::copy(&from, &to).map_err(|e| GateError::io(name, e))?;
            }
        }
        Ok(Scratch {
            _dir: dir,
            _watched: watched,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_built_in_place_are_copied_not_a_virtualenv_s() {
        assert!(is_built_extension(
            "pvectorc.cpython-311-x86_64-linux-gnu.so"
        ));
        assert!(is_built_extension("src/pkg/_speedups.cp311-win_amd64.pyd"));
        assert!(!is_built_extension(
            ".venv/lib/python3.11/site-packages/x.so"
        ));
        assert!(!is_built_extension("venv/lib/x.so"));
        assert!(!is_built_extension("build/lib.linux-x86_64-3.11/pkg/x.so"));
        assert!(!is_built_extension("pkg/module.py"));
    }

    #[test]
    fn an_ignored_extension_module_is_in_the_copy_and_other_ignored_files_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(args)
                .current_dir(root)
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(root.join(".gitignore"), "*.so\n*.log\n").unwrap();
        std::fs::write(root.join("pvector.py"), "x = 1\n").unwrap();
        std::fs::write(
            root.join("pvectorc.cpython-311-x86_64-linux-gnu.so"),
            b"\x7fELF",
        )
        .unwrap();
        std::fs::write(root.join("run.log"), "noise").unwrap();
        let scratch = Scratch::copy(root).unwrap();
        assert!(scratch.root.join("pvector.py").is_file());
        assert!(scratch
            .root
            .join("pvectorc.cpython-311-x86_64-linux-gnu.so")
            .is_file());
        assert!(!scratch.root.join("run.log").exists());
    }
}
