//! The hash index of an [`IdSet`](super::IdSet): where each id is, found by its hash.
//!
//! A million collected ids are indexed on every check, and a general-purpose table spends
//! most of that time waiting on memory: each insert lands on a random cache line of a
//! ten-megabyte table (`hashbrown`: 110 ns an id on the large benchmark's collection, two
//! cache misses). This index is one array of slots, so the slot an id's hash names can be
//! fetched ahead ([`IdIndex::prefetch`]): a bulk insert asks for the slots of the next ids
//! while it fills the current ones, and the waits overlap (a third of the time, in half
//! the memory).

/// Open addressing with linear probing over `u32` slots, each `0` (empty) or an id's
/// place plus one in the low bits and, in the bits a place does not need, the top bits
/// of its hash: a probe reads an id's text only when those match. A million ids take 1.35
/// million slots, whose places need 21 bits, which leaves 11 of hash (one false match in
/// 2,048 probes); four billion leave none, and are still found, by their text.
#[derive(Debug, Default)]
pub struct IdIndex {
    slots: Vec<u32>,
    /// How many low bits of a slot hold a place.
    place_bits: u32,
    len: usize,
}

/// How many ids a bulk insert hashes and prefetches ahead of the one it fills.
pub const AHEAD: usize = 16;

impl IdIndex {
    /// An index with room for the places `0..n` before it grows.
    pub fn with_capacity(n: usize) -> IdIndex {
        let slots = Self::slots_for(n);
        IdIndex {
            slots: vec![0; slots],
            place_bits: Self::place_bits_for(slots),
            len: 0,
        }
    }

    /// At most three slots in four full (a probe rarely leaves its cache line), with
    /// `n` ids: `4n < 3 * slots`.
    fn slots_for(n: usize) -> usize {
        (n + n / 3 + 2).max(8)
    }

    /// The bits for a place plus one, for every place an index of `slots` slots holds.
    fn place_bits_for(slots: usize) -> u32 {
        (usize::BITS - slots.leading_zeros()).min(32)
    }

    fn place_mask(&self) -> u32 {
        u32::MAX.checked_shr(32 - self.place_bits).unwrap_or(0)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.len
    }

    /// The first slot of a hash: its low bits scaled to the table (no power-of-two size,
    /// so the table is no larger than its load needs).
    fn home(&self, hash: u64) -> usize {
        ((u64::from(hash as u32) * self.slots.len() as u64) >> 32) as usize
    }

    /// The hash bits a slot keeps beside its place: the top ones, in the bits above it.
    fn tag(&self, hash: u64) -> u32 {
        let high = (hash >> 32) as u32;
        high.checked_shl(self.place_bits).unwrap_or(0)
    }

    fn slot(&self, hash: u64, place: u32) -> u32 {
        self.tag(hash) | (place + 1)
    }

    /// The place in a full slot.
    fn place_in(&self, slot: u32) -> u32 {
        (slot & self.place_mask()) - 1
    }

    /// Starts fetching the slot `hash` leads to, for an insert or a find soon after.
    pub fn prefetch(&self, hash: u64) {
        if let Some(slot) = self.slots.get(self.home(hash)) {
            prefetch(slot);
        }
    }

    /// The place of the id with this hash that `is_at` accepts.
    pub fn find(&self, hash: u64, is_at: impl Fn(u32) -> bool) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        self.probe(hash, is_at).ok()
    }

    /// The place of the id with this hash that `is_at` accepts, or, when there is none,
    /// records `place` for it and says `None`. `hash_at` gives the hash of the id at a
    /// place, for when the index grows.
    pub fn find_or_insert(
        &mut self,
        hash: u64,
        place: u32,
        is_at: impl Fn(u32) -> bool,
        hash_at: impl Fn(u32) -> u64,
    ) -> Option<u32> {
        let fits = place < self.place_mask();
        if (self.len + 1) * 4 > self.slots.len() * 3 || !fits {
            self.grow(place, hash_at);
        }
        match self.probe(hash, is_at) {
            Ok(found) => Some(found),
            Err(empty) => {
                self.slots[empty] = self.slot(hash, place);
                self.len += 1;
                None
            }
        }
    }

    /// From the hash's first slot on: the place of the id `is_at` accepts, or the first
    /// empty slot (there is one: the index is never full).
    fn probe(&self, hash: u64, is_at: impl Fn(u32) -> bool) -> Result<u32, usize> {
        let (tag, mask) = (self.tag(hash), self.place_mask());
        let mut at = self.home(hash);
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                return Err(at);
            }
            if slot & !mask == tag && is_at(self.place_in(slot)) {
                return Ok(self.place_in(slot));
            }
            at = self.next(at);
        }
    }

    fn next(&self, at: usize) -> usize {
        if at + 1 == self.slots.len() {
            0
        } else {
            at + 1
        }
    }

    /// Room for twice the ids, or up to `place`, every id placed again by its hash.
    fn grow(&mut self, place: u32, hash_at: impl Fn(u32) -> u64) {
        let n = (self.len * 2 + 8).max(place as usize + 1);
        let old = std::mem::replace(self, IdIndex::with_capacity(n));
        let old_mask = old.place_mask();
        for slot in old.slots.into_iter().filter(|&slot| slot != 0) {
            let place = (slot & old_mask) - 1;
            let hash = hash_at(place);
            // Every id is new to the new index: its probe ends at an empty slot.
            if let Err(empty) = self.probe(hash, |_| false) {
                self.slots[empty] = self.slot(hash, place);
            }
        }
        self.len = old.len;
    }

    /// How many slots the index has.
    #[cfg(test)]
    fn capacity(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(target_arch = "x86_64")]
fn prefetch(slot: &u32) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: a prefetch is a hint; it reads nothing and the address is a live slot.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(slot).cast()) }
}

/// Elsewhere an early load the result of which is not waited for does the same.
#[cfg(not(target_arch = "x86_64"))]
fn prefetch(slot: &u32) {
    std::hint::black_box(*slot);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(text: &str) -> u64 {
        use std::hash::BuildHasher;
        rustc_hash::FxBuildHasher.hash_one(text)
    }

    /// An index over `words` built one insert at a time, growing from empty.
    fn indexed<'w>(words: &[&'w str]) -> (IdIndex, Vec<&'w str>) {
        let mut index = IdIndex::default();
        let mut kept: Vec<&str> = Vec::new();
        for word in words {
            let place = kept.len() as u32;
            let found = index.find_or_insert(
                hash(word),
                place,
                |at| kept[at as usize] == *word,
                |at| hash(kept[at as usize]),
            );
            if found.is_none() {
                kept.push(word);
            }
        }
        (index, kept)
    }

    #[test]
    fn inserts_keep_the_first_place_of_each_id_through_growth() {
        let words: Vec<String> = (0..5_000)
            .map(|i| format!("t.py::test_{}", i % 3_001))
            .collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let (index, kept) = indexed(&words);
        assert_eq!(kept.len(), 3_001);
        assert_eq!(index.len(), 3_001);
        for (place, word) in kept.iter().enumerate() {
            let found = index.find(hash(word), |at| kept[at as usize] == *word);
            assert_eq!(found, Some(place as u32), "{word}");
        }
        assert_eq!(
            index.find(hash("t.py::test_3001"), |at| kept[at as usize]
                == "t.py::test_3001"),
            None
        );
        assert!(
            index.capacity() * 3 >= index.len() * 4,
            "at most three slots in four full"
        );
    }

    #[test]
    fn an_index_made_for_n_ids_holds_them_without_growing() {
        for n in [0, 1, 2, 3, 5, 7, 100, 1_010_000] {
            let mut index = IdIndex::with_capacity(n);
            let slots = index.capacity();
            for place in 0..n as u32 {
                let hash = u64::from(place).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                assert_eq!(
                    index.find_or_insert(hash, place, |_| false, |_| unreachable!()),
                    None
                );
            }
            assert_eq!(index.capacity(), slots, "{n} ids");
        }
    }

    #[test]
    fn a_place_beyond_the_room_grows_the_index() {
        // Eight slots keep 4 bits for a place: place 100 needs 7.
        let mut index = IdIndex::with_capacity(2);
        assert_eq!(index.place_bits, 4);
        assert_eq!(index.find_or_insert(5, 0, |_| false, |_| 5), None);
        assert_eq!(index.find_or_insert(9, 100, |_| false, |_| 5), None);
        assert!(index.place_bits >= 7);
        assert_eq!(index.find(5, |at| at == 0), Some(0));
        assert_eq!(index.find(9, |at| at == 100), Some(100));
    }

    #[test]
    fn ids_whose_hashes_collide_are_told_apart_by_their_text() {
        // One hash for every id: every probe meets equal hash bits, and only the text
        // comparison decides.
        let words = ["a.py::x", "a.py::y", "a.py::x", "a.py::z", "a.py::y"];
        let mut index = IdIndex::with_capacity(2);
        let mut kept: Vec<&str> = Vec::new();
        for word in words {
            if index
                .find_or_insert(7, kept.len() as u32, |at| kept[at as usize] == word, |_| 7)
                .is_none()
            {
                kept.push(word);
            }
        }
        assert_eq!(kept, ["a.py::x", "a.py::y", "a.py::z"]);
        assert_eq!(index.find(7, |at| kept[at as usize] == "a.py::z"), Some(2));
        assert_eq!(index.find(7, |at| kept[at as usize] == "a.py::w"), None);
    }

    #[test]
    fn the_last_slot_wraps_to_the_first() {
        // The largest hash lands on the last slot; the next id with it goes to slot 0.
        let mut index = IdIndex::with_capacity(4);
        let last = u64::MAX;
        assert_eq!(index.home(last), index.capacity() - 1);
        for place in 0..3u32 {
            assert_eq!(
                index.find_or_insert(last, place, |at| at == place, |_| last),
                None
            );
        }
        for place in 0..3u32 {
            assert_eq!(index.find(last, |at| at == place), Some(place));
        }
        assert_eq!(
            index.place_in(index.slots[0]),
            1,
            "the second id wrapped to slot 0"
        );
        assert_eq!(index.len(), 3);
        assert_eq!(IdIndex::default().find(1, |_| true), None);
    }
}
