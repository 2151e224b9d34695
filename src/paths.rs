//! Paths as the gate compares them: lexical, `/`-separated, never touching the disk.

/// `a/./b/../c` → `a/c`: backslashes become slashes, surrounding whitespace and empty
/// or `.` parts go, a `..` undoes the part before it; a `..` with nothing before it to
/// undo stays (`../x`), and a leading `/` stays (`/..` is `/`).
pub fn normalize(path: &str) -> String {
    let path = path.trim().replace('\\', "/");
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if absolute => {}
                _ => parts.push(".."),
            },
            name => parts.push(name),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// Whether [`normalize`] certainly leaves a relative path as it is (checked without
/// allocating, for the common case of a file that is already canonical).
pub fn is_canonical(path: &str) -> bool {
    !path.contains('\\')
        && path.trim() == path
        && path.split('/').all(|part| !matches!(part, "" | "." | ".."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizing_is_lexical() {
        for (path, normal) in [
            ("a/b.py", "a/b.py"),
            ("a//b.py", "a/b.py"),
            ("./a.py", "a.py"),
            ("a/./b", "a/b"),
            ("a/../b", "b"),
            ("a\\b.py", "a/b.py"),
            (" a/ ", "a"),
            ("..", ".."),
            ("../../x", "../../x"),
            ("a/../../x", "../x"),
            ("/a/b/../c/./d", "/a/c/d"),
            ("/..", "/"),
            ("é/ü.py", "é/ü.py"),
        ] {
            assert_eq!(normalize(path), normal, "{path}");
            assert!(!is_canonical(path) || normalize(path) == path, "{path}");
            assert!(is_canonical(normal) || normal.starts_with(['/', '.']) || normal == "..");
        }
    }
}
