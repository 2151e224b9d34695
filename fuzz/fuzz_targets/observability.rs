//! Hypothesis observability `.jsonl` parsing (what `--samples .hypothesis/observed`
//! counts) on arbitrary bytes.
#![no_main]

mod common;

use freezegate::inputs::samples::parse_observability;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(source) = common::source(".hypothesis/observed/cases.jsonl", data) else {
        return;
    };
    match parse_observability(&source) {
        Ok(counts) => {
            let rows = source.text.lines().count();
            assert!(counts.values().all(|&n| n >= 1 && n <= rows));
        }
        Err(err) => common::render(&err),
    }
});
