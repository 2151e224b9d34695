//! Sets of pytest node ids and repository paths, and the text formats they arrive in.

use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashSet};

use crate::error::InputError;
use crate::source::Source;

/// An ordered, deduplicated set of ids, shared without copying (scripts get a handle).
///
/// The ids live in one text buffer, usually the input file's own text moved in whole,
/// and the set holds only byte ranges into it: a million collected ids cost the file
/// plus five bytes an id (and the hash table), with no allocation per id.
#[derive(Debug, Clone, Default)]
pub struct IdSet(Arc<IdSetInner>);

#[derive(Debug, Default)]
struct IdSetInner {
    text: IdText,
    /// Where each distinct id is in `text`, in first-seen order.
    spans: Spans,
    /// Indexes into `spans`, hashed by the id's text.
    table: HashTable<u32>,
    /// The suggestions [`IdSet::nearest`] made, by the id asked about.
    suggested: std::sync::Mutex<rustc_hash::FxHashMap<String, Vec<String>>>,
}

/// How many misspelt ids a run gets suggestions for: each searches the whole set, and
/// the first few are what a reader acts on.
pub const SUGGESTIONS: usize = 20;

/// Above this many ids a search costs more than the rest of a check (tens of
/// milliseconds a pass): the hint is left out, the violation stays.
pub const SUGGEST_UP_TO: usize = 250_000;

/// Byte ranges `(start, len)` into a text, five bytes each: a start, and a length byte
/// that sends the rare length over 254 to a side table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spans {
    starts: Vec<u32>,
    lens: Vec<u8>,
    /// Lengths of [`LONG`] bytes or more, by position.
    long: rustc_hash::FxHashMap<u32, u32>,
}

/// The length byte of a span whose length is in [`Spans::long`].
const LONG: u8 = u8::MAX;

impl Spans {
    pub fn with_capacity(n: usize) -> Spans {
        Spans {
            starts: Vec::with_capacity(n),
            lens: Vec::with_capacity(n),
            long: Default::default(),
        }
    }

    pub fn push(&mut self, start: u32, len: u32) {
        let at = self.starts.len() as u32;
        self.starts.push(start);
        let len = self.len_byte(at, len);
        self.lens.push(len);
    }

    fn len_byte(&mut self, at: u32, len: u32) -> u8 {
        match u8::try_from(len) {
            Ok(len) if len < LONG => len,
            _ => {
                self.long.insert(at, len);
                LONG
            }
        }
    }

    pub fn reserve(&mut self, n: usize) {
        self.starts.reserve(n);
        self.lens.reserve(n);
    }

    pub fn len(&self) -> usize {
        self.starts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    pub fn get(&self, at: usize) -> (u32, u32) {
        let len = match self.lens[at] {
            LONG => self.long[&(at as u32)],
            len => u32::from(len),
        };
        (self.starts[at], len)
    }

    /// Overwrites the span at `at` (below `len()`).
    fn set(&mut self, at: usize, start: u32, len: u32) {
        if self.lens[at] == LONG {
            self.long.remove(&(at as u32));
        }
        self.starts[at] = start;
        self.lens[at] = self.len_byte(at as u32, len);
    }

    fn truncate(&mut self, len: usize) {
        self.starts.truncate(len);
        self.lens.truncate(len);
        self.long.retain(|&at, _| (at as usize) < len);
    }

    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..self.len()).map(|at| self.get(at))
    }
}

/// The text a set's spans point into: an input's text as it was read (moved in, or
/// shared when something else holds it too), then the ids added one by one.
#[derive(Debug, Default)]
struct IdText {
    read: Option<Source>,
    added: String,
}

impl IdText {
    fn read_len(&self) -> usize {
        self.read.as_ref().map_or(0, |source| source.text.len())
    }

    fn len(&self) -> usize {
        self.read_len() + self.added.len()
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn get(&self, start: u32, len: u32) -> &str {
        let (start, end) = (start as usize, (start + len) as usize);
        match &self.read {
            Some(read) if start < read.text.len() => &read.text[start..end],
            _ => {
                let base = self.read_len();
                &self.added[start - base..end - base]
            }
        }
    }

    /// Appends an id; says where it starts.
    fn push(&mut self, id: &str) -> u32 {
        let start = self.len() as u32;
        self.added.push_str(id);
        start
    }

    fn truncate(&mut self, start: u32) {
        let base = self.read_len();
        self.added.truncate(start as usize - base);
    }
}

fn hash_str(id: &str) -> u64 {
    hash_bytes(id.as_bytes())
}

fn hash_bytes(id: &[u8]) -> u64 {
    FxBuildHasher.hash_one(id)
}

impl IdSetInner {
    fn id(&self, index: u32) -> &str {
        let (start, len) = self.spans.get(index as usize);
        self.text.get(start, len)
    }

    fn find(&self, id: &str) -> Option<u32> {
        self.table
            .find(hash_str(id), |&i| self.id(i) == id)
            .copied()
    }

    /// Hashes the id at `text[start..start + len]` under `index` (its place in `spans`)
    /// unless an equal id is already there; says whether it was new. One probe.
    fn index_span(&mut self, start: u32, len: u32, index: u32) -> bool {
        let (text, spans) = (&self.text, &self.spans);
        let id = text.get(start, len).as_bytes();
        let at = |i: u32| {
            let (s, l) = spans.get(i as usize);
            text.get(s, l).as_bytes()
        };
        match self
            .table
            .entry(hash_bytes(id), |&i| at(i) == id, |&i| hash_bytes(at(i)))
        {
            hashbrown::hash_table::Entry::Occupied(_) => false,
            hashbrown::hash_table::Entry::Vacant(slot) => {
                slot.insert(index);
                true
            }
        }
    }
}

/// Ids as a parser found them: byte ranges into the source text (zero-copy) or owned
/// strings (JSON arrays, normalised paths).
#[derive(Debug)]
pub enum Ids {
    Spans(Spans),
    Owned(Vec<String>),
}

/// Builds an [`IdSet`] from one or more inputs (shards merge).
#[derive(Default)]
pub struct IdSetBuilder {
    inner: IdSetInner,
}

impl IdSetBuilder {
    /// Adds a parsed input; the first input's text is moved in, not copied.
    pub fn add(&mut self, source: Source, ids: Ids) -> Result<(), InputError> {
        if source.text.len() > u32::MAX as usize {
            return Err(InputError::new(&source.name, "is larger than 4 GiB"));
        }
        match ids {
            Ids::Owned(ids) => ids.iter().for_each(|id| self.push(id)),
            Ids::Spans(spans) if self.inner.text.is_empty() => {
                self.inner.text = match Arc::try_unwrap(source) {
                    Ok(file) => IdText {
                        read: None,
                        added: file.text,
                    },
                    Err(shared) => IdText {
                        read: Some(shared),
                        added: String::new(),
                    },
                };
                // The parser's spans become the set's: duplicates are squeezed out in
                // place, so a million spans are never held twice.
                self.inner.table.reserve(spans.len(), |_| 0);
                self.inner.spans = spans;
                let mut kept = 0;
                for read in 0..self.inner.spans.len() {
                    let (start, len) = self.inner.spans.get(read);
                    if self.inner.index_span(start, len, kept as u32) {
                        self.inner.spans.set(kept, start, len);
                        kept += 1;
                    }
                }
                self.inner.spans.truncate(kept);
            }
            Ids::Spans(spans) => {
                for (start, len) in spans.iter() {
                    self.push(&source.text[start as usize..(start + len) as usize]);
                }
            }
        }
        Ok(())
    }

    /// Adds one id, copying it into the set's text (taken back if it was there already).
    pub fn push(&mut self, id: &str) {
        let inner = &mut self.inner;
        let start = inner.text.push(id);
        let index = inner.spans.len() as u32;
        if inner.index_span(start, id.len() as u32, index) {
            inner.spans.push(start, id.len() as u32);
        } else {
            inner.text.truncate(start);
        }
    }

    pub fn build(self) -> IdSet {
        IdSet(Arc::new(self.inner))
    }

    /// Adds one id (see [`IdSetBuilder::push`]) and says where it is in first-seen order.
    /// One hash and one probe.
    pub fn insert(&mut self, id: &str) -> usize {
        let inner = &mut self.inner;
        let (text, spans) = (&inner.text, &inner.spans);
        let at = |i: u32| {
            let (s, l) = spans.get(i as usize);
            text.get(s, l).as_bytes()
        };
        let bytes = id.as_bytes();
        match inner.table.entry(
            hash_bytes(bytes),
            |&i| at(i) == bytes,
            |&i| hash_bytes(at(i)),
        ) {
            hashbrown::hash_table::Entry::Occupied(found) => *found.get() as usize,
            hashbrown::hash_table::Entry::Vacant(slot) => {
                let index = spans.len() as u32;
                slot.insert(index);
                let start = inner.text.push(id);
                inner.spans.push(start, id.len() as u32);
                index as usize
            }
        }
    }

    /// Room for `ids` more ids of `bytes` bytes in all.
    pub fn reserve(&mut self, ids: usize, bytes: usize) {
        let inner = &mut self.inner;
        inner.text.added.reserve(bytes);
        inner.spans.reserve(ids);
        let (text, spans) = (&inner.text, &inner.spans);
        inner.table.reserve(ids, |&i| {
            let (s, l) = spans.get(i as usize);
            hash_bytes(text.get(s, l).as_bytes())
        });
    }

    /// The id at a place below [`IdSetBuilder::len`].
    pub fn get(&self, at: usize) -> &str {
        self.inner.id(at as u32)
    }

    /// How many distinct ids so far.
    pub fn len(&self) -> usize {
        self.inner.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.spans.is_empty()
    }

    /// The id's place in first-seen order, if added.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.inner.find(id).map(|i| i as usize)
    }
}

impl<S: AsRef<str>> FromIterator<S> for IdSet {
    fn from_iter<I: IntoIterator<Item = S>>(items: I) -> IdSet {
        let mut builder = IdSetBuilder::default();
        for item in items {
            builder.push(item.as_ref());
        }
        builder.build()
    }
}

impl IdSet {
    pub fn contains(&self, id: &str) -> bool {
        self.0.find(id).is_some()
    }

    pub fn len(&self) -> usize {
        self.0.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.spans.is_empty()
    }

    /// The id's place in first-seen order.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.0.find(id).map(|i| i as usize)
    }

    /// Whether the set holds the id, the function it is a case of, or a class it is in:
    /// how a frozen id covers what is under it.
    pub fn covers(&self, id: &str) -> bool {
        if self.contains(id) {
            return true;
        }
        let head = strip_params(id);
        if head.len() < id.len() && self.contains(head) {
            return true;
        }
        let mut end = head.len();
        while let Some(at) = head[..end].rfind("::") {
            if head[..at].contains("::") && self.contains(&head[..at]) {
                return true;
            }
            end = at;
        }
        false
    }

    /// The id at a position in first-seen order.
    pub fn get(&self, index: usize) -> Option<&str> {
        (index < self.len()).then(|| self.0.id(index as u32))
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.len() as u32).map(|i| self.0.id(i))
    }

    /// Up to `n` ids closest to `id` (a misspelt one), nearest first: among the ids of
    /// its file, else of the files nearest its file in its folder, else in the folders
    /// nearest its folder; none when nothing is close. Each search reads the whole set,
    /// so a run gets them for its first [`SUGGESTIONS`] distinct ids (an id asked again
    /// gets the same answer).
    pub fn nearest(&self, id: &str, n: usize) -> Vec<String> {
        let mut asked = self
            .0
            .suggested
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(found) = asked.get(id) {
            return found.iter().take(n).cloned().collect();
        }
        if asked.len() >= SUGGESTIONS || self.len() > SUGGEST_UP_TO {
            return Vec::new();
        }
        let found: Vec<String> = self
            .search_nearest(id)
            .into_iter()
            .map(str::to_string)
            .collect();
        asked.insert(id.to_string(), found.clone());
        found.into_iter().take(n).collect()
    }

    fn search_nearest(&self, id: &str) -> Vec<&str> {
        fn dir_of(file: &str) -> &str {
            file.rsplit_once('/').map_or("", |(dir, _)| dir)
        }
        // Within a third of what may differ: the name after the file, or the file.
        fn close(a: &str, b: &str, within: usize) -> Option<usize> {
            let bound = (within / 3).max(2);
            // The length difference is a lower bound of the distance: skip the far ones.
            if a.len().abs_diff(b.len()) > bound {
                return None;
            }
            let distance = strsim::levenshtein(a, b);
            (distance <= bound).then_some(distance)
        }
        fn nearest_of<'a>(names: FxHashSet<&'a str>, to: &str) -> FxHashSet<&'a str> {
            let near: Vec<(usize, &str)> = names
                .into_iter()
                .filter_map(|name| close(name, to, to.len()).map(|d| (d, name)))
                .collect();
            let best = near.iter().map(|(d, _)| *d).min();
            near.into_iter()
                .filter(|(d, _)| Some(*d) == best)
                .map(|(_, name)| name)
                .collect()
        }
        let file = file_of(id);
        let dir = dir_of(file);
        // One pass: is the file there, and which files share its folder.
        let (mut same_file, mut in_dir) = (false, FxHashSet::default());
        for candidate in self.iter() {
            let f = file_of(candidate);
            if f == file {
                same_file = true;
                break;
            }
            if dir_of(f) == dir {
                in_dir.insert(f);
            }
        }
        // Its folder exists: the nearest files are there, or nowhere.
        let folder_exists = !in_dir.is_empty();
        let mut files: FxHashSet<&str> = match same_file {
            true => std::iter::once(file).collect(),
            false => nearest_of(in_dir, file),
        };
        if files.is_empty() && !folder_exists {
            let dirs: FxHashSet<&str> = self.iter().map(|c| dir_of(file_of(c))).collect();
            let near_dirs = nearest_of(dirs, dir);
            let in_near: FxHashSet<&str> = self
                .iter()
                .map(file_of)
                .filter(|f| near_dirs.contains(dir_of(f)))
                .collect();
            files = nearest_of(in_near, file);
        }
        if files.is_empty() {
            return Vec::new();
        }
        let name_len = id.len() - file.len();
        let mut found: Vec<(usize, &str)> = self
            .iter()
            .filter(|candidate| files.contains(file_of(candidate)))
            .filter_map(|candidate| close(candidate, id, name_len).map(|d| (d, candidate)))
            .collect();
        found.sort_unstable();
        found.into_iter().map(|(_, c)| c).collect()
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
    ascii_node_id(s.as_bytes()).unwrap_or_else(|| is_node_id_chars(s))
}

/// Byte classes for [`ascii_node_id`].
const BAD: u8 = 0;
/// Allowed in a file path and in a name: `[A-Za-z0-9_.-]`.
const NAME: u8 = 1;
/// Allowed in a file path only: other printable ASCII but `\\`, `:` and `[`.
const FILE: u8 = 2;
const COLON: u8 = 3;
const BRACKET: u8 = 4;
const NON_ASCII: u8 = 5;
const CLASSES: [u8; 256] = {
    let mut table = [NON_ASCII; 256];
    let mut c = 0;
    while c < 128 {
        let b = c as u8;
        table[c] = if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-' {
            NAME
        } else if b == b':' {
            COLON
        } else if b == b'[' {
            BRACKET
        } else if b > b' ' && b != b'\\' && b != 127 {
            FILE
        } else {
            BAD
        };
        c += 1;
    }
    table
};

/// The same grammar over bytes in one pass with a class table, for the all-ASCII id (it
/// runs once per collected id, a million in a monorepo). `None` when it meets a
/// non-ASCII byte before the parameters: then the char-wise check decides.
fn ascii_node_id(b: &[u8]) -> Option<bool> {
    let class = |i: usize| b.get(i).map_or(BAD, |&c| CLASSES[c as usize]);
    if b.first().is_none_or(|&c| c == b'/') {
        return Some(false);
    }
    // The file part, up to the first `::`.
    let mut i = 0;
    loop {
        match class(i) {
            NAME | FILE => i += 1,
            COLON if class(i + 1) == COLON => break,
            COLON => i += 1,
            NON_ASCII => return None,
            _ => return Some(false), // the end, a bracket or a space before any `::`
        }
    }
    if i == 0 {
        return Some(false);
    }
    // One or more names, each after a `::`, then optional `[params]` (any text).
    loop {
        i += 2;
        if class(i) != NAME || b[i].is_ascii_digit() {
            return match class(i) {
                NON_ASCII => None,
                _ => Some(false),
            };
        }
        while class(i) == NAME {
            i += 1;
        }
        match class(i) {
            _ if i == b.len() => return Some(true),
            COLON if class(i + 1) == COLON => {}
            BRACKET => return Some(b.len() - i >= 2 && b[b.len() - 1] == b']'),
            NON_ASCII => return None,
            _ => return Some(false),
        }
    }
}

fn is_node_id_chars(s: &str) -> bool {
    let (head, params) = match s.find('[') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    if !params.is_empty() && (params.len() < 2 || !params.ends_with(']')) {
        return false;
    }
    // Runs once per collected id (a million in a monorepo): one pass, no allocation.
    let mut parts = head.split("::");
    let file = parts.next().unwrap_or("");
    let valid_file = !file.is_empty()
        && !file.starts_with('/')
        && !file
            .chars()
            .any(|c| c.is_whitespace() || c == '\\' || c.is_control());
    let valid_name = |n: &str| {
        !n.is_empty()
            && !n.starts_with(|c: char| c.is_ascii_digit())
            && n.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '-')
    };
    let mut names = 0;
    for name in parts {
        if !valid_name(name) {
            return false;
        }
        names += 1;
    }
    valid_file && names > 0
}

pub use crate::paths::normalize as normalize_path;

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
    let ends = memchr::memchr_iter(b'\n', text.as_bytes()).chain(std::iter::once(text.len()));
    let mut start = 0;
    ends.enumerate().map(move |(i, end)| {
        let line = &text[start..end];
        let line_start = start;
        start = end + 1;
        (i + 1, line_start, line.strip_suffix('\r').unwrap_or(line))
    })
}

/// A JSON array of strings, if the text is one.
fn json_array(source: &Source) -> Option<Result<Vec<String>, InputError>> {
    if !source.text.trim_start().starts_with('[') {
        return None;
    }
    Some(
        serde_json::from_str::<Vec<String>>(&source.text).map_err(|e| {
            InputError::new(&source.name, "is not a JSON array of strings").at(
                source,
                source.json_error_span(&e).unwrap_or(0..0),
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

/// Pytest collection: `--collect-only -q` output, a JSON array, or one id a line. The
/// `-q` output is read as pytest writes it: the ids, a blank line, then its sections
/// (warnings summary, errors, short test summary) and the count line (`N tests
/// collected in …`, `no tests collected`, `no tests ran`). A collection error anywhere
/// is an error, and so is a count that differs from the ids read: never a smaller set.
pub fn parse_collected(source: &Source) -> Result<Ids, InputError> {
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
            return Err(InputError::new(
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

fn not_quiet_output(source: &Source, start: usize, line: &str, kind: &str) -> InputError {
    InputError::new(
        &source.name,
        format!("is {kind}, not a list of node ids"),
    )
    .at(source, start..start + line.len(), "not a node id")
    .with_help("write the collection with `pytest --collect-only -q` (one node id a line), or give a JSON array of node ids")
}

/// Where `trimmed`, part of a `(number, start, text)` line of `source`, is in the text
/// when it is a node id; else the error naming the line.
fn node_id_span(
    source: &Source,
    (line_no, start, line): (usize, usize, &str),
    trimmed: &str,
) -> Result<(u32, u32), InputError> {
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
pub fn parse_changed(source: &Source) -> Result<Ids, InputError> {
    let mut spans = Spans::default();
    let mut canonical = true;
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
                normalize_path(&source.text[start as usize..(start + len) as usize])
            })
            .collect(),
    ))
}

/// Applied skips: a JSON array of node ids or one id a line.
pub fn parse_id_list(source: &Source) -> Result<Ids, InputError> {
    if let Some(ids) = json_array(source) {
        return require_node_ids(source, ids?).map(Ids::Owned);
    }
    let mut ids = Spans::default();
    for line in lines(&source.text) {
        let trimmed = line.2.trim();
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
    fn ascii_and_unicode_node_id_checks_agree() {
        for id in [
            "tests/a.py::t",
            "tests/a.py::C::t[x::y]",
            "a.py::t[]",
            "a.py::t[",
            "a.py::",
            "::t",
            "/a.py::t",
            "a b.py::t",
            "a.py::1t",
            "a.py::t-1.x",
            "a.py",
            "a.py:::t",
            "a.py::t::",
            "a\\b.py::t",
            "a.py::t]",
            "a.py::t[x]y]",
            ":a.py::t",
            "c:a.py::t",
            "a.py::t:x",
            "a.py::[x]",
            "a.py[x]::t",
            "a.py::t[",
            "a.py::t\x7f",
            "a.py::t\tx",
            "a.py::C::[x]",
            "a.py::C:::t",
            ":",
            "::",
            "a::b",
        ] {
            assert_eq!(
                ascii_node_id(id.as_bytes()),
                Some(is_node_id_chars(id)),
                "{id}"
            );
        }
        // And on many strings over the alphabet that matters (a small LCG, no dependency).
        let alphabet = [
            "a", "Z", "1", "_", ".", "-", ":", "::", "[", "]", "/", " ", "\\", "é", "\t",
        ];
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut valid = 0;
        for _ in 0..50_000 {
            let mut id = String::new();
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            for _ in 0..(state >> 60) {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                id.push_str(alphabet[(state >> 33) as usize % alphabet.len()]);
            }
            if let Some(fast) = ascii_node_id(id.as_bytes()) {
                assert_eq!(fast, is_node_id_chars(&id), "{id:?}");
                valid += usize::from(fast);
            }
        }
        assert!(valid > 100, "the strings include node ids: {valid}");
        // Non-ASCII text inside the parameters needs no char-wise pass; anywhere else it does.
        assert_eq!(ascii_node_id("a.py::t[é]".as_bytes()), Some(true));
        assert_eq!(ascii_node_id("a.py::té".as_bytes()), None);
        assert!(is_node_id("a.py::t[é]") && is_node_id_chars("a.py::t[é]"));
        assert!(is_node_id("tests/ünï.py::tést_ü"));
        assert!(!is_node_id("tests/ünï.py::1ü"));
    }

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
    fn nearest_ids_prefer_the_same_file_then_the_nearest_file() {
        let set: IdSet = [
            "a/t.py::test_one",
            "a/t.py::test_two",
            "a/u.py::test_one",
            "b/v.py::test_x",
        ]
        .into_iter()
        .collect();
        assert_eq!(set.nearest("a/t.py::test_onr", 1), ["a/t.py::test_one"]);
        assert_eq!(set.nearest("a/tt.py::test_one", 3), ["a/t.py::test_one"]);
        assert!(set.nearest("z/q.py::something_else", 3).is_empty());
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
    fn id_sets_dedup_merge_shards_and_keep_first_seen_order() {
        let mut builder = IdSetBuilder::default();
        let first = SourceFile::new("a", "a", "t.py::b\nt.py::a\nt.py::b\n");
        let ids = parse_collected(&first).unwrap();
        builder.add(first, ids).unwrap();
        let second = SourceFile::new("b", "b", "t.py::c\nt.py::a\n");
        let ids = parse_collected(&second).unwrap();
        builder.add(second, ids).unwrap();
        builder.push("t.py::d");
        let set = builder.build();
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            ["t.py::b", "t.py::a", "t.py::c", "t.py::d"]
        );
        assert!(set.contains("t.py::c") && !set.contains("t.py::"));
        assert_eq!(
            (set.len(), set.get(3), set.get(4)),
            (4, Some("t.py::d"), None)
        );
        let from_iter: IdSet = ["x.py::1", "x.py::1", "y.py::2"].into_iter().collect();
        assert_eq!(from_iter.len(), 2);
    }

    #[test]
    fn ids_of_any_length_survive_dedup_in_place() {
        // Lengths around the one-byte limit, duplicates moving long ids to earlier slots,
        // and a long id dropped by the truncation at the end.
        let id =
            |name: &str, len: usize| format!("t.py::{name}{}", "x".repeat(len - 6 - name.len()));
        let ids = [
            id("a", 254),
            id("a", 254),
            id("b", 255),
            id("c", 300),
            id("b", 255),
            id("d", 20),
            id("e", 70_000),
            id("c", 300),
        ];
        let text = ids.join("\n") + "\n";
        let source = SourceFile::new("c", "c", text);
        let parsed = parse_collected(&source).unwrap();
        let mut builder = IdSetBuilder::default();
        builder.add(source, parsed).unwrap();
        let set = builder.build();
        let expected = [&ids[0], &ids[2], &ids[3], &ids[5], &ids[6]];
        assert_eq!(set.iter().collect::<Vec<_>>(), expected);
        for wanted in expected {
            assert!(set.contains(wanted), "{}", &wanted[..10]);
        }
        assert!(!set.contains(&id("b", 256)) && !set.contains(&ids[2][..254]));
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
