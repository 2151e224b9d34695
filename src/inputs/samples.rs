//! Property sample counts: explicit JSON counts or Hypothesis observability output.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::path::Path;

use crate::error::GateError;
use crate::source::{Source, SourceFile};

/// Distinct inputs per property (and/or for the whole session), merged over shards.
#[derive(Debug, Default, Clone)]
pub struct Samples {
    /// Per property node id: the distinct count and how it was counted. Shared: every
    /// script that reads `samples` gets a copy of the binding.
    pub properties: std::sync::Arc<HashMap<String, Count>>,
    /// Whether any input gave per-property counts (even zero of them).
    pub has_properties: bool,
    pub session: Option<i64>,
}

/// One property's distinct inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count {
    pub distinct: i64,
    pub method: Method,
}

impl Count {
    /// A count given as such.
    pub fn given(distinct: i64) -> Count {
        Count {
            distinct,
            method: Method::Given,
        }
    }
}

/// How distinct inputs were told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Method {
    /// Hypothesis's choice sequences (`metadata.choice_nodes`): what it drew.
    #[serde(rename = "choice sequences")]
    Choices,
    /// The arguments' JSON text: equal reprs (dynamic classes) count once. Also where
    /// the values are fewer than the choice sequences (a constant `map`).
    #[serde(rename = "arguments")]
    Arguments,
    /// A count given as such (`{"distinct": N}`).
    #[serde(rename = "given counts")]
    Given,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Choices => "choice sequences",
            Method::Arguments => "arguments",
            Method::Given => "given counts",
        }
    }
}

/// Observed inputs per property and run, counted only at the end so shards union
/// exactly and only each property's latest run counts.
#[derive(Default)]
struct Observed {
    /// Property → `run_start` → that run's inputs.
    runs: HashMap<String, HashMap<u64, Run>>,
}

#[derive(Default)]
struct Run {
    /// Distinct choice sequences, while every row had one.
    choices: HashSet<String>,
    arguments: HashSet<String>,
    /// What each row passed, as Hypothesis shows it (`representation`, else the
    /// arguments): fewer than the choice sequences where draws map to equal values.
    values: HashSet<String>,
    /// Some row had no `metadata.choice_nodes` (observability without
    /// HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY_CHOICES): count arguments.
    without_choices: bool,
}

impl Observed {
    /// Per property, the distinct inputs of its latest run (the greatest `run_start`):
    /// a day's file keeps every run of that day, and an earlier, stronger run must not
    /// speak for a later one.
    fn counts(self) -> impl Iterator<Item = (String, Count)> {
        self.runs.into_iter().filter_map(|(property, runs)| {
            let (_, run) = runs.into_iter().max_by_key(|(start, _)| *start)?;
            // By what Hypothesis drew, unless the arguments' values are fewer: a
            // strategy that maps every draw to one constant passes one input.
            let count = if run.without_choices {
                Count {
                    distinct: run.arguments.len() as i64,
                    method: Method::Arguments,
                }
            } else if run.values.len() < run.choices.len() {
                Count {
                    distinct: run.values.len() as i64,
                    method: Method::Arguments,
                }
            } else {
                Count {
                    distinct: run.choices.len() as i64,
                    method: Method::Choices,
                }
            };
            Some((property, count))
        })
    }
}

impl Samples {
    /// Loads and merges every `--samples` path (files or observability directories).
    pub fn load(paths: &[crate::inputs::InputPath]) -> Result<Samples, GateError> {
        let mut samples = Samples::default();
        let mut observed = Observed::default();
        let mut any_observed = false;
        for crate::inputs::InputPath { path, name } in paths {
            if path.is_dir() {
                let mut files: Vec<_> = std::fs::read_dir(path)
                    .map_err(|e| GateError::io(name, e))?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                    .collect();
                files.sort();
                if files.is_empty() {
                    return Err(GateError::new(name, "is a directory with no Hypothesis observability `.jsonl` files")
                        .with_help("run pytest with HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY=1 so Hypothesis writes .hypothesis/observed/"));
                }
                for file in files {
                    let file_name = format!(
                        "{}/{}",
                        name.trim_end_matches('/'),
                        file.file_name().unwrap_or_default().to_string_lossy()
                    );
                    read_observability(&SourceFile::read(&file, file_name)?, &mut observed)?;
                }
                any_observed = true;
            } else if path.extension().is_some_and(|x| x == "jsonl") {
                read_observability(&SourceFile::read(path, name.clone())?, &mut observed)?;
                any_observed = true;
            } else {
                samples.merge_counts(&SourceFile::read(path, name.clone())?)?;
            }
        }
        if any_observed {
            samples.has_properties = true;
            for (property, count) in observed.counts() {
                samples.keep(property, count);
            }
        }
        Ok(samples)
    }

    /// Counts from different inputs cannot be unioned, so the largest is kept (a lower
    /// bound).
    pub fn keep(&mut self, property: String, count: Count) {
        let slot = std::sync::Arc::make_mut(&mut self.properties)
            .entry(property)
            .or_insert(count);
        if count.distinct > slot.distinct {
            *slot = count;
        }
    }

    /// How the property's count was made.
    pub fn method(&self, property: &str) -> Option<Method> {
        self.properties.get(property).map(|c| c.method)
    }

    pub fn distinct(&self, property: &str) -> Option<i64> {
        self.properties.get(property).map(|c| c.distinct)
    }

    /// `{"distinct": N}` and/or `{"properties": {"<id>": {"distinct": N}}}`. Counts from
    /// different shards cannot be unioned, so the largest is kept (a lower bound).
    fn merge_counts(&mut self, source: &Source) -> Result<(), GateError> {
        let node = crate::document::parse(source, crate::document::Format::Json)?;
        use crate::document::Value;
        let bad = |node: &crate::document::Node, what: &str| {
            GateError::new(&source.name, what.to_string()).at(source, node.span.clone(), "here")
        };
        let Value::Map(entries) = &node.value else {
            return Err(bad(
                &node,
                "must be a JSON object: {\"distinct\": N} or {\"properties\": {...}}",
            ));
        };
        for (key, value) in entries {
            match (key.as_str(), &value.value) {
                ("distinct", Value::Int(n)) if *n >= 0 => {
                    self.session = Some(self.session.map_or(*n, |s| s.max(*n)));
                }
                ("properties", Value::Map(props)) => {
                    self.has_properties = true;
                    for (id, count) in props {
                        let n = match count.get("distinct").map(|n| &n.value) {
                            Some(Value::Int(n)) if *n >= 0 => *n,
                            _ => return Err(bad(count, &format!("property `{id}` needs {{\"distinct\": N}} with N ≥ 0"))),
                        };
                        self.keep(id.to_string(), Count::given(n));
                    }
                }
                _ => return Err(bad(value, &format!("unexpected `{key}`: expected `distinct` (a count) or `properties` (a table)"))),
            }
        }
        Ok(())
    }
}

/// The distinct-input count per property in one Hypothesis observability `.jsonl`
/// text, as `--samples` counts it (for the fuzz targets and property tests).
pub fn parse_observability(source: &Source) -> Result<HashMap<String, usize>, GateError> {
    let mut observed = Observed::default();
    read_observability(source, &mut observed)?;
    Ok(observed
        .counts()
        .map(|(property, count)| (property, count.distinct as usize))
        .collect())
}

/// Hypothesis observability rows: per `property` and run (`run_start`), the distinct
/// choice sequences (`metadata.choice_nodes`) or, without them, `arguments`, over
/// `test_case` rows that passed or failed (`gave_up` rows exercised nothing).
fn read_observability(source: &Source, observed: &mut Observed) -> Result<(), GateError> {
    let mut offset = 0;
    for (i, line) in source.text.split('\n').enumerate() {
        let start = offset;
        offset += line.len() + 1;
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let row = parse_row(line).map_err(|(column, message)| {
            let at = start + column;
            GateError::new(
                &source.name,
                format!(
                    "line {}, column {}: not a JSON object: {message}",
                    i + 1,
                    line[..column].chars().count() + 1
                ),
            )
            .at(source, at..at, "here")
        })?;
        if row.get("type").and_then(|t| t.as_str()) != Some("test_case") {
            continue;
        }
        let status = row.get("status").and_then(|s| s.as_str()).unwrap_or("");
        if status != "passed" && status != "failed" {
            continue;
        }
        let (Some(property), Some(arguments)) = (
            row.get("property").and_then(|p| p.as_str()),
            row.get("arguments"),
        ) else {
            return Err(GateError::new(
                &source.name,
                format!(
                    "line {}: a test_case row without `property` or `arguments`",
                    i + 1
                ),
            )
            .at(source, start..start + line.len(), "this row"));
        };
        // Rows of one run share its start time; rows without one form one run.
        let run_start = row
            .get("run_start")
            .and_then(serde_json::Value::as_f64)
            .map_or(0, f64::to_bits);
        let run = observed
            .runs
            .entry(property.to_string())
            .or_default()
            .entry(run_start)
            .or_default();
        match row.pointer("/metadata/choice_nodes") {
            Some(nodes @ serde_json::Value::Array(_)) if !run.without_choices => {
                run.choices.insert(choice_sequence(nodes));
            }
            _ => run.without_choices = true,
        }
        let arguments = canonical_json(arguments);
        let value = match row.get("representation") {
            Some(serde_json::Value::String(shown)) => shown.clone(),
            _ => arguments.clone(),
        };
        run.values.insert(value);
        run.arguments.insert(arguments);
    }
    Ok(())
}

/// A row, read as Python's `json` writes it: bare `NaN`, `Infinity` and `-Infinity`
/// are values Hypothesis drew (`st.floats()`), not corruption. On an error, the byte
/// column in `line` and the parser's message without its own position.
fn parse_row(line: &str) -> Result<serde_json::Value, (usize, String)> {
    let first = match serde_json::from_str(line) {
        Ok(row) => return Ok(row),
        Err(e) => e,
    };
    let error_at = |e: &serde_json::Error, text: &str| {
        let column = e.column().saturating_sub(1);
        let column = text
            .char_indices()
            .nth(column)
            .map_or(text.len(), |(i, _)| i);
        (column, crate::error::json_message(e))
    };
    let Some((text, moved)) = python_floats_quoted(line) else {
        return Err(error_at(&first, line));
    };
    serde_json::from_str(&text).map_err(|e| {
        let (column, message) = error_at(&e, &text);
        // Back to the column in the line as written.
        let shift: usize = moved
            .iter()
            .take_while(|(at, _)| *at < column)
            .map(|(_, extra)| extra)
            .sum();
        (column.saturating_sub(shift), message)
    })
}

/// The marker a quoted Python float keeps (JSON text for a NUL and `float:`), so it can
/// never equal a string Hypothesis drew.
const PYTHON_FLOAT: &str = "\\u0000float:";

/// `line` with the bare `NaN`, `Infinity` and `-Infinity` tokens outside strings quoted
/// (as `"\u0000float:NaN"`), and where each insertion happened with how many bytes it
/// added; `None` when there is none.
fn python_floats_quoted(line: &str) -> Option<(String, Vec<(usize, usize)>)> {
    let bytes = line.as_bytes();
    let mut out = String::with_capacity(line.len() + 32);
    let mut moved = Vec::new();
    let (mut i, mut copied, mut in_string) = (0, 0, false);
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            b'N' | b'I' | b'-' if !in_string => {
                let token = ["NaN", "Infinity", "-Infinity"]
                    .into_iter()
                    .find(|t| line[i..].starts_with(t));
                if let Some(token) = token {
                    out.push_str(&line[copied..i]);
                    let quoted = format!("\"{PYTHON_FLOAT}{token}\"");
                    moved.push((out.len(), quoted.len() - token.len()));
                    out.push_str(&quoted);
                    i += token.len();
                    copied = i;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    if moved.is_empty() {
        return None;
    }
    out.push_str(&line[copied..]);
    Some((out, moved))
}

/// What Hypothesis drew, in order: each choice's type and value.
fn choice_sequence(nodes: &serde_json::Value) -> String {
    let mut out = String::new();
    for node in nodes.as_array().into_iter().flatten() {
        let part = |key: &str| node.get(key).map(canonical_json).unwrap_or_default();
        out.push_str(&part("type"));
        out.push(':');
        out.push_str(&part("value"));
        out.push(';');
    }
    out
}

/// JSON text with object keys sorted, so equal arguments compare equal.
fn canonical_json(value: &serde_json::Value) -> String {
    fn write(value: &serde_json::Value, out: &mut String) {
        match value {
            serde_json::Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (i, key) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::Value::String(key.clone()).to_string());
                    out.push(':');
                    write(&map[key], out);
                }
                out.push('}');
            }
            serde_json::Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(item, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(value, &mut out);
    out
}

pub fn is_observability_path(path: &Path) -> bool {
    path.is_dir() || path.extension().is_some_and(|x| x == "jsonl")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_arguments_ignore_key_order_and_gave_up_rows() {
        let text = r#"{"type":"test_case","property":"t.py::p","status":"passed","arguments":{"a":1,"b":2}}
{"type":"test_case","property":"t.py::p","status":"failed","arguments":{"b":2,"a":1}}
{"type":"test_case","property":"t.py::p","status":"gave_up","arguments":{"a":9,"b":9}}
{"type":"test_case","property":"t.py::p","status":"passed","arguments":{"a":3,"b":2}}
{"type":"info","property":"t.py::p","title":"x"}
"#;
        let mut observed = Observed::default();
        read_observability(&SourceFile::new("o.jsonl", "o.jsonl", text), &mut observed).unwrap();
        let counts: HashMap<String, Count> = observed.counts().collect();
        assert_eq!(counts["t.py::p"].distinct, 2);
        assert_eq!(counts["t.py::p"].method, Method::Arguments);
    }

    #[test]
    fn python_floats_are_values_and_real_corruption_names_its_column() {
        let text = "{\"type\":\"test_case\",\"property\":\"t.py::p\",\"status\":\"passed\",\"arguments\":{\"x\":NaN}}\n{\"type\":\"test_case\",\"property\":\"t.py::p\",\"status\":\"passed\",\"arguments\":{\"x\":-Infinity}}\n{\"type\":\"test_case\",\"property\":\"t.py::p\",\"status\":\"passed\",\"arguments\":{\"x\":\"NaN\"}}\n";
        let counts = parse_observability(&SourceFile::new("o.jsonl", "o.jsonl", text)).unwrap();
        assert_eq!(
            counts["t.py::p"], 3,
            "NaN, -Infinity and the string \"NaN\" differ"
        );
        // Corruption after a NaN: the column is the line's own, past the NaN as written.
        let bad = "{\"arguments\": {\"x\": NaN}, \"y\": oops}\n";
        let err = parse_observability(&SourceFile::new("o.jsonl", "o.jsonl", bad)).unwrap_err();
        assert!(err.to_string().contains("line 1, column 32"), "{err}");
    }

    #[test]
    fn only_the_latest_run_of_each_property_counts() {
        let row = |start: f64, n: i64| {
            format!("{{\"type\":\"test_case\",\"property\":\"t.py::p\",\"run_start\":{start},\"status\":\"passed\",\"arguments\":{{\"n\":{n}}}}}\n")
        };
        // An earlier, stronger run of the same day, then a weakened one.
        let mut text: String = (0..10).map(|n| row(100.5, n)).collect();
        text.push_str(&row(200.25, 1));
        text.push_str(&row(200.25, 1));
        let counts = parse_observability(&SourceFile::new("o.jsonl", "o.jsonl", text)).unwrap();
        assert_eq!(counts["t.py::p"], 1);
    }

    #[test]
    fn choice_sequences_count_what_was_drawn_unless_the_values_are_fewer() {
        // Equal JSON arguments (a dynamic class), told apart by Hypothesis's repr.
        let row = |choice: i64| {
            format!("{{\"type\":\"test_case\",\"property\":\"t.py::p\",\"run_start\":1.0,\"status\":\"passed\",\"representation\":\"p(cls=Dyn({choice}))\",\"arguments\":{{\"cls\":\"Dyn\"}},\"metadata\":{{\"choice_nodes\":[{{\"type\":\"integer\",\"value\":{choice}}}]}}}}\n")
        };
        // `st.integers().map(lambda _: 3)`: five draws, one value.
        let constant = |choice: i64| {
            format!("{{\"type\":\"test_case\",\"property\":\"t.py::c\",\"run_start\":1.0,\"status\":\"passed\",\"representation\":\"c(n=3)\",\"arguments\":{{\"n\":3}},\"metadata\":{{\"choice_nodes\":[{{\"type\":\"integer\",\"value\":{choice}}}]}}}}\n")
        };
        let constant_rows: String = (0..5).map(constant).collect();
        let mut observed = Observed::default();
        read_observability(
            &SourceFile::new("c.jsonl", "c.jsonl", constant_rows),
            &mut observed,
        )
        .unwrap();
        let counts: HashMap<String, Count> = observed.counts().collect();
        assert_eq!(
            counts["t.py::c"],
            Count {
                distinct: 1,
                method: Method::Arguments
            }
        );
        let text: String = (0..5).map(row).collect();
        let mut observed = Observed::default();
        read_observability(
            &SourceFile::new("o.jsonl", "o.jsonl", text.clone()),
            &mut observed,
        )
        .unwrap();
        let counts: HashMap<String, Count> = observed.counts().collect();
        assert_eq!(
            counts["t.py::p"],
            Count {
                distinct: 5,
                method: Method::Choices
            }
        );
        // One row without choices: the run is counted by its arguments.
        let mut text = text;
        text.push_str("{\"type\":\"test_case\",\"property\":\"t.py::p\",\"run_start\":1.0,\"status\":\"passed\",\"arguments\":{\"cls\":\"Dyn\"},\"metadata\":{\"choice_nodes\":null}}\n");
        let mut observed = Observed::default();
        read_observability(&SourceFile::new("o.jsonl", "o.jsonl", text), &mut observed).unwrap();
        let counts: HashMap<String, Count> = observed.counts().collect();
        assert_eq!(
            counts["t.py::p"],
            Count {
                distinct: 1,
                method: Method::Arguments
            }
        );
    }

    #[test]
    fn bad_rows_name_the_line() {
        let mut observed = Observed::default();
        let err = read_observability(
            &SourceFile::new("o.jsonl", "o.jsonl", "{}\n{oops\n"),
            &mut observed,
        )
        .unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
    }
}
