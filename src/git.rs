//! The one way the gate runs git.

use std::path::Path;
use std::process::{Command, Output};

use crate::error::GateError;

/// `git ARGS` in `repo_root`; an error when git cannot be started (its exit status is the
/// caller's to judge).
pub fn git(repo_root: &Path, args: &[&str]) -> Result<Output, GateError> {
    Command::new("git")
        .args(args)
        .current_dir(repo_root)
        .output()
        .map_err(|e| {
            let why = if e.kind() == std::io::ErrorKind::NotFound {
                "`git` was not found on PATH".to_string()
            } else {
                e.to_string()
            };
            GateError::usage(format!(
                "git: could not run `git {}`: {why}",
                args.join(" ")
            ))
        })
}

/// The merge base of `base` and HEAD (what `git diff base...HEAD` compares with).
pub fn merge_base(base: &str, repo_root: &Path) -> Option<String> {
    // The base ledger, the hunks and the selection changes all ask: git answers once.
    type Asked = std::collections::HashMap<(String, std::path::PathBuf), Option<String>>;
    static ANSWERS: std::sync::Mutex<Option<Asked>> = std::sync::Mutex::new(None);
    let key = (base.to_string(), repo_root.to_path_buf());
    if let Some(known) = ANSWERS.lock().ok()?.get_or_insert_default().get(&key) {
        return known.clone();
    }
    let rev = git_line(repo_root, &["merge-base", base, "HEAD"]);
    ANSWERS
        .lock()
        .ok()?
        .get_or_insert_default()
        .insert(key, rev.clone());
    rev
}

/// The first line git prints for `args`, when it succeeds and prints one.
fn git_line(repo_root: &Path, args: &[&str]) -> Option<String> {
    let output = git(repo_root, args).ok()?;
    let line = String::from_utf8(output.stdout).ok()?.trim().to_string();
    (output.status.success() && !line.is_empty()).then_some(line)
}

/// `git rev-parse HEAD` in `repo_root`, when it is a repository with a commit.
pub fn head_commit(repo_root: &Path) -> Option<String> {
    git_line(repo_root, &["rev-parse", "--verify", "--quiet", "HEAD"])
}

/// The checked-out branch, if HEAD is on one.
pub fn current_branch(repo_root: &Path) -> Option<String> {
    git_line(repo_root, &["symbolic-ref", "--quiet", "--short", "HEAD"])
}
