//! Test outcomes from pytest's `--junitxml` report, looked up by node id.

use std::collections::HashMap;

use quick_xml::events::Event;
use quick_xml::Reader;

use crate::error::GateError;
use crate::inputs::ids::strip_params;
use crate::source::Source;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Passed,
    /// Marked xfail, and passed (a run record tells it apart; JUnit calls it passed).
    Xpassed,
    /// Marked xfail, and failed as expected (JUnit calls it skipped).
    Xfailed,
    Skipped,
    Failed,
    Error,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Xpassed => "xpassed",
            Outcome::Xfailed => "xfailed",
            Outcome::Skipped => "skipped",
            Outcome::Failed => "failed",
            Outcome::Error => "error",
        }
    }
}

/// `(classname, name)` as pytest writes them.
type JunitAddress = (String, String);

/// One test case of a JUnit file: its `file` attribute, when given, and its outcome.
type Case = (Option<String>, Outcome);

/// Outcomes keyed by JUnit `(classname, name)`; `file` kept when the report has it
/// (xunit1); or, from run records, by node id itself.
#[derive(Debug, Default, Clone)]
pub struct Results {
    /// Shared: every script that reads `results` gets a copy of the binding.
    cases: std::sync::Arc<HashMap<JunitAddress, Vec<Case>>>,
    /// From run records: each collected id's outcome by its place (`None`: did not run).
    by_id: Option<std::sync::Arc<(crate::inputs::ids::IdSet, Vec<Option<Outcome>>)>>,
}

impl Results {
    pub fn load(sources: &[Source]) -> Result<Results, GateError> {
        let mut results = Results::default();
        for source in sources {
            results.read(source)?;
        }
        Ok(results)
    }

    /// Outcomes by node id, as run records give them: each id of `ids` by its place.
    pub fn by_place(ids: crate::inputs::ids::IdSet, outcomes: Vec<Option<Outcome>>) -> Results {
        Results {
            cases: Default::default(),
            by_id: Some(std::sync::Arc::new((ids, outcomes))),
        }
    }

    /// The worst outcome recorded for a node id (pytest writes a second `testcase` for a
    /// teardown error), or `None` when it did not run.
    pub fn outcome(&self, node_id: &str) -> Option<Outcome> {
        if let Some(by_id) = &self.by_id {
            let (ids, outcomes) = &**by_id;
            return ids
                .position(node_id)
                .and_then(|at| outcomes.get(at).copied().flatten());
        }
        let (classname, name) = junit_address(node_id);
        let file = crate::inputs::ids::file_of(node_id);
        self.cases
            .get(&(classname, name))?
            .iter()
            .filter(|(f, _)| f.as_deref().is_none_or(|f| f == file))
            .map(|(_, o)| *o)
            .max()
    }

    pub fn len(&self) -> usize {
        match &self.by_id {
            Some(by_id) => by_id.1.iter().flatten().count(),
            None => self.cases.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn read(&mut self, source: &Source) -> Result<(), GateError> {
        let mut reader = Reader::from_str(&source.text);
        let mut current: Option<((String, String), Option<String>, Outcome)> = None;
        let mut saw_suite = false;
        loop {
            let position = reader.buffer_position() as usize;
            let event = reader.read_event().map_err(|e| {
                GateError::new(&source.name, format!("is not valid JUnit XML: {e}")).at(
                    source,
                    position..position,
                    "here",
                )
            })?;
            match event {
                Event::Start(tag) | Event::Empty(tag) if tag.name().as_ref() == b"testcase" => {
                    let is_empty =
                        matches!(event_kind(&reader, &source.text, position), Kind::Empty);
                    let mut classname = String::new();
                    let mut name = None;
                    let mut file = None;
                    for attr in tag.attributes().flatten() {
                        let value = attr
                            .unescape_value()
                            .map_err(|e| {
                                GateError::new(&source.name, format!("bad attribute: {e}"))
                            })?
                            .into_owned();
                        match attr.key.as_ref() {
                            b"classname" => classname = value,
                            b"name" => name = Some(value),
                            b"file" => file = Some(value),
                            _ => {}
                        }
                    }
                    let Some(name) = name else {
                        return Err(GateError::new(
                            &source.name,
                            "has a <testcase> without `name`",
                        )
                        .at(source, position..position, "here"));
                    };
                    let case = ((classname, name), file, Outcome::Passed);
                    if is_empty {
                        self.push(case);
                    } else {
                        current = Some(case);
                    }
                }
                Event::Start(tag) | Event::Empty(tag) => {
                    let outcome = match tag.name().as_ref() {
                        b"testsuite" | b"testsuites" => {
                            saw_suite = true;
                            None
                        }
                        b"failure" => Some(Outcome::Failed),
                        b"error" => Some(Outcome::Error),
                        b"skipped" => Some(Outcome::Skipped),
                        _ => None,
                    };
                    if let (Some(outcome), Some(case)) = (outcome, current.as_mut()) {
                        case.2 = case.2.max(outcome);
                    }
                }
                Event::End(tag) if tag.name().as_ref() == b"testcase" => {
                    if let Some(case) = current.take() {
                        self.push(case);
                    }
                }
                Event::Eof => break,
                _ => {}
            }
        }
        if !saw_suite {
            return Err(
                GateError::new(&source.name, "is not a JUnit report (no <testsuite>)")
                    .with_help("pass the file pytest wrote with --junitxml"),
            );
        }
        Ok(())
    }

    fn push(&mut self, (key, file, outcome): ((String, String), Option<String>, Outcome)) {
        std::sync::Arc::make_mut(&mut self.cases)
            .entry(key)
            .or_default()
            .push((file, outcome));
    }
}

enum Kind {
    Empty,
    Start,
}

/// Whether the tag just read ended with `/>`.
fn event_kind(reader: &Reader<&[u8]>, text: &str, start: usize) -> Kind {
    let end = reader.buffer_position() as usize;
    match text.get(start..end) {
        Some(tag) if tag.trim_end().ends_with("/>") => Kind::Empty,
        _ => Kind::Start,
    }
}

/// The `(classname, name)` pytest's junitxml writes for a node id.
pub fn junit_address(node_id: &str) -> (String, String) {
    let head = strip_params(node_id);
    let params = &node_id[head.len()..];
    let mut names: Vec<String> = head.split("::").map(str::to_string).collect();
    names[0] = names[0].replace('/', ".");
    if let Some(stripped) = names[0].strip_suffix(".py") {
        names[0] = stripped.to_string();
    }
    let last = names.len() - 1;
    names[last].push_str(params);
    let name = names.pop().unwrap_or_default();
    (names.join("."), name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    const XML: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="4">
<testcase classname="tests.props.test_p" name="test_ok" time="0.1" />
<testcase classname="tests.test_b.TestC" name="test_f[a::b]" time="0.1"><failure message="x">boom</failure></testcase>
<testcase classname="tests.test_b" name="test_s" time="0.0"><skipped type="pytest.skip" message="frozen">x</skipped></testcase>
<testcase classname="tests.test_b" name="test_t" time="0.0" />
<testcase classname="tests.test_b" name="test_t" time="0.0"><error message="teardown">x</error></testcase>
</testsuite></testsuites>"#;

    #[test]
    fn outcomes_map_back_to_node_ids() {
        let results = Results::load(&[SourceFile::new("j.xml", "j.xml", XML)]).unwrap();
        assert_eq!(
            results.outcome("tests/props/test_p.py::test_ok"),
            Some(Outcome::Passed)
        );
        assert_eq!(
            results.outcome("tests/test_b.py::TestC::test_f[a::b]"),
            Some(Outcome::Failed)
        );
        assert_eq!(
            results.outcome("tests/test_b.py::test_s"),
            Some(Outcome::Skipped)
        );
        assert_eq!(
            results.outcome("tests/test_b.py::test_t"),
            Some(Outcome::Error)
        );
        assert_eq!(results.outcome("tests/test_b.py::test_missing"), None);
    }

    #[test]
    fn not_junit_is_an_error() {
        let err = Results::load(&[SourceFile::new("j.xml", "j.xml", "<html></html>")]).unwrap_err();
        assert!(err.to_string().contains("no <testsuite>"), "{err}");
    }
}
