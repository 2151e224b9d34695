//! Properties of the whole check, run in-process on generated ledgers and facts:
//!
//! - the verdict does not depend on the order of the ledger's entries;
//! - JSON, YAML and TOML forms of the same ledger give identical violations;
//! - adding a valid, well-deposited freeze never removes another entry's violations
//!   (nor adds any);
//! - every reported line/column points at the named field's value in the entry for
//!   that test id (the span's text parses back to the value).
//!
//! Ledgers hold 1–8 freezes with random mixes of valid and invalid fields (absent or
//! blank fields, impossible dates, long or reversed windows, duplicate ids, bad node
//! ids, property lists, non-ASCII and escaped text, CRLF line endings); the facts
//! collect each id or not, put each property's file in the diff or not, give sample
//! counts above or below the threshold, inherit skips or not, and give test results
//! or not. Each serializer below records the byte range of every value it writes,
//! which is the ground truth for the location property.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

use freezegate::config::Config;
use freezegate::document::Format;
use freezegate::engine::selection::Selection;
use freezegate::gate::{judge, Gate};
use freezegate::inputs::ids::IdSet;
use freezegate::inputs::junit::Results;
use freezegate::inputs::ledger::Ledger;
use freezegate::inputs::samples::{Count, Samples};
use freezegate::inputs::Facts;
use freezegate::report::Report;
use freezegate::source::SourceFile;
use proptest::prelude::*;
use proptest::sample::select;

// ------------------------------------------------------------------ the world

const TODAY: jiff::civil::Date = jiff::civil::date(2026, 11, 30);
const CONFIG_NAME: &str = "freezegate.toml";
const ALLOWED: &str = "tests/test_x.py::test_allowed";
const INHERITED: &str = "tests/test_old.py::test_inherited";

/// The config every run uses: default thresholds, one allow entry for an inherited skip.
const CONFIG: &str = r#"[params]
min_distinct = 8

[[params.allow_inherited]]
test_id = "tests/test_x.py::test_allowed"
branch = "main"
approver = "sam"
"#;

/// Frozen-test ids the generator picks from (a small pool, so duplicates happen).
const TEST_IDS: [&str; 6] = [
    "tests/test_a.py::test_f0",
    "tests/test_a.py::test_f1",
    "tests/test_a.py::TestX::test_f2",
    "tests/test_b.py::test_u[a::b]",
    "tests/tëst_ü.py::test_é",
    "tests/test_b.py::test_f5",
];

/// Compensating properties the generator picks from.
const PROPERTIES: [&str; 5] = [
    "tests/props/test_p0.py::test_p0",
    "tests/props/test_p1.py::test_p1",
    "tests/props/test_p2.py::TestP::test_p2",
    "tests/props/test_p3.py::test_p3[x-1]",
    "tests/props/test_ü.py::test_π",
];

const BAD_IDS: [&str; 5] = [
    "not a node id",
    "tests/test_a.py",
    "/abs/test_a.py::test_f0",
    "tests/test_a.py::1st",
    "tests/test_a.py::test_f0[x",
];

/// The valid, well-deposited freeze added by the monotonicity property.
const NEW_TEST: &str = "tests/test_new.py::test_new";
const NEW_PROPERTY: &str = "tests/props/test_new.py::test_new_prop";

fn gate() -> &'static (Gate, Selection) {
    static GATE: OnceLock<(Gate, Selection)> = OnceLock::new();
    GATE.get_or_init(|| {
        let root = Path::new("/freezegate-properties");
        let source = SourceFile::new(CONFIG_NAME, root.join(CONFIG_NAME), CONFIG);
        let config = Config::from_source(source, false, root)
            .expect("config parses")
            .expect("config has a freezegate table");
        let gate = Gate::with_config(config).expect("builtin pack loads");
        let selection = Selection::new(&gate.pack, &gate.config, &[], &[]).unwrap();
        (gate, selection)
    })
}

// ------------------------------------------------------------------ the model

#[derive(Debug, Clone, PartialEq)]
enum Val {
    /// A string; `bare` writes it unquoted in YAML and as a TOML date (valid dates only).
    Str {
        s: String,
        bare: bool,
    },
    Bool(bool),
    List(Vec<String>),
}

fn string(s: impl Into<String>) -> Val {
    Val::Str {
        s: s.into(),
        bare: false,
    }
}

/// One freeze: its fields in the order they are written; absent fields are left out.
#[derive(Debug, Clone)]
struct Freeze {
    fields: Vec<(&'static str, Val)>,
}

impl Freeze {
    fn get(&self, name: &str) -> Option<&Val> {
        self.fields.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
    }

    fn test_id(&self) -> Option<String> {
        match self.get("test_id") {
            Some(Val::Str { s, .. }) => Some(s.clone()),
            _ => None,
        }
    }

    /// The value at a reported field path (`owner`, `compensating_property[1]`), as JSON.
    fn value_at(&self, path: &str) -> Option<serde_json::Value> {
        let (name, index) = match path.split_once('[') {
            Some((name, rest)) => (name, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (path, None),
        };
        match (self.get(name)?, index) {
            (Val::Str { s, .. }, None) => Some(s.as_str().into()),
            (Val::Bool(b), None) => Some((*b).into()),
            (Val::List(items), None) => Some(items.clone().into()),
            (Val::List(items), Some(i)) => items.get(i).map(|s| s.as_str().into()),
            _ => None,
        }
    }

    fn valid(opened: jiff::civil::Date, expires: jiff::civil::Date) -> Freeze {
        Freeze {
            fields: vec![
                ("test_id", string(NEW_TEST)),
                ("reason", string("flaky upstream, fix lands next sprint")),
                ("owner", string("riley")),
                ("opened", string(opened.to_string())),
                ("expires", string(expires.to_string())),
                ("invariant", string("totals never go negative")),
                ("compensating_property", string(NEW_PROPERTY)),
                ("reused_property", Val::Bool(false)),
            ],
        }
    }
}

#[derive(Debug, Clone)]
struct LedgerModel {
    max_window_days: Option<i64>,
    freezes: Vec<Freeze>,
}

/// The facts, as choices over the id pools.
#[derive(Debug, Clone)]
struct FactsModel {
    collected: Vec<bool>,
    changed: Vec<bool>,
    /// Per property: its distinct count, or none recorded.
    samples: Vec<Option<i64>>,
    /// Only a session-wide count (FZ303) instead of per-property ones.
    session_only: Option<i64>,
    applied: Vec<bool>,
    inherited: bool,
    allowed: bool,
    /// Per property: passed (true), failed (false), or did not run; `None`: no results.
    results: Option<Vec<Option<bool>>>,
}

/// Every id the facts can mention: frozen tests, then properties.
fn all_ids() -> impl Iterator<Item = &'static str> {
    TEST_IDS.iter().chain(PROPERTIES.iter()).copied()
}

fn property_file(id: &str) -> &str {
    let head = id.split_once('[').map_or(id, |(h, _)| h);
    head.split_once("::").map_or(head, |(f, _)| f)
}

impl FactsModel {
    fn facts(&self, ledger: Ledger, with_new: bool) -> Facts {
        let mut collected: Vec<&str> = all_ids()
            .zip(&self.collected)
            .filter(|(_, on)| **on)
            .map(|(id, _)| id)
            .collect();
        let mut changed: Vec<&str> = PROPERTIES
            .iter()
            .zip(&self.changed)
            .filter(|(_, on)| **on)
            .map(|(id, _)| property_file(id))
            .collect();
        let mut applied: Vec<&str> = TEST_IDS
            .iter()
            .zip(&self.applied)
            .filter(|(_, on)| **on)
            .map(|(id, _)| *id)
            .collect();
        if self.inherited {
            applied.push(INHERITED);
        }
        if self.allowed {
            applied.push(ALLOWED);
        }
        let mut samples = Samples::default();
        match self.session_only {
            Some(n) => samples.session = Some(n),
            None => {
                samples.has_properties = true;
                for (id, n) in PROPERTIES.iter().zip(&self.samples) {
                    if let Some(n) = n {
                        std::sync::Arc::make_mut(&mut samples.properties)
                            .insert(id.to_string(), Count::given(*n));
                    }
                }
            }
        }
        let mut outcomes: Vec<(&str, bool)> = match &self.results {
            None => Vec::new(),
            Some(results) => PROPERTIES
                .iter()
                .zip(results)
                .filter_map(|(id, r)| r.map(|passed| (*id, passed)))
                .collect(),
        };
        if with_new {
            collected.extend([NEW_TEST, NEW_PROPERTY]);
            changed.push(property_file(NEW_PROPERTY));
            applied.push(NEW_TEST);
            if samples.has_properties {
                std::sync::Arc::make_mut(&mut samples.properties)
                    .insert(NEW_PROPERTY.into(), Count::given(100));
            }
            outcomes.push((NEW_PROPERTY, true));
        }
        let results = self.results.as_ref().map(|_| {
            let xml = junit_xml(&outcomes);
            Results::load(&[SourceFile::new("gate/junit.xml", "gate/junit.xml", xml)])
                .expect("generated JUnit parses")
        });
        let mut facts = Facts::of_ledger(ledger, TODAY, String::new());
        facts.loaded.collected = Some(IdSet::from_iter(collected)).into();
        facts.loaded.changed = Some(IdSet::from_iter(changed)).into();
        facts.loaded.samples = Some(samples).into();
        facts.loaded.applied_skips = Some(IdSet::from_iter(applied)).into();
        facts.loaded.results = results.into();
        facts.target_branch = Some("main".into());
        facts
    }
}

fn junit_xml(outcomes: &[(&str, bool)]) -> String {
    let mut xml = String::from("<testsuites><testsuite name=\"pytest\">\n");
    for (id, passed) in outcomes {
        let (file, rest) = id.split_once("::").unwrap();
        let (classes, name) = match rest.rsplit_once("::") {
            Some((classes, name)) => (format!(".{}", classes.replace("::", ".")), name),
            None => (String::new(), rest),
        };
        let classname = format!(
            "{}{classes}",
            file.trim_end_matches(".py").replace('/', ".")
        );
        let body = if *passed {
            ""
        } else {
            "<failure message=\"boom\">boom</failure>"
        };
        xml.push_str(&format!(
            "<testcase classname=\"{classname}\" name=\"{name}\">{body}</testcase>\n"
        ));
    }
    xml.push_str("</testsuite></testsuites>\n");
    xml
}

// ------------------------------------------------------------------ generators

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-z]{1,8}( [a-zA-Z0-9éüπ:#'\"\\\\{}\\[\\],&*!|>%@`-]{1,6}){0,3}",
        1 => "[a-z]{1,5}[\n\t\u{7f}\u{85}\u{2028}][a-z ]{0,5}",
        1 => select(vec!["", "   ", "\t"]).prop_map(str::to_string),
    ]
}

fn test_id() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => select(TEST_IDS.to_vec()).prop_map(str::to_string),
        1 => select(BAD_IDS.to_vec()).prop_map(str::to_string),
        1 => select(vec!["", "  "]).prop_map(str::to_string),
    ]
}

/// A property id; `None` stands for "the freeze's own test id" (a self-deposit).
fn property_id() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        8 => select(PROPERTIES.to_vec()).prop_map(|s| Some(s.to_string())),
        1 => select(TEST_IDS.to_vec()).prop_map(|s| Some(s.to_string())),
        1 => select(BAD_IDS.to_vec()).prop_map(|s| Some(s.to_string())),
        1 => Just(None),
    ]
}

#[derive(Debug, Clone)]
enum PropertyShape {
    One(Option<String>),
    List(Vec<Option<String>>),
    Blank,
}

fn property() -> impl Strategy<Value = PropertyShape> {
    prop_oneof![
        6 => property_id().prop_map(PropertyShape::One),
        2 => prop::collection::vec(property_id(), 0..3).prop_map(PropertyShape::List),
        1 => Just(PropertyShape::Blank),
    ]
}

const BAD_DATES: [&str; 6] = [
    "2026-02-30",
    "2026-13-01",
    "next week",
    "2026-1-5",
    "20261130",
    "",
];

/// `opened` and `expires`: real dates around today (windows from reversed to too long)
/// or strings that are not dates; `bare` writes valid dates unquoted.
fn dates() -> impl Strategy<Value = (Val, Val)> {
    let day = |offset: i64| TODAY.checked_add(jiff::Span::new().days(offset)).unwrap();
    let date = move |offset: i64, bare: bool| Val::Str {
        s: day(offset).to_string(),
        bare,
    };
    let bad = || select(BAD_DATES.to_vec()).prop_map(string);
    (
        -40i64..=3,
        -3i64..=30,
        any::<bool>(),
        any::<bool>(),
        0u8..10,
    )
        .prop_flat_map(move |(opened, window, bare_o, bare_e, shape)| {
            let opened_val = date(opened, bare_o);
            let expires_val = date(opened + window, bare_e);
            match shape {
                0 => (bad().boxed(), Just(expires_val).boxed()),
                1 => (Just(opened_val).boxed(), bad().boxed()),
                _ => (Just(opened_val).boxed(), Just(expires_val).boxed()),
            }
        })
}

fn optional<T: std::fmt::Debug + Clone>(
    strategy: impl Strategy<Value = T>,
) -> impl Strategy<Value = Option<T>> {
    prop_oneof![1 => Just(None), 9 => strategy.prop_map(Some)]
}

fn freeze() -> impl Strategy<Value = Freeze> {
    (
        optional(test_id()),
        optional(text()),
        optional(prop_oneof![
            3 => select(vec!["finley", "zoë", "o'brien \"ob\" #1"]).prop_map(str::to_string),
            1 => select(vec!["", "   "]).prop_map(str::to_string),
        ]),
        optional(dates()),
        optional(text()),
        optional(property()),
        optional(any::<bool>()),
        optional("[A-Z]{2,4}-[0-9]{1,4}"),
    )
        .prop_map(
            |(test_id, reason, owner, dates, invariant, property, reused, ticket)| {
                let own = test_id.clone().unwrap_or_default();
                let resolve = |p: Option<String>| p.unwrap_or_else(|| own.clone());
                let mut fields = Vec::new();
                if let Some(t) = test_id {
                    fields.push(("test_id", string(t)));
                }
                if let Some(r) = reason {
                    fields.push(("reason", string(r)));
                }
                if let Some(o) = owner {
                    fields.push(("owner", string(o)));
                }
                if let Some((opened, expires)) = dates {
                    fields.push(("opened", opened));
                    fields.push(("expires", expires));
                }
                if let Some(i) = invariant {
                    fields.push(("invariant", string(i)));
                }
                match property {
                    None => {}
                    Some(PropertyShape::One(p)) => {
                        fields.push(("compensating_property", string(resolve(p))))
                    }
                    Some(PropertyShape::List(items)) => fields.push((
                        "compensating_property",
                        Val::List(items.into_iter().map(resolve).collect()),
                    )),
                    Some(PropertyShape::Blank) => {
                        fields.push(("compensating_property", string("")))
                    }
                }
                if let Some(r) = reused {
                    fields.push(("reused_property", Val::Bool(r)));
                }
                if let Some(t) = ticket {
                    fields.push(("ticket", string(t)));
                }
                Freeze { fields }
            },
        )
}

fn ledger() -> impl Strategy<Value = LedgerModel> {
    (
        select(vec![None, Some(7), Some(14), Some(30)]),
        prop::collection::vec(freeze(), 1..=8),
    )
        .prop_map(|(max_window_days, freezes)| LedgerModel {
            max_window_days,
            freezes,
        })
}

fn facts() -> impl Strategy<Value = FactsModel> {
    let n_ids = TEST_IDS.len() + PROPERTIES.len();
    (
        prop::collection::vec(prop::bool::weighted(0.8), n_ids),
        prop::collection::vec(prop::bool::weighted(0.7), PROPERTIES.len()),
        prop::collection::vec(optional(0i64..16), PROPERTIES.len()),
        prop_oneof![6 => Just(None), 1 => (0i64..16).prop_map(Some)],
        prop::collection::vec(any::<bool>(), TEST_IDS.len()),
        any::<bool>(),
        any::<bool>(),
        optional(prop::collection::vec(
            prop_oneof![4 => Just(Some(true)), 1 => Just(Some(false)), 1 => Just(None)],
            PROPERTIES.len(),
        )),
    )
        .prop_map(
            |(collected, changed, samples, session_only, applied, inherited, allowed, results)| {
                FactsModel {
                    collected,
                    changed,
                    samples,
                    session_only,
                    applied,
                    inherited,
                    allowed,
                    results,
                }
            },
        )
}

// ------------------------------------------------------------------ serializers

/// A ledger as written in one format, with the byte range of every value written.
struct Written {
    format: Format,
    text: String,
    max_window_days: Option<Range<usize>>,
    entries: Vec<Places>,
}

/// Where one entry starts, and each field value (list items as
/// `compensating_property[i]`).
#[derive(Default)]
struct Places {
    start: usize,
    fields: BTreeMap<String, Range<usize>>,
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// A YAML double-quoted scalar: JSON-style escapes, and every character YAML does not
/// allow as printable (or would fold as a line break) escaped.
fn yaml_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20
                || ('\u{7f}'..='\u{9f}').contains(&c)
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ) =>
            {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A TOML basic string.
fn toml_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn scalar(format: Format, s: &str, bare: bool) -> String {
    match format {
        Format::Json => json_str(s),
        Format::Yaml if bare => s.to_string(),
        Format::Yaml => yaml_str(s),
        Format::Toml if bare => s.to_string(),
        Format::Toml => toml_str(s),
    }
}

/// Appends `text` and returns where it went.
fn put(out: &mut String, text: &str) -> Range<usize> {
    let start = out.len();
    out.push_str(text);
    start..out.len()
}

fn write(model: &LedgerModel, format: Format, crlf: bool) -> Written {
    let nl = if crlf { "\r\n" } else { "\n" };
    let mut out = String::new();
    let mut max_window_days = None;
    let mut entries = Vec::new();
    match format {
        Format::Json => {
            out.push_str(&format!("{{{nl}  \"schema\": 1,{nl}"));
            if let Some(m) = model.max_window_days {
                out.push_str("  \"max_window_days\": ");
                max_window_days = Some(put(&mut out, &m.to_string()));
                out.push_str(&format!(",{nl}"));
            }
            out.push_str(&format!("  \"freezes\": [{nl}"));
            for (i, freeze) in model.freezes.iter().enumerate() {
                let mut places = Places::default();
                let start = out.len();
                out.push_str("    {");
                places.start = start + 4;
                for (j, (key, value)) in freeze.fields.iter().enumerate() {
                    let sep = if j == 0 { "" } else { "," };
                    out.push_str(&format!("{sep}{nl}      {}: ", json_str(key)));
                    write_value(&mut out, &mut places, format, key, value);
                }
                out.push_str(&format!("{nl}    }}"));
                out.push_str(if i + 1 < model.freezes.len() { "," } else { "" });
                out.push_str(nl);
                entries.push(places);
            }
            out.push_str(&format!("  ]{nl}}}{nl}"));
        }
        Format::Yaml => {
            out.push_str(&format!("schema: 1{nl}"));
            if let Some(m) = model.max_window_days {
                out.push_str("max_window_days: ");
                max_window_days = Some(put(&mut out, &m.to_string()));
                out.push_str(nl);
            }
            out.push_str(&format!("freezes:{nl}"));
            for freeze in &model.freezes {
                let mut places = Places::default();
                out.push_str("  - ");
                places.start = out.len();
                if freeze.fields.is_empty() {
                    out.push_str("{}");
                }
                for (j, (key, value)) in freeze.fields.iter().enumerate() {
                    if j > 0 {
                        out.push_str("    ");
                    }
                    out.push_str(&format!("{key}:"));
                    match value {
                        Val::List(items) if !items.is_empty() => {
                            out.push_str(nl);
                            let mut whole = out.len() + 6..0;
                            for (k, item) in items.iter().enumerate() {
                                out.push_str("      - ");
                                let range = put(&mut out, &yaml_str(item));
                                whole.end = range.end;
                                places.fields.insert(format!("{key}[{k}]"), range);
                                out.push_str(nl);
                            }
                            // A block list runs from its first dash to its last item.
                            places.fields.insert(key.to_string(), whole);
                            continue;
                        }
                        _ => {
                            out.push(' ');
                            write_value(&mut out, &mut places, format, key, value);
                        }
                    }
                    out.push_str(nl);
                }
                if freeze.fields.is_empty() {
                    out.push_str(nl);
                }
                entries.push(places);
            }
        }
        Format::Toml => {
            out.push_str(&format!("schema = 1{nl}"));
            if let Some(m) = model.max_window_days {
                out.push_str("max_window_days = ");
                max_window_days = Some(put(&mut out, &m.to_string()));
                out.push_str(nl);
            }
            for freeze in &model.freezes {
                let mut places = Places::default();
                out.push_str(nl);
                places.start = out.len();
                out.push_str(&format!("[[freezes]]{nl}"));
                for (key, value) in &freeze.fields {
                    out.push_str(&format!("{key} = "));
                    write_value(&mut out, &mut places, format, key, value);
                    out.push_str(nl);
                }
                entries.push(places);
            }
        }
    }
    Written {
        format,
        text: out,
        max_window_days,
        entries,
    }
}

/// Writes one field value inline (strings, booleans, flow lists), recording its range.
fn write_value(out: &mut String, places: &mut Places, format: Format, key: &str, value: &Val) {
    let range = match value {
        Val::Str { s, bare } => put(out, &scalar(format, s, *bare)),
        Val::Bool(b) => put(out, &b.to_string()),
        Val::List(items) => {
            let start = out.len();
            out.push('[');
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                let range = put(out, &scalar(format, item, false));
                places.fields.insert(format!("{key}[{k}]"), range);
            }
            out.push(']');
            start..out.len()
        }
    };
    places.fields.insert(key.to_string(), range);
}

/// Parses a value's literal back in its format.
fn parse_back(format: Format, literal: &str, column: usize) -> serde_json::Value {
    fn from_toml(value: &toml::Value) -> serde_json::Value {
        match value {
            toml::Value::String(s) => s.as_str().into(),
            toml::Value::Boolean(b) => (*b).into(),
            toml::Value::Array(items) => items.iter().map(from_toml).collect(),
            other => other.to_string().into(),
        }
    }
    match format {
        Format::Json => serde_json::from_str(literal)
            .unwrap_or_else(|e| panic!("JSON literal {literal:?}: {e}")),
        // Indented as in the file, so a block list's later lines line up with its first.
        Format::Yaml => serde_saphyr::from_str(&format!("{}{literal}", " ".repeat(column - 1)))
            .unwrap_or_else(|e| panic!("YAML literal {literal:?}: {e}")),
        Format::Toml => {
            let table: toml::Table = toml::from_str(&format!("v = {literal}"))
                .unwrap_or_else(|e| panic!("TOML literal {literal:?}: {e}"));
            from_toml(&table["v"])
        }
    }
}

// ------------------------------------------------------------------ running the check

fn ledger_name(format: Format) -> &'static str {
    match format {
        Format::Json => "gate/freeze_ledger.json",
        Format::Yaml => "gate/freeze_ledger.yaml",
        Format::Toml => "gate/freeze_ledger.toml",
    }
}

fn check(written: &Written, facts: &FactsModel, with_new: bool) -> Report {
    let name = ledger_name(written.format);
    let source = SourceFile::new(name, name, written.text.clone());
    let ledger = Ledger::parse(source, written.format).unwrap_or_else(|e| {
        panic!(
            "generated {} ledger does not parse: {e}\n{}",
            written.format, written.text
        )
    });
    let (gate, selection) = gate();
    let facts = facts.facts(ledger, with_new);
    judge(gate, &facts, selection)
        .unwrap_or_else(|e| panic!("check failed: {e}"))
        .1
}

type Key = (String, Option<String>, Option<String>);

/// The verdict as a multiset of (code, test id, field), sorted.
fn verdict(report: &Report) -> Vec<Key> {
    let mut keys: Vec<Key> = report
        .violations
        .iter()
        .map(|v| (v.code.clone(), v.test_id.clone(), v.field.clone()))
        .collect();
    keys.sort();
    keys
}

/// Whether every key of `small` is in `big` at least as often.
fn sub_multiset(small: &[Key], big: &[Key]) -> bool {
    let mut counts: BTreeMap<&Key, i64> = BTreeMap::new();
    for k in big {
        *counts.entry(k).or_default() += 1;
    }
    small.iter().all(|k| {
        let n = counts.entry(k).or_default();
        *n -= 1;
        *n >= 0
    })
}

/// 1-based line and character column of a byte offset, counted independently of the
/// crate's line index.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

fn check_locations(
    model: &LedgerModel,
    written: &Written,
    report: &Report,
) -> Result<(), TestCaseError> {
    // The human report's snippet header (or, without a snippet, the message) names the
    // same place.
    let human = freezegate::report::human::render_capped(report, false, 0);
    for v in &report.violations {
        let Some((source, span)) = &v.location else {
            continue;
        };
        let place = format!("[{}]", v.place());
        prop_assert!(
            human.contains(&place),
            "{} {:?}: the human report does not show {}:\n{}",
            &v.code,
            &v.field,
            place,
            human
        );
        let (line, column) = line_col(&source.text, span.start);
        prop_assert_eq!(
            (v.line, v.column),
            (Some(line), Some(column)),
            "{} {:?}: line/column disagree with the span",
            &v.code,
            &v.field
        );
        prop_assert_eq!(v.file.as_deref(), Some(source.name.as_str()));
        if source.name == CONFIG_NAME {
            // Allow-entry rules point into the config, at the named field when present.
            if v.field.as_deref() == Some("test_id") {
                prop_assert_eq!(
                    &source.text[span.clone()],
                    "\"tests/test_x.py::test_allowed\""
                );
            }
            continue;
        }
        prop_assert_eq!(source.name.as_str(), ledger_name(written.format));
        prop_assert_eq!(&source.text, &written.text);
        let Some(field) = v.field.as_deref() else {
            continue;
        };
        if v.test_id.is_none() && field == "max_window_days" {
            prop_assert_eq!(Some(span.clone()), written.max_window_days.clone());
            continue;
        }
        // The entries this violation can be about: those with its test id.
        let candidates: Vec<usize> = (0..model.freezes.len())
            .filter(|&i| model.freezes[i].test_id() == v.test_id)
            .collect();
        prop_assert!(
            !candidates.is_empty(),
            "{} names test id {:?}, which no entry has",
            &v.code,
            &v.test_id
        );
        let exact = candidates
            .iter()
            .find(|&&i| written.entries[i].fields.get(field) == Some(span));
        match exact {
            Some(&i) => {
                let literal = &source.text[span.clone()];
                prop_assert_eq!(
                    Some(parse_back(written.format, literal, v.column.unwrap_or(1))),
                    model.freezes[i].value_at(field),
                    "{} {}: `{}` does not parse back to the value",
                    &v.code,
                    field,
                    literal
                );
            }
            None => {
                // A field the entry does not have (FZ101 missing-field): the entry itself
                // (its `{`, first key, or `[[freezes]]` header).
                let absent = candidates.iter().any(|&i| {
                    model.freezes[i].value_at(field).is_none()
                        && written.entries[i].start == span.start
                });
                prop_assert!(
                    absent,
                    "{} at {:?} ({}:{}) is not the value of `{}` in any entry for {:?}:\n{}",
                    &v.code,
                    span,
                    v.line.unwrap(),
                    v.column.unwrap(),
                    field,
                    &v.test_id,
                    &written.text
                );
            }
        }
    }
    Ok(())
}

fn config() -> ProptestConfig {
    ProptestConfig {
        // PROPTEST_CASES=5000 for a longer search.
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(96),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

const FORMATS: [Format; 3] = [Format::Json, Format::Yaml, Format::Toml];

// ------------------------------------------------------------------ the properties

proptest! {
    #![proptest_config(config())]

    #[test]
    fn verdict_does_not_depend_on_entry_order(
        (model, shuffled) in ledger().prop_flat_map(|m| {
            let freezes = m.freezes.clone();
            (Just(m), Just(freezes).prop_shuffle())
        }),
        facts in facts(),
        format in select(FORMATS.to_vec()),
    ) {
        let reordered = LedgerModel { freezes: shuffled, ..model.clone() };
        let a = check(&write(&model, format, false), &facts, false);
        let b = check(&write(&reordered, format, false), &facts, false);
        prop_assert_eq!(verdict(&a), verdict(&b));
        prop_assert_eq!(a.failed(), b.failed());
        let deny = |mut report: Report| { report.deny_warnings = true; report.failed() };
        prop_assert_eq!(deny(a), deny(b));
    }

    #[test]
    fn formats_give_identical_violations(
        model in ledger(),
        facts in facts(),
        crlf in any::<bool>(),
    ) {
        let full = |r: &Report| {
            let mut v: Vec<_> = r
                .violations
                .iter()
                .map(|v| (v.code.clone(), v.test_id.clone(), v.field.clone(), v.severity, v.message.clone()))
                .collect();
            v.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
            v
        };
        let json = check(&write(&model, Format::Json, crlf), &facts, false);
        for format in [Format::Yaml, Format::Toml] {
            let other = check(&write(&model, format, crlf), &facts, false);
            prop_assert_eq!(full(&json), full(&other), "JSON and {} differ", format);
            prop_assert_eq!(json.failed(), other.failed());
        }
    }

    #[test]
    fn a_valid_freeze_never_removes_violations(
        model in ledger(),
        facts in facts(),
        format in select(FORMATS.to_vec()),
        at in any::<prop::sample::Index>(),
        (a, b) in (any::<prop::sample::Index>(), any::<prop::sample::Index>()),
    ) {
        // A window inside the ledger's limit, open today, not expired.
        let limit = model.max_window_days.unwrap_or(14).min(14) as usize;
        let ahead = a.index(limit + 1);
        let window = ahead + b.index(limit - ahead + 1);
        let expires = TODAY.checked_add(jiff::Span::new().days(ahead as i64)).unwrap();
        let opened = expires.checked_sub(jiff::Span::new().days(window as i64)).unwrap();
        let mut grown = model.clone();
        grown.freezes.insert(at.index(model.freezes.len() + 1), Freeze::valid(opened, expires));
        let before = verdict(&check(&write(&model, format, false), &facts, false));
        let after = verdict(&check(&write(&grown, format, false), &facts, true));
        prop_assert!(
            sub_multiset(&before, &after),
            "violations removed by adding a valid freeze:\nbefore {:?}\nafter  {:?}",
            before,
            after
        );
        let about_others: Vec<Key> = after
            .iter()
            .filter(|(_, test_id, _)| test_id.as_deref() != Some(NEW_TEST))
            .cloned()
            .collect();
        prop_assert_eq!(&before, &about_others, "nothing else changes");
        if facts.session_only.is_none() {
            // With per-property counts the new freeze is fully deposited: it adds nothing.
            prop_assert_eq!(&before, &after, "the valid freeze itself is clean");
        }
    }

    #[test]
    fn locations_point_at_the_named_fields_value(
        model in ledger(),
        facts in facts(),
        crlf in any::<bool>(),
    ) {
        for format in FORMATS {
            let written = write(&model, format, crlf);
            let report = check(&written, &facts, false);
            check_locations(&model, &written, &report)?;
        }
    }
}
