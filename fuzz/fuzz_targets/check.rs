//! The whole check in-process, as `freezegate check` runs it, on an arbitrary ledger
//! with small fixed facts; every report format is rendered. Errors are fine, panics
//! are not. The first byte picks the format: `y` YAML, `t` TOML, `j` (or anything
//! else, kept as part of the text) JSON.
#![no_main]

mod common;

use std::sync::OnceLock;

use freezegate::gate::{judge, Gate};
use freezegate::config::Config;
use freezegate::engine::selection::Selection;
use freezegate::inputs::ids::IdSet;
use freezegate::inputs::junit::Results;
use freezegate::inputs::ledger::Ledger;
use freezegate::inputs::samples::Samples;
use freezegate::document::Format;
use freezegate::inputs::Facts;
use freezegate::report;
use freezegate::source::SourceFile;
use libfuzzer_sys::fuzz_target;

const FROZEN: &str = "tests/test_a.py::test_frozen";
const PROPERTY: &str = "tests/props/test_p.py::test_prop";
const WEAK: &str = "tests/props/test_p.py::test_weak";
const OTHER: &str = "tests/test_a.py::test_other";

const CONFIG: &str = r#"
[params]
max_window_days = 14
min_distinct = 8

[[params.allow_inherited]]
test_id = "tests/test_a.py::test_allowed"
branch = "main"
approver = "sam"

[[params.allow_inherited]]
test_id = "tests/test_a.py::test_unused"
branch = "release/*"
approver = "sam"
"#;

struct World {
    gate: Gate,
    selection: Selection,
    results: Results,
}

// The gate is loaded once per process: one Rhai engine and compiled pack, as in a run.
fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let root = std::path::Path::new("/freezegate-fuzz");
        let source = SourceFile::new("freezegate.toml", root.join("freezegate.toml"), CONFIG);
        let config = Config::from_source(source, false, root).unwrap().unwrap();
        let gate = Gate::with_config(config).unwrap();
        let selection = Selection::new(&gate.pack, &gate.config, &[], &[]).unwrap();
        let junit = "<testsuites><testsuite name=\"pytest\">\
             <testcase classname=\"tests.props.test_p\" name=\"test_prop\"/>\
             <testcase classname=\"tests.props.test_p\" name=\"test_weak\"><failure message=\"x\"/></testcase>\
             <testcase classname=\"tests.test_a\" name=\"test_frozen\"><skipped message=\"frozen\"/></testcase>\
             <testcase classname=\"tests.test_a\" name=\"test_other\"/>\
             </testsuite></testsuites>";
        let results = Results::load(&[SourceFile::new("gate/junit.xml", "gate/junit.xml", junit)])
            .unwrap();
        World {
            gate,
            selection,
            results,
        }
    })
}

fn facts(ledger: Ledger, world: &World) -> Facts {
    let mut samples = Samples {
        has_properties: true,
        session: Some(3),
        ..Samples::default()
    };
    std::sync::Arc::make_mut(&mut samples.properties).insert(PROPERTY.into(), freezegate::inputs::samples::Count::given(12));
    std::sync::Arc::make_mut(&mut samples.properties).insert(WEAK.into(), freezegate::inputs::samples::Count::given(2));
    let mut facts = Facts::of_ledger(ledger, jiff::civil::date(2026, 11, 30), String::new());
    facts.collected = Some(IdSet::from_iter([FROZEN, PROPERTY, WEAK, OTHER])).into();
    facts.changed = Some(IdSet::from_iter(["tests/props/test_p.py", "gate/freeze_ledger.json"])).into();
    facts.samples = Some(samples).into();
    facts.applied_skips = Some(IdSet::from_iter([
        FROZEN,
        "tests/test_a.py::test_allowed",
        "tests/test_a.py::test_inherited",
    ]))
    .into();
    facts.results = Some(world.results.clone()).into();
    facts.target_branch = Some("main".into());
    facts
}

fuzz_target!(|data: &[u8]| {
    let (format, name, text) = match data.first() {
        Some(b'y') => (Format::Yaml, "gate/freeze_ledger.yaml", &data[1..]),
        Some(b't') => (Format::Toml, "gate/freeze_ledger.toml", &data[1..]),
        Some(b'j') => (Format::Json, "gate/freeze_ledger.json", &data[1..]),
        _ => (Format::Json, "gate/freeze_ledger.json", data),
    };
    let Some(source) = common::source(name, text) else {
        return;
    };
    let ledger = match Ledger::parse(source, format) {
        Ok(ledger) => ledger,
        Err(err) => return common::render(&err),
    };
    let world = world();
    let facts = facts(ledger, world);
    match judge(&world.gate, &facts, &world.selection) {
        Ok((_, report)) => {
            // Every place is shown in the human report as the JSON report gives it
            // (the snippet header, or the message when the snippet is dropped).
            let human = report::human::render_capped(&report, false, 0);
            for violation in &report.violations {
                if let Some((source, span)) = &violation.location {
                    common::assert_span(source, span);
                    assert_eq!(
                        Some(source.line_col(span.start)),
                        violation.line.zip(violation.column)
                    );
                    let place = format!("[{}]", violation.place());
                    assert!(human.contains(&place), "{place} missing from:\n{human}");
                }
            }
            for format in [
                report::Format::Human,
                report::Format::Json,
                report::Format::Sarif,
                report::Format::Github,
                report::Format::Junit,
                report::Format::Markdown,
            ] {
                assert!(!format.render(&report, false).is_empty());
            }
        }
        Err(err) => common::render(&err),
    }
});
