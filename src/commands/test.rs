//! `freezegate test`: policy fixture cases. A case is a folder with a `case.toml` (the
//! date, the target branch, the expected violations) and its input files under
//! conventional names; files a case does not have are inherited from the nearest
//! folder above it, up to the suite's root. Each case runs the real `check` evaluation
//! ([`gate::gather`] and [`gate::judge`]) and must report exactly the expected
//! violations. Exit 0 when every case passes, 1 when one fails, 2 when one is broken
//! (its case file or inputs cannot be read).

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::Parser;
use serde::Deserialize;

use crate::cli::{CheckArgs, TestArgs};
use crate::commands::{EXIT_ERROR, EXIT_PASS, EXIT_VIOLATIONS};
use crate::config::{display_path, Config, PolicySpec};
use crate::engine::policy::PackCache;
use crate::engine::selection::Selection;
use crate::error::GateError;
use crate::gate::{self, Gate};
use crate::report::{human, Report, Violation};
use crate::source::{Source, SourceFile};

/// Where the site documents the fixture format.
const FIXTURE_DOCS: &str = crate::docs_url!("policies/#fixture-format-freezegate-test");

/// The expectation file of a case.
pub const CASE_FILE: &str = "case.toml";
/// The config file a case (or any folder above it in the suite) may hold.
pub const CONFIG_FILE: &str = "freezegate.toml";

/// The inputs a case can give, each under one of its conventional file names, with the
/// `check` flag it stands for: every input of [`crate::inputs::INPUTS`] a file gives, and
/// the base ledger (which is no binding of its own). The ledger is required; the others
/// are optional (and can be dropped from what a case inherits with `omit`).
pub fn case_inputs() -> impl Iterator<Item = (&'static str, &'static [&'static str], &'static str)>
{
    crate::inputs::INPUTS
        .iter()
        .filter_map(|input| Some((input.name, input.case_files, input.option?)))
        .filter(|(_, files, _)| !files.is_empty())
        .chain([(
            "base_ledger",
            &[
                "base_ledger.json",
                "base_ledger.yaml",
                "base_ledger.yml",
                "base_ledger.toml",
            ][..],
            "--base-ledger",
        )])
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    /// What the case shows, printed when it fails.
    description: Option<String>,
    /// `--today`.
    today: String,
    /// `--target-branch`; without it the case has no known target branch.
    target_branch: Option<String>,
    #[serde(default)]
    select: Vec<String>,
    #[serde(default)]
    ignore: Vec<String>,
    #[serde(default)]
    deny_warnings: bool,
    /// Inputs not to inherit from the folders above (e.g. `["samples"]` for FZ001).
    #[serde(default)]
    omit: Vec<String>,
    /// Rule codes this case is a near miss for: they must be enabled and must not fire.
    #[serde(default)]
    near_miss: Vec<String>,
    /// Config merged over the nearest `freezegate.toml` (tables merge key by key).
    config: Option<toml::Table>,
    /// `--commit`: the commit under judgement, which a case's `run.json` is compared with.
    commit: Option<String>,
    /// The exact violations the case expects (none when absent).
    #[serde(default)]
    expect: Vec<Expect>,
    /// The notes the case expects, each a substring of one (exactly these notes).
    #[serde(default)]
    notes: Vec<String>,
    /// Compared when given: the report's touched tests, exactly, each `ID: cause` or
    /// `ID: cause -> TO`.
    touched: Option<Vec<String>>,
    /// 0 or 1: whether the gate passes (with `deny_warnings` when set).
    expect_exit: Option<u8>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    code: String,
    /// Compared always: leave it out only for violations about no test (FZ001, FZ107...).
    test_id: Option<String>,
    /// Compared when given.
    field: Option<String>,
    /// Compared when given: "error" or "warning" ("warn").
    severity: Option<String>,
    /// Compared when given: a substring of the message.
    message: Option<String>,
    /// Compared when given: where the violation points, `FILE:LINE` (the file as the
    /// repository names it; the report's may be longer, relative to where the suite runs).
    at: Option<String>,
}

impl Expect {
    fn matches(&self, v: &Violation) -> bool {
        self.code == v.code
            && self.test_id == v.test_id
            && self
                .field
                .as_ref()
                .is_none_or(|f| Some(f) == v.field.as_ref())
            && self
                .severity
                .as_deref()
                .is_none_or(|s| normalize_severity(s) == v.severity.as_str())
            && self
                .message
                .as_deref()
                .is_none_or(|m| v.message.contains(m))
            && self.at.as_deref().is_none_or(|at| points_at(v, at))
    }

    fn describe(&self) -> String {
        let mut text = self.code.clone();
        text.push(' ');
        text.push_str(self.test_id.as_deref().unwrap_or("(no test)"));
        if let Some(field) = &self.field {
            text.push_str(&format!(" field={field}"));
        }
        if let Some(severity) = &self.severity {
            text.push_str(&format!(" severity={}", normalize_severity(severity)));
        }
        if let Some(message) = &self.message {
            text.push_str(&format!(" message~{message:?}"));
        }
        if let Some(at) = &self.at {
            text.push_str(&format!(" at={at}"));
        }
        text
    }
}

/// Whether a violation points at `FILE:LINE`.
fn points_at(v: &Violation, at: &str) -> bool {
    let Some((file, line)) = at.rsplit_once(':') else {
        return false;
    };
    let same_file = v
        .file
        .as_deref()
        .is_some_and(|f| f == file || f.ends_with(&format!("/{file}")));
    same_file && line.parse::<usize>().ok() == v.line
}

fn normalize_severity(s: &str) -> &str {
    if s == "warn" {
        "warning"
    } else {
        s
    }
}

fn describe_violation(v: &Violation) -> String {
    let mut text = format!("{} {}", v.code, v.test_id.as_deref().unwrap_or("(no test)"));
    if let Some(field) = &v.field {
        text.push_str(&format!(" field={field}"));
    }
    text.push_str(&format!(" severity={}: {}", v.severity.as_str(), v.message));
    if let (Some(file), Some(line), Some(column)) = (&v.file, v.line, v.column) {
        text.push_str(&format!(" [{file}:{line}:{column}]"));
    }
    text
}

/// How one case ended.
enum Outcome {
    Passed,
    /// Expectations not met: the lines explain how.
    Failed(Vec<String>),
    /// The case could not be run: its file or inputs are broken.
    Broken(GateError),
}

/// What the suite learnt about rule coverage from the cases' own declarations.
#[derive(Default)]
struct RuleCoverage {
    loaded: BTreeSet<String>,
    fired: BTreeSet<String>,
    near_missed: BTreeSet<String>,
}

pub fn run(cwd: &Path, config_path: Option<&Path>, args: &TestArgs) -> Result<u8, GateError> {
    if config_path.is_some() {
        return Err(GateError::usage(
            "--config does not apply to `test`: each case takes its config from the nearest freezegate.toml and its [config] table",
        ));
    }
    let root = cwd.join(args.dir.as_deref().unwrap_or(Path::new("policies/tests")));
    let root_name = display_path(&root, cwd);
    if !root.is_dir() {
        let (what, help) = match root.exists() {
            false => (
                "does not exist",
                format!("`freezegate init --pack` copies the default pack's cases there; a case is a folder with a {CASE_FILE} and its input files (see {FIXTURE_DOCS})"),
            ),
            true => (
                "is not a directory",
                format!("give the folder of cases; a case is a folder with a {CASE_FILE} and its input files (see {FIXTURE_DOCS})"),
            ),
        };
        return Err(GateError::new(&root_name, what).with_help(help));
    }
    let policies = args.policies.as_ref().map(|dir| {
        let path = cwd.join(dir);
        PolicySpec::Dir {
            name: display_path(&normalize(&path), cwd),
            path,
        }
    });
    if let Some(PolicySpec::Dir { path, name }) = &policies {
        if !path.is_dir() {
            return Err(GateError::new(name, "is not a policy directory")
                .with_help("--policies names a directory of *.rhai scripts"));
        }
    }
    let mut cases = Vec::new();
    find_cases(&root, &mut cases).map_err(|e| GateError::io(&root_name, e))?;
    cases.sort();
    if let Some(filter) = &args.filter {
        cases.retain(|case| display_path(case, &root).contains(filter.as_str()));
    }
    if cases.is_empty() {
        return Err(GateError::new(
            &root_name,
            match &args.filter {
                Some(filter) => format!("holds no fixture case matching `{filter}`"),
                None => format!("holds no fixture case (a folder with a {CASE_FILE})"),
            },
        ));
    }

    let colour = human::use_colour(std::io::stderr().is_terminal());
    let (mut passed, mut failed, mut broken) = (0usize, 0usize, 0usize);
    let mut coverage = RuleCoverage::default();
    let mut last_broken: Option<String> = None;
    let mut packs = PackCache::default();
    for case_dir in &cases {
        let name = display_path(case_dir, cwd);
        let mut details = Vec::new();
        let outcome = run_case(
            cwd,
            &root,
            case_dir,
            policies.as_ref(),
            &mut packs,
            &mut coverage,
            args.verbose.then_some(&mut details),
        );
        match outcome {
            Outcome::Passed => {
                passed += 1;
                println!("ok      {name}");
            }
            Outcome::Failed(lines) => {
                failed += 1;
                println!("FAILED  {name}");
                for line in lines {
                    println!("    {line}");
                }
            }
            Outcome::Broken(err) => {
                broken += 1;
                println!("BROKEN  {name}");
                let rendered = human::render_error(&err, colour);
                if last_broken.as_deref() == Some(rendered.as_str()) {
                    eprintln!("error: case {name} is broken: the same error as the case above");
                } else {
                    eprintln!("error: case {name} is broken:");
                    eprint!("{rendered}");
                    last_broken = Some(rendered);
                }
            }
        }
        for line in details {
            println!("        {line}");
        }
    }
    let unfired: Vec<&str> = coverage
        .loaded
        .difference(&coverage.fired)
        .map(String::as_str)
        .collect();
    let unmissed: Vec<&str> = coverage
        .loaded
        .difference(&coverage.near_missed)
        .map(String::as_str)
        .collect();
    // Coverage means something for a whole suite only.
    if !unfired.is_empty() && args.filter.is_none() {
        println!("coverage: no case expects {}", unfired.join(", "));
    }
    if !unmissed.is_empty() && args.filter.is_none() {
        println!("coverage: no near miss for {}", unmissed.join(", "));
    }
    if broken > 0 {
        println!(
            "{broken} broken case(s): their case file or inputs could not be read (see above)"
        );
    }
    println!("{passed} passed, {} failed", failed + broken);
    Ok(if broken > 0 {
        EXIT_ERROR
    } else if failed > 0 {
        EXIT_VIOLATIONS
    } else {
        EXIT_PASS
    })
}

fn find_cases(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if dir.join(CASE_FILE).is_file() {
        out.push(dir.to_path_buf());
    }
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() && path.file_name().is_some_and(|n| n != "observed") {
            find_cases(&path, out)?;
        }
    }
    Ok(())
}

fn run_case(
    cwd: &Path,
    root: &Path,
    case_dir: &Path,
    policies: Option<&PolicySpec>,
    packs: &mut PackCache,
    coverage: &mut RuleCoverage,
    details: Option<&mut Vec<String>>,
) -> Outcome {
    let case_name = display_path(case_dir, cwd);
    let prepared = match prepare(cwd, root, case_dir, &case_name, policies, packs) {
        Ok(prepared) => prepared,
        Err(err) => return Outcome::Broken(err),
    };
    let Prepared {
        case,
        gate,
        selection,
        args,
        inputs,
    } = prepared;
    // Coverage is about the rules the scripts declare (not the core's FZ001/FZ501).
    coverage.loaded.extend(
        gate.pack
            .rules
            .iter()
            .filter(|r| r.policy != crate::engine::policy::CORE_POLICY)
            .map(|r| r.code.clone()),
    );
    let report = match evaluate(cwd, case_dir, &case, &gate, &selection, &args) {
        Ok(report) => report,
        Err(outcome) => return outcome,
    };
    coverage
        .fired
        .extend(case.expect.iter().map(|e| e.code.clone()));
    coverage.near_missed.extend(case.near_miss.iter().cloned());
    let lines = compare(&case, &report);
    if let Some(details) = details {
        details.push(format!("inputs: {}", inputs.join(", ")));
        details.extend(
            report
                .violations
                .iter()
                .map(|v| format!("got: {}", describe_violation(v))),
        );
    }
    if lines.is_empty() {
        Outcome::Passed
    } else {
        let mut all = Vec::new();
        if let Some(description) = &case.description {
            all.push(format!("({})", description.trim()));
        }
        all.extend(lines);
        Outcome::Failed(all)
    }
}

/// The report `check` would give on a case's inputs.
fn evaluate(
    cwd: &Path,
    case_dir: &Path,
    case: &CaseFile,
    gate: &Gate,
    selection: &Selection,
    args: &CheckArgs,
) -> Result<Report, Outcome> {
    let mut facts = gate::gather(case_dir, &gate.config, &args.facts).map_err(Outcome::Broken)?;
    // A case's target branch is what it says, never the checkout's.
    facts.target_branch = case.target_branch.clone();
    let mut report = match gate::judge(gate, &facts, selection) {
        Ok((_, report)) => report,
        Err(err) => {
            let rendered = human::render_error(&err, false);
            let mut lines = vec!["the policies failed to run on this case:".to_string()];
            lines.extend(rendered.lines().map(str::to_string));
            return Err(Outcome::Failed(lines));
        }
    };
    report.deny_warnings = case.deny_warnings;
    // Files are named from the working directory, like every path the user gave, in the
    // report and in the snippet a diagnostic shows.
    for v in &mut report.violations {
        if let Some(file) = &mut v.file {
            let path = case_dir.join(&*file);
            if path.is_file() {
                *file = display_path(&normalize(&path), cwd);
                if let Some((source, _)) = &mut v.location {
                    *source = SourceFile::new(file.clone(), &source.path, source.text.clone());
                }
            }
        }
    }
    Ok(report)
}

/// An example of a rule's output: the violation the first fixture case (in folder order)
/// that expects the rule reports, with the case's folder (named from `cwd`) and its
/// description.
pub struct Example {
    pub case: String,
    pub description: Option<String>,
    pub violation: Violation,
}

/// For each rule code some case under `root` expects, its [`Example`]. A case that cannot
/// be read or run gives none (`freezegate test` reports it).
pub fn examples(cwd: &Path, root: &Path) -> std::collections::BTreeMap<String, Example> {
    let mut found = std::collections::BTreeMap::new();
    let mut cases = Vec::new();
    if find_cases(root, &mut cases).is_err() {
        return found;
    }
    cases.sort();
    // A rule's example comes from its own directory (policies/tests/fz404/…) when one there
    // shows it; a case of another rule serves only a rule that has none of its own.
    let own_rule = |case_dir: &Path, code: &str| {
        case_dir
            .parent()
            .and_then(|dir| dir.file_name())
            .is_some_and(|dir| dir.eq_ignore_ascii_case(code))
    };
    let mut packs = PackCache::default();
    for own_dir_only in [true, false] {
        for case_dir in &cases {
            examine_case(
                cwd,
                root,
                case_dir,
                own_dir_only,
                &own_rule,
                &mut packs,
                &mut found,
            );
        }
    }
    found
}

fn examine_case(
    cwd: &Path,
    root: &Path,
    case_dir: &Path,
    own_dir_only: bool,
    own_rule: &dyn Fn(&Path, &str) -> bool,
    packs: &mut PackCache,
    found: &mut std::collections::BTreeMap<String, Example>,
) {
    let name = display_path(case_dir, cwd);
    let Ok(prepared) = prepare(cwd, root, case_dir, &name, None, packs) else {
        return;
    };
    let wanted: BTreeSet<&str> = prepared
        .case
        .expect
        .iter()
        .map(|e| e.code.as_str())
        .filter(|code| !found.contains_key(*code))
        .filter(|code| !own_dir_only || own_rule(case_dir, code))
        .collect();
    if wanted.is_empty() {
        return;
    }
    let Ok(report) = evaluate(
        cwd,
        case_dir,
        &prepared.case,
        &prepared.gate,
        &prepared.selection,
        &prepared.args,
    ) else {
        return;
    };
    for code in wanted {
        if let Some(violation) = report.violations.iter().find(|v| v.code == code) {
            found.insert(
                code.to_string(),
                Example {
                    case: name.clone(),
                    description: prepared.case.description.clone(),
                    violation: violation.clone(),
                },
            );
        }
    }
}

/// The expected-vs-got differences of one case (empty when it passes).
fn compare(case: &CaseFile, report: &Report) -> Vec<String> {
    let got = &report.violations;
    let matched = match_expectations(&case.expect, got);
    let mut lines = Vec::new();
    let missing: Vec<&Expect> = case
        .expect
        .iter()
        .zip(&matched)
        .filter(|(_, m)| m.is_none())
        .map(|(e, _)| e)
        .collect();
    let used: BTreeSet<usize> = matched.iter().flatten().copied().collect();
    let unexpected: Vec<&Violation> = got
        .iter()
        .enumerate()
        .filter(|(i, _)| !used.contains(i))
        .map(|(_, v)| v)
        .collect();
    if !missing.is_empty() {
        lines.push("expected, not reported:".to_string());
        lines.extend(missing.iter().map(|e| format!("  - {}", e.describe())));
    }
    if !unexpected.is_empty() {
        lines.push("reported, not expected:".to_string());
        lines.extend(
            unexpected
                .iter()
                .map(|v| format!("  + {}", describe_violation(v))),
        );
    }
    let note_text: Vec<String> = report
        .notes
        .iter()
        .map(|n| format!("{}: {}", n.code, n.message))
        .collect();
    for want in &case.notes {
        if !note_text.iter().any(|n| n.contains(want.as_str())) {
            lines.push(format!("expected a note, not given: ~\"{want}\""));
        }
    }
    for note in &note_text {
        if !case.notes.iter().any(|want| note.contains(want.as_str())) {
            lines.push(format!("note, not expected: {note}"));
        }
    }
    if let Some(want) = &case.touched {
        let got: Vec<String> = report
            .touched
            .iter()
            .map(|t| match &t.to {
                Some(to) => format!("{}: {} -> {to}", t.test_id, t.cause),
                None => format!("{}: {}", t.test_id, t.cause),
            })
            .collect();
        for line in want.iter().filter(|w| !got.contains(w)) {
            lines.push(format!("expected touched, not listed: {line}"));
        }
        for line in got.iter().filter(|g| !want.contains(g)) {
            lines.push(format!("touched, not expected: {line}"));
        }
    }
    if let Some(want) = case.expect_exit {
        let exit = u8::from(report.failed());
        if exit != want {
            lines.push(format!("expected exit {want}, the gate would exit {exit}"));
        }
    }
    lines
}

/// Pairs every expectation with a distinct violation it matches, as many as possible
/// (augmenting paths: a loose expectation never steals the one a precise one needs).
fn match_expectations(expect: &[Expect], got: &[Violation]) -> Vec<Option<usize>> {
    fn augment(
        e: usize,
        expect: &[Expect],
        got: &[Violation],
        seen: &mut [bool],
        owner: &mut [Option<usize>],
    ) -> bool {
        for (v, violation) in got.iter().enumerate() {
            if seen[v] || !expect[e].matches(violation) {
                continue;
            }
            seen[v] = true;
            if owner[v].is_none_or(|other| augment(other, expect, got, seen, owner)) {
                owner[v] = Some(e);
                return true;
            }
        }
        false
    }
    let mut owner: Vec<Option<usize>> = vec![None; got.len()];
    for e in 0..expect.len() {
        let mut seen = vec![false; got.len()];
        augment(e, expect, got, &mut seen, &mut owner);
    }
    let mut matched = vec![None; expect.len()];
    for (v, e) in owner.iter().enumerate() {
        if let Some(e) = e {
            matched[*e] = Some(v);
        }
    }
    matched
}

struct Prepared {
    case: CaseFile,
    gate: Gate,
    selection: Selection,
    args: CheckArgs,
    /// The input files used, for `--verbose`.
    inputs: Vec<String>,
}

/// Reads a case: its file, its config, its gate and the `check` arguments for its inputs.
fn prepare(
    cwd: &Path,
    root: &Path,
    case_dir: &Path,
    case_name: &str,
    policies: Option<&PolicySpec>,
    packs: &mut PackCache,
) -> Result<Prepared, GateError> {
    let case_source = SourceFile::read(
        &case_dir.join(CASE_FILE),
        format!("{case_name}/{CASE_FILE}"),
    )?;
    let case: CaseFile = toml::from_str(&case_source.text).map_err(|e| {
        let err = GateError::new(&case_source.name, e.message().to_string());
        let err = match e.span() {
            Some(span) => err.at(&case_source, span, "here"),
            None => err,
        };
        err.with_help(format!("see the fixture format: {FIXTURE_DOCS}"))
    })?;
    let case_err = |message: String| {
        GateError::new(&case_source.name, message)
            .with_help(format!("see the fixture format: {FIXTURE_DOCS}"))
    };
    for omitted in &case.omit {
        if !case_inputs().any(|(input, _, _)| input == omitted && input != "ledger") {
            let omittable: Vec<&str> = case_inputs()
                .map(|(input, _, _)| input)
                .filter(|input| *input != "ledger")
                .collect();
            return Err(case_err(format!(
                "omit names `{omitted}`; inputs that can be omitted: {}",
                omittable.join(", ")
            )));
        }
    }
    for e in &case.expect {
        if let Some(severity) = &e.severity {
            if !matches!(severity.as_str(), "error" | "warning" | "warn") {
                return Err(case_err(format!(
                    "expect {}: severity `{severity}` is not \"error\" or \"warning\"",
                    e.code
                )));
            }
        }
    }
    if let Some(code) = case.expect_exit.filter(|c| *c > 1) {
        return Err(case_err(format!(
            "expect_exit = {code}: a case expects 0 (passes) or 1 (violations)"
        )));
    }

    // Config: the nearest freezegate.toml up to the suite root, with [config] merged over it.
    let config = load_config(case_dir, root, case_name, &case, &case_source, cwd)?;
    let mut config = config;
    if let Some(spec) = policies {
        config.policies = vec![spec.clone()];
    } else {
        // Policy directories are named from the working directory, like any path the user gave.
        for spec in &mut config.policies {
            if let PolicySpec::Dir { path, name } = spec {
                *name = display_path(&normalize(path), cwd);
            }
        }
    }
    let gate = Gate::with_pack_cache(config, packs)?;
    let selection = Selection::new(&gate.pack, &gate.config, &case.select, &case.ignore)
        .map_err(|e| case_err(format!("select/ignore: {}", e.message)))?;
    for code in case.expect.iter().map(|e| &e.code).chain(&case.near_miss) {
        if gate.pack.rule(code).is_none() {
            return Err(case_err(format!(
                "names rule {code}, which no loaded policy declares"
            )));
        }
    }
    for code in &case.near_miss {
        if selection.severity(code).is_none() {
            return Err(case_err(format!(
                "near_miss {code}: the rule is not enabled in this case, so its silence proves nothing"
            )));
        }
        if case.expect.iter().any(|e| &e.code == code) {
            return Err(case_err(format!("{code} is both expected and a near miss")));
        }
    }

    // Inputs: each from the case folder, else the nearest folder above it in the suite.
    let mut argv: Vec<String> = vec!["check".into(), "--today".into(), case.today.clone()];
    if let Some(branch) = &case.target_branch {
        argv.extend(["--target-branch".into(), branch.clone()]);
    }
    if let Some(commit) = &case.commit {
        argv.extend(["--commit".into(), commit.clone()]);
    }
    let mut inputs = Vec::new();
    for (input, names, flag) in case_inputs() {
        let omitted = case.omit.iter().any(|o| o == input);
        let found = find_input(case_dir, root, names, omitted, case_name, input)?;
        match found {
            Some(path) => {
                inputs.push(display_path(&path, cwd));
                argv.push(flag.into());
                argv.push(path.to_string_lossy().into_owned());
            }
            None if input == "ledger" => {
                return Err(case_err(format!(
                    "has no ledger: put a {} in the case folder or a folder above it",
                    names.join(" / ")
                )));
            }
            None => {}
        }
    }
    #[derive(Parser)]
    struct CheckCommand {
        #[command(flatten)]
        args: CheckArgs,
    }
    let args = CheckCommand::try_parse_from(&argv)
        .map_err(|e| case_err(e.to_string().trim().to_string()))?
        .args;
    Ok(Prepared {
        case,
        gate,
        selection,
        args,
        inputs,
    })
}

/// The input file of one kind for a case: in its folder or the nearest one above it.
fn find_input(
    case_dir: &Path,
    root: &Path,
    names: &[&str],
    omitted: bool,
    case_name: &str,
    input: &str,
) -> Result<Option<PathBuf>, GateError> {
    for dir in case_dir.ancestors() {
        let present: Vec<PathBuf> = names
            .iter()
            .map(|n| dir.join(n))
            .filter(|p| p.exists())
            .collect();
        if present.len() > 1 {
            let shown: Vec<String> = present
                .iter()
                .map(|p| {
                    p.file_name()
                        .unwrap_or_default()
                        .to_string_lossy()
                        .into_owned()
                })
                .collect();
            return Err(GateError::new(
                case_name,
                format!(
                    "two files give `{input}` in one folder ({}): keep one",
                    shown.join(", ")
                ),
            ));
        }
        if let Some(path) = present.into_iter().next() {
            if omitted && dir == case_dir {
                return Err(GateError::new(
                    case_name,
                    format!(
                        "omits `{input}` but its folder has {}",
                        path.file_name().unwrap_or_default().to_string_lossy()
                    ),
                ));
            }
            return Ok((!omitted).then_some(path));
        }
        if dir == root {
            break;
        }
    }
    Ok(None)
}

/// The case's config: the nearest `freezegate.toml` from the case folder up to the suite
/// root, with the case's `[config]` table merged over it. The case folder stands for the
/// repository root. Paths in an inherited file stay relative to that file.
fn load_config(
    case_dir: &Path,
    root: &Path,
    case_name: &str,
    case: &CaseFile,
    case_source: &Source,
    cwd: &Path,
) -> Result<Config, GateError> {
    let mut inherited: Option<(PathBuf, Source)> = None;
    for dir in case_dir.ancestors() {
        let path = dir.join(CONFIG_FILE);
        if path.is_file() {
            let source = SourceFile::read(&path, display_path(&path, cwd))?;
            inherited = Some((dir.to_path_buf(), source));
            break;
        }
        if dir == root {
            break;
        }
    }
    let virtual_path = case_dir.join(CONFIG_FILE);
    let source = match (&inherited, &case.config) {
        (None, None) => SourceFile::new(
            format!("{case_name} (default config)"),
            virtual_path,
            "policies = [\"builtin\"]\n",
        ),
        // The case's own freezegate.toml, as is: errors point into the real file.
        (Some((dir, source)), None) if dir == case_dir => source.clone(),
        (inherited, inline) => {
            let mut table = match inherited {
                Some((dir, source)) => {
                    let mut table: toml::Table = toml::from_str(&source.text).map_err(|e| {
                        let err = GateError::new(&source.name, e.message().to_string());
                        match e.span() {
                            Some(span) => err.at(source, span, "here"),
                            None => err,
                        }
                    })?;
                    rebase_paths(&mut table, dir, case_dir);
                    table
                }
                None => toml::Table::new(),
            };
            if let Some(inline) = inline {
                merge(&mut table, inline.clone());
            }
            let text = toml::to_string(&table).map_err(|e| {
                GateError::new(&case_source.name, format!("[config] cannot be merged: {e}"))
            })?;
            // Lines are the merged text's: the name says so, not the inherited file's.
            let mut name = format!("{case_name}/{CASE_FILE} [config]");
            if let Some((_, source)) = inherited {
                name.push_str(&format!(" (merged over {})", source.name));
            }
            SourceFile::new(name, virtual_path, text)
        }
    };
    Ok(Config::from_source(source, false, case_dir)?.expect("not a pyproject.toml"))
}

/// Tables merge key by key; any other value replaces the one below it.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(below)), toml::Value::Table(above)) => merge(below, above),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// Keeps the paths of a config inherited from `from` pointing where they did, once it is
/// read as if it sat in the case folder `to` (a descendant of `from`).
fn rebase_paths(table: &mut toml::Table, from: &Path, to: &Path) {
    let depth = to
        .strip_prefix(from)
        .map(|rest| rest.components().count())
        .unwrap_or(0);
    if depth == 0 {
        return;
    }
    let up = "../".repeat(depth);
    let rebase = |value: &mut toml::Value| {
        if let toml::Value::String(path) = value {
            if path != "builtin" && !Path::new(path.as_str()).is_absolute() {
                *path = format!("{up}{path}");
            }
        }
    };
    for key in ["owners_file", "pytest_root", "ledger"] {
        if let Some(value) = table.get_mut(key) {
            rebase(value);
        }
    }
    if let Some(toml::Value::Array(items)) = table.get_mut("policies") {
        items.iter_mut().for_each(rebase);
    }
}

/// `a/b/../c` → `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    PathBuf::from(crate::paths::normalize(&path.to_string_lossy()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_is_deep_for_tables_only() {
        let mut base: toml::Table =
            toml::from_str("policies = [\"builtin\"]\n[params]\na = 1\nb = 2\n").unwrap();
        let over: toml::Table = toml::from_str("policies = [\"x\"]\n[params]\nb = 3\n").unwrap();
        merge(&mut base, over);
        assert_eq!(base["policies"].as_array().unwrap().len(), 1);
        assert_eq!(base["params"]["a"].as_integer(), Some(1));
        assert_eq!(base["params"]["b"].as_integer(), Some(3));
    }

    #[test]
    fn inherited_paths_keep_pointing_at_the_same_files() {
        let mut table: toml::Table =
            toml::from_str("policies = [\"builtin\", \"..\"]\nowners_file = \"CODEOWNERS\"\n")
                .unwrap();
        rebase_paths(&mut table, Path::new("/s"), Path::new("/s/a/b"));
        assert_eq!(table["policies"][0].as_str(), Some("builtin"));
        assert_eq!(table["policies"][1].as_str(), Some("../../.."));
        assert_eq!(table["owners_file"].as_str(), Some("../../CODEOWNERS"));
    }

    #[test]
    fn normalize_is_lexical() {
        assert_eq!(normalize(Path::new("/a/b/../c/./d")), Path::new("/a/c/d"));
    }
}
