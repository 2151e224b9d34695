//! Input files kept in memory with their text, so any stage can point into them.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::GateError;

/// A file the gate read, with the name shown to users and its full text.
#[derive(Debug)]
pub struct SourceFile {
    /// How the file is named in diagnostics and reports (relative where possible).
    pub name: String,
    pub path: PathBuf,
    pub text: String,
    /// Byte offset of every line start, built on first use.
    line_starts: std::sync::OnceLock<Vec<usize>>,
    /// Whether the file began with a UTF-8 byte-order mark (now three spaces in `text`).
    pub had_bom: bool,
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
            had_bom: false,
        })
    }

    /// Reads a UTF-8 text file; a leading byte-order mark is dropped (spans stay exact
    /// because the BOM is never part of a value).
    ///
    /// Only a regular file is read: a device (`/dev/zero`), a FIFO or a socket is refused
    /// before a byte is read (a FIFO is opened without blocking), and so is a symbolic
    /// link from inside a repository to a file outside it.
    pub fn read(path: &Path, name: impl Into<String>) -> Result<Source, GateError> {
        let name = name.into();
        refuse_link_out_of_repository(path, &name)?;
        let bytes = read_bytes(path, &name)?;
        SourceFile::decoded(name, path, bytes)
    }

    /// A file's bytes as text (see [`decode_utf8`]), remembering a byte-order mark.
    pub fn decoded(
        name: impl Into<String>,
        path: impl Into<PathBuf>,
        bytes: Vec<u8>,
    ) -> Result<Source, GateError> {
        let name = name.into();
        let had_bom = bytes.starts_with(BOM);
        let text = decode_utf8(&name, bytes)?;
        Ok(Arc::new(SourceFile {
            name,
            path: path.into(),
            text,
            line_starts: std::sync::OnceLock::new(),
            had_bom,
        }))
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

    /// Whether the line holding `offset` is short enough to show in a snippet (see
    /// [`SourceFile::snippet_fits_span`]).
    pub fn snippet_fits(&self, offset: usize) -> bool {
        self.snippet_fits_span(&(offset..offset))
    }

    /// Whether a snippet of `span` stays small: every line it shows (the span's own and
    /// one line of context either side) is at most [`MAX_SNIPPET_LINE`] bytes, and there
    /// are at most [`MAX_SNIPPET_LINES`] of them. A giant line (minified JSON, a huge
    /// value next to the one reported, hostile input) or a label over a whole large
    /// document would flood the terminal, so diagnostics keep the location and drop
    /// the snippet.
    pub fn snippet_fits_span(&self, span: &Span) -> bool {
        let starts = self.line_starts();
        let len = self.text.len();
        let line_of = |offset: usize| starts.partition_point(|&s| s <= offset.min(len)) - 1;
        let first = line_of(span.start).saturating_sub(1);
        let last = (line_of(span.end.max(span.start)) + 1).min(starts.len() - 1);
        last - first < MAX_SNIPPET_LINES
            && (first..=last).all(|line| {
                let end = starts.get(line + 1).map_or(len, |next| next - 1);
                end - starts[line] <= MAX_SNIPPET_LINE
            })
    }

    /// Byte offset of a 1-based line and 1-based character column, clamped to the text.
    pub fn offset_of(&self, line: usize, column: usize) -> usize {
        offset_of(&self.text, line, column)
    }

    /// Where in this file serde_json stopped with `error` (`None` for an error of no
    /// position, such as an I/O error).
    pub fn json_error_span(&self, error: &serde_json::Error) -> Option<std::ops::Range<usize>> {
        (error.line() > 0).then(|| {
            let at = self.offset_of(error.line(), error.column().max(1));
            at..at
        })
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
        let start = inner.span().offset() + from;
        // miette counts columns in bytes and takes a lone `\r` for a line break; the
        // header `[file:line:column]` must agree with every other report, which count
        // characters and break lines at `\n` only.
        let (line, column) = self.line_col(start);
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            miette::SourceSpan::new(start.into(), inner.span().len()),
            line - 1,
            column - 1,
            inner.line_count(),
        )))
    }
}

/// Decodes file bytes as UTF-8, naming the file and the place of the first bad byte.
/// A file's bytes. A large one is read in two halves on two threads: most of the time of
/// reading a 130 MB run record goes to faulting in the pages it lands in, and the kernel
/// does that on whichever core asks.
fn read_bytes(path: &Path, name: &str) -> Result<Vec<u8>, GateError> {
    use std::io::Read;
    let io = |e| GateError::io(name, e);
    let mut file = open_regular(path, name)?;
    let size = file.metadata().map(|m| m.len() as usize).unwrap_or(0);
    #[cfg(unix)]
    if size >= 8 << 20 {
        if let Some(mut bytes) = read_halves(&file, size) {
            // Whatever the file gained since its size was taken.
            file.read_to_end(&mut bytes).map_err(io)?;
            return Ok(bytes);
        }
    }
    let mut bytes = Vec::with_capacity(size + 1);
    file.read_to_end(&mut bytes).map_err(io)?;
    Ok(bytes)
}

/// Opens a file for reading, refusing anything but a regular file (after links).
fn open_regular(path: &Path, name: &str) -> Result<std::fs::File, GateError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A FIFO would block the open until a writer came.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| GateError::io(name, e))?;
    let kind = file
        .metadata()
        .map_err(|e| GateError::io(name, e))?
        .file_type();
    // `/dev/null` reads as an empty file (`--changed /dev/null`: nothing changed).
    if kind.is_file() || path == Path::new("/dev/null") {
        return Ok(file);
    }
    Err(GateError::new(
        name,
        format!("is not a regular file but {}", kind_of(kind)),
    )
    .with_help("the gate reads its inputs from regular files in the repository: commit the file itself"))
}

fn kind_of(kind: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

/// A symbolic link inside a repository that leads out of it (`gate/freeze_ledger.json ->
/// /etc/passwd`): a patch could make the gate read any file of the machine it runs on.
fn refuse_link_out_of_repository(path: &Path, name: &str) -> Result<(), GateError> {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return Ok(());
    }
    let Some(repository) = path
        .parent()
        .and_then(|dir| dir.ancestors().find(|at| at.join(".git").exists()))
        .and_then(|repository| repository.canonicalize().ok())
    else {
        return Ok(());
    };
    match path.canonicalize() {
        Ok(target) if target.starts_with(&repository) => Ok(()),
        Ok(target) => Err(GateError::new(
            name,
            format!(
                "is a symbolic link out of the repository (to {})",
                target.display()
            ),
        )
        .with_help(
            "commit the file itself: the gate reads no input from outside the repository it judges",
        )),
        // A dangling link: the open says so.
        Err(_) => Ok(()),
    }
}

/// `size` bytes from the start of `file`, each half read by its own thread; `None` when
/// the file turned out shorter, for the caller to read it the ordinary way.
#[cfg(unix)]
fn read_halves(file: &std::fs::File, size: usize) -> Option<Vec<u8>> {
    use std::io::Seek;
    use std::os::unix::fs::FileExt;
    // Zeroed by the allocator's fresh mapping, so no page is touched before its read.
    let mut bytes = vec![0u8; size];
    let middle = size / 2;
    let (first, second) = bytes.split_at_mut(middle);
    let read = std::thread::scope(|scope| {
        let second = scope.spawn(|| file.read_exact_at(second, middle as u64));
        let first = file.read_exact_at(first, 0);
        first.is_ok() && second.join().is_ok_and(|r| r.is_ok())
    });
    let mut file = file;
    (read && file.seek(std::io::SeekFrom::Start(size as u64)).is_ok()).then_some(bytes)
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

fn decode_utf8(name: &str, mut bytes: Vec<u8>) -> Result<String, GateError> {
    if bytes.starts_with(BOM) {
        // Replace the BOM by spaces of equal length so byte offsets into the file stay true.
        bytes[..3].copy_from_slice(b"   ");
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let valid = String::from_utf8_lossy(&e.as_bytes()[..at]).into_owned();
        let (line, column) = line_col(&valid, at);
        GateError::new(
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

/// Most lines a snippet shows, context included.
pub const MAX_SNIPPET_LINES: usize = 60;

/// A byte range into one source file.
pub type Span = Range<usize>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_file_reads_whole_in_halves() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.txt");
        // Past the size read in halves, with the halves' seam inside a multi-byte char.
        let text: String = (0..(9 << 20) / 10).map(|i| format!("{i:08}é\n")).collect();
        std::fs::write(&path, &text).unwrap();
        let source = SourceFile::read(&path, "big.txt").unwrap();
        assert!(source.text.len() > 8 << 20);
        assert_eq!(source.text, text);
    }

    #[test]
    fn snippet_headers_count_columns_in_characters() {
        let text = "a\n  [\"zoë\", \"π\", \"b\"]\n";
        let file = SourceFile::new("f.json", "f.json", text);
        let at = text.find("\"b\"").unwrap();
        assert_eq!(file.line_col(at), (2, 16));
        let err = GateError::new("f.json", "bad").at(&file, at..at + 3, "here");
        let rendered = crate::report::human::render_error(&err, false);
        assert!(rendered.contains("[f.json:2:16]"), "{rendered}");
        // A lone `\r` is not a line break to the line index, nor to the header.
        let text = "a: 1\r  b: \"\"\n";
        let file = SourceFile::new("f.yaml", "f.yaml", text);
        let at = text.find("\"\"").unwrap();
        assert_eq!(file.line_col(at), (1, 11));
        let err = GateError::new("f.yaml", "bad").at(&file, at..at + 2, "here");
        let rendered = crate::report::human::render_error(&err, false);
        assert!(rendered.contains("[f.yaml:1:11]"), "{rendered}");
    }

    #[test]
    fn snippets_next_to_a_giant_line_or_over_many_lines_are_dropped() {
        let big = "x".repeat(MAX_SNIPPET_LINE + 1);
        let text = format!("a\nb\n{big}\nc\nd\né\n");
        let file = SourceFile::new("f", "f", text.as_str());
        let at = |s: &str| text.find(s).unwrap();
        assert!(file.snippet_fits(at("a")));
        // The giant line is the context line after `b` and before `c`.
        assert!(!file.snippet_fits(at("b")));
        assert!(!file.snippet_fits(at("c")));
        assert!(file.snippet_fits(at("d")));
        assert!(file.snippet_fits_span(&(at("d")..at("é") + 2)));
        assert!(!file.snippet_fits_span(&(at("a")..at("d"))));
        let long = "l\n".repeat(2 * MAX_SNIPPET_LINES);
        let file = SourceFile::new("f", "f", long.as_str());
        assert!(file.snippet_fits_span(&(0..20)));
        assert!(!file.snippet_fits_span(&(0..long.len())));
        assert!(SourceFile::new("f", "f", "").snippet_fits_span(&(0..0)));
    }

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
