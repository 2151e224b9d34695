//! What ships beside the binary, checked the way users and GitHub meet it:
//!
//! - every workflow (`.github/workflows/`, `examples/ci/`, the README's snippet) and
//!   `action.yml` conform to GitHub's schemas (check-jsonschema's vendored SchemaStore
//!   schemas) and zizmor finds nothing in them, offline; both linters refuse a broken copy;
//! - the release workflow builds, smoke-tests and publishes every platform the README
//!   promises;
//! - one version: Cargo.toml's, in Cargo.lock, pyproject.toml (dynamic), the README's pins,
//!   the action's default, the examples and the CHANGELOG's latest release; the check
//!   names the file that disagrees.
//!
//! Needs the venv of `.ci/python-env`; the tests install `.ci/requirements-lint.txt`
//! (check-jsonschema, zizmor) into it. Without it they fail saying so; they never skip.

mod common;

use common::lint::{check_schema, zizmor, Schema};

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn root() -> &'static Path {
    Path::new(ROOT)
}

fn yaml_file(path: &Path) -> Value {
    let source = fs::read_to_string(path).unwrap();
    serde_saphyr::from_str::<Value>(&source)
        .unwrap_or_else(|e| panic!("{} is not valid YAML: {e}", path.display()))
}

/// The `*.yml` / `*.yaml` files of a directory of the repository.
fn yaml_files_in(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    files.sort();
    files
}

/// The README's GitHub workflow (its ```yaml block with `on:`), as a file.
fn readme_workflow(dir: &Path) -> PathBuf {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let block = readme
        .split("```yaml\n")
        .skip(1)
        .map(|rest| &rest[..rest.find("```").expect("a closed code block")])
        .find(|block| block.contains("\non:") && block.contains("freezegate/freezegate@v"))
        .expect("README.md has a ```yaml workflow block using the action");
    let path = dir.join("readme-workflow.yml");
    fs::write(&path, block).unwrap();
    path
}

/// Every workflow users or GitHub run: the project's own, the examples, the README's.
fn workflows(temp: &Path) -> Vec<PathBuf> {
    let mut files = yaml_files_in(".github/workflows");
    assert!(
        files.len() >= 2,
        "ci.yml and release.yml are workflows: {files:?}"
    );
    files.extend(yaml_files_in("examples/ci"));
    files.push(readme_workflow(temp));
    files
}

fn actions() -> Vec<PathBuf> {
    vec![root().join("action.yml")]
}

// ---------------------------------------------------------------------------------------
// Schemas and zizmor.

#[test]
fn workflows_and_the_action_conform_to_githubs_schemas() {
    let temp = tempfile::tempdir().unwrap();
    if let Err(report) = check_schema(Schema::Workflow, &workflows(temp.path())) {
        panic!("{report}");
    }
    if let Err(report) = check_schema(Schema::Action, &actions()) {
        panic!("{report}");
    }
}

#[test]
fn zizmor_finds_nothing_in_the_workflows_and_the_action() {
    let temp = tempfile::tempdir().unwrap();
    let mut files = workflows(temp.path());
    files.extend(actions());
    if let Err(findings) = zizmor(&files) {
        // The usual fixes: an action pinned by commit (`@<sha> # vX.Y.Z`), `persist-credentials:
        // false` on checkout, `${{ }}` through `env:` not inside `run:`, no $GITHUB_ENV or
        // $GITHUB_PATH write, `permissions: {}` at the top and per job only what it uses.
        panic!("{findings}");
    }
}

/// A copy of `file` with `from` replaced by `to` (which must change it).
fn altered(dir: &Path, file: &str, from: &str, to: &str) -> PathBuf {
    let text = fs::read_to_string(root().join(file)).unwrap();
    assert!(text.contains(from), "{file} has no `{from}`");
    let path = dir.join(Path::new(file).file_name().unwrap());
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
    path
}

#[test]
fn schema_check_refuses_a_broken_workflow_and_action() {
    let temp = tempfile::tempdir().unwrap();
    let workflow = altered(
        temp.path(),
        ".github/workflows/ci.yml",
        "    runs-on: ubuntu-24.04\n",
        "    runs-on: ubuntu-24.04\n    run-on: typo\n",
    );
    let report = check_schema(Schema::Workflow, &[workflow]).unwrap_err();
    common::assert_contains(&report, "ci.yml");
    let action = altered(
        temp.path(),
        "action.yml",
        "using: composite",
        "using: node9",
    );
    let report = check_schema(Schema::Action, &[action]).unwrap_err();
    common::assert_contains(&report, "action.yml");
}

#[test]
fn zizmor_refuses_what_the_shipped_files_fixed() {
    let temp = tempfile::tempdir().unwrap();
    // An action by tag, a checkout that keeps its token.
    let example = altered(
        temp.path(),
        "examples/ci/freezegate.yml",
        "actions/cache/save@55cc8345863c7cc4c66a329aec7e433d2d1c52a9 # v6.1.0",
        "actions/cache/save@v6",
    );
    let text = fs::read_to_string(&example).unwrap().replace(
        "          persist-credentials: false\n",
        "          fetch-tags: true\n",
    );
    fs::write(&example, text).unwrap();
    let findings = zizmor(&[example]).unwrap_err();
    common::assert_contains(&findings, "unpinned-uses");
    common::assert_contains(&findings, "artipacked");
    // A step that writes $GITHUB_PATH.
    let action = altered(
        temp.path(),
        "action.yml",
        "        echo \"freezegate=$bin/freezegate\" >> \"$GITHUB_OUTPUT\"\n",
        "        echo \"freezegate=$bin/freezegate\" >> \"$GITHUB_OUTPUT\"\n        echo \"$bin\" >> \"$GITHUB_PATH\"\n",
    );
    let findings = zizmor(&[action]).unwrap_err();
    common::assert_contains(&findings, "github-env");
}

// ---------------------------------------------------------------------------------------
// The release workflow.

/// The wheels the platform table of docs/getting-started.md promises: (matrix name, Rust target, manylinux).
const PLATFORMS: [(&str, &str, &str); 7] = [
    ("linux-x86_64", "x86_64-unknown-linux-gnu", "2_17"),
    ("linux-aarch64", "aarch64-unknown-linux-gnu", "2_17"),
    (
        "musllinux-x86_64",
        "x86_64-unknown-linux-musl",
        "musllinux_1_2",
    ),
    (
        "musllinux-aarch64",
        "aarch64-unknown-linux-musl",
        "musllinux_1_2",
    ),
    ("macos-x86_64", "x86_64-apple-darwin", "off"),
    ("macos-arm64", "aarch64-apple-darwin", "off"),
    ("windows-x86_64", "x86_64-pc-windows-msvc", "off"),
];

fn steps_text(job: &Value) -> String {
    serde_json::to_string(&job["steps"]).unwrap()
}

#[test]
fn release_workflow_builds_smoke_tests_and_publishes_every_platform() {
    let release = yaml_file(&root().join(".github/workflows/release.yml"));
    let tags = release["on"]["push"]["tags"][0].as_str().unwrap();
    assert!(tags.starts_with("v"), "runs on version tags: {tags}");
    assert_eq!(
        release["permissions"],
        serde_json::json!({}),
        "no permission unless a job asks"
    );
    let jobs = &release["jobs"];

    let rows = |job: &str| -> Vec<Value> {
        jobs[job]["strategy"]["matrix"]["platform"]
            .as_array()
            .unwrap_or_else(|| panic!("{job} has a platform matrix"))
            .clone()
    };
    let built: Vec<(String, String, String)> = rows("wheels")
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            (s("name"), s("target"), s("manylinux"))
        })
        .collect();
    let want: Vec<(String, String, String)> = PLATFORMS
        .iter()
        .map(|(n, t, m)| (n.to_string(), t.to_string(), m.to_string()))
        .collect();
    assert_eq!(built, want, "the wheels job builds every platform");
    let build = steps_text(&jobs["wheels"]);
    assert!(build.contains("PyO3/maturin-action@"), "{build}");
    assert!(build.contains("--release --locked"), "{build}");

    // Every wheel is smoke-tested on a runner of its own OS and CPU.
    let smoked: Vec<(String, String, String)> = rows("smoke")
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            (s("name"), s("test-on"), s("in"))
        })
        .collect();
    assert_eq!(
        smoked.iter().map(|r| &r.0).collect::<Vec<_>>(),
        built.iter().map(|r| &r.0).collect::<Vec<_>>(),
        "one smoke test per wheel"
    );
    for (name, runner, inside) in &smoked {
        let arm = name.contains("aarch64") || name.contains("arm64");
        match name.split('-').next().unwrap() {
            "linux" | "musllinux" => {
                assert!(runner.starts_with("ubuntu-"), "{name} on {runner}");
                assert_eq!(runner.ends_with("-arm"), arm, "{name} on {runner}");
                let alpine = name.starts_with("musllinux");
                assert_eq!(inside == "alpine", alpine, "{name} in {inside}");
            }
            "macos" => {
                assert!(runner.starts_with("macos-"), "{name} on {runner}");
                assert_eq!(!runner.ends_with("-intel"), arm, "{name} on {runner}");
            }
            "windows" => assert!(runner.starts_with("windows-"), "{name} on {runner}"),
            other => panic!("unknown platform {other}"),
        }
    }
    let smoke = steps_text(&jobs["smoke"]);
    assert!(smoke.contains("sh .ci/smoke-wheel dist"), "{smoke}");
    assert!(
        root().join(".ci/smoke-wheel").exists() && root().join(".ci/smoke/tests").is_dir(),
        "the smoke script and its suite"
    );
    let sdist = steps_text(&jobs["sdist"]);
    assert!(sdist.contains("command\":\"sdist"), "{sdist}");
    assert!(sdist.contains(".ci/smoke-wheel from-sdist"), "{sdist}");

    // PyPI: trusted publishing from an environment, after every smoke test.
    let pypi = &jobs["pypi"];
    assert_eq!(
        pypi["permissions"],
        serde_json::json!({"id-token": "write"})
    );
    assert!(pypi["environment"]["name"].as_str().is_some());
    let needs: BTreeSet<&str> = pypi["needs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(needs, BTreeSet::from(["sdist", "smoke"]));
    let publish = steps_text(pypi);
    assert!(
        publish.contains("pypa/gh-action-pypi-publish@"),
        "{publish}"
    );
    assert!(
        publish.contains(&format!("-eq {}", PLATFORMS.len())),
        "the publish job counts every wheel: {publish}"
    );
    assert!(!publish.contains("password"), "no API token: {publish}");

    // The GitHub release: every artifact and their checksums.
    let github = &jobs["github-release"];
    assert_eq!(
        github["permissions"],
        serde_json::json!({"contents": "write"})
    );
    let steps = steps_text(github);
    assert!(steps.contains("sha256sum"), "{steps}");
    assert!(steps.contains("gh release create"), "{steps}");

    // The documentation site: built strictly by .ci/docs after the release, published
    // to GitHub Pages from its environment.
    let docs = &jobs["docs"];
    assert_eq!(docs["needs"], "github-release");
    let steps = steps_text(docs);
    assert!(steps.contains("bash .ci/docs"), "{steps}");
    assert!(
        steps.contains("actions/upload-pages-artifact@") && steps.contains("target/site"),
        "{steps}"
    );
    let pages = &jobs["pages"];
    assert_eq!(pages["needs"], "docs");
    assert_eq!(
        pages["permissions"],
        serde_json::json!({"pages": "write", "id-token": "write"})
    );
    assert_eq!(pages["environment"]["name"], "github-pages");
    assert!(steps_text(pages).contains("actions/deploy-pages@"));
    let mkdocs = fs::read_to_string(root().join("mkdocs.yml")).unwrap();
    assert!(
        mkdocs.contains("site_url: https://freezegate.github.io/freezegate/"),
        "the site is published where messages and --help point"
    );

    // Only these jobs hold more than read access.
    for (name, job) in jobs.as_object().unwrap() {
        if !["pypi", "github-release", "pages"].contains(&name.as_str()) {
            assert_eq!(
                job["permissions"],
                serde_json::json!({"contents": "read"}),
                "{name}"
            );
        }
    }
}

#[test]
fn ci_workflow_runs_ci_run_on_pull_requests_and_pushes() {
    let ci = yaml_file(&root().join(".github/workflows/ci.yml"));
    assert!(ci["on"].get("pull_request").is_some());
    assert!(ci["on"].get("push").is_some());
    let job = &ci["jobs"]["ci"];
    assert_eq!(job["permissions"], serde_json::json!({"contents": "read"}));
    let steps = steps_text(job);
    assert!(steps.contains("bash .ci/run"), "{steps}");
}

// ---------------------------------------------------------------------------------------
// One version.

/// The files that name freezegate's version, relative to the repository root.
const VERSIONED: [&str; 10] = [
    "Cargo.toml",
    "Cargo.lock",
    "pyproject.toml",
    "README.md",
    "docs/getting-started.md",
    "docs/ci.md",
    "action.yml",
    "CHANGELOG.md",
    ".pre-commit-hooks.yaml",
    "examples/ci/freezegate.yml",
];

/// Every place under `root` that names a version other than Cargo.toml's, as
/// `file: what`.
fn version_disagreements(root: &Path) -> Vec<String> {
    let read =
        |file: &str| fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut wrong = Vec::new();
    let cargo: toml::Table = toml::from_str(&read("Cargo.toml")).unwrap();
    let version = cargo
        .get("package")
        .and_then(|p| p.get("version"))
        .and_then(|v| v.as_str())
        .expect("Cargo.toml has [package] version")
        .to_string();

    let lock: toml::Table = toml::from_str(&read("Cargo.lock")).unwrap();
    let locked = lock["package"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p.get("name").and_then(|n| n.as_str()) == Some("freezegate"))
        .and_then(|p| p.get("version"))
        .and_then(|v| v.as_str());
    if locked != Some(version.as_str()) {
        wrong.push(format!("Cargo.lock: freezegate {locked:?}"));
    }

    let pyproject: toml::Table = toml::from_str(&read("pyproject.toml")).unwrap();
    let project = pyproject
        .get("project")
        .expect("pyproject.toml has [project]");
    if project.get("version").is_some() {
        wrong.push("pyproject.toml: a static `version` (it is dynamic, Cargo.toml's)".into());
    }
    let dynamic = project
        .get("dynamic")
        .and_then(|d| d.as_array())
        .is_some_and(|d| d.iter().any(|v| v.as_str() == Some("version")));
    if !dynamic {
        wrong.push("pyproject.toml: `version` is not in `dynamic`".into());
    }

    let action = yaml_file(&root.join("action.yml"));
    let default = action["inputs"]["version"]["default"].as_str();
    if default != Some(version.as_str()) {
        wrong.push(format!("action.yml: inputs.version.default {default:?}"));
    }

    // The latest released section, the first after [Unreleased].
    let changelog = read("CHANGELOG.md");
    let latest = changelog
        .lines()
        .filter_map(|l| l.strip_prefix("## ["))
        .find(|l| !l.starts_with("Unreleased"))
        .and_then(|l| l.split_once("] - "))
        .map(|(v, _)| v);
    if latest != Some(version.as_str()) {
        wrong.push(format!("CHANGELOG.md: latest release {latest:?}"));
    }

    // Pins in prose, examples and comments: `freezegate==X`, `freezegate/freezegate@vX`,
    // `rev: vX` (placeholders such as `freezegate==<version>` are not versions).
    for file in [
        "README.md",
        "docs/getting-started.md",
        "docs/ci.md",
        "action.yml",
        ".pre-commit-hooks.yaml",
        "examples/ci/freezegate.yml",
    ] {
        let text = read(file);
        for pattern in ["freezegate==", "freezegate/freezegate@v", "rev: v"] {
            for (at, _) in text.match_indices(pattern) {
                let named: String = text[at + pattern.len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
                    .collect();
                if named.starts_with(|c: char| c.is_ascii_digit()) && named != version {
                    let line = text[..at].matches('\n').count() + 1;
                    wrong.push(format!("{file}:{line}: {pattern}{named}"));
                }
            }
        }
    }
    for (file, needle) in [
        ("README.md", format!("freezegate=={version}")),
        ("README.md", format!("freezegate/freezegate@v{version}")),
        ("docs/ci.md", format!("rev: v{version}")),
    ] {
        if !read(file).contains(&needle) {
            wrong.push(format!("{file}: no `{needle}`"));
        }
    }
    wrong
}

#[test]
fn one_version_in_cargo_pyproject_the_action_the_readme_and_the_changelog() {
    let wrong = version_disagreements(root());
    assert!(wrong.is_empty(), "versions disagree:\n{}", wrong.join("\n"));
    // The binary is built from this Cargo.toml.
    let cargo: toml::Table =
        toml::from_str(&fs::read_to_string(root().join("Cargo.toml")).unwrap()).unwrap();
    assert_eq!(
        cargo["package"]["version"].as_str(),
        Some(env!("CARGO_PKG_VERSION"))
    );
}

/// A copy of the versioned files, with `from` replaced by `to` once in `file`.
fn copy_with(file: &str, from: &str, to: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in VERSIONED {
        let target = dir.path().join(name);
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::copy(root().join(name), &target).unwrap();
    }
    let path = dir.path().join(file);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} has no `{from}`");
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
    dir
}

#[test]
fn version_check_names_the_one_file_that_disagrees() {
    let version = env!("CARGO_PKG_VERSION");
    let unchanged = copy_with("README.md", "", "");
    assert_eq!(
        version_disagreements(unchanged.path()),
        Vec::<String>::new()
    );

    let other = "9.8.7";
    for (file, from, to) in [
        (
            "README.md",
            format!("freezegate=={version}"),
            format!("freezegate=={other}"),
        ),
        (
            "docs/ci.md",
            format!("rev: v{version}"),
            format!("rev: v{other}"),
        ),
        (
            "action.yml",
            format!("default: \"{version}\""),
            format!("default: \"{other}\""),
        ),
        (
            "examples/ci/freezegate.yml",
            format!("freezegate/freezegate@v{version}"),
            format!("freezegate/freezegate@v{other}"),
        ),
        (
            "CHANGELOG.md",
            format!("## [{version}] - "),
            format!("## [{other}] - "),
        ),
        (
            "pyproject.toml",
            "dynamic = [\"version\"]".to_string(),
            format!("version = \"{version}\""),
        ),
        (
            "Cargo.lock",
            format!("name = \"freezegate\"\nversion = \"{version}\""),
            format!("name = \"freezegate\"\nversion = \"{other}\""),
        ),
    ] {
        let copy = copy_with(file, &from, &to);
        let wrong = version_disagreements(copy.path());
        assert!(
            !wrong.is_empty() && wrong.iter().all(|w| w.starts_with(file)),
            "{file} with `{to}`: {wrong:?}"
        );
    }

    // A bump in Cargo.toml alone: every other file now disagrees.
    let copy = copy_with(
        "Cargo.toml",
        &format!("version = \"{version}\""),
        &format!("version = \"{other}\""),
    );
    let wrong = version_disagreements(copy.path());
    for file in ["Cargo.lock", "README.md", "action.yml", "CHANGELOG.md"] {
        assert!(
            wrong.iter().any(|w| w.starts_with(file)),
            "{file} is named: {wrong:?}"
        );
    }
}
