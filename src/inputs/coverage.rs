//! Per-test line coverage from coverage.py JSON reports with contexts
//! (`pytest --cov --cov-context=test`, then `coverage json --show-contexts`).
//!
//! A report's `files.<path>.contexts` maps each executed line to the contexts that ran
//! it; pytest-cov names a context `<node id>|setup`, `<node id>|run` or
//! `<node id>|teardown`, and `""` is code run outside any test (imports). Every
//! context but `""` counts as a test: its phases merge into one node id, and shards
//! (several `--coverage` files) merge into one table.
//!
//! Lines are stored as integers: each distinct `(file, line)` gets a line id, and each
//! test keeps a sorted `Vec<u32>` of line ids. Scripts never see the sets themselves,
//! only counts and a few `file:line` samples from the native helpers.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::error::GateError;
use crate::inputs::ids::strip_params;
use crate::inputs::InputPath;
use crate::source::Source;

/// Lines per test from one or more coverage reports; shared without copying.
#[derive(Debug, Clone, Default)]
pub struct Coverage(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    files: Vec<String>,
    /// Line id → `(file index, line number)`.
    lines: Vec<(u32, u32)>,
    /// Test index → node id (or the context's name when it is not a pytest-cov one).
    tests: Vec<String>,
    test_index: FxHashMap<String, u32>,
    /// `path::test` → its parametrized cases (`path::test[a]`, ...).
    by_function: FxHashMap<String, Vec<u32>>,
    /// Test index → its line ids, sorted and distinct.
    test_lines: Vec<Vec<u32>>,
    /// Line id → how many tests ran it.
    line_tests: Vec<u32>,
}

/// What one comparison of a test with its deposit found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniqueCoverage {
    /// Lines the test covered that no other test covers (tests in `by` do not count
    /// as others).
    pub at_stake: Vec<u32>,
    /// How many of those the `by` tests cover.
    pub covered: usize,
}

impl Coverage {
    /// Loads and merges every `--coverage` file; `None` when none was given.
    pub fn load(paths: &[InputPath]) -> Result<Option<Coverage>, GateError> {
        if paths.is_empty() {
            return Ok(None);
        }
        let mut builder = Builder::default();
        for path in paths {
            let source = path.read()?;
            builder.read(&source)?;
        }
        Ok(Some(builder.build()))
    }

    /// One report's text (for tests and benchmarks).
    pub fn parse(sources: &[Source]) -> Result<Coverage, GateError> {
        let mut builder = Builder::default();
        for source in sources {
            builder.read(source)?;
        }
        Ok(builder.build())
    }

    /// Tests (contexts) the reports know.
    pub fn test_count(&self) -> usize {
        self.0.tests.len()
    }

    /// Distinct `(file, line)` pairs some context ran.
    pub fn line_count(&self) -> usize {
        self.0.lines.len()
    }

    /// The tests a node id stands for: itself; for `path::test` without parameters,
    /// every parametrized case of it; for coverage's `test_function` contexts
    /// (`tests.test_x.TestC.test_y`), the dotted name of the node id.
    fn resolve(&self, id: &str) -> Vec<u32> {
        self.resolve_context(id).0
    }

    /// [`Coverage::resolve`], also saying whether the test was found through a
    /// `test_function` context, which names a function, not a case.
    fn resolve_context(&self, id: &str) -> (Vec<u32>, bool) {
        let inner = &self.0;
        if let Some(&t) = inner.test_index.get(id) {
            return (vec![t], false);
        }
        if !id.contains('[') {
            if let Some(cases) = inner.by_function.get(id) {
                return (cases.clone(), false);
            }
        }
        let dotted = dotted_name(id);
        let mut rest = dotted.as_str();
        loop {
            if let Some(&t) = inner.test_index.get(rest) {
                return (vec![t], true);
            }
            match rest.split_once('.') {
                Some((_, tail)) if tail.contains('.') => rest = tail,
                _ => return (Vec::new(), false),
            }
        }
    }

    /// The context a parametrized case shares with the other cases of its function
    /// (coverage's `dynamic_context = test_function` names functions, not cases): no
    /// line it ran can be called unique to the case.
    pub fn shared_context(&self, id: &str) -> Option<&str> {
        if !id.contains('[') {
            return None;
        }
        match self.resolve_context(id) {
            (tests, true) => tests.first().map(|&t| self.0.tests[t as usize].as_str()),
            _ => None,
        }
    }

    /// Whether the contexts are coverage's own `test_function` ones (dotted function
    /// names) rather than pytest-cov's node ids.
    pub fn has_function_contexts(&self) -> bool {
        self.0.tests.iter().any(|t| !t.contains("::"))
    }

    fn resolve_all<S: AsRef<str>>(&self, ids: &[S]) -> Vec<u32> {
        let mut tests: Vec<u32> = ids
            .iter()
            .flat_map(|id| self.resolve(id.as_ref()))
            .collect();
        tests.sort_unstable();
        tests.dedup();
        tests
    }

    /// Whether any report has a context for this test.
    pub fn has(&self, id: &str) -> bool {
        !self.resolve(id).is_empty()
    }

    /// The distinct line ids the tests ran, sorted.
    fn union(&self, tests: &[u32]) -> Vec<u32> {
        match tests {
            [] => Vec::new(),
            [t] => self.0.test_lines[*t as usize].clone(),
            _ => {
                let mut lines: Vec<u32> = tests
                    .iter()
                    .flat_map(|t| self.0.test_lines[*t as usize].iter().copied())
                    .collect();
                lines.sort_unstable();
                lines.dedup();
                lines
            }
        }
    }

    /// How many lines the test ran.
    pub fn lines(&self, id: &str) -> usize {
        self.union(&self.resolve(id)).len()
    }

    /// How many lines only this test ran, among every test in the reports.
    pub fn unique_lines(&self, id: &str) -> usize {
        self.deposit::<&str>(id, &[]).at_stake.len()
    }

    /// The lines only `of` ran, not counting the tests `by` as others, and how many of
    /// them `by` covers together.
    pub fn deposit<S: AsRef<str>>(&self, of: &str, by: &[S]) -> UniqueCoverage {
        let of_tests = match self.shared_context(of) {
            Some(_) => Vec::new(),
            None => self.resolve(of),
        };
        let by_tests = self.resolve_all(by);
        let of_lines = self.union(&of_tests);
        if of_lines.is_empty() {
            return UniqueCoverage {
                at_stake: Vec::new(),
                covered: 0,
            };
        }
        let mut group: Vec<u32> = of_tests.iter().chain(&by_tests).copied().collect();
        group.sort_unstable();
        group.dedup();
        // A line is at stake when every test that ran it is in the group: count the
        // group's tests per line of `of` and compare with the line's total.
        let mut in_group: FxHashMap<u32, u32> = FxHashMap::default();
        in_group.reserve(of_lines.len());
        for &line in &of_lines {
            in_group.insert(line, 0);
        }
        for &t in &group {
            for line in &self.0.test_lines[t as usize] {
                if let Some(n) = in_group.get_mut(line) {
                    *n += 1;
                }
            }
        }
        let at_stake: Vec<u32> = of_lines
            .into_iter()
            .filter(|line| in_group[line] == self.0.line_tests[*line as usize])
            .collect();
        let by_lines = self.union(&by_tests);
        let covered = at_stake
            .iter()
            .filter(|line| by_lines.binary_search(line).is_ok())
            .count();
        UniqueCoverage { at_stake, covered }
    }

    /// The lines only `id` ran, as `(file, line)` in file and line order.
    pub fn unique_lines_of(&self, id: &str) -> Vec<(&str, u32)> {
        let mut lines: Vec<(&str, u32)> = self
            .deposit::<&str>(id, &[])
            .at_stake
            .iter()
            .map(|&line| {
                let (file, number) = self.0.lines[line as usize];
                (self.0.files[file as usize].as_str(), number)
            })
            .collect();
        lines.sort_unstable();
        lines
    }

    /// Up to `n` of the lines at stake that `by` does not cover, as `file:line`, in
    /// file and line order.
    pub fn uncovered<S: AsRef<str>>(&self, of: &str, by: &[S], n: usize) -> Vec<String> {
        let deposit = self.deposit(of, by);
        let by_lines = self.union(&self.resolve_all(by));
        let mut missing: Vec<(&str, u32)> = deposit
            .at_stake
            .iter()
            .filter(|line| by_lines.binary_search(line).is_err())
            .map(|&line| {
                let (file, number) = self.0.lines[line as usize];
                (self.0.files[file as usize].as_str(), number)
            })
            .collect();
        missing.sort_unstable();
        missing
            .into_iter()
            .take(n)
            .map(|(file, line)| format!("{file}:{line}"))
            .collect()
    }
}

impl UniqueCoverage {
    /// The share of the lines at stake that the deposit covers; 1.0 when nothing is at
    /// stake.
    pub fn share(&self) -> f64 {
        if self.at_stake.is_empty() {
            1.0
        } else {
            self.covered as f64 / self.at_stake.len() as f64
        }
    }
}

/// `tests/test_x.py::TestC::test_y[a]` → `tests.test_x.TestC.test_y`, the name
/// coverage's `dynamic_context = test_function` gives a test.
fn dotted_name(id: &str) -> String {
    let head = strip_params(id);
    let mut parts = head.split("::");
    let file = parts.next().unwrap_or_default();
    let module = file
        .strip_suffix(".py")
        .unwrap_or(file)
        .replace(['/', '\\'], ".");
    let mut name = module.trim_start_matches('.').to_string();
    for part in parts {
        name.push('.');
        name.push_str(part);
    }
    name
}

/// The node id a pytest-cov context names (`<id>|run`, `|setup`, `|teardown`); other
/// non-empty contexts are kept whole; `""` (no test) is `None`.
pub fn context_test(context: &str) -> Option<&str> {
    if context.is_empty() {
        return None;
    }
    for phase in ["|run", "|setup", "|teardown"] {
        if let Some(id) = context.strip_suffix(phase) {
            return (!id.is_empty()).then_some(id);
        }
    }
    Some(context)
}

#[derive(Default)]
struct Builder {
    files: Vec<String>,
    file_index: FxHashMap<String, u32>,
    line_index: FxHashMap<u64, u32>,
    lines: Vec<(u32, u32)>,
    tests: Vec<String>,
    test_index: FxHashMap<String, u32>,
    /// Raw context text → its test, so each distinct context is split only once.
    contexts: FxHashMap<Box<str>, Option<u32>>,
    test_lines: Vec<Vec<u32>>,
}

impl Builder {
    fn read(&mut self, source: &Source) -> Result<(), GateError> {
        let mut de = serde_json::Deserializer::from_str(&source.text);
        let mut found = Found::default();
        let result = Seed {
            builder: self,
            found: &mut found,
            level: Level::Report,
        }
        .deserialize(&mut de)
        .and_then(|()| de.end());
        if let Err(e) = result {
            let message = crate::error::json_message(&e);
            let err = GateError::new(&source.name, message);
            return Err(match source.json_error_span(&e) {
                None => err,
                Some(span) => err.at(source, span, "here"),
            }
            .with_help(HELP));
        }
        if !found.files {
            return Err(GateError::new(
                &source.name,
                "is not a coverage.py JSON report (no `files` table)",
            )
            .with_help(HELP));
        }
        if found.files_without_contexts > 0 && found.test_contexts == 0 {
            return Err(GateError::new(
                &source.name,
                "has no per-line contexts: it was written without `--show-contexts`",
            )
            .with_help(HELP));
        }
        if found.test_contexts == 0 && found.lines > 0 {
            return Err(GateError::new(
                &source.name,
                "records no test contexts (every line ran outside a test): the run did not record contexts",
            )
            .with_help(HELP));
        }
        Ok(())
    }

    fn file(&mut self, path: &str) -> u32 {
        if let Some(&f) = self.file_index.get(path) {
            return f;
        }
        let f = self.files.len() as u32;
        self.files.push(path.to_string());
        self.file_index.insert(path.to_string(), f);
        f
    }

    fn line(&mut self, file: u32, number: u32) -> u32 {
        let key = (u64::from(file) << 32) | u64::from(number);
        let next = self.lines.len() as u32;
        let id = *self.line_index.entry(key).or_insert(next);
        if id == next {
            self.lines.push((file, number));
        }
        id
    }

    fn test(&mut self, context: &str) -> Option<u32> {
        if let Some(&t) = self.contexts.get(context) {
            return t;
        }
        let t = context_test(context).map(|id| match self.test_index.get(id) {
            Some(&t) => t,
            None => {
                let t = self.tests.len() as u32;
                self.tests.push(id.to_string());
                self.test_index.insert(id.to_string(), t);
                self.test_lines.push(Vec::new());
                t
            }
        });
        self.contexts.insert(context.into(), t);
        t
    }

    fn build(self) -> Coverage {
        let mut test_lines = self.test_lines;
        let mut line_tests = vec![0u32; self.lines.len()];
        for lines in &mut test_lines {
            lines.sort_unstable();
            lines.dedup();
            lines.shrink_to_fit();
            for &line in lines.iter() {
                line_tests[line as usize] += 1;
            }
        }
        let mut by_function: FxHashMap<String, Vec<u32>> = FxHashMap::default();
        for (t, id) in self.tests.iter().enumerate() {
            let head = strip_params(id);
            if head.len() < id.len() {
                by_function
                    .entry(head.to_string())
                    .or_default()
                    .push(t as u32);
            }
        }
        Coverage(Arc::new(Inner {
            files: self.files,
            lines: self.lines,
            tests: self.tests,
            test_index: self.test_index,
            by_function,
            test_lines,
            line_tests,
        }))
    }
}

const HELP: &str = "produce it with `pytest --cov=<package> --cov-context=test` and `coverage json --show-contexts -o coverage.json`";

/// What a report turned out to hold, for the checks after parsing.
#[derive(Default)]
struct Found {
    files: bool,
    files_without_contexts: usize,
    lines: usize,
    test_contexts: usize,
}

/// A string borrowed from the input when it has no escapes.
struct BorrowedStr<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for BorrowedStr<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = BorrowedStr<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<BorrowedStr<'de>, E> {
                Ok(BorrowedStr(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<BorrowedStr<'de>, E> {
                Ok(BorrowedStr(Cow::Owned(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<BorrowedStr<'de>, E> {
                Ok(BorrowedStr(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(V)
    }
}

/// Where in a coverage.py report a value is.
#[derive(Clone, Copy)]
enum Level {
    /// The report: an object with `meta` and `files`.
    Report,
    /// `files`: file path → the file's entry.
    Files,
    /// A file's entry, and the file's index.
    File(u32),
    /// A file's `contexts`: line number → context names.
    Contexts(u32),
    /// One line's context names, and the line's index.
    Line(u32),
}

/// Reads the report level by level, each value straight into the builder: the one seed
/// for every level of the document.
struct Seed<'b> {
    builder: &'b mut Builder,
    found: &'b mut Found,
    level: Level,
}

impl Seed<'_> {
    fn at(&mut self, level: Level) -> Seed<'_> {
        Seed {
            builder: &mut *self.builder,
            found: &mut *self.found,
            level,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        match self.level {
            Level::Line(_) => deserializer.deserialize_seq(self),
            _ => deserializer.deserialize_map(self),
        }
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self.level {
            Level::Report => "a coverage.py JSON report (an object with `meta` and `files`)",
            Level::Files => "`files`: an object of file paths",
            Level::File(_) => "a file's entry: an object with `contexts`",
            Level::Contexts(_) => "`contexts`: an object of line numbers to context lists",
            Level::Line(_) => "a list of context names",
        })
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let mut saw_contexts = false;
        while let Some(key) = map.next_key::<BorrowedStr>()? {
            let inner = match self.level {
                Level::Report if key.0 == "files" => {
                    self.found.files = true;
                    Some(Level::Files)
                }
                Level::Files => Some(Level::File(self.builder.file(&key.0))),
                // Only the file's own `contexts`: `functions` and `classes` repeat them.
                Level::File(file) if key.0 == "contexts" => {
                    saw_contexts = true;
                    Some(Level::Contexts(file))
                }
                Level::Contexts(file) => {
                    // Line 0 is real: coverage.py gives it to an empty module's import.
                    let number: u32 = key.0.parse().map_err(|_| {
                        de::Error::custom(format!(
                            "`contexts` key `{}` is not a line number",
                            key.0
                        ))
                    })?;
                    self.found.lines += 1;
                    Some(Level::Line(self.builder.line(file, number)))
                }
                _ => None,
            };
            match inner {
                Some(level) => map.next_value_seed(self.at(level))?,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if matches!(self.level, Level::File(_)) && !saw_contexts {
            self.found.files_without_contexts += 1;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Level::Line(line) = self.level else {
            return Err(de::Error::invalid_type(de::Unexpected::Seq, &self));
        };
        while let Some(context) = seq.next_element::<BorrowedStr>()? {
            if let Some(t) = self.builder.test(&context.0) {
                self.found.test_contexts += 1;
                self.builder.test_lines[t as usize].push(line);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    /// A file's executed lines, each with its contexts.
    type FileLines<'a> = (&'a str, &'a [(u32, &'a [&'a str])]);

    fn report(files: &[FileLines]) -> String {
        let files: serde_json::Map<String, serde_json::Value> = files
            .iter()
            .map(|(path, lines)| {
                let contexts: serde_json::Map<String, serde_json::Value> = lines
                    .iter()
                    .map(|(line, ctx)| (line.to_string(), serde_json::json!(ctx)))
                    .collect();
                (
                    path.to_string(),
                    serde_json::json!({"executed_lines": [], "contexts": contexts,
                        "functions": {"f": {"contexts": {"999": ["x::y|run"]}}}}),
                )
            })
            .collect();
        serde_json::json!({"meta": {"show_contexts": true}, "files": files}).to_string()
    }

    fn load(texts: &[String]) -> Coverage {
        let sources: Vec<Source> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| SourceFile::new(format!("c{i}.json"), "c.json", t.as_str()))
            .collect();
        Coverage::parse(&sources).unwrap()
    }

    const FROZEN: &str = "tests/t.py::test_frozen";
    const PROP: &str = "tests/p.py::test_prop";
    const OTHER: &str = "tests/t.py::test_other[a-1]";

    fn world() -> Coverage {
        let frozen = "tests/t.py::test_frozen|run";
        let setup = "tests/t.py::test_frozen|setup";
        let prop = "tests/p.py::test_prop|run";
        let other = "tests/t.py::test_other[a-1]|run";
        load(&[report(&[
            (
                "pkg/a.py",
                &[
                    (1, &[""]),
                    (2, &[frozen, other]),
                    (3, &[frozen]),
                    (4, &[frozen, prop]),
                    (5, &[setup]),
                    (6, &[prop]),
                ],
            ),
            ("pkg/b.py", &[(10, &[frozen]), (11, &[other])]),
            // coverage.py's line 0: an empty module's import.
            ("pkg/__init__.py", &[(0, &[""])]),
        ])])
    }

    #[test]
    fn phases_merge_into_node_ids_and_empty_contexts_are_no_test() {
        let cov = world();
        assert_eq!(cov.test_count(), 3);
        assert!(cov.has(FROZEN) && cov.has(PROP) && cov.has(OTHER));
        assert!(!cov.has("tests/t.py::test_missing"));
        assert_eq!(cov.lines(FROZEN), 5); // 2, 3, 4, 5 (setup), b.py:10
        assert_eq!(cov.lines("tests/t.py::test_missing"), 0);
        // The function id without parameters stands for its cases.
        assert_eq!(cov.lines("tests/t.py::test_other"), 2);
        // The `functions` section repeats contexts: not read twice.
        assert_eq!(cov.line_count(), 9);
    }

    #[test]
    fn unique_lines_and_deposit_share() {
        let cov = world();
        // Only the frozen test ran 3, 5 and b.py:10; 4 is also the property's.
        assert_eq!(cov.unique_lines(FROZEN), 3);
        let deposit = cov.deposit(FROZEN, &[PROP]);
        assert_eq!(deposit.at_stake.len(), 4); // 3, 4, 5, b.py:10
        assert_eq!(deposit.covered, 1);
        assert_eq!(deposit.share(), 0.25);
        assert_eq!(
            cov.uncovered(FROZEN, &[PROP], 2),
            ["pkg/a.py:3", "pkg/a.py:5"]
        );
        assert_eq!(cov.uncovered(FROZEN, &[PROP], 9).len(), 3);
        assert_eq!(cov.uncovered(FROZEN, &[PROP], 9)[2], "pkg/b.py:10");
        // Nothing at stake: vacuously covered.
        let none = cov.deposit(PROP, &[FROZEN]);
        assert_eq!(none.at_stake.len(), 2);
        assert_eq!(none.covered, 1);
        let empty = cov.deposit::<&str>("tests/t.py::nope", &[]);
        assert!(empty.at_stake.is_empty());
        assert_eq!(empty.share(), 1.0);
    }

    #[test]
    fn shards_merge() {
        let a = report(&[("pkg/a.py", &[(3, &["tests/t.py::test_frozen|run"])])]);
        let b = report(&[(
            "pkg/a.py",
            &[
                (3, &["tests/p.py::test_prop|run"]),
                (4, &["tests/t.py::test_frozen|run"]),
            ],
        )]);
        let cov = load(&[a, b]);
        assert_eq!(cov.lines(FROZEN), 2);
        assert_eq!(cov.unique_lines(FROZEN), 1);
        assert_eq!(cov.deposit(FROZEN, &[PROP]).covered, 1);
    }

    #[test]
    fn test_function_contexts_map_by_dotted_name() {
        let text = report(&[(
            "pkg/a.py",
            &[(3, &["test_t.TestC.test_y"]), (4, &["tests.test_t.test_z"])],
        )]);
        let cov = load(&[text]);
        assert!(cov.has("tests/test_t.py::TestC::test_y[1]"));
        assert!(cov.has("tests/test_t.py::test_z"));
        assert!(!cov.has("tests/test_t.py::test_q"));
    }

    #[test]
    fn context_names() {
        assert_eq!(context_test("a.py::t[x|run]|run"), Some("a.py::t[x|run]"));
        assert_eq!(context_test("a.py::t|setup"), Some("a.py::t"));
        assert_eq!(context_test(""), None);
        assert_eq!(context_test("|run"), None);
        assert_eq!(dotted_name("tests/a.py::C::t[1]"), "tests.a.C.t");
    }

    fn error(text: &str) -> String {
        let source = SourceFile::new("cov.json", "cov.json", text);
        Coverage::parse(&[source]).unwrap_err().to_string()
    }

    #[test]
    fn bad_reports_name_the_file_and_place() {
        let err = error("{\"files\": {\"a.py\": {\"contexts\": {\"x\": [\"t|run\"]}}}}");
        assert!(err.starts_with("cov.json:1:"), "{err}");
        assert!(err.contains("`x` is not a line number"), "{err}");
        let err = error("{\"files\": {\n\"a.py\": {\"contexts\": {\"1\": [3]}}}}");
        assert!(err.starts_with("cov.json:2:"), "{err}");
        let err = error("{\"files\": {\"a.py\": {\"executed_lines\": [1]}}}");
        assert!(err.contains("--show-contexts"), "{err}");
        let err = error("{\"files\": {\"a.py\": {\"contexts\": {\"1\": [\"\"]}}}}");
        assert!(err.contains("no test contexts"), "{err}");
        let err = error("{\"meta\": {}}");
        assert!(err.contains("no `files`"), "{err}");
        let err = error("[1, 2]");
        assert!(err.contains("coverage.py JSON report"), "{err}");
        let err = error("{\"files\": {}} x");
        assert!(err.starts_with("cov.json:1:"), "{err}");
    }
}
