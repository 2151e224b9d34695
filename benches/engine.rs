//! The engine's parts, measured on generated data: parsing each input, compiling the
//! default pack, and evaluating it. `cargo bench` measures; `cargo test --all-targets`
//! runs each once. The whole-process comparison with hand-written Rust and Python is
//! `python3 bench/compare.py`.

use std::path::Path;

use freezegate::config::Config;
use freezegate::document::Format;
use freezegate::engine::selection::Selection;
use freezegate::gate::{judge, Gate};
use freezegate::inputs::ids::{self, IdSet, IdSetBuilder};
use freezegate::inputs::ledger::Ledger;
use freezegate::inputs::Facts;
use freezegate::source::SourceFile;

fn main() {
    divan::main();
}

const FREEZES: usize = 1_000;
const COLLECTED: usize = 100_000;

fn collected_text() -> String {
    let mut text = String::with_capacity(COLLECTED * 48);
    for i in 0..COLLECTED {
        text.push_str(&format!(
            "tests/pkg{}/test_mod{}.py::test_case_{i}\n",
            i % 97,
            i / 20
        ));
    }
    text.push_str(&format!("\n{COLLECTED} tests collected in 1.00s\n"));
    text
}

fn ledger_text() -> String {
    let freezes: Vec<serde_json::Value> = (0..FREEZES)
        .map(|i| {
            serde_json::json!({
                "test_id": format!("tests/pkg{}/test_mod{}.py::test_case_{}", (i * 37) % 97, (i * 37) / 20, i * 37),
                "reason": format!("upstream change TICKET-{i}"), "owner": format!("owner{}", i % 50),
                "opened": "2026-11-20", "expires": if i % 20 == 0 { "2026-11-25" } else { "2026-12-04" },
                "invariant": "the result never decreases",
                "compensating_property": format!("tests/props/test_prop{i}.py::test_property_{i}"),
                "reused_property": false,
            })
        })
        .collect();
    serde_json::json!({"schema": 1, "freezes": freezes}).to_string()
}

fn collected_set(text: String) -> IdSet {
    let source = SourceFile::new("collected.txt", "collected.txt", text);
    let ids = ids::parse_collected(&source).expect("valid collection");
    let mut builder = IdSetBuilder::default();
    builder.add(source, ids).expect("small input");
    builder.build()
}

#[divan::bench(sample_count = 10)]
fn parse_collected(bencher: divan::Bencher) {
    bencher
        .with_inputs(collected_text)
        .bench_values(collected_set);
}

#[divan::bench(sample_count = 10)]
fn parse_ledger(bencher: divan::Bencher) {
    bencher.with_inputs(ledger_text).bench_values(|text| {
        Ledger::parse(SourceFile::new("l.json", "l.json", text), Format::Json)
            .expect("valid ledger")
    });
}

#[divan::bench(sample_count = 10)]
fn compile_pack() -> Gate {
    Gate::with_config(Config::discover(Path::new("/"), None).expect("defaults"))
        .expect("the pack compiles")
}

#[divan::bench(sample_count = 10)]
fn evaluate_pack(bencher: divan::Bencher) {
    let gate = compile_pack();
    let selection = Selection::new(&gate.pack, &gate.config, &[], &[]).expect("rules");
    let collected = collected_set(collected_text());
    let ledger_source = ledger_text();
    bencher
        .with_inputs(|| {
            let ledger = Ledger::parse(
                SourceFile::new("l.json", "l.json", ledger_source.clone()),
                Format::Json,
            )
            .unwrap();
            let mut facts = Facts::of_ledger(ledger, "2026-11-30".parse().unwrap(), String::new());
            facts.loaded.collected = Some(collected.clone()).into();
            facts.loaded.changed = Some(
                (0..FREEZES)
                    .map(|i| format!("tests/props/test_prop{i}.py"))
                    .collect(),
            )
            .into();
            facts.loaded.samples = Some(freezegate::inputs::samples::Samples::default()).into();
            facts.loaded.applied_skips = Some(IdSet::default()).into();
            facts.target_branch = Some("main".into());
            facts.jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
            facts
        })
        .bench_refs(|facts| judge(&gate, facts, &selection).expect("evaluates"));
}

/// "Did you mean" on a million collected ids (bench/generate.py's large layout: 97
/// folders, 10,000 files in each, and 10,000 property files in one more): 500 misspelt
/// properties, in the folder, the file and the name, the index built by the first.
fn misspelt_on_a_million() -> (IdSet, Vec<String>) {
    let mut text = String::with_capacity(1_010_000 * 50);
    for i in 0..1_000_000 {
        text.push_str(&format!(
            "tests/pkg{}/test_mod{}.py::test_case_{i}\n",
            i % 97,
            i / 20
        ));
    }
    for i in 0..10_000 {
        text.push_str(&format!("tests/props/test_prop{i}.py::test_property_{i}\n"));
    }
    let misspelt = (0..500)
        .map(|i| {
            let right = format!("tests/props/test_prop{i}.py::test_property_{i}");
            match i % 3 {
                0 => right.replace("tests/props/", "tests/prosp/"),
                1 => right.replacen("test_prop", "test_porp", 1),
                _ => right.replace("test_property", "test_proprety"),
            }
        })
        .collect();
    (collected_set(text), misspelt)
}

#[divan::bench(sample_count = 5)]
fn nearest_500_misspelt_with_the_index_built(bencher: divan::Bencher) {
    bencher
        .with_inputs(misspelt_on_a_million)
        .bench_values(|(set, misspelt)| {
            for id in &misspelt {
                assert_eq!(set.nearest(id, 3).len(), 1, "{id}");
            }
            set
        });
}

#[divan::bench(sample_count = 5)]
fn nearest_500_misspelt_once_indexed(bencher: divan::Bencher) {
    let (set, misspelt) = misspelt_on_a_million();
    set.nearest(&misspelt[0], 3);
    bencher.bench(|| {
        for id in &misspelt {
            assert_eq!(set.nearest(id, 3).len(), 1, "{id}");
        }
    });
}

/// "Did you mean" in one file of 10,000 names (`test_property_N`): 500 searches of each
/// kind, 12 kept as the pack asks: a name misspelt, a test renamed (nothing near), a name
/// with a suffix added (its nearest five and six edits away), nothing alike. The file's
/// names are walked as a trie; docs/performance.md has the figures.
#[divan::bench(
    sample_count = 5,
    args = ["test_proprety_N", "test_renamed_entirely_N", "test_property_N_case", "xyz_N"]
)]
fn nearest_500_in_a_file_of_10000_names(bencher: divan::Bencher, asked: &str) {
    bencher
        .with_inputs(|| {
            let file = "tests/props/test_props.py";
            let set: IdSet = (0..10_000)
                .map(|i| format!("{file}::test_property_{i}"))
                .collect();
            // The index and the file's walk are built by the first search.
            set.nearest(&format!("{file}::test_proprety_1"), 12);
            let asked: Vec<String> = (0..500)
                .map(|i| format!("{file}::{}", asked.replace('N', &(i * 17).to_string())))
                .collect();
            (set, asked)
        })
        .bench_values(|(set, asked)| {
            for id in &asked {
                set.nearest(id, 12);
            }
            set
        });
}

/// A test file of 200 tests (about 1,400 lines): the weakened-test pre-check (FZ610)
/// parses it at base and in the patch and compares every test. Its target is 5 ms per
/// changed test file.
fn test_file_pair() -> (String, String) {
    let mut base = String::from("import pytest\n\nfrom shop.cart import Cart\n\n\ndef check_total(cart, n):\n    assert cart.total() == n\n");
    for i in 0..200 {
        base.push_str(&format!(
            "\n\n@pytest.mark.parametrize(\"n\", [1, 2, 3])\ndef test_case_{i}(n):\n    cart = Cart([n] * {i})\n    assert cart.count() == {i}\n    check_total(cart, n * {i})\n    with pytest.raises(KeyError):\n        cart.remove('missing')\n"
        ));
    }
    let head = base.replacen("    assert cart.count() == 7\n", "    assert True\n", 1);
    (base, head)
}

#[divan::bench(sample_count = 20)]
fn weakened_test_file_of_200_tests(bencher: divan::Bencher) {
    bencher
        .with_inputs(test_file_pair)
        .bench_values(|(base, head)| {
            let compared =
                freezegate::inputs::weakened::compare("tests/test_cart.py", &base, &head)
                    .expect("both sides parse");
            assert_eq!(compared.findings.len(), 1);
            compared
        });
}
