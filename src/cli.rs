//! Command-line interface definitions.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "freezegate",
    version,
    about = "Keeps skipped tests honest: every freeze is a reviewed ledger entry with an owner, an expiry and a compensating property test.",
    after_help = "Examples:\n  freezegate check --collected gate/collected.txt --changed gate/changed.txt --samples .hypothesis/observed --applied-skips gate/skipped.json\n  freezegate check --collect --base origin/main --samples .hypothesis/observed --junit gate/junit.xml --applied-skips gate/skipped.json\n  freezegate explain FZ103\n  freezegate skips --format deselect"
)]
pub struct Cli {
    /// Config file (default: freezegate.toml, .freezegate.toml or [tool.freezegate] in
    /// pyproject.toml, searched from the working directory up to the repository root).
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the gate: evaluate every enabled rule over the ledger and the facts.
    Check(Box<CheckArgs>),
    /// List every loaded rule.
    Rules(RulesArgs),
    /// Print one rule's summary and how to clear it.
    Explain {
        /// A rule code, e.g. FZ103.
        code: String,
    },
    /// Print the skip set derived from the ledger at this commit.
    Skips(SkipsArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Human,
    Json,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The freeze ledger (JSON, YAML or TOML by extension).
    #[arg(long, value_name = "FILE")]
    pub ledger: Option<PathBuf>,
    /// pytest collection: `--collect-only -q` output, a JSON array, or one id a line. Repeatable (shards).
    #[arg(long, value_name = "FILE")]
    pub collected: Vec<PathBuf>,
    /// Run the configured `collect_command` (pytest --collect-only) to get the collection.
    #[arg(long, conflicts_with = "collected")]
    pub collect: bool,
    /// Changed files, one repository-relative path a line.
    #[arg(long, value_name = "FILE")]
    pub changed: Option<PathBuf>,
    /// Compute changed files with `git diff --name-only REF...HEAD`.
    #[arg(long, value_name = "REF", conflicts_with = "changed")]
    pub base: Option<String>,
    /// Sample counts: JSON counts, a Hypothesis observability .jsonl file or directory. Repeatable.
    #[arg(long, value_name = "PATH")]
    pub samples: Vec<PathBuf>,
    /// The skips the test run applied (JSON array or one id a line). Repeatable.
    #[arg(long, value_name = "FILE")]
    pub applied_skips: Vec<PathBuf>,
    /// pytest --junitxml report(s) with the outcome of every test. Repeatable.
    #[arg(long, value_name = "FILE")]
    pub junit: Vec<PathBuf>,
    /// The date rules compare expiry against (default: today, UTC).
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub today: Option<String>,
    /// The branch this patch targets (default: git's current branch).
    #[arg(long, value_name = "NAME")]
    pub target_branch: Option<String>,
    /// Only these rule codes or prefixes (comma-separated or repeated).
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    pub select: Vec<String>,
    /// Skip these rule codes or prefixes (comma-separated or repeated).
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    pub ignore: Vec<String>,
    /// Fail (exit 1) on warnings too.
    #[arg(long)]
    pub deny_warnings: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
    /// Write the report to this file instead of standard output.
    #[arg(long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Show which scripts ran, how long each took and how many violations each reported.
    #[arg(long)]
    pub trace: bool,
    /// Say what was loaded and how long each input took.
    #[arg(long, short)]
    pub verbose: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RulesFormat {
    Human,
    Json,
    /// The decision table as Markdown (the README's rule table is this output).
    Markdown,
}

#[derive(Debug, Args)]
pub struct RulesArgs {
    #[arg(long, value_enum, default_value_t = RulesFormat::Human)]
    pub format: RulesFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SkipsFormat {
    Json,
    Lines,
    Deselect,
}

#[derive(Debug, Args)]
pub struct SkipsArgs {
    /// The freeze ledger (default: from config).
    #[arg(long, value_name = "FILE")]
    pub ledger: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = SkipsFormat::Json)]
    pub format: SkipsFormat,
}
