//! Counts and lists in the words of a message: "1 day", "2 days", "a, b or c".

/// `n` and the word, plural unless `n` is 1 or -1: "1 day", "0 days", "3 freezes".
/// Words of this product's messages take `-s`; an irregular one goes through
/// [`count_as`].
pub fn count(n: i64, word: &str) -> String {
    count_as(n, word, &format!("{word}s"))
}

/// [`count`] with the plural given.
pub fn count_as(n: i64, singular: &str, plural: &str) -> String {
    let word = if n.abs() == 1 { singular } else { plural };
    format!("{n} {word}")
}

/// [`count`] of a collection's length.
pub fn count_of(n: usize, word: &str) -> String {
    count(i64::try_from(n).unwrap_or(i64::MAX), word)
}

/// "a", "a or b", "a, b or c".
pub fn join_or<S: AsRef<str>>(items: &[S]) -> String {
    join(items, "or")
}

/// "a", "a and b", "a, b and c".
pub fn join_and<S: AsRef<str>>(items: &[S]) -> String {
    join(items, "and")
}

fn join<S: AsRef<str>>(items: &[S], last: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_string(),
        [init @ .., tail] => {
            let init: Vec<&str> = init.iter().map(AsRef::as_ref).collect();
            format!("{} {last} {}", init.join(", "), tail.as_ref())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_singular_only_for_one() {
        assert_eq!(count(1, "day"), "1 day");
        assert_eq!(count(-1, "day"), "-1 day");
        assert_eq!(count(0, "day"), "0 days");
        assert_eq!(count(2, "freeze"), "2 freezes");
        assert_eq!(count_as(1, "entry", "entries"), "1 entry");
        assert_eq!(count_as(3, "entry", "entries"), "3 entries");
    }

    #[test]
    fn lists_join_with_their_last_word() {
        assert_eq!(join_or::<&str>(&[]), "");
        assert_eq!(join_or(&["a"]), "a");
        assert_eq!(join_or(&["a", "b"]), "a or b");
        assert_eq!(join_and(&["a", "b", "c"]), "a, b and c");
    }
}
