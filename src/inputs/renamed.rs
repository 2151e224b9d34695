//! A test that left the collection by being renamed: its file, at the commit under
//! judgement, still defines the function under a name pytest does not collect
//! (`xtest_total`, `_test_total`, `total`, `disabled_test_total`). FZ603 says so
//! instead of calling it a deletion.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The test files of the commit under judgement, each read once however many of its
/// tests left the collection (a patch deleting a file's 500 tests reads it once).
pub struct TestFiles {
    repo_root: PathBuf,
    read: Mutex<HashMap<String, Option<Arc<str>>>>,
}

impl TestFiles {
    pub fn new(repo_root: PathBuf) -> TestFiles {
        TestFiles {
            repo_root,
            read: Mutex::new(HashMap::new()),
        }
    }

    /// The function the test `node_id` (in repository file `file`) was renamed to, and
    /// its line (see [`renamed_out`]); `None` as well for a file that is gone.
    pub fn renamed_out(&self, file: &str, node_id: &str) -> Option<(String, u32)> {
        let text = {
            let mut read = self.read.lock().expect("not poisoned");
            read.entry(file.to_string())
                .or_insert_with(|| {
                    std::fs::read_to_string(self.repo_root.join(file))
                        .ok()
                        .map(Arc::from)
                })
                .clone()?
        };
        renamed_out(&text, node_id)
    }
}

/// The function the test `node_id` was renamed to in its file's `text`, and its line: a
/// `def` whose name is not collected (does not start with `test`) and is the old name
/// with a prefix added, without its `test` prefix, or with another word in its place
/// (`check_total`); or the test's own `def`, still there under its name (its module or
/// class was disabled: `__test__ = False`).
pub fn renamed_out(text: &str, node_id: &str) -> Option<(String, u32)> {
    let old = test_function(node_id)?;
    let bare = old.strip_prefix("test")?.trim_start_matches('_');
    let find = |renamed: &dyn Fn(&str) -> bool| {
        text.lines().enumerate().find_map(|(i, line)| {
            let name = defined_name(line)?;
            renamed(name).then(|| (name.to_string(), i as u32 + 1))
        })
    };
    let out = |name: &str| name == old || !name.starts_with("test");
    // The old name kept, prefixed or bare first; another word in the place of `test`
    // only when none is there (`helper_total` beside `total` is a helper).
    find(&|name| {
        out(name)
            && (name == old
                || name.ends_with(old)
                || (!bare.is_empty() && name.trim_start_matches('_') == bare))
    })
    .or_else(|| {
        find(&|name| {
            !bare.is_empty()
                && !name.starts_with("test")
                && name
                    .strip_suffix(bare)
                    .is_some_and(|prefix| prefix.ends_with('_'))
        })
    })
}

/// The function part of a node id: `t.py::TestA::test_b[1]` is `test_b`.
fn test_function(node_id: &str) -> Option<&str> {
    let last = node_id.rsplit("::").next()?;
    let name = last.split('[').next()?;
    (!name.is_empty() && node_id.contains("::")).then_some(name)
}

/// The name a line's `def` or `async def` defines.
fn defined_name(line: &str) -> Option<&str> {
    let rest = line.trim_start();
    let rest = rest.strip_prefix("async ").map_or(rest, str::trim_start);
    let rest = rest.strip_prefix("def ")?.trim_start();
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    (end > 0).then(|| &rest[..end])
}

#[cfg(test)]
mod tests {
    use super::TestFiles;

    #[test]
    fn a_function_renamed_out_of_collection_is_found_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let file = "tests/test_a.py";
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(
            dir.path().join(file),
            "def test_kept():\n    pass\n\n\nclass TestX:\n    async def xtest_total(self):\n        pass\n\ndef helper_rounding():\n    pass\n\ndef rounding():\n    pass\n\ndef check_rounding_half():\n    pass\n",
        )
        .unwrap();
        let files = TestFiles::new(dir.path().to_path_buf());
        let found = |id: &str| files.renamed_out(file, id);
        assert_eq!(
            found("tests/test_a.py::TestX::test_total[2]"),
            Some(("xtest_total".to_string(), 6))
        );
        assert_eq!(
            found("tests/test_a.py::test_rounding"),
            Some(("rounding".to_string(), 12))
        );
        // Still defined under its own name (asked of a test that left the collection:
        // disabled), or gone.
        assert_eq!(
            found("tests/test_a.py::test_kept"),
            Some(("test_kept".to_string(), 1))
        );
        assert_eq!(found("tests/test_a.py::test_vanished"), None);
        // Another word in the place of `test`, when no closer name is there.
        assert_eq!(
            found("tests/test_a.py::test_rounding_half"),
            Some(("check_rounding_half".to_string(), 15))
        );
        assert_eq!(found("tests/test_a.py::test_total_due"), None);
        assert_eq!(
            files.renamed_out("tests/none.py", "tests/none.py::test_a"),
            None
        );
        // Read once: a later change on disk is not seen within one check.
        std::fs::write(dir.path().join(file), "def other():\n    pass\n").unwrap();
        assert_eq!(
            found("tests/test_a.py::test_kept"),
            Some(("test_kept".to_string(), 1))
        );
    }
}
