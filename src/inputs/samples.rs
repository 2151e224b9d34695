//! Property sample counts: explicit JSON counts or Hypothesis observability output.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::path::Path;

use crate::error::InputError;
use crate::source::{Source, SourceFile};

/// Distinct inputs per property (and/or for the whole session), merged over shards.
#[derive(Debug, Default, Clone)]
pub struct Samples {
    /// Per property node id: the distinct count. Shared: every script that reads
    /// `samples` gets a copy of the binding.
    pub properties: std::sync::Arc<HashMap<String, i64>>,
    /// Whether any input gave per-property counts (even zero of them).
    pub has_properties: bool,
    pub session: Option<i64>,
}

/// Observed argument sets per property, counted only at the end so shards union exactly.
#[derive(Default)]
struct Observed {
    arguments: HashMap<String, HashSet<String>>,
}

impl Samples {
    /// Loads and merges every `--samples` path (files or observability directories).
    pub fn load(paths: &[(std::path::PathBuf, String)]) -> Result<Samples, InputError> {
        let mut samples = Samples::default();
        let mut observed = Observed::default();
        let mut any_observed = false;
        for (path, name) in paths {
            if path.is_dir() {
                let mut files: Vec<_> = std::fs::read_dir(path)
                    .map_err(|e| InputError::io(name, e))?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                    .collect();
                files.sort();
                if files.is_empty() {
                    return Err(InputError::new(name, "is a directory with no Hypothesis observability `.jsonl` files")
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
            for (property, arguments) in observed.arguments {
                let n = arguments.len() as i64;
                let slot = std::sync::Arc::make_mut(&mut samples.properties)
                    .entry(property)
                    .or_insert(0);
                *slot = (*slot).max(n);
            }
        }
        Ok(samples)
    }

    pub fn distinct(&self, property: &str) -> Option<i64> {
        self.properties.get(property).copied()
    }

    /// `{"distinct": N}` and/or `{"properties": {"<id>": {"distinct": N}}}`. Counts from
    /// different shards cannot be unioned, so the largest is kept (a lower bound).
    fn merge_counts(&mut self, source: &Source) -> Result<(), InputError> {
        let node = crate::inputs::tree::parse(source, crate::inputs::tree::Format::Json)?;
        use crate::inputs::tree::Value;
        let bad = |node: &crate::inputs::tree::Node, what: &str| {
            InputError::new(&source.name, what.to_string()).at(source, node.span.clone(), "here")
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
                        let slot = std::sync::Arc::make_mut(&mut self.properties)
                            .entry(id.to_string())
                            .or_insert(0);
                        *slot = (*slot).max(n);
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
pub fn parse_observability(source: &Source) -> Result<HashMap<String, usize>, InputError> {
    let mut observed = Observed::default();
    read_observability(source, &mut observed)?;
    Ok(observed
        .arguments
        .into_iter()
        .map(|(property, arguments)| (property, arguments.len()))
        .collect())
}

/// Hypothesis observability rows: distinct `arguments` per `property` over `test_case`
/// rows that passed or failed (`gave_up` rows exercised nothing).
fn read_observability(source: &Source, observed: &mut Observed) -> Result<(), InputError> {
    let mut offset = 0;
    for (i, line) in source.text.split('\n').enumerate() {
        let start = offset;
        offset += line.len() + 1;
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let row: serde_json::Value = serde_json::from_str(line).map_err(|e| {
            InputError::new(
                &source.name,
                format!("line {}: not a JSON object: {}", i + 1, e),
            )
            .at(source, start..start + line.len(), "this line")
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
            return Err(InputError::new(
                &source.name,
                format!(
                    "line {}: a test_case row without `property` or `arguments`",
                    i + 1
                ),
            )
            .at(source, start..start + line.len(), "this row"));
        };
        observed
            .arguments
            .entry(property.to_string())
            .or_default()
            .insert(canonical_json(arguments));
    }
    Ok(())
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
        assert_eq!(observed.arguments["t.py::p"].len(), 2);
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
