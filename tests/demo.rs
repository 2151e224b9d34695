//! The shipped demo's recordings (`examples/pytest-demo/gate/recorded/`) are what the
//! plugin and `freezegate prove` write today: `record.sh` re-records them with this
//! tree's wheel, in the scratch history `scenario.sh` rebuilds, and they must match the
//! committed ones (durations aside). `tests/docs.rs` runs the README's replays of them.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use common::wheel::{describe, run};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn recorded() -> PathBuf {
    Path::new(ROOT).join("examples/pytest-demo/gate/recorded")
}

/// The run and proof records under `dir`, by path relative to it (the fallback flow's
/// artifacts, with their timings, are not compared).
fn records(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() && path.file_name().is_some_and(|n| n != "observed") {
            for file in fs::read_dir(&path).unwrap() {
                let file = file.unwrap().path();
                found.push(file.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    found.sort();
    found
}

/// A record without what differs from run to run: each mutant's duration.
fn normalized(path: &Path) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("duration_s");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut value: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    strip(&mut value);
    value
}

#[test]
fn the_demo_recordings_are_what_the_plugin_and_prove_write_today() {
    let python = common::project::python();
    let out_dir = tempfile::tempdir().unwrap();
    let out = run(
        "bash examples/pytest-demo/record.sh OUT",
        common::project::hermetic(
            Command::new("bash")
                .arg(Path::new(ROOT).join("examples/pytest-demo/record.sh"))
                .arg(out_dir.path())
                .env("FREEZEGATE_PYTHON", python),
        ),
    );
    assert!(out.status.success(), "{}", describe("record.sh", &out));
    let committed = records(&recorded());
    assert_eq!(
        committed,
        records(out_dir.path()),
        "record.sh writes other records than gate/recorded/ holds"
    );
    for (name, must) in [
        ("base/run.json", true),
        ("freeze/run.json", true),
        ("freeze/proof.json", true),
        ("inline-skip/run.json", true),
        ("inline-skip/proof.json", true),
        ("hollow-deposit/proof.json", true),
    ] {
        assert_eq!(committed.contains(&PathBuf::from(name)), must, "{name}");
    }
    for name in &committed {
        assert_eq!(
            normalized(&recorded().join(name)),
            normalized(&out_dir.path().join(name)),
            "examples/pytest-demo/gate/recorded/{} is not what the plugin and prove write \
             today: run `bash examples/pytest-demo/record.sh` and review the diff",
            name.display()
        );
    }
}
