//! Input files kept in memory with their text, so any stage can point into them.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::InputError;

/// A file the gate read, with the name shown to users and its full text.
#[derive(Debug)]
pub struct SourceFile {
    /// How the file is named in diagnostics and reports (relative where possible).
    pub name: String,
    pub path: PathBuf,
    pub text: String,
    /// Byte offset of every line start, built on first use.
    line_starts: std::sync::OnceLock<Vec<usize>>,
}

pub type Source = Arc<SourceFile>;

impl SourceFile {
    pub fn new(
        name: impl Into<String>,
        path: impl Into<PathBuf>,
        text: impl Into<String>,
    ) -> Source {
        Arc::new(SourceFile {
            name: name.into(),
            path: path.into(),
            text: text.into(),
            line_starts: std::sync::OnceLock::new(),
        })
    }

    /// Reads a UTF-8 text file; a leading byte-order mark is dropped (spans stay exact
    /// because the BOM is never part of a value).
    pub fn read(path: &Path, name: impl Into<String>) -> Result<Source, InputError> {
        let name = name.into();
        let bytes = std::fs::read(path).map_err(|e| InputError::io(&name, e))?;
        let text = decode_utf8(&name, bytes)?;
        Ok(SourceFile::new(name, path, text))
    }

    fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(self.text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        })
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let starts = self.line_starts();
        let offset = floor_char_boundary(&self.text, offset.min(self.text.len()));
        let line = starts.partition_point(|&start| start <= offset);
        let line_start = starts[line - 1];
        (line, self.text[line_start..offset].chars().count() + 1)
    }

    /// Whether the line holding `offset` is short enough to show in a snippet: a giant
    /// line (minified JSON, hostile input) would flood the terminal, so diagnostics
    /// keep the location and drop the snippet.
    pub fn snippet_fits(&self, offset: usize) -> bool {
        let bytes = self.text.as_bytes();
        let offset = offset.min(bytes.len());
        let start = bytes[..offset]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        let end = bytes[offset..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(bytes.len(), |i| offset + i);
        end - start <= MAX_SNIPPET_LINE
    }

    /// Byte offset of a 1-based line and 1-based character column, clamped to the text.
    pub fn offset_of(&self, line: usize, column: usize) -> usize {
        offset_of(&self.text, line, column)
    }
}

/// Diagnostics read snippets through the line index, so rendering one near the end of a
/// large file does not rescan it from the start, and sources are shared, not copied.
impl miette::SourceCode for SourceFile {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let starts = self.line_starts();
        let line_of = |offset: usize| starts.partition_point(|&s| s <= offset).saturating_sub(1);
        let first = line_of(span.offset()).saturating_sub(context_lines_before);
        let last =
            (line_of(span.offset() + span.len()) + context_lines_after).min(starts.len() - 1);
        let from = starts[first];
        let to = starts.get(last + 1).copied().unwrap_or(self.text.len());
        if span.offset() < from || span.offset() + span.len() > self.text.len() {
            return Err(miette::MietteError::OutOfBounds);
        }
        let local = miette::SourceSpan::new((span.offset() - from).into(), span.len());
        let inner =
            self.text[from..to].read_span(&local, context_lines_before, context_lines_after)?;
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            miette::SourceSpan::new((inner.span().offset() + from).into(), inner.span().len()),
            inner.line() + first,
            inner.column(),
            inner.line_count(),
        )))
    }
}

/// Decodes file bytes as UTF-8, naming the file and the place of the first bad byte.
pub fn decode_utf8(name: &str, mut bytes: Vec<u8>) -> Result<String, InputError> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        // Replace the BOM by spaces of equal length so byte offsets into the file stay true.
        bytes[..3].copy_from_slice(b"   ");
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let valid = String::from_utf8_lossy(&e.as_bytes()[..at]).into_owned();
        let (line, column) = line_col(&valid, at);
        InputError::new(
            name,
            format!("is not valid UTF-8 (invalid byte at line {line}, column {column})"),
        )
    })
}

pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = floor_char_boundary(text, offset.min(text.len()));
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..offset].chars().count() + 1;
    (line, column)
}

pub fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let mut start = 0;
    for _ in 1..line.max(1) {
        match text[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return text.len(),
        }
    }
    let rest = &text[start..];
    let line_end = rest.find('\n').unwrap_or(rest.len());
    rest[..line_end]
        .char_indices()
        .nth(column.saturating_sub(1))
        .map_or(start + line_end, |(i, _)| start + i)
}

/// Converts a character offset (as Rhai and YAML parsers count) into a byte offset.
pub fn char_to_byte(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(i, _)| i)
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// Longest line (in bytes) shown in a source snippet.
pub const MAX_SNIPPET_LINE: usize = 400;

/// A byte range into one source file.
pub type Span = Range<usize>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters_not_bytes() {
        let text = "a: \"é\"\nb: 'ü' x\n";
        let x = text.find('x').unwrap();
        assert_eq!(line_col(text, x), (2, 8));
        assert_eq!(offset_of(text, 2, 8), x);
    }

    #[test]
    fn indexed_line_col_matches_the_scan() {
        let text = "ab\n\nçd\r\nxyz";
        let file = SourceFile::new("f", "f", text);
        for offset in 0..=text.len() {
            assert_eq!(
                file.line_col(offset),
                line_col(text, offset),
                "offset {offset}"
            );
        }
    }

    #[test]
    fn char_offsets_convert_to_byte_offsets() {
        assert_eq!(char_to_byte("éé-x", 3), "éé-".len());
        assert_eq!(char_to_byte("ab", 9), 2);
    }

    #[test]
    fn bom_keeps_offsets() {
        let text = decode_utf8("f", b"\xEF\xBB\xBF{}".to_vec()).unwrap();
        assert_eq!(text.find('{'), Some(3));
    }

    #[test]
    fn invalid_utf8_names_the_place() {
        let err = decode_utf8("ledger.json", b"{\n \"a\": \xff}".to_vec()).unwrap_err();
        assert!(err.to_string().contains("line 2, column 7"), "{err}");
    }
}
