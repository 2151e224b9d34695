//! Command-line interface definitions.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "freezegate",
    version = crate::VERSION_LINE,
    about = "Keeps skipped tests honest: every freeze is a reviewed ledger entry with an owner, an expiry and a compensating property test.",
    after_help = concat!(
        "Examples:\n  freezegate init\n  freezegate run --baseline --check -- python -m pytest    # adopt, on the default branch\n  freezegate run --check --base origin/main --trusted-ref origin/main \\\n      --base-run gate/base-run.json -- python -m pytest -n auto\n  freezegate prove --base origin/main    # the proof a freeze the patch adds owes (FZ212)\n  freezegate check --run gate/run.json --base origin/main --proof gate/proof.json\n  freezegate freeze add TEST_ID --owner NAME --reason TEXT --invariant TEXT \\\n      --property PROPERTY_ID --expires 2026-12-18\n  freezegate explain FZ103\n\nDocumentation: ",
        crate::docs_url!(""),
        " (a page per rule: ",
        crate::docs_url!("rules/"),
        ")"
    )
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
    /// Scaffold freezegate.toml, an empty ledger, .gitignore entries and pytest's
    /// `freezegate = true` (with --pack, a copy of the default pack too).
    Init(InitArgs),
    /// Add, renew or remove a freeze in the ledger (validated, written atomically).
    Freeze(FreezeArgs),
    /// Record the run's skips, xfails, deselections and collection skips that the ledger
    /// does not derive in the skip baseline (`skip_baseline`), for review: how a
    /// repository with existing skips adopts the gate.
    Baseline(Box<BaselineArgs>),
    /// Run the tests under supervision: start pytest, receive its run record over a pipe
    /// (never from a file another process could replace), write it, and with `--check`
    /// judge it in this same process.
    #[command(
        after_help = concat!(
            "Examples:\n  freezegate run -- python -m pytest -n auto\n  freezegate run --check --base origin/main --base-run gate/base-run.json --trusted-ref origin/main -- python -m pytest -n auto\n  freezegate prove --base origin/main    # a patch that adds or changes a freeze owes its proof (FZ212)\n  freezegate run --check --base origin/main --proof gate/proof.json --base-run gate/base-run.json --trusted-ref origin/main -- python -m pytest\n\nExit status: with --check the gate's (0, 1, 2), at least 1 when tests failed; without it pytest's. Always 2 when pytest did not run as asked (interrupted, a usage or internal error, no tests collected, killed) or no complete record came from it.\n\nDocumentation: ",
            crate::docs_url!("pytest-plugin/#supervised-runs-freezegate-run")
        )
    )]
    Run(RunArgs),
    /// Prove each deposit by mutation: run the frozen test (its freeze lifted) and its
    /// compensating properties on the mutants of the code it guards, and write the proof
    /// record `check --proof` judges (needs `pip install 'freezegate[prove]'`).
    Prove(Box<ProveArgs>),
    /// The drafting step: what a freeze's deposit must answer (the entry and its
    /// invariant, the frozen test, the code at stake, the gate's thresholds, and with
    /// `--proof` the surviving mutants), as Markdown or JSON for an agent.
    Brief(BriefArgs),
    /// Print shell completions.
    Completions(CompletionsArgs),
    /// Run policy fixture cases: each folder with a case.toml must report exactly the
    /// violations it expects.
    Test(TestArgs),
    /// The weekly freeze metrics: deposit failures, ages, expiries, refused inherited
    /// skips (from `check --history`), per owner and per team.
    Stats(Box<StatsArgs>),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Judge the record once pytest exits, in this process: the arguments after
    /// `--check`, up to `--`, are `freezegate check`'s (the record is given to it).
    #[arg(long, num_args = 0.., allow_hyphen_values = true, value_terminator = "--", value_name = "CHECK ARGS")]
    pub check: Option<Vec<String>>,
    /// Adopt the run's existing skips: write every skip, xfail, deselection and
    /// collection skip of the record that the ledger does not derive into the skip
    /// baseline (as `freezegate baseline --run RECORD` does), before `--check` judges it.
    #[arg(long)]
    pub baseline: bool,
    /// The test command and its arguments, after `--` (e.g. `python -m pytest -n auto`).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PYTEST"
    )]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
#[command(
    after_help = concat!(
        "Examples:\n  freezegate prove --base origin/main -j 2\n  freezegate prove --all --budget 600 --output gate/proof.json\n  freezegate prove --base origin/main --shard 1/2   # one CI matrix job of two\n  freezegate check --run gate/run.json --base origin/main --proof gate/proof.json\n\nDocumentation: ",
        crate::docs_url!("proving/")
    )
)]
pub struct ProveArgs {
    /// The freeze ledger (default: `ledger` in config).
    #[arg(long, value_name = "FILE")]
    pub ledger: Option<PathBuf>,
    /// Prove only the freezes this patch adds or changes against this ref (its merge base).
    #[arg(long, value_name = "REF", conflicts_with = "all")]
    pub base: Option<String>,
    /// The ledger as it was at the base, instead of `git show` at the merge base.
    #[arg(long, value_name = "FILE")]
    pub base_ledger: Option<PathBuf>,
    /// Prove every freeze in the ledger.
    #[arg(long)]
    pub all: bool,
    /// coverage.py JSON report(s) with test contexts: narrow the code at stake to the
    /// lines only the frozen test covers. Repeatable.
    #[arg(long, value_name = "FILE")]
    pub coverage: Vec<PathBuf>,
    /// pytest processes at once (default: 1).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Run at most N mutants per freeze; the proof is then incomplete (FZ212).
    #[arg(long, value_name = "N")]
    pub max_mutants: Option<usize>,
    /// Stop after SECONDS; a proof cut short is incomplete (FZ212), never a pass.
    #[arg(long, value_name = "SECONDS")]
    pub budget: Option<u64>,
    /// Prove the I-th of N shares of the mutants (`--shard 1/2`); pass every shard's
    /// record to `check --proof`, where they merge.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<(u32, u32)>,
    /// The Python that runs the project's tests, with the engine installed (default:
    /// `$VIRTUAL_ENV/bin/python`, else `python3`).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Where to write the proof record.
    #[arg(long, value_name = "PATH", default_value = "gate/proof.json")]
    pub output: PathBuf,
}

fn parse_shard(value: &str) -> Result<(u32, u32), String> {
    let bad = || format!("expected I/N with 1 <= I <= N, e.g. 1/2, got `{value}`");
    let (i, n) = value.split_once('/').ok_or_else(bad)?;
    let (i, n): (u32, u32) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if i == 0 || n == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// The suite: a folder of cases (default: policies/tests).
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Run the cases against this policy directory instead of their configured policies
    /// (e.g. a modified copy of the pack).
    #[arg(long, value_name = "DIR")]
    pub policies: Option<PathBuf>,
    /// Only the cases whose folder (relative to DIR) contains this text, e.g. `-k fz401`.
    #[arg(short = 'k', long = "filter", value_name = "TEXT")]
    pub filter: Option<String>,
    /// Show each case's inputs and every violation it got.
    #[arg(long, short)]
    pub verbose: bool,
}

pub use crate::report::Format as ReportFormat;

/// `FORMAT=PATH` for `--report`.
#[derive(Debug, Clone)]
pub struct ReportTarget {
    pub format: ReportFormat,
    pub path: PathBuf,
}

fn parse_report_target(value: &str) -> Result<ReportTarget, String> {
    let (format, path) = value
        .split_once('=')
        .ok_or_else(|| format!("expected FORMAT=PATH, e.g. sarif=gate/out.sarif, got `{value}`"))?;
    let format = <ReportFormat as ValueEnum>::from_str(format, true).map_err(|_| {
        format!("unknown report format `{format}`: human, json, sarif, github, junit or markdown")
    })?;
    if path.is_empty() {
        return Err("the report path is empty".into());
    }
    Ok(ReportTarget {
        format,
        path: PathBuf::from(path),
    })
}

pub use crate::inputs::FactArgs;

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub facts: FactArgs,
    /// Read config and policies from this commit (e.g. the merge base or origin/main),
    /// never from the working tree, so the patch cannot loosen its own gate.
    #[arg(long, value_name = "REF")]
    pub trusted_ref: Option<String>,
    /// Only these rule codes, prefixes or categories (`deposit`; comma-separated or repeated).
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    pub select: Vec<String>,
    /// Skip these rule codes, prefixes or categories (comma-separated or repeated).
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    pub ignore: Vec<String>,
    /// Show at most N diagnostics in the human output, then a count per rule (0: all).
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub max_diagnostics: usize,
    /// Fail (exit 1) on warnings too.
    #[arg(long)]
    pub deny_warnings: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
    /// Write the report to this file instead of standard output.
    #[arg(long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Also write a report in another format, from the same run (repeatable), e.g.
    /// `--report sarif=gate/out.sarif --report markdown=$GITHUB_STEP_SUMMARY`.
    #[arg(long = "report", value_name = "FORMAT=PATH", value_parser = parse_report_target)]
    pub reports: Vec<ReportTarget>,
    /// Show which scripts ran, how long each took and how many violations each reported.
    #[arg(long)]
    pub trace: bool,
    /// Append one JSON line describing this run to this file (for `freezegate stats`).
    #[arg(long, value_name = "PATH")]
    pub history: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StatsFormat {
    Human,
    Json,
    /// For a job summary, with a Mermaid chart of freeze ages.
    Markdown,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  freezegate stats --collected gate/collected.txt --changed gate/changed.txt --samples .hypothesis/observed \\\n    --junit gate/junit.xml --history gate/history.jsonl --since 2026-11-23 --format markdown"
)]
pub struct StatsArgs {
    /// The run history `check --history` appends to (for the refused inherited skips).
    #[arg(long, value_name = "PATH")]
    pub history: Option<PathBuf>,
    /// Count history records from this date on (their UTC date), e.g. a week ago.
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub since: Option<String>,
    /// A freeze is expiring when it expires within this many days from today.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub expiring_days: u32,
    /// Output format.
    #[arg(long, value_enum, default_value_t = StatsFormat::Human)]
    pub format: StatsFormat,
    /// Write to this file instead of standard output (e.g. $GITHUB_STEP_SUMMARY).
    #[arg(long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Read config, policies and the skip baseline from this commit, as `check
    /// --trusted-ref` does, so the figures are the gate's own verdict.
    #[arg(long, value_name = "REF")]
    pub trusted_ref: Option<String>,
    #[command(flatten)]
    pub facts: FactArgs,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  freezegate run --baseline -- python -m pytest   # run the suite and baseline its skips\n  freezegate baseline --run gate/run.json --prune && git add gate/skip_baseline.json"
)]
pub struct BaselineArgs {
    /// Remove the entries that no longer match anything in the run (the baseline only
    /// shrinks); without it, entries are only added.
    #[arg(long)]
    pub prune: bool,
    #[command(flatten)]
    pub facts: FactArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RulesFormat {
    Human,
    Json,
    /// The decision table as Markdown.
    Markdown,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Also copy the default pack and its fixture cases to policies/ (to read, or to
    /// customise: then replace "builtin" by "policies" in config).
    #[arg(long)]
    pub pack: bool,
}

#[derive(Debug, Args)]
pub struct FreezeArgs {
    /// The freeze ledger (default: from config).
    #[arg(long, global = true, value_name = "FILE")]
    pub ledger: Option<PathBuf>,
    /// The date taken as today (default: the UTC date): `add` and `renew` open the
    /// window on it, and the edited ledger is checked as of it.
    #[arg(long, global = true, value_name = "YYYY-MM-DD")]
    pub today: Option<String>,
    /// pytest's collection (as `check --collected` takes it): the frozen test and its
    /// properties must be in it. Repeatable (shards).
    #[arg(long, global = true, value_name = "FILE")]
    pub collected: Vec<PathBuf>,
    /// A run record of `pytest --freezegate` (its collection stands for --collected).
    /// Repeatable (shards).
    #[arg(
        long = "run",
        global = true,
        value_name = "FILE",
        conflicts_with = "collected"
    )]
    pub run: Vec<PathBuf>,
    /// Collect with `collect_command` (pytest --collect-only) instead of a record. Without
    /// --run, --collected or --collect, the collection of `run` in config, else of the last
    /// `gate/run.json`, else of `collect_command` is used: a mistyped id is always refused.
    #[arg(long, global = true, conflicts_with_all = ["collected", "run"])]
    pub collect: bool,
    #[command(subcommand)]
    pub action: FreezeAction,
}

#[derive(Debug, Subcommand)]
pub enum FreezeAction {
    /// Freeze a test: opened today, expiring after the window (or, with --retired, retire
    /// a test the patch deletes for good: no expiry, its deposit stays).
    #[command(
        after_help = "Example:\n  freezegate freeze add tests/test_billing.py::test_rounding --owner finley \\\n    --reason 'BILL-412: rounding moves to half-even' --invariant 'never overcharges' \\\n    --property tests/props/test_billing_props.py::test_never_overcharges"
    )]
    Add {
        test_id: String,
        #[arg(long)]
        owner: String,
        #[arg(long)]
        reason: String,
        #[arg(long)]
        invariant: String,
        /// The compensating property's node id (repeat for several).
        #[arg(long, required = true)]
        property: Vec<String>,
        /// The property already existed and guards the invariant (not part of this patch).
        #[arg(long)]
        reused: bool,
        /// Window length in days (default: max_window_days).
        #[arg(long, conflicts_with = "expires")]
        days: Option<i64>,
        /// The expiry date itself, instead of --days.
        #[arg(long, value_name = "YYYY-MM-DD")]
        expires: Option<String>,
        /// The patch deletes the test for good: a `retired` entry, without an expiry,
        /// whose compensating property stands for it (FZ603 accepts the deletion).
        #[arg(long, conflicts_with_all = ["days", "expires"])]
        retired: bool,
    },
    /// Give a frozen test a fresh window from today.
    Renew {
        test_id: String,
        /// Window length in days (default: max_window_days).
        #[arg(long, conflicts_with = "expires")]
        days: Option<i64>,
        /// The expiry date itself, instead of --days.
        #[arg(long, value_name = "YYYY-MM-DD")]
        expires: Option<String>,
    },
    /// Remove a freeze (the test runs again).
    Remove { test_id: String },
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to generate completions for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct RulesArgs {
    #[arg(long, value_enum, default_value_t = RulesFormat::Human)]
    pub format: RulesFormat,
    /// Write the documentation site's page per rule and their index.md into DIR instead
    /// (the shipped site's are `freezegate rules --pages docs/rules`).
    #[arg(long, value_name = "DIR")]
    pub pages: Option<PathBuf>,
    /// The fixture cases the pages' examples come from.
    #[arg(
        long,
        value_name = "DIR",
        default_value = "policies/tests",
        requires = "pages"
    )]
    pub cases: PathBuf,
}

#[derive(Debug, Args)]
pub struct BriefArgs {
    /// The frozen test's node id, as the ledger names it.
    #[arg(value_name = "TEST_ID")]
    pub test_id: String,
    #[arg(long, value_enum, default_value_t = BriefFormat::Markdown)]
    pub format: BriefFormat,
    /// The freeze ledger (default: from config).
    #[arg(long, value_name = "FILE")]
    pub ledger: Option<PathBuf>,
    /// A run record (`pytest --freezegate`): the frozen test's lines and its cases come
    /// from it (default: `run` in config, else the last `gate/run.json`).
    #[arg(long, value_name = "FILE")]
    pub run: Vec<PathBuf>,
    /// A proof record (`freezegate prove`): its surviving mutants, as diffs.
    #[arg(long, value_name = "FILE")]
    pub proof: Option<PathBuf>,
    /// Without a proof, the code at stake is measured by running the frozen test alone
    /// with this Python, as `prove` does (default: `$VIRTUAL_ENV/bin/python`, else
    /// `python3`).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Read the code at stake from the frozen test's source only: no run.
    #[arg(long = "static", conflicts_with = "python")]
    pub static_only: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BriefFormat {
    Markdown,
    /// Stable fields, for agents.
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SkipsFormat {
    Json,
    Lines,
    Deselect,
    /// What the pytest plugin needs at session start: the skips, the ledger's name and
    /// SHA-256, the commit and whether tracked files are modified (one JSON object).
    Plugin,
}

#[derive(Debug, Args)]
pub struct SkipsArgs {
    /// The freeze ledger (default: from config).
    #[arg(long, value_name = "FILE")]
    pub ledger: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = SkipsFormat::Json)]
    pub format: SkipsFormat,
}
