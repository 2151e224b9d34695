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

/// Whether `path` is rooted on some platform, so no repository-relative path: `/x`, `\x`,
/// a drive (`C:\x`, `C:/x`, `c:`) or a UNC share (`\\server\share`). The gate runs on
/// Windows too, where a path pasted from Explorer or printed by a tool carries a drive:
/// taken as relative, it would name no file of the repository, silently.
pub fn is_rooted(path: &str) -> bool {
    let b = path.as_bytes();
    match b {
        [b'/' | b'\\', ..] => true,
        [drive, b':', rest @ ..] if drive.is_ascii_alphabetic() => {
            matches!(rest, [] | [b'/' | b'\\', ..])
        }
        _ => false,
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

    #[test]
    fn windows_paths_normalize_to_slashes_and_drives_are_rooted() {
        for (path, normal) in [
            ("tests\\unit\\test_a.py", "tests/unit/test_a.py"),
            ("tests\\.\\unit\\..\\test_a.py", "tests/test_a.py"),
            ("C:\\repo\\tests\\a.py", "C:/repo/tests/a.py"),
            ("tests/mixed\\sep.py", "tests/mixed/sep.py"),
        ] {
            assert_eq!(normalize(path), normal, "{path}");
            assert!(!is_canonical(path), "{path} needs normalizing");
        }
        for rooted in [
            "/abs/a.py",
            "\\abs\\a.py",
            "C:\\repo\\a.py",
            "c:/repo/a.py",
            "D:",
            "\\\\server\\share\\a.py",
            "//server/share/a.py",
        ] {
            assert!(is_rooted(rooted), "{rooted}");
        }
        // Relative, though some hold a colon: `C::t` is a node id's file `C`.
        for relative in [
            "a.py",
            "tests/a.py",
            "ab:/x.py",
            "C::test",
            "1:/x",
            "a:b.py",
            "",
        ] {
            assert!(!is_rooted(relative), "{relative}");
        }
    }
}
