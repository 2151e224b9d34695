//! The one way the gate runs git.

use std::path::Path;
use std::process::{Command, Output};

use crate::error::GateError;

/// `git ARGS` in `repo_root`; an error when git cannot be started (its exit status is the
/// caller's to judge).
pub fn git(repo_root: &Path, args: &[&str]) -> Result<Output, GateError> {
    command(repo_root, args).output().map_err(|e| {
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

/// `git ARGS` in `repo_root`, not yet started.
fn command(repo_root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("git");
    command.args(args).current_dir(repo_root);
    command
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
    first_line(git(repo_root, args).ok()?)
}

fn first_line(output: Output) -> Option<String> {
    let line = String::from_utf8(output.stdout).ok()?.trim().to_string();
    (output.status.success() && !line.is_empty()).then_some(line)
}

/// `git rev-parse HEAD` in `repo_root`, when it is a repository with a commit.
pub fn head_commit(repo_root: &Path) -> Option<String> {
    HeadCommit::ask(repo_root).get()
}

/// HEAD's commit, asked of git now and read when first needed, by whichever thread
/// needs it first: the `git` process (about 2 ms, a fifth of a small check) runs while
/// the pack compiles instead of before the rules.
#[derive(Clone)]
pub struct HeadCommit(std::sync::Arc<Asked>);

struct Asked {
    git: std::sync::Mutex<Option<std::process::Child>>,
    answer: std::sync::OnceLock<Option<String>>,
}

impl HeadCommit {
    /// Starts `git rev-parse HEAD` in `repo_root`.
    pub fn ask(repo_root: &Path) -> HeadCommit {
        if let Some(commit) = read_head(repo_root) {
            return HeadCommit::known(Some(commit));
        }
        let child = command(repo_root, &["rev-parse", "--verify", "--quiet", "HEAD"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn();
        let answer = std::sync::OnceLock::new();
        if child.is_err() {
            let _ = answer.set(None);
        }
        HeadCommit(std::sync::Arc::new(Asked {
            git: std::sync::Mutex::new(child.ok()),
            answer,
        }))
    }

    /// A commit already known (`--commit SHA`): git is not asked.
    pub fn known(commit: Option<String>) -> HeadCommit {
        HeadCommit(std::sync::Arc::new(Asked {
            git: std::sync::Mutex::new(None),
            answer: std::sync::OnceLock::from(commit),
        }))
    }

    /// The commit, once git has answered (`None` outside a repository with a commit).
    pub fn get(&self) -> Option<String> {
        let Asked { git, answer } = &*self.0;
        answer
            .get_or_init(|| {
                let child = git.lock().ok()?.take()?;
                first_line(child.wait_with_output().ok()?)
            })
            .clone()
    }
}

/// HEAD's commit read from the repository's files, in the plain layout where that is
/// all `git rev-parse HEAD` does: `.git` a directory, HEAD a commit id or a branch whose
/// loose ref file or `packed-refs` line holds one. `None` for anything else (a worktree
/// or submodule's `.git` file, `GIT_DIR`, reftable, a symbolic ref, an unborn branch):
/// git is asked then. A git process costs a small check a twentieth of its time.
fn read_head(repo_root: &Path) -> Option<String> {
    if ["GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR"]
        .iter()
        .any(|name| std::env::var_os(name).is_some())
    {
        return None;
    }
    let dir = repo_root.join(".git");
    if !dir.is_dir() || dir.join("reftable").exists() || dir.join("commondir").exists() {
        return None;
    }
    let is_commit =
        |text: &str| matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit());
    let head = std::fs::read_to_string(dir.join("HEAD")).ok()?;
    let head = head.trim_end();
    if is_commit(head) {
        return Some(head.to_string());
    }
    let branch = head.strip_prefix("ref: refs/heads/")?;
    if branch.is_empty()
        || branch
            .split('/')
            .any(|part| part.is_empty() || part == "..")
    {
        return None;
    }
    if let Ok(loose) = std::fs::read_to_string(dir.join("refs/heads").join(branch)) {
        let loose = loose.trim_end();
        return is_commit(loose).then(|| loose.to_string());
    }
    let packed = std::fs::read_to_string(dir.join("packed-refs")).ok()?;
    let wanted = format!("refs/heads/{branch}");
    packed.lines().find_map(|line| {
        let (commit, name) = line.split_once(' ')?;
        (name == wanted && is_commit(commit)).then(|| commit.to_string())
    })
}

/// The checked-out branch, if HEAD is on one.
pub fn current_branch(repo_root: &Path) -> Option<String> {
    git_line(repo_root, &["symbolic-ref", "--quiet", "--short", "HEAD"])
}

/// The repository's default branch, the one `origin`'s HEAD names (what `git clone`
/// checks out, and what patches are made against).
pub fn default_branch(repo_root: &Path) -> Option<String> {
    let default = git_line(
        repo_root,
        &[
            "symbolic-ref",
            "--quiet",
            "--short",
            "refs/remotes/origin/HEAD",
        ],
    )?;
    default.strip_prefix("origin/").map(str::to_string)
}

/// The branch checked out, when it is the default branch.
pub fn on_default_branch(repo_root: &Path) -> Option<String> {
    let branch = current_branch(repo_root)?;
    (default_branch(repo_root)? == branch).then_some(branch)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dir: &Path, args: &[&str]) -> String {
        let output = git(dir, args).unwrap();
        assert!(output.status.success(), "git {args:?}: {output:?}");
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    }

    #[test]
    fn head_commit_asked_early_is_heads_commit_for_every_reader() {
        let dir = tempfile::tempdir().unwrap();
        run(dir.path(), &["init", "-q"]);
        let asked = HeadCommit::ask(dir.path());
        assert_eq!(
            asked.get(),
            None,
            "a repository without a commit has no HEAD"
        );
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        run(dir.path(), &["add", "a.txt"]);
        run(
            dir.path(),
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "a",
            ],
        );
        let head = run(dir.path(), &["rev-parse", "HEAD"]);
        assert_eq!(
            read_head(dir.path()).as_deref(),
            Some(head.as_str()),
            "a loose ref"
        );
        let branch = run(dir.path(), &["symbolic-ref", "--short", "HEAD"]);
        run(dir.path(), &["pack-refs", "--all"]);
        assert!(!dir.path().join(".git/refs/heads").join(&branch).exists());
        assert_eq!(
            read_head(dir.path()).as_deref(),
            Some(head.as_str()),
            "a packed ref"
        );
        run(dir.path(), &["checkout", "-q", "--detach"]);
        assert_eq!(
            read_head(dir.path()).as_deref(),
            Some(head.as_str()),
            "detached"
        );
        run(dir.path(), &["checkout", "-q", "-"]);
        run(dir.path(), &["symbolic-ref", "HEAD", "refs/remotes/x"]);
        assert_eq!(
            read_head(dir.path()),
            None,
            "anything but a branch: git is asked"
        );
        run(dir.path(), &["checkout", "-q", "-f", &head]);
        let asked = HeadCommit::ask(dir.path());
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let asked = asked.clone();
                std::thread::spawn(move || asked.get())
            })
            .collect();
        for reader in readers {
            assert_eq!(reader.join().unwrap().as_deref(), Some(head.as_str()));
        }
        assert_eq!(asked.get().as_deref(), Some(head.as_str()));
        assert_eq!(head_commit(dir.path()).as_deref(), Some(head.as_str()));
        assert_eq!(
            HeadCommit::known(Some("abc".into())).get().as_deref(),
            Some("abc")
        );
    }
}
