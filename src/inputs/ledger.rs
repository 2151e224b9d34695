//! The freeze ledger: schema 1, in JSON, YAML or TOML, every field with its span.

use std::path::Path;

use crate::document::{self, Format, Node, Value};
use crate::error::GateError;
use crate::source::{Source, SourceFile, Span};

pub const SCHEMA: i64 = 1;

/// The fields the schema names; everything else is kept as written for scripts.
pub const FIELDS: [&str; 9] = [
    "test_id",
    "reason",
    "owner",
    "opened",
    "expires",
    "invariant",
    "compensating_property",
    "reused_property",
    "retired",
];

/// The fields the core checks are strings: the first six of [`FIELDS`].
const STRING_FIELDS: &[&str] = FIELDS.split_at(6).0;

#[derive(Debug)]
pub struct Ledger {
    pub source: Source,
    pub format: Format,
    pub schema: i64,
    pub max_window_days: Option<i64>,
    /// The whole document, for top-level keys scripts may read; its `freezes` list is
    /// left empty (with its span), the items having moved into `entries`.
    pub root: Node,
    /// Shared with scripts, whose entries read these nodes instead of copies.
    pub entries: std::sync::Arc<[Entry]>,
    /// Whether entries were compared with the ledger at the base ([`Ledger::compare_with`]).
    pub has_base: bool,
}

#[derive(Debug, Clone)]
pub struct Entry {
    pub index: usize,
    /// A map node.
    pub node: Node,
    /// No entry of the base ledger freezes this test (every entry, without a base).
    pub is_new: bool,
    /// The fields whose values differ from the base entry's; `None` for a new entry,
    /// all of whose fields are new (see [`Entry::changed_fields`]).
    pub changed: Option<Vec<String>>,
}

impl Entry {
    pub fn field(&self, name: &str) -> Option<&Node> {
        self.node.get(name)
    }

    pub fn test_id(&self) -> Option<&str> {
        self.field("test_id").and_then(Node::as_str)
    }

    /// A retired test (`retired = true`): deleted for good, its deposit standing for it.
    pub fn is_retired(&self) -> bool {
        matches!(
            self.field("retired").map(|n| &n.value),
            Some(Value::Bool(true))
        )
    }

    /// The fields that differ from the base entry's: every field of a new entry.
    pub fn changed_fields(&self) -> Vec<&str> {
        match (&self.changed, &self.node.value) {
            (Some(changed), _) => changed.iter().map(String::as_str).collect(),
            (None, Value::Map(fields)) => fields.iter().map(|(key, _)| key.as_str()).collect(),
            (None, _) => Vec::new(),
        }
    }

    /// The compensating property ids, whether written as one id or a list.
    pub fn properties(&self) -> Vec<&str> {
        match self.field("compensating_property").map(|n| &n.value) {
            Some(Value::Str(s)) => vec![s.as_str()],
            Some(Value::Seq(items)) => items.iter().filter_map(Node::as_str).collect(),
            _ => Vec::new(),
        }
    }

    /// The span of a field path such as `owner` or `compensating_property[1]`; the
    /// entry itself when the field is absent.
    pub fn span_of(&self, field: &str) -> (Span, bool) {
        let (name, index) = match field.split_once('[') {
            Some((name, rest)) => (name, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (field, None),
        };
        match (self.field(name), index) {
            (Some(node), Some(i)) => match &node.value {
                Value::Seq(items) if i < items.len() => (items[i].span.clone(), true),
                _ => (node.span.clone(), true),
            },
            (Some(node), None) => (node.span.clone(), true),
            (None, _) => (self.node.span.clone(), false),
        }
    }
}

impl Ledger {
    pub fn load(path: &Path, name: &str) -> Result<Ledger, GateError> {
        let format = Format::from_path(path).ok_or_else(|| {
            GateError::new(name, "has an unknown extension")
                .with_help("a ledger is .json, .yaml, .yml or .toml")
        })?;
        let source = SourceFile::read(path, name)?;
        Self::parse(source, format)
    }

    pub fn parse(source: Source, format: Format) -> Result<Ledger, GateError> {
        let mut root = document::parse(&source, format)?;
        let bad = |node: &Node, message: String| {
            GateError::new(&source.name, message).at(&source, node.span.clone(), "here")
        };
        // A key the document lacks: pointed at the document's start.
        let lacks = |root: &Node, message: &str, label: &str, help: &str| {
            GateError::new(&source.name, message)
                .at(&source, root.span.start..root.span.start, label)
                .with_help(help)
        };
        if !matches!(root.value, Value::Map(_)) {
            return Err(bad(
                &root,
                format!("must be a table, found {}", root.value.kind()),
            ));
        }
        // Help in the ledger's own syntax.
        let (schema_line, empty_ledger) = match format {
            Format::Json => ("`\"schema\": 1`", "`{\"schema\": 1, \"freezes\": []}`"),
            Format::Yaml => ("`schema: 1`", "`schema: 1` and `freezes: []`"),
            Format::Toml => ("`schema = 1`", "`schema = 1` and `freezes = []`"),
        };
        let schema = match root.get("schema") {
            None => {
                return Err(lacks(
                    &root,
                    "has no `schema`",
                    &format!("expected {schema_line} in this document"),
                    &format!("add {schema_line} at the top of the ledger"),
                ))
            }
            Some(node) => match node.value {
                Value::Int(SCHEMA) => SCHEMA,
                _ => {
                    return Err(bad(
                        node,
                        "has an unknown `schema`; this freezegate reads schema 1".into(),
                    )
                    .with_help("upgrade freezegate, or write the ledger in schema 1"))
                }
            },
        };
        let max_window_days = match root.get("max_window_days") {
            None => None,
            Some(node) => match node.value {
                Value::Int(n) if n >= 0 => Some(n),
                _ => {
                    return Err(bad(
                        node,
                        "`max_window_days` must be a non-negative integer".into(),
                    ))
                }
            },
        };
        let items = match root.get("freezes") {
            None => {
                return Err(lacks(
                    &root,
                    "has no `freezes` list",
                    "expected `freezes` in this document",
                    &format!("an empty ledger is {empty_ledger}"),
                ))
            }
            Some(node) => match &node.value {
                Value::Seq(_) => take_items(&mut root),
                other => {
                    return Err(bad(
                        node,
                        format!("`freezes` must be a list, found {}", other.kind()),
                    ))
                }
            },
        };
        let mut entries = Vec::with_capacity(items.len());
        for (index, node) in items.into_iter().enumerate() {
            check_entry_types(&source, index, &node)?;

            entries.push(Entry {
                index,
                node,
                is_new: true,
                changed: None,
            });
        }
        Ok(Ledger {
            source,
            format,
            schema,
            max_window_days,
            root,
            entries: entries.into(),
            has_base: false,
        })
    }

    /// Marks each entry new or not, and the fields it changes, against the ledger at
    /// the base (entries are matched by `test_id`); `None` when the base has no ledger,
    /// so every entry is new.
    pub fn compare_with(&mut self, base: Option<&Ledger>) {
        let by_test: rustc_hash::FxHashMap<&str, &Entry> = base
            .map(|base| {
                base.entries
                    .iter()
                    .filter_map(|e| e.test_id().map(|id| (id, e)))
                    .collect()
            })
            .unwrap_or_default();
        let compared: Vec<Option<Vec<String>>> = self
            .entries
            .iter()
            .map(|entry| {
                let before = entry.test_id().and_then(|id| by_test.get(id))?;
                let keys = |e: &'_ Entry| -> Vec<String> {
                    match &e.node.value {
                        Value::Map(fields) => fields.iter().map(|(k, _)| k.to_string()).collect(),
                        _ => Vec::new(),
                    }
                };
                let mut changed: Vec<String> = keys(entry)
                    .into_iter()
                    .chain(keys(before))
                    .filter(|key| match (entry.field(key), before.field(key)) {
                        (Some(now), Some(then)) => !now.same_value(then),
                        (None, None) => false,
                        _ => true,
                    })
                    .collect();
                changed.sort();
                changed.dedup();
                Some(changed)
            })
            .collect();
        let mut entries: Vec<Entry> = self.entries.iter().map(Entry::clone).collect();
        for (entry, changed) in entries.iter_mut().zip(compared) {
            if let Some(changed) = changed {
                entry.is_new = false;
                entry.changed = Some(changed);
            }
        }
        self.entries = entries.into();
        self.has_base = true;
    }

    /// The SHA-256 of the ledger's text, as a run record names the ledger its skips were
    /// derived from.
    pub fn sha256(&self) -> String {
        sha256_hex(&self.source.text)
    }

    /// Every frozen test id, in ledger order, each once.
    pub fn derived_skips(&self) -> Vec<String> {
        let mut seen = rustc_hash::FxHashSet::default();
        self.entries
            .iter()
            .filter_map(Entry::test_id)
            .filter(|id| !id.is_empty() && seen.insert(*id))
            .map(str::to_string)
            .collect()
    }
}

/// The `freezes` items, moved out of the document (never copied: they are most of it).
fn take_items(root: &mut Node) -> Vec<Node> {
    let Value::Map(fields) = &mut root.value else {
        return Vec::new();
    };
    match fields.iter_mut().find(|(key, _)| key == "freezes") {
        Some((
            _,
            Node {
                value: Value::Seq(items),
                ..
            },
        )) => std::mem::take(items),
        _ => Vec::new(),
    }
}

fn check_entry_types(source: &Source, index: usize, node: &Node) -> Result<(), GateError> {
    let wrong = |node: &Node, what: &str| {
        GateError::new(
            &source.name,
            format!("freeze #{index}: {what}, found {}", node.value.kind()),
        )
        .at(
            source,
            node.span.clone(),
            format!("{} here", node.value.kind()),
        )
    };
    let Value::Map(fields) = &node.value else {
        return Err(wrong(node, "each freeze must be a table"));
    };
    for (key, value) in fields {
        let key = key.as_str();
        if key == "index" {
            return Err(wrong(
                value,
                "`index` is reserved (freezegate numbers entries itself)",
            ));
        }
        if STRING_FIELDS.contains(&key) && !matches!(value.value, Value::Str(_) | Value::Null) {
            return Err(wrong(value, &format!("`{key}` must be a string")));
        }
        if matches!(key, "reused_property" | "retired")
            && !matches!(value.value, Value::Bool(_) | Value::Null)
        {
            return Err(wrong(value, &format!("`{key}` must be true or false")));
        }
        if key == "compensating_property" {
            match &value.value {
                Value::Str(_) | Value::Null => {}
                Value::Seq(items) => {
                    if let Some(item) = items.iter().find(|i| !matches!(i.value, Value::Str(_))) {
                        return Err(wrong(
                            item,
                            "`compensating_property` items must be node id strings",
                        ));
                    }
                }
                _ => {
                    return Err(wrong(
                        value,
                        "`compensating_property` must be a node id or a list of them",
                    ))
                }
            }
        }
    }
    Ok(())
}

/// The SHA-256 of a ledger's text, in hex: how a run or proof record names the ledger
/// its skips were derived from.
pub fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, format: Format) -> Result<Ledger, GateError> {
        Ledger::parse(SourceFile::new("ledger", "ledger", text), format)
    }

    #[test]
    fn a_ledger_without_freezes_gets_help_in_its_own_syntax() {
        for (text, format, help) in [
            (
                "{\"schema\": 1}",
                Format::Json,
                "`{\"schema\": 1, \"freezes\": []}`",
            ),
            ("schema: 1\n", Format::Yaml, "`freezes: []`"),
            (
                "schema = 1\n",
                Format::Toml,
                "`schema = 1` and `freezes = []`",
            ),
        ] {
            let err = parse(text, format).unwrap_err();
            let shown = format!("{:?}", miette::Report::new(err));
            assert!(shown.contains(help), "{format:?}: {shown}");
        }
        let err = parse("freezes = []\n", Format::Toml).unwrap_err();
        assert!(format!("{:?}", miette::Report::new(err)).contains("add `schema = 1`"));
    }

    #[test]
    fn unknown_schema_is_an_error_at_the_value() {
        let err = parse("{\"schema\": 2, \"freezes\": []}", Format::Json).unwrap_err();
        assert!(err.to_string().contains("unknown `schema`"), "{err}");
        assert_eq!(err.location(), Some((1, 12)));
    }

    #[test]
    fn wrong_field_type_names_the_entry_and_field() {
        let text = "schema: 1\nfreezes:\n  - test_id: t.py::a\n    owner: 42\n";
        let err = parse(text, Format::Yaml).unwrap_err();
        assert!(
            err.to_string()
                .contains("freeze #0: `owner` must be a string"),
            "{err}"
        );
        assert_eq!(err.location(), Some((4, 12)));
    }

    /// A ledger checked out on Windows (`core.autocrlf`) has CRLF line ends: it means
    /// what its LF twin means, values carry no `\r`, and errors point at the same line and
    /// column.
    #[test]
    fn crlf_ledgers_read_like_lf_ones() {
        let json = "{\n  \"schema\": 1,\n  \"freezes\": [\n    {\"test_id\": \"tests/a.py::t\", \"reason\": \"flaky\\non CI\", \"owner\": \"ana\"}\n  ]\n}\n";
        let yaml = "schema: 1\nfreezes:\n  - test_id: tests/a.py::t\n    reason: |\n      flaky\n      on CI\n    owner: ana\n";
        let toml = "schema = 1\n[[freezes]]\ntest_id = \"tests/a.py::t\"\nreason = \"\"\"\nflaky\non CI\"\"\"\nowner = \"ana\"\n";
        for (text, format) in [
            (json, Format::Json),
            (yaml, Format::Yaml),
            (toml, Format::Toml),
        ] {
            let crlf = text.replace('\n', "\r\n");
            let (lf, crlf) = (parse(text, format).unwrap(), parse(&crlf, format).unwrap());
            assert_eq!(crlf.entries.len(), 1, "{format:?}");
            let entry = &crlf.entries[0];
            assert_eq!(entry.test_id(), Some("tests/a.py::t"), "{format:?}");
            assert_eq!(
                entry.field("owner").and_then(Node::as_str),
                Some("ana"),
                "{format:?}"
            );
            let reason = |l: &Ledger| {
                l.entries[0]
                    .field("reason")
                    .and_then(Node::as_str)
                    .map(|r| r.trim_end().to_string())
            };
            assert_eq!(reason(&crlf), reason(&lf), "{format:?}");
            assert_eq!(reason(&crlf).as_deref(), Some("flaky\non CI"), "{format:?}");
            assert_eq!(crlf.derived_skips(), lf.derived_skips(), "{format:?}");
        }
        for (text, format) in [
            (
                "{\n  \"schema\": 1,\n  \"freezes\": [{\"owner\": 42}]\n}\n",
                Format::Json,
            ),
            (
                "schema: 1\nfreezes:\n  - test_id: t.py::a\n    owner: 42\n",
                Format::Yaml,
            ),
            (
                "schema = 1\n[[freezes]]\ntest_id = \"t.py::a\"\nowner = 42\n",
                Format::Toml,
            ),
        ] {
            let lf = parse(text, format).unwrap_err();
            let crlf = parse(&text.replace('\n', "\r\n"), format).unwrap_err();
            assert_eq!(crlf.to_string(), lf.to_string(), "{format:?}");
            assert_eq!(crlf.location(), lf.location(), "{format:?}");
            assert!(
                lf.location().is_some_and(|(line, _)| line > 1),
                "{format:?}: {lf}"
            );
        }
    }

    #[test]
    fn property_list_gives_each_item_its_span() {
        let text = "{\"schema\": 1, \"freezes\": [{\"compensating_property\": [\"a.py::x\", \"b.py::y\"]}]}";
        let ledger = parse(text, Format::Json).unwrap();
        let entry = &ledger.entries[0];
        assert_eq!(entry.properties(), ["a.py::x", "b.py::y"]);
        let (span, found) = entry.span_of("compensating_property[1]");
        assert!(found);
        assert_eq!(&text[span], "\"b.py::y\"");
    }
}
