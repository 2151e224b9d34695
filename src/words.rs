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

/// `k` of a whole of `n`: "the one mutant" (1 of 1), "0 of 1 mutant", "none of the 3
/// mutants", "2 of 3 mutants". The one way a message counts part of a whole.
pub fn part_of(k: i64, n: i64, word: &str) -> String {
    match (k, n) {
        (1, 1) => format!("the one {word}"),
        (0, n) if n.abs() != 1 => format!("none of the {}", count(n, word)),
        (k, n) => format!("{k} of {}", count(n, word)),
    }
}

/// Every one of a whole of `n`: "the one mutant" (of 1), "each of the 3 mutants".
pub fn each_of(n: i64, word: &str) -> String {
    match n {
        1 => format!("the one {word}"),
        n => format!("each of the {}", count(n, word)),
    }
}

/// The whole of `n`: "the one mutant" (of 1), "the 3 mutants".
pub fn the_whole(n: i64, word: &str) -> String {
    match n {
        1 => format!("the one {word}"),
        n => format!("the {}", count(n, word)),
    }
}

/// "a", "a or b", "a, b or c".
pub fn join_or<S: AsRef<str>>(items: &[S]) -> String {
    join(items, "or")
}

/// "a", "a and b", "a, b and c".
pub fn join_and<S: AsRef<str>>(items: &[S]) -> String {
    join(items, "and")
}

/// "a, b and c", and past the first `shown` items "a, b, c and 2 more".
pub fn join_and_more<S: AsRef<str>>(items: &[S], shown: usize) -> String {
    if items.len() <= shown {
        return join_and(items);
    }
    let mut named: Vec<&str> = items[..shown].iter().map(AsRef::as_ref).collect();
    let more = format!("{} more", items.len() - shown);
    named.push(&more);
    join_and(&named)
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
    fn a_long_list_names_its_first_items_and_counts_the_rest() {
        assert_eq!(join_and_more(&["a", "b"], 3), "a and b");
        assert_eq!(join_and_more(&["a", "b", "c"], 3), "a, b and c");
        assert_eq!(
            join_and_more(&["a", "b", "c", "d", "e"], 3),
            "a, b, c and 2 more"
        );
        assert_eq!(join_and_more(&["a", "b"], 0), "2 more");
    }

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
    fn parts_of_a_whole_read_as_words() {
        assert_eq!(part_of(1, 1, "mutant"), "the one mutant");
        assert_eq!(part_of(0, 1, "mutant"), "0 of 1 mutant");
        assert_eq!(part_of(0, 3, "mutant"), "none of the 3 mutants");
        assert_eq!(part_of(1, 3, "mutant"), "1 of 3 mutants");
        assert_eq!(part_of(3, 3, "mutant"), "3 of 3 mutants");
        assert_eq!(each_of(1, "mutant"), "the one mutant");
        assert_eq!(each_of(2, "mutant"), "each of the 2 mutants");
        assert_eq!(the_whole(1, "mutant"), "the one mutant");
        assert_eq!(the_whole(4, "mutant"), "the 4 mutants");
    }

    #[test]
    fn lists_join_with_their_last_word() {
        assert_eq!(join_or::<&str>(&[]), "");
        assert_eq!(join_or(&["a"]), "a");
        assert_eq!(join_or(&["a", "b"]), "a or b");
        assert_eq!(join_and(&["a", "b", "c"]), "a, b and c");
    }
}
