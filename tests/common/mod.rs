//! A small world of gate inputs written to a temporary directory, and helpers to run
//! the real binary over it.
#![allow(dead_code)]

pub mod lint;
pub mod project;
pub mod wheel;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub const FROZEN: &str = "tests/test_a.py::test_frozen";
pub const PROPERTY: &str = "tests/props/test_p.py::test_prop";
pub const OTHER: &str = "tests/test_a.py::test_other";

/// Every input of a passing gate run; tests change one thing and look at the verdict.
#[derive(Clone)]
pub struct World {
    pub ledger: Value,
    pub ledger_name: String,
    pub collected: Vec<String>,
    pub changed: Vec<String>,
    pub samples: Option<Value>,
    pub applied: Vec<String>,
    pub junit: Option<Vec<(String, &'static str)>>,
    pub today: String,
    pub config: String,
    pub target_branch: Option<String>,
    pub extra_args: Vec<String>,
    pub files: Vec<(String, String)>,
}

pub fn entry() -> Value {
    json!({
        "test_id": FROZEN,
        "reason": "upstream rounding change, fix lands next sprint",
        "owner": "finley",
        "opened": "2026-11-20",
        "expires": "2026-12-04",
        "invariant": "amount never decreases when the period lengthens",
        "compensating_property": PROPERTY,
        "reused_property": false
    })
}

impl World {
    pub fn passing() -> World {
        World {
            ledger: json!({"schema": 1, "freezes": [entry()]}),
            ledger_name: "gate/freeze_ledger.json".into(),
            collected: vec![FROZEN.into(), PROPERTY.into(), OTHER.into()],
            changed: vec![
                "tests/props/test_p.py".into(),
                "gate/freeze_ledger.json".into(),
            ],
            samples: Some(json!({"properties": {PROPERTY: {"distinct": 8}}})),
            applied: vec![FROZEN.into()],
            junit: Some(vec![
                (PROPERTY.into(), "passed"),
                (FROZEN.into(), "skipped"),
                (OTHER.into(), "passed"),
            ]),
            today: "2026-11-30".into(),
            config: String::new(),
            target_branch: Some("main".into()),
            extra_args: Vec::new(),
            files: Vec::new(),
        }
    }

    /// The passing world with an expiry past the window (FZ104), no owner (FZ101) and an
    /// inherited skip (FZ401): violations of several kinds, to compare across formats.
    pub fn failing() -> World {
        let mut world = World::passing();
        world
            .entry_mut()
            .insert("expires".into(), json!("2026-12-06"));
        world.entry_mut().insert("owner".into(), json!(""));
        world.applied.push(OTHER.into());
        world
    }

    pub fn entry_mut(&mut self) -> &mut serde_json::Map<String, Value> {
        self.ledger["freezes"][0].as_object_mut().unwrap()
    }

    /// Writes the inputs and runs `freezegate check --format json`.
    pub fn run(&self) -> Verdict {
        let dir = tempfile::tempdir().unwrap();
        let out = self.run_in(dir.path(), "json");
        Verdict::from_output(out)
    }

    pub fn run_in(&self, dir: &Path, format: &str) -> Output {
        self.command_in(dir, format).output().unwrap()
    }

    /// The `check` command [`World::run_in`] runs, with the world written to `dir`.
    pub fn command_in(&self, dir: &Path, format: &str) -> std::process::Command {
        std::fs::create_dir(dir.join(".git")).ok();
        let ledger_text = if self.ledger_name.ends_with(".json") {
            serde_json::to_string_pretty(&self.ledger).unwrap()
        } else {
            convert(&self.ledger, &self.ledger_name)
        };
        write(dir, &self.ledger_name, &ledger_text);
        write(
            dir,
            "freezegate.toml",
            &format!("ledger = \"{}\"\n{}", self.ledger_name, self.config),
        );
        write(
            dir,
            "gate/collected.txt",
            &(self.collected.join("\n") + "\n"),
        );
        write(dir, "gate/changed.txt", &(self.changed.join("\n") + "\n"));
        write(
            dir,
            "gate/skipped.json",
            &serde_json::to_string(&self.applied).unwrap(),
        );
        for (name, text) in &self.files {
            write(dir, name, text);
        }
        let mut args: Vec<String> = vec![
            "check".into(),
            "--format".into(),
            format.into(),
            "--today".into(),
            self.today.clone(),
            "--collected".into(),
            "gate/collected.txt".into(),
            "--changed".into(),
            "gate/changed.txt".into(),
            "--applied-skips".into(),
            "gate/skipped.json".into(),
        ];
        if let Some(samples) = &self.samples {
            write(dir, "gate/samples.json", &samples.to_string());
            args.extend(["--samples".into(), "gate/samples.json".into()]);
        }
        if let Some(cases) = &self.junit {
            write(dir, "gate/junit.xml", &junit_xml(cases));
            args.extend(["--junit".into(), "gate/junit.xml".into()]);
        }
        if let Some(branch) = &self.target_branch {
            args.extend(["--target-branch".into(), branch.clone()]);
        }
        args.extend(self.extra_args.iter().cloned());
        let mut command = freezegate(dir);
        command.args(&args);
        command
    }
}

/// The output of `child` (its stdout and stderr piped), which must end by itself: a
/// hostile input must not hang the gate, an endless test must be stopped. A watchdog, not a speed target (those are benchmarks): the bound is minutes,
/// where the check takes milliseconds.
pub fn ended_by_itself(name: &str, mut child: std::process::Child) -> std::process::Output {
    use std::io::Read;
    // Drained as it runs, so a full pipe cannot pass for a hang.
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).unwrap();
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let watchdog = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= watchdog {
            let _ = child.kill();
            panic!("{name}: it hung (stopped after 300 s)");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    std::process::Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// No global or system git config (identity, signing, hooks), a fixed identity, English
/// messages, no colour, and no repository inherited from the environment.
pub fn hermetic(command: &mut std::process::Command) -> &mut std::process::Command {
    command
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env(
            "GIT_CONFIG_GLOBAL",
            if cfg!(windows) { "NUL" } else { "/dev/null" },
        )
        .env("GIT_AUTHOR_NAME", "freezegate tests")
        .env("GIT_AUTHOR_EMAIL", "tests@freezegate.invalid")
        .env("GIT_COMMITTER_NAME", "freezegate tests")
        .env("GIT_COMMITTER_EMAIL", "tests@freezegate.invalid")
        .env("LC_ALL", "C")
        .env("LANGUAGE", "C")
        .env("NO_COLOR", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_CEILING_DIRECTORIES")
}

/// `git ARGS` in `dir`, hermetic; it must succeed. Its output, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = hermetic(&mut std::process::Command::new("git"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git is installed");
    assert!(
        out.status.success(),
        "git {} failed in {}:\n{}",
        args.join(" "),
        dir.display(),
        text(&out.stderr)
    );
    text(&out.stdout).trim().to_string()
}

/// `freezegate freeze ARGS --today 2026-11-30` in `dir`.
pub fn freeze(dir: &Path, args: &[&str]) -> Output {
    freezegate(dir)
        .arg("freeze")
        .args(args)
        .args(["--today", "2026-11-30"])
        .output()
        .unwrap()
}

pub fn freezegate(dir: &Path) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_freezegate"));
    // A CI's own variables would name a target branch: tests set them when they mean to.
    command
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITLAB_CI");
    command
}

/// A directory freezegate takes for a repository's root: it holds a `.git` folder (no
/// git needed for commands that only find the root).
pub fn repo_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    dir
}

pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

/// The same ledger written as YAML or TOML.
pub fn convert(ledger: &Value, name: &str) -> String {
    if name.ends_with(".toml") {
        let mut out = format!("schema = {}\n", ledger["schema"]);
        if let Some(m) = ledger.get("max_window_days") {
            out.push_str(&format!("max_window_days = {m}\n"));
        }
        for entry in ledger["freezes"].as_array().unwrap() {
            out.push_str("\n[[freezes]]\n");
            for (k, v) in entry.as_object().unwrap() {
                out.push_str(&format!("{k} = {}\n", v));
            }
        }
        out
    } else {
        let mut out = format!("schema: {}\n", ledger["schema"]);
        if let Some(m) = ledger.get("max_window_days") {
            out.push_str(&format!("max_window_days: {m}\n"));
        }
        out.push_str("freezes:\n");
        for entry in ledger["freezes"].as_array().unwrap() {
            let mut first = true;
            for (k, v) in entry.as_object().unwrap() {
                out.push_str(if first { "  - " } else { "    " });
                out.push_str(&format!("{k}: {v}\n"));
                first = false;
            }
        }
        out
    }
}

pub fn junit_xml(cases: &[(String, &str)]) -> String {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?><testsuites name=\"pytest tests\"><testsuite name=\"pytest\">\n");
    for (id, outcome) in cases {
        let (file, rest) = id.split_once("::").unwrap();
        let classname = file.trim_end_matches(".py").replace('/', ".");
        let body = match *outcome {
            "failed" => "<failure message=\"boom\">boom</failure>",
            "error" => "<error message=\"boom\">boom</error>",
            "skipped" => "<skipped message=\"frozen\">frozen</skipped>",
            _ => "",
        };
        xml.push_str(&format!(
            "<testcase classname=\"{classname}\" name=\"{rest}\" time=\"0.01\">{body}</testcase>\n"
        ));
    }
    xml.push_str("</testsuite></testsuites>\n");
    xml
}

#[derive(Debug)]
pub struct Verdict {
    pub code: i32,
    pub json: Value,
    pub stderr: String,
}

impl Verdict {
    pub fn from_output(out: Output) -> Verdict {
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let code = out.status.code().unwrap_or(-1);
        let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "exit {code}: stdout is not JSON ({e}): {}\nstderr: {stderr}",
                String::from_utf8_lossy(&out.stdout)
            )
        });
        Verdict { code, json, stderr }
    }

    /// The run passed with no violation at all.
    #[track_caller]
    pub fn assert_passes(&self) {
        assert_eq!(self.code, 0, "{:#?}\n{}", self.violations(), self.stderr);
        assert_eq!(self.violations(), Vec::<Value>::new());
    }

    /// The rule ran to its end: a check inside a script that never ran would pass too.
    #[track_caller]
    pub fn assert_evaluated(&self, code: &str) {
        let rule = self.json["rules"]
            .as_array()
            .and_then(|rules| rules.iter().find(|r| r["code"] == code));
        assert_eq!(
            rule.map(|r| r["evaluated"].clone()),
            Some(Value::Bool(true)),
            "{code} did not run: {:#}\n{}",
            self.json,
            self.stderr
        );
    }

    pub fn codes(&self) -> Vec<String> {
        let mut codes: Vec<String> = self
            .violations()
            .iter()
            .map(|v| v["code"].as_str().unwrap().to_string())
            .collect();
        codes.sort();
        codes
    }

    pub fn violations(&self) -> Vec<Value> {
        self.json["violations"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// The one violation with this code (panics if there is not exactly one).
    pub fn one(&self, code: &str) -> Value {
        let found: Vec<Value> = self
            .violations()
            .into_iter()
            .filter(|v| v["code"] == code)
            .collect();
        assert_eq!(
            found.len(),
            1,
            "expected one {code}, got {:#?}",
            self.violations()
        );
        found.into_iter().next().unwrap()
    }
}

/// What to do when the pinned venv is missing or incomplete.
pub const FIX_PYTHON: &str = "run `bash .ci/python-env` from the repository root to create the \
     pinned venv (pytest, Hypothesis, pytest-cov; python3 with the venv module is needed), or \
     point FREEZEGATE_VENV at one that has them";

/// The pinned virtualenv of `.ci/python-env`: `$FREEZEGATE_VENV` (relative to the
/// repository root), else `<repo>/.venv`.
pub fn venv_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    match std::env::var_os("FREEZEGATE_VENV") {
        Some(venv) if !venv.is_empty() => root.join(venv),
        _ => root.join(".venv"),
    }
}

/// The pinned virtualenv's Python (made by `.ci/python-env`); panics with the fix when
/// it is missing, so a test that needs Python never passes without it.
pub fn venv_python() -> PathBuf {
    venv_python_importing(&[])
}

/// The venv's interpreter, checked to exist and to import `modules`: a test that needs
/// them fails with the fix, it never skips.
pub fn venv_python_importing(modules: &[&str]) -> PathBuf {
    let python = venv_dir().join("bin").join("python");
    assert!(
        python.exists(),
        "{} does not exist: {FIX_PYTHON}",
        python.display()
    );
    if !modules.is_empty() {
        let probe = std::process::Command::new(&python)
            .args(["-c", &format!("import {}", modules.join(", "))])
            .output()
            .unwrap_or_else(|e| panic!("could not run {}: {e}; {FIX_PYTHON}", python.display()));
        assert!(
            probe.status.success(),
            "{} cannot import {}: {FIX_PYTHON}\n{}",
            python.display(),
            modules.join(", "),
            String::from_utf8_lossy(&probe.stderr)
        );
    }
    python
}

/// Fails, showing all of `text`, unless it contains `needle`.
#[track_caller]
pub fn assert_contains(text: &str, needle: &str) {
    assert!(text.contains(needle), "expected `{needle}` in:\n{text}");
}
