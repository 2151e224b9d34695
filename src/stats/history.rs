//! The run history: `check --history PATH` appends one JSON line per run, `stats
//! --history PATH` reads them back.
//!
//! The file is append-only. Each record is one line of JSON written with a single
//! `write_all` on a file opened with `O_APPEND`, then `fsync`ed: existing lines are never
//! rewritten, and a crash can at worst leave the *last* line torn (a prefix of a record).
//! The next append starts with a newline when the file does not end with one, so the torn
//! fragment stays on a line of its own and the new record stays parseable. Readers skip a
//! torn line (a line that is an unfinished JSON document) with a warning; any other line
//! that is not a version-1 record is an input error naming the file and line.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::GateError;
use crate::report::Report;
use crate::source::SourceFile;

/// The record format's version; a reader refuses other versions rather than guess.
pub const VERSION: u32 = 1;

/// One `check` run, as one line of the history file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Always 1.
    pub version: u32,
    /// When the run ended, RFC 3339 in UTC (`2026-11-30T09:12:44Z`). `stats --since`
    /// compares its date.
    pub time: String,
    /// The date the rules compared against (`--today`, else the UTC date).
    pub today: String,
    /// `git rev-parse HEAD` in the repository, when known.
    pub commit: Option<String>,
    /// The branch the patch targets (`--target-branch`, else git's current branch).
    pub target_branch: Option<String>,
    /// Whether the run failed the gate (exit 1).
    pub failed: bool,
    pub errors: usize,
    pub warnings: usize,
    /// Freezes in the ledger.
    pub freezes: usize,
    /// Violations per enabled rule code (0 for a rule that ran and found nothing).
    pub rules: BTreeMap<String, usize>,
    /// The skips FZ401 refused: applied but not derived from the ledger nor allowed.
    pub refused_inherited: Vec<String>,
    /// Rules that could not run for a missing input.
    #[serde(default)]
    pub not_evaluated: Vec<String>,
    /// The skips outside the ledger FZ601 refused.
    #[serde(default)]
    pub unledgered: Vec<String>,
    /// How many tests the run collected, when the collection was given.
    #[serde(default)]
    pub collected: Option<usize>,
}

/// The two rules whose refusals a record keeps by test id (one rule each, not a
/// category: the stats count exactly these refusals).
const INHERITED_SKIP: &str = "FZ401";
const UNLEDGERED_SKIP: &str = "FZ601";

impl Record {
    pub fn of_run(
        report: &Report,
        today: jiff::civil::Date,
        commit: Option<String>,
        target_branch: Option<String>,
        failed: bool,
    ) -> Record {
        let ids_of = |code: &str| {
            let mut ids: Vec<String> = Vec::new();
            for v in report.violations.iter().filter(|v| v.code == code) {
                if let Some(id) = &v.test_id {
                    if !ids.contains(id) {
                        ids.push(id.clone());
                    }
                }
            }
            ids
        };
        let refused = ids_of(INHERITED_SKIP);
        Record {
            version: VERSION,
            time: jiff::Timestamp::now()
                .round(jiff::Unit::Second)
                .unwrap_or_else(|_| jiff::Timestamp::now())
                .to_string(),
            today: today.to_string(),
            commit,
            target_branch,
            failed,
            errors: report.summary.errors,
            warnings: report.summary.warnings,
            freezes: report.summary.freezes,
            // A rule that did not run has no count: 0 would read as passed.
            rules: report
                .rules
                .iter()
                .filter(|r| r.evaluated)
                .map(|r| (r.code.clone(), r.violations))
                .collect(),
            refused_inherited: refused,
            not_evaluated: report.summary.not_evaluated.clone(),
            unledgered: ids_of(UNLEDGERED_SKIP),
            collected: report.collected,
        }
    }

    /// The UTC date of `time`.
    pub fn date(&self) -> Option<jiff::civil::Date> {
        let ts: jiff::Timestamp = self.time.parse().ok()?;
        Some(ts.to_zoned_datetime(jiff::tz::TimeZone::UTC).date())
    }
}

/// Appends one record as one line (see the module docs for why this never loses or tears
/// an existing line).
pub fn append(path: &Path, name: &str, record: &Record) -> Result<(), GateError> {
    append_with(path, name, record, |file, bytes| file.write_all(bytes))
}

/// [`append`] with the write itself supplied (tests simulate a crash part-way).
pub fn append_with(
    path: &Path,
    name: &str,
    record: &Record,
    write: impl FnOnce(&mut std::fs::File, &[u8]) -> std::io::Result<()>,
) -> Result<(), GateError> {
    let failed = |what: &str, e: std::io::Error| {
        GateError::new(name, format!("the run was not recorded: {what}: {e}"))
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| failed("cannot create its directory", e))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| failed("cannot open it for appending", e))?;
    let len = file
        .metadata()
        .map_err(|e| failed("cannot read it", e))?
        .len();
    let mut line = Vec::with_capacity(512);
    if len > 0 {
        let mut last = [0u8; 1];
        file.seek(SeekFrom::End(-1))
            .and_then(|_| file.read_exact(&mut last))
            .map_err(|e| failed("cannot read it", e))?;
        if last[0] != b'\n' {
            // A torn last line from an interrupted run: keep it, on a line of its own.
            line.push(b'\n');
        }
    }
    serde_json::to_writer(&mut line, record)
        .map_err(|e| failed("cannot encode the record", e.into()))?;
    line.push(b'\n');
    // O_APPEND: the write lands at the end whatever the position, and in one call.
    write(&mut file, &line).map_err(|e| failed("the write failed", e))?;
    file.sync_all().map_err(|e| failed("fsync failed", e))?;
    Ok(())
}

/// A history file as read back: records with their 1-based line numbers.
#[derive(Debug, Clone, Default)]
pub struct History {
    pub records: Vec<(usize, Record)>,
    /// Lines holding an unfinished record (an interrupted append), skipped.
    pub torn_lines: Vec<usize>,
}

/// Reads a history file. A line that is not a version-1 record is an error naming the
/// file and line (exit 2); a torn line is skipped and listed in `torn_lines`.
pub fn load(path: &Path, name: &str) -> Result<History, GateError> {
    let bytes = std::fs::read(path).map_err(|e| GateError::io(name, e))?;
    parse(&bytes, path, name)
}

pub fn parse(bytes: &[u8], path: &Path, name: &str) -> Result<History, GateError> {
    // Diagnostics point into a lossy copy; only a broken line differs from the bytes.
    let source = SourceFile::new(name, path, String::from_utf8_lossy(bytes).into_owned());
    let mut history = History::default();
    let mut offset = 0;
    for (index, raw) in bytes.split(|b| *b == b'\n').enumerate() {
        let number = index + 1;
        let shown_len = String::from_utf8_lossy(raw).len();
        let span = offset..offset + shown_len;
        offset += shown_len + 1;
        let bad = |message: String, label: &str| {
            GateError::new(name, format!("line {number}: {message}"))
                .at(&source, span.clone(), label)
                .with_help("each line of a history file is one record written by `freezegate check --history`; remove or fix this line")
        };
        let text = match std::str::from_utf8(raw) {
            Ok(text) => text,
            // A record cut in the middle of a character is torn, not corrupt.
            Err(e) if e.error_len().is_none() => {
                history.torn_lines.push(number);
                continue;
            }
            Err(_) => return Err(bad("is not valid UTF-8".into(), "here")),
        };
        if text.trim().is_empty() {
            continue;
        }
        let record: Record = match serde_json::from_str(text) {
            Ok(record) => record,
            Err(e) if e.is_eof() => {
                history.torn_lines.push(number);
                continue;
            }
            Err(e) => return Err(bad(format!("is not a history record: {e}"), "this line")),
        };
        if record.version != VERSION {
            return Err(bad(
                format!(
                    "has record version {}; this freezegate reads version {VERSION}",
                    record.version
                ),
                "this line",
            ));
        }
        if record.date().is_none() {
            return Err(bad(
                format!(
                    "`time` {:?} is not an RFC 3339 timestamp such as 2026-11-30T09:12:44Z",
                    record.time
                ),
                "this line",
            ));
        }
        history.records.push((number, record));
    }
    Ok(history)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(time: &str, refused: &[&str]) -> Record {
        Record {
            version: VERSION,
            time: time.into(),
            today: "2026-11-30".into(),
            commit: None,
            target_branch: Some("main".into()),
            failed: !refused.is_empty(),
            errors: refused.len(),
            warnings: 0,
            freezes: 1,
            rules: [(INHERITED_SKIP.to_string(), refused.len())]
                .into_iter()
                .collect(),
            refused_inherited: refused.iter().map(|s| s.to_string()).collect(),
            not_evaluated: Vec::new(),
            unledgered: Vec::new(),
            collected: None,
        }
    }

    #[test]
    fn an_interrupted_append_keeps_every_earlier_line_and_the_next_one_parses() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gate/history.jsonl");
        append(&path, "history", &record("2026-11-28T10:00:00Z", &[])).unwrap();
        append(
            &path,
            "history",
            &record("2026-11-29T10:00:00Z", &["t.py::a"]),
        )
        .unwrap();
        let before = std::fs::read(&path).unwrap();

        // The process dies half-way through writing the third record.
        let err = append_with(
            &path,
            "history",
            &record("2026-11-30T10:00:00Z", &["t.py::b"]),
            |file, bytes| {
                file.write_all(&bytes[..bytes.len() / 2])?;
                Err(std::io::Error::other("killed"))
            },
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("the run was not recorded"),
            "{err}"
        );
        let torn = std::fs::read(&path).unwrap();
        assert!(torn.starts_with(&before), "earlier lines are untouched");
        assert!(!torn.ends_with(b"\n"));

        append(
            &path,
            "history",
            &record("2026-11-30T11:00:00Z", &["t.py::c"]),
        )
        .unwrap();
        let after = std::fs::read(&path).unwrap();
        assert!(after.starts_with(&torn), "the file only grows");
        let history = load(&path, "history").unwrap();
        assert_eq!(history.torn_lines, vec![3]);
        let lines: Vec<usize> = history.records.iter().map(|(n, _)| *n).collect();
        assert_eq!(lines, vec![1, 2, 4]);
        assert_eq!(history.records[2].1.refused_inherited, vec!["t.py::c"]);
    }

    #[test]
    fn a_record_cut_inside_a_character_is_torn_not_corrupt() {
        let mut bytes = serde_json::to_vec(&record("2026-11-28T10:00:00Z", &["t.py::é"])).unwrap();
        bytes.push(b'\n');
        let full = serde_json::to_vec(&record("2026-11-29T10:00:00Z", &["t.py::é"])).unwrap();
        let cut = full.iter().position(|b| *b == 0xC3).unwrap() + 1;
        bytes.extend(&full[..cut]);
        let history = parse(&bytes, Path::new("h"), "h").unwrap();
        assert_eq!(history.records.len(), 1);
        assert_eq!(history.torn_lines, vec![2]);
    }

    #[test]
    fn a_bad_line_names_the_file_and_line() {
        let mut text = serde_json::to_string(&record("2026-11-28T10:00:00Z", &[])).unwrap();
        text.push_str("\n{\"version\": 1, \"time\": 3}\n");
        let err = parse(text.as_bytes(), Path::new("h"), "gate/history.jsonl").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("gate/history.jsonl:2:1: line 2: is not a history record"),
            "{err}"
        );
        let other = serde_json::to_string(&Record {
            version: 2,
            ..record("2026-11-28T10:00:00Z", &[])
        })
        .unwrap();
        let err = parse(other.as_bytes(), Path::new("h"), "h").unwrap_err();
        assert!(err.to_string().contains("record version 2"), "{err}");
        let err = parse(
            serde_json::to_string(&record("yesterday", &[]))
                .unwrap()
                .as_bytes(),
            Path::new("h"),
            "h",
        )
        .unwrap_err();
        assert!(err.to_string().contains("RFC 3339"), "{err}");
    }
}
