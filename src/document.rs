//! A format-neutral document tree that remembers where every value sits in its file.
//!
//! The ledger and config can be JSON, YAML or TOML; each parser here produces the same
//! [`Node`] tree so that everything downstream (schema checks, script bindings,
//! diagnostics) is written once.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::GateError;
use crate::source::{Source, Span};

/// A key or string value of a document: up to 23 bytes inline, longer on the heap. A
/// ledger of ten thousand freezes holds a hundred thousand keys and short values (dates,
/// owners), each an allocation as a `String`.
pub type InlineString = smartstring::alias::String;

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    /// Byte range of the value in its source file.
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(InlineString),
    Seq(Vec<Node>),
    Map(Vec<(InlineString, Node)>),
}

impl Value {
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a table",
        }
    }
}

impl Node {
    /// Whether two nodes hold the same value, wherever they are written.
    pub fn same_value(&self, other: &Node) -> bool {
        match (&self.value, &other.value) {
            (Value::Seq(a), Value::Seq(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_value(y))
            }
            (Value::Map(a), Value::Map(b)) => {
                a.len() == b.len()
                    && a.iter().all(|(key, x)| {
                        b.iter()
                            .find(|(k, _)| k == key)
                            .is_some_and(|(_, y)| x.same_value(y))
                    })
            }
            (a, b) => a == b,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// Document formats, chosen by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
    Toml,
}

impl Format {
    pub fn from_path(path: &std::path::Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "json" => Some(Format::Json),
            "yaml" | "yml" => Some(Format::Yaml),
            "toml" => Some(Format::Toml),
            _ => None,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Json => "JSON",
            Format::Yaml => "YAML",
            Format::Toml => "TOML",
        })
    }
}

pub fn parse(source: &Source, format: Format) -> Result<Node, GateError> {
    if source.text.trim().is_empty() {
        return Err(GateError::new(&source.name, "is empty"));
    }
    let node = match format {
        Format::Json => parse_json(source)?,
        Format::Yaml => parse_yaml(source)?,
        Format::Toml => parse_toml(source)?,
    };
    check_duplicate_keys(source, &node)?;
    Ok(node)
}

/// A duplicate key is an error naming both places, never "last one wins".
fn check_duplicate_keys(source: &Source, node: &Node) -> Result<(), GateError> {
    match &node.value {
        Value::Map(entries) => {
            // Ledger entries have a handful of keys: comparing with the earlier ones beats
            // hashing them; a big table gets a hash map.
            let mut seen: rustc_hash::FxHashMap<&str, &Node> = Default::default();
            for (position, (key, value)) in entries.iter().enumerate() {
                let earlier = if entries.len() <= 16 {
                    entries[..position]
                        .iter()
                        .find(|(k, _)| k == key)
                        .map(|(_, v)| v)
                } else {
                    seen.insert(key, value)
                };
                if let Some(first) = earlier {
                    return Err(
                        GateError::new(&source.name, format!("duplicate key `{key}`"))
                            .at(source, value.span.clone(), "defined again here")
                            .at(source, first.span.clone(), "first defined here")
                            .with_help(
                                "remove one of them: freezegate never guesses which one you meant",
                            ),
                    );
                }
                check_duplicate_keys(source, value)?;
            }
            Ok(())
        }
        Value::Seq(items) => items
            .iter()
            .try_for_each(|i| check_duplicate_keys(source, i)),
        _ => Ok(()),
    }
}

fn syntax_error(source: &Source, format: Format, message: &str, span: Option<Span>) -> GateError {
    let err = GateError::new(&source.name, format!("is not valid {format}: {message}"));
    match span {
        Some(span) => err.at(source, span, "here"),
        None => err,
    }
}

// ---------------------------------------------------------------- JSON

/// Deeper documents are refused: a ledger is three levels deep, and recursion must not
/// exhaust the stack on hostile input.
pub const MAX_DEPTH: usize = 64;

fn too_deep(source: &Source, at: usize) -> GateError {
    GateError::new(
        &source.name,
        format!("is nested deeper than {MAX_DEPTH} levels"),
    )
    .at(source, at..at, "too deep here")
}

fn parse_json(source: &Source) -> Result<Node, GateError> {
    // One pass for the valid document; anything else is explained by serde_json's parser,
    // which reads each container again per level but words its errors well.
    if let Some(node) = FastJson::parse(&source.text) {
        return Ok(node);
    }
    let text = source.text.as_str();
    let raw: &RawValue = serde_json::from_str(text).map_err(|e| json_error(source, &e, 0))?;
    json_node(source, raw, 0)
}

/// A single-pass JSON reader that records every value's span. It gives up (`None`) on
/// anything unusual (a syntax error, escapes or control characters in a string, a float,
/// nesting past [`MAX_DEPTH`]) and leaves it to the serde_json path, so both agree on
/// every document the fast path accepts.
struct FastJson<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> FastJson<'a> {
    fn parse(text: &'a str) -> Option<Node> {
        let mut reader = FastJson {
            text: text.as_bytes(),
            at: 0,
        };
        let node = reader.value(0)?;
        reader.skip_space();
        (reader.at == reader.text.len()).then_some(node)
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.text.get(self.at) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        self.skip_space();
        let found = self.text.get(self.at) == Some(&byte);
        self.at += found as usize;
        found
    }

    fn value(&mut self, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.skip_space();
        let start = self.at;
        let value = match *self.text.get(self.at)? {
            b'{' => {
                self.at += 1;
                Value::Map(self.items(b'}', |reader| {
                    reader.skip_space();
                    let key = reader.string()?;
                    if !reader.eat(b':') {
                        return None;
                    }
                    Some((key, reader.value(depth + 1)?))
                })?)
            }
            b'[' => {
                self.at += 1;
                Value::Seq(self.items(b']', |reader| reader.value(depth + 1))?)
            }
            b'"' => Value::Str(self.string()?),
            b't' => self.word(b"true", Value::Bool(true))?,
            b'f' => self.word(b"false", Value::Bool(false))?,
            b'n' => self.word(b"null", Value::Null)?,
            b'-' | b'0'..=b'9' => self.integer()?,
            _ => return None,
        };
        Some(Node {
            value,
            span: start..self.at,
        })
    }

    /// The items of a container whose opening bracket was just read, up to `close`: none,
    /// or `item`s separated by commas.
    fn items<T>(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<T>,
    ) -> Option<Vec<T>> {
        let mut items = Vec::new();
        if !self.eat(close) {
            loop {
                items.push(item(self)?);
                if self.eat(close) {
                    break;
                }
                if !self.eat(b',') {
                    return None;
                }
            }
        }
        // Ten thousand freezes of nine fields each grew to sixteen by doubling.
        items.shrink_to_fit();
        Some(items)
    }

    /// A string without escapes or control characters (the common case).
    fn string(&mut self) -> Option<InlineString> {
        if self.text.get(self.at) != Some(&b'"') {
            return None;
        }
        let start = self.at + 1;
        let len = memchr::memchr2(b'"', b'\\', &self.text[start..])?;
        let body = &self.text[start..start + len];
        if self.text[start + len] != b'"' || body.iter().any(|&b| b < 0x20) {
            return None;
        }
        self.at = start + len + 1;
        // The input is a `str` and the quotes are ASCII, so the body is whole UTF-8.
        std::str::from_utf8(body).ok().map(InlineString::from)
    }

    fn word(&mut self, word: &[u8], value: Value) -> Option<Value> {
        let found = self.text[self.at..].starts_with(word);
        self.at += word.len();
        found.then_some(value)
    }

    /// A non-negative integer as serde_json reads it into an `i64`; anything else gives up.
    fn integer(&mut self) -> Option<Value> {
        let start = self.at;
        if self.text[start] == b'-' {
            return None; // `-0` and friends: rare in a ledger, and serde_json's to read
        }
        let digits = self.at;
        while self.text.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        let number = &self.text[digits..self.at];
        let leading_zero = number.len() > 1 && number[0] == b'0';
        if number.is_empty()
            || leading_zero
            || matches!(self.text.get(self.at), Some(b'.' | b'e' | b'E'))
        {
            return None;
        }
        std::str::from_utf8(&self.text[start..self.at])
            .ok()?
            .parse()
            .ok()
            .map(Value::Int)
    }
}

fn json_error(source: &Source, err: &serde_json::Error, base: usize) -> GateError {
    let message = crate::error::json_message(err);
    let span = match source.json_error_span(err) {
        Some(_) if base > 0 => Some(base..base),
        span => span,
    };
    syntax_error(source, Format::Json, &message, span)
}

fn json_node(source: &Source, raw: &RawValue, depth: usize) -> Result<Node, GateError> {
    let text = raw.get();
    let lead = text.len() - text.trim_start().len();
    let start = text.as_ptr() as usize - source.text.as_ptr() as usize + lead;
    if depth > MAX_DEPTH {
        return Err(too_deep(source, start));
    }
    let trimmed = text.trim();
    let span = start..start + trimmed.len();
    let err = |e: serde_json::Error| json_error(source, &e, start);
    let value = match trimmed.as_bytes().first() {
        Some(b'{') => {
            let entries: JsonEntries = serde_json::from_str(text).map_err(err)?;
            let mut map = Vec::with_capacity(entries.0.len());
            for (key, raw) in entries.0 {
                map.push((key.into(), json_node(source, raw, depth + 1)?));
            }
            Value::Map(map)
        }
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_str(text).map_err(err)?;
            Value::Seq(
                items
                    .into_iter()
                    .map(|raw| json_node(source, raw, depth + 1))
                    .collect::<Result<_, _>>()?,
            )
        }
        _ => match serde_json::from_str::<serde_json::Value>(text).map_err(err)? {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            serde_json::Value::String(s) => Value::Str(s.into()),
            _ => unreachable!("containers start with {{ or ["),
        },
    };
    Ok(Node { value, span })
}

/// JSON object entries in source order, duplicates kept (they are reported later).
struct JsonEntries<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for JsonEntries<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for EntriesVisitor<'a> {
            type Value = JsonEntries<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value: &'de RawValue = map.next_value()?;
                    entries.push((key, value));
                }
                Ok(JsonEntries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor(std::marker::PhantomData))
    }
}

// ---------------------------------------------------------------- TOML

fn parse_toml(source: &Source) -> Result<Node, GateError> {
    let table = toml::de::DeTable::parse(&source.text)
        .map_err(|e| syntax_error(source, Format::Toml, e.message(), e.span()))?;
    let span = table.span();
    Ok(Node {
        value: toml_table(table.into_inner(), &source.text),
        span,
    })
}

fn toml_table(table: toml::de::DeTable<'_>, text: &str) -> Value {
    Value::Map(
        table
            .into_iter()
            .map(|(key, value)| (key.get_ref().as_ref().into(), toml_node(value, text)))
            .collect(),
    )
}

fn toml_node(value: toml::Spanned<toml::de::DeValue<'_>>, text: &str) -> Node {
    use toml::de::DeValue;
    let span = value.span();
    let value = match value.into_inner() {
        // A multi-line string keeps the file's line breaks; a CRLF file (a Windows
        // checkout) reads as its LF twin, as JSON and YAML do.
        DeValue::String(s)
            if text
                .get(span.clone())
                .is_some_and(|raw| raw.contains("\r\n")) =>
        {
            Value::Str(s.replace("\r\n", "\n").into())
        }
        DeValue::String(s) => Value::Str(s.as_ref().into()),
        DeValue::Integer(i) => match i64::from_str_radix(&i.as_str().replace('_', ""), i.radix()) {
            Ok(n) => Value::Int(n),
            Err(_) => Value::Str(i.as_str().into()),
        },
        DeValue::Float(f) => Value::Float(f.as_str().replace('_', "").parse().unwrap_or(f64::NAN)),
        DeValue::Boolean(b) => Value::Bool(b),
        // Dates are plain strings to the gate: `opened = 2026-10-12` reads like the quoted form.
        DeValue::Datetime(d) => Value::Str(d.to_string().into()),
        DeValue::Array(items) => {
            Value::Seq(items.into_iter().map(|v| toml_node(v, text)).collect())
        }
        DeValue::Table(table) => toml_table(table, text),
    };
    Node { value, span }
}

// ---------------------------------------------------------------- YAML

fn parse_yaml(source: &Source) -> Result<Node, GateError> {
    // Large ledgers are fine (the default node and event budgets are sized for configs);
    // depth and alias limits stay as they are.
    let mut options = serde_saphyr::Options::default();
    if let Some(budget) = options.budget.as_mut() {
        budget.max_nodes = 20_000_000;
        budget.max_events = 40_000_000;
        budget.max_depth = MAX_DEPTH;
    }
    // A byte-order mark is three spaces in the text (offsets stay true): YAML would read
    // them as the first line's indentation, so the parser starts after them.
    let text = &source.text[yaml_start(source)..];
    let root: serde_saphyr::Spanned<YamlValue> = serde_saphyr::from_str_with_options(text, options)
        .map_err(|e| {
            let span = e.location().and_then(|loc| yaml_span(source, &loc));
            let message = e.to_string();
            let first_line = message.lines().next().unwrap_or(&message).to_string();
            syntax_error(source, Format::Yaml, &first_line, span)
        })?;
    Ok(yaml_node(source, root))
}

/// Where the YAML parser starts: after a byte-order mark's three spaces.
fn yaml_start(source: &Source) -> usize {
    if source.had_bom {
        3
    } else {
        0
    }
}

fn yaml_span(source: &Source, loc: &serde_saphyr::Location) -> Option<Span> {
    let span = loc.span();
    let from = yaml_start(source);
    let start = from
        + match span.byte_offset() {
            Some(b) => b as usize,
            None => crate::source::char_to_byte(&source.text[from..], span.offset() as usize),
        };
    let len = span.byte_len().map_or(0, |l| l as usize);
    let end = (start + len).min(source.text.len());
    Some(start.min(end)..end)
}

fn yaml_node(source: &Source, spanned: serde_saphyr::Spanned<YamlValue>) -> Node {
    let span = yaml_span(source, &spanned.referenced).unwrap_or(0..0);
    let value = match spanned.value {
        YamlValue::Null => Value::Null,
        YamlValue::Bool(b) => Value::Bool(b),
        YamlValue::Int(i) => Value::Int(i),
        YamlValue::Float(f) => Value::Float(f),
        YamlValue::Str(s) => Value::Str(s.into()),
        YamlValue::Seq(items) => {
            Value::Seq(items.into_iter().map(|i| yaml_node(source, i)).collect())
        }
        YamlValue::Map(entries) => Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| (k.into(), yaml_node(source, v)))
                .collect(),
        ),
    };
    let span = match &value {
        Value::Seq(items) => yaml_container_span(source, span, items.last()),
        Value::Map(entries) => yaml_container_span(source, span, entries.last().map(|(_, v)| v)),
        _ => span,
    };
    Node { value, span }
}

/// The parser marks a collection by its first character only (`[`, `{`, a dash or a
/// key): widen the span over its last child and a flow collection's closing bracket,
/// so a label underlines the whole value and `text[span]` is the value.
fn yaml_container_span(source: &Source, span: Span, last: Option<&Node>) -> Span {
    let text = source.text.as_str();
    let mut end = span.end.max(last.map_or(0, |n| n.span.end));
    let close = match text.as_bytes().get(span.start) {
        Some(b'[') => ']',
        Some(b'{') => '}',
        _ => return span.start..end,
    };
    let rest =
        text[end.max(span.start + 1)..].trim_start_matches(|c: char| c.is_whitespace() || c == ',');
    if rest.starts_with(close) {
        end = text.len() - rest.len() + 1;
    }
    span.start..end
}

/// A YAML value whose children carry their locations.
enum YamlValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<serde_saphyr::Spanned<YamlValue>>),
    Map(Vec<(String, serde_saphyr::Spanned<YamlValue>)>),
}

impl<'de> Deserialize<'de> for YamlValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(YamlVisitor)
    }
}

struct YamlVisitor;

impl<'de> Visitor<'de> for YamlVisitor {
    type Value = YamlValue;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<YamlValue, E> {
        Ok(YamlValue::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<YamlValue, E> {
        Ok(YamlValue::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<YamlValue, D::Error> {
        d.deserialize_any(YamlVisitor)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<YamlValue, E> {
        Ok(YamlValue::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<YamlValue, E> {
        Ok(YamlValue::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<YamlValue, E> {
        Ok(i64::try_from(v).map_or(YamlValue::Float(v as f64), YamlValue::Int))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<YamlValue, E> {
        Ok(i64::try_from(v).map_or(YamlValue::Float(v as f64), YamlValue::Int))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<YamlValue, E> {
        Ok(i64::try_from(v).map_or(YamlValue::Float(v as f64), YamlValue::Int))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<YamlValue, E> {
        Ok(YamlValue::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<YamlValue, E> {
        Ok(YamlValue::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<YamlValue, E> {
        Ok(YamlValue::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<YamlValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(YamlValue::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<YamlValue, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<YamlKey>()? {
            entries.push((key.0, map.next_value()?));
        }
        Ok(YamlValue::Map(entries))
    }
}

/// Mapping keys: any scalar, as text.
struct YamlKey(String);

impl<'de> Deserialize<'de> for YamlKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match YamlValue::deserialize(deserializer)? {
            YamlValue::Str(s) => Ok(YamlKey(s)),
            YamlValue::Int(i) => Ok(YamlKey(i.to_string())),
            YamlValue::Bool(b) => Ok(YamlKey(b.to_string())),
            YamlValue::Float(f) => Ok(YamlKey(f.to_string())),
            YamlValue::Null => Ok(YamlKey("null".into())),
            _ => Err(de::Error::custom("mapping keys must be scalars")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    #[test]
    fn the_fast_json_reader_agrees_with_serde_json_or_gives_up() {
        let documents = [
            r#"{"schema": 1, "freezes": [{"test_id": "a.py::t", "n": 12, "ok": true, "x": null}]}"#,
            "  {\"a\" :[ 1 ,2,[], {} ] , \"b\":\"ünï\"}\n",
            r#"{"a": 1, "a": 2}"#,
            r#"[1, 2, 3]"#,
            r#""text""#,
            // The reader gives up on each of these; serde_json decides.
            r#"{"a": "esc\"aped"}"#,
            r#"{"a": 1.5}"#,
            r#"{"a": -0}"#,
            r#"{"a": 007}"#,
            r#"{"a": 99999999999999999999}"#,
            "{\"a\": \"tab\there\"}",
            r#"{"a": 1,}"#,
            r#"{"a" 1}"#,
            r#"[1 2]"#,
            r#"{"a": tru}"#,
            r#"{"a": 1} x"#,
            "\u{feff}{}",
        ];
        let mut fast = 0;
        for text in documents {
            let source = SourceFile::new("l.json", "l.json", text.to_string());
            let slow = serde_json::from_str::<&RawValue>(&source.text)
                .ok()
                .map(|raw| json_node(&source, raw, 0).expect("valid"));
            if let Some(node) = FastJson::parse(text) {
                fast += 1;
                assert_eq!(Some(node), slow, "{text}");
            }
        }
        assert_eq!(fast, 5, "the plain documents take the fast path");
        let deep = format!(
            "{}1{}",
            "[".repeat(MAX_DEPTH + 2),
            "]".repeat(MAX_DEPTH + 2)
        );
        assert!(FastJson::parse(&deep).is_none());
    }

    fn spans_of(text: &str, format: Format) -> Vec<(String, String)> {
        let source = SourceFile::new("t", "t", text);
        let node = parse(&source, format).unwrap();
        let entry = &node.get("freezes").unwrap();
        let Value::Seq(items) = &entry.value else {
            panic!()
        };
        let Value::Map(fields) = &items[0].value else {
            panic!()
        };
        fields
            .iter()
            .map(|(k, v)| (k.to_string(), text[v.span.clone()].to_string()))
            .collect()
    }

    #[test]
    fn every_format_keeps_value_spans_with_non_ascii_text() {
        let json = "{\"freezes\": [{\"owner\": \"zoë\", \"expires\": \"2026-10-26\"}]}";
        let yaml = "freezes:\n  - owner: zoë\n    expires: 2026-10-26\n";
        let toml = "[[freezes]]\nowner = \"zoë\"\nexpires = 2026-10-26\n";
        let json_spans = spans_of(json, Format::Json);
        assert_eq!(json_spans[0], ("owner".into(), "\"zoë\"".into()));
        assert_eq!(json_spans[1], ("expires".into(), "\"2026-10-26\"".into()));
        for spans in [spans_of(yaml, Format::Yaml), spans_of(toml, Format::Toml)] {
            assert!(spans[0].1.contains("zoë"), "{spans:?}");
            assert!(spans[1].1.contains("2026-10-26"), "{spans:?}");
        }
    }

    #[test]
    fn yaml_collections_span_their_whole_value() {
        let text = "freezes:\n  - owner: x\n    compensating_property: []\n    list:\n      - \"a\"\n      - b\n    flow: [ \"c\", {d: 1} ]\n";
        let spans = spans_of(text, Format::Yaml);
        assert_eq!(spans[1], ("compensating_property".into(), "[]".into()));
        assert_eq!(spans[2], ("list".into(), "- \"a\"\n      - b".into()));
        assert_eq!(spans[3], ("flow".into(), "[ \"c\", {d: 1} ]".into()));
        let source = SourceFile::new("t", "t", text);
        let entry = &parse(&source, Format::Yaml)
            .unwrap()
            .get("freezes")
            .unwrap()
            .clone();
        let Value::Seq(items) = &entry.value else {
            panic!()
        };
        assert!(text[items[0].span.clone()].starts_with("owner: x"));
        assert!(text[items[0].span.clone()].ends_with("{d: 1} ]"));
    }

    #[test]
    fn duplicate_keys_name_both_places() {
        let text = "{\"a\": 1,\n \"a\": 2}";
        let source = SourceFile::new("l.json", "l.json", text);
        let err = parse(&source, Format::Json).unwrap_err();
        assert!(err.to_string().contains("duplicate key `a`"), "{err}");
        assert_eq!(err.location(), Some((2, 7)));
    }
}

#[cfg(test)]
mod bom {
    use super::*;
    use crate::source::SourceFile;

    /// The byte span of the ledger's `owner` value, read from `bytes` as a file would be.
    fn owner_span(bytes: &[u8], format: Format) -> (String, Span) {
        let source = SourceFile::decoded("l", "l", bytes.to_vec()).unwrap();
        let node = parse(&source, format).unwrap_or_else(|e| panic!("{format:?}: {e:?}"));
        let Value::Seq(items) = &node.get("freezes").unwrap().value else {
            panic!()
        };
        let owner = items[0].get("owner").unwrap();
        (
            source.text[owner.span.clone()].to_string(),
            owner.span.clone(),
        )
    }

    #[test]
    fn a_byte_order_mark_reads_the_same_in_json_toml_and_yaml() {
        let documents = [
            (Format::Json, "{\"freezes\": [{\"owner\": \"dana\"}]}\n"),
            (Format::Toml, "[[freezes]]\nowner = \"dana\"\n"),
            (Format::Yaml, "freezes:\n  - owner: dana\n"),
        ];
        for (format, text) in documents {
            let (plain, at) = owner_span(text.as_bytes(), format);
            let mut marked = b"\xEF\xBB\xBF".to_vec();
            marked.extend_from_slice(text.as_bytes());
            let (with_bom, at_with_bom) = owner_span(&marked, format);
            assert_eq!(with_bom, plain, "{format:?}");
            // The mark is three bytes before every value.
            assert_eq!(at_with_bom, at.start + 3..at.end + 3, "{format:?}");
        }
    }
}
