//! `--junit` reports: `Results::load` on arbitrary bytes, then outcome look-ups (and
//! the classname/name mapping of node ids) for fixed ids and for ids taken from the input.
#![no_main]

mod common;

use freezegate::inputs::junit::{junit_address, Results};
use libfuzzer_sys::fuzz_target;

const IDS: [&str; 4] = [
    "tests/test_a.py::test_frozen",
    "tests/props/test_p.py::TestP::test_prop[a::b]",
    "test_x.py::t[",
    "",
];

fuzz_target!(|data: &[u8]| {
    let Some(source) = common::source("gate/junit.xml", data) else {
        return;
    };
    // Any text is also a node id to map: the first line, and each `name="..."` value.
    let mut ids: Vec<&str> = IDS.to_vec();
    ids.push(source.text.lines().next().unwrap_or(""));
    ids.extend(
        source
            .text
            .split("name=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next()),
    );
    for id in &ids {
        let _ = junit_address(id);
    }
    match Results::load(std::slice::from_ref(&source)) {
        Ok(results) => {
            for id in &ids {
                let _ = results.outcome(id);
            }
            let _ = results.len();
        }
        Err(err) => common::render(&err),
    }
});
