//! The pytest node-id grammar, and where a node id's file is in the repository.

/// The part of a node id before its parameters: `a.py::t[x::y]` → `a.py::t`.
pub fn strip_params(node_id: &str) -> &str {
    node_id.split_once('[').map_or(node_id, |(head, _)| head)
}

/// The file a node id lives in, relative to pytest's rootdir.
pub fn file_of(node_id: &str) -> &str {
    let head = strip_params(node_id);
    first_double_colon(head.as_bytes()).map_or(head, |at| &head[..at])
}

/// Whether `s` looks like a pytest node id: `path::name(::name)*` with optional `[params]`.
pub fn is_node_id(s: &str) -> bool {
    // pytest's ids are relative to its rootdir: a drive (`C:/repo/a.py::t`, from a
    // Windows path) names no collected test.
    !crate::paths::is_rooted(s)
        && ascii_node_id(s.as_bytes()).unwrap_or_else(|| is_node_id_chars(s))
}

// Byte classes for [`ascii_node_id`], in an order where one comparison ends a run of
// file bytes (`<= FILE`).
/// Allowed in a file path and in a name: `[A-Za-z0-9_.-]`.
const NAME: u8 = 0;
/// Allowed in a file path only: other printable ASCII but `\\`, `:` and `[`.
const FILE: u8 = 1;
const COLON: u8 = 2;
const BRACKET: u8 = 3;
const BAD: u8 = 4;
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
    if b.first().is_none_or(|&c| c == b'/') {
        return Some(false);
    }
    let n = b.len();
    let class = |c: u8| CLASSES[usize::from(c)];
    // The file part, up to the first `::`.
    let mut i = 0;
    loop {
        i = skip_words(b, i, file_bytes);
        while i < n && class(b[i]) <= FILE {
            i += 1;
        }
        match b.get(i).map(|&c| class(c)) {
            Some(COLON) if b.get(i + 1) == Some(&b':') => break,
            Some(COLON) => i += 1,
            Some(NON_ASCII) => return None,
            _ => return Some(false), // the end, a bracket or a space before any `::`
        }
    }
    if i == 0 {
        return Some(false);
    }
    // One or more names, each after a `::`, then optional `[params]` (any text).
    loop {
        i += 2;
        match b.get(i) {
            Some(&c) if class(c) == NAME && !c.is_ascii_digit() => {}
            Some(&c) if class(c) == NON_ASCII => return None,
            _ => return Some(false),
        }
        i = skip_words(b, i, name_bytes);
        while i < n && class(b[i]) == NAME {
            i += 1;
        }
        match b.get(i).map(|&c| class(c)) {
            None => return Some(true),
            Some(COLON) if b.get(i + 1) == Some(&b':') => {}
            Some(BRACKET) => return Some(n - i >= 2 && b[n - 1] == b']'),
            Some(NON_ASCII) => return None,
            _ => return Some(false),
        }
    }
}

/// Where a run of the bytes `accepted` marks, from `i`, ends, read eight at a time (a
/// million ids of some fifty bytes are read a word, not a byte, at a time); the last
/// few bytes are left to the byte-wise scan.
fn skip_words(b: &[u8], mut i: usize, accepted: impl Fn(u64) -> u64) -> usize {
    while let Some(word) = b.get(i..i + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) {
        let rejected = !accepted(u64::from_le_bytes(word)) & HIGH;
        if rejected != 0 {
            // The first byte in memory is the lowest of a little-endian word.
            return i + (rejected.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i
}

const LOW: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `x` in `lo..=hi`, for the bytes up to the first that is
/// not ASCII: adding `0x80 - lo` sets it from `lo` on, adding `0x7f - hi` from beyond
/// `hi`, and an ASCII byte never carries into the next one.
fn within(x: u64, lo: u8, hi: u8) -> u64 {
    let from_lo = x.wrapping_add(LOW * u64::from(0x80 - lo));
    let beyond_hi = x.wrapping_add(LOW * u64::from(0x7f - hi));
    from_lo & !beyond_hi & HIGH
}

/// The high bit of each byte of `x` (up to its first non-ASCII byte) that is a [`FILE`]
/// or [`NAME`] byte: printable ASCII but `\\`, `:` and `[`.
fn file_bytes(x: u64) -> u64 {
    let excluded = within(x, b'\\', b'\\') | within(x, b':', b':') | within(x, b'[', b'[');
    within(x, b'!', b'~') & !excluded & !x
}

/// The high bit of each byte of `x` (up to its first non-ASCII byte) that is a [`NAME`]
/// byte: `[A-Za-z0-9_.-]`.
fn name_bytes(x: u64) -> u64 {
    let letters = within(x | (LOW * 0x20), b'a', b'z');
    (letters | within(x, b'0', b'9') | within(x, b'-', b'.') | within(x, b'_', b'_')) & !x
}

/// Where the first `::` begins, found by its first byte (a `str` pattern search is set
/// up anew on every call, and did-you-mean calls [`file_of`] for every id of a folder).
fn first_double_colon(b: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = memchr::memchr(b':', &b[from..]).map(|i| from + i) {
        if b.get(at + 1) == Some(&b':') {
            return Some(at);
        }
        from = at + 1;
    }
    None
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

use crate::paths;

/// Joins pytest's rootdir (relative to the repository root) with a node id's file.
pub fn repo_file(pytest_root: &str, node_id: &str) -> String {
    let file = file_of(node_id);
    if pytest_root.is_empty() {
        paths::normalize(file)
    } else {
        paths::normalize(&format!("{pytest_root}/{file}"))
    }
}

/// A repository path as diagnostics name suite files: relative to pytest's rootdir
/// (`../` up from it for a file outside).
pub fn suite_file(pytest_root: &str, repo_file: &str) -> String {
    if pytest_root.is_empty() {
        return repo_file.to_string();
    }
    match repo_file.strip_prefix(&format!("{pytest_root}/")) {
        Some(rest) => rest.to_string(),
        None => format!(
            "{}{repo_file}",
            "../".repeat(pytest_root.split('/').count())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_word_at_a_time_stops_at_the_byte_the_table_does() {
        // Every byte at every place of a word, after bytes both scans accept and before
        // one they accept or not (`é`'s first byte, `:`, `[`, a space, `0xff`).
        for at in 0..8 {
            for c in 0..=255u8 {
                for after in [b'a', 0xc3, b':', b'[', b' ', 0xff] {
                    let mut bytes = [after; 12];
                    bytes[..at].fill(b'a');
                    bytes[at] = c;
                    let class = CLASSES[usize::from(c)];
                    for (scan, accepted) in [
                        (file_bytes as fn(u64) -> u64, class <= FILE),
                        (name_bytes, class == NAME),
                    ] {
                        let stop = skip_words(&bytes, 0, scan);
                        assert!(stop >= at, "{c:#x} at {at}, then {after:#x}");
                        assert_eq!(stop == at, !accepted, "{c:#x} at {at}, then {after:#x}");
                    }
                }
            }
        }
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
        // Windows: pytest's ids use `/` there too; a backslash or a drive is no id.
        assert!(!is_node_id("tests\\test_a.py::test_x"));
        assert!(!is_node_id("C:/repo/tests/test_a.py::test_x"));
        assert!(!is_node_id("c:/é/t.py::t"));
        assert!(is_node_id("C::test_x"), "a file named C");
        assert!(!is_node_id("t.py::t[unclosed"));
    }

    #[test]
    fn file_of_splits_at_the_first_bracket() {
        assert_eq!(file_of("a/b.py::T::t[x::y]"), "a/b.py");
        assert_eq!(file_of("a/b:c.py::t"), "a/b:c.py");
        assert_eq!(file_of("a.py:::t"), "a.py");
        assert_eq!(file_of("a.py:"), "a.py:");
        assert_eq!(file_of("a.py"), "a.py");
        assert_eq!(repo_file("backend", "tests/t.py::x"), "backend/tests/t.py");
        assert_eq!(repo_file("", "./tests/t.py::x"), "tests/t.py");
    }
}
