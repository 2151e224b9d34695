//! The messages the plugin sends over the pipe, one line each: `KIND JSON`.
//!
//! - `hello {"token", "record", "pid", "commit", "dirty", "ledger", "ledger_sha256"}`:
//!   first, as soon as the plugin is configured;
//! - `test [node id, row]`: a test's row of the record once the test finished;
//! - `record {...}`: the whole record, at the end of the session;
//! - `norecord {"why"}`: the session ends with no record (a `--collect-only` run).

use serde::Deserialize;

/// The plugin's first message.
#[derive(Debug, Clone, Deserialize)]
pub struct Hello {
    pub token: String,
    /// Where the record goes (absolute, or relative to pytest's invocation directory).
    pub record: String,
    #[serde(default)]
    pub commit: Option<String>,
    #[serde(default)]
    pub dirty: bool,
    #[serde(default)]
    pub ledger: Option<String>,
    #[serde(default)]
    pub ledger_sha256: Option<String>,
}

/// One line off the pipe.
#[derive(Debug)]
pub enum Message {
    Hello(Hello),
    Test(String, Box<serde_json::value::RawValue>),
    Record(String),
    NoRecord(String),
}

impl Message {
    /// A line as the plugin writes it (without its newline); `Err` says what is wrong.
    pub fn parse(line: &str) -> Result<Message, String> {
        let (kind, payload) = line
            .split_once(' ')
            .ok_or_else(|| format!("a line without a message kind: {}", preview(line)))?;
        let bad = |e: serde_json::Error| format!("a `{kind}` message that does not parse: {e}");
        Ok(match kind {
            "hello" => Message::Hello(serde_json::from_str(payload).map_err(bad)?),
            "test" => {
                let (id, row): (String, Box<serde_json::value::RawValue>) =
                    serde_json::from_str(payload).map_err(bad)?;
                Message::Test(id, row)
            }
            "record" => Message::Record(payload.to_string()),
            "norecord" => {
                #[derive(Deserialize)]
                struct Why {
                    why: String,
                }
                Message::NoRecord(serde_json::from_str::<Why>(payload).map_err(bad)?.why)
            }
            _ => return Err(format!("an unknown message `{kind}`")),
        })
    }
}

fn preview(line: &str) -> String {
    let mut shown: String = line.chars().take(60).collect();
    if shown.len() < line.len() {
        shown.push('…');
    }
    format!("`{shown}`")
}

/// A row of the record, as far as the pipe's checks read it.
#[derive(Deserialize)]
struct Row<'a> {
    #[serde(borrow)]
    outcome: Option<std::borrow::Cow<'a, str>>,
}

/// The outcome a test's row names; `None` when it names none or does not parse.
fn outcome_of(row: &serde_json::value::RawValue) -> Option<std::borrow::Cow<'_, str>> {
    serde_json::from_str::<Row>(row.get()).ok()?.outcome
}

/// Everything the pipe brought, in order.
#[derive(Debug, Default)]
pub struct Received {
    pub hello: Option<Hello>,
    /// Rows of the tests that finished, in the order they finished.
    pub rows: Vec<(String, Box<serde_json::value::RawValue>)>,
    /// The whole record, when the session got to its end.
    pub record: Option<String>,
    /// Why the session ended with no record, when the plugin said so.
    pub no_record: Option<String>,
    /// What went wrong on the pipe: a wrong token, a line that does not parse, a
    /// message out of order. Nothing after it was taken.
    pub broken: Option<String>,
}

impl Received {
    /// Whether nothing more is to come: the record, the word that there is none, or a
    /// broken pipe.
    pub fn is_over(&self) -> bool {
        self.record.is_some() || self.no_record.is_some() || self.broken.is_some()
    }

    /// Takes one line; after a broken pipe, nothing more.
    pub fn take(&mut self, line: &str, token: &str) {
        if self.broken.is_some() {
            return;
        }
        let message = match Message::parse(line) {
            Ok(message) => message,
            Err(why) => {
                self.broken = Some(why);
                return;
            }
        };
        match (message, &self.hello) {
            (Message::Hello(hello), None) => {
                if hello.token != token {
                    self.broken = Some(
                        "the plugin answered with another token than this run handed it: the record is not from the pytest this run started".into(),
                    );
                    return;
                }
                self.hello = Some(hello);
            }
            (Message::Hello(_), Some(_)) => self.broken = Some("a second `hello`".into()),
            (_, None) => {
                self.broken = Some("a message before the plugin's `hello` (no token)".into())
            }
            (_, Some(_)) if self.record.is_some() || self.no_record.is_some() => {
                self.broken = Some("a message after the record".into())
            }
            (Message::Test(id, row), Some(_)) => self.rows.push((id, row)),
            (Message::Record(text), Some(_)) => self.record = Some(text),
            (Message::NoRecord(why), Some(_)) => self.no_record = Some(why),
        }
    }

    /// The tests whose rows said they failed or errored, as they finished: the run's
    /// verdict on outcomes, whatever pytest's exit status says.
    pub fn failed(&self) -> Vec<&str> {
        self.rows
            .iter()
            .filter(|(_, row)| matches!(outcome_of(row).as_deref(), Some("failed" | "error")))
            .map(|(id, _)| id.as_str())
            .collect()
    }

    /// Where the record disagrees with the rows the plugin sent as each test finished: a
    /// test whose last row said one outcome and the record another, a test that finished
    /// and is not in the record, or (in a record that says it is complete) a test in the
    /// record that never finished. Both come from one plugin in one process, so something
    /// else in it rewrote the record in between (a hook, a patched plugin). `None` when
    /// they agree; else what differs, for the error.
    pub fn disagreement(&self, record: &str) -> Option<String> {
        #[derive(Deserialize)]
        struct Record<'a> {
            #[serde(borrow, default)]
            tests: rustc_hash::FxHashMap<std::borrow::Cow<'a, str>, Row<'a>>,
            #[serde(default)]
            complete: bool,
        }
        let record: Record = match serde_json::from_str(record) {
            Ok(record) => record,
            Err(e) => return Some(format!("the record does not parse: {e}")),
        };
        // Each test's last row (a rerun plugin reports a test again).
        let mut finished: rustc_hash::FxHashMap<&str, std::borrow::Cow<str>> = Default::default();
        for (id, row) in &self.rows {
            finished.insert(id.as_str(), outcome_of(row).unwrap_or("passed".into()));
        }
        let mut ids: Vec<&&str> = finished.keys().collect();
        ids.sort_unstable();
        for id in ids {
            let row = &finished[*id];
            match record.tests.get(*id) {
                None => {
                    return Some(format!(
                        "{id} finished {row}, and the record does not list it"
                    ))
                }
                Some(entry) => {
                    let said = entry.outcome.as_deref().unwrap_or("passed");
                    if said != row {
                        return Some(format!("{id} finished {row}, and the record says {said}"));
                    }
                }
            }
        }
        if record.complete {
            let mut unfinished: Vec<&str> = record
                .tests
                .keys()
                .map(|id| id.as_ref())
                .filter(|id| !finished.contains_key(id))
                .collect();
            unfinished.sort_unstable();
            if let Some(id) = unfinished.first() {
                return Some(format!(
                    "the record lists {id}, which never finished in this run"
                ));
            }
        }
        None
    }

    /// The record of a run that did not get to its end: the header the plugin sent, the
    /// rows of the tests that finished, `complete: false` and why. For inspection: the
    /// gate refuses it like every incomplete record.
    pub fn partial_record(&self, why: &str) -> Option<String> {
        let hello = self.hello.as_ref()?;
        let mut tests = serde_json::Map::new();
        let mut collected = Vec::new();
        for (id, row) in &self.rows {
            let value: serde_json::Value =
                serde_json::from_str(row.get()).unwrap_or(serde_json::Value::Null);
            if tests.insert(id.clone(), value).is_none() {
                collected.push(serde_json::Value::String(id.clone()));
            }
        }
        let record = serde_json::json!({
            "version": crate::inputs::run_record::VERSION,
            "kind": crate::inputs::run_record::KIND,
            "commit": hello.commit,
            "dirty": hello.dirty,
            "ledger": hello.ledger,
            "ledger_sha256": hello.ledger_sha256,
            "complete": false,
            "incomplete": why,
            "collected": collected,
            "tests": tests,
        });
        Some(record.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HELLO: &str = r#"hello {"token":"t0k","record":"gate/run.json","pid":1,"commit":"abc","dirty":false,"ledger":"gate/l.json","ledger_sha256":"00"}"#;

    #[test]
    fn the_messages_of_a_whole_run_are_taken_in_order() {
        let mut received = Received::default();
        for line in [
            HELLO,
            r#"test ["t.py::a",{"outcome":"passed"}]"#,
            r#"record {"version":1}"#,
        ] {
            received.take(line, "t0k");
        }
        assert_eq!(received.broken, None);
        assert_eq!(received.rows.len(), 1);
        assert_eq!(received.record.as_deref(), Some(r#"{"version":1}"#));
    }

    #[test]
    fn another_token_or_no_hello_breaks_the_pipe_and_nothing_after_is_taken() {
        let mut received = Received::default();
        received.take(HELLO, "another");
        assert!(received
            .broken
            .as_deref()
            .unwrap()
            .contains("another token"));
        received.take(r#"record {"version":1}"#, "another");
        assert_eq!(received.record, None);

        let mut received = Received::default();
        received.take(r#"record {"version":1}"#, "t0k");
        assert!(received.broken.as_deref().unwrap().contains("no token"));

        let mut received = Received::default();
        received.take(HELLO, "t0k");
        received.take("test [not json", "t0k");
        assert!(received
            .broken
            .as_deref()
            .unwrap()
            .contains("does not parse"));
    }

    #[test]
    fn a_record_that_says_otherwise_than_the_rows_is_a_disagreement() {
        let mut received = Received::default();
        received.take(HELLO, "t0k");
        received.take(r#"test ["t.py::a",{"outcome":"failed"}]"#, "t0k");
        received.take(r#"test ["t.py::b",{"outcome":"passed"}]"#, "t0k");
        let agrees = r#"{"complete":true,"tests":{"t.py::a":{"outcome":"failed","lines":[1,2]},"t.py::b":{"outcome":"passed"}}}"#;
        assert_eq!(received.disagreement(agrees), None);
        let flipped = agrees.replace(r#""outcome":"failed""#, r#""outcome":"passed""#);
        assert_eq!(
            received.disagreement(&flipped).as_deref(),
            Some("t.py::a finished failed, and the record says passed")
        );
        let dropped = r#"{"complete":true,"tests":{"t.py::b":{"outcome":"passed"}}}"#;
        assert_eq!(
            received.disagreement(dropped).as_deref(),
            Some("t.py::a finished failed, and the record does not list it")
        );
        let added = agrees.replace("}}}", r#"},"t.py::c":{"outcome":"passed"}}}"#);
        assert_eq!(
            received.disagreement(&added).as_deref(),
            Some("the record lists t.py::c, which never finished in this run")
        );
        // An incomplete record may list a test whose teardown never came.
        let incomplete = added.replace(r#""complete":true"#, r#""complete":false"#);
        assert_eq!(received.disagreement(&incomplete), None);
    }

    #[test]
    fn a_partial_record_keeps_the_finished_tests_and_says_why_it_is_incomplete() {
        let mut received = Received::default();
        received.take(HELLO, "t0k");
        received.take(r#"test ["t.py::a",{"outcome":"failed"}]"#, "t0k");
        let text = received
            .partial_record("pytest was killed by signal 9")
            .unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["complete"], false);
        assert_eq!(value["incomplete"], "pytest was killed by signal 9");
        assert_eq!(value["tests"]["t.py::a"]["outcome"], "failed");
        assert_eq!(value["collected"][0], "t.py::a");
        assert_eq!(value["commit"], "abc");
    }
}
