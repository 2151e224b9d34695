//! freezegate: a policy-as-code gate for test freezes.
//!
//! The data flows config → inputs → gate (engine → report) → commands; `stats` reads
//! the same facts and the run history. See the docs site's "Architecture" page.

/// The documentation site's stable address of a page, as a literal: `docs_url!("ci/")`.
/// `--help` texts and messages that point to documentation use it.
#[macro_export]
macro_rules! docs_url {
    ($page:literal) => {
        concat!("https://freezegate.github.io/freezegate/", $page)
    };
}

pub mod brief;
pub mod cli;
pub mod commands;
pub mod config;
pub mod document;
pub mod engine;
pub mod error;
pub mod gate;
pub mod git;
pub mod inputs;
pub mod paths;
pub mod prove;
pub mod report;
pub mod source;
pub mod stats;
pub mod supervise;
pub mod threads;
pub mod words;

/// What `freezegate --version` prints after the name: the package version and, when
/// known, the commit it was built from and that commit's date (`0.1.0 (1a2b3c4
/// 2026-11-30)`). Set by `build.rs`.
pub const VERSION_LINE: &str = env!("FREEZEGATE_VERSION_LINE");

/// The short hash of the commit this binary was built from, when known (`build.rs`).
pub const COMMIT: Option<&str> = option_env!("FREEZEGATE_COMMIT");
