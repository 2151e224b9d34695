//! The weakened-test pre-check (FZ610): each test file the patch changed, parsed at the
//! base and at the patch's commit, and every test in both compared for the forms of a
//! test that checks less: a check removed, an assert made constant (`assert True`,
//! `assert x == x`), an `except` that swallows the assertion, `pytest.raises` widened to
//! `Exception`, or the test redefined by a later `def` of the same name (ruff's F811),
//! which pytest never collects.
//!
//! Static and instant, without mutation: it reads what the test's code says, not what
//! it catches. A check moved into a helper of the same file still counts (a call to a
//! function of the module that checks), as does any call named `assert…` (unittest's
//! `assertEqual`, mock's `assert_called_once`, numpy's `assert_allclose`).

use std::sync::OnceLock;

use rustc_hash::{FxHashMap, FxHashSet};
use rustpython_parser::ast::{self, CmpOp, Constant, Expr, Ranged, Stmt};
use rustpython_parser::Parse;

/// One way a test of the patch checks less than at base, at its line in the patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Weakening {
    /// As [`compare`] was given it (relative to pytest's rootdir, as diagnostics name
    /// suite files).
    pub file: String,
    pub line: u32,
    /// The test, as `name` or `Class::name` (a node id without file and parameters).
    pub test: String,
    /// The form's name, as `[[params.allow_weakened]]` entries name it.
    pub form: &'static str,
    /// What changed, for the message.
    pub detail: String,
}

/// The pre-check's findings, the tests the patch renamed and edited (each file's), and
/// the changed test files it could not compare (the file and why: a side that does not
/// parse).
#[derive(Debug, Clone, Default)]
pub struct Weakened {
    pub findings: Vec<Weakening>,
    pub renames: Vec<(String, Counterpart)>,
    pub edited: Vec<(String, Counterpart)>,
    pub uncompared: Vec<(String, String)>,
}

/// One file's two sides compared.
#[derive(Debug, Default)]
pub struct Compared {
    pub findings: Vec<Weakening>,
    /// Tests renamed within the module: judged as the same test at the new name (not a
    /// removal and an addition).
    pub renames: Vec<Counterpart>,
    /// Tests whose code changed (whitespace aside), renamed or not, a test a later `def`
    /// shadows included.
    pub edited: Vec<Counterpart>,
}

/// A test of the base and the same test in the patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counterpart {
    /// `name` or `Class::name`, as at base.
    pub from: String,
    /// As in the patch.
    pub to: String,
    /// The new test's line in the patch.
    pub line: u32,
}

/// Each Python file of a unified diff, at both sides, where the diff holds the whole
/// file (`git diff --unified=100000`: one hunk from line 1, or a file added or deleted);
/// `None` for a file whose diff shows only some of its lines (`git diff -U0`).
pub fn sides_from_diff(diff: &str) -> Vec<(String, Option<(String, String)>)> {
    let mut files: Vec<(String, Option<(String, String)>)> = Vec::new();
    // The current file's sides, and whether its one hunk started at line 1 (or 0).
    let mut current: Option<(String, String, String, bool, u32)> = None;
    let mut finish = |current: &mut Option<(String, String, String, bool, u32)>| {
        if let Some((file, base, head, whole, hunks)) = current.take() {
            let sides = (whole && hunks == 1).then_some((base, head));
            files.push((file, sides));
        }
    };
    let mut in_hunk = false;
    for line in diff.lines() {
        if line.starts_with("diff ") {
            finish(&mut current);
            in_hunk = false;
        } else if let Some(path) = line.strip_prefix("+++ ").filter(|_| !in_hunk) {
            finish(&mut current);
            if let Some(file) = path.strip_prefix("b/").filter(|f| f.ends_with(".py")) {
                current = Some((file.to_string(), String::new(), String::new(), false, 0));
            }
        } else if line.starts_with("--- ") && !in_hunk {
        } else if let Some(rest) = line.strip_prefix("@@ ") {
            in_hunk = true;
            if let Some((_, _, _, whole, hunks)) = &mut current {
                // `@@ -a[,b] +c[,d] @@`: whole when both sides start at their first line.
                let starts: Vec<&str> = rest
                    .split(' ')
                    .take(2)
                    .map(|side| side[1..].split(',').next().unwrap_or(""))
                    .collect();
                *whole = starts.iter().all(|start| matches!(*start, "0" | "1"));
                *hunks += 1;
            }
        } else if let Some((_, base, head, _, _)) = &mut current.as_mut().filter(|_| in_hunk) {
            match line.as_bytes().first() {
                Some(b' ') => {
                    base.push_str(&line[1..]);
                    base.push('\n');
                    head.push_str(&line[1..]);
                    head.push('\n');
                }
                Some(b'-') => {
                    base.push_str(&line[1..]);
                    base.push('\n');
                }
                Some(b'+') => {
                    head.push_str(&line[1..]);
                    head.push('\n');
                }
                None => {
                    base.push('\n');
                    head.push('\n');
                }
                _ => {} // `\ No newline at end of file`
            }
        }
    }
    finish(&mut current);
    files
}

/// What a test's code checks.
#[derive(Debug, Default)]
struct Test {
    line: u32,
    /// The body's code, whitespace collapsed: a test renamed with it unchanged is the
    /// same test.
    body: String,
    /// Each check's normalized text and its line.
    checks: Vec<(String, u32)>,
    /// Asserts that always hold, by text, with their line.
    constant: Vec<(String, u32)>,
    /// Handlers that swallow an assertion raised in their `try`, with their line.
    swallowed: Vec<u32>,
    /// `pytest.raises(...)`'s exception types, by text, with the line.
    raises: Vec<(String, u32)>,
}

/// A parsed test file: its tests by qualified name, and the tests a later `def` of the
/// same name replaces (name, the first def's line, the later def's line).
#[derive(Debug, Default)]
struct File {
    tests: FxHashMap<String, Test>,
    shadowed: Vec<(String, u32, u32)>,
    suite: Vec<Stmt>,
}

impl File {
    /// Whether test `name` here and `then` in `base` are the same code: the same text
    /// (whitespace aside), or else the same syntax tree (comments, parentheses and line
    /// breaks are no edit, and a test only reformatted needs no proof). The tree is
    /// compared only where the text differs: the pre-check stays a parse per side.
    fn same_code(&self, name: &str, base: &File, then: &str) -> bool {
        if self.tests[name].body == base.tests[then].body {
            return true;
        }
        let tree = |file: &File, test: &str| {
            let (_, body, _) = function(defined(&file.suite, test)?)?;
            Some(ast_key(body))
        };
        let now = tree(self, name);
        now.is_some() && now == tree(base, then)
    }
}

/// The file's tests at base and in the patch, compared. `Err` names why a side does not
/// parse (the caller reports it; the other rules still run).
pub fn compare(path: &str, base: &str, head: &str) -> Result<Compared, String> {
    let (before, after) = parse_sides(path, base, Some(head))?;
    let mut found = Vec::new();
    let mut push = |line: u32, test: &str, form: &'static str, detail: String| {
        found.push(Weakening {
            file: path.to_string(),
            line,
            test: test.to_string(),
            form,
            detail,
        })
    };
    for (name, first, later) in &after.shadowed {
        if !before.shadowed.iter().any(|(n, ..)| n == name) && before.tests.contains_key(name) {
            push(
                *later,
                name,
                "shadowed",
                format!("{name} (line {first}) is defined again at line {later}: pytest collects only the last one"),
            );
        }
    }
    // A shadowed test is reported as such, not as the later def's changes.
    let shadowed: FxHashSet<&str> = after.shadowed.iter().map(|(n, ..)| n.as_str()).collect();
    let renames = renames(&before, &after);
    let mut edited = Vec::new();
    for (from, name) in counterparts(&before, &after, &renames) {
        let Some(name) = name else { continue };
        let (was, now) = (&before.tests[from], &after.tests[name]);
        let shadowing = shadowed.contains(name);
        if shadowing || !after.same_code(name, &before, from) {
            edited.push(Counterpart {
                from: from.to_string(),
                to: name.to_string(),
                line: now.line,
            });
        }
        if shadowing {
            continue;
        }
        let shown = if from == name {
            name.to_string()
        } else {
            format!("{name} (renamed from {from})")
        };
        for (text, line) in missing(&now.constant, &was.constant) {
            push(
                *line,
                name,
                "constant-assert",
                format!("`assert {text}` always holds"),
            );
        }
        // A check turned constant is reported at its own line, above.
        let turned_constant = missing(&now.constant, &was.constant).len();
        if now.checks.len() + turned_constant < was.checks.len() {
            let gone = missing(&was.checks, &now.checks);
            let named: Vec<String> = gone
                .iter()
                .map(|(text, line)| format!("`{text}` (line {line} at base)"))
                .collect();
            let what = match named.len() {
                0 => String::new(),
                1 => format!(": {} is gone", named[0]),
                _ => format!(": {} are gone", crate::words::join_and_more(&named, 3)),
            };
            push(
                now.line,
                name,
                "check-removed",
                format!(
                    "{shown} makes {} at base, {} in this patch{what}",
                    checks(was.checks.len()),
                    now.checks.len()
                ),
            );
        }
        if now.swallowed.len() > was.swallowed.len() {
            let line = now.swallowed[was.swallowed.len()];
            push(
                line,
                name,
                "swallowed-assert",
                format!("an `except` at line {line} catches the AssertionError of the checks in its `try` and goes on"),
            );
        }
        for (types, line) in &now.raises {
            if is_broad_exception(types)
                && was.raises.iter().any(|(t, _)| !is_broad_exception(t))
                && !now.raises.iter().any(|(t, _)| !is_broad_exception(t))
            {
                let narrow = &was
                    .raises
                    .iter()
                    .find(|(t, _)| !is_broad_exception(t))
                    .expect("checked")
                    .0;
                push(
                    *line,
                    name,
                    "raises-widened",
                    format!("pytest.raises({types}) at line {line} accepts any error, where the base expected {narrow}"),
                );
            }
        }
    }
    found.sort_by_key(|w| w.line);
    Ok(Compared {
        findings: found,
        renames,
        edited,
    })
}

/// The tests of the base the patch renamed (in the same module and class): to a test
/// with the same body, or, where one test left and one came, to that one.
fn renames(before: &File, after: &File) -> Vec<Counterpart> {
    let gone: Vec<&String> = sorted(
        before
            .tests
            .keys()
            .filter(|n| !after.tests.contains_key(*n)),
    );
    let came: Vec<&String> = sorted(
        after
            .tests
            .keys()
            .filter(|n| !before.tests.contains_key(*n)),
    );
    let class = |name: &str| class_and_name(name).0.unwrap_or("").to_string();
    let mut renames = Vec::new();
    let mut taken: FxHashSet<&str> = FxHashSet::default();
    for from in &gone {
        let body = &before.tests[from.as_str()].body;
        let same = came.iter().find(|to| {
            !taken.contains(to.as_str())
                && class(to) == class(from)
                && &after.tests[to.as_str()].body == body
        });
        if let Some(to) = same {
            taken.insert(to);
            renames.push(Counterpart {
                from: from.to_string(),
                to: to.to_string(),
                line: after.tests[to.as_str()].line,
            });
        }
    }
    // One test left its class or module and one came, with an edited body.
    let left: Vec<&&String> = gone
        .iter()
        .filter(|n| !renames.iter().any(|r| &&r.from == *n))
        .collect();
    let new: Vec<&&String> = came
        .iter()
        .filter(|n| !taken.contains(n.as_str()))
        .collect();
    if let ([from], [to]) = (left.as_slice(), new.as_slice()) {
        if class(from) == class(to) {
            renames.push(Counterpart {
                from: from.to_string(),
                to: to.to_string(),
                line: after.tests[to.as_str()].line,
            });
        }
    }
    renames
}

fn sorted<'a>(names: impl Iterator<Item = &'a String>) -> Vec<&'a String> {
    let mut names: Vec<&String> = names.collect();
    names.sort_unstable();
    names
}

fn checks(n: usize) -> String {
    if n == 1 {
        "1 check".to_string()
    } else {
        format!("{n} checks")
    }
}

/// The entries of `now` (by text, with multiplicity) that `then` does not have.
fn missing<'a>(now: &'a [(String, u32)], then: &[(String, u32)]) -> Vec<&'a (String, u32)> {
    let mut left: FxHashMap<&str, usize> = FxHashMap::default();
    for (text, _) in then {
        *left.entry(text).or_default() += 1;
    }
    now.iter()
        .filter(|(text, _)| match left.get_mut(text.as_str()) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .collect()
}

fn is_broad_exception(types: &str) -> bool {
    matches!(types, "Exception" | "BaseException" | "builtins.Exception")
}

/// A test file at base and in the patch (`None`: deleted, no tests), parsed side by side
/// (parsing is most of the pre-check's time). `Err` names the side that does not parse.
fn parse_sides(path: &str, base: &str, head: Option<&str>) -> Result<(File, File), String> {
    let (before, after) = std::thread::scope(|scope| {
        let before = crate::threads::spawn_scoped(scope, || parse(path, base));
        let after = head.map(|head| parse(path, head)).transpose();
        (before.join(), after)
    });
    let before = before
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        .map_err(|e| format!("it does not parse at base: {e}"))?;
    let after = after.map_err(|e| format!("it does not parse in the patch: {e}"))?;
    Ok((before, after.unwrap_or_default()))
}

fn parse(path: &str, source: &str) -> Result<File, String> {
    let suite = ast::Suite::parse(source, path).map_err(|e| e.to_string())?;
    let lines = LineIndex::new(source);
    let reader = Reader {
        source,
        lines: &lines,
        helpers: helpers(&suite),
    };
    let mut file = File::default();
    reader.scope(&suite, None, &mut file);
    file.suite = suite;
    Ok(file)
}

/// A test's definition at base (named `test`) and in the patch (named `now`), as line
/// spans and their lines, when it is on both sides and differs (whitespace aside); `Err`
/// names the side that does not parse.
fn both_versions(
    path: &str,
    base: &str,
    head: &str,
    (test, now): (&str, &str),
) -> Result<Option<BothVersions>, String> {
    let at_base =
        definition(path, base, test).map_err(|e| format!("it does not parse at base: {e}"))?;
    let in_patch =
        definition(path, head, now).map_err(|e| format!("it does not parse in the patch: {e}"))?;
    let (Some(from), Some(to)) = (at_base, in_patch) else {
        return Ok(None);
    };
    let before = lines_of(base, from);
    let after = lines_of(head, to);
    if collapsed(&before.join("\n")) == collapsed(&after.join("\n")) {
        return Ok(None);
    }
    Ok(Some(BothVersions {
        from,
        to,
        before,
        after,
    }))
}

/// A test's definition on both sides: its line spans and lines at base and in the patch.
struct BothVersions {
    from: (usize, usize),
    to: (usize, usize),
    before: Vec<String>,
    after: Vec<String>,
}

/// The patch's text of a test file with one test's definition (its decorators, `def`
/// and body) put back as it was at base, for the proof to judge what the base checked
/// (a patch can gut the test it freezes: skipped, nobody sees it fail). `test` is
/// `name` or `Class::name`. `Ok(None)` when the definition is the same on both sides
/// (whitespace aside) or is not in both; `Err` names the side that does not parse.
pub fn with_base_version(
    path: &str,
    base: &str,
    head: &str,
    test: &str,
) -> Result<Option<String>, String> {
    let Some(BothVersions {
        to, before, after, ..
    }) = both_versions(path, base, head, (test, test))?
    else {
        return Ok(None);
    };
    // The base's lines at the patch's indentation (a test moved into a class, or out).
    let mut out: Vec<String> = head.lines().take(to.0 - 1).map(str::to_string).collect();
    out.extend(reindented(&before, &after[0]));
    out.extend(head.lines().skip(to.1).map(str::to_string));
    let mut joined = out.join("\n");
    if head.ends_with('\n') {
        joined.push('\n');
    }
    Ok(Some(joined))
}

/// What a patch did to a test file's tests, by their names at base (`name` or
/// `Class::name`, sorted).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct TestChanges {
    /// Withdrawn: deleted with their file (no `head`), deleted from it, or renamed out of
    /// collection (`check_x`). A test renamed to another collected name is the same test
    /// (see [`compare`]).
    pub removed: Vec<String>,
    /// Still in the patch with a different body: the name at base, and in the patch (a
    /// rename).
    pub changed: Vec<(String, String)>,
}

/// The tests of a test file at base that the patch removed or changed. `Err` names the
/// side that does not parse.
pub fn test_changes(path: &str, base: &str, head: Option<&str>) -> Result<TestChanges, String> {
    let (before, after) = parse_sides(path, base, head)?;
    let renamed = renames(&before, &after);
    let mut changes = TestChanges::default();
    for (name, now) in counterparts(&before, &after, &renamed) {
        match now {
            None => changes.removed.push(name.to_string()),
            Some(now) if !after.same_code(now, &before, name) => {
                changes.changed.push((name.to_string(), now.to_string()))
            }
            Some(_) => {}
        }
    }
    Ok(changes)
}

/// Each test of the base, sorted, with its name in the patch (renamed or not), or `None`
/// where the patch has no such test.
fn counterparts<'a>(
    before: &'a File,
    after: &File,
    renames: &'a [Counterpart],
) -> Vec<(&'a str, Option<&'a str>)> {
    sorted(before.tests.keys())
        .into_iter()
        .map(|name| {
            let now = renames
                .iter()
                .find(|r| &r.from == name)
                .map_or(name.as_str(), |r| r.to.as_str());
            (name.as_str(), after.tests.contains_key(now).then_some(now))
        })
        .collect()
}

/// `lines` moved to the indentation of `like` (their first line's becomes its).
fn reindented(lines: &[String], like: &str) -> Vec<String> {
    let indent = |line: &str| line.len() - line.trim_start().len();
    let (was, now) = (indent(&lines[0]), indent(like));
    lines
        .iter()
        .map(|line| {
            if line.trim().is_empty() {
                String::new()
            } else if now >= was {
                format!("{}{line}", " ".repeat(now - was))
            } else {
                line[(was - now).min(indent(line))..].to_string()
            }
        })
        .collect()
}

/// The base's text of a test file with the patch's version of one of its tests added
/// right after the base's, in the same scope, as `copy` (a name pytest collects): the
/// proof runs both on the same mutants, to see whether the edited test still catches
/// what the base's caught. `test` is the name at base and `now` in the patch (`name` or
/// `Class::name`). `Ok(None)` when the test is not on both sides or is the same
/// (whitespace aside); `Err` names the side that does not parse.
pub fn with_patch_copy(
    path: &str,
    base: &str,
    head: &str,
    (test, now): (&str, &str),
    copy: &str,
) -> Result<Option<String>, String> {
    let Some(BothVersions {
        from,
        before,
        after,
        ..
    }) = both_versions(path, base, head, (test, now))?
    else {
        return Ok(None);
    };
    let name = class_and_name(now).1;
    let (def, copied) = (format!("def {name}("), format!("def {copy}("));
    let mut renamed = false;
    let patched = reindented(&after, &before[0]).into_iter().map(|line| {
        let trimmed = line.trim_start();
        let bare = trimmed
            .strip_prefix("async ")
            .map_or(trimmed, str::trim_start);
        if !renamed && bare.starts_with(&def) {
            renamed = true;
            line.replacen(&def, &copied, 1)
        } else {
            line
        }
    });
    let mut out: Vec<String> = base.lines().take(from.1).map(str::to_string).collect();
    out.push(String::new());
    out.extend(patched);
    out.extend(base.lines().skip(from.1).map(str::to_string));
    // What the patch's version may call that the base's file lacks: a helper, an
    // import, a constant the patch added under a new name (a changed one stays the
    // base's, which the base's version runs with).
    for added in added_definitions(path, base, head)? {
        out.push(String::new());
        out.extend(added);
    }
    let mut joined = out.join("\n");
    if base.ends_with('\n') {
        joined.push('\n');
    }
    Ok(Some(joined))
}

/// The module-level statements of `head` that define only names `base` does not (a
/// function, a class, an import, an assignment), each as its lines; tests and test
/// classes left out.
fn added_definitions(path: &str, base: &str, head: &str) -> Result<Vec<Vec<String>>, String> {
    fn names(stmt: &Stmt) -> Vec<String> {
        let targets = |expr: &Expr| match expr {
            Expr::Name(n) => vec![n.id.to_string()],
            _ => Vec::new(),
        };
        match stmt {
            Stmt::FunctionDef(f) => vec![f.name.to_string()],
            Stmt::AsyncFunctionDef(f) => vec![f.name.to_string()],
            Stmt::ClassDef(c) => vec![c.name.to_string()],
            Stmt::Import(i) => i
                .names
                .iter()
                .map(|a| {
                    let name = a.asname.as_ref().unwrap_or(&a.name).to_string();
                    name.split('.').next().unwrap_or_default().to_string()
                })
                .collect(),
            Stmt::ImportFrom(i) => i
                .names
                .iter()
                .map(|a| a.asname.as_ref().unwrap_or(&a.name).to_string())
                .collect(),
            Stmt::Assign(a) => a.targets.iter().flat_map(targets).collect(),
            Stmt::AnnAssign(a) => targets(&a.target),
            _ => Vec::new(),
        }
    }
    let parse = |source: &str| ast::Suite::parse(source, path).map_err(|e| e.to_string());
    let known: FxHashSet<String> = parse(base)?.iter().flat_map(names).collect();
    let lines = LineIndex::new(head);
    let mut added = Vec::new();
    for stmt in &parse(head)? {
        let defined = names(stmt);
        let test = matches!(stmt, Stmt::ClassDef(c) if c.name.starts_with("Test"))
            || function(stmt).is_some_and(|(name, ..)| is_test_name(name));
        if defined.is_empty() || test || defined.iter().any(|n| known.contains(n)) {
            continue;
        }
        let start = function(stmt)
            .and_then(|(_, _, decorators)| decorators.first().map(|d| d.start()))
            .unwrap_or(stmt.start());
        let end = stmt.end().to_usize().saturating_sub(1);
        let span = (
            lines.line(start.to_usize()) as usize,
            lines.line(end) as usize,
        );
        added.push(lines_of(head, span));
    }
    Ok(added)
}

/// The lines `first..=last` (1-based) of `source`.
fn lines_of(source: &str, (first, last): (usize, usize)) -> Vec<String> {
    source
        .lines()
        .skip(first - 1)
        .take(last + 1 - first)
        .map(str::to_string)
        .collect()
}

/// The first line (its first decorator's) of the definition pytest collects as `test`
/// in `source`, when it has one and parses.
pub fn line_of(path: &str, source: &str, test: &str) -> Option<u32> {
    definition(path, source, test)
        .ok()
        .flatten()
        .map(|(first, _)| first as u32)
}

/// The first and last line of the definition pytest collects as `test` (the last
/// `def` of that name in its scope), from its first decorator.
fn definition(path: &str, source: &str, test: &str) -> Result<Option<(usize, usize)>, String> {
    Ok(definition_lines(path, source, test)?.map(|(first, _, last)| (first, last)))
}

/// The definition's first line (its first decorator's), its `def` line, and its last.
fn definition_lines(
    path: &str,
    source: &str,
    test: &str,
) -> Result<Option<(usize, usize, usize)>, String> {
    let suite = ast::Suite::parse(source, path).map_err(|e| e.to_string())?;
    let lines = LineIndex::new(source);
    Ok(defined(&suite, test).map(|stmt| {
        let (_, _, decorators) = function(stmt).expect("a definition");
        let start = decorators.first().map_or(stmt.start(), |d| d.start());
        let end = stmt.end().to_usize().saturating_sub(1);
        (
            lines.line(start.to_usize()) as usize,
            lines.line(stmt.start().to_usize()) as usize,
            lines.line(end) as usize,
        )
    }))
}

/// Where the patch's edit of a test begins, in `head`: the first line of its definition
/// (decorators included) whose code differs from the base's `base_test` in `base`,
/// blank lines, comments and indentation aside; the last line of it when the patch only
/// cut lines from its end; its `def` line when no line can be told apart.
pub fn edit_line(path: &str, base: &str, head: &str, base_test: &str, test: &str) -> Option<u32> {
    let (first, def, last) = definition_lines(path, head, test).ok().flatten()?;
    let Some((base_first, _, base_last)) = definition_lines(path, base, base_test).ok().flatten()
    else {
        return Some(def as u32);
    };
    let code = |source: &str, (first, last): (usize, usize)| -> Vec<(usize, String)> {
        lines_of(source, (first, last))
            .into_iter()
            .enumerate()
            .map(|(i, line)| (first + i, line.trim().to_string()))
            .filter(|(_, line)| !line.is_empty() && !line.starts_with('#'))
            .collect()
    };
    let now = code(head, (first, last));
    let was = code(base, (base_first, base_last));
    let at = match now.iter().zip(&was).find(|(n, w)| n.1 != w.1) {
        Some(((line, _), _)) => *line,
        None if was.len() > now.len() => now.last().map_or(def, |(line, _)| *line),
        None => now.get(was.len()).map_or(def, |(line, _)| *line),
    };
    Some(at as u32)
}

/// A test's class (`None` for a module-level test) and function name, from `name` or
/// `Class::name`.
pub fn class_and_name(test: &str) -> (Option<&str>, &str) {
    match test.rsplit_once("::") {
        Some((class, name)) => (Some(class), name),
        None => (None, test),
    }
}

/// The definition pytest collects as `test` (`name` or `Class::name`): the last `def`
/// of that name in its scope.
fn defined<'a>(suite: &'a [Stmt], test: &str) -> Option<&'a Stmt> {
    let (class, name) = class_and_name(test);
    let scope: &[Stmt] = match class {
        None => suite,
        Some(class) => suite.iter().rev().find_map(|stmt| match stmt {
            Stmt::ClassDef(c) if c.name.as_str() == class => Some(&c.body[..]),
            _ => None,
        })?,
    };
    scope
        .iter()
        .rev()
        .find(|stmt| function(stmt).is_some_and(|(found, ..)| found == name))
}

/// Statements as their syntax tree without positions: comments, parentheses, line
/// breaks and quotes are no change (a test only reformatted needs no proof).
fn ast_key(body: &[Stmt]) -> String {
    static RANGE: OnceLock<regex::Regex> = OnceLock::new();
    let range = RANGE.get_or_init(|| regex::Regex::new(r"range: \d+\.\.\d+, ").expect("valid"));
    range.replace_all(&format!("{body:?}"), "").into_owned()
}

/// Code with its whitespace collapsed, so that reformatting is no change.
fn collapsed(code: &str) -> String {
    code.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Byte offsets to 1-based line numbers.
struct LineIndex(Vec<usize>);

impl LineIndex {
    fn new(source: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', source.as_bytes()).map(|at| at + 1));
        LineIndex(starts)
    }

    fn line(&self, offset: usize) -> u32 {
        self.0.partition_point(|&start| start <= offset) as u32
    }
}

/// The module's functions that are not tests and check something themselves: a call to
/// one is a check of the test that calls it.
fn helpers(suite: &[Stmt]) -> FxHashSet<String> {
    let mut found = FxHashSet::default();
    for stmt in suite {
        if let Some((name, body, _)) = function(stmt) {
            if !is_test_name(name) && body_checks(body) {
                found.insert(name.to_string());
            }
        }
    }
    found
}

fn function(stmt: &Stmt) -> Option<(&str, &[Stmt], &[Expr])> {
    match stmt {
        Stmt::FunctionDef(f) => Some((f.name.as_str(), &f.body, &f.decorator_list)),
        Stmt::AsyncFunctionDef(f) => Some((f.name.as_str(), &f.body, &f.decorator_list)),
        _ => None,
    }
}

fn is_test_name(name: &str) -> bool {
    name.starts_with("test")
}

fn body_checks(body: &[Stmt]) -> bool {
    let mut any = false;
    walk(body, &mut |stmt| {
        if matches!(stmt, Stmt::Assert(_) | Stmt::Raise(_)) {
            any = true;
        }
    });
    any
}

/// Calls `visit` on every statement of `body`, nested blocks included, not nested
/// functions or classes.
fn walk(body: &[Stmt], visit: &mut dyn FnMut(&Stmt)) {
    for stmt in body {
        visit(stmt);
        for block in blocks(stmt) {
            walk(block, visit);
        }
    }
}

fn blocks(stmt: &Stmt) -> Vec<&[Stmt]> {
    match stmt {
        Stmt::For(s) => vec![&s.body, &s.orelse],
        Stmt::AsyncFor(s) => vec![&s.body, &s.orelse],
        Stmt::While(s) => vec![&s.body, &s.orelse],
        Stmt::If(s) => vec![&s.body, &s.orelse],
        Stmt::With(s) => vec![&s.body],
        Stmt::AsyncWith(s) => vec![&s.body],
        Stmt::Match(s) => s.cases.iter().map(|c| c.body.as_slice()).collect(),
        Stmt::Try(s) => {
            let mut all = vec![s.body.as_slice(), &s.orelse, &s.finalbody];
            all.extend(
                s.handlers
                    .iter()
                    .map(|ast::ExceptHandler::ExceptHandler(h)| h.body.as_slice()),
            );
            all
        }
        Stmt::TryStar(s) => {
            let mut all = vec![s.body.as_slice(), &s.orelse, &s.finalbody];
            all.extend(
                s.handlers
                    .iter()
                    .map(|ast::ExceptHandler::ExceptHandler(h)| h.body.as_slice()),
            );
            all
        }
        _ => Vec::new(),
    }
}

struct Reader<'a> {
    source: &'a str,
    lines: &'a LineIndex,
    helpers: FxHashSet<String>,
}

impl Reader<'_> {
    fn line(&self, node: &impl Ranged) -> u32 {
        self.lines.line(node.start().to_usize())
    }

    /// A node's code with its whitespace collapsed, so that reformatting is no change.
    fn text(&self, node: &impl Ranged) -> String {
        let range = node.range();
        collapsed(&self.source[range.start().to_usize()..range.end().to_usize()])
    }

    /// The tests defined in a module (`class_name` None) or a class body.
    fn scope(&self, body: &[Stmt], class_name: Option<&str>, file: &mut File) {
        let mut first_def: FxHashMap<&str, u32> = FxHashMap::default();
        for stmt in body {
            if let Stmt::ClassDef(class) = stmt {
                if class_name.is_none() {
                    self.scope(&class.body, Some(class.name.as_str()), file);
                }
                continue;
            }
            let Some((name, fbody, decorators)) = function(stmt) else {
                continue;
            };
            if !is_test_name(name) {
                continue;
            }
            let qualified = match class_name {
                Some(class) => format!("{class}::{name}"),
                None => name.to_string(),
            };
            // A test's line is its first decorator's, as pytest's spans are.
            let line = decorators
                .first()
                .map_or_else(|| self.line(stmt), |d| self.line(d));
            if let Some(&first) = first_def.get(name) {
                file.shadowed.push((qualified.clone(), first, line));
            } else {
                first_def.insert(name, line);
            }
            let mut test = Test {
                line,
                body: fbody
                    .iter()
                    .map(|stmt| self.text(stmt))
                    .collect::<Vec<_>>()
                    .join("; "),
                ..Test::default()
            };
            self.read(fbody, &mut test);
            // The later def is the test pytest runs.
            file.tests.insert(qualified, test);
        }
    }

    fn read(&self, body: &[Stmt], test: &mut Test) {
        walk(body, &mut |stmt| match stmt {
            Stmt::Assert(a) => {
                let text = self.text(a.test.as_ref());
                if always_holds(&a.test, self) {
                    test.constant.push((text, self.line(stmt)));
                } else {
                    test.checks
                        .push((format!("assert {text}"), self.line(stmt)));
                }
            }
            Stmt::Expr(e) => self.call_check(&e.value, test),
            Stmt::With(w) => {
                for item in &w.items {
                    self.call_check(&item.context_expr, test);
                }
            }
            Stmt::AsyncWith(w) => {
                for item in &w.items {
                    self.call_check(&item.context_expr, test);
                }
            }
            Stmt::Try(t) if body_checks_or_calls(&t.body, self) => {
                for ast::ExceptHandler::ExceptHandler(h) in &t.handlers {
                    if catches_assertion(h.type_.as_deref(), self) && !reraises(&h.body) {
                        test.swallowed.push(self.line(h));
                    }
                }
            }
            _ => {}
        });
    }

    /// A call that is a check: `pytest.raises`/`warns` (with its types), any `assert…`
    /// function or method, or a helper of the module that checks.
    fn call_check(&self, expr: &Expr, test: &mut Test) {
        let Expr::Call(call) = expr else {
            return;
        };
        let name = callee(&call.func);
        let line = self.line(expr);
        if matches!(
            name,
            "raises"
                | "warns"
                | "deprecated_call"
                | "assertRaises"
                | "assertRaisesRegex"
                | "assertWarns"
        ) {
            let types = call.args.first().map(|a| self.text(a)).unwrap_or_default();
            if name == "raises" {
                test.raises.push((types, line));
            }
        } else if !(name.starts_with("assert") || self.helpers.contains(name)) {
            return;
        }
        test.checks.push((self.text(expr), line));
    }
}

/// Whether a `try` body checks something (an assert, or a call that is a check).
fn body_checks_or_calls(body: &[Stmt], reader: &Reader) -> bool {
    let mut probe = Test::default();
    reader.read(body, &mut probe);
    !probe.checks.is_empty() || !probe.constant.is_empty()
}

/// The function a call names: `raises` for `pytest.raises`, `assertEqual` for
/// `self.assertEqual`.
fn callee(func: &Expr) -> &str {
    match func {
        Expr::Name(n) => n.id.as_str(),
        Expr::Attribute(a) => a.attr.as_str(),
        _ => "",
    }
}

fn catches_assertion(kind: Option<&Expr>, reader: &Reader) -> bool {
    let Some(kind) = kind else {
        return true; // a bare `except:`
    };
    let names: Vec<String> = match kind {
        Expr::Tuple(t) => t.elts.iter().map(|e| reader.text(e)).collect(),
        other => vec![reader.text(other)],
    };
    names.iter().any(|n| {
        matches!(
            n.as_str(),
            "AssertionError" | "Exception" | "BaseException" | "builtins.AssertionError"
        )
    })
}

fn reraises(body: &[Stmt]) -> bool {
    let mut found = false;
    walk(body, &mut |stmt| {
        if matches!(stmt, Stmt::Raise(_))
            || matches!(stmt, Stmt::Expr(e) if matches!(callee_of(&e.value), "fail" | "skip" | "xfail"))
        {
            found = true;
        }
    });
    found
}

fn callee_of(expr: &Expr) -> &str {
    match expr {
        Expr::Call(call) => callee(&call.func),
        _ => "",
    }
}

/// Whether an assert's condition holds whatever the code under test does: a true
/// constant, a non-empty tuple or list literal, `x == x`, `not False`, `x or True`.
fn always_holds(test: &Expr, reader: &Reader) -> bool {
    match test {
        Expr::Constant(c) => truthy(&c.value),
        Expr::Tuple(t) => !t.elts.is_empty(),
        Expr::List(l) => !l.elts.is_empty(),
        Expr::Compare(c) => {
            c.ops.len() == 1
                && matches!(c.ops[0], CmpOp::Eq | CmpOp::Is | CmpOp::LtE | CmpOp::GtE)
                && reader.text(c.left.as_ref()) == reader.text(&c.comparators[0])
        }
        Expr::UnaryOp(u) if matches!(u.op, ast::UnaryOp::Not) => {
            matches!(u.operand.as_ref(), Expr::Constant(c) if !truthy(&c.value))
        }
        Expr::BoolOp(b) => match b.op {
            ast::BoolOp::Or => b.values.iter().any(|v| always_holds(v, reader)),
            ast::BoolOp::And => b.values.iter().all(|v| always_holds(v, reader)),
        },
        _ => false,
    }
}

fn truthy(value: &Constant) -> bool {
    match value {
        Constant::None => false,
        Constant::Bool(b) => *b,
        Constant::Str(s) => !s.is_empty(),
        Constant::Bytes(b) => !b.is_empty(),
        Constant::Int(i) => i.to_string() != "0",
        Constant::Tuple(t) => !t.is_empty(),
        Constant::Float(f) => *f != 0.0,
        Constant::Complex { real, imag } => *real != 0.0 || *imag != 0.0,
        Constant::Ellipsis => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forms(base: &str, head: &str) -> Vec<(u32, &'static str)> {
        compare("tests/test_cart.py", base, head)
            .expect("both sides parse")
            .findings
            .into_iter()
            .map(|w| (w.line, w.form))
            .collect()
    }

    const BASE: &str = "\
import pytest

def check_total(cart, n):
    assert cart.total() == n

def test_total(cart):
    assert cart.total() == 3
    assert cart.count() == 2

def test_remove(cart):
    with pytest.raises(KeyError):
        cart.remove('x')

class TestCart:
    def test_empty(self):
        self.assertEqual(len(Cart()), 0)
";

    #[test]
    fn an_edit_is_placed_at_its_first_changed_line_not_the_first_decorator() {
        let base = "import pytest\n\n\n@pytest.mark.slow\n@pytest.mark.parametrize('n', [1, 2])\ndef test_a(n):\n    x = n + 1\n    assert x > n\n    assert x == n + 1\n";
        // The second assert loosened: line 9, under two decorators.
        let loosened = base.replace("assert x == n + 1", "assert x >= n");
        assert_eq!(
            edit_line("t.py", base, &loosened, "test_a", "test_a"),
            Some(9)
        );
        // A comment and re-indentation aside, the last check cut.
        let cut = base
            .replace("    assert x == n + 1\n", "")
            .replace("    x = n + 1\n", "    # one more\n    x = n + 1\n");
        assert_eq!(edit_line("t.py", base, &cut, "test_a", "test_a"), Some(9));
        // Renamed (and the decorator kept): the `def` line.
        let renamed = loosened.replace("def test_a", "def test_b");
        assert_eq!(
            edit_line("t.py", base, &renamed, "test_a", "test_b"),
            Some(6)
        );
        // A check added after the others: the added line.
        let added = format!("{base}    assert x\n");
        assert_eq!(
            edit_line("t.py", base, &added, "test_a", "test_a"),
            Some(10)
        );
    }

    #[test]
    fn the_tests_a_patch_withdrew_are_those_deleted_or_renamed_out_not_renamed() {
        let changes =
            |head: Option<&str>| test_changes("tests/test_cart.py", BASE, head).expect("parses");
        let removed = |head: Option<&str>| changes(head).removed;
        assert_eq!(changes(Some(BASE)), TestChanges::default());
        assert_eq!(
            removed(None),
            vec!["TestCart::test_empty", "test_remove", "test_total"]
        );
        let deleted = BASE.replace("def test_remove(cart):", "def remove_is_fine(cart):");
        assert_eq!(removed(Some(&deleted)), vec!["test_remove"]);
        let renamed = BASE.replace("def test_remove(cart):", "def test_remove_missing(cart):");
        assert_eq!(changes(Some(&renamed)), TestChanges::default());
        let class_gone = BASE.replace("class TestCart:", "class _Cart:");
        assert_eq!(removed(Some(&class_gone)), vec!["TestCart::test_empty"]);
        let edited = renamed.replace("cart.remove('x')", "cart.remove('y')");
        assert_eq!(
            changes(Some(&edited)).changed,
            vec![("test_remove".to_string(), "test_remove_missing".to_string())]
        );
        assert!(test_changes("t.py", BASE, Some("def (")).is_err());
    }

    #[test]
    fn the_patch_version_of_an_edited_test_runs_beside_the_base_version() {
        let head = BASE.replace(
            "    def test_empty(self):\n        self.assertEqual(len(Cart()), 0)",
            "    @pytest.mark.slow\n    def test_empty(self):\n        assert Cart() is not None",
        );
        let both = with_patch_copy(
            "tests/test_cart.py",
            BASE,
            &head,
            ("TestCart::test_empty", "TestCart::test_empty"),
            "test_empty__as_patched",
        )
        .expect("parses")
        .expect("changed");
        assert!(
            both.ends_with(
                "    def test_empty(self):\n        self.assertEqual(len(Cart()), 0)\n\n    @pytest.mark.slow\n    def test_empty__as_patched(self):\n        assert Cart() is not None\n"
            ),
            "{both}"
        );
        assert!(both.starts_with(&BASE[..BASE.find("class TestCart").unwrap()]));
        // Unchanged, or not on both sides: nothing to run.
        let same = ("test_total", "test_total");
        assert_eq!(with_patch_copy("t.py", BASE, BASE, same, "c"), Ok(None));
        let gone = ("test_gone", "test_gone");
        assert_eq!(with_patch_copy("t.py", BASE, &head, gone, "c"), Ok(None));
    }

    /// A refactor that moves the check into a helper the patch adds: the patch's
    /// version runs in the base's file with the helper (and its import) beside it, and
    /// a helper the patch only changed stays the base's.
    #[test]
    fn the_patch_version_runs_with_the_helpers_the_patch_added() {
        let head = BASE
            .replace("import pytest\n", "import math\nimport pytest\n\nLIMIT = 3\n")
            .replace(
                "    assert cart.total() == 3\n",
                "    _total_is(cart, LIMIT)\n",
            )
            .replace("    assert cart.total() == n\n", "    assert cart.total() == n + 0\n")
            + "\n\n@pytest.fixture\ndef _unused():\n    return 1\n\n\ndef _total_is(cart, n):\n    assert math.isclose(cart.total(), n)\n\n\ndef test_new():\n    assert True\n";
        let both = with_patch_copy(
            "tests/test_cart.py",
            BASE,
            &head,
            ("test_total", "test_total"),
            "test_total__as_patched",
        )
        .expect("parses")
        .expect("changed");
        let tail = "\nimport math\n\nLIMIT = 3\n\n@pytest.fixture\ndef _unused():\n    return 1\n\ndef _total_is(cart, n):\n    assert math.isclose(cart.total(), n)\n";
        assert!(both.ends_with(tail), "{both}");
        assert!(
            !both.contains("def test_new"),
            "a new test is not the edited one's: {both}"
        );
        assert!(
            !both.contains("n + 0"),
            "a changed helper stays the base's: {both}"
        );
    }

    #[test]
    fn an_unchanged_or_reformatted_test_is_no_finding() {
        assert_eq!(forms(BASE, BASE), vec![]);
        let reformatted = BASE.replace(
            "assert cart.total() == 3",
            "assert (\n        cart.total()  ==  3\n    )  # kept",
        );
        assert_eq!(forms(BASE, &reformatted), vec![]);
        let compared = compare("tests/test_cart.py", BASE, &reformatted).expect("parses");
        assert_eq!(
            compared.edited,
            vec![],
            "parentheses and a comment are no edit"
        );
    }

    #[test]
    fn an_edited_test_is_listed_by_its_name_at_base_and_in_the_patch() {
        let edited = |head: &str| {
            let compared = compare("tests/test_cart.py", BASE, head).expect("parses");
            let pairs = compared.edited.into_iter();
            pairs.map(|e| (e.from, e.to, e.line)).collect::<Vec<_>>()
        };
        let pair = |from: &str, to: &str, line| (from.to_string(), to.to_string(), line);
        let head = BASE.replace("== 3", "== 4");
        assert_eq!(edited(&head), vec![pair("test_total", "test_total", 6)]);
        let head = head.replace("def test_total(", "def test_sum(");
        assert_eq!(edited(&head), vec![pair("test_total", "test_sum", 6)]);
        let head = BASE
            .replace("'x'", "'y'")
            .replace("class TestCart:", "class TestCart:\n    x = 1");
        assert_eq!(edited(&head), vec![pair("test_remove", "test_remove", 10)]);
        let shadowing = format!("{BASE}\ndef test_total(cart):\n    assert cart.total() == 3\n    assert cart.count() == 2\n");
        assert_eq!(
            edited(&shadowing),
            vec![pair("test_total", "test_total", 18)],
            "the later def is the test pytest runs"
        );
    }

    #[test]
    fn a_constant_assert_is_found_at_its_line() {
        let head = BASE.replace("assert cart.count() == 2", "assert True");
        assert_eq!(forms(BASE, &head), vec![(8, "constant-assert")]);
        let head = BASE.replace(
            "assert cart.count() == 2",
            "assert cart.count() == cart.count()",
        );
        assert_eq!(forms(BASE, &head), vec![(8, "constant-assert")]);
    }

    #[test]
    fn a_deleted_assert_names_what_is_gone() {
        let head = BASE.replace("    assert cart.count() == 2\n", "");
        let found = compare("tests/test_cart.py", BASE, &head).unwrap().findings;
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].line, found[0].form), (6, "check-removed"));
        assert_eq!(
            found[0].detail,
            "test_total makes 2 checks at base, 1 in this patch: `assert cart.count() == 2` (line 8 at base) is gone"
        );
        // Every check gone is named (up to three), not only the first.
        let head = BASE.replace(
            "    assert cart.total() == 3\n    assert cart.count() == 2\n",
            "    cart.total()\n",
        );
        let found = compare("tests/test_cart.py", BASE, &head).unwrap().findings;
        assert_eq!(
            found[0].detail,
            "test_total makes 2 checks at base, 0 in this patch: `assert cart.total() == 3` (line 7 at base) and `assert cart.count() == 2` (line 8 at base) are gone"
        );
    }

    #[test]
    fn a_check_moved_into_a_helper_still_counts() {
        let head = BASE.replace(
            "    assert cart.total() == 3\n",
            "    check_total(cart, 3)\n",
        );
        assert_eq!(forms(BASE, &head), vec![]);
    }

    #[test]
    fn a_swallowed_assertion_is_found_at_its_except() {
        let head = BASE.replace(
            "    assert cart.total() == 3\n",
            "    try:\n        assert cart.total() == 3\n    except AssertionError:\n        pass\n",
        );
        assert_eq!(forms(BASE, &head), vec![(9, "swallowed-assert")]);
        let reraised = head.replace("        pass\n", "        raise\n");
        assert_eq!(forms(BASE, &reraised), vec![]);
    }

    #[test]
    fn raises_widened_to_exception_is_found() {
        let head = BASE.replace("pytest.raises(KeyError)", "pytest.raises(Exception)");
        assert_eq!(forms(BASE, &head), vec![(11, "raises-widened")]);
    }

    #[test]
    fn a_test_redefined_later_is_shadowed() {
        let head = format!("{BASE}\ndef test_total(cart):\n    assert cart\n");
        let found = forms(BASE, &head);
        assert_eq!(found, vec![(18, "shadowed")]);
    }

    #[test]
    fn a_renamed_test_is_the_same_test_at_its_new_name() {
        let renamed = BASE.replace("def test_total(cart)", "def test_total_of_two(cart)");
        let compared = compare("tests/test_cart.py", BASE, &renamed).unwrap();
        assert_eq!(compared.findings, vec![]);
        assert_eq!(
            compared.renames,
            vec![Counterpart {
                from: "test_total".into(),
                to: "test_total_of_two".into(),
                line: 6
            }]
        );
        // Renamed and weakened: judged against its base version.
        let weakened = renamed.replace("    assert cart.count() == 2\n", "");
        let compared = compare("tests/test_cart.py", BASE, &weakened).unwrap();
        assert_eq!(compared.renames.len(), 1);
        assert_eq!(compared.findings.len(), 1);
        assert!(
            compared.findings[0].detail.starts_with(
                "test_total_of_two (renamed from test_total) makes 2 checks at base, 1"
            ),
            "{:?}",
            compared.findings
        );
    }

    #[test]
    fn a_method_of_a_test_class_is_compared_too() {
        let head = BASE.replace("self.assertEqual(len(Cart()), 0)", "pass");
        assert_eq!(forms(BASE, &head), vec![(15, "check-removed")]);
    }

    #[test]
    fn a_whole_file_diff_gives_both_sides_and_a_partial_one_neither() {
        let diff = "\
diff --git a/tests/test_a.py b/tests/test_a.py
--- a/tests/test_a.py
+++ b/tests/test_a.py
@@ -1,3 +1,3 @@
 def test_a():
-    assert f() == 1
+    assert True
 
diff --git a/tests/test_b.py b/tests/test_b.py
--- a/tests/test_b.py
+++ b/tests/test_b.py
@@ -7 +7 @@ def test_b():
-    assert g() == 2
+    assert True
diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1 +1 @@
-a
+b
";
        let sides = sides_from_diff(diff);
        assert_eq!(
            sides,
            vec![
                (
                    "tests/test_a.py".to_string(),
                    Some((
                        "def test_a():\n    assert f() == 1\n\n".to_string(),
                        "def test_a():\n    assert True\n\n".to_string()
                    ))
                ),
                ("tests/test_b.py".to_string(), None),
            ]
        );
    }

    #[test]
    fn a_side_that_does_not_parse_is_named() {
        let err = compare("tests/test_cart.py", BASE, "def test_total(:\n").unwrap_err();
        assert!(err.starts_with("it does not parse in the patch: "), "{err}");
    }

    #[test]
    fn a_gutted_test_is_put_back_as_at_base_and_the_rest_of_the_patch_kept() {
        let base = "import x\n\n@mark\ndef test_a():\n    assert x.f(1) == 2\n    assert x.f(2) == 3\n\n\ndef test_b():\n    assert True\n";
        let head = "import x\n\n@mark\ndef test_a():\n    pass\n\n\ndef test_b():\n    assert True\n\n\ndef test_new():\n    assert x.f(0) == 1\n";
        let put_back = with_base_version("tests/test_x.py", base, head, "test_a")
            .unwrap()
            .unwrap();
        assert_eq!(
            put_back,
            "import x\n\n@mark\ndef test_a():\n    assert x.f(1) == 2\n    assert x.f(2) == 3\n\n\ndef test_b():\n    assert True\n\n\ndef test_new():\n    assert x.f(0) == 1\n"
        );
    }

    #[test]
    fn a_method_is_put_back_at_the_patchs_indentation() {
        let base = "class TestA:\n  def test_a(self):\n    assert f() == 1\n";
        let head = "class TestA:\n    def test_a(self):\n        assert f() == 0\n";
        let put_back = with_base_version("tests/test_x.py", base, head, "TestA::test_a")
            .unwrap()
            .unwrap();
        assert_eq!(
            put_back,
            "class TestA:\n    def test_a(self):\n      assert f() == 1\n"
        );
    }

    #[test]
    fn an_unchanged_reformatted_or_new_test_is_left_as_the_patch_has_it() {
        let base = "def test_a():\n    assert f(1) == 2\n";
        let reformatted = "def test_a():\n    assert f(1)  ==  2\n";
        assert_eq!(
            with_base_version("t.py", base, reformatted, "test_a"),
            Ok(None)
        );
        assert_eq!(with_base_version("t.py", base, base, "test_b"), Ok(None));
        let err = with_base_version("t.py", "def test_a(:\n", base, "test_a").unwrap_err();
        assert!(err.starts_with("it does not parse at base: "), "{err}");
    }
}
