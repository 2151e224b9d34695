//! The native types and helpers scripts see: id sets, dates, samples, results, and the
//! conversion of spanned documents into Rhai values.

use rhai::{Array, Dynamic, Engine, EvalAltResult, ImmutableString, Map, Position, INT};

use std::sync::Arc;

use crate::document::{InlineString, Node, Value};
use crate::inputs::ids::{self, IdSet};
use crate::inputs::junit::Results;
use crate::inputs::ledger::Entry;
use crate::inputs::owners::Owners;
use crate::inputs::samples::Samples;

/// A calendar date. Compare with `<`, `==`...; `a - b` is days; `d + n` adds days.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date(pub jiff::civil::Date);

impl Date {
    /// Strict `YYYY-MM-DD` that names a real day.
    pub fn parse(text: &str) -> Option<Date> {
        let bytes = text.as_bytes();
        let shape_ok = bytes.len() == 10
            && bytes.iter().enumerate().all(|(i, b)| match i {
                4 | 7 => *b == b'-',
                _ => b.is_ascii_digit(),
            });
        if !shape_ok {
            return None;
        }
        text.parse::<jiff::civil::Date>().ok().map(Date)
    }

    /// The value of a date flag (`--today`, `--since`), a usage error naming the flag
    /// when it is not a real `YYYY-MM-DD` day.
    pub fn of_flag(flag: &str, text: &str) -> Result<Date, crate::error::GateError> {
        Date::parse(text).ok_or_else(|| {
            crate::error::GateError::usage(format!(
                "{flag} `{text}` is not a real date in YYYY-MM-DD form"
            ))
        })
    }

    /// `--today` when given, else today's date in UTC.
    pub fn today_or(given: Option<&str>) -> Result<Date, crate::error::GateError> {
        match given {
            Some(text) => Date::of_flag("--today", text),
            None => Ok(Date(
                jiff::Timestamp::now()
                    .to_zoned_datetime(jiff::tz::TimeZone::UTC)
                    .date(),
            )),
        }
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A ledger entry as scripts see it. It reads like a map (`e.test_id`, `e["owner"]`,
/// `"owner" in e`, `e.keys()`), straight from the parsed ledger: copying it (`for e in
/// ledger.freezes`, `let x = e`) copies a pointer, and the ledger is never held twice. A
/// write (`e.owner = "x"`) goes to this copy's own fields, so no other copy sees it.
#[derive(Debug, Clone)]
pub struct Freeze {
    entries: Arc<[Entry]>,
    index: usize,
    /// Fields written by the script, over the file's (copy-on-write).
    written: Option<Arc<Map>>,
}

impl Freeze {
    pub fn new(entries: Arc<[Entry]>, index: usize) -> Freeze {
        Freeze {
            entries,
            index,
            written: None,
        }
    }

    fn node(&self) -> &Node {
        &self.entries[self.index].node
    }

    fn written(&self, name: &str) -> Option<&Dynamic> {
        self.written.as_ref().and_then(|fields| fields.get(name))
    }

    /// A field's value, `()` when absent.
    pub fn field(&self, name: &str) -> Dynamic {
        if let Some(value) = self.written(name) {
            return value.clone();
        }
        let entry = &self.entries[self.index];
        match name {
            "index" => return Dynamic::from_int(self.index as INT),
            "is_new" => return entry.is_new.into(),
            "changed" => {
                return Dynamic::from_array(
                    entry
                        .changed_fields()
                        .into_iter()
                        .map(|f| Dynamic::from(ImmutableString::from(f)))
                        .collect(),
                )
            }
            _ => {}
        }
        self.node().get(name).map_or(Dynamic::UNIT, to_dynamic)
    }

    /// Whether a field is absent or [`is_blank`], read without converting the value.
    fn is_blank_field(&self, name: &str) -> bool {
        if self.written(name).is_some() || matches!(name, "index" | "is_new" | "changed") {
            return is_blank(self.field(name));
        }
        self.node().get(name).is_none_or(|node| match &node.value {
            Value::Null => true,
            Value::Str(text) => text.as_str().trim().is_empty(),
            Value::Seq(items) => items.is_empty(),
            Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Map(_) => false,
        })
    }

    fn set(&mut self, name: &str, value: Dynamic) {
        let fields = self.written.get_or_insert_with(Default::default);
        Arc::make_mut(fields).insert(name.into(), value);
    }

    fn contains(&self, name: &str) -> bool {
        self.written(name).is_some() || name == "index" || self.node().get(name).is_some()
    }

    /// Every field as a plain map.
    pub fn to_map(&self) -> Map {
        let mut map = match &self.node().value {
            Value::Map(fields) => to_map(fields),
            _ => Map::new(),
        };
        map.insert("index".into(), Dynamic::from_int(self.index as INT));
        if let Some(written) = &self.written {
            map.extend(written.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        map
    }
}

fn register_freeze(engine: &mut Engine) {
    engine
        .register_type_with_name::<Freeze>("Freeze")
        .register_indexer_get(|e: &mut Freeze, name: &str| e.field(name))
        .register_indexer_set(|e: &mut Freeze, name: &str, value: Dynamic| e.set(name, value))
        .register_fn("contains", |e: &mut Freeze, name: &str| e.contains(name))
        .register_fn("keys", |e: &mut Freeze| -> Array {
            e.to_map()
                .keys()
                .map(|k| Dynamic::from(ImmutableString::from(k.as_str())))
                .collect()
        })
        .register_fn("values", |e: &mut Freeze| -> Array {
            e.to_map().into_values().collect()
        })
        .register_fn("len", |e: &mut Freeze| e.to_map().len() as INT)
        .register_fn("is_empty", |_: &mut Freeze| false)
        .register_fn("to_map", |e: &mut Freeze| e.to_map())
        .register_fn("to_string", |e: &mut Freeze| {
            Dynamic::from_map(e.to_map()).to_string()
        })
        .register_fn("to_debug", |e: &mut Freeze| {
            format!("{:?}", Dynamic::from_map(e.to_map()))
        });
    // The schema's fields get a getter each: any other field is still readable, through
    // the indexer, once Rhai has failed to find a getter for it.
    for name in ["index", "is_new", "changed"]
        .into_iter()
        .chain(crate::inputs::ledger::FIELDS)
    {
        engine.register_get(name, move |e: &mut Freeze| e.field(name));
    }
}

/// Iterates an [`IdSet`] in input order without copying the set.
pub struct IdSetIter {
    set: IdSet,
    next: usize,
}

impl Iterator for IdSetIter {
    type Item = ImmutableString;
    fn next(&mut self) -> Option<ImmutableString> {
        let item = self.set.get(self.next)?;
        self.next += 1;
        Some(ImmutableString::from(item))
    }
}

impl IntoIterator for IdSet {
    type Item = ImmutableString;
    type IntoIter = IdSetIter;
    fn into_iter(self) -> IdSetIter {
        IdSetIter { set: self, next: 0 }
    }
}

fn runtime_error(message: String) -> Box<EvalAltResult> {
    EvalAltResult::ErrorRuntime(message.into(), Position::NONE).into()
}

/// Registers every type and helper that does not depend on the run's facts.
pub fn register(engine: &mut Engine, pytest_root: String, repo_root: std::path::PathBuf) {
    register_freeze(engine);
    engine
        .register_type_with_name::<IdSet>("IdSet")
        .register_iterator::<IdSet>()
        .register_fn("contains", |set: &mut IdSet, id: &str| set.contains(id))
        .register_fn("len", |set: &mut IdSet| set.len() as INT)
        .register_get("len", |set: &mut IdSet| set.len() as INT)
        .register_fn("is_empty", |set: &mut IdSet| set.is_empty())
        .register_fn("covers", |set: &mut IdSet, id: &str| set.covers(id))
        .register_fn("any_under", |set: &mut IdSet, id: &str| set.any_under(id))
        .register_fn("under", |set: &mut IdSet, id: &str, n: INT| -> Array {
            set.under(id, usize::try_from(n).unwrap_or(0))
                .into_iter()
                .map(|id| Dynamic::from(ImmutableString::from(id)))
                .collect()
        })
        .register_fn("missing_from", |set: &mut IdSet, other: IdSet| -> Array {
            set.iter()
                .filter(|id| !other.contains(id))
                .map(|id| Dynamic::from(ImmutableString::from(id)))
                .collect()
        })
        .register_fn("nearest", |set: &mut IdSet, id: &str, n: INT| -> Array {
            set.nearest(id, usize::try_from(n).unwrap_or(0))
                .into_iter()
                .map(Dynamic::from)
                .collect()
        })
        .register_fn("to_string", |set: &mut IdSet| {
            format!("IdSet({} ids)", set.len())
        })
        .register_fn("to_debug", |set: &mut IdSet| {
            format!("IdSet({} ids)", set.len())
        });

    engine
        .register_type_with_name::<Date>("Date")
        .register_fn("date", |text: &str| {
            Date::parse(text).map_or(Dynamic::UNIT, Dynamic::from)
        })
        .register_fn("date", |date: Date| date)
        .register_fn("date", |_: ()| Dynamic::UNIT)
        .register_fn("-", |a: Date, b: Date| (a.0 - b.0).get_days() as INT)
        .register_fn("+", |a: Date, days: INT| shift(a, days))
        .register_fn("-", |a: Date, days: INT| {
            shift(a, days.checked_neg().unwrap_or(INT::MAX))
        })
        .register_fn("==", |a: Date, b: Date| a == b)
        .register_fn("!=", |a: Date, b: Date| a != b)
        .register_fn("<", |a: Date, b: Date| a < b)
        .register_fn("<=", |a: Date, b: Date| a <= b)
        .register_fn(">", |a: Date, b: Date| a > b)
        .register_fn(">=", |a: Date, b: Date| a >= b)
        .register_fn("to_string", |d: &mut Date| d.to_string())
        .register_fn("to_debug", |d: &mut Date| format!("date(\"{d}\")"));

    engine
        .register_type_with_name::<Samples>("Samples")
        .register_fn("distinct", |s: &mut Samples, id: &str| {
            s.distinct(id).map_or(Dynamic::UNIT, Dynamic::from_int)
        })
        .register_get("session", |s: &mut Samples| {
            s.session.map_or(Dynamic::UNIT, Dynamic::from_int)
        })
        .register_get("has_properties", |s: &mut Samples| s.has_properties)
        .register_fn("method", |s: &mut Samples, id: &str| {
            s.method(id)
                .map_or(Dynamic::UNIT, |m| Dynamic::from(m.as_str()))
        })
        .register_fn("to_string", |s: &mut Samples| {
            format!("Samples({} properties)", s.properties.len())
        })
        .register_fn("to_debug", |s: &mut Samples| {
            format!("Samples({} properties)", s.properties.len())
        });

    engine
        .register_type_with_name::<Results>("Results")
        .register_fn("outcome", |r: &mut Results, id: &str| {
            r.outcome(id)
                .map_or(Dynamic::UNIT, |o| Dynamic::from(o.as_str()))
        })
        .register_fn("skipped_among", |r: &mut Results, ids: IdSet| -> Array {
            ids.iter()
                .filter(|id| r.outcome(id) == Some(crate::inputs::junit::Outcome::Skipped))
                .map(|id| Dynamic::from(ImmutableString::from(id)))
                .collect()
        })
        .register_fn("to_string", |r: &mut Results| {
            format!("Results({} test cases)", r.len())
        })
        .register_fn("to_debug", |r: &mut Results| {
            format!("Results({} test cases)", r.len())
        });

    crate::engine::coverage::register(engine);

    engine
        .register_type_with_name::<crate::inputs::Hunks>("Hunks")
        .register_fn(
            "touches",
            |h: &mut crate::inputs::Hunks, file: &str, first: INT, last: INT| {
                let line = |n: INT| u32::try_from(n).unwrap_or(0);
                h.touches(file, line(first), line(last))
            },
        )
        .register_fn("to_string", |_: &mut crate::inputs::Hunks| {
            "Hunks".to_string()
        });

    engine
        .register_type_with_name::<crate::inputs::run_record::Runs>("Runs")
        .register_get("collected", |r: &mut crate::inputs::run_record::Runs| {
            r.collected.clone()
        })
        .register_get(
            "records",
            |r: &mut crate::inputs::run_record::Runs| -> Array {
                r.headers
                    .iter()
                    .map(|h| {
                        let mut map = Map::new();
                        let text =
                            |v: &Option<String>| v.clone().map_or(Dynamic::UNIT, Dynamic::from);
                        map.insert("file".into(), h.file.clone().into());
                        map.insert("commit".into(), text(&h.commit));
                        map.insert("dirty".into(), h.dirty.into());
                        map.insert("ledger".into(), text(&h.ledger));
                        map.insert("ledger_sha256".into(), text(&h.ledger_sha256));
                        Dynamic::from_map(map)
                    })
                    .collect()
            },
        )
        .register_get(
            "skips",
            |r: &mut crate::inputs::run_record::Runs| -> Array {
                r.skips()
                    .into_iter()
                    .map(|skip| {
                        let mut map = Map::new();
                        let text = |v: Option<String>| v.map_or(Dynamic::UNIT, Dynamic::from);
                        map.insert("test_id".into(), skip.test_id.into());
                        map.insert("kind".into(), skip.kind.into());
                        let source = skip.source.map(|s| match s {
                            crate::inputs::run_record::SkipSource::Ledger => "ledger",
                            crate::inputs::run_record::SkipSource::Mark => "mark",
                            crate::inputs::run_record::SkipSource::Imperative => "imperative",
                            crate::inputs::run_record::SkipSource::Collection => "collection",
                        });
                        map.insert("source".into(), source.map_or(Dynamic::UNIT, Dynamic::from));
                        map.insert("reason".into(), text(skip.reason));
                        map.insert("file".into(), text(skip.file));
                        map.insert(
                            "line".into(),
                            skip.line
                                .map_or(Dynamic::UNIT, |l| Dynamic::from_int(INT::from(l))),
                        );
                        map.insert(
                            "find".into(),
                            skip.find.map_or(Dynamic::UNIT, Dynamic::from),
                        );
                        map.insert("scope".into(), text(skip.scope));
                        map.insert("origin".into(), text(skip.origin));
                        Dynamic::from_map(map)
                    })
                    .collect()
            },
        )
        .register_get(
            "withdrawn",
            |r: &mut crate::inputs::run_record::Runs| -> Array {
                let entry = |id: &str, how: &str| {
                    let mut map = Map::new();
                    map.insert("test_id".into(), id.into());
                    map.insert("how".into(), how.into());
                    let markers: Array = r
                        .markers
                        .get(id)
                        .into_iter()
                        .flatten()
                        .map(|m| Dynamic::from(m.clone()))
                        .collect();
                    map.insert("markers".into(), Dynamic::from_array(markers));
                    Dynamic::from_map(map)
                };
                r.deselected
                    .iter()
                    .map(|id| entry(id, "deselected"))
                    .chain(r.dropped.iter().map(|id| entry(id, "dropped")))
                    .collect()
            },
        )
        .register_fn(
            "saw",
            |r: &mut crate::inputs::run_record::Runs, id: &str| r.saw(id),
        )
        .register_fn(
            "lines",
            |r: &mut crate::inputs::run_record::Runs, id: &str| {
                r.lines_of(id).map_or(Dynamic::UNIT, |(first, last)| {
                    Dynamic::from_array(vec![
                        Dynamic::from_int(INT::from(first)),
                        Dynamic::from_int(INT::from(last)),
                    ])
                })
            },
        )
        .register_fn(
            "digest",
            |r: &mut crate::inputs::run_record::Runs, id: &str| {
                r.digest_of(id)
                    .map_or(Dynamic::UNIT, |d| Dynamic::from(format!("{d:016x}")))
            },
        )
        .register_get(
            "hooks",
            |r: &mut crate::inputs::run_record::Runs| -> Array {
                r.hooks
                    .iter()
                    .map(|h| {
                        let mut map = Map::new();
                        map.insert("hook".into(), h.hook.clone().into());
                        map.insert("plugin".into(), h.plugin.clone().into());
                        map.insert("function".into(), h.function.clone().into());
                        map.insert(
                            "file".into(),
                            h.file.clone().map_or(Dynamic::UNIT, Dynamic::from),
                        );
                        map.insert(
                            "line".into(),
                            h.line
                                .map_or(Dynamic::UNIT, |l| Dynamic::from_int(INT::from(l))),
                        );
                        map.insert("wrapper".into(), h.wrapper.into());
                        map.insert(
                            "reaches".into(),
                            Dynamic::from_array(
                                h.reaches.iter().map(|n| Dynamic::from(n.clone())).collect(),
                            ),
                        );
                        map.insert("key".into(), h.key_text().into());
                        Dynamic::from_map(map)
                    })
                    .collect()
            },
        )
        .register_get(
            "census",
            |r: &mut crate::inputs::run_record::Runs| -> Array {
                r.census().into_iter().map(Dynamic::from).collect()
            },
        )
        .register_get(
            "tools",
            |r: &mut crate::inputs::run_record::Runs| -> Array {
                r.tools
                    .iter()
                    .map(|t| {
                        let mut map = Map::new();
                        map.insert("name".into(), t.module.clone().into());
                        map.insert("file".into(), t.file.clone().into());
                        map.insert("shadowed".into(), t.is_shadowed().into());
                        Dynamic::from_map(map)
                    })
                    .collect()
            },
        )
        .register_get(
            "failures",
            |r: &mut crate::inputs::run_record::Runs| -> Array {
                r.failures()
                    .into_iter()
                    .map(|(id, outcome)| {
                        let mut map = Map::new();
                        map.insert("test_id".into(), id.into());
                        map.insert("outcome".into(), outcome.as_str().into());
                        let line = r
                            .lines_of(id)
                            .map_or(Dynamic::UNIT, |(first, _)| INT::from(first).into());
                        map.insert("line".into(), line);
                        Dynamic::from_map(map)
                    })
                    .collect()
            },
        )
        .register_get(
            "addopts_at",
            |r: &mut crate::inputs::run_record::Runs| -> Dynamic {
                match &r.addopts_at {
                    None => Dynamic::UNIT,
                    Some((file, line)) => {
                        let mut map = Map::new();
                        map.insert("file".into(), file.clone().into());
                        map.insert("line".into(), INT::from(*line).into());
                        map.insert("find".into(), "addopts".into());
                        Dynamic::from_map(map)
                    }
                }
            },
        )
        // Each selecting option of addopts as a report target at its own line.
        .register_get(
            "addopts_options",
            |r: &mut crate::inputs::run_record::Runs| -> Array {
                r.addopts_options
                    .iter()
                    .map(|o| {
                        let mut map = Map::new();
                        map.insert("file".into(), o.file.clone().into());
                        map.insert("line".into(), INT::from(o.line).into());
                        map.insert("find".into(), o.flag.clone().into());
                        map.insert("option".into(), o.option.clone().into());
                        map.insert("flag".into(), o.flag.clone().into());
                        map.insert("value".into(), o.value.clone().into());
                        Dynamic::from_map(map)
                    })
                    .collect()
            },
        )
        .register_get(
            "selection",
            |r: &mut crate::inputs::run_record::Runs| -> Array {
                r.selection
                    .iter()
                    .map(|s| Dynamic::from(s.clone()))
                    .collect()
            },
        )
        // A test's outcome in the run (`passed`, `failed`, ...), () when it has none.
        .register_fn(
            "outcome",
            |r: &mut crate::inputs::run_record::Runs, id: &str| {
                r.results
                    .outcome(id)
                    .map_or(Dynamic::UNIT, |o| Dynamic::from(o.as_str()))
            },
        )
        // Hypothesis tests' settings (FZ304): whether the records had them, the ids that
        // have them, one test's (a map, () for none), and the profile in force.
        .register_get("has_settings", |r: &mut crate::inputs::run_record::Runs| {
            r.properties.is_some()
        })
        .register_get(
            "settings_ids",
            |r: &mut crate::inputs::run_record::Runs| -> Array {
                r.properties
                    .iter()
                    .flat_map(|p| p.tests.keys())
                    .map(|id| Dynamic::from(id.clone()))
                    .collect()
            },
        )
        .register_fn(
            "settings",
            |r: &mut crate::inputs::run_record::Runs, id: &str| {
                r.properties
                    .as_ref()
                    .and_then(|p| p.tests.get(id))
                    .map_or(Dynamic::UNIT, settings_map)
            },
        )
        .register_get("profile", |r: &mut crate::inputs::run_record::Runs| {
            r.properties
                .as_ref()
                .and_then(|p| p.profile.as_ref())
                .map_or(Dynamic::UNIT, |p| {
                    let mut map = Map::new();
                    map.insert("name".into(), p.name.clone().into());
                    map.insert("file".into(), optional_text(&p.file));
                    map.insert("line".into(), optional_int(p.line));
                    Dynamic::from_map(map)
                })
        })
        .register_fn("to_string", |r: &mut crate::inputs::run_record::Runs| {
            format!("Runs({} records)", r.headers.len())
        })
        .register_fn("to_debug", |r: &mut crate::inputs::run_record::Runs| {
            format!("Runs({} records)", r.headers.len())
        });

    engine
        .register_type_with_name::<Owners>("Owners")
        .register_fn("of", |o: &mut Owners, path: &str| -> Array {
            o.of(path)
                .iter()
                .map(|s| Dynamic::from(s.clone()))
                .collect()
        })
        .register_get("len", |o: &mut Owners| o.len() as INT)
        .register_fn("to_string", |o: &mut Owners| {
            format!("Owners({}: {} rules)", o.name(), o.len())
        })
        .register_fn("to_debug", |o: &mut Owners| {
            format!("Owners({}: {} rules)", o.name(), o.len())
        });

    engine
        .register_fn(
            "glob_match",
            |pattern: &str, path: &str| -> Result<bool, Box<EvalAltResult>> {
                let pattern = glob::Pattern::new(pattern)
                    .map_err(|e| runtime_error(format!("bad glob pattern `{pattern}`: {e}")))?;
                let options = glob::MatchOptions {
                    case_sensitive: true,
                    require_literal_separator: true,
                    require_literal_leading_dot: false,
                };
                Ok(pattern.matches_with(path, options))
            },
        )
        .register_fn("is_blank", is_blank)
        .register_fn("blank_fields", |e: &mut Freeze, fields: Array| {
            blank_fields(fields, |name| e.is_blank_field(name))
        })
        .register_fn("blank_fields", |e: &mut Map, fields: Array| {
            blank_fields(fields, |name| {
                is_blank(e.get(name).cloned().unwrap_or(Dynamic::UNIT))
            })
        })
        .register_fn("marker_expression", |expression: &str, markers: Array| {
            let markers: Vec<String> = markers.iter().map(Dynamic::to_string).collect();
            crate::inputs::markers::matches(expression, &markers)
        })
        .register_fn("plural", |n: INT, word: &str| crate::words::count(n, word))
        .register_fn("part_of", |k: INT, n: INT, word: &str| {
            crate::words::part_of(k, n, word)
        })
        .register_fn("each_of", |n: INT, word: &str| {
            crate::words::each_of(n, word)
        })
        .register_fn("the_whole", |n: INT, word: &str| {
            crate::words::the_whole(n, word)
        })
        .register_fn("join_or", |items: Array| {
            let items: Vec<String> = items.iter().map(Dynamic::to_string).collect();
            crate::words::join_or(&items)
        })
        .register_fn("join_and", |items: Array| {
            let items: Vec<String> = items.iter().map(Dynamic::to_string).collect();
            crate::words::join_and(&items)
        })
        .register_type_with_name::<FirstIndex>("FirstIndex")
        .register_fn("index_by", index_by)
        .register_fn("get", |index: &mut FirstIndex, key: &str| {
            index
                .0
                .get(key)
                .map_or(Dynamic::UNIT, |&i| Dynamic::from_int(i))
        })
        .register_fn("contains", |index: &mut FirstIndex, key: &str| {
            index.0.contains_key(key)
        })
        .register_fn("file_of", |id: &str| ids::file_of(id).to_string())
        .register_fn("is_node_id", |s: &str| ids::is_node_id(s))
        .register_fn("is_node_id", |_: ()| false)
        .register_fn("repo_file", {
            let pytest_root = pytest_root.clone();
            move |id: &str| ids::repo_file(&pytest_root, id)
        })
        // `suite_file(file)`: a repository path as node ids name it (relative to pytest's
        // rootdir).
        .register_fn("suite_file", {
            let pytest_root = pytest_root.clone();
            move |file: &str| ids::suite_file(&pytest_root, file)
        })
        // `renamed_out(id)`: the function a test that left the collection was renamed to,
        // in its file at this commit, as `#{file, line, find, name, test_id}` (a report
        // target at that `def`), else `()`.
        .register_fn("renamed_out", {
            let files = crate::inputs::renamed::TestFiles::new(repo_root.clone());
            move |id: &str| {
                let file = ids::repo_file(&pytest_root, id);
                match files.renamed_out(&file, id) {
                    None => Dynamic::UNIT,
                    Some((name, line)) => {
                        let mut map = Map::new();
                        map.insert("file".into(), file.into());
                        map.insert("line".into(), INT::from(line).into());
                        map.insert("find".into(), name.clone().into());
                        map.insert("name".into(), name.into());
                        map.insert("test_id".into(), id.into());
                        Dynamic::from_map(map)
                    }
                }
            }
        })
        // `renamed_file(file)`: the path the patch renamed a repository file to, else `()`.
        .register_fn("renamed_file", {
            let repo_root = repo_root.clone();
            move |file: &str| {
                crate::inputs::tools::renamed_file(&repo_root, file)
                    .map_or(Dynamic::UNIT, Dynamic::from)
            }
        })
        .register_fn("properties", properties)
        .register_fn("properties", |e: &mut Freeze| {
            properties_of(Some(&e.field("compensating_property")))
        });
}

/// For each distinct string value of `field` among maps, the position of the first map
/// holding it: duplicate detection in one native pass (a script map grown one key at a
/// time is quadratic under Rhai's size checks).
#[derive(Debug, Clone)]
pub struct FirstIndex(std::sync::Arc<rustc_hash::FxHashMap<String, INT>>);

fn index_by(items: &mut Array, field: &str) -> FirstIndex {
    let mut index = rustc_hash::FxHashMap::default();
    for (position, item) in items.iter().enumerate() {
        let value = if let Some(entry) = item.read_lock::<Freeze>() {
            Some(entry.field(field))
        } else if let Some(map) = item.read_lock::<Map>() {
            map.get(field).cloned()
        } else {
            continue;
        };
        let value = value.and_then(|v| v.into_immutable_string().ok());
        if let Some(value) = value {
            index.entry(value.to_string()).or_insert(position as INT);
        }
    }
    FirstIndex(std::sync::Arc::new(index))
}

/// Absent, `()`, an empty or all-whitespace string, or an empty list.
fn is_blank(value: Dynamic) -> bool {
    if value.is_unit() {
        return true;
    }
    if let Some(text) = value.read_lock::<ImmutableString>() {
        return text.trim().is_empty();
    }
    if let Some(items) = value.read_lock::<Array>() {
        return items.is_empty();
    }
    false
}

/// The names among `fields` whose value `blank` says is missing, in order: FZ101's
/// seven checks of an entry in one call.
fn blank_fields(fields: Array, blank: impl Fn(&str) -> bool) -> Result<Array, Box<EvalAltResult>> {
    let mut missing = Array::new();
    for field in fields {
        let name = field.into_immutable_string().map_err(|type_name| {
            runtime_error(format!(
                "blank_fields: a field name is a string, not {type_name}"
            ))
        })?;
        if blank(&name) {
            missing.push(name.into());
        }
    }
    Ok(missing)
}

/// The compensating properties of an entry as `#{id, field}` maps, so a rule can report
/// on the exact list item.
fn properties(entry: &mut Map) -> Array {
    properties_of(entry.get("compensating_property"))
}

/// [`properties`] of the value of an entry's `compensating_property`.
fn properties_of(value: Option<&Dynamic>) -> Array {
    match value {
        Some(value) if value.is_array() => {
            let items = value.clone().into_array().unwrap_or_default();
            items
                .into_iter()
                .enumerate()
                .filter(|(_, v)| v.is_string())
                .map(|(i, id)| property(id, format!("compensating_property[{i}]")))
                .collect()
        }
        Some(value) if value.is_string() => {
            vec![property(value.clone(), "compensating_property".into())]
        }
        _ => Array::new(),
    }
}

fn property(id: Dynamic, field: String) -> Dynamic {
    let mut map = Map::new();
    map.insert("id".into(), id);
    map.insert("field".into(), field.into());
    map.into()
}

/// A spanned document value as a plain Rhai value.
pub fn to_dynamic(node: &Node) -> Dynamic {
    match &node.value {
        Value::Null => Dynamic::UNIT,
        Value::Bool(b) => (*b).into(),
        Value::Int(i) => (*i).into(),
        Value::Float(f) => (*f).into(),
        Value::Str(s) => s.as_str().into(),
        Value::Seq(items) => Dynamic::from_array(items.iter().map(to_dynamic).collect()),
        Value::Map(entries) => Dynamic::from_map(to_map(entries)),
    }
}

/// The fields of a document map as a Rhai map.
pub fn to_map<'a>(fields: impl IntoIterator<Item = &'a (InlineString, Node)>) -> Map {
    fields
        .into_iter()
        .map(|(key, value)| (key.as_str().into(), to_dynamic(value)))
        .collect()
}

/// `date` moved by `days` (back when negative); out of range is a script error.
fn shift(date: Date, days: INT) -> Result<Date, Box<EvalAltResult>> {
    let span = jiff::Span::new()
        .try_days(days)
        .map_err(|e| runtime_error(e.to_string()))?;
    date.0
        .checked_add(span)
        .map(Date)
        .map_err(|e| runtime_error(format!("date out of range: {e}")))
}

pub(super) fn optional_text(text: &Option<String>) -> Dynamic {
    text.clone().map_or(Dynamic::UNIT, Dynamic::from)
}

/// A line, a count: an integer, or `()` where there is none.
pub(super) fn optional_int(n: Option<u32>) -> Dynamic {
    n.map_or(Dynamic::UNIT, |n| Dynamic::from_int(INT::from(n)))
}

/// A Hypothesis test's settings as a script sees them (`runs.settings(id)`).
fn settings_map(s: &crate::inputs::run_record::PropertySettings) -> Dynamic {
    let mut map = Map::new();
    map.insert(
        "max_examples".into(),
        Dynamic::from_int(INT::from(s.max_examples)),
    );
    let phases: Array = s.phases.iter().map(|p| Dynamic::from(p.clone())).collect();
    map.insert("phases".into(), Dynamic::from_array(phases));
    map.insert("derandomize".into(), s.derandomize.into());
    map.insert("database".into(), s.database.into());
    map.insert("given".into(), s.given.into());
    map.insert("generates".into(), s.generates().into());
    map.insert("examples".into(), Dynamic::from_int(INT::from(s.examples)));
    map.insert(
        "stateful_step_count".into(),
        optional_int(s.stateful_step_count),
    );
    map.insert("file".into(), optional_text(&s.file));
    map.insert("line".into(), optional_int(s.line));
    map.insert("settings_line".into(), optional_int(s.settings_line));
    map.insert(
        "settings_keys".into(),
        s.settings_keys.as_ref().map_or(Dynamic::UNIT, |keys| {
            Dynamic::from_array(keys.iter().map(|k| Dynamic::from(k.clone())).collect())
        }),
    );
    Dynamic::from_map(map)
}
