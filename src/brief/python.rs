//! Reading Python source the way the brief needs it, by lines and indentation (no
//! Python parser): a function's definition, and the names a body calls.

/// A function's source: its file, first (first decorator) and last line, and text.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Code {
    pub file: String,
    pub function: String,
    pub first: u32,
    pub last: u32,
    pub source: String,
    /// Why the proof's engine made no mutant of it (what it does, the proof cannot judge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unmutated: Option<String>,
}

/// The definition of `name` at the nesting `path` (classes, then the function) in
/// `text`: the `def` line whose indentation matches, its decorators above it, and every
/// line indented deeper below it.
pub fn find_def(text: &str, path: &[&str]) -> Option<(u32, u32)> {
    let lines: Vec<&str> = text.lines().collect();
    let (mut from, mut indent) = (0usize, 0usize);
    let mut found = None;
    for (depth, name) in path.iter().enumerate() {
        let last = depth + 1 == path.len();
        let at = (from..lines.len()).find(|&i| {
            let line = lines[i];
            let body = line.trim_start();
            let own = line.len() - body.len();
            own == indent && defines(body, name, !last)
        })?;
        found = Some(at);
        from = at + 1;
        indent = deeper_indent(&lines, at).unwrap_or(indent + 4);
    }
    let at = found?;
    let own = indent_of(lines[at]);
    let mut first = at;
    while first > 0 && lines[first - 1].trim_start().starts_with('@') {
        first -= 1;
    }
    let mut last = at;
    for (i, line) in lines.iter().enumerate().skip(at + 1) {
        if line.trim().is_empty() {
            continue;
        }
        if indent_of(line) <= own {
            break;
        }
        last = i;
    }
    Some((first as u32 + 1, last as u32 + 1))
}

fn defines(body: &str, name: &str, class: bool) -> bool {
    let rest = if class {
        body.strip_prefix("class ")
    } else {
        body.strip_prefix("def ")
            .or_else(|| body.strip_prefix("async def "))
    };
    rest.and_then(|r| r.strip_prefix(name))
        .is_some_and(|r| r.starts_with('(') || r.starts_with(':'))
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn deeper_indent(lines: &[&str], at: usize) -> Option<usize> {
    let own = indent_of(lines[at]);
    lines[at + 1..]
        .iter()
        .find(|l| !l.trim().is_empty())
        .map(|l| indent_of(l))
        .filter(|&i| i > own)
}

/// Lines `first..=last` of `text`.
pub fn lines_of(text: &str, first: u32, last: u32) -> String {
    let mut out = String::new();
    for line in text
        .lines()
        .skip(first.saturating_sub(1) as usize)
        .take((last + 1).saturating_sub(first) as usize)
    {
        out.push_str(line);
        out.push('\n');
    }
    out
}

const KEYWORDS: &[&str] = &[
    "and", "assert", "elif", "for", "if", "in", "is", "lambda", "not", "or", "return", "while",
    "with", "yield", "await",
];

/// The names a body calls directly (`name(`, not `obj.name(`), in order, once each.
pub fn called_names(body: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for line in body.lines() {
        let code = line.split('#').next().unwrap_or("");
        let bytes = code.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i].is_ascii_alphabetic() || bytes[i] == b'_' {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let attribute = start > 0 && bytes[start - 1] == b'.';
                let name = &code[start..i];
                // `def f(` and `class C(` define, `if (` and `not (` are no calls.
                let before = code[..start].trim_end();
                let defines = before.ends_with("def") || before.ends_with("class");
                let keyword = KEYWORDS.contains(&name);
                if !attribute
                    && !defines
                    && !keyword
                    && bytes.get(i) == Some(&b'(')
                    && !names.iter().any(|n| n == name)
                {
                    names.push(name.to_string());
                }
            } else {
                i += 1;
            }
        }
    }
    names
}

/// The `from … import …` statements of a module's text, each joined onto one line: a
/// parenthesized list over several lines (black's and ruff's style) and a backslash
/// continuation are one statement, comments dropped.
fn from_imports(text: &str) -> Vec<String> {
    let mut statements = Vec::new();
    let mut open: Option<String> = None;
    for line in text.lines() {
        let code = line.split('#').next().unwrap_or("").trim_end();
        let continued = code.ends_with('\\');
        let code = code.trim_end_matches('\\');
        match open.as_mut() {
            Some(statement) => {
                statement.push(' ');
                statement.push_str(code.trim());
            }
            None if code.starts_with("from ") => open = Some(code.to_string()),
            None => continue,
        }
        let statement = open.as_deref().unwrap_or_default();
        let unclosed = statement.matches('(').count() > statement.matches(')').count();
        if !continued && !unclosed {
            statements.extend(open.take());
        }
    }
    statements.extend(open);
    statements
}

/// Where a test file takes each imported name from: `from a.b import c, d as e`
/// (module `a.b`), over several lines in parentheses too, relative imports against the
/// file's own package.
pub fn imports(text: &str, file: &str) -> Vec<(String, String)> {
    let package: Vec<&str> = file
        .rsplit_once('/')
        .map_or(vec![], |(dir, _)| dir.split('/').collect());
    let mut found = Vec::new();
    for statement in from_imports(text) {
        let Some(rest) = statement.strip_prefix("from ") else {
            continue;
        };
        let Some((module, names)) = rest.split_once(" import ") else {
            continue;
        };
        let module = module.trim();
        let dots = module.len() - module.trim_start_matches('.').len();
        let module = if dots > 0 {
            let keep = package.len().saturating_sub(dots - 1);
            let mut parts: Vec<&str> = package[..keep].to_vec();
            parts.extend(module[dots..].split('.').filter(|p| !p.is_empty()));
            parts.join(".")
        } else {
            module.to_string()
        };
        for name in names
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .split(',')
        {
            let mut words = name.split_whitespace();
            let (original, local) = match (words.next(), words.next(), words.next()) {
                (Some(original), Some("as"), Some(local)) => (original, local),
                (Some(original), None, None) => (original, original),
                _ => continue,
            };
            found.push((local.to_string(), format!("{module}:{original}")));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "import pytest\n\n\nclass TestA:\n    @pytest.mark.x\n    def test_b(self):\n        assert f(1) == g.h(2)\n\n        assert k()\n\n\ndef test_b():\n    pass\n";

    #[test]
    fn a_def_is_found_at_its_nesting_with_its_decorators() {
        assert_eq!(find_def(TEXT, &["TestA", "test_b"]), Some((5, 9)));
        assert_eq!(find_def(TEXT, &["test_b"]), Some((12, 13)));
        assert_eq!(find_def(TEXT, &["test_c"]), None);
    }

    #[test]
    fn direct_calls_are_named_once_and_attributes_are_not() {
        assert_eq!(called_names(&lines_of(TEXT, 5, 9)), ["f", "k"]);
    }

    #[test]
    fn imports_resolve_relative_modules() {
        let found = imports(
            "from app.stock import reserve, release as free\nfrom .helpers import build\n",
            "tests/unit/test_x.py",
        );
        assert_eq!(
            found,
            [
                ("reserve".to_string(), "app.stock:reserve".to_string()),
                ("free".to_string(), "app.stock:release".to_string()),
                ("build".to_string(), "tests.unit.helpers:build".to_string()),
            ]
        );
    }

    #[test]
    fn imports_over_several_lines_are_read_whole() {
        let found = imports(
            "from app.stock import (\n    reserve,\n    release as free,  # the old name\n)\nfrom ..shared import \\\n    build, \\\n    tear as t\nfrom app import (a, b)\nx = 1\n",
            "tests/unit/test_x.py",
        );
        let names: Vec<(&str, &str)> = found
            .iter()
            .map(|(l, t)| (l.as_str(), t.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("reserve", "app.stock:reserve"),
                ("free", "app.stock:release"),
                ("build", "tests.shared:build"),
                ("t", "tests.shared:tear"),
                ("a", "app:a"),
                ("b", "app:b"),
            ]
        );
    }
}
