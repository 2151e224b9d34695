//! The line formats ids arrive in: pytest's collection, changed files, id lists.

use super::{is_node_id, Ids, Spans};
use crate::error::GateError;
use crate::paths;
use crate::source::Source;

fn bad_line(
    source: &Source,
    line_no: usize,
    line_start: usize,
    line: &str,
    what: &str,
) -> GateError {
    GateError::new(
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
    let ends = memchr::memchr_iter(b'\n', text.as_bytes()).chain(std::iter::once(text.len()));
    let mut start = 0;
    ends.enumerate().map(move |(i, end)| {
        let line = &text[start..end];
        let line_start = start;
        start = end + 1;
        (i + 1, line_start, line.strip_suffix('\r').unwrap_or(line))
    })
}

/// `line.trim()`, without its char-wise scans of a line that begins and ends with a
/// printable ASCII byte (every line of a million-line collection).
fn trim(line: &str) -> &str {
    match line.as_bytes() {
        [first, .., last] if first.is_ascii_graphic() && last.is_ascii_graphic() => line,
        _ => line.trim(),
    }
}

/// A JSON array of strings, if the text is one.
fn json_array(source: &Source) -> Option<Result<Vec<String>, GateError>> {
    if !source.text.trim_start().starts_with('[') {
        return None;
    }
    Some(
        serde_json::from_str::<Vec<String>>(&source.text).map_err(|e| {
            GateError::new(&source.name, "is not a JSON array of strings").at(
                source,
                source.json_error_span(&e).unwrap_or(0..0),
                e.to_string(),
            )
        }),
    )
}

fn require_node_ids(source: &Source, ids: Vec<String>) -> Result<Vec<String>, GateError> {
    if let Some(bad) = ids.iter().find(|id| !is_node_id(id)) {
        let at = source.text.find(bad.as_str()).unwrap_or(0);
        return Err(
            GateError::new(&source.name, format!("`{bad}` is not a pytest node id")).at(
                source,
                at..at + bad.len(),
                "here",
            ),
        );
    }
    Ok(ids)
}

/// Pytest collection: `--collect-only -q` output, a JSON array, or one id a line. The
/// `-q` output is read as pytest writes it: the ids, a blank line, then its sections
/// (warnings summary, errors, short test summary) and the count line (`N tests
/// collected in …`, `no tests collected`, `no tests ran`). A collection error anywhere
/// is an error, and so is a count that differs from the ids read: never a smaller set.
pub fn parse_collected(source: &Source) -> Result<Ids, GateError> {
    if let Some(ids) = json_array(source) {
        return require_node_ids(source, ids?).map(Ids::Owned);
    }
    // Sized up front: a million spans grown by doubling would peak at three times this.
    let mut ids =
        Spans::with_capacity(memchr::memchr_iter(b'\n', source.text.as_bytes()).count() + 1);
    // Ids end at pytest's first section; lines inside sections are pytest's own text.
    let mut in_sections = false;
    // After a blank line, a line that is no node id is taken as pytest's text.
    let mut after_blank = false;
    let mut listed: Option<(u64, usize, usize)> = None;
    for (line_no, start, line) in lines(&source.text) {
        let trimmed = trim(line);
        if let Some(what) = collection_error(trimmed) {
            return Err(GateError::new(
                &source.name,
                format!("reports a pytest collection error: {what}"),
            )
            .at(source, start..start + line.len(), "collection error")
            .with_help(
                "fix the collection error first: a gate never runs on a smaller set of tests",
            ));
        }
        if trimmed.is_empty() {
            // pytest ends the ids with a blank line; its sections follow.
            after_blank = !ids.is_empty();
            continue;
        }
        let first = trimmed.as_bytes()[0];
        if matches!(first, b'0'..=b'9' | b'n') && is_summary_line(trimmed) {
            in_sections = true;
            if let Some(n) = collected_count(trimmed) {
                listed = Some((n, start, line.len()));
            }
            continue;
        }
        if is_section_rule(trimmed) {
            if ids.is_empty() && trimmed.contains("test session starts") {
                return Err(not_quiet_output(
                    source,
                    start,
                    line,
                    "the tree output of `pytest --collect-only` without `-q`",
                ));
            }
            in_sections = true;
            continue;
        }
        if in_sections || after_blank && !is_node_id(trimmed) {
            continue;
        }
        if ids.is_empty() {
            if let Some(kind) = other_collect_format(trimmed) {
                return Err(not_quiet_output(source, start, line, kind));
            }
        }
        let (offset, len) = node_id_span(source, (line_no, start, line), trimmed)?;
        ids.push(offset, len);
    }
    if let Some((n, start, len)) = listed {
        if n != ids.len() as u64 {
            return Err(GateError::new(
                &source.name,
                format!(
                    "pytest says it collected {n} but the output lists {}",
                    crate::words::count_of(ids.len(), "node id")
                ),
            )
            .at(source, start..start + len, "the count pytest printed")
            .with_help("give the whole `pytest --collect-only -q` output, unedited: the gate never reads fewer tests than pytest collected"));
        }
    }
    Ok(Ids::Spans(ids))
}

/// A line pytest draws around a section title: `=== warnings summary ===`, `___ ERROR
/// collecting x.py ___`, `!!! Interrupted: … !!!`.
fn is_section_rule(line: &str) -> bool {
    // Most lines are ids: one byte tells them apart.
    if !matches!(line.as_bytes().first(), Some(b'=' | b'_' | b'!' | b'-')) {
        return false;
    }
    ["===", "___", "!!!"]
        .iter()
        .any(|rule| line.starts_with(rule) && line.ends_with(&rule[..1]))
        || line.starts_with("-- Docs: ")
}

/// How many tests a count line says were collected (after deselection): `12 tests
/// collected in 0.1s` → 12, `1/16 tests collected (15 deselected)` → 1, `no tests
/// collected` → 0; `None` for a count line of a run (`3 passed in …`).
fn collected_count(line: &str) -> Option<u64> {
    let line = line.trim_matches(|c: char| c == '=' || c == ' ');
    if line.starts_with("no tests ") {
        return Some(0);
    }
    let (count, rest) = line.split_once(' ')?;
    if !(rest.starts_with("test collected") || rest.starts_with("tests collected")) {
        return None;
    }
    count.split('/').next()?.parse().ok()
}

/// What a first line says the output is, when it is pytest's collection in a form
/// other than `-q`.
fn other_collect_format(line: &str) -> Option<&'static str> {
    if line.starts_with('<') && line.ends_with('>') {
        return Some("the tree output of `pytest --collect-only` without `-q`");
    }
    if line.starts_with("collected ") && line.contains(" item") {
        return Some("the tree output of `pytest --collect-only` without `-q`");
    }
    let (file, count) = line.rsplit_once(": ")?;
    (!file.contains("::") && !count.is_empty() && count.bytes().all(|b| b.is_ascii_digit()))
        .then_some("`pytest --collect-only -qq` output (a count per file, no node ids)")
}

fn not_quiet_output(source: &Source, start: usize, line: &str, kind: &str) -> GateError {
    GateError::new(
        &source.name,
        format!("is {kind}, not a list of node ids"),
    )
    .at(source, start..start + line.len(), "not a node id")
    .with_help("write the collection with `pytest --collect-only --verbosity=-1` (one node id a line; `-q` is the same unless addopts has a `-v`, which it only offsets), or give a JSON array of node ids")
}

/// Where `trimmed`, part of a `(number, start, text)` line of `source`, is in the text
/// when it is a node id; else the error naming the line.
fn node_id_span(
    source: &Source,
    (line_no, start, line): (usize, usize, &str),
    trimmed: &str,
) -> Result<(u32, u32), GateError> {
    if !is_node_id(trimmed) {
        return Err(bad_line(
            source,
            line_no,
            start,
            line,
            "not a pytest node id",
        ));
    }
    Ok(span_in(source, trimmed))
}

/// Where `part`, a slice of `source`'s text, lies in it.
fn span_in(source: &Source, part: &str) -> (u32, u32) {
    let offset = part.as_ptr() as usize - source.text.as_ptr() as usize;
    (offset as u32, part.len() as u32)
}

/// What a line of pytest output says went wrong during collection, if anything.
fn collection_error(line: &str) -> Option<String> {
    // Fast path: ids (the million-line case) start with a path character.
    if !matches!(
        line.as_bytes().first(),
        Some(b'E' | b'=' | b'!' | b'I' | b'0'..=b'9')
    ) {
        return None;
    }
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
pub fn parse_changed(source: &Source) -> Result<Ids, GateError> {
    let mut spans = Spans::default();
    let mut canonical = true;
    for (line_no, start, line) in lines(&source.text) {
        let trimmed = trim(line);
        if trimmed.is_empty() {
            continue;
        }
        if crate::paths::is_rooted(trimmed) || trimmed.contains('\0') {
            return Err(bad_line(
                source,
                line_no,
                start,
                line,
                "expected a repository-relative path",
            ));
        }
        canonical &= crate::paths::is_canonical(trimmed);
        let (offset, len) = span_in(source, trimmed);
        spans.push(offset, len);
    }
    if canonical {
        // What `git diff --name-only` prints: kept as spans into the file, no copies.
        return Ok(Ids::Spans(spans));
    }
    Ok(Ids::Owned(
        spans
            .iter()
            .map(|(start, len)| {
                paths::normalize(&source.text[start as usize..(start + len) as usize])
            })
            .collect(),
    ))
}

/// Applied skips: a JSON array of node ids or one id a line.
pub fn parse_id_list(source: &Source) -> Result<Ids, GateError> {
    if let Some(ids) = json_array(source) {
        return require_node_ids(source, ids?).map(Ids::Owned);
    }
    let mut ids = Spans::default();
    for line in lines(&source.text) {
        let trimmed = trim(line.2);
        if !trimmed.is_empty() {
            let (offset, len) = node_id_span(source, line, trimmed)?;
            ids.push(offset, len);
        }
    }
    Ok(Ids::Spans(ids))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::ids::IdSetBuilder;
    use crate::source::SourceFile;

    #[test]
    fn changed_paths_are_normalized_and_canonical_ones_shared() {
        let source = SourceFile::new("c.txt", "c.txt", "a/b.py\n./c.py\n".to_string());
        match parse_changed(&source).unwrap() {
            Ids::Owned(paths) => assert_eq!(paths, ["a/b.py", "c.py"]),
            Ids::Spans(_) => panic!("a path needing normalisation is copied"),
        }
        let source = SourceFile::new("c.txt", "c.txt", " a/b.py \r\nc.py".to_string());
        match parse_changed(&source).unwrap() {
            Ids::Spans(spans) => assert_eq!(spans.iter().collect::<Vec<_>>(), [(1, 6), (10, 4)]),
            Ids::Owned(_) => panic!("canonical paths stay spans"),
        }
    }

    #[test]
    fn quiet_output_is_read_whole_and_other_formats_are_named() {
        let parse = |text: &str| parse_collected(&SourceFile::new("c.txt", "c.txt", text));
        let ids = |text: &str| match parse(text).unwrap() {
            Ids::Spans(spans) => spans.len(),
            Ids::Owned(ids) => ids.len(),
        };
        // An id in a `_private/` folder does not end the list.
        assert_eq!(
            ids("tests/_private/test_h.py::test_h\ntests/test_a.py::test_a\n\n2 tests collected in 0.1s\n"),
            2
        );
        assert_eq!(ids("\nno tests collected in 0.4s\n"), 0);
        assert_eq!(
            ids("t.py::a\n\n=== warnings summary ===\nt.py:1\n  W: x\n\n-- Docs: https://x\n1/3 tests collected (2 deselected) in 0.1s\n"),
            1
        );
        let err = parse("t.py::a\nt.py::b\n\n3 tests collected in 0.1s\n").unwrap_err();
        assert!(
            err.to_string()
                .contains("pytest says it collected 3 but the output lists 2 node ids"),
            "{err}"
        );
        let err =
            parse("=== test session starts ===\ncollected 1 item\n\n<Dir p>\n  <Module t.py>\n")
                .unwrap_err();
        assert!(err.to_string().contains("tree output"), "{err}");
        let err = parse("tests/test_a.py: 3\n\n").unwrap_err();
        assert!(err.to_string().contains("-qq"), "{err}");
    }

    #[test]
    fn collect_only_output_with_summary() {
        let text = "tests/a.py::t1\ntests/a.py::t2[x]\r\n\n=== warnings summary ===\nsome warning text\n2 tests collected in 0.01s\n";
        let source = SourceFile::new("c", "c", text);
        let ids = parse_collected(&source).unwrap();
        let mut builder = IdSetBuilder::default();
        builder.add(source, ids).unwrap();
        let set = builder.build();
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            ["tests/a.py::t1", "tests/a.py::t2[x]"]
        );
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

    /// What a Windows runner hands the gate: CRLF everywhere (`core.autocrlf`, or pytest's
    /// output redirected by PowerShell), `\` in paths that git or a person wrote.
    #[test]
    fn windows_line_ends_and_separators() {
        let owned = |ids: Ids, source: &SourceFile| -> Vec<String> {
            match ids {
                Ids::Owned(ids) => ids,
                Ids::Spans(spans) => spans
                    .iter()
                    .map(|(start, len)| {
                        source.text[start as usize..(start + len) as usize].to_string()
                    })
                    .collect(),
            }
        };
        let source = SourceFile::new(
            "changed.txt",
            "changed.txt",
            "src\\billing\\proration.py\r\ntests/test_a.py\r\n\r\n",
        );
        assert_eq!(
            owned(parse_changed(&source).unwrap(), &source),
            ["src/billing/proration.py", "tests/test_a.py"]
        );
        for rooted in [
            "C:\\repo\\src\\a.py",
            "c:/repo/a.py",
            "\\\\server\\share\\a.py",
            "\\a.py",
        ] {
            let text = format!("tests/ok.py\r\n{rooted}\r\n");
            let err =
                parse_changed(&SourceFile::new("changed.txt", "changed.txt", text)).unwrap_err();
            let shown = err.to_string();
            assert!(
                shown.contains("changed.txt") && shown.contains("line 2"),
                "{rooted}: {shown}"
            );
        }

        let source = SourceFile::new(
            "collected.txt",
            "collected.txt",
            "tests/a.py::t1\r\ntests/a.py::t2[x]\r\n\r\n2 tests collected in 0.01s\r\n",
        );
        assert_eq!(
            owned(parse_collected(&source).unwrap(), &source),
            ["tests/a.py::t1", "tests/a.py::t2[x]"]
        );
        let source = SourceFile::new("skipped.txt", "skipped.txt", "tests/a.py::t1\r\n");
        assert_eq!(
            owned(parse_id_list(&source).unwrap(), &source),
            ["tests/a.py::t1"]
        );
        let source = SourceFile::new(
            "skipped.json",
            "skipped.json",
            "[\r\n  \"tests/a.py::t1\"\r\n]\r\n",
        );
        assert_eq!(
            owned(parse_id_list(&source).unwrap(), &source),
            ["tests/a.py::t1"]
        );
        // A Windows path where a node id belongs is refused, naming the line.
        let err = parse_id_list(&SourceFile::new(
            "skipped.txt",
            "skipped.txt",
            "tests/a.py::t1\r\nC:/repo/tests/a.py::t2\r\n",
        ))
        .unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
    }

    #[test]
    fn junk_lines_are_refused_not_dropped() {
        let err =
            parse_collected(&SourceFile::new("c", "c", "tests/a.py::t\nnot an id\n")).unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
    }
}
