//! `Ledger::parse` on arbitrary bytes as a Yaml ledger.
#![no_main]

mod common;

use freezegate::document::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::ledger(data, Format::Yaml));
