//! The run record as the plugin writes it, read without serde's per-value machinery:
//! a million ids and rows are byte ranges found with `memchr`, and the small fields go
//! through the same [`Field`] seed as the serde reader. Anything unusual (an escaped
//! string, a row with more than `outcome`, `lines` and `digest` that serde does not read either)
//! is handed back: the caller reads the record again through serde, which also words
//! every error, so this reader never decides that a record is bad.

use std::borrow::Cow;

use serde::de::DeserializeSeed;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Field, Header, List, Merge, RawDetail};
use crate::inputs::ids::{IdSetBuilder, Ids, Spans};
use crate::source::Source;

/// This reader does not take the record; serde will.
pub(super) struct Bail;

type Step<T> = Result<T, Bail>;

pub(super) fn read(source: &Source, merge: &mut Merge, header: &mut Header) -> Step<()> {
    let text = source.text.as_str();
    let mut scan = Scanner {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    std::thread::scope(|scope| {
        let mut indexing: Option<Indexing> = None;
        scan.eat(b'{')?;
        let mut first = true;
        while scan.more(b'}', &mut first)? {
            let key = scan.string()?;
            scan.eat(b':')?;
            // serde words the error.
            if header.repeats(key) {
                return Err(Bail);
            }
            if let Some(list) = List::of(key) {
                header.saw_collected |= matches!(list, List::Collected);
                let spans = scan.strings()?;
                match list {
                    // Hashed beside the scan of `tests`; the set keeps its ids in the
                    // record's own text, shared, not copied.
                    List::Collected if merge.collected.is_empty() && indexing.is_none() => {
                        merge.grow(spans.len());
                        let order = spans.clone();
                        let (mut set, source) =
                            (std::mem::take(&mut merge.collected), source.clone());
                        let handle = crate::threads::spawn_scoped(scope, move || {
                            set.add(source, Ids::Spans(spans)).ok().map(|()| set)
                        });
                        indexing = Some(Indexing { handle, order });
                    }
                    _ => {
                        if matches!(list, List::Collected) {
                            Indexing::finish(&mut indexing, merge)?;
                        }
                        for (start, len) in spans.iter() {
                            merge.add(list, &text[start as usize..][..len as usize]);
                        }
                    }
                }
            } else if key == "tests" {
                header.saw_tests = true;
                let deferred = scan.tests(merge, indexing.as_ref().map(|i| &i.order))?;
                Indexing::finish(&mut indexing, merge)?;
                for (id, raw) in deferred {
                    merge.row::<serde_json::Error>(id, raw).map_err(|_| Bail)?;
                }
            } else {
                let raw: &RawValue = scan.value()?;
                Field { key, merge, header }
                    .deserialize(&mut serde_json::Deserializer::from_str(raw.get()))
                    .map_err(|_| Bail)?;
            }
        }
        Indexing::finish(&mut indexing, merge)?;
        scan.skip_whitespace();
        if scan.at == scan.bytes.len() {
            Ok(())
        } else {
            Err(Bail)
        }
    })
}

/// The collected ids being hashed on another thread, and their order as read.
struct Indexing<'scope> {
    handle: std::thread::ScopedJoinHandle<'scope, Option<IdSetBuilder>>,
    order: Spans,
}

impl Indexing<'_> {
    /// The set back in the merge. Rows were placed by their index in `order`, which is
    /// their place in the set only when the list held no id twice (the plugin's never
    /// does; serde reads one that does).
    fn finish(indexing: &mut Option<Indexing>, merge: &mut Merge) -> Step<()> {
        let Some(Indexing { handle, order }) = indexing.take() else {
            return Ok(());
        };
        let set = handle.join().ok().flatten().ok_or(Bail)?;
        if set.len() != order.len() {
            return Err(Bail);
        }
        merge.collected = set;
        Ok(())
    }
}

struct Scanner<'t> {
    text: &'t str,
    bytes: &'t [u8],
    at: usize,
}

impl<'t> Scanner<'t> {
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Step<u8> {
        self.skip_whitespace();
        self.bytes.get(self.at).copied().ok_or(Bail)
    }

    fn eat(&mut self, byte: u8) -> Step<()> {
        if self.peek()? == byte {
            self.at += 1;
            Ok(())
        } else {
            Err(Bail)
        }
    }

    /// Before each item of an object or array: `false` at its end (`close`), else `true`
    /// with the `,` before any item but the first eaten.
    fn more(&mut self, close: u8, first: &mut bool) -> Step<bool> {
        let next = self.peek()?;
        if next == close {
            self.at += 1;
            return Ok(false);
        }
        if !std::mem::take(first) {
            if next != b',' {
                return Err(Bail);
            }
            self.at += 1;
        }
        Ok(true)
    }

    /// A string without escapes or control characters.
    fn string(&mut self) -> Step<&'t str> {
        self.eat(b'"')?;
        let start = self.at;
        let end = start + memchr::memchr(b'"', &self.bytes[start..]).ok_or(Bail)?;
        // Without short-circuiting, so that it compiles to vector instructions.
        let unusual = self.bytes[start..end]
            .iter()
            .fold(false, |seen, &b| seen | (b < 0x20) | (b == b'\\'));
        if unusual {
            return Err(Bail);
        }
        self.at = end + 1;
        Ok(&self.text[start..end])
    }

    /// An array of strings, as byte ranges into the text.
    fn strings(&mut self) -> Step<Spans> {
        self.eat(b'[')?;
        let (mut items, mut first) = (Spans::default(), true);
        while self.more(b']', &mut first)? {
            let item = self.string()?;
            let start = item.as_ptr() as usize - self.text.as_ptr() as usize;
            items.push(start as u32, item.len() as u32);
        }
        Ok(items)
    }

    /// Any one JSON value, through serde.
    fn value<T: Deserialize<'t>>(&mut self) -> Step<T> {
        self.skip_whitespace();
        let mut values = serde_json::Deserializer::from_str(&self.text[self.at..]).into_iter::<T>();
        let value = values.next().ok_or(Bail)?.map_err(|_| Bail)?;
        self.at += values.byte_offset();
        Ok(value)
    }

    /// The `tests` rows. While the collected ids are being hashed (`order`), a row at
    /// the place after the last one's is merged there, and any other is handed back to
    /// be merged once the set is ready.
    fn tests(
        &mut self,
        merge: &mut Merge,
        order: Option<&Spans>,
    ) -> Step<Vec<(&'t str, RawDetail<'t>)>> {
        let mut deferred = Vec::new();
        self.eat(b'{')?;
        let mut first = true;
        while self.more(b'}', &mut first)? {
            let id = self.string()?;
            self.eat(b':')?;
            let start = self.at;
            let raw = match self.plain_row() {
                Ok(raw) => raw,
                Err(Bail) => {
                    self.at = start;
                    self.value()?
                }
            };
            let Some(order) = order else {
                merge.row::<serde_json::Error>(id, raw).map_err(|_| Bail)?;
                continue;
            };
            let next = merge.next_row;
            let expected = (next < order.len()).then(|| {
                let (start, len) = order.get(next);
                &self.text[start as usize..][..len as usize]
            });
            if expected == Some(id) {
                merge
                    .row_at::<serde_json::Error>(next, id, raw)
                    .map_err(|_| Bail)?;
                merge.next_row = next + 1;
            } else {
                deferred.push((id, raw));
            }
        }
        Ok(deferred)
    }

    /// A row of only `outcome`, `lines` and `digest`, as most rows are, in the plugin's
    /// spelling (`{"outcome":"passed","lines":[3,4],"digest":"9f86d081884c7d65"}`).
    fn plain_row(&mut self) -> Step<RawDetail<'t>> {
        self.literal(b"{\"outcome\":\"")?;
        let start = self.at;
        let len = self.bytes[start..]
            .iter()
            .take_while(|b| b.is_ascii_lowercase())
            .count();
        self.at += len;
        self.literal(b"\"")?;
        let outcome = &self.text[start..start + len];
        let mut lines = None;
        if self.literal(b",\"lines\":[").is_ok() {
            let first = self.number()?;
            self.literal(b",")?;
            let last = self.number()?;
            self.literal(b"]")?;
            lines = Some((first, last));
        }
        let mut digest = None;
        if self.literal(b",\"digest\":\"").is_ok() {
            let start = self.at;
            let len = self.bytes[start..]
                .iter()
                .take_while(|b| b.is_ascii_hexdigit())
                .count();
            self.at += len;
            self.literal(b"\"")?;
            digest = Some(Cow::Borrowed(&self.text[start..start + len]));
        }
        self.literal(b"}")?;
        Ok(RawDetail {
            outcome: Cow::Borrowed(outcome),
            lines,
            digest,
            ..RawDetail::default()
        })
    }

    /// Exactly these bytes next, with no whitespace before them.
    fn literal(&mut self, bytes: &[u8]) -> Step<()> {
        if self.bytes[self.at..].starts_with(bytes) {
            self.at += bytes.len();
            Ok(())
        } else {
            Err(Bail)
        }
    }

    /// A `u32` in plain digits (no sign, fraction, exponent or leading zero).
    fn number(&mut self) -> Step<u32> {
        let digits = self.bytes[self.at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let text = &self.text[self.at..self.at + digits];
        if digits == 0 || (digits > 1 && text.starts_with('0')) {
            return Err(Bail);
        }
        let number = text.parse().map_err(|_| Bail)?;
        self.at += digits;
        Ok(number)
    }
}
