//! The skip baseline (`gate/skip_baseline.json`): the skips, xfails, deselections and
//! collection skips a repository already had when it adopted the gate, each reviewed
//! once. A skip the ledger does not derive and the baseline does not hold is FZ601.

use crate::document::{self, Format, Node, Value};
use crate::error::GateError;
use crate::source::Source;

pub const VERSION: i64 = 1;
pub const DEFAULT_PATH: &str = "gate/skip_baseline.json";
/// The kinds an entry can have.
pub const KINDS: [&str; 5] = ["skip", "xfail", "collection", "deselected", "dropped"];

/// One reviewed entry: a test (or module, for collection skips) and how it is withdrawn.
#[derive(Debug, Clone)]
pub struct BaselineEntry {
    pub test_id: String,
    pub kind: String,
    /// The entry as written, extra fields included (kept on rewrite).
    pub node: Node,
}

#[derive(Debug, Clone, Default)]
pub struct Baseline {
    /// The file's name, when there is one.
    pub name: Option<String>,
    pub entries: Vec<BaselineEntry>,
}

impl Baseline {
    /// The baseline in `source`; every entry needs a `test_id` and a known `kind`.
    pub fn parse(source: &Source) -> Result<Baseline, GateError> {
        let root = document::parse(source, Format::Json)?;
        let bad = |node: &Node, message: String| {
            GateError::new(&source.name, message).at(source, node.span.clone(), "here")
        };
        match root.get("version").map(|n| &n.value) {
            Some(Value::Int(VERSION)) => {}
            _ => {
                return Err(bad(
                    root.get("version").unwrap_or(&root),
                    format!(
                        "is not a skip baseline of version {VERSION} (`\"version\": {VERSION}`)"
                    ),
                )
                .with_help("write it with `freezegate baseline --run gate/run.json`"))
            }
        }
        let Some(Value::Seq(items)) = root.get("skips").map(|n| &n.value) else {
            return Err(bad(&root, "has no `skips` list".into()));
        };
        let mut entries = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let text = |key: &str| item.get(key).and_then(Node::as_str).map(str::to_string);
            let Some(test_id) = text("test_id").filter(|t| !t.trim().is_empty()) else {
                return Err(bad(item, format!("entry #{index} has no `test_id`")));
            };
            let kind = match text("kind") {
                Some(kind) if KINDS.contains(&kind.as_str()) => kind,
                Some(kind) => {
                    let at = item.get("kind").unwrap_or(item);
                    return Err(bad(
                        at,
                        format!(
                            "entry #{index} ({test_id}): kind `{kind}` is not one of {}",
                            KINDS.join(", ")
                        ),
                    ));
                }
                None => {
                    return Err(bad(
                        item,
                        format!("entry #{index} ({test_id}) has no `kind`"),
                    ))
                }
            };
            entries.push(BaselineEntry {
                test_id,
                kind,
                node: item.clone(),
            });
        }
        Ok(Baseline {
            name: Some(source.name.clone()),
            entries,
        })
    }

    pub fn holds(&self, test_id: &str, kind: &str) -> bool {
        self.entries
            .iter()
            .any(|e| e.test_id == test_id && e.kind == kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    fn parse(text: &str) -> Result<Baseline, GateError> {
        Baseline::parse(&SourceFile::new("b.json", "b.json", text))
    }

    #[test]
    fn entries_need_an_id_and_a_known_kind_named_with_their_line() {
        let ok = parse(
            r#"{"version": 1, "skips": [{"test_id": "t.py::a", "kind": "skip", "ticket": "X-1"}]}"#,
        )
        .unwrap();
        assert!(ok.holds("t.py::a", "skip"));
        assert!(!ok.holds("t.py::a", "xfail"));
        let err = parse("{\"version\": 1, \"skips\": [\n  {\"kind\": \"skip\"}]}").unwrap_err();
        assert!(
            err.to_string().contains("entry #0 has no `test_id`"),
            "{err}"
        );
        assert_eq!(err.location().map(|(line, _)| line), Some(2));
        let err = parse(r#"{"version": 1, "skips": [{"test_id": "t.py::a", "kind": "maybe"}]}"#)
            .unwrap_err();
        assert!(err.to_string().contains("kind `maybe`"), "{err}");
        let err = parse(r#"{"skips": []}"#).unwrap_err();
        assert!(err.to_string().contains("version 1"), "{err}");
    }
}
