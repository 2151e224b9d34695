//! The id-list parsers (`--collected`, `--changed`, `--applied-skips`) on arbitrary
//! bytes, and the id set built from what they return.
#![no_main]

mod common;

use freezegate::error::GateError;
use freezegate::inputs::ids::{self, IdSetBuilder, Ids};
use freezegate::source::Source;
use libfuzzer_sys::fuzz_target;

fn build(source: &Source, parse: fn(&Source) -> Result<Ids, GateError>) {
    match parse(source) {
        Ok(parsed) => {
            let mut builder = IdSetBuilder::default();
            if let Err(err) = builder.add(source.clone(), parsed) {
                common::render(&err);
                return;
            }
            let set = builder.build();
            let ids: Vec<String> = set.iter().map(str::to_string).collect();
            assert_eq!(ids.len(), set.len());
            for (i, id) in ids.iter().enumerate() {
                assert!(set.contains(id), "{id:?} iterated but not contained");
                assert_eq!(set.get(i), Some(id.as_str()));
            }
            let unique: std::collections::HashSet<&String> = ids.iter().collect();
            assert_eq!(unique.len(), ids.len(), "an id set holds each id once");
        }
        Err(err) => common::render(&err),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(source) = common::source("gate/collected.txt", data) else {
        return;
    };
    build(&source, ids::parse_collected);
    build(&source, ids::parse_changed);
    build(&source, ids::parse_id_list);
});
