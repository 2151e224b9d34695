//! Every input, declared once.
//!
//! An entry names the binding scripts read it under, what its absence means, the hint
//! FZ001 gives, the file a `freezegate test` case gives it in, and the `check` flags
//! that provide it. An input the gate loads (on a thread of its own when it is worth
//! one) also names its type, its loader in [`super::load`] and its [`Size`]. From this
//! one list come clap's [`FactArgs`], [`INPUTS`] (which `require`, `needs`, FZ001,
//! `freezegate test` and the docs test read), and [`Loaded`]: the inputs still
//! loading, how they start, and the bindings the engine hands to scripts.
//!
//! Adding an input is one entry here, its loader, and a row in `docs/policies.md`.

use std::path::PathBuf;

use super::coverage::Coverage;
use super::ids::IdSet;
use super::junit::Results;
use super::load::{self, Context};
use super::loading::{Loading, Plan, Size};
use super::proof::Proofs;
use super::run_record::{RecordHeader, Runs};
use super::samples::Samples;
use super::tamper::Finding;
use super::weakened::Weakened;
use super::{Deferred, Hunks, Input, Presence};

/// The `check` option of an entry's `file:` clause, when it has one.
macro_rules! file_option {
    () => {
        None
    };
    ($option:literal) => {
        Some($option)
    };
}

macro_rules! inputs {
    (
        // `$` itself, for the macro this one defines (`with_loaded_inputs!`).
        $d:tt
        options { $( $(#[$option_meta:meta])* $other:ident: $other_ty:ty, )* }
        $(
            $name:ident $(: $ty:ty = $loader:path, $size:ident)? {
                presence: $presence:ident,
                hint: $hint:literal,
                $(file: $option:literal in [$($case:literal),* $(,)?],)?
                flags { $( $(#[$flag_meta:meta])* $flag:ident: $flag_ty:ty, )* }
            }
        )*
    ) => {
        /// The facts a run looks at, as `check`, `stats` and `baseline` take them.
        #[derive(Debug, Clone, clap::Args)]
        pub struct FactArgs {
            $( $( $(#[$flag_meta])* pub $flag: $flag_ty, )* )*
            $( $(#[$option_meta])* pub $other: $other_ty, )*
        }

        /// Every input, once: its binding name, the flags that provide it, what its
        /// absence means, and the files a fixture case gives it in.
        pub const INPUTS: &[Input] = &[
            $(
                Input {
                    name: stringify!($name),
                    hint: $hint,
                    presence: Presence::$presence,
                    option: file_option!($($option)?),
                    case_files: &[$($($case),*)?],
                },
            )*
        ];

        /// The inputs the gate loads, each of which may still be loading (see
        /// [`Deferred`]); one not given is `None`.
        #[derive(Debug, Clone)]
        pub struct Loaded {
            $( $(
                #[doc = concat!("`", stringify!($name), "`: ", $hint, ".")]
                pub $name: Deferred<$ty>,
            )? )*
        }

        impl Loaded {
            /// No input given.
            pub fn none() -> Loaded {
                Loaded { $( $( $name: Deferred::<$ty>::ready(None), )? )* }
            }

            /// Starts every loader, in the order declared (an input that waits on
            /// another comes after it): first each says what it reads, so the plan
            /// knows where they all load, then each starts.
            pub fn start(cx: &Context) -> (Loaded, Loading) {
                let loaded = Loaded { $( $( $name: Deferred::<$ty>::pending(), )? )* };
                $( $(
                    let $name = $loader(cx, &loaded);
                    if $name.is_none() {
                        loaded.$name.set(None::<$ty>);
                    }
                )? )*
                let plan = Plan::of(cx.args.jobs, &[
                    $( $( $name.as_ref().map(|load| (Size::$size, &load.reads)), )? )*
                ]);
                let mut loading = Loading::new(plan, cx.args.verbose);
                $( $(
                    if let Some(load) = $name {
                        loading.add(stringify!($name), Size::$size, &loaded.$name, load);
                    }
                )? )*
                loading.start_small();
                (loaded, loading)
            }

        }

        /// Calls `$callback! { name: Type, ... }` with the binding name of every input
        /// [`Loaded`] holds: the engine turns each into what scripts read (inputs know
        /// nothing of scripts).
        macro_rules! with_loaded_inputs {
            ($d callback:ident) => {
                $d callback! { $( $( $name: $ty, )? )* }
            };
        }
        pub(crate) use with_loaded_inputs;
    };
}

inputs! {
    $
    options {
        /// Say what was loaded and how long each input took.
        #[arg(long, short)]
        verbose: bool,
        /// Threads for loading inputs and running scripts (default: every core once the
        /// inputs come to 256 KiB or a tool runs; 1 below that).
        #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
        jobs: Option<u16>,
        /// The record a supervised run (`freezegate run --check`) received over its pipe:
        /// judged as it came, whatever became of the file since.
        #[arg(skip)]
        supervised_run: Option<crate::source::Source>,
    }
    ledger {
        presence: Always,
        hint: "--ledger FILE (or `ledger` in config)",
        file: "--ledger" in ["freeze_ledger.json", "freeze_ledger.yaml", "freeze_ledger.yml", "freeze_ledger.toml"],
        flags {
            /// The freeze ledger (JSON, YAML or TOML by extension).
            #[arg(long, value_name = "FILE")]
            ledger: Option<PathBuf>,
            /// The ledger as it was at the base (default with --base: `git show` of the ledger
            /// at the merge base).
            #[arg(long, value_name = "FILE")]
            base_ledger: Option<PathBuf>,
        }
    }
    runs: Runs = load::runs, Large {
        presence: Optional,
        hint: "--run FILE (or `run` in config): a record of `pytest --freezegate`",
        file: "--run" in ["run.json"],
        flags {
            /// Run record(s) the freezegate pytest plugin wrote (`pytest --freezegate`): the
            /// collection, the applied skips, the results and the sample counts of that run, tied
            /// to its commit. Repeatable (shards merge). Default: `run` in config.
            #[arg(long = "run", value_name = "FILE")]
            run: Vec<PathBuf>,
        }
    }
    run_records: Vec<RecordHeader> = load::run_records, Small {
        presence: Optional,
        hint: "--run FILE (or `run` in config): a record of `pytest --freezegate`",
        flags {}
    }
    collected: IdSet = load::collected, Large {
        presence: Required,
        hint: "--collected FILE or --collect",
        file: "--collected" in ["collected.txt", "collected.json"],
        flags {
            /// pytest collection: `--collect-only -q` output, a JSON array, or one id a line. Repeatable (shards).
            #[arg(long, value_name = "FILE")]
            collected: Vec<PathBuf>,
            /// Run the configured `collect_command` (pytest --collect-only) to get the collection.
            #[arg(long, conflicts_with = "collected")]
            collect: bool,
        }
    }
    changed: IdSet = load::changed, Small {
        presence: Required,
        hint: "--changed FILE or --base REF",
        file: "--changed" in ["changed.txt"],
        flags {
            /// Changed files, one repository-relative path a line.
            #[arg(long, value_name = "FILE")]
            changed: Option<PathBuf>,
            /// Compute changed files with `git diff --name-only REF...HEAD`, and read the ledger
            /// at the merge base, so only the freezes this patch adds or changes owe a deposit.
            #[arg(long, value_name = "REF", conflicts_with = "changed")]
            base: Option<String>,
        }
    }
    applied_skips: IdSet = load::applied_skips, Small {
        presence: Required,
        hint: "--applied-skips FILE",
        file: "--applied-skips" in ["skipped.json", "skipped.txt"],
        flags {
            /// The skips the test run applied (JSON array or one id a line). Repeatable.
            #[arg(long, value_name = "FILE")]
            applied_skips: Vec<PathBuf>,
        }
    }
    samples: Samples = load::samples, Small {
        presence: Required,
        hint: "--samples PATH",
        file: "--samples" in ["samples.json", "samples.jsonl", "observed"],
        flags {
            /// Sample counts: JSON counts, a Hypothesis observability .jsonl file or directory. Repeatable.
            #[arg(long, value_name = "PATH")]
            samples: Vec<PathBuf>,
        }
    }
    derived_skips {
        presence: Always,
        hint: "the ledger",
        flags {}
    }
    results: Results = load::results, Small {
        presence: Optional,
        hint: "--junit FILE",
        file: "--junit" in ["junit.xml"],
        flags {
            /// pytest --junitxml report(s) with the outcome of every test. Repeatable.
            #[arg(long, value_name = "FILE")]
            junit: Vec<PathBuf>,
        }
    }
    coverage: Coverage = load::coverage, Large {
        presence: Optional,
        hint: "--coverage FILE",
        file: "--coverage" in ["coverage.json"],
        flags {
            /// coverage.py JSON report(s) with per-line test contexts (`pytest --cov
            /// --cov-context=test`, then `coverage json --show-contexts`). Repeatable (shards, or
            /// the base run where the frozen test ran plus this patch's run).
            #[arg(long, value_name = "FILE")]
            coverage: Vec<PathBuf>,
        }
    }
    base_runs: Runs = load::base_runs, Large {
        presence: Optional,
        hint: "--base-run FILE (the base branch's run record)",
        file: "--base-run" in ["base_run.json"],
        flags {
            /// The base branch's run record(s): its collection, to find tests this patch
            /// removed (FZ603) or hid (FZ604), and its hook census (FZ606). Repeatable (shards).
            #[arg(long = "base-run", value_name = "FILE", conflicts_with = "base_collected")]
            base_run: Vec<PathBuf>,
        }
    }
    proof: Proofs = load::proofs, Small {
        presence: Optional,
        hint: "--proof FILE (or `proof` in config): a record of `freezegate prove`",
        file: "--proof" in ["proof.json"],
        flags {
            /// Proof record(s) `freezegate prove` wrote: which mutants of the code each frozen
            /// test guarded its compensating properties kill. Repeatable (shards merge).
            /// Default: `proof` in config.
            #[arg(long = "proof", value_name = "FILE")]
            proof: Vec<PathBuf>,
        }
    }
    base_collected: IdSet = load::base_collected, Large {
        presence: Optional,
        hint: "--base-run FILE (the base branch's run record) or --base-collected FILE",
        file: "--base-collected" in ["base_collected.txt", "base_collected.json"],
        flags {
            /// The base's collection (as --collected takes it), instead of --base-run.
            #[arg(long, value_name = "FILE")]
            base_collected: Option<PathBuf>,
        }
    }
    selection_changes: Vec<crate::inputs::tools::SelectionChange> = load::selection_changes, Small {
        presence: Optional,
        hint: "--changed FILE or --base REF (what the patch changed in conftest.py and pytest's config)",
        flags {}
    }
    hunks: Hunks = load::hunks, Small {
        presence: Optional,
        hint: "--base REF or --diff FILE (the lines the patch changed)",
        file: "--diff" in ["diff.txt"],
        flags {
            /// The patch as a unified diff (`git diff -U0 BASE...HEAD`): the lines it changed,
            /// for FZ209 (default with --base: computed with git).
            #[arg(long, value_name = "FILE")]
            diff: Option<PathBuf>,
        }
    }
    tampering: Vec<Finding> = load::tampering, Small {
        presence: Optional,
        hint: "--base REF or --diff FILE (the lines the patch added)",
        flags {}
    }
    weakened: Weakened = load::weakened, Small {
        presence: Optional,
        hint: "--base REF or --diff FILE of whole files (the changed test files at both sides)",
        flags {}
    }
    params {
        presence: Always,
        hint: "[params] in config",
        flags {}
    }
    today {
        presence: Always,
        hint: "--today YYYY-MM-DD",
        flags {
            /// The date rules compare expiry against (default: today, UTC).
            #[arg(long, value_name = "YYYY-MM-DD")]
            today: Option<String>,
        }
    }
    target_branch {
        presence: Optional,
        hint: "--target-branch NAME (or a git checkout on a branch, or the CI's environment)",
        flags {
            /// The branch this patch targets (default: git's current branch).
            #[arg(long, value_name = "NAME")]
            target_branch: Option<String>,
        }
    }
    owners {
        presence: Optional,
        hint: "`owners_file` in config (a CODEOWNERS file)",
        flags {}
    }
    trusted_ref {
        presence: Optional,
        hint: "--trusted-ref REF",
        flags {}
    }
    commit {
        presence: Optional,
        hint: "--commit SHA (or a git checkout)",
        flags {
            /// The commit under judgement, which every run record must be of (default: git's
            /// HEAD; give it when CI checks out a merge commit the tests did not run on).
            #[arg(long, value_name = "SHA")]
            commit: Option<String>,
        }
    }
    baseline {
        presence: Always,
        hint: "`skip_baseline` in config (default gate/skip_baseline.json; `freezegate baseline` writes it)",
        flags {}
    }
}
