//! Withdrawals proven like freezes: the tests the patch removed (deleted, with their
//! file or alone, or renamed out of collection), the tests the ledger retires, and the
//! tests the patch edited. Each is run from its test file as the base had it, put in the
//! scratch copy for its proof, so "did it carry unique coverage" is asked the same way
//! of a deletion or an edit as of a freeze.

use std::path::Path;

use crate::error::GateError;
use crate::inputs::ids;
use crate::inputs::weakened::{self, TestChanges};

/// One test file's changes between the base and the working tree, as the proof needs them.
pub struct TestFile {
    /// The repository path at base.
    pub file: String,
    /// Its text at base.
    pub base: String,
    /// Its text in the working tree (at its new path, for a renamed file).
    pub head: Option<String>,
    /// Whether the working tree still has it at that path.
    pub kept: bool,
    pub changes: TestChanges,
}

/// Every test file the working tree changed against `rev` (a merge base) whose base
/// defines tests the patch removed or edited. A file that does not parse at a side is
/// named on stderr and left out: its removed tests are then not in the proof, which
/// FZ603 says.
pub fn changed_test_files(repo_root: &Path, rev: &str) -> Result<Vec<TestFile>, GateError> {
    let out = crate::git::git(
        repo_root,
        &["diff", "--name-status", "--find-renames", rev, "--", "*.py"],
    )?;
    if !out.status.success() {
        return Err(GateError::usage(format!(
            "prove: `git diff --name-status {rev}` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut files = Vec::new();
    for line in listed.lines() {
        let mut fields = line.split('\t');
        let (Some(status), Some(from)) = (fields.next(), fields.next()) else {
            continue;
        };
        // A renamed file's tests are compared with the file at its new path.
        let now = match status.chars().next() {
            Some('M') | Some('T') => Some(from.to_string()),
            Some('R') => fields.next().map(str::to_string),
            Some('D') => None,
            _ => continue, // added or copied: no test of the base left
        };
        if !crate::inputs::load::is_test_py(from, &Default::default()) {
            continue;
        }
        let Some(base) = crate::inputs::tools::file_at(repo_root, rev, from) else {
            continue;
        };
        let head = match &now {
            Some(path) => std::fs::read_to_string(repo_root.join(path)).ok(),
            None => None,
        };
        let changes = match weakened::test_changes(from, &base, head.as_deref()) {
            Ok(changes) => changes,
            Err(why) => {
                eprintln!(
                    "freezegate prove: {from}: {why}; its removed and edited tests are not proven"
                );
                continue;
            }
        };
        if changes.removed.is_empty() && changes.changed.is_empty() {
            continue;
        }
        files.push(TestFile {
            kept: now.as_deref() == Some(from),
            file: from.to_string(),
            base,
            head,
            changes,
        });
    }
    Ok(files)
}

impl TestFile {
    /// The node ids (relative to pytest's rootdir) of the tests the patch removed.
    pub fn removed_ids(&self, pytest_root: &str) -> Vec<String> {
        let suite = ids::suite_file(pytest_root, &self.file);
        self.changes
            .removed
            .iter()
            .map(|name| format!("{suite}::{name}"))
            .collect()
    }

    /// The name a removed test `test_id` of this file is defined under in the patch's
    /// version of it, where the patch renamed it out of collection (`xtest_total`).
    pub fn renamed_out(&self, test_id: &str) -> Option<String> {
        let head = self.head.as_deref()?;
        let (name, _) = crate::inputs::renamed::renamed_out(head, test_id)?;
        let old = crate::inputs::ids::strip_params(test_id)
            .rsplit("::")
            .next()?;
        (name != old).then_some(name)
    }

    /// The tests of this file, once its base text is in the copy, that are not the
    /// patch's suite: all of them when the patch deleted or moved the file, else those it
    /// removed or changed (their base versions are not what the patch runs).
    pub fn not_the_suite(&self, pytest_root: &str) -> Vec<String> {
        let suite = ids::suite_file(pytest_root, &self.file);
        if !self.kept {
            return vec![suite];
        }
        self.changes
            .removed
            .iter()
            .chain(self.changes.changed.iter().map(|(name, _)| name))
            .map(|name| format!("{suite}::{name}"))
            .collect()
    }
}
