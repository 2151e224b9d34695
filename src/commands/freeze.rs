//! `freezegate freeze add|renew|remove`: edit the ledger in its own format, validate the
//! edited entry with the same rules as `check`, and write atomically.

use std::path::Path;

use serde_json::{json, Map as JsonMap, Value as Json};

use crate::cli::{FreezeAction, FreezeArgs};
use crate::commands::{rewrite_atomic, EXIT_PASS, EXIT_VIOLATIONS};
use crate::document::Format;
use crate::engine::bindings::Date;
use crate::engine::selection::Selection;
use crate::error::GateError;
use crate::gate::Gate;
use crate::inputs::ledger::Ledger;
use crate::inputs::Facts;
use crate::inputs::InputPath;
use crate::report::{human, Report};
use crate::source::SourceFile;

const DEFAULT_WINDOW: i64 = 14;

pub fn run(cwd: &Path, config_path: Option<&Path>, args: &FreezeArgs) -> Result<u8, GateError> {
    let gate = Gate::load(cwd, config_path)?;
    let ledger_input = InputPath::from_cli_or_config(
        cwd,
        args.ledger.as_deref(),
        &gate.config.ledger,
        &gate.config.repo_root,
    );
    let ledger = Ledger::load(&ledger_input.path, &ledger_input.name)?;
    let today = Date::today_or(args.today.as_deref())?;
    let max_window = gate
        .config
        .params
        .as_ref()
        .and_then(|p| p.get("max_window_days"))
        .and_then(|n| match n.value {
            crate::document::Value::Int(i) => Some(i),
            _ => None,
        })
        .or(ledger.max_window_days)
        .unwrap_or(DEFAULT_WINDOW);
    let window =
        |days: Option<i64>, expires: &Option<String>| -> Result<(String, String), GateError> {
            if let Some(expires) = expires {
                // Checked like every other date: FZ102 to FZ105 judge the edited entry.
                let date = Date::today_or(Some(expires)).map_err(|_| {
                    GateError::usage(format!("--expires {expires}: not a date (YYYY-MM-DD)"))
                })?;
                return Ok((today.to_string(), date.to_string()));
            }
            let days = days.unwrap_or(max_window);
            if days < 0 {
                return Err(GateError::usage("--days must not be negative"));
            }
            let expires = today
                .0
                .checked_add(jiff::Span::new().days(days))
                .map_err(|e| GateError::usage(format!("--days {days}: {e}")))?;
            Ok((today.to_string(), expires.to_string()))
        };
    let position = |id: &str| ledger.entries.iter().position(|e| e.test_id() == Some(id));

    let (edit, test_id) = match &args.action {
        FreezeAction::Add {
            test_id,
            owner,
            reason,
            invariant,
            property,
            reused,
            days,
            expires,
            retired,
        } => {
            if position(test_id).is_some() {
                return Err(GateError::new(
                    &ledger.source.name,
                    format!("{test_id} is already frozen"),
                )
                .with_help("use `freezegate freeze renew` to give it a fresh window"));
            }
            let (opened, expires) = window(*days, expires)?;
            let property = match property.as_slice() {
                [one] => json!(one),
                many => json!(many),
            };
            let mut entry = json!({
                "test_id": test_id, "reason": reason, "owner": owner,
                "opened": opened, "expires": expires, "invariant": invariant,
                "compensating_property": property, "reused_property": reused,
            });
            if *retired {
                let fields = entry.as_object_mut().expect("an entry is a table");
                fields.remove("expires");
                fields.insert("retired".into(), json!(true));
            }
            (Edit::Add(entry), test_id.clone())
        }
        FreezeAction::Renew {
            test_id,
            days,
            expires,
        } => {
            let index = position(test_id).ok_or_else(|| not_frozen(&ledger, test_id))?;
            let (opened, expires) = window(*days, expires)?;
            (
                Edit::Renew {
                    index,
                    opened,
                    expires,
                },
                test_id.clone(),
            )
        }
        FreezeAction::Remove { test_id } => {
            let index = position(test_id).ok_or_else(|| not_frozen(&ledger, test_id))?;
            (Edit::Remove(index), test_id.clone())
        }
    };

    let text = apply(&ledger, &edit)?;
    // Diagnostics about the edit show the would-be content: named as what it is.
    let edited = Ledger::parse(
        SourceFile::new(
            format!("{} (proposed edit, not written)", ledger.source.name),
            &ledger.source.path,
            text.clone(),
        ),
        ledger.format,
    )
    .map_err(|e| {
        GateError::new(
            &ledger.source.name,
            format!("the edit would not parse ({e}); nothing was written"),
        )
    })?;
    if edited.entries.len() + usize::from(matches!(edit, Edit::Remove(_)))
        != ledger.entries.len() + usize::from(matches!(edit, Edit::Add(_)))
    {
        return Err(GateError::new(
            &ledger.source.name,
            "the edit would lose entries; nothing was written",
        ));
    }
    if !matches!(edit, Edit::Remove(_)) {
        let paths = |list: &[std::path::PathBuf]| -> Vec<crate::inputs::InputPath> {
            list.iter()
                .map(|p| InputPath::from_cli(cwd, p, &gate.config.repo_root))
                .collect()
        };
        let collected = collection(cwd, &gate.config, args, paths)?;
        let unedited = Ledger::parse(ledger.source.clone(), ledger.format)?;
        let before = validate(&gate, unedited, collected.clone(), today, None)?;
        let mut report = validate(&gate, edited, collected, today, Some(&before))?;
        // A new freeze of a test the collection does not have freezes nothing: a misspelt
        // or deleted id (FZ204 is a warning for an old freeze, whose test went away).
        if matches!(edit, Edit::Add(_)) {
            for v in &mut report.violations {
                if v.code == "FZ204" && v.test_id.as_deref() == Some(test_id.as_str()) {
                    v.severity = crate::engine::policy::Severity::Error;
                }
            }
            recount(&mut report);
        }
        if report.failed() {
            print!("{}", human::render(&report, false));
            eprintln!("freezegate: {} was not changed", ledger.source.name);
            return Ok(EXIT_VIOLATIONS);
        }
    }
    rewrite_atomic(&ledger.source.path, &ledger.source.text, &text)?;
    let verb = match &edit {
        Edit::Add(entry) if entry.get("retired").is_some() => "retired",
        Edit::Add(_) => "froze",
        Edit::Renew { .. } => "renewed",
        Edit::Remove(_) => "removed the freeze of",
    };
    println!("{verb} {test_id} in {}", ledger.source.name);
    if matches!(edit, Edit::Add(_)) {
        // The deposit is drafted next: the brief hands its author what the gate needs.
        println!(
            "next: draft the deposit with `freezegate brief {}`",
            crate::commands::skips::shell_quote(&test_id)
        );
    }
    Ok(EXIT_PASS)
}

/// The collection the edit is checked against: `--collected`, `--run`, `--collect`, else
/// the records `run` in config names, else the last `gate/run.json`, else the collection of
/// `collect_command` (a mistyped id is refused whichever it is).
fn collection(
    cwd: &Path,
    config: &crate::config::Config,
    args: &FreezeArgs,
    paths: impl Fn(&[std::path::PathBuf]) -> Vec<InputPath>,
) -> Result<Option<crate::inputs::ids::IdSet>, GateError> {
    let records = |inputs: &[InputPath]| {
        crate::inputs::run_record::Runs::load(inputs).map(|runs| runs.map(|r| r.collected))
    };
    if !args.collected.is_empty() {
        return crate::inputs::read_merged(
            &paths(&args.collected),
            crate::inputs::ids::parse_collected,
        );
    }
    if !args.run.is_empty() {
        return records(&paths(&args.run));
    }
    let collect = || {
        let (source, _) =
            crate::inputs::tools::collect(&config.collect_command, &config.pytest_root)?;
        crate::inputs::merge([Ok(source)], crate::inputs::ids::parse_collected).map(Some)
    };
    if args.collect {
        return collect();
    }
    let last = crate::inputs::run_record::last_records(cwd, config);
    if last.is_empty() {
        eprintln!(
            "note: no run record ({}): the test ids are checked against the collection of `{}` (or pass --run RECORD, --collected FILE)",
            crate::inputs::run_record::LAST_RUN,
            config.collect_command.join(" ")
        );
        return collect();
    }
    let names: Vec<&str> = last.iter().map(|input| input.name.as_str()).collect();
    let runs = crate::inputs::run_record::Runs::load(&last)?;
    // A run of part of the suite (`pytest tests/test_props.py`) says nothing of the files
    // it did not collect: the ids of another file are checked against a collection now.
    let unseen: Vec<&str> = named(&args.action)
        .into_iter()
        .map(crate::inputs::ids::file_of)
        .filter(|file| runs.as_ref().is_some_and(|runs| !runs.saw(file)))
        .collect();
    if let Some(file) = unseen.first() {
        eprintln!(
            "note: {} did not run {file} (a run of part of the suite): the test ids are checked against the collection of `{}`",
            names.join(", "),
            config.collect_command.join(" ")
        );
        return collect();
    }
    eprintln!(
        "note: test ids checked against the collection of {}",
        names.join(", ")
    );
    if let Some(runs) = &runs {
        crate::commands::note_other_commits(
            runs,
            config,
            "a test added since is not in it (pass --collect to collect now)",
        );
    }
    Ok(runs.map(|r| r.collected))
}

/// The test ids an edit names: the test, and the properties of a new freeze.
fn named(action: &crate::cli::FreezeAction) -> Vec<&str> {
    use crate::cli::FreezeAction;
    match action {
        FreezeAction::Add {
            test_id, property, ..
        } => std::iter::once(test_id.as_str())
            .chain(property.iter().map(String::as_str))
            .collect(),
        FreezeAction::Renew { test_id, .. } => vec![test_id.as_str()],
        _ => Vec::new(),
    }
}

fn not_frozen(ledger: &Ledger, test_id: &str) -> GateError {
    GateError::new(&ledger.source.name, format!("{test_id} is not frozen"))
        .with_help("`freezegate skips --format lines` lists the frozen tests")
}

/// Runs every rule that needs nothing but the ledger (and the collection, when given)
/// on a ledger; with the report `before` the edit, keeps only what the edit brought
/// (a problem of the edited test, or of another entry the edit made wrong, such as a
/// freeze whose property the new entry freezes: FZ203).
fn validate(
    gate: &Gate,
    ledger: Ledger,
    collected: Option<crate::inputs::ids::IdSet>,
    today: Date,
    before: Option<&Report>,
) -> Result<Report, GateError> {
    let has_collection = collected.is_some();
    let answerable: Vec<String> = gate
        .pack
        .rules
        .iter()
        .filter(|rule| rule.policy != crate::engine::policy::CORE_POLICY)
        .filter(|rule| {
            rule.needs.as_ref().is_some_and(|needs| {
                needs.iter().all(|input| {
                    input == "collected" && has_collection
                        || crate::inputs::input_named(input)
                            .is_some_and(|i| i.presence == crate::inputs::Presence::Always)
                })
            })
        })
        .map(|rule| rule.code.clone())
        .collect();
    let selection = Selection::new(&gate.pack, &gate.config, &answerable, &[])?;
    let mut facts = Facts::of_ledger(ledger, today.0, gate.config.pytest_root_in_repo());
    facts.loaded.collected = collected.into();
    let (_, mut report) = crate::gate::judge(gate, &facts, &selection)?;
    report
        .violations
        .retain(|v| v.code != crate::engine::policy::INPUT_MISSING);
    if let Some(before) = before {
        let same = |a: &crate::report::Violation, b: &crate::report::Violation| {
            (&a.code, &a.test_id, &a.field, &a.message)
                == (&b.code, &b.test_id, &b.field, &b.message)
        };
        report
            .violations
            .retain(|v| !before.violations.iter().any(|b| same(v, b)));
    }
    recount(&mut report);
    Ok(report)
}

fn recount(report: &mut Report) {
    report.summary.errors = report
        .violations
        .iter()
        .filter(|v| v.severity == crate::engine::policy::Severity::Error)
        .count();
    report.summary.warnings = report.violations.len() - report.summary.errors;
}

enum Edit {
    Add(Json),
    Renew {
        index: usize,
        opened: String,
        expires: String,
    },
    Remove(usize),
}

/// The ledger text after the edit, in the ledger's own format.
fn apply(ledger: &Ledger, edit: &Edit) -> Result<String, GateError> {
    match ledger.format {
        Format::Json => {
            let mut doc: Json = serde_json::from_str(&ledger.source.text)
                .map_err(|e| GateError::new(&ledger.source.name, e.to_string()))?;
            edit_json(&mut doc, edit);
            Ok(serde_json::to_string_pretty(&doc).expect("JSON serializes") + "\n")
        }
        Format::Yaml => {
            if ledger.source.text.contains('#') {
                return Err(GateError::new(&ledger.source.name, "has comments, which rewriting YAML would lose; nothing was written")
                    .with_help("edit the YAML ledger by hand, or keep the ledger as JSON or TOML (comments kept) to use `freezegate freeze`"));
            }
            let mut doc: Json = serde_saphyr::from_str(&ledger.source.text)
                .map_err(|e| GateError::new(&ledger.source.name, e.to_string()))?;
            edit_json(&mut doc, edit);
            serde_saphyr::to_string(&doc)
                .map_err(|e| GateError::new(&ledger.source.name, e.to_string()))
        }
        Format::Toml => edit_toml(ledger, edit),
    }
}

fn edit_json(doc: &mut Json, edit: &Edit) {
    let freezes = doc["freezes"]
        .as_array_mut()
        .expect("a parsed ledger has a freezes list");
    match edit {
        Edit::Add(entry) => freezes.push(entry.clone()),
        Edit::Renew {
            index,
            opened,
            expires,
        } => {
            let entry: &mut JsonMap<String, Json> =
                freezes[*index].as_object_mut().expect("entries are tables");
            entry.insert("opened".into(), json!(opened));
            entry.insert("expires".into(), json!(expires));
        }
        Edit::Remove(index) => {
            freezes.remove(*index);
        }
    }
}

fn edit_toml(ledger: &Ledger, edit: &Edit) -> Result<String, GateError> {
    use toml_edit::{value, DocumentMut, Item, Table};
    let mut doc: DocumentMut = ledger
        .source
        .text
        .parse()
        .map_err(|e: toml_edit::TomlError| GateError::new(&ledger.source.name, e.to_string()))?;
    let date_value = |old: Option<&Item>, new: &str| -> Item {
        match old.and_then(Item::as_value) {
            Some(toml_edit::Value::Datetime(_)) => {
                value(new.parse::<toml_edit::Datetime>().expect("a valid date"))
            }
            _ => value(new),
        }
    };
    // `freezes = []` (what removing the last entry leaves) takes the first new entry as
    // a [[freezes]] table, as a hand-written ledger has them.
    if matches!(edit, Edit::Add(_))
        && doc
            .get("freezes")
            .and_then(Item::as_array)
            .is_some_and(|array| array.is_empty())
    {
        doc.remove("freezes");
        doc.insert(
            "freezes",
            Item::ArrayOfTables(toml_edit::ArrayOfTables::new()),
        );
    }
    let freezes = doc
        .get_mut("freezes")
        .ok_or_else(|| GateError::new(&ledger.source.name, "has no freezes"))?;
    match freezes {
        Item::ArrayOfTables(tables) => match edit {
            Edit::Add(entry) => {
                let mut table = Table::new();
                for (key, v) in entry.as_object().expect("entry is an object") {
                    table.insert(key, json_to_toml(v));
                }
                tables.push(table);
            }
            Edit::Renew {
                index,
                opened,
                expires,
            } => {
                let table = tables
                    .get_mut(*index)
                    .expect("index from the parsed ledger");
                let new_opened = date_value(table.get("opened"), opened);
                let new_expires = date_value(table.get("expires"), expires);
                table.insert("opened", new_opened);
                table.insert("expires", new_expires);
            }
            Edit::Remove(index) => {
                tables.remove(*index);
            }
        },
        Item::Value(toml_edit::Value::Array(array)) => match edit {
            Edit::Add(entry) => {
                let mut table = toml_edit::InlineTable::new();
                for (key, v) in entry.as_object().expect("entry is an object") {
                    if let Ok(v) = json_to_toml(v).into_value() {
                        table.insert(key, v);
                    }
                }
                array.push(table);
            }
            Edit::Renew {
                index,
                opened,
                expires,
            } => {
                let table = array
                    .get_mut(*index)
                    .and_then(toml_edit::Value::as_inline_table_mut)
                    .expect("index from the parsed ledger");
                table.insert("opened", opened.as_str().into());
                table.insert("expires", expires.as_str().into());
            }
            Edit::Remove(index) => {
                array.remove(*index);
            }
        },
        _ => {
            return Err(GateError::new(
                &ledger.source.name,
                "`freezes` is neither [[freezes]] tables nor an array",
            ))
        }
    }
    // An empty array of tables vanishes from the file, and a ledger without `freezes`
    // does not parse: leave `freezes = []`.
    if doc
        .get("freezes")
        .and_then(Item::as_array_of_tables)
        .is_some_and(|tables| tables.is_empty())
    {
        doc.remove("freezes");
        doc.insert("freezes", value(toml_edit::Array::new()));
    }
    Ok(doc.to_string())
}

fn json_to_toml(v: &Json) -> toml_edit::Item {
    match v {
        Json::String(s) => toml_edit::value(s.as_str()),
        Json::Bool(b) => toml_edit::value(*b),
        Json::Number(n) => toml_edit::value(n.as_i64().unwrap_or_default()),
        Json::Array(items) => {
            let mut array = toml_edit::Array::new();
            for item in items {
                if let Some(s) = item.as_str() {
                    array.push(s);
                }
            }
            toml_edit::value(array)
        }
        _ => toml_edit::Item::None,
    }
}
