//! An ordered, deduplicated set of ids over one text buffer.

use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use super::index::{IdIndex, AHEAD};

mod nearest;
use super::strip_params;
use crate::error::GateError;
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
    /// Places in `spans`, by the id's hash.
    table: IdIndex,
    /// The folders and files of the ids, for [`IdSet::nearest`]: built when first asked.
    near: nearest::Lazy,
    /// What [`IdSet::nearest`] answered, by the id and count asked: a ledger often names
    /// one missing property many times.
    suggested: std::sync::Mutex<Answers>,
    /// The functions and classes ids are under (`(id, prefix length)`, hashed by the
    /// prefix's text), for [`IdSet::any_under`]: built when first asked.
    under: std::sync::OnceLock<HashTable<(u32, u32)>>,
}

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
}

/// The bytes of the id at place `index`.
fn span_bytes<'t>(text: &'t IdText, spans: &Spans, index: u32) -> &'t [u8] {
    let (start, len) = spans.get(index as usize);
    text.get(start, len).as_bytes()
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
        self.table.find(hash_str(id), |i| self.id(i) == id)
    }
}

/// The place of `id` (its hash is `hash`) if the set has it; else records `index` as its
/// place in `spans` (where the caller puts it). One probe.
fn find_or_index(
    table: &mut IdIndex,
    (text, spans): (&IdText, &Spans),
    hash: u64,
    id: &[u8],
    index: u32,
) -> Option<u32> {
    let at = |i: u32| span_bytes(text, spans, i);
    table.find_or_insert(hash, index, |i| at(i) == id, |i| hash_bytes(at(i)))
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
    pub fn add(&mut self, source: Source, ids: Ids) -> Result<(), GateError> {
        if source.text.len() > u32::MAX as usize {
            return Err(GateError::new(&source.name, "is larger than 4 GiB"));
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
                // place, so a million spans are never held twice. The ids are hashed
                // [`AHEAD`] at a time and their slots fetched before any is filled.
                let inner = &mut self.inner;
                inner.table = IdIndex::with_capacity(spans.len());
                inner.spans = spans;
                let mut kept = 0;
                let mut batch: [(&[u8], u32, u32, u64); AHEAD] = [(&[], 0, 0, 0); AHEAD];
                let total = inner.spans.len();
                let text = &inner.text;
                for first in (0..total).step_by(AHEAD) {
                    let read = first..(first + AHEAD).min(total);
                    for (at, slot) in read.clone().zip(&mut batch) {
                        let (start, len) = inner.spans.get(at);
                        let id = text.get(start, len).as_bytes();
                        let hash = hash_bytes(id);
                        inner.table.prefetch(hash);
                        *slot = (id, start, len, hash);
                    }
                    // A span is read before any write below it: `kept` never passes `at`.
                    for (at, &(id, start, len, hash)) in read.zip(&batch) {
                        let known = (text, &inner.spans);
                        if find_or_index(&mut inner.table, known, hash, id, kept as u32).is_none() {
                            if kept != at {
                                inner.spans.set(kept, start, len);
                            }
                            kept += 1;
                        }
                    }
                }
                inner.spans.truncate(kept);
            }
            Ids::Spans(spans) => {
                for (start, len) in spans.iter() {
                    self.push(&source.text[start as usize..(start + len) as usize]);
                }
            }
        }
        Ok(())
    }

    /// Adds one id, copying it into the set's text unless it is there already.
    pub fn push(&mut self, id: &str) {
        self.insert(id);
    }

    pub fn build(self) -> IdSet {
        IdSet(Arc::new(self.inner))
    }

    /// Adds one id (see [`IdSetBuilder::push`]) and says where it is in first-seen order.
    /// One hash and one probe.
    pub fn insert(&mut self, id: &str) -> usize {
        let inner = &mut self.inner;
        let index = inner.spans.len() as u32;
        let known = (&inner.text, &inner.spans);
        match find_or_index(&mut inner.table, known, hash_str(id), id.as_bytes(), index) {
            Some(found) => found as usize,
            None => {
                let start = inner.text.push(id);
                inner.spans.push(start, id.len() as u32);
                index as usize
            }
        }
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

    /// Whether the set holds the id or something under it: a case of the function, a
    /// test in the class or the file. How a freeze of a function whose cases come from
    /// a parametrized fixture is still of collected tests, and how a run shows it
    /// collected a file. The reverse of [`IdSet::covers`] (which stops at classes).
    pub fn any_under(&self, id: &str) -> bool {
        self.contains(id) || self.first_under(id).is_some()
    }

    /// Up to `n` ids under `id` (not `id` itself), from the first in first-seen order on,
    /// for as long as they follow one another: pytest collects a function's cases and a
    /// class's tests one after the other, and a search never reads more than `n`.
    pub fn under(&self, id: &str, n: usize) -> Vec<&str> {
        let Some(first) = self.first_under(id) else {
            return Vec::new();
        };
        let is_under = |other: &str| {
            other.len() > id.len()
                && other.starts_with(id)
                && (other[id.len()..].starts_with('[') || other[id.len()..].starts_with("::"))
        };
        (first..self.len() as u32)
            .map(|at| self.0.id(at))
            .take_while(|other| is_under(other))
            .take(n)
            .collect()
    }

    /// Where the first id under `id` is (a case of the function, a test of the class or
    /// the file), from a table of every prefix built on the first ask.
    fn first_under(&self, id: &str) -> Option<u32> {
        let inner = &*self.0;
        let under = inner.under.get_or_init(|| {
            let mut table = HashTable::new();
            for index in 0..self.len() as u32 {
                let id = inner.id(index);
                let head = strip_params(id);
                // The file and each class the id is in, and the function of a case.
                let case_of = (head.len() < id.len()).then_some(head.len());
                let prefixes = head.match_indices("::").map(|(at, _)| at).chain(case_of);
                for len in prefixes {
                    let prefix = &head[..len];
                    let text_of = |&(i, len): &(u32, u32)| &inner.id(i)[..len as usize];
                    if let hashbrown::hash_table::Entry::Vacant(slot) = table.entry(
                        hash_str(prefix),
                        |entry| text_of(entry) == prefix,
                        |entry| hash_str(text_of(entry)),
                    ) {
                        slot.insert((index, len as u32));
                    }
                }
            }
            table
        });
        under
            .find(hash_str(id), |&(i, len)| &inner.id(i)[..len as usize] == id)
            .map(|&(i, _)| i)
    }

    /// The id at a position in first-seen order.
    pub fn get(&self, index: usize) -> Option<&str> {
        (index < self.len()).then(|| self.0.id(index as u32))
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.len() as u32).map(|i| self.0.id(i))
    }

    /// Up to `n` ids closest to `id` (a misspelt one), nearest first: among the ids of
    /// its file (a parametrized function's id when only that is near), else of the files nearest its file in its folder, else in the folders
    /// nearest its folder; none when nothing is close. The first search indexes the
    /// set's folders (one pass), and a folder's files when a search first reads them.
    pub fn nearest(&self, id: &str, n: usize) -> Vec<String> {
        let inner = &*self.0;
        let key = (id.to_string(), n);
        if let Some(found) = answered(&inner.suggested).get(&key) {
            return Vec::clone(found);
        }
        let index = inner.near.get_or_init(|| nearest::NearIndex::build(inner));
        let found: Vec<String> = index
            .nearest(inner, id, n)
            .into_iter()
            .map(str::to_string)
            .collect();
        answered(&inner.suggested).insert(key, found.clone());
        found
    }
}

type Answers = rustc_hash::FxHashMap<(String, usize), Vec<String>>;

fn answered(asked: &std::sync::Mutex<Answers>) -> std::sync::MutexGuard<'_, Answers> {
    asked
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The edit distance of `a` and `b` when within a third of what may differ (`within`
/// bytes: the name after the file, or the file), at least 2.
fn close(a: &str, b: &str, within: usize) -> Option<usize> {
    let bound = (within / 3).max(2);
    // The length difference is a lower bound of the distance: skip the far ones.
    if a.len().abs_diff(b.len()) > bound {
        return None;
    }
    // A common prefix or suffix does not change the distance: ids of one file share
    // the file and most of the name, so what is left to compare is short.
    let (a, b) = without_common_affixes(a, b);
    let distance = levenshtein(a, b);
    (distance <= bound).then_some(distance)
}

/// The edit distance in characters, as `strsim::levenshtein` counts it; bit-parallel
/// (Myers, in Hyyrö's form) when both are ASCII and one is at most 64 bytes: a "did you
/// mean" over one file's ids compares a misspelt name with each of them, and this takes
/// a machine word a byte instead of a table, with nothing allocated.
fn levenshtein(a: &str, b: &str) -> usize {
    let (a, b) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if a.len() > 64 || !a.is_ascii() || !b.is_ascii() {
        return strsim::levenshtein(a, b);
    }
    if a.is_empty() {
        return b.len();
    }
    let mut peq = [0u64; 128];
    for (i, &c) in a.as_bytes().iter().enumerate() {
        peq[usize::from(c)] |= 1 << i;
    }
    let last = 1u64 << (a.len() - 1);
    let (mut pv, mut mv, mut score) = (!0u64, 0u64, a.len());
    for &c in b.as_bytes() {
        let eq = peq[usize::from(c)];
        let xv = eq | mv;
        let xh = ((eq & pv).wrapping_add(pv) ^ pv) | eq;
        let ph = mv | !(xh | pv);
        let mh = pv & xh;
        if ph & last != 0 {
            score += 1;
        } else if mh & last != 0 {
            score -= 1;
        }
        let ph = ph << 1 | 1;
        let mh = mh << 1;
        pv = mh | !(xv | ph);
        mv = ph & xv;
    }
    score
}

/// `a` and `b` without the characters they begin with and end with alike.
fn without_common_affixes<'a, 'b>(a: &'a str, b: &'b str) -> (&'a str, &'b str) {
    let mut prefix = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    // Equal bytes so far: a character boundary of one is one of the other.
    while !a.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let mut suffix = a
        .bytes()
        .rev()
        .zip(b.bytes().rev())
        .take_while(|(x, y)| x == y)
        .count();
    while !a.is_char_boundary(a.len() - suffix) {
        suffix -= 1;
    }
    (&a[..a.len() - suffix], &b[..b.len() - suffix])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::ids::file_of;
    use crate::inputs::ids::parse_collected;
    use crate::source::SourceFile;

    #[test]
    fn the_ids_under_a_function_are_its_cases_while_they_follow_one_another() {
        let set: IdSet = [
            "t.py::test_a[1]",
            "t.py::test_a[2]",
            "t.py::test_ab",
            "t.py::test_a[3]",
            "t.py::C::test_x",
            "t.py::C::test_y",
        ]
        .into_iter()
        .collect();
        assert_eq!(
            set.under("t.py::test_a", 5),
            ["t.py::test_a[1]", "t.py::test_a[2]"]
        );
        assert_eq!(set.under("t.py::test_a", 1), ["t.py::test_a[1]"]);
        assert_eq!(
            set.under("t.py::C", 5),
            ["t.py::C::test_x", "t.py::C::test_y"]
        );
        assert!(
            set.under("t.py::test_ab", 5).is_empty(),
            "an id is not under itself"
        );
        assert!(set.under("t.py::test_b", 5).is_empty());
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
    fn a_parametrized_function_misspelt_by_its_name_gets_its_function_id() {
        let set: IdSet = [
            "t/test_easter.py::test_easter_western[easter_date0]",
            "t/test_easter.py::test_easter_western[easter_date1]",
            "t/test_easter.py::test_easter_orthodox[easter_date0]",
            "t/test_easter.py::test_easter_bad_method",
        ]
        .into_iter()
        .collect();
        assert_eq!(
            set.nearest("t/test_easter.py::test_easter_westren", 3),
            ["t/test_easter.py::test_easter_western"]
        );
        // A misspelt case is still compared with the cases.
        assert_eq!(
            set.nearest("t/test_easter.py::test_easter_western[easter_date2]", 1),
            ["t/test_easter.py::test_easter_western[easter_date0]"]
        );
    }

    #[test]
    fn nearest_ids_are_found_in_a_set_of_a_million() {
        let mut ids: Vec<String> = (0..1_000_000)
            .map(|i| format!("tests/pkg{}/test_mod{}.py::test_case_{i}", i % 97, i / 20))
            .collect();
        ids.push("tests/props/test_prop7.py::test_property_7".into());
        let set: IdSet = ids.iter().collect();
        // The same file, and a file of the same folder.
        assert_eq!(
            set.nearest("tests/pkg3/test_mod5.py::test_case_1OO", 3),
            ["tests/pkg3/test_mod5.py::test_case_100"]
        );
        assert_eq!(
            set.nearest("tests/props/test_prop7.py::test_proprety_7", 3),
            ["tests/props/test_prop7.py::test_property_7"]
        );
        assert_eq!(
            set.nearest("tests/props/test_porp7.py::test_property_7", 3),
            ["tests/props/test_prop7.py::test_property_7"]
        );
    }

    #[test]
    fn a_name_or_file_misspelt_among_thousands_finds_what_reading_every_id_finds() {
        // Thousands of names (or files) within a few edits of each other by their
        // signatures: the search walks them as a trie, and must find the same nearest,
        // ties in byte order.
        let mut ids: Vec<String> = (0..3_000)
            .map(|i| format!("tests/props/test_props.py::test_property_{i}"))
            .collect();
        ids.extend((0..40).map(|i| format!("tests/props/test_props.py::test_propérty_{i}")));
        ids.push("tests/props/test_props.py::test_other".into());
        // And thousands of files in one folder, for a misspelt file or folder.
        ids.extend((0..3_000).map(|i| format!("tests/many/test_prop{i}.py::test_x")));
        let set: IdSet = ids.iter().collect();
        for asked in [
            "tests/many/test_porp1234.py::test_x",
            "tests/many/test_prop1234.py::test_y",
            "tests/mnay/test_prop1234.py::test_x",
            "tests/mnay/test_porp1234.py::test_x",
            "tests/many/test_prop.py::test_x",
            "tests/props/test_props.py::test_proprety_1234",
            "tests/props/test_props.py::test_property_12345",
            "tests/props/test_props.py::test_propety_7",
            "tests/props/test_props.py::test_propérty_3",
            "tests/props/test_props.py::test_renamed_entirely",
            "tests/props/test_props.py::test_property_",
        ] {
            for n in [1, 3, 12] {
                assert_eq!(
                    set.nearest(asked, n),
                    nearest_by_reading_every_id(&ids, asked, n),
                    "asked {asked} for {n}"
                );
            }
        }
        assert_eq!(
            set.nearest("tests/props/test_props.py::test_proprety_1234", 3),
            [
                "tests/props/test_props.py::test_property_1234",
                "tests/props/test_props.py::test_property_1034",
                "tests/props/test_props.py::test_property_1134",
            ]
        );
    }

    #[test]
    fn misspellings_of_a_real_collection_find_what_reading_every_id_finds() {
        // dateutil's 1,528 ids (`pytest --collect-only -q` at c981f9c, without
        // test_isoparser.py, which pytest 9 no longer collects): test_rrule.py has 562
        // and test_tz.py 423, walked as tries; parametrized ids with brackets, dots and
        // dashes. Each id misspelt as hands do, in its name, file and folder.
        let ids: Vec<String> = include_str!("../../../tests/data/dateutil-collected.txt")
            .lines()
            .map(str::to_string)
            .collect();
        assert_eq!(ids.len(), 1_528);
        let set: IdSet = ids.iter().collect();
        for (k, id) in ids.iter().enumerate().step_by(11) {
            let file = file_of(id);
            let name = &id[file.len() + 2..];
            let edited = |edit: &dyn Fn(&mut Vec<u8>)| {
                let mut name = name.as_bytes().to_vec();
                edit(&mut name);
                format!("{file}::{}", String::from_utf8_lossy(&name))
            };
            let at = 3 + k % name.len().saturating_sub(5).max(1);
            let mut asked = vec![
                id.replace("tests/test_", "tests/tset_"),
                id.replace("tests/", "tesst/"),
                format!("{id}_case"),
            ];
            if at + 1 < name.len() {
                asked.push(edited(&|name| name.swap(at, at + 1)));
                asked.push(edited(&|name| {
                    name.remove(at);
                }));
                asked.push(edited(&|name| name[at] = b'x'));
            }
            if let Some(bracket) = name.find('[') {
                asked.push(format!("{file}::{}", &name[..bracket.saturating_sub(1)]));
            }
            for asked in asked {
                for n in [1, 3, 12] {
                    assert_eq!(
                        set.nearest(&asked, n),
                        nearest_by_reading_every_id(&ids, &asked, n),
                        "asked {asked} for {n}"
                    );
                }
            }
        }
    }

    /// The candidates close to `id`, nearest first (then in byte order).
    fn nearest_first<'s>(
        candidates: impl Iterator<Item = &'s str>,
        id: &str,
        name_len: usize,
    ) -> Vec<&'s str> {
        let mut found: Vec<(usize, &str)> = candidates
            .filter_map(|candidate| close(candidate, id, name_len).map(|d| (d, candidate)))
            .collect();
        found.sort_unstable();
        found.into_iter().map(|(_, c)| c).collect()
    }

    /// The search as it was before the index: every id read for each misspelt one. The
    /// index must find what it found.
    fn nearest_by_reading_every_id(ids: &[String], id: &str, n: usize) -> Vec<String> {
        fn dir_of(file: &str) -> &str {
            file.rsplit_once('/').map_or("", |(dir, _)| dir)
        }
        fn nearest_of<'a>(names: Vec<&'a str>, to: &str) -> Vec<&'a str> {
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
        let name_len = id.len() - file.len();
        let all: Vec<&str> = ids.iter().map(String::as_str).collect();
        let same_file: Vec<&str> = all.iter().copied().filter(|c| file_of(c) == file).collect();
        let found = if !same_file.is_empty() {
            let mut found = nearest_first(same_file.iter().copied(), id, name_len);
            if found.is_empty() && !id.contains('[') {
                let functions = same_file.iter().filter_map(|c| {
                    let name = &c[file.len()..];
                    Some(&c[..file.len() + name.find('[')?])
                });
                found = nearest_first(functions, id, name_len);
                found.dedup();
            }
            found
        } else {
            let mut in_dir: Vec<&str> = all
                .iter()
                .map(|c| file_of(c))
                .filter(|f| dir_of(f) == dir)
                .collect();
            in_dir.sort_unstable();
            in_dir.dedup();
            let folder_exists = !in_dir.is_empty();
            let mut files = nearest_of(in_dir, file);
            if files.is_empty() && !folder_exists {
                let mut dirs: Vec<&str> = all.iter().map(|c| dir_of(file_of(c))).collect();
                dirs.sort_unstable();
                dirs.dedup();
                let near_dirs = nearest_of(dirs, dir);
                let mut in_near: Vec<&str> = all
                    .iter()
                    .map(|c| file_of(c))
                    .filter(|f| near_dirs.contains(&dir_of(f)))
                    .collect();
                in_near.sort_unstable();
                in_near.dedup();
                files = nearest_of(in_near, file);
            }
            let candidates = all.iter().copied().filter(|c| files.contains(&file_of(c)));
            nearest_first(candidates, id, name_len)
        };
        found.into_iter().take(n).map(str::to_string).collect()
    }

    proptest::proptest! {
        #[test]
        fn levenshtein_is_strsims(
            a in "[ab_:1-3]{0,70}|[a-c\u{e9}]{0,6}",
            b in "[ab_:1-3]{0,70}|[a-c\u{e9}]{0,6}",
        ) {
            proptest::prop_assert_eq!(levenshtein(&a, &b), strsim::levenshtein(&a, &b));
        }

        #[test]
        fn the_index_suggests_what_reading_every_id_suggests(
            ids in proptest::collection::vec((0..7usize, 0..5usize, 0..10usize), 1..40),
            asked in proptest::collection::vec((0..8usize, 0..6usize, 0..10usize), 1..12),
        ) {
            const DIRS: [&str; 8] = ["tests/props", "tests/prosp", "a", "a/b", "", "tests/pkg1", "ab/é", "tests/porps"];
            const FILES: [&str; 6] = ["test_prop1.py", "test_porp1.py", "t.py", "tt.py", "test_prop2.py", "ü.py"];
            const NAMES: [&str; 10] = ["test_one", "test_onr", "test_two[1]", "test_two[2]", "t[a::b]", "test_property_1", "x", "test_één", "test_twx[1]", "test_twx[3]"];
            let id = |(d, f, n): (usize, usize, usize)| match DIRS[d] {
                "" => format!("{}::{}", FILES[f], NAMES[n]),
                dir => format!("{dir}/{}::{}", FILES[f], NAMES[n]),
            };
            let set: IdSet = ids.into_iter().map(id).collect();
            let ids: Vec<String> = set.iter().map(str::to_string).collect();
            for (asked, n) in asked.into_iter().map(id).zip([12, 1, 3, 2].into_iter().cycle()) {
                proptest::prop_assert_eq!(
                    set.nearest(&asked, n),
                    nearest_by_reading_every_id(&ids, &asked, n),
                    "asked {} for {}", asked, n
                );
            }
        }
    }

    #[test]
    fn every_misspelt_id_gets_its_suggestions_however_many() {
        let ids: Vec<String> = (0..10_000)
            .map(|i| format!("tests/props/test_prop{i}.py::test_property_{i}"))
            .collect();
        let set: IdSet = ids.iter().collect();
        // Misspelt in the folder, the file and the name, far more than twenty of each.
        for i in (0..10_000).step_by(97) {
            let right = &ids[i];
            for wrong in [
                right.replace("tests/props/", "tests/prosp/"),
                right.replacen("test_prop", "test_porp", 1),
                right.replace("test_property", "test_proprety"),
            ] {
                assert_eq!(
                    set.nearest(&wrong, 3),
                    std::slice::from_ref(right),
                    "{wrong}"
                );
            }
        }
    }

    #[test]
    fn a_distance_without_common_affixes_is_the_whole_distance() {
        let pairs = [
            ("tests/a.py::test_one", "tests/a.py::test_onr"),
            ("tests/a.py::test_één", "tests/a.py::test_eén"),
            ("a/ü.py::x", "a/u.py::x"),
            ("tests/a.py::t[x]", "tests/b.py::t[y]"),
            ("same", "same"),
            ("", "abc"),
            ("ab", "ba"),
        ];
        for (a, b) in pairs {
            let (x, y) = without_common_affixes(a, b);
            assert_eq!(
                strsim::levenshtein(x, y),
                strsim::levenshtein(a, b),
                "{a} / {b}"
            );
            assert_eq!(close(a, b, 30), close(b, a, 30));
        }
    }

    #[test]
    fn any_under_finds_the_cases_of_a_function_and_the_tests_of_a_class() {
        let set: IdSet = [
            "t.py::test_fixture_cases[True]",
            "t.py::test_fixture_cases[False]",
            "t.py::TestOuter::TestInner::test_a[x::y]",
            "t.py::test_plain",
        ]
        .into_iter()
        .collect();
        for id in [
            "t.py::test_fixture_cases",
            "t.py::test_fixture_cases[True]",
            "t.py::TestOuter",
            "t.py::TestOuter::TestInner",
            "t.py::TestOuter::TestInner::test_a",
            "t.py::test_plain",
        ] {
            assert!(set.any_under(id), "{id}");
        }
        assert!(set.any_under("t.py"), "the file's tests are under it");
        for id in [
            "t",
            "t.py::test_fixture",
            "t.py::test_fixture_cases[None]",
            "t.py::TestOut",
            "t.py::TestOuter::TestInner::test_a[x",
            "t.py::test_plain[1]",
            "u.py::test_plain",
        ] {
            assert!(!set.any_under(id), "{id}");
        }
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
}
