//! The documentation site cannot drift: its page per rule is what `freezegate rules --pages`
//! writes from the pack and the fixture cases, and the shell blocks that the getting-started
//! and CI pages mark runnable (`<!-- runnable -->` on the line before the block) run as
//! shown: on a copy of the demo project at its base commit, with this tree's wheel
//! installed, or (`<!-- runnable: repository -->`) from the repository's root.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::text;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// What the drift test tells to run (the pages' own generated note names it too).
const REGENERATE: &str = "cargo run -- rules --pages docs/rules";

fn root() -> &'static Path {
    Path::new(ROOT)
}

/// `freezegate rules --pages DIR` from the repository root; the pages it wrote, by name.
fn generate(dir: &Path) -> Vec<(String, String)> {
    let out = common::freezegate(root())
        .args(["rules", "--pages"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "rules --pages: {:?}\n{}",
        out.status.code(),
        text(&out.stderr)
    );
    pages_in(dir)
}

fn pages_in(dir: &Path) -> Vec<(String, String)> {
    let mut pages: Vec<(String, String)> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, fs::read_to_string(&path).unwrap())
        })
        .collect();
    pages.sort();
    pages
}

/// Every rule of the pack, as `rules --format json` lists it.
fn rules() -> Vec<serde_json::Value> {
    let out = common::freezegate(root())
        .args(["rules", "--format", "json"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_committed_rule_pages_are_what_the_generator_writes() {
    let fresh = tempfile::tempdir().unwrap();
    let generated = generate(fresh.path());
    let committed = pages_in(&root().join("docs/rules"));
    let names = |pages: &[(String, String)]| -> Vec<String> {
        pages.iter().map(|(name, _)| name.clone()).collect()
    };
    assert_eq!(
        names(&committed),
        names(&generated),
        "docs/rules/ does not hold one page per rule and index.md: run `{REGENERATE}`"
    );
    for ((name, committed), (_, generated)) in committed.iter().zip(&generated) {
        assert!(
            committed == generated,
            "docs/rules/{name} is stale: run `{REGENERATE}` and commit the pages"
        );
    }
}

#[test]
fn every_rule_has_a_page_with_its_help_and_an_example_of_its_own_output() {
    let dir = tempfile::tempdir().unwrap();
    let pages = generate(dir.path());
    let page = |code: &str| -> &str {
        &pages
            .iter()
            .find(|(name, _)| *name == format!("{code}.md"))
            .unwrap_or_else(|| panic!("no page for {code}"))
            .1
    };
    let index = page("index");
    let mut with_example = 0;
    for rule in rules() {
        let code = rule["code"].as_str().unwrap();
        let name = rule["name"].as_str().unwrap();
        let text = page(code);
        assert!(text.starts_with(&format!("# {code} {name}\n")), "{text}");
        assert!(
            text.contains(&format!(
                "| Family | `{}`",
                rule["category"].as_str().unwrap()
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "| Default severity | {} |",
                rule["default_severity"].as_str().unwrap()
            )),
            "{text}"
        );
        assert!(
            text.contains(rule["summary"].as_str().unwrap()),
            "{code}: {text}"
        );
        assert!(
            index.contains(&format!("| [{code}]({code}.md) | {name} |")),
            "the index links {code}"
        );
        // The example is the rule's own diagnostic, as `check` prints it.
        if let Some(example) = text.split("## Example\n").nth(1) {
            if let Some(block) = example.split("```text\n").nth(1) {
                let first = block.lines().next().unwrap_or_default();
                assert!(
                    first.contains(&format!(" {code} {name}: ")),
                    "{code}'s example is another rule's output: {first}"
                );
                with_example += 1;
            }
        }
    }
    // Every rule a fixture case expects has an example; the core's FZ501 and FZ503 may not.
    assert!(
        with_example + 2 >= rules().len(),
        "only {with_example} pages have an example"
    );
}

#[test]
fn explain_points_at_the_rule_page() {
    let out = common::freezegate(root())
        .args(["explain", "FZ103"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("https://freezegate.github.io/freezegate/rules/FZ103/"),
        "{stdout}"
    );
    // The page it names is one the site builds: docs/rules/FZ103.md.
    assert!(root().join("docs/rules/FZ103.md").is_file());
}

/// A shell block the page marks runnable, and where it runs.
struct Runnable {
    line: usize,
    in_repository: bool,
    text: String,
}

fn runnable_blocks(page: &str) -> Vec<Runnable> {
    let doc = fs::read_to_string(root().join(page)).unwrap();
    let lines: Vec<&str> = doc.lines().collect();
    let mut blocks = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let in_repository = match line.trim() {
            "<!-- runnable -->" => false,
            "<!-- runnable: repository -->" => true,
            _ => continue,
        };
        assert_eq!(
            lines.get(i + 1).map(|l| l.trim()),
            Some("```sh"),
            "{page}:{}: a runnable mark stands right before a ```sh block",
            i + 1
        );
        let body: Vec<&str> = lines[i + 2..]
            .iter()
            .take_while(|l| l.trim() != "```")
            .copied()
            .collect();
        blocks.push(Runnable {
            line: i + 3,
            in_repository,
            text: body.join("\n") + "\n",
        });
    }
    blocks
}

/// `bash -c BLOCK` in `dir`, hermetic, with `path` first on PATH; it must succeed.
fn run_block(page: &str, block: &Runnable, dir: &Path, path: &Path) {
    let out = common::project::hermetic(&mut Command::new("bash"))
        .args(["-euo", "pipefail", "-c", &block.text])
        .env("PATH", prepend_path(path))
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{page}:{}: the block fails ({:?}):\n{}\n--- stdout\n{}\n--- stderr\n{}",
        block.line,
        out.status.code(),
        block.text,
        text(&out.stdout),
        text(&out.stderr)
    );
}

fn prepend_path(dir: &Path) -> std::ffi::OsString {
    let mut paths = vec![dir.to_path_buf()];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).unwrap()
}

/// The demo project as it was at its base commit (billing/, tests/, pyproject.toml: no
/// freezegate file yet), in a new repository with one commit, as a suite before adoption.
fn demo_at_base(work: &Path) -> PathBuf {
    let scenario = work.join("scenario");
    let out = common::hermetic(&mut Command::new("bash"))
        .arg(root().join("examples/pytest-demo/scenario.sh"))
        .arg(&scenario)
        .output()
        .unwrap();
    assert!(out.status.success(), "scenario.sh: {}", text(&out.stderr));
    common::git(&scenario, &["checkout", "-q", "base"]);
    let demo = scenario.join("examples/pytest-demo");
    let project = work.join("project");
    fs::create_dir(&project).unwrap();
    for name in ["billing", "tests", "pyproject.toml"] {
        let out = Command::new("cp")
            .arg("-R")
            .arg(demo.join(name))
            .arg(&project)
            .output()
            .unwrap();
        assert!(out.status.success(), "cp {name}: {}", text(&out.stderr));
    }
    common::write(&project, ".gitignore", ".hypothesis/\n__pycache__/\n");
    common::git(&project, &["init", "-q", "-b", "main"]);
    common::git(&project, &["add", "-A"]);
    common::git(
        &project,
        &["commit", "-q", "-m", "the suite, before the gate"],
    );
    project
}

#[test]
fn the_getting_started_and_ci_blocks_run_as_shown_on_the_demo() {
    let getting_started = runnable_blocks("docs/getting-started.md");
    let ci = runnable_blocks("docs/ci.md");
    assert!(
        getting_started.iter().any(|b| !b.in_repository) && !ci.is_empty(),
        "the adoption block and the CI block are marked runnable"
    );

    // The demo replays, from the repository's root: each line as shown, ending as its
    // comment says (a rule code there is what the line must report).
    for block in getting_started.iter().filter(|b| b.in_repository) {
        for line in block.text.lines().filter(|l| !l.trim().is_empty()) {
            let (command, comment) = line.split_once('#').unwrap_or((line, ""));
            let out = common::hermetic(&mut Command::new("bash"))
                .args(["-c", command])
                .env("FREEZEGATE", env!("CARGO_BIN_EXE_freezegate"))
                .current_dir(root())
                .output()
                .unwrap();
            let stdout = text(&out.stdout);
            match comment
                .split_whitespace()
                .next()
                .filter(|w| w.starts_with("FZ"))
            {
                Some(code) => {
                    let code = code.trim_end_matches(':');
                    assert_eq!(out.status.code(), Some(1), "{line}:\n{stdout}");
                    assert!(stdout.contains(&format!("{code} ")), "{line}:\n{stdout}");
                }
                None => assert_eq!(out.status.code(), Some(0), "{line}:\n{stdout}"),
            }
        }
    }

    // Adoption, then CI's two runs, on the demo's suite as it was before the gate, with
    // this tree's wheel (the binary and the plugin) in the environment pytest runs in.
    let python = common::project::python();
    let bin = python.parent().unwrap();
    let work = tempfile::tempdir().unwrap();
    let project = demo_at_base(work.path());
    for block in getting_started.iter().filter(|b| !b.in_repository) {
        run_block("docs/getting-started.md", block, &project, bin);
    }
    for name in [
        "freezegate.toml",
        "gate/run.json",
        "gate/skip_baseline.json",
    ] {
        assert!(project.join(name).is_file(), "adoption wrote {name}");
    }
    assert_eq!(
        common::git(&project, &["status", "--porcelain"]),
        "",
        "adoption ends committed (the records ignored)"
    );
    // `origin/main`: the commit the suite was adopted at, as a CI checkout has it.
    let origin = project.display().to_string();
    common::git(&project, &["remote", "add", "origin", &origin]);
    common::git(&project, &["fetch", "-q", "origin"]);
    for block in &ci {
        run_block("docs/ci.md", block, &project, bin);
    }
    let base_run: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(project.join("gate/base-run.json")).unwrap())
            .unwrap();
    assert_eq!(
        base_run["commit"].as_str(),
        Some(common::git(&project, &["rev-parse", "HEAD"]).as_str())
    );
    assert!(project.join("gate/run.json").is_file());
}
