//! Facts gathered by running the real tools: pytest's collection, git's diff and branch.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::error::GateError;
use crate::git::git;
pub use crate::git::{
    current_branch, default_branch, head_commit, merge_base, on_default_branch, HeadCommit,
};

/// The commit under judgement: `--commit SHA`, else git's HEAD (asked now, read when
/// first needed).
pub fn commit_under_judgement(given: Option<String>, repo_root: &std::path::Path) -> HeadCommit {
    match given {
        Some(_) => HeadCommit::known(given),
        None => HeadCommit::ask(repo_root),
    }
}
use crate::source::{Source, SourceFile};

fn run(program: &[String], dir: &Path, what: &str) -> Result<Output, GateError> {
    let (exe, args) = program
        .split_first()
        .ok_or_else(|| GateError::usage(format!("{what}: empty command")))?;
    Command::new(exe)
        .args(args)
        .current_dir(dir)
        // A collection is not a test run: the plugin stays off, and no record is touched.
        .env(crate::supervise::OFF_VARIABLE, "1")
        .output()
        .map_err(|e| {
            let why = if e.kind() == std::io::ErrorKind::NotFound {
                format!("`{exe}` was not found on PATH")
            } else {
                e.to_string()
            };
            GateError::usage(format!(
                "{what}: could not run `{}`: {why}",
                program.join(" ")
            ))
        })
}

fn tail(text: &[u8], lines: usize) -> String {
    let text = String::from_utf8_lossy(text);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Runs the collect command in pytest's rootdir. A non-zero exit or a collection error
/// is an error with pytest's own words, never a smaller set.
pub fn collect(command: &[String], pytest_root: &Path) -> Result<(Source, Duration), GateError> {
    let started = Instant::now();
    let output = run(command, pytest_root, "--collect")?;
    let elapsed = started.elapsed();
    let shown = command.join(" ");
    if !output.status.success() {
        let code = output
            .status
            .code()
            .map_or("a signal".to_string(), |c| c.to_string());
        let mut words = tail(&output.stdout, 25);
        let err = tail(&output.stderr, 15);
        if !err.is_empty() {
            words.push('\n');
            words.push_str(&err);
        }
        let hint = match output.status.code() {
            Some(5) => "pytest collected no tests: check `pytest_root` and testpaths",
            Some(4) => {
                "pytest rejected its arguments or paths: check `collect_command` and `pytest_root`"
            }
            _ => "fix the collection error first: a gate never runs on a smaller set of tests",
        };
        return Err(GateError::usage(format!(
            "--collect: `{shown}` exited with {code}; pytest said:\n{words}"
        ))
        .with_help(hint));
    }
    let text = String::from_utf8(output.stdout)
        .map_err(|_| GateError::usage(format!("--collect: `{shown}` printed invalid UTF-8")))?;
    Ok((
        SourceFile::new(format!("`{shown}` output"), pytest_root, text),
        elapsed,
    ))
}

/// The files the last [`changed_since`] of each repository saw renamed, old path to new.
static RENAMES: std::sync::Mutex<Option<HashMap<std::path::PathBuf, HashMap<String, String>>>> =
    std::sync::Mutex::new(None);

/// The path the patch renamed `file` to (as `--base`'s diff found it), if it did.
pub fn renamed_file(repo_root: &Path, file: &str) -> Option<String> {
    let renames = RENAMES.lock().ok()?;
    renames.as_ref()?.get(repo_root)?.get(file).cloned()
}

/// The files `git diff REF...HEAD` touches, from the repository root: a rename's old
/// path as well as its new one (the tests under the old path left the collection with
/// it; [`renamed_file`] then says where the file went).
pub fn changed_since(base: &str, repo_root: &Path) -> Result<Vec<String>, GateError> {
    // Outside a repository `git diff` falls back to --no-index mode and prints its usage.
    let probe = git(repo_root, &["rev-parse", "--git-dir"])?;
    if !probe.status.success() {
        let stderr = String::from_utf8_lossy(&probe.stderr).trim().to_string();
        return Err(GateError::usage(format!("--base {base}: {stderr}"))
            .with_help("run freezegate inside the repository, or pass --changed FILE"));
    }
    let range = format!("{base}...HEAD");
    let output = git(
        repo_root,
        &["diff", "--name-status", "-M", "-z", &range, "--"],
    )?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
        let help = if stderr.contains("no merge base") || stderr.contains("shallow") {
            "the clone is shallow and misses the merge base: fetch full history (actions/checkout with `fetch-depth: 0`)"
        } else if stderr.contains("not a git repository") {
            "run freezegate inside the repository, or pass --changed FILE"
        } else {
            "check that the ref exists locally (git fetch origin), or pass --changed FILE"
        };
        return Err(
            GateError::usage(format!("--base {base}: git diff failed: {stderr}")).with_help(help),
        );
    }
    let text = String::from_utf8_lossy(&output.stdout);
    // `-z --name-status`: a status, then its path (two for a rename or a copy: R100, C75).
    let mut fields = text.split('\0').filter(|field| !field.is_empty());
    let mut changed = Vec::new();
    let mut renames = HashMap::new();
    while let Some(status) = fields.next() {
        let Some(path) = fields.next() else { break };
        let path = crate::paths::normalize(path);
        if status.starts_with(['R', 'C']) {
            let Some(to) = fields.next() else { break };
            let to = crate::paths::normalize(to);
            // A copy leaves its source as it was.
            if status.starts_with('R') {
                renames.insert(path.clone(), to.clone());
                changed.push(path);
            }
            changed.push(to);
        } else {
            changed.push(path);
        }
    }
    if let Ok(mut known) = RENAMES.lock() {
        known
            .get_or_insert_default()
            .insert(repo_root.to_path_buf(), renames);
    }
    Ok(changed)
}

/// The branch a patch targets, as a CI names it in its environment: a pull or merge
/// request's target, a merge queue's base, or the branch a push CI builds. `None`
/// outside a known CI (or where it names none).
pub fn ci_target_branch(env: impl Fn(&str) -> Option<String>) -> Option<String> {
    let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    if var("GITHUB_ACTIONS").is_some() {
        // A pull request's target; a merge queue's ref is
        // `gh-readonly-queue/<target>/pr-<n>-<sha>`; a push builds its branch.
        if let Some(base) = var("GITHUB_BASE_REF") {
            return Some(base);
        }
        let name = var("GITHUB_REF_NAME")?;
        if let Some(queued) = name.strip_prefix("gh-readonly-queue/") {
            return queued
                .rsplit_once("/pr-")
                .map(|(target, _)| target.to_string());
        }
        return (var("GITHUB_REF_TYPE").as_deref() == Some("branch")).then_some(name);
    }
    if var("GITLAB_CI").is_some() {
        return var("CI_MERGE_REQUEST_TARGET_BRANCH_NAME").or_else(|| var("CI_COMMIT_BRANCH"));
    }
    None
}

/// Whether tracked files differ from HEAD (untracked files do not count).
pub fn is_dirty(repo_root: &Path) -> bool {
    git(
        repo_root,
        &["status", "--porcelain", "--untracked-files=no"],
    )
    .map(|out| out.status.success() && !out.stdout.is_empty())
    .unwrap_or(false)
}

/// The changed files that decide which tests pytest collects or skips, and what about
/// each changed: any `conftest.py` or `pytest.ini`, and the pytest sections of
/// `pyproject.toml` (`[tool.pytest.ini_options]`), `tox.ini` (`[pytest]`) and
/// `setup.cfg` (`[tool:pytest]`) when they differ from the merge base's.
///
/// Without a base (`--changed FILE`), the sections cannot be compared: a changed
/// `pyproject.toml`, `tox.ini` or `setup.cfg` is then not named.
/// A changed file that decides what pytest collects or skips: the file, what it is, and
/// the first line of each construct in it that can withdraw tests (`collect_ignore`,
/// `pytest_collection_modifyitems`, ...), so a diagnostic points at the one that did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectionChange {
    pub file: String,
    pub what: String,
    pub places: Vec<(&'static str, u32)>,
}

/// What in a conftest withdraws tests: the lists pytest skips files by, and the hooks
/// that drop or deselect collected items.
const WITHDRAWING: &[&str] = &[
    "collect_ignore_glob",
    "collect_ignore",
    "pytest_ignore_collect",
    "pytest_collection_modifyitems",
];

/// The first line of each [`WITHDRAWING`] construct a conftest's text assigns or defines.
fn withdrawing_places(text: &str) -> Vec<(&'static str, u32)> {
    let mut found: Vec<(&'static str, u32)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.trim_start();
        let code = code.strip_prefix("def ").unwrap_or(code);
        let Some(&name) = WITHDRAWING.iter().find(|name| {
            code.strip_prefix(**name).is_some_and(|rest| {
                let rest = rest.trim_start();
                rest.starts_with(['=', '(', '.', '+', ':'])
            })
        }) else {
            continue;
        };
        if !found.iter().any(|(seen, _)| *seen == name) {
            found.push((name, i as u32 + 1));
        }
    }
    found
}

pub fn selection_changes(
    base: Option<&str>,
    repo_root: &Path,
    changed: &crate::inputs::ids::IdSet,
) -> Vec<SelectionChange> {
    let at_base = |file: &str| base.map(|base| at_merge_base(base, repo_root, file));
    let now = |file: &str| std::fs::read_to_string(repo_root.join(file)).unwrap_or_default();
    let mut found = Vec::new();
    for file in changed.iter() {
        let name = file.rsplit('/').next().unwrap_or(file);
        let what = match name {
            "conftest.py" => Some(format!(
                "{file}, a conftest (its hooks and fixtures decide what is collected and skipped)"
            )),
            "pytest.ini" => Some(file.to_string()),
            "pyproject.toml" => at_base(file)
                .filter(|then| pyproject_pytest(then) != pyproject_pytest(&now(file)))
                .map(|_| format!("pytest's section of {file} ([tool.pytest])")),
            "tox.ini" => at_base(file)
                .filter(|then| ini_section(then, "pytest") != ini_section(&now(file), "pytest"))
                .map(|_| format!("the [pytest] section of {file}")),
            "setup.cfg" => at_base(file)
                .filter(|then| {
                    ini_section(then, "tool:pytest") != ini_section(&now(file), "tool:pytest")
                })
                .map(|_| format!("the [tool:pytest] section of {file}")),
            _ => None,
        };
        if let Some(what) = what {
            let places = match name {
                "conftest.py" => withdrawing_places(&now(file)),
                _ => Vec::new(),
            };
            found.push(SelectionChange {
                file: file.to_string(),
                what,
                places,
            });
        }
    }
    found
}

/// Whether the TOML table at `keys` of `file` differs between the merge base of `base`
/// and the working tree; true when there is no base to compare with.
pub fn section_changed(base: Option<&str>, repo_root: &Path, file: &str, keys: &[&str]) -> bool {
    let Some(base) = base else {
        return true;
    };
    let then = at_merge_base(base, repo_root, file);
    let now = std::fs::read_to_string(repo_root.join(file)).unwrap_or_default();
    toml_section(&then, keys) != toml_section(&now, keys)
}

/// A file's text at the merge base of `base` and HEAD (empty where it has none).
fn at_merge_base(base: &str, repo_root: &Path, file: &str) -> String {
    let rev = merge_base(base, repo_root).unwrap_or_else(|| base.to_string());
    file_at(repo_root, &rev, file).unwrap_or_default()
}

/// A repository file's text at a commit (None where it has none).
pub fn file_at(repo_root: &Path, rev: &str, file: &str) -> Option<String> {
    git(repo_root, &["show", &format!("{rev}:{file}")])
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The table at `keys` of a TOML text, as TOML text (empty when absent or unreadable).
fn toml_section(text: &str, keys: &[&str]) -> String {
    let Ok(doc) = text.parse::<toml::Table>() else {
        return String::new();
    };
    let mut value: Option<&toml::Value> = None;
    for key in keys {
        value = match value {
            None => doc.get(*key),
            Some(v) => v.get(*key),
        };
        if value.is_none() {
            return String::new();
        }
    }
    value.map(|v| v.to_string()).unwrap_or_default()
}

/// `[tool.pytest]` of a pyproject.toml, as TOML text (empty when absent or unreadable).
fn pyproject_pytest(text: &str) -> String {
    toml_section(text, &["tool", "pytest"])
}

/// The lines of one `[section]` of an INI file, trimmed, without comments.
fn ini_section(text: &str, section: &str) -> Vec<String> {
    let header = format!("[{section}]");
    let mut inside = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == header;
            continue;
        }
        if inside && !line.is_empty() && !line.starts_with('#') && !line.starts_with(';') {
            lines.push(line.to_string());
        }
    }
    lines
}

/// The lines this patch added or changed, per repository path, from `git diff -U0`
/// against the merge base of `base` and HEAD: new-side `(first line, count)` hunks.
pub fn changed_lines(base: &str, repo_root: &Path) -> Result<crate::inputs::Hunks, GateError> {
    let rev = merge_base(base, repo_root).unwrap_or_else(|| base.to_string());
    let out = git(
        repo_root,
        &[
            "diff",
            "-U0",
            "--no-color",
            "--no-ext-diff",
            "--no-renames",
            &rev,
            "HEAD",
        ],
    )?;
    if !out.status.success() {
        return Err(GateError::usage(format!(
            "--base {base}: `git diff -U0` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(parse_unified_diff(&String::from_utf8_lossy(&out.stdout)))
}

/// The new-side hunks of a unified diff (`git diff -U0` output, or `--diff FILE`), and
/// the lines it adds to Python files.
pub fn parse_unified_diff(text: &str) -> crate::inputs::Hunks {
    let mut hunks = crate::inputs::Hunks::default();
    let mut file: Option<String> = None;
    // The next new-side line number within the current hunk of a Python file.
    let mut python_line: Option<u32> = None;
    for line in text.lines() {
        if let Some(path) = line.strip_prefix("+++ ") {
            file = path.strip_prefix("b/").map(str::to_string);
            python_line = None;
        } else if let (Some(file), Some(rest)) = (&file, line.strip_prefix("@@ ")) {
            // `@@ -a,b +c,d @@`: the new side starts at c and spans d lines (1 if no d).
            let new = rest.split(' ').find_map(|part| part.strip_prefix('+'));
            python_line = None;
            if let Some(new) = new {
                let (start, count) = new.split_once(',').unwrap_or((new, "1"));
                if let (Ok(start), Ok(count)) = (start.parse::<u32>(), count.parse::<u32>()) {
                    hunks.add(file, start, count);
                    if file.ends_with(".py") || file.ends_with(".pyi") {
                        python_line = Some(start);
                    }
                }
            }
        } else if let (Some(file), Some(at)) = (&file, python_line) {
            if let Some(added) = line.strip_prefix('+') {
                hunks.add_python_line(file, at, added);
                python_line = Some(at + 1);
            } else if line.starts_with(' ') {
                python_line = Some(at + 1);
            }
        }
    }
    hunks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    }

    #[test]
    fn ci_environments_name_the_target_branch() {
        let github = |extra: &[(&'static str, &'static str)]| {
            let mut vars = vec![("GITHUB_ACTIONS", "true")];
            vars.extend_from_slice(extra);
            ci_target_branch(env(&vars))
        };
        assert_eq!(
            github(&[("GITHUB_BASE_REF", "main"), ("GITHUB_REF_NAME", "42/merge")]).as_deref(),
            Some("main")
        );
        assert_eq!(
            github(&[
                ("GITHUB_BASE_REF", ""),
                (
                    "GITHUB_REF_NAME",
                    "gh-readonly-queue/release/2.x/pr-42-0123abc"
                )
            ])
            .as_deref(),
            Some("release/2.x")
        );
        assert_eq!(
            github(&[("GITHUB_REF_NAME", "main"), ("GITHUB_REF_TYPE", "branch")]).as_deref(),
            Some("main")
        );
        assert_eq!(
            github(&[("GITHUB_REF_NAME", "v1.0"), ("GITHUB_REF_TYPE", "tag")]),
            None
        );
        assert_eq!(
            ci_target_branch(env(&[
                ("GITLAB_CI", "true"),
                ("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "develop"),
                ("CI_COMMIT_BRANCH", "feature")
            ]))
            .as_deref(),
            Some("develop")
        );
        assert_eq!(
            ci_target_branch(env(&[("GITLAB_CI", "true"), ("CI_COMMIT_BRANCH", "main")]))
                .as_deref(),
            Some("main")
        );
        assert_eq!(
            ci_target_branch(env(&[("GITHUB_BASE_REF", "main")])),
            None,
            "outside a known CI"
        );
    }
}
