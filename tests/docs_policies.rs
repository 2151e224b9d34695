//! docs/policies.md cannot drift: every `rhai` block runs (policies as org policies over a
//! fixture world, fragments inside one), the tutorial's files form a project whose
//! fixture suite passes as shown, and every binding and helper is documented.

mod common;

use std::path::Path;

use common::World;

const DOC: &str = include_str!("../docs/policies.md");

struct Block {
    lang: String,
    attrs: Vec<String>,
    line: usize,
    text: String,
}

impl Block {
    /// The block's `title="..."` (what the site shows above it): a file name, or
    /// `fragment`.
    fn title(&self) -> Option<&str> {
        self.attrs.iter().find_map(|a| {
            a.strip_prefix("title=\"")
                .and_then(|rest| rest.strip_suffix('"'))
        })
    }

    fn file(&self) -> Option<&str> {
        self.title().filter(|t| *t != "fragment")
    }

    fn is_fragment(&self) -> bool {
        self.title() == Some("fragment")
    }

    fn is_policy(&self) -> bool {
        self.text.contains("const RULES")
    }
}

/// Every fenced block of the page, with its info string split into language and attributes.
fn blocks() -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(Block, usize)> = None;
    for (i, line) in DOC.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        match (&mut open, trimmed.strip_prefix("```")) {
            (None, Some(info)) => {
                let mut words = info.split_whitespace().map(str::to_string);
                let lang = words.next().unwrap_or_default();
                let block = Block {
                    lang,
                    attrs: words.collect(),
                    line: i + 1,
                    text: String::new(),
                };
                open = Some((block, indent));
            }
            (Some(_), Some("")) => out.push(open.take().unwrap().0),
            (Some((block, indent)), _) => {
                block
                    .text
                    .push_str(line.get(*indent..).unwrap_or(line.trim_start()));
                block.text.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "an unclosed code block");
    out
}

fn rhai_blocks() -> Vec<Block> {
    blocks().into_iter().filter(|b| b.lang == "rhai").collect()
}

/// The modules (rhai blocks with a file name and no RULES), as (file name, text).
fn modules() -> Vec<(String, String)> {
    rhai_blocks()
        .into_iter()
        .filter(|b| b.file().is_some() && !b.is_policy())
        .map(|b| {
            let name = Path::new(b.file().unwrap()).file_name().unwrap();
            (name.to_string_lossy().into_owned(), b.text)
        })
        .collect()
}

/// Runs a script as an org policy over the passing fixture world (with an owners file).
fn run_policy(script: &str, line: usize) {
    let mut world = World::passing();
    world.config = "policies = [\"builtin\", \"org\"]\nowners_file = \"CODEOWNERS\"\n".into();
    world.files.push((
        "CODEOWNERS".into(),
        "* @acme/platform\n/tests/ @acme/qa\n".into(),
    ));
    world.files.extend(
        modules()
            .into_iter()
            .map(|(name, text)| (format!("org/{name}"), text)),
    );
    world
        .files
        .push(("org/doc_example.rhai".into(), script.to_string()));
    // Coverage too, so the examples that use it run for real.
    let frozen = format!("{}|run", common::FROZEN);
    let property = format!("{}|run", common::PROPERTY);
    let coverage = serde_json::json!({ "files": { "app/m.py": { "contexts": {
        "1": [""], "2": [frozen], "3": [frozen, property], "4": [property] } } } });
    world
        .files
        .push(("gate/coverage.json".into(), coverage.to_string()));
    world
        .extra_args
        .extend(["--coverage".into(), "gate/coverage.json".into()]);
    let dir = tempfile::tempdir().unwrap();
    let out = world.run_in(dir.path(), "json");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    assert!(
        matches!(code, Some(0) | Some(1)),
        "the rhai block at docs/policies.md:{line} does not run (exit {code:?}):\n{stderr}\n{script}"
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // FZ602/FZ605 run only with --run, FZ210-FZ214 with --proof, FZ603/FZ604 with the
    // base's collection, FZ304/FZ606 with the base's run, FZ501 under --trusted-ref, FZ610
    // with the base's files: these examples use none of them.
    assert!(
        report["summary"]["not_evaluated"]
            .as_array()
            .unwrap()
            .iter()
            .all(|code| {
                [
                    "FZ209", "FZ210", "FZ211", "FZ212", "FZ213", "FZ214", "FZ304", "FZ501",
                    "FZ602", "FZ603", "FZ604", "FZ605", "FZ606", "FZ607", "FZ608", "FZ609",
                    "FZ610",
                ]
                .contains(&code.as_str().unwrap())
            }),
        "docs/policies.md:{line} stopped for a missing input: {report}"
    );
}

#[test]
fn every_rhai_block_is_a_policy_a_fragment_or_a_module() {
    let all = rhai_blocks();
    assert!(all.len() >= 10, "only {} rhai blocks", all.len());
    for block in &all {
        let fragment = block.is_fragment();
        assert!(
            block.is_policy() || fragment || block.file().is_some(),
            "docs/policies.md:{}: a rhai block without RULES must be titled `title=\"fragment\"` or name its file (`title=\"org-policies/x.rhai\"`)",
            block.line
        );
        assert!(
            !(fragment && block.is_policy()),
            "docs/policies.md:{}: a fragment declares RULES",
            block.line
        );
    }
}

#[test]
fn every_policy_block_loads_and_runs() {
    let policies: Vec<Block> = rhai_blocks().into_iter().filter(Block::is_policy).collect();
    assert!(policies.len() >= 3);
    for block in policies {
        run_policy(&block.text, block.line);
    }
}

#[test]
fn every_fragment_runs_inside_a_policy() {
    let fragments: Vec<Block> = rhai_blocks()
        .into_iter()
        .filter(Block::is_fragment)
        .collect();
    assert!(fragments.len() >= 5);
    for block in fragments {
        let script = format!(
            "const RULES = #{{ DOC001: #{{ name: \"doc-example\", severity: \"warn\", summary: \"s\", help: \"h\" }} }};\n{}",
            block.text
        );
        run_policy(&script, block.line);
    }
}

#[test]
fn a_broken_fragment_would_be_noticed() {
    // The harness itself fails on a script error (so the checks above mean something).
    let result = std::panic::catch_unwind(|| {
        run_policy(
            "const RULES = #{ DOC001: #{ name: \"x\", severity: \"warn\", summary: \"s\", help: \"h\" } };\nno_such_function();\n",
            0,
        )
    });
    assert!(result.is_err());
}

/// The tutorial's files, written where their titles say.
fn tutorial_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<Block> = blocks()
        .into_iter()
        .filter(|b| b.file().is_some())
        .collect();
    assert!(files.len() >= 8, "the tutorial lost its files");
    for block in files {
        common::write(dir.path(), block.file().unwrap(), &block.text);
    }
    dir
}

#[test]
fn the_tutorial_suite_passes_as_shown() {
    let dir = tutorial_project();
    let out = common::freezegate(dir.path())
        .args(["test", "org-policies/tests"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = blocks()
        .into_iter()
        .find(|b| b.lang == "text" && b.text.starts_with("$ freezegate test org-policies/tests"))
        .expect("the tutorial shows the run");
    let expected: String = shown
        .text
        .lines()
        .skip(1)
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(stdout, expected, "the tutorial's output is stale");
}

#[test]
fn the_tutorials_near_miss_catches_the_off_by_one() {
    let dir = tutorial_project();
    let rule = dir.path().join("org-policies/invariant.rhai");
    let text = std::fs::read_to_string(&rule).unwrap();
    assert!(text.contains("n < min_words"));
    std::fs::write(&rule, text.replace("n < min_words", "n <= min_words")).unwrap();
    let out = common::freezegate(dir.path())
        .args(["test", "org-policies/tests"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("FAILED  org-policies/tests/exactly-four-words"),
        "{stdout}"
    );
}

#[test]
fn every_binding_and_helper_is_documented() {
    for input in freezegate::inputs::INPUTS.iter().map(|input| input.name) {
        assert!(
            DOC.contains(&format!("| `{input}` |")),
            "binding `{input}` is missing from the bindings table"
        );
    }
    for helper in [
        "date(",
        "glob_match(",
        "file_of(",
        "repo_file(",
        "is_node_id(",
        "is_blank(",
        "properties(",
        "owners.of(",
        "require(",
        "report(code, entry, field, message)",
        "samples.distinct(",
        "samples.session",
        "samples.has_properties",
        "results.outcome(",
        "coverage.has(",
        "coverage.lines(",
        "coverage.unique_lines(",
        "coverage.at_stake(",
        "coverage.covered(",
        "coverage.share(",
        "coverage.uncovered(",
        "coverage.tests",
        "coverage.shared_context(",
        "coverage.function_contexts",
        "samples.method(",
        "set.nearest(",
        "plural(",
        "join_or(",
        "note(code, message)",
        "print(",
        "debug(",
        "--trace",
        "--policies",
        "near_miss",
        "expect_exit",
    ] {
        assert!(
            DOC.contains(helper),
            "docs/policies.md does not mention {helper}"
        );
    }
}
