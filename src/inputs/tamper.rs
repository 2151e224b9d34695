//! The tamper scan (FZ607): the Python a patch adds where tests, conftests and the tools'
//! own modules live, read outside pytest for the constructs that only a patch tampering
//! with the gate needs: reaching into freezegate or pytest's private modules, changing
//! which plugins run, rewriting what the session counts as failed, ending the process
//! before pytest reports, replacing the function pytest calls, telling a proof's run from
//! a real one, or patching pytest, Hypothesis or the plugin.
//!
//! It reads lines, not an AST: a deterrent that makes tampering reviewable (each finding
//! is at its line, cleared only by a reviewed allow entry), not a sandbox. Code that
//! builds the same constructs from strings at run time is out of its reach; the hook
//! census (FZ606) and the record's outcomes (FZ609) are the other two walls.

use std::sync::OnceLock;

use regex::Regex;
use rustc_hash::FxHashSet;

use super::Hunks;

/// One construct at one line the patch added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Repository-relative from [`scan`]; the loader makes it relative to pytest's
    /// rootdir, as diagnostics name suite files.
    pub file: String,
    pub line: u32,
    /// The construct's name, as `[[params.allow_tamper]]` entries name it.
    pub construct: &'static str,
    /// What a patch gains by it.
    pub why: &'static str,
    /// The line's code, trimmed.
    pub text: String,
}

/// Modules a repository could shadow: a file or folder of that name is a finding itself.
pub const TOOL_MODULES: &[&str] = &["pytest", "_pytest", "pluggy", "hypothesis", "freezegate"];

/// A construct's name, what it gives a tampering patch, and its pattern (on the line's
/// code, comments removed).
const CONSTRUCTS: &[(&str, &str, &str)] = &[
    (
        "freezegate",
        "reaches into the gate's own plugin or its variables",
        r"\bfreezegate\b|\bFREEZEGATE_\w*",
    ),
    (
        "mutmut",
        "tells a proof's mutant runs from a real run",
        r"\bMUTANT_UNDER_TEST\b|\bmutmut\b|\bcosmic_ray\b",
    ),
    (
        "_pytest",
        "reaches into pytest's private modules",
        r"\b_pytest\b",
    ),
    (
        "pluginmanager",
        "changes which plugins and hooks run",
        r"\bpluginmanager\s*\.\s*(register|unregister|set_blocked|_?add_hookcall_monitoring)\b|\.\s*(unregister|set_blocked)\s*\(",
    ),
    (
        "testsfailed",
        "rewrites what the session counts as failed or stopped",
        r"\b(testsfailed|shouldfail|shouldstop)\b",
    ),
    (
        "os._exit",
        "ends the process before pytest reports",
        r"\b_exit\s*\(",
    ),
    (
        "obj",
        "replaces the function pytest calls for a test",
        r#"\.\s*obj\s*=[^=]|\bsetattr\s*\([^,]+,\s*["']obj["']"#,
    ),
    ("__code__", "swaps a function's code", r"\b__code__\b"),
    (
        "__test__",
        "hides a module or class from collection",
        r"\b__test__\b",
    ),
    (
        "patch-tool",
        "patches pytest, Hypothesis or pluggy",
        r#"\b(pytest|hypothesis|pluggy)(\.\w+)+\s*=[^=]|\bsetattr\s*\(\s*["']?(pytest|hypothesis|pluggy)\b|\bpatch(\.object)?\s*\(\s*["']?(pytest|hypothesis|pluggy)[.,"']"#,
    ),
    (
        "sys.modules",
        "replaces an imported module",
        r"\bsys\s*\.\s*modules\s*(\[[^\]]*\]\s*=[^=]|\.\s*(update|pop|setdefault)\s*\()",
    ),
];

fn constructs() -> &'static [(&'static str, &'static str, Regex)] {
    static COMPILED: OnceLock<Vec<(&str, &str, Regex)>> = OnceLock::new();
    COMPILED.get_or_init(|| {
        CONSTRUCTS
            .iter()
            .map(|&(name, why, pattern)| {
                let regex = Regex::new(pattern).expect("a tamper pattern compiles");
                (name, why, regex)
            })
            .collect()
    })
}

/// Whether a repository path is a module named like one of [`TOOL_MODULES`]
/// (`pytest.py`, `src/_pytest/main.py`, `hypothesis/__init__.py`).
pub fn is_tool_module(file: &str) -> bool {
    let mut parts = file.split('/').peekable();
    while let Some(part) = parts.next() {
        let name = match parts.peek() {
            Some(_) => part,
            None => part
                .strip_suffix(".pyi")
                .or(part.strip_suffix(".py"))
                .unwrap_or(""),
        };
        if TOOL_MODULES.contains(&name) {
            return true;
        }
    }
    false
}

/// Whether the scan reads a file: a conftest, a tool-named module, or a test file
/// ([`is_test_file`]).
fn in_scope(file: &str, test_dirs: &FxHashSet<String>) -> bool {
    let name = file.rsplit_once('/').map_or(file, |(_, name)| name);
    name == "conftest.py" || is_tool_module(file) || is_test_file(file, test_dirs)
}

/// Whether a file is where tests live: a test module, a file under a folder of tests, or
/// a file in (or below) a folder holding collected tests.
pub fn is_test_file(file: &str, test_dirs: &FxHashSet<String>) -> bool {
    let (dir, name) = file.rsplit_once('/').unwrap_or(("", file));
    if name.starts_with("test_")
        || name.ends_with("_test.py")
        || dir
            .split('/')
            .any(|part| matches!(part, "test" | "tests" | "testing"))
    {
        return true;
    }
    let mut at = dir;
    while !at.is_empty() {
        if test_dirs.contains(at) {
            return true;
        }
        at = at.rsplit_once('/').map_or("", |(parent, _)| parent);
    }
    // The repository's root holds tests: only its own files are read, not every folder.
    dir.is_empty() && test_dirs.contains("")
}

/// The folders (repository-relative) that hold the collected test files.
pub fn test_dirs<'a>(files: impl IntoIterator<Item = &'a str>) -> FxHashSet<String> {
    files
        .into_iter()
        .map(|file| file.rsplit_once('/').map_or("", |(dir, _)| dir).to_string())
        .collect()
}

/// A line's code: without its comment (a `#` outside a string literal).
fn code_of(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (at, c) in line.char_indices() {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '#' => return &line[..at],
            None if c == '"' || c == '\'' => quote = Some(c),
            None => {}
        }
    }
    line
}

/// Every construct on every Python line the patch added in scope, in file and line order.
pub fn scan(hunks: &Hunks, test_dirs: &FxHashSet<String>) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (file, lines) in hunks.python_lines() {
        if !in_scope(file, test_dirs) {
            continue;
        }
        if is_tool_module(file) {
            if let Some((line, text)) = lines.first() {
                findings.push(Finding {
                    file: file.to_string(),
                    line: *line,
                    construct: "tool-module",
                    why: "shadows the real module of that name wherever the repository is on the import path",
                    text: text.trim().to_string(),
                });
            }
        }
        for (line, text) in lines {
            let code = code_of(text);
            for (construct, why, pattern) in constructs() {
                if pattern.is_match(code) {
                    findings.push(Finding {
                        file: file.to_string(),
                        line: *line,
                        construct,
                        why,
                        text: code.trim().to_string(),
                    });
                }
            }
        }
    }
    findings.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_lines(file: &str, lines: &[&str]) -> Vec<(u32, &'static str)> {
        let mut hunks = Hunks::default();
        for (at, text) in lines.iter().enumerate() {
            hunks.add_python_line(file, at as u32 + 1, text);
        }
        scan(&hunks, &FxHashSet::default())
            .into_iter()
            .map(|f| (f.line, f.construct))
            .collect()
    }

    #[test]
    fn each_tampering_construct_is_found_at_its_line() {
        let found = scan_lines(
            "tests/conftest.py",
            &[
                "import os",
                "def pytest_runtestloop(session):",
                "    session.testsfailed = 0",
                "    os._exit(0)",
                "    item.obj = lambda: None",
                "    request.node.obj = noop",
                "    noop.__code__ = other.__code__",
                "    __test__ = False",
                "    if os.environ.get('MUTANT_UNDER_TEST'): assert x",
                "    from freezegate import pipe",
                "    config.pluginmanager.unregister(plugin)",
                "    from _pytest.runner import runtestprotocol",
                "    monkeypatch.setattr(pytest, 'skip', noop)",
                "    hypothesis.settings.default = weak",
                "    sys.modules['pytest'] = fake",
            ],
        );
        assert_eq!(
            found,
            vec![
                (3, "testsfailed"),
                (4, "os._exit"),
                (5, "obj"),
                (6, "obj"),
                (7, "__code__"),
                (8, "__test__"),
                (9, "mutmut"),
                (10, "freezegate"),
                (11, "pluginmanager"),
                (12, "_pytest"),
                (13, "patch-tool"),
                (14, "patch-tool"),
                (15, "sys.modules"),
            ]
        );
    }

    #[test]
    fn ordinary_test_code_and_comments_are_not_findings() {
        let found = scan_lines(
            "tests/test_cart.py",
            &[
                "import pytest",
                "from hypothesis import given, settings",
                "# session.testsfailed = 0 is how a patch would cheat",
                "def test_total(cart):",
                "    assert cart.obj == 3",
                "    with pytest.raises(ValueError):",
                "        cart.remove('x')  # not os._exit(1)",
                "    label = \"#1\"  # os._exit(1), in a comment",
                "    settings.register_profile('ci', max_examples=200)",
            ],
        );
        assert_eq!(found, vec![]);
    }

    #[test]
    fn project_code_outside_the_tests_is_not_read() {
        let mut hunks = Hunks::default();
        hunks.add_python_line("src/shop/cli.py", 10, "    os._exit(2)");
        hunks.add_python_line("tests/helpers/runner.py", 3, "    os._exit(0)");
        hunks.add_python_line("suite/test_a.py", 3, "    os._exit(0)");
        hunks.add_python_line("checks/util.py", 3, "    os._exit(0)");
        let dirs = test_dirs(["checks/test_b.py"]);
        let files: Vec<String> = scan(&hunks, &dirs).into_iter().map(|f| f.file).collect();
        assert_eq!(
            files,
            vec![
                "checks/util.py",
                "suite/test_a.py",
                "tests/helpers/runner.py"
            ]
        );
    }

    #[test]
    fn a_module_named_like_a_tool_is_a_finding_anywhere() {
        assert!(is_tool_module("pytest.py"));
        assert!(is_tool_module("src/_pytest/runner.py"));
        assert!(is_tool_module("hypothesis/__init__.py"));
        assert!(is_tool_module("lib/freezegate.pyi"));
        assert!(!is_tool_module("src/pytest_plugin.py"));
        assert!(!is_tool_module("tests/test_pytest.py"));
        let found = scan_lines("pytest.py", &["import sys", "def main(): pass"]);
        assert_eq!(found, vec![(1, "tool-module")]);
    }
}
