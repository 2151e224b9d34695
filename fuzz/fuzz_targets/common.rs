//! Shared checks for the fuzz targets: parse, then make sure everything that points
//! into the source (spans, line/column) stays inside it, and that errors render.

#![allow(dead_code)]

use freezegate::error::GateError;
use freezegate::inputs::ledger::Ledger;
use freezegate::document::{Format, Node, Value};
use freezegate::source::{decode_utf8, Source, SourceFile, Span};

/// Decodes fuzz bytes the way input files are read (BOM dropped, invalid UTF-8 refused).
pub fn source(name: &str, data: &[u8]) -> Option<Source> {
    match decode_utf8(name, data.to_vec()) {
        Ok(text) => Some(SourceFile::new(name, name, text)),
        Err(err) => {
            render(&err);
            None
        }
    }
}

/// Renders an input error as the CLI would (miette graphical, no colour).
pub fn render(err: &GateError) {
    let text = freezegate::report::human::render_error(err, false);
    assert!(!text.is_empty());
    let _ = err.to_string();
}

/// A span must lie inside the text on character boundaries, or slicing and miette
/// rendering would panic.
pub fn assert_span(source: &Source, span: &Span) {
    assert!(
        span.start <= span.end && span.end <= source.text.len(),
        "span {span:?} outside a text of {} bytes",
        source.text.len()
    );
    assert!(
        source.text.is_char_boundary(span.start) && source.text.is_char_boundary(span.end),
        "span {span:?} splits a character"
    );
    let (line, column) = source.line_col(span.start);
    assert!(line >= 1 && column >= 1);
    let _ = source.snippet_fits(span.start);
}

pub fn walk(source: &Source, node: &Node, format: Format) {
    assert_span(source, &node.span);
    match &node.value {
        Value::Seq(items) => items.iter().for_each(|i| walk(source, i, format)),
        Value::Map(entries) => entries.iter().for_each(|(_, v)| walk(source, v, format)),
        Value::Str(s) if format == Format::Json => {
            // A JSON string's span is exactly its literal.
            let literal = &source.text[node.span.clone()];
            assert_eq!(
                serde_json::from_str::<String>(literal).ok().as_deref(),
                Some(s.as_str()),
                "span {:?} is not the string's literal",
                node.span
            );
        }
        _ => {}
    }
}

/// Parses a ledger from fuzz bytes and checks every span it keeps.
pub fn ledger(data: &[u8], format: Format) {
    let name = match format {
        Format::Json => "gate/freeze_ledger.json",
        Format::Yaml => "gate/freeze_ledger.yaml",
        Format::Toml => "gate/freeze_ledger.toml",
    };
    let Some(source) = source(name, data) else {
        return;
    };
    match Ledger::parse(source.clone(), format) {
        Ok(ledger) => {
            walk(&source, &ledger.root, format);
            for entry in ledger.entries.iter() {
                let fields: Vec<String> = match &entry.node.value {
                    Value::Map(fields) => fields.iter().map(|(k, _)| k.to_string()).collect(),
                    _ => Vec::new(),
                };
                for field in fields.iter().map(String::as_str).chain([
                    "owner",
                    "compensating_property[0]",
                    "compensating_property[7]",
                    "compensating_property[",
                ]) {
                    let (span, _) = entry.span_of(field);
                    assert_span(&source, &span);
                }
                let _ = entry.properties();
                let _ = entry.test_id();
            }
            let _ = ledger.derived_skips();
        }
        Err(err) => render(&err),
    }
}
