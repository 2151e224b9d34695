//! "Did you mean": the ids of a set nearest a misspelt one, from an index built once.
//!
//! A search reads the ids of one file, the files of one folder, or the folders: the
//! folders are indexed on the first search (one pass over the set), the files of a folder
//! on the first search that reads them. Each folder and file keeps a bigram signature, so
//! the edit distance is computed only for the few a signature cannot rule out: one
//! misspelt id costs microseconds on a million ids, whatever its folder holds, where
//! reading the set for each one cost milliseconds (a ledger of 500 misspelt properties
//! took seconds). A signature rules out little among thousands of names of one file
//! (`test_property_1234`, `…_1235`) or files of one folder: those are walked as a trie
//! instead ([`trie`]), which reads the prefixes near the misspelt text and no other.

use std::sync::{Arc, Mutex, OnceLock};

use hashbrown::HashTable;
use rustc_hash::FxHashMap;

use super::super::file_of;
use super::{hash_str, IdSetInner};

mod trie;

/// More texts than this are walked as a trie ([`trie::Sorted`]) rather than compared
/// one by one.
const WALK_OVER: usize = 256;

/// The texts nearest the misspelt one within a bound, with their distance and place, as
/// [`trie::Sorted::nearest`] finds them for a bound and a number to keep.
type Walk<'w, 'a> = &'w dyn Fn(usize, usize) -> Within<'a>;
type Within<'a> = Vec<(usize, u32, &'a str)>;

/// No next id.
const END: u32 = u32::MAX;

/// The folders of a set's ids, each with the chain of its ids.
#[derive(Debug, Default)]
pub(super) struct NearIndex {
    folders: Vec<Folder>,
    /// Places in `folders`, by the folder's text.
    by_text: HashTable<u32>,
    /// Per id, the next id of its folder (or [`END`]): every folder's ids, in
    /// first-seen order, in four bytes an id.
    next: Vec<u32>,
    /// The files of each folder a search read, by the folder's place.
    files: Mutex<FxHashMap<u32, Arc<Files>>>,
}

#[derive(Debug)]
struct Folder {
    /// The folder's text: the first `len` bytes of the id `id`.
    id: u32,
    len: u32,
    signature: u64,
    first: u32,
}

/// The distinct files of one folder, with their ids grouped by file.
#[derive(Debug, Default)]
struct Files {
    files: Vec<File>,
    /// Places in `files`, by the file's text.
    by_text: HashTable<u32>,
    /// Ids, file by file: those of `files[f]` are `ids[files[f].ids.0..files[f].ids.1]`.
    ids: Vec<u32>,
    /// The signature of each id in `ids`.
    signatures: Vec<u64>,
    /// The signature of each id in `ids` without its file (`::name`): ids of one file
    /// differ only there, where the whole id's bits are mostly those of the file.
    name_signatures: Vec<u64>,
    /// The length of each id in `ids` without its file.
    name_lengths: Vec<u32>,
    /// The names of each file (its ids without the file), sorted when a search first
    /// walks them.
    names: Vec<OnceLock<trie::Sorted>>,
    /// The parametrized functions of each file, listed when a search first asks.
    functions: Vec<OnceLock<Functions>>,
    /// The files themselves, sorted when a search first walks them.
    sorted: OnceLock<trie::Sorted>,
}

#[derive(Debug)]
struct File {
    id: u32,
    len: u32,
    signature: u64,
    ids: (u32, u32),
}

fn dir_of(file: &str) -> &str {
    file.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// The text's bigrams, hashed to one bit each of 64. An edit makes at most two bigrams
/// that were not there, so two texts whose bigram bits differ by `k` on one side are at
/// least `k / 2` edits apart (a hashed bit stands for at least one missing bigram). The
/// distance counts characters, so a text that is not ASCII gets none (`0`: unknown).
fn signature(text: &str) -> u64 {
    if !text.is_ascii() {
        return 0;
    }
    text.as_bytes().windows(2).fold(0, |bits, pair| {
        let bigram = u32::from(pair[0]) << 8 | u32::from(pair[1]);
        bits | 1 << (bigram.wrapping_mul(0x9E37_79B1) >> 26)
    })
}

/// A lower bound of the edit distance of two ASCII texts, from their lengths and
/// signatures; `0` when either has no signature.
fn at_least(a: (usize, u64), b: (usize, u64)) -> usize {
    if a.1 == 0 || b.1 == 0 {
        return 0;
    }
    let by_length = a.0.abs_diff(b.0);
    let only_a = (a.1 & !b.1).count_ones();
    let only_b = (b.1 & !a.1).count_ones();
    let by_bigrams = (only_a.max(only_b) as usize).div_ceil(2);
    by_length.max(by_bigrams)
}

/// The `keep` texts nearest `to` among those within [`close`](super::close)'s bound of it
/// (`within / 3`, at least 2), with every text as near as the last one kept: `texts`
/// gives each one's place, length and signature, and `text` the text at a place (read
/// only for those a signature does not rule out). They are compared in the order of
/// their lower bounds, and the comparing stops at the first bound past the nearest `keep`.
/// With a `walk` (of more than [`WALK_OVER`] texts), the walk finds them instead.
fn nearest<'a>(
    texts: impl Iterator<Item = (u32, usize, u64)>,
    text: impl Fn(u32) -> &'a str,
    to: &str,
    within: usize,
    keep: usize,
    walk: Option<Walk<'_, 'a>>,
) -> Vec<(usize, u32, &'a str)> {
    let bound = (within / 3).max(2);
    if let Some(walk) = walk {
        let mut found = walk(bound, keep);
        keep_nearest(&mut found, keep);
        return found;
    }
    let wanted = (to.len(), signature(to));
    let mut by_bound: Vec<Vec<u32>> = vec![Vec::new(); bound + 1];
    for (place, len, bits) in texts {
        let least = at_least((len, bits), wanted);
        if least <= bound {
            by_bound[least].push(place);
        }
    }
    let mut limit = bound;
    let mut found: Vec<(usize, u32, &str)> = Vec::new();
    for (least, texts) in by_bound.into_iter().enumerate() {
        if least > limit {
            break;
        }
        for place in texts {
            let text = text(place);
            let Some(distance) = super::close(text, to, within) else {
                continue;
            };
            if distance > limit {
                continue;
            }
            found.push((distance, place, text));
            if let Some(kept) = keep_nearest(&mut found, keep) {
                limit = kept;
            }
        }
    }
    found
}

/// With `keep` or more found, keeps the `keep` nearest and every one as near as the last
/// of them, and gives the distance of the last.
fn keep_nearest(found: &mut Vec<(usize, u32, &str)>, keep: usize) -> Option<usize> {
    if found.len() < keep {
        return None;
    }
    let mut distances: Vec<usize> = found.iter().map(|f| f.0).collect();
    let (_, &mut kept, _) = distances.select_nth_unstable(keep - 1);
    found.retain(|f| f.0 <= kept);
    Some(kept)
}

/// The walk of the texts at `places` for a search of `to`, as [`nearest`] takes it: when
/// `to` is ASCII and they are more than [`WALK_OVER`], sorted into `sorted` when first
/// walked.
fn walk<'a>(
    sorted: &'a OnceLock<trie::Sorted>,
    places: impl ExactSizeIterator<Item = u32> + Clone + 'a,
    text: impl Fn(u32) -> &'a str + Copy + 'a,
    to: &'a str,
) -> Option<impl Fn(usize, usize) -> Within<'a> + 'a> {
    (to.is_ascii() && places.len() > WALK_OVER).then_some(move |limit: usize, keep: usize| {
        let sorted = sorted.get_or_init(|| trie::Sorted::new(places.clone().map(|p| (p, text(p)))));
        sorted.nearest(text, to, limit, keep)
    })
}

/// The texts nearest `to`, ties included (`keep` 1).
fn nearest_of<'a>(
    texts: impl Iterator<Item = (u32, usize, u64)>,
    text: impl Fn(u32) -> &'a str,
    to: &str,
    walk: Option<Walk<'_, 'a>>,
) -> Vec<(u32, &'a str)> {
    nearest(texts, text, to, to.len(), 1, walk)
        .into_iter()
        .map(|(_, place, text)| (place, text))
        .collect()
}

impl NearIndex {
    /// One pass over the set: each id's folder, and the chains of ids by folder.
    pub(super) fn build(set: &IdSetInner) -> NearIndex {
        let total = set.spans.len() as u32;
        let mut index = NearIndex {
            next: vec![END; total as usize],
            ..NearIndex::default()
        };
        let mut last: Vec<u32> = Vec::new();
        // Ids come file by file from pytest: the folder of the id before is the first guess.
        let mut previous: Option<u32> = None;
        for at in 0..total {
            let id = set.id(at);
            let dir = dir_of(file_of(id));
            let same = previous.filter(|&p| {
                let folder = &index.folders[p as usize];
                folder.len as usize == dir.len() && &set.id(folder.id)[..dir.len()] == dir
            });
            let place = match same {
                Some(place) => place,
                None => {
                    let folders = &index.folders;
                    let text = |&p: &u32| {
                        let folder = &folders[p as usize];
                        &set.id(folder.id)[..folder.len as usize]
                    };
                    let hash = hash_str(dir);
                    match index.by_text.find(hash, |p| text(p) == dir) {
                        Some(&place) => place,
                        None => {
                            let place = index.folders.len() as u32;
                            index.folders.push(Folder {
                                id: at,
                                len: dir.len() as u32,
                                signature: signature(dir),
                                first: at,
                            });
                            last.push(at);
                            let folders = &index.folders;
                            index.by_text.insert_unique(hash, place, |&p| {
                                let folder = &folders[p as usize];
                                hash_str(&set.id(folder.id)[..folder.len as usize])
                            });
                            previous = Some(place);
                            continue;
                        }
                    }
                }
            };
            let tail = &mut last[place as usize];
            index.next[*tail as usize] = at;
            *tail = at;
            previous = Some(place);
        }
        index
    }

    fn folder_text<'s>(&self, set: &'s IdSetInner, place: u32) -> &'s str {
        let folder = &self.folders[place as usize];
        &set.id(folder.id)[..folder.len as usize]
    }

    fn folder(&self, set: &IdSetInner, dir: &str) -> Option<u32> {
        self.by_text
            .find(hash_str(dir), |&p| self.folder_text(set, p) == dir)
            .copied()
    }

    /// The ids of a folder, in first-seen order.
    fn ids_in(&self, place: u32) -> impl Iterator<Item = u32> + '_ {
        let first = self.folders[place as usize].first;
        std::iter::successors(Some(first), |&at| {
            Some(self.next[at as usize]).filter(|&n| n != END)
        })
    }

    /// The files of a folder, indexed when first asked for.
    fn files_of(&self, set: &IdSetInner, place: u32) -> Arc<Files> {
        let mut known = self.files.lock().unwrap_or_else(|p| p.into_inner());
        let files = known.entry(place).or_insert_with(|| {
            let mut files = Files::default();
            let mut of_id: Vec<(u32, u32)> = Vec::new();
            let mut counts: Vec<u32> = Vec::new();
            for at in self.ids_in(place) {
                let file = file_of(set.id(at));
                let hash = hash_str(file);
                let text = |f: &File| &set.id(f.id)[..f.len as usize];
                let found = files
                    .by_text
                    .find(hash, |&f| text(&files.files[f as usize]) == file)
                    .copied();
                let f = match found {
                    Some(f) => f,
                    None => {
                        let f = files.files.len() as u32;
                        files.files.push(File {
                            id: at,
                            len: file.len() as u32,
                            signature: signature(file),
                            ids: (0, 0),
                        });
                        counts.push(0);
                        let all = &files.files;
                        files
                            .by_text
                            .insert_unique(hash, f, |&f| hash_str(text(&all[f as usize])));
                        f
                    }
                };
                counts[f as usize] += 1;
                of_id.push((f, at));
            }
            let mut start = 0;
            for (file, count) in files.files.iter_mut().zip(&counts) {
                file.ids = (start, start);
                start += count;
            }
            files.names = files.files.iter().map(|_| OnceLock::new()).collect();
            files.functions = files.files.iter().map(|_| OnceLock::new()).collect();
            files.ids = vec![0; of_id.len()];
            files.signatures = vec![0; of_id.len()];
            files.name_signatures = vec![0; of_id.len()];
            files.name_lengths = vec![0; of_id.len()];
            for (f, at) in of_id {
                let file = &mut files.files[f as usize];
                let id = set.id(at);
                let slot = file.ids.1 as usize;
                files.ids[slot] = at;
                files.signatures[slot] = signature(id);
                files.name_signatures[slot] = signature(&id[file.len as usize..]);
                files.name_lengths[slot] = id.len() as u32 - file.len;
                file.ids.1 += 1;
            }
            Arc::new(files)
        });
        Arc::clone(files)
    }

    /// Up to `n` ids nearest a misspelt `id`, nearest first (then in byte order), as
    /// [`super::IdSet::nearest`] describes.
    pub(super) fn nearest<'s>(&self, set: &'s IdSetInner, id: &str, n: usize) -> Vec<&'s str> {
        if n == 0 {
            return Vec::new();
        }
        let chosen = self.candidates(set, id);
        let file = file_of(id);
        let name_len = id.len() - file.len();
        let mut found = match &chosen[..] {
            // Its own file: the ids and `id` share the file, which changes no distance,
            // so the names' signatures bound it (and rule out far more).
            [(files, f)] if files.text(set, *f) == file => {
                let (start, end) = files.files[*f as usize].ids;
                let range = start as usize..end as usize;
                let ids = files.ids[range.clone()]
                    .iter()
                    .zip(&files.name_lengths[range.clone()])
                    .zip(&files.name_signatures[range.clone()])
                    .map(|((&at, &len), &bits)| (at, len as usize, bits));
                let name_of = |at| &set.id(at)[file.len()..];
                let name = &id[file.len()..];
                let places = files.ids[range.clone()].iter().copied();
                let walk = walk(&files.names[*f as usize], places, name_of, name);
                let walk = walk.as_ref().map(|w| w as Walk);
                let found: Vec<(usize, u32, &str)> = nearest(ids, name_of, name, name_len, n, walk)
                    .into_iter()
                    .map(|(distance, at, _)| (distance, at, set.id(at)))
                    .collect();
                if !found.is_empty() || id.contains('[') {
                    found
                } else {
                    // A parametrized test misspelt by its function's id: its cases are
                    // far (their parameters), the function id they make is near.
                    let functions = files.functions[*f as usize].get_or_init(|| {
                        Functions::of(files.ids[range].iter().map(|&at| (at, name_of(at))))
                    });
                    let function_of = |at| {
                        let name = name_of(at);
                        &name[..name.find('[').unwrap_or(name.len())]
                    };
                    nearest(functions.iter(), function_of, name, name_len, n, None)
                        .into_iter()
                        .map(|(distance, at, function)| {
                            (distance, at, &set.id(at)[..file.len() + function.len()])
                        })
                        .collect()
                }
            }
            _ => {
                let ids = chosen.iter().flat_map(|(files, f)| {
                    let (start, end) = files.files[*f as usize].ids;
                    let range = start as usize..end as usize;
                    files.ids[range.clone()]
                        .iter()
                        .zip(&files.signatures[range])
                        .map(|(&at, &bits)| (at, set.id(at).len(), bits))
                });
                nearest(ids, |at| set.id(at), id, name_len, n, None)
            }
        };
        found.sort_unstable_by(|a, b| (a.0, a.2).cmp(&(b.0, b.2)));
        // A function id comes once however many of its cases were near.
        found.dedup_by(|a, b| a.2 == b.2);
        found.into_iter().take(n).map(|(_, _, text)| text).collect()
    }

    /// The files whose ids a misspelt `id` is compared with: its file; else the nearest
    /// files of its folder; else, when its folder is not there, the nearest files of the
    /// nearest folders.
    fn candidates(&self, set: &IdSetInner, id: &str) -> Vec<(Arc<Files>, u32)> {
        let file = file_of(id);
        let dir = dir_of(file);
        match self.folder(set, dir) {
            Some(place) => {
                let files = self.files_of(set, place);
                let same = files
                    .by_text
                    .find(hash_str(file), |&f| files.text(set, f) == file)
                    .copied();
                let near = match same {
                    Some(f) => vec![f],
                    None => {
                        let text = |f| files.text(set, f);
                        let walk = walk(&files.sorted, files.places(), text, file);
                        nearest_of(files.texts(), text, file, walk.as_ref().map(|w| w as Walk))
                    }
                    .into_iter()
                    .map(|(f, _)| f)
                    .collect(),
                };
                near.into_iter().map(|f| (Arc::clone(&files), f)).collect()
            }
            None => {
                let folders = self
                    .folders
                    .iter()
                    .enumerate()
                    .map(|(p, folder)| (p as u32, folder.len as usize, folder.signature));
                let text = |p| self.folder_text(set, p);
                let near_folders: Vec<Arc<Files>> = nearest_of(folders, text, dir, None)
                    .into_iter()
                    .map(|(p, _)| self.files_of(set, p))
                    .collect();
                let places: Vec<(usize, u32)> = near_folders
                    .iter()
                    .enumerate()
                    .flat_map(|(n, files)| (0..files.files.len() as u32).map(move |f| (n, f)))
                    .collect();
                let files = places.iter().enumerate().map(|(at, &(n, f))| {
                    let file = &near_folders[n].files[f as usize];
                    (at as u32, file.len as usize, file.signature)
                });
                let text = |at: u32| {
                    let (n, f) = places[at as usize];
                    near_folders[n].text(set, f)
                };
                // One folder near (the usual case): its files are places `0..`, walked
                // as they are sorted once for it.
                let walk = match &near_folders[..] {
                    [files] => walk(&files.sorted, files.places(), |f| files.text(set, f), file),
                    _ => None,
                };
                nearest_of(files, text, file, walk.as_ref().map(|w| w as Walk))
                    .into_iter()
                    .map(|(at, _)| {
                        let (n, f) = places[at as usize];
                        (Arc::clone(&near_folders[n]), f)
                    })
                    .collect()
            }
        }
    }
}

/// A file's parametrized functions, each once (by its first case's place), with the
/// length and signature of its name: a misspelt function id is compared with these, so
/// that one function's cases do not fill the suggestions.
#[derive(Debug, Default)]
struct Functions(Vec<(u32, usize, u64)>);

impl Functions {
    fn of<'a>(names: impl Iterator<Item = (u32, &'a str)>) -> Functions {
        let mut seen = rustc_hash::FxHashSet::default();
        Functions(
            names
                .filter_map(|(at, name)| {
                    let function = &name[..name.find('[')?];
                    seen.insert(function)
                        .then(|| (at, function.len(), signature(function)))
                })
                .collect(),
        )
    }

    fn iter(&self) -> impl Iterator<Item = (u32, usize, u64)> + '_ {
        self.0.iter().copied()
    }
}

impl Files {
    fn text<'s>(&self, set: &'s IdSetInner, f: u32) -> &'s str {
        let file = &self.files[f as usize];
        &set.id(file.id)[..file.len as usize]
    }

    /// The files' places.
    fn places(&self) -> std::ops::Range<u32> {
        0..self.files.len() as u32
    }

    /// Each file's place, length and signature, as [`nearest`] takes them.
    fn texts(&self) -> impl Iterator<Item = (u32, usize, u64)> + '_ {
        self.places().map(move |f| {
            (
                f,
                self.files[f as usize].len as usize,
                self.files[f as usize].signature,
            )
        })
    }
}

/// The index of a set, built on its first search.
pub(super) type Lazy = OnceLock<NearIndex>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_never_rule_out_a_text_within_the_bound() {
        let pairs = [
            ("test_prop1234.py", "test_porp1234.py"),
            ("tests/props", "tests/prosp"),
            ("a", "b"),
            ("", "ab"),
            ("test_één", "test_eén"),
            ("abcabcabc", "cbacbacba"),
        ];
        for (a, b) in pairs {
            let distance = strsim::levenshtein(a, b);
            let bound = at_least((a.len(), signature(a)), (b.len(), signature(b)));
            assert!(bound <= distance, "{a} / {b}: {bound} > {distance}");
        }
        let far = at_least(
            ("test_prop5678.py".len(), signature("test_prop5678.py")),
            ("test_porp1234.py".len(), signature("test_porp1234.py")),
        );
        assert!(far >= 3, "distinct digits rule a file out: {far}");
    }

    proptest::proptest! {
        #[test]
        fn the_bound_never_exceeds_the_distance(
            a in "[a-z_0-9]{0,24}",
            edits in proptest::collection::vec((0usize..24, "[a-z_0-9]", 0u8..3), 0..6),
        ) {
            // A text and an edited copy of it: near pairs, where a wrong bound would
            // hide the answer.
            let mut b: Vec<char> = a.chars().collect();
            for (at, with, kind) in edits {
                let at = at.min(b.len());
                let with = with.chars().next().unwrap();
                match kind {
                    0 => b.insert(at, with),
                    1 if at < b.len() => { b.remove(at); }
                    _ if at < b.len() => b[at] = with,
                    _ => b.push(with),
                }
            }
            let b: String = b.into_iter().collect();
            let bound = at_least((a.len(), signature(&a)), (b.len(), signature(&b)));
            proptest::prop_assert!(bound <= strsim::levenshtein(&a, &b), "{} / {}: {}", a, b, bound);
        }
    }
}
