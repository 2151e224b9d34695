//! The workflow linters of `.ci/requirements-lint.txt`, installed into the test venv once
//! per run: check-jsonschema with the GitHub schemas it vendors from SchemaStore (the one
//! copy of those schemas the project uses), and zizmor. Both run offline.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use super::wheel::{describe, run, run_ok};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A GitHub schema vendored by check-jsonschema.
#[derive(Clone, Copy, Debug)]
pub enum Schema {
    /// `.github/workflows/*.yml`
    Workflow,
    /// `action.yml`
    Action,
}

impl Schema {
    fn builtin(self) -> &'static str {
        match self {
            Schema::Workflow => "vendor.github-workflows",
            Schema::Action => "vendor.github-actions",
        }
    }
}

/// The venv's `bin` directory, with the linters installed.
fn lint_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let python = super::venv_python();
        run_ok(
            "pip install -r .ci/requirements-lint.txt (check-jsonschema, zizmor) into the test venv",
            Command::new(&python)
                .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
                .arg("-r")
                .arg(Path::new(ROOT).join(".ci/requirements-lint.txt")),
        );
        python.parent().unwrap().to_path_buf()
    })
}

/// `check-jsonschema --builtin-schema <schema>` over `files`: `Err` with its report when
/// any of them breaks the schema.
pub fn check_schema(schema: Schema, files: &[PathBuf]) -> Result<(), String> {
    let out = run(
        "check-jsonschema",
        Command::new(lint_bin().join("check-jsonschema"))
            .args(["--color", "never", "--builtin-schema", schema.builtin()])
            .args(files)
            .current_dir(ROOT),
    );
    match out.status.code() {
        Some(0) => Ok(()),
        Some(1) => Err(describe(
            &format!("check-jsonschema --builtin-schema {}", schema.builtin()),
            &out,
        )),
        _ => panic!("{}", describe("check-jsonschema did not run", &out)),
    }
}

/// `zizmor --offline` over `files`, with no config file but the ignore comments in them:
/// `Err` with the findings when there are any.
pub fn zizmor(files: &[PathBuf]) -> Result<(), String> {
    let out: Output = run(
        "zizmor",
        Command::new(lint_bin().join("zizmor"))
            .args([
                "--offline",
                "--no-config",
                "--no-progress",
                "--color",
                "never",
                "--show-audit-urls",
                "always",
            ])
            .args(files)
            .env_remove("GH_TOKEN")
            .env_remove("GITHUB_TOKEN")
            .current_dir(ROOT),
    );
    // 0: no findings; 10 and up: findings (by their highest severity); else an error.
    match out.status.code() {
        Some(0) => Ok(()),
        Some(code) if code >= 10 => Err(describe("zizmor --offline", &out)),
        _ => panic!("{}", describe("zizmor did not run", &out)),
    }
}
