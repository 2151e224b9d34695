//! Sets of pytest node ids and repository paths, and the text formats they arrive in.

use std::sync::Arc;

use indexmap::IndexSet;
use rustc_hash::FxBuildHasher;

use crate::error::InputError;
use crate::source::Source;

/// An ordered, deduplicated set of ids shared without copying (scripts get a handle).
#[derive(Debug, Clone, Default)]
pub struct IdSet(pub Arc<IndexSet<Box<str>, FxBuildHasher>>);

impl<S: Into<Box<str>>> FromIterator<S> for IdSet {
    fn from_iter<I: IntoIterator<Item = S>>(items: I) -> IdSet {
        IdSet(Arc::new(items.into_iter().map(Into::into).collect()))
    }
}

impl IdSet {
    pub fn contains(&self, id: &str) -> bool {
        self.0.contains(id)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|s| &**s)
    }
}

/// The part of a node id before its parameters: `a.py::t[x::y]` → `a.py::t`.
pub fn strip_params(node_id: &str) -> &str {
    node_id.split_once('[').map_or(node_id, |(head, _)| head)
}

/// The file a node id lives in, relative to pytest's rootdir.
pub fn file_of(node_id: &str) -> &str {
    let head = strip_params(node_id);
    head.split_once("::").map_or(head, |(file, _)| file)
}

/// Whether `s` looks like a pytest node id: `path::name(::name)*` with optional `[params]`.
pub fn is_node_id(s: &str) -> bool {
    let (head, params) = match s.find('[') {
        Some(i) => (&s[..i], Some(&s[i..])),
        None => (s, None),
    };
    if let Some(params) = params {
        if params.len() < 2 || !params.ends_with(']') {
            return false;
        }
    }
    let mut parts = head.split("::");
    let file = parts.next().unwrap_or("");
    let names: Vec<&str> = parts.collect();
    let valid_file = !file.is_empty()
        && !file.starts_with('/')
        && !file
            .chars()
            .any(|c| c.is_whitespace() || c == '\\' || c.is_control());
    let valid_name = |n: &&str| {
        !n.is_empty()
            && !n.starts_with(|c: char| c.is_ascii_digit())
            && n.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '-')
    };
    valid_file && !names.is_empty() && names.iter().all(valid_name)
}

/// A repository-relative path in canonical form: `/` separators, no `./`.
pub fn normalize_path(path: &str) -> String {
    let path = path.trim().replace('\\', "/");
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// Joins pytest's rootdir (relative to the repository root) with a node id's file.
pub fn repo_file(pytest_root: &str, node_id: &str) -> String {
    let file = file_of(node_id);
    if pytest_root.is_empty() {
        normalize_path(file)
    } else {
        normalize_path(&format!("{pytest_root}/{file}"))
    }
}

fn bad_line(
    source: &Source,
    line_no: usize,
    line_start: usize,
    line: &str,
    what: &str,
) -> InputError {
    InputError::new(
        &source.name,
        format!("line {line_no}: {what}: `{}`", truncate(line, 120)),
    )
    .at(source, line_start..line_start + line.len(), "here")
}

fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Lines with their 1-based number and byte offset, CRLF-aware.
fn lines(text: &str) -> impl Iterator<Item = (usize, usize, &str)> {
    let mut offset = 0;
    text.split('\n').enumerate().map(move |(i, line)| {
        let start = offset;
        offset += line.len() + 1;
        (i + 1, start, line.strip_suffix('\r').unwrap_or(line))
    })
}

/// A JSON array of strings, if the text is one.
fn json_array(source: &Source) -> Option<Result<Vec<String>, InputError>> {
    if !source.text.trim_start().starts_with('[') {
        return None;
    }
    Some(
        serde_json::from_str::<Vec<String>>(&source.text).map_err(|e| {
            let at = source.offset_of(e.line(), e.column().max(1));
            InputError::new(&source.name, "is not a JSON array of strings").at(
                source,
                at..at,
                e.to_string(),
            )
        }),
    )
}

fn require_node_ids(source: &Source, ids: Vec<String>) -> Result<Vec<String>, InputError> {
    if let Some(bad) = ids.iter().find(|id| !is_node_id(id)) {
        let at = source.text.find(bad.as_str()).unwrap_or(0);
        return Err(
            InputError::new(&source.name, format!("`{bad}` is not a pytest node id")).at(
                source,
                at..at + bad.len(),
                "here",
            ),
        );
    }
    Ok(ids)
}

/// Pytest collection: `--collect-only -q` output (summary and warning sections allowed),
/// a JSON array, or one id a line. A collection error anywhere is an error, never a
/// smaller set.
pub fn parse_collected(source: &Source) -> Result<Vec<String>, InputError> {
    if let Some(ids) = json_array(source) {
        return require_node_ids(source, ids?);
    }
    let mut ids = Vec::new();
    let mut in_ids = true;
    for (line_no, start, line) in lines(&source.text) {
        let trimmed = line.trim();
        if let Some(what) = collection_error(trimmed) {
            return Err(InputError::new(
                &source.name,
                format!("reports a pytest collection error: {what}"),
            )
            .at(source, start..start + line.len(), "collection error")
            .with_help(
                "fix the collection error first: a gate never runs on a smaller set of tests",
            ));
        }
        if trimmed.is_empty() {
            continue;
        }
        if is_summary_line(trimmed) || trimmed.starts_with('=') || trimmed.starts_with('_') {
            in_ids = false;
            continue;
        }
        if !in_ids {
            continue;
        }
        if !is_node_id(trimmed) {
            return Err(bad_line(
                source,
                line_no,
                start,
                line,
                "not a pytest node id",
            ));
        }
        ids.push(trimmed.to_string());
    }
    Ok(ids)
}

/// What a line of pytest output says went wrong during collection, if anything.
fn collection_error(line: &str) -> Option<String> {
    let words = line.trim_matches(|c: char| c == '=' || c == '!' || c == ' ');
    if line.starts_with("ERROR ") || words.starts_with("ERROR collecting") || words == "ERRORS" {
        return Some(line.to_string());
    }
    if words.starts_with("Interrupted:") {
        return Some(words.to_string());
    }
    if is_summary_line(words) && summary_counts(words).any(|(_, word)| word.starts_with("error")) {
        return Some(words.to_string());
    }
    None
}

/// `12 tests collected in 0.03s`, `no tests collected`, `3 errors in 0.1s`, ...
fn is_summary_line(line: &str) -> bool {
    let line = line.trim_matches(|c: char| c == '=' || c == ' ');
    line.starts_with("no tests ")
        || summary_counts(line).next().is_some()
            && (line.contains(" in ") || line.contains("collected"))
}

fn summary_counts(line: &str) -> impl Iterator<Item = (u64, &str)> {
    let words: Vec<&str> = line
        .split([' ', ',', '/'])
        .filter(|w| !w.is_empty())
        .collect();
    let mut pairs = Vec::new();
    for pair in words.windows(2) {
        if let Ok(n) = pair[0].parse::<u64>() {
            if pair[1].starts_with("test")
                || pair[1].starts_with("error")
                || pair[1].starts_with("deselected")
            {
                pairs.push((n, pair[1]));
            }
        }
    }
    pairs.into_iter()
}

/// Changed files: one repository-relative path a line.
pub fn parse_changed(source: &Source) -> Result<Vec<String>, InputError> {
    let mut paths = Vec::new();
    for (line_no, start, line) in lines(&source.text) {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.starts_with('/') || trimmed.contains('\0') {
            return Err(bad_line(
                source,
                line_no,
                start,
                line,
                "expected a repository-relative path",
            ));
        }
        paths.push(normalize_path(trimmed));
    }
    Ok(paths)
}

/// Applied skips: a JSON array of node ids or one id a line.
pub fn parse_id_list(source: &Source) -> Result<Vec<String>, InputError> {
    if let Some(ids) = json_array(source) {
        return require_node_ids(source, ids?);
    }
    let mut ids = Vec::new();
    for (line_no, start, line) in lines(&source.text) {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if !is_node_id(trimmed) {
            return Err(bad_line(
                source,
                line_no,
                start,
                line,
                "not a pytest node id",
            ));
        }
        ids.push(trimmed.to_string());
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    #[test]
    fn node_id_shapes() {
        assert!(is_node_id("tests/test_a.py::test_x"));
        assert!(is_node_id("tests/test_a.py::TestC::test_x[a::b-1]"));
        assert!(is_node_id("pkg/mod.py::pkg.mod.func"));
        assert!(!is_node_id("tests/test_a.py"));
        assert!(!is_node_id("tests/test_a.py::"));
        assert!(!is_node_id("test x.py::t"));
        assert!(!is_node_id("/abs/t.py::t"));
        assert!(!is_node_id("t.py::t[unclosed"));
    }

    #[test]
    fn file_of_splits_at_the_first_bracket() {
        assert_eq!(file_of("a/b.py::T::t[x::y]"), "a/b.py");
        assert_eq!(repo_file("backend", "tests/t.py::x"), "backend/tests/t.py");
        assert_eq!(repo_file("", "./tests/t.py::x"), "tests/t.py");
    }

    #[test]
    fn collect_only_output_with_summary() {
        let text = "tests/a.py::t1\ntests/a.py::t2[x]\r\n\n=== warnings summary ===\nsome warning text\n2 tests collected in 0.01s\n";
        let ids = parse_collected(&SourceFile::new("c", "c", text)).unwrap();
        assert_eq!(ids, ["tests/a.py::t1", "tests/a.py::t2[x]"]);
    }

    #[test]
    fn collection_errors_are_refused() {
        for text in [
            "tests/a.py::t1\n\n==== ERRORS ====\n",
            "tests/a.py::t1\nERROR tests/b.py\n",
            "tests/a.py::t1\n\n1 test collected, 1 error in 0.05s\n",
            "!!!!!!! Interrupted: 1 error during collection !!!!!!!\n",
        ] {
            let err = parse_collected(&SourceFile::new("c", "c", text)).unwrap_err();
            assert!(
                err.to_string().contains("collection error"),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn junk_lines_are_refused_not_dropped() {
        let err =
            parse_collected(&SourceFile::new("c", "c", "tests/a.py::t\nnot an id\n")).unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
    }
}
