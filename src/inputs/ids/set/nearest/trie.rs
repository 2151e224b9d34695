//! A file's names (or a folder's files) walked as a trie, for the searches a bigram
//! signature cannot narrow.
//!
//! The names of one file share most of their text (`test_property_1234`, `…_1235`): a
//! misspelt one is within a few edits of hundreds of them by its signature, and ties at
//! the last distance kept must all be compared. Walked in byte order, names that share a
//! prefix share the rows of the edit distance table for it, only the cells within the
//! limit of the diagonal are computed, and every name under a prefix already past the
//! limit is skipped, counting what is left of the misspelt name that the longest name
//! under the prefix is too short to match: a search reads the few prefixes near the
//! misspelt name, not every name.

use super::super::levenshtein;

/// Texts in byte order, each with the length of the prefix it shares with the one before.
#[derive(Debug, Default)]
pub(super) struct Sorted {
    places: Vec<u32>,
    shared: Vec<u32>,
    /// The prefixes each text begins: for the text at `i`, those one longer than
    /// `shared[i]` and on are at `first_prefix[i]..`.
    prefixes: Vec<Prefix>,
    first_prefix: Vec<u32>,
    /// The lengths of the texts, each once, shortest first.
    lengths: Vec<usize>,
    /// The texts that are not ASCII, compared one by one: the distance counts characters.
    others: Vec<u32>,
}

/// A prefix of the texts, as a trie's node.
#[derive(Debug, Clone, Copy, Default)]
struct Prefix {
    /// The place in `places` of the first text after it that does not begin with it.
    end: u32,
    /// The length of the longest text that begins with it.
    longest: u32,
}

impl Sorted {
    pub(super) fn new<'a>(texts: impl Iterator<Item = (u32, &'a str)>) -> Sorted {
        let mut ascii: Vec<(u32, &str)> = Vec::new();
        let mut others: Vec<u32> = Vec::new();
        for (place, text) in texts {
            if text.is_ascii() {
                ascii.push((place, text));
            } else {
                others.push(place);
            }
        }
        ascii.sort_unstable_by(|a, b| a.1.cmp(b.1));
        let mut before = "";
        let shared: Vec<u32> = ascii
            .iter()
            .map(|&(_, text)| {
                let common = before
                    .bytes()
                    .zip(text.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                before = text;
                common as u32
            })
            .collect();
        let (prefixes, first_prefix) = prefixes(&ascii, &shared);
        let mut lengths: Vec<usize> = ascii.iter().map(|(_, text)| text.len()).collect();
        lengths.sort_unstable();
        lengths.dedup();
        Sorted {
            lengths,
            places: ascii.into_iter().map(|(place, _)| place).collect(),
            shared,
            prefixes,
            first_prefix,
            others,
        }
    }

    /// The texts at most `bound` edits from `to` (ASCII), with their distance and place:
    /// every one as near as the `keep`-th nearest, and maybe some farther. Walked at each
    /// limit in turn from the least any text's length allows: most misspelt ids are a
    /// few edits from what they meant, and a walk at a small limit reads few prefixes.
    pub(super) fn nearest<'a>(
        &self,
        text: impl Fn(u32) -> &'a str + Copy,
        to: &str,
        bound: usize,
        keep: usize,
    ) -> Vec<(usize, u32, &'a str)> {
        let by_length = self.lengths.iter().map(|len| len.abs_diff(to.len())).min();
        let from = match by_length {
            Some(least) if self.others.is_empty() => least,
            _ => 0,
        };
        let mut found = Vec::new();
        for limit in from..=bound {
            found = self.within(text, to, limit, keep);
            if found.len() >= keep {
                break;
            }
        }
        found
    }

    /// The texts at most `limit` edits from `to` (ASCII), with their distance and place:
    /// every one of them as near as the `keep`-th nearest, and maybe some farther (once
    /// `keep` are found, the walk narrows to the distance of the `keep`-th).
    pub(super) fn within<'a>(
        &self,
        text: impl Fn(u32) -> &'a str,
        to: &str,
        mut limit: usize,
        keep: usize,
    ) -> Vec<(usize, u32, &'a str)> {
        debug_assert!(to.is_ascii());
        let mut found: Vec<(usize, u32, &str)> = self
            .others
            .iter()
            .filter_map(|&place| {
                let other = text(place);
                let distance = levenshtein(other, to);
                (distance <= limit).then_some((distance, place, other))
            })
            .collect();
        // How many were found at each distance.
        let mut at_distance = vec![0usize; limit + 1];
        let mut narrow = |distance: usize, limit: &mut usize| {
            at_distance[distance] += 1;
            let mut nearer = 0;
            for (distance, count) in at_distance[..=*limit].iter().enumerate() {
                nearer += count;
                if nearer >= keep {
                    *limit = distance;
                    return;
                }
            }
        };
        for &(distance, _, _) in &found {
            narrow(distance, &mut limit);
        }
        let to = to.as_bytes();
        let width = to.len() + 1;
        // A cell holds the distance when at most `limit`, else `past`.
        let past = limit as u32 + 1;
        let longest = self.lengths.last().copied().unwrap_or(0);
        let mut rows = vec![past; (longest + 1) * width];
        for (j, cell) in rows[..width].iter_mut().enumerate() {
            *cell = (j as u32).min(past);
        }
        // Rows 0..=valid are those of the text before's first `valid` bytes.
        let mut valid = 0;
        let mut at = 0;
        while at < self.places.len() {
            let (begins, place) = (at, self.places[at]);
            let name = text(place);
            let shared = self.shared[at] as usize;
            // The prefixes computed below are those this text begins.
            let prefix = |depth: usize| {
                self.prefixes[self.first_prefix[begins] as usize + depth - shared - 1]
            };
            let mut depth = valid.min(shared);
            let mut beyond = false;
            while depth < name.len() {
                let (before, after) = rows.split_at_mut((depth + 1) * width);
                let (above, row) = (&before[depth * width..], &mut after[..width]);
                depth += 1;
                // Cells farther than `limit` from the diagonal are past it.
                let low = depth.saturating_sub(limit);
                let high = (depth + limit).min(to.len());
                if low > 0 {
                    row[low - 1] = past;
                }
                if high < to.len() {
                    row[high + 1] = past;
                }
                let byte = name.as_bytes()[depth - 1];
                // What is left of `to` after a cell is matched by at most `rest` bytes
                // of any text under this prefix: a cell's distance grows by the rest.
                let rest = prefix(depth).longest as usize - depth;
                let mut least = past;
                for j in low..=high {
                    let cell = if j == 0 {
                        depth as u32
                    } else {
                        (above[j - 1] + u32::from(to[j - 1] != byte))
                            .min(above[j] + 1)
                            .min(row[j - 1] + 1)
                    }
                    .min(past);
                    row[j] = cell;
                    let unmatched = (to.len() - j).saturating_sub(rest) as u32;
                    least = least.min(cell + unmatched);
                }
                if least > limit as u32 {
                    beyond = true;
                    break;
                }
            }
            valid = depth;
            at += 1;
            if beyond {
                // Every text that begins with this prefix is as far.
                at = prefix(depth).end as usize;
            } else {
                let distance = rows[depth * width + to.len()] as usize;
                if distance <= limit {
                    found.push((distance, place, name));
                    narrow(distance, &mut limit);
                }
            }
        }
        found
    }
}

/// For each text, the prefixes it begins (one longer than what it shares with the text
/// before, and on), as [`Sorted`] keeps them.
fn prefixes(sorted: &[(u32, &str)], shared: &[u32]) -> (Vec<Prefix>, Vec<u32>) {
    let mut prefixes: Vec<Prefix> = Vec::new();
    let mut first_prefix = Vec::with_capacity(sorted.len());
    // The prefixes not yet ended, shortest first: their length and place in `prefixes`.
    let mut open: Vec<(u32, u32)> = Vec::new();
    let close = |prefixes: &mut Vec<Prefix>, open: &mut Vec<(u32, u32)>, end: usize| {
        let (_, closed) = open.pop().unwrap_or_default();
        let closed = &mut prefixes[closed as usize];
        closed.end = end as u32;
        let longest = closed.longest;
        // The prefix it extends holds its texts too.
        if let Some(&(_, parent)) = open.last() {
            let parent = &mut prefixes[parent as usize];
            parent.longest = parent.longest.max(longest);
        }
    };
    for (at, (&(_, text), &common)) in sorted.iter().zip(shared).enumerate() {
        while open.last().is_some_and(|&(len, _)| len > common) {
            close(&mut prefixes, &mut open, at);
        }
        first_prefix.push(prefixes.len() as u32);
        let len = text.len() as u32;
        if let Some(&(_, parent)) = open.last() {
            let parent = &mut prefixes[parent as usize];
            parent.longest = parent.longest.max(len);
        }
        for depth in common + 1..=len {
            open.push((depth, prefixes.len() as u32));
            prefixes.push(Prefix {
                end: 0,
                longest: len,
            });
        }
    }
    while !open.is_empty() {
        close(&mut prefixes, &mut open, sorted.len());
    }
    (prefixes, first_prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn the_walk_finds_what_comparing_each_text_finds(
            texts in proptest::collection::btree_set("[ab_1-3]{0,12}|[a\u{e9}]{0,3}", 0..40),
            to in "[ab_1-3]{0,12}",
            limit in 0usize..6,
            keep in 1usize..6,
        ) {
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            let sorted = Sorted::new(texts.iter().enumerate().map(|(i, t)| (i as u32, *t)));
            let mut compared: Vec<(usize, u32, &str)> = texts
                .iter()
                .enumerate()
                .map(|(i, t)| (strsim::levenshtein(t, &to), i as u32, *t))
                .filter(|(distance, _, _)| *distance <= limit)
                .collect();
            compared.sort_unstable();
            let mut walked = sorted.within(|i| texts[i as usize], &to, limit, usize::MAX);
            walked.sort_unstable();
            proptest::prop_assert_eq!(&walked, &compared);
            // Keeping a few: every one as near as the last kept, none beyond the limit.
            let mut kept = sorted.within(|i| texts[i as usize], &to, limit, keep);
            kept.sort_unstable();
            if let Some(&(last, _, _)) = compared.get(keep - 1) {
                compared.retain(|f| f.0 <= last);
                kept.retain(|f| f.0 <= last);
            }
            proptest::prop_assert_eq!(kept, compared);
        }
    }
}
