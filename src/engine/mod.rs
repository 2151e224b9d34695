//! Runs the policy scripts over the facts: a sandboxed Rhai engine, the bindings, and
//! the `report` / `require` functions scripts call.

pub mod bindings;
pub mod coverage;
pub mod policy;
mod proof;
pub mod selection;

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

use rhai::{Dynamic, Engine, EvalAltResult, Map, NativeCallContext, Position, Scope};

use crate::config::Limits;
use crate::document::{Node, Value};
use crate::error::GateError;
use crate::inputs::ids::IdSet;
use crate::inputs::owners::Owners;
use crate::inputs::{Deferred, Facts, INPUTS};
use policy::{Pack, PolicyDirResolver, Script};
use selection::Selection;

/// What a `report` call points at.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    None,
    /// A ledger entry (by index), optionally one of its fields.
    Entry {
        index: usize,
        field: Option<String>,
    },
    /// A top-level field of the ledger (`report(code, ledger, "max_window_days", ...)`).
    Ledger {
        field: Option<String>,
    },
    /// An `[[params.allow_inherited]]` entry in config.
    Allow {
        index: usize,
        field: Option<String>,
    },
    /// A line of a file of the suite (pytest rootdir-relative): where a test is skipped.
    /// With `find`, the nearest line at or above it that holds that text (the decorator
    /// of a marker skip); with `find` `pytestmark`, that line anywhere in the module.
    Source {
        file: String,
        line: usize,
        find: Option<String>,
    },
}

#[derive(Debug, Clone)]
pub struct RawReport {
    pub code: String,
    pub message: String,
    pub script: String,
    pub target: Target,
    pub test_id: Option<String>,
    /// Every test one report is about (the cases of a parametrized test, the tests one
    /// cause hid), when it is about more than one; `test_id` is the first.
    pub test_ids: Vec<String>,
}

#[derive(Debug, Default)]
pub struct Evaluation {
    pub reports: Vec<RawReport>,
    /// Enabled rules that ran: their inputs were there and their script got to them.
    pub evaluated: Vec<String>,
    /// Enabled rules that did not run: an input they need was not given, or their
    /// script stopped for one before it reached them.
    pub not_evaluated: Vec<String>,
    /// For each rule not evaluated, the inputs it waited for that were not given.
    pub absent: BTreeMap<String, Vec<String>>,
    /// Per script, in pack order (for `--trace`).
    pub timings: Vec<ScriptTiming>,
    /// What scripts said about how they judged (`note(code, message)`), each once.
    pub notes: Vec<Note>,
    /// The tests of the base the patch touched, as scripts found them, each once, by id.
    pub touched: Vec<Touched>,
}

/// A script's word on how a rule judged, shown with the report (e.g. that every freeze
/// was judged as new, for want of a base ledger).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Note {
    pub code: String,
    pub message: String,
}

/// A test of the base the patch touched, and how (`touched(test_id, cause)`, or
/// `touched(test_id, cause, to)` where it lives on under another id or name).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Touched {
    pub test_id: String,
    /// The default pack's: `removed`, `renamed-out`, `disabled`, `moved-out`, `retired`,
    /// `renamed`, `moved`, `edited`.
    pub cause: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

#[derive(Debug)]
pub struct ScriptTiming {
    pub script: String,
    /// Time spent running, not counting waits for inputs still loading.
    pub ran: Duration,
    /// Time spent waiting for inputs still loading.
    pub waited: Duration,
    pub reported: usize,
}

/// What a script sees under a binding's name: a value, or an input still loading,
/// waited for when a script first reads it.
#[derive(Clone)]
enum Binding {
    Ready(Dynamic),
    Loading(Arc<dyn LoadingInput>),
}

/// A loaded input as the engine sees it, whatever its type
/// (`crate::inputs::registry::with_loaded_inputs!`).
pub trait LoadingInput: Send + Sync {
    fn is_ready(&self) -> bool;
    /// Whether the input was given (one still loading was).
    fn is_given(&self) -> bool;
    /// The value once loaded, and how long this call waited for it.
    fn wait(&self) -> (Dynamic, Duration);
}

/// What scripts see of a loaded input's value: by default the value itself, a type
/// [`bindings::register`] gives methods to.
pub trait ScriptValue: Clone + Send + Sync + 'static {
    fn to_script(&self) -> Dynamic {
        Dynamic::from(self.clone())
    }
    /// Whether the core withholds the value from scripts although it was given (a run
    /// record FZ404 refuses): then it is not given, and its absence is no FZ001.
    fn withheld(&self) -> bool {
        false
    }
}

impl ScriptValue for IdSet {}
impl ScriptValue for crate::inputs::samples::Samples {}
impl ScriptValue for crate::inputs::junit::Results {}
impl ScriptValue for crate::inputs::coverage::Coverage {}
impl ScriptValue for crate::inputs::run_record::Runs {
    fn withheld(&self) -> bool {
        self.is_refused()
    }
}

/// `run_records`: an array of `#{file, commit, dirty, ledger, ledger_sha256, refused}`.
impl ScriptValue for Vec<crate::inputs::run_record::RecordHeader> {
    fn to_script(&self) -> Dynamic {
        let text = |v: &Option<String>| v.clone().map_or(Dynamic::UNIT, Dynamic::from);
        let records: rhai::Array = self
            .iter()
            .map(|h| {
                let mut map = Map::new();
                map.insert("file".into(), h.file.clone().into());
                map.insert("commit".into(), text(&h.commit));
                map.insert("dirty".into(), h.dirty.into());
                map.insert("ledger".into(), text(&h.ledger));
                map.insert("ledger_sha256".into(), text(&h.ledger_sha256));
                let refused: rhai::Array = h.refused.iter().map(|w| w.clone().into()).collect();
                map.insert("refused".into(), Dynamic::from_array(refused));
                Dynamic::from_map(map)
            })
            .collect();
        Dynamic::from_array(records)
    }
}
impl ScriptValue for crate::inputs::Hunks {}

/// `tampering`: an array of `#{file, line, construct, why, text}`.
impl ScriptValue for Vec<crate::inputs::tamper::Finding> {
    fn to_script(&self) -> Dynamic {
        let items: rhai::Array = self
            .iter()
            .map(|f| {
                let mut map = Map::new();
                map.insert("file".into(), f.file.clone().into());
                map.insert("line".into(), rhai::INT::from(f.line).into());
                map.insert("construct".into(), f.construct.into());
                map.insert("why".into(), f.why.into());
                map.insert("text".into(), f.text.clone().into());
                Dynamic::from_map(map)
            })
            .collect();
        Dynamic::from_array(items)
    }
}

/// `weakened`: `#{findings: [#{file, line, test, form, detail}], renames: [#{file, from,
/// to, line}], edited: [#{file, from, to, line}], uncompared: [#{file, why}]}`.
impl ScriptValue for crate::inputs::weakened::Weakened {
    fn to_script(&self) -> Dynamic {
        let findings: rhai::Array = self
            .findings
            .iter()
            .map(|w| {
                let mut map = Map::new();
                map.insert("file".into(), w.file.clone().into());
                map.insert("line".into(), rhai::INT::from(w.line).into());
                map.insert("test".into(), w.test.clone().into());
                map.insert("form".into(), w.form.into());
                map.insert("detail".into(), w.detail.clone().into());
                Dynamic::from_map(map)
            })
            .collect();
        let uncompared: rhai::Array = self
            .uncompared
            .iter()
            .map(|(file, why)| {
                let mut map = Map::new();
                map.insert("file".into(), file.clone().into());
                map.insert("why".into(), why.clone().into());
                Dynamic::from_map(map)
            })
            .collect();
        let pairs = |pairs: &[(String, crate::inputs::weakened::Counterpart)]| -> rhai::Array {
            pairs
                .iter()
                .map(|(file, r)| {
                    let mut map = Map::new();
                    map.insert("file".into(), file.clone().into());
                    map.insert("from".into(), r.from.clone().into());
                    map.insert("to".into(), r.to.clone().into());
                    map.insert("line".into(), rhai::INT::from(r.line).into());
                    Dynamic::from_map(map)
                })
                .collect()
        };
        let mut map = Map::new();
        map.insert("findings".into(), Dynamic::from_array(findings));
        map.insert("renames".into(), Dynamic::from_array(pairs(&self.renames)));
        map.insert("edited".into(), Dynamic::from_array(pairs(&self.edited)));
        map.insert("uncompared".into(), Dynamic::from_array(uncompared));
        Dynamic::from_map(map)
    }
}

/// `selection_changes`: an array of `#{file, what, places}`, `places` a map from each
/// withdrawing construct's name to its line.
impl ScriptValue for Vec<crate::inputs::tools::SelectionChange> {
    fn to_script(&self) -> Dynamic {
        let items: rhai::Array = self
            .iter()
            .map(|change| {
                let mut map = Map::new();
                map.insert("file".into(), change.file.clone().into());
                map.insert("what".into(), change.what.clone().into());
                let places: Map = change
                    .places
                    .iter()
                    .map(|(name, line)| ((*name).into(), Dynamic::from_int(rhai::INT::from(*line))))
                    .collect();
                map.insert("places".into(), Dynamic::from_map(places));
                Dynamic::from_map(map)
            })
            .collect();
        Dynamic::from_array(items)
    }
}

impl<T: ScriptValue> LoadingInput for Deferred<T> {
    fn is_ready(&self) -> bool {
        Deferred::is_ready(self)
    }
    fn is_given(&self) -> bool {
        Deferred::is_given(self) && !(self.is_ready() && self.get().is_some_and(T::withheld))
    }
    fn wait(&self) -> (Dynamic, Duration) {
        let (value, waited) = self.get_timed();
        let value = value.filter(|v| !v.withheld());
        (value.map_or(Dynamic::UNIT, T::to_script), waited)
    }
}

impl Binding {
    fn is_loading(&self) -> bool {
        matches!(self, Binding::Loading(input) if !input.is_ready())
    }

    fn is_given(&self) -> bool {
        match self {
            Binding::Ready(value) => !value.is_unit(),
            Binding::Loading(input) => input.is_given(),
        }
    }
}

#[derive(Default)]
struct RunState {
    script: String,
    codes: Vec<String>,
    enabled: FxHashMap<String, bool>,
    reports: Vec<RawReport>,
    notes: Vec<Note>,
    touched: Vec<Touched>,
    missing: Vec<String>,
    deadline: Option<Instant>,
    waited: Duration,
}

const MISSING_INPUT: &str = "freezegate: missing input";

thread_local! {
    /// The script this thread is running and what it has reported. Scripts run on
    /// several threads at once (one engine, shared), so run state is per thread.
    static RUN: RefCell<RunState> = RefCell::default();
    /// The bindings the script on this thread sees.
    static BINDINGS: RefCell<FxHashMap<&'static str, Binding>> = RefCell::default();
}

fn with_run<R>(f: impl FnOnce(&mut RunState) -> R) -> R {
    RUN.with(|run| f(&mut run.borrow_mut()))
}

fn binding(name: &str) -> Option<Dynamic> {
    let found = BINDINGS.with(|b| {
        b.borrow()
            .get_key_value(name)
            .map(|(key, binding)| (*key, binding.clone()))
    })?;
    let (key, input) = match found {
        (_, Binding::Ready(value)) => return Some(value),
        (key, Binding::Loading(input)) => (key, input),
    };
    let (value, waited) = input.wait();
    // Waiting for an input is not the script's running time.
    with_run(|run| {
        run.waited += waited;
        if let Some(deadline) = &mut run.deadline {
            *deadline += waited;
        }
    });
    BINDINGS.with(|b| b.borrow_mut().insert(key, Binding::Ready(value.clone())));
    Some(value)
}

/// What running one script produced.
struct ScriptRun {
    reports: Vec<RawReport>,
    notes: Vec<Note>,
    touched: Vec<Touched>,
    missing: Vec<String>,
    elapsed: Duration,
    waited: Duration,
    result: Result<(), Box<EvalAltResult>>,
}

pub struct ScriptEngine {
    engine: Engine,
    limits: Limits,
    /// The `owners` binding (config `owners_file`), when configured.
    owners: Option<Owners>,
    /// Imported modules' sources, for errors inside them.
    modules: policy::ModuleSources,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl ScriptEngine {
    pub fn new(
        limits: &Limits,
        pytest_root: String,
        repo_root: std::path::PathBuf,
        resolver: PolicyDirResolver,
    ) -> ScriptEngine {
        let modules = resolver.sources.clone();
        let mut engine = Engine::new();
        engine
            .set_max_operations(limits.operations)
            .set_max_call_levels(limits.call_depth)
            .set_max_expr_depths(limits.expr_depth, limits.expr_depth)
            .set_max_string_size(limits.string_size)
            .set_max_array_size(limits.array_size)
            .set_max_map_size(limits.map_size)
            .set_max_modules(64)
            .set_max_variables(10_000)
            .set_max_functions(10_000)
            // Rhai's string interner is one lock shared by every thread that runs a
            // script: scripts on two cores queued on it and ran at half speed.
            .set_max_strings_interned(0)
            .set_module_resolver(resolver);
        engine.disable_symbol("eval");
        // A script that stops itself early would silently check less.
        let no_exit = || -> Result<(), Box<EvalAltResult>> {
            Err("exit() is not available to policy scripts".into())
        };
        engine.register_fn("exit", no_exit);
        engine.register_fn("exit", move |_: Dynamic| no_exit());

        engine.on_print(move |text| {
            let script = with_run(|run| run.script.clone());
            eprintln!("[{script}] {text}");
        });
        engine.on_debug(|text, source, pos| {
            eprintln!(
                "[{}:{}] {text}",
                source.unwrap_or("script"),
                pos.line().unwrap_or(0)
            );
        });
        engine.on_progress(move |ops| {
            if ops % 4096 != 0 {
                return None;
            }
            let deadline = with_run(|run| run.deadline)?;
            (Instant::now() > deadline).then(|| Dynamic::from("wall-time limit"))
        });

        #[allow(deprecated)]
        engine.on_var(move |name, index, context| {
            if index > 0
                || crate::inputs::input_named(name).is_none()
                || context.scope().contains(name)
            {
                return Ok(None);
            }
            Ok(Some(binding(name).unwrap_or(Dynamic::UNIT)))
        });

        bindings::register(&mut engine, pytest_root, repo_root);
        register_report(&mut engine);
        engine.register_fn(
            "require",
            move |context: NativeCallContext, name: &str| -> Result<Dynamic, Box<EvalAltResult>> {
                if crate::inputs::input_named(name).is_none() {
                    let known: Vec<&str> = INPUTS.iter().map(|input| input.name).collect();
                    return Err(EvalAltResult::ErrorRuntime(
                        format!(
                            "require(\"{name}\"): unknown input; inputs are {}",
                            known.join(", ")
                        )
                        .into(),
                        context.call_position(),
                    )
                    .into());
                }
                match binding(name) {
                    Some(value) if !value.is_unit() => Ok(value),
                    _ => {
                        // Recorded before throwing, so a script that catches the error still fails the gate.
                        with_run(|run| run.missing.push(name.to_string()));
                        Err(EvalAltResult::ErrorRuntime(
                            MISSING_INPUT.into(),
                            context.call_position(),
                        )
                        .into())
                    }
                }
            },
        );

        ScriptEngine {
            engine,
            limits: limits.clone(),
            owners: None,
            modules,
        }
    }

    /// Sets the `owners` binding every evaluation sees (from config `owners_file`).
    pub fn set_owners(&mut self, owners: Option<Owners>) {
        self.owners = owners;
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Runs every script that has an enabled rule and collects what they report.
    pub fn evaluate(
        &self,
        pack: &Pack,
        facts: &Facts,
        params: Option<&Node>,
        selection: &Selection,
    ) -> Result<Evaluation, GateError> {
        let mut evaluation = Evaluation::default();
        check_string_sizes(facts, &self.limits)?;
        let ledger = ledger_value(facts);
        let params = params_value(params);
        let mut shared: FxHashMap<&'static str, Binding> = FxHashMap::default();
        let mut set = |name: &'static str, value: Option<Dynamic>| {
            shared.insert(name, Binding::Ready(value.unwrap_or(Dynamic::UNIT)));
        };
        let derived: IdSet = facts.ledger.derived_skips().into_iter().collect();
        set("derived_skips", Some(Dynamic::from(derived)));
        set("today", Some(Dynamic::from(bindings::Date(facts.today))));
        set(
            "target_branch",
            facts.target_branch.clone().map(Dynamic::from),
        );
        set("owners", self.owners.clone().map(Dynamic::from));
        set("trusted_ref", facts.trusted_ref.clone().map(Dynamic::from));
        set("commit", facts.commit.clone().map(Dynamic::from));
        set("baseline", Some(baseline_value(&facts.baseline)));
        macro_rules! loading_bindings {
            ($($name:ident: $ty:ty,)*) => {
                $(shared.insert(
                    stringify!($name),
                    Binding::Loading(Arc::new(facts.loaded.$name.clone())),
                );)*
            };
        }
        crate::inputs::registry::with_loaded_inputs!(loading_bindings);

        let jobs: Vec<&Script> = pack
            .scripts
            .iter()
            .filter(|script| script.rules.iter().any(|r| selection.is_enabled(&r.code)))
            .collect();
        // Scripts that name an input still loading go last, so the others run meanwhile.
        let loading: Vec<&str> = shared
            .iter()
            .filter(|(_, binding)| binding.is_loading())
            .map(|(name, _)| *name)
            .collect();
        let mut order: Vec<usize> = (0..jobs.len()).collect();
        order.sort_by_cached_key(|&i| {
            loading
                .iter()
                .any(|name| jobs[i].source.text.contains(name))
        });
        // Scripts are independent: run them on every core, one engine shared.
        let next = std::sync::atomic::AtomicUsize::new(0);
        let workers = facts.jobs.min(jobs.len()).max(1);
        let worker = || {
            let mut done = Vec::new();
            loop {
                let position = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&index) = order.get(position) else {
                    break;
                };
                let script = jobs[index];
                done.push((
                    index,
                    self.run_script(script, selection, &shared, &ledger, &params),
                ));
            }
            done
        };
        let mut runs: Vec<(usize, ScriptRun)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (1..workers)
                .map(|_| crate::threads::spawn_scoped(scope, worker))
                .collect();
            let mut runs = worker();
            for handle in handles {
                runs.extend(
                    handle
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                );
            }
            runs
        });
        runs.sort_by_key(|(index, _)| *index);
        let given = |input: &str| match crate::inputs::input_named(input).map(|i| i.presence) {
            Some(crate::inputs::Presence::Always) => true,
            _ => shared.get(input).is_some_and(Binding::is_given),
        };
        for rule in pack
            .rules
            .iter()
            .filter(|r| r.policy == policy::CORE_POLICY)
        {
            if selection.is_enabled(&rule.code) {
                let needs = rule.needs.as_deref().unwrap_or_default();
                let absent: Vec<String> = needs
                    .iter()
                    .filter(|input| !given(input))
                    .cloned()
                    .collect();
                match absent.is_empty() {
                    true => evaluation.evaluated.push(rule.code.clone()),
                    // A core rule `--select` did not name was not asked for.
                    false if !selection.is_named(&rule.code) => {}
                    false => {
                        evaluation.not_evaluated.push(rule.code.clone());
                        evaluation.absent.insert(rule.code.clone(), absent);
                    }
                }
            }
        }
        // Inputs FZ404 withholds (the refused run record and what came from it) are not
        // given, and not missing either: the rules that read them are not evaluated.
        let refused = facts
            .loaded
            .runs
            .get()
            .filter(|runs| runs.is_refused())
            .map(|runs| {
                runs.headers
                    .iter()
                    .filter(|h| !h.refused.is_empty())
                    .map(|h| h.file.as_str())
                    .collect::<Vec<_>>()
            });
        let withheld = |input: &str| {
            refused.is_some() && crate::inputs::load::FROM_RUNS.contains(&input) && !given(input)
        };
        for (index, run) in runs {
            let script = jobs[index];
            let count = run.reports.len();
            evaluation.reports.extend(run.reports);
            for note in run.notes {
                if !evaluation.notes.contains(&note) {
                    evaluation.notes.push(note);
                }
            }
            evaluation.touched.extend(run.touched);
            let mut outcome = rule_outcomes(script, selection, &run.missing, &given);
            outcome.missing.retain(|(input, _)| !withheld(input));
            if run.missing.is_empty() {
                if let Err(err) = run.result {
                    return Err(script_error(script, &err, &self.limits, &self.modules));
                }
            }
            evaluation
                .reports
                .extend(missing_input_reports(script, &outcome.missing));
            evaluation.evaluated.extend(outcome.evaluated);
            evaluation.not_evaluated.extend(outcome.not_evaluated);
            evaluation.absent.extend(outcome.absent);
            evaluation.timings.push(ScriptTiming {
                script: script.name.clone(),
                ran: run.elapsed.saturating_sub(run.waited),
                waited: run.waited,
                reported: count,
            });
        }
        if let Some(files) = &refused {
            evaluation.notes.push(Note {
                code: "FZ404".into(),
                message: format!(
                    "{} of another commit or ledger feeds no rule: the rules that read it were not evaluated",
                    crate::words::join_and(files)
                ),
            });
        }
        evaluation.evaluated.sort();
        evaluation.not_evaluated.sort();
        evaluation.touched.sort();
        evaluation.touched.dedup();
        Ok(evaluation)
    }

    /// Runs one script on this thread with fresh copies of the mutable bindings, so one
    /// script cannot change what another sees.
    fn run_script(
        &self,
        script: &Script,
        selection: &Selection,
        shared: &FxHashMap<&'static str, Binding>,
        ledger: &Dynamic,
        params: &Dynamic,
    ) -> ScriptRun {
        BINDINGS.with(|b| {
            let mut b = b.borrow_mut();
            b.clone_from(shared);
            b.insert("ledger", Binding::Ready(ledger.clone().into_shared()));
            b.insert("params", Binding::Ready(params.clone().into_shared()));
        });
        let started = Instant::now();
        with_run(|run| {
            *run = RunState {
                script: script.name.clone(),
                codes: script.rules.iter().map(|r| r.code.clone()).collect(),
                enabled: script
                    .rules
                    .iter()
                    .map(|r| (r.code.clone(), selection.is_enabled(&r.code)))
                    .collect(),
                reports: Vec::new(),
                notes: Vec::new(),
                touched: Vec::new(),
                missing: Vec::new(),
                deadline: Some(started + Duration::from_millis(self.limits.wall_time_ms)),
                waited: Duration::ZERO,
            };
        });
        let result = self
            .engine
            .run_ast_with_scope(&mut Scope::new(), &script.ast);
        let (reports, notes, touched, missing, waited) = with_run(|run| {
            (
                std::mem::take(&mut run.reports),
                std::mem::take(&mut run.notes),
                std::mem::take(&mut run.touched),
                std::mem::take(&mut run.missing),
                run.waited,
            )
        });
        BINDINGS.with(|b| b.borrow_mut().clear());
        ScriptRun {
            reports,
            notes,
            touched,
            missing,
            elapsed: started.elapsed(),
            waited,
            result,
        }
    }
}

/// Which enabled rules of a script ran, and the required inputs that were missing with
/// the rules each one kept from running.
struct RuleOutcomes {
    evaluated: Vec<String>,
    not_evaluated: Vec<String>,
    absent: BTreeMap<String, Vec<String>>,
    missing: Vec<(String, Vec<String>)>,
}

/// A rule that declares its `needs` ran when they were all given (its script reaches it
/// before any `require` of an input it does not need); one that does not ran only when
/// its script ran to the end. `missing` are the inputs the script stopped at.
fn rule_outcomes(
    script: &Script,
    selection: &Selection,
    missing: &[String],
    given: &dyn Fn(&str) -> bool,
) -> RuleOutcomes {
    let mut outcomes = RuleOutcomes {
        evaluated: Vec::new(),
        not_evaluated: Vec::new(),
        absent: BTreeMap::new(),
        missing: Vec::new(),
    };
    // A script that `require`s an input makes it required for its undeclared rules.
    let mut kept_from = |input: &str, code: &str, declared: bool| {
        let required = crate::inputs::input_named(input)
            .is_none_or(|i| i.presence == crate::inputs::Presence::Required);
        if declared && !required {
            return;
        }
        match outcomes.missing.iter_mut().find(|(name, _)| name == input) {
            Some((_, codes)) => codes.push(code.to_string()),
            None => outcomes
                .missing
                .push((input.to_string(), vec![code.to_string()])),
        }
    };
    for rule in script
        .rules
        .iter()
        .filter(|r| selection.is_enabled(&r.code))
    {
        let absent: Vec<&str> = match &rule.needs {
            Some(needs) => needs
                .iter()
                .map(String::as_str)
                .filter(|input| !given(input))
                .collect(),
            None => missing.iter().map(String::as_str).collect(),
        };
        // A rule that waits on an optional input is simply not evaluated without it: its
        // required inputs are not called missing on its behalf.
        let waits_on_optional = rule.needs.is_some()
            && absent.iter().any(|input| {
                crate::inputs::input_named(input)
                    .is_some_and(|i| i.presence == crate::inputs::Presence::Optional)
            });
        if !waits_on_optional {
            for input in &absent {
                kept_from(input, &rule.code, rule.needs.is_some());
            }
        }
        match absent.is_empty() {
            true => outcomes.evaluated.push(rule.code.clone()),
            false => {
                outcomes.not_evaluated.push(rule.code.clone());
                let absent = absent.iter().map(|input| input.to_string()).collect();
                outcomes.absent.insert(rule.code.clone(), absent);
            }
        }
    }
    outcomes
}

fn missing_input_reports(script: &Script, missing: &[(String, Vec<String>)]) -> Vec<RawReport> {
    missing
        .iter()
        .map(|(input, codes)| RawReport {
            code: policy::INPUT_MISSING.into(),
            message: format!(
                "{} needs `{input}`, which was not given: give {}; not evaluated: {}",
                script.name,
                crate::inputs::hint_for(input),
                codes.join(", ")
            ),
            script: policy::CORE_POLICY.into(),
            target: Target::None,
            test_id: None,
            test_ids: Vec::new(),
        })
        .collect()
}

/// What a report is about: a ledger entry, a map (an allow entry, the ledger, or one
/// holding only `test_id`), or nothing in particular.
enum About<'a> {
    Nothing,
    Entry(&'a bindings::Freeze),
    Map(&'a Map),
}

fn register_report(engine: &mut Engine) {
    fn touched(test_id: &str, cause: &str, to: Option<String>) {
        with_run(|state| {
            state.touched.push(Touched {
                test_id: test_id.to_string(),
                cause: cause.to_string(),
                to,
            })
        });
    }
    engine.register_fn("touched", |test_id: &str, cause: &str| {
        touched(test_id, cause, None)
    });
    engine.register_fn("touched", |test_id: &str, cause: &str, to: &str| {
        touched(test_id, cause, Some(to.to_string()))
    });
    engine.register_fn(
        "note",
        |ctx: NativeCallContext, code: &str, message: Dynamic| -> Result<(), Box<EvalAltResult>> {
            with_run(|state| {
                if !state.codes.iter().any(|c| c == code) {
                    return Err(EvalAltResult::ErrorRuntime(
                        format!(
                            "note(\"{code}\", ...): this script's RULES declare only {}",
                            state.codes.join(", ")
                        )
                        .into(),
                        ctx.call_position(),
                    )
                    .into());
                }
                if state.enabled.get(code).copied().unwrap_or(false) {
                    state.notes.push(Note {
                        code: code.to_string(),
                        message: message.to_string(),
                    });
                }
                Ok(())
            })
        },
    );
    /// Records one report of the script running on this thread about `about`.
    fn record(
        context: &NativeCallContext,
        code: &str,
        about: About,
        field: Option<&str>,
        message: Dynamic,
    ) -> Result<(), Box<EvalAltResult>> {
        with_run(|state| {
            if !state.codes.iter().any(|c| c == code) {
                let declared = state.codes.join(", ");
                return Err(EvalAltResult::ErrorRuntime(
                    format!("report(\"{code}\", ...): this script's RULES declare only {declared}")
                        .into(),
                    context.call_position(),
                )
                .into());
            }
            if !state.enabled.get(code).copied().unwrap_or(false) {
                return Ok(());
            }
            let field = field.filter(|f| !f.is_empty()).map(str::to_string);
            let index = |value: Option<Dynamic>| {
                value
                    .and_then(|v| v.as_int().ok())
                    .and_then(|i| usize::try_from(i).ok())
            };
            let test_id = |value: Option<Dynamic>| value.and_then(|v| v.into_string().ok());
            let mut test_ids = Vec::new();
            let (target, test_id) = match about {
                About::Nothing => (Target::None, None),
                About::Entry(entry) => {
                    let target = match index(Some(entry.field("index"))) {
                        Some(index) => Target::Entry { index, field },
                        None => Target::None,
                    };
                    (target, test_id(Some(entry.field("test_id"))))
                }
                About::Map(map) => {
                    let target = if let Some(index) = index(map.get("allow_index").cloned()) {
                        Target::Allow { index, field }
                    } else if let Some(index) = index(map.get("index").cloned()) {
                        Target::Entry { index, field }
                    } else if map.contains_key("freezes") && map.contains_key("file") {
                        Target::Ledger { field }
                    } else if let (Some(file), Some(line)) = (
                        map.get("file").and_then(|f| f.clone().into_string().ok()),
                        index(map.get("line").cloned()),
                    ) {
                        Target::Source {
                            file,
                            line,
                            find: map.get("find").and_then(|f| f.clone().into_string().ok()),
                        }
                    } else {
                        Target::None
                    };
                    if let Some(ids) = map
                        .get("test_ids")
                        .and_then(|v| v.clone().try_cast::<rhai::Array>())
                    {
                        test_ids = ids
                            .into_iter()
                            .filter_map(|id| id.into_string().ok())
                            .collect();
                    }
                    let first =
                        test_id(map.get("test_id").cloned()).or_else(|| test_ids.first().cloned());
                    (target, first)
                }
            };
            let script = state.script.clone();
            state.reports.push(RawReport {
                code: code.to_string(),
                message: message.to_string(),
                script,
                target,
                test_id,
                test_ids,
            });
            Ok(())
        })
    }
    engine.register_fn(
        "report",
        |ctx: NativeCallContext, code: &str, message: Dynamic| {
            record(&ctx, code, About::Nothing, None, message)
        },
    );
    engine.register_fn(
        "report",
        |ctx: NativeCallContext, code: &str, entry: Map, message: Dynamic| {
            record(&ctx, code, About::Map(&entry), None, message)
        },
    );
    engine.register_fn(
        "report",
        |ctx: NativeCallContext, code: &str, entry: bindings::Freeze, message: Dynamic| {
            record(&ctx, code, About::Entry(&entry), None, message)
        },
    );
    engine.register_fn(
        "report",
        |ctx: NativeCallContext, code: &str, test_id: &str, message: Dynamic| {
            let mut map = Map::new();
            map.insert("test_id".into(), test_id.into());
            record(&ctx, code, About::Map(&map), None, message)
        },
    );
    engine.register_fn(
        "report",
        |ctx: NativeCallContext, code: &str, entry: Map, field: &str, message: Dynamic| {
            record(&ctx, code, About::Map(&entry), Some(field), message)
        },
    );
    engine.register_fn(
        "report",
        |ctx: NativeCallContext,
         code: &str,
         entry: bindings::Freeze,
         field: &str,
         message: Dynamic| {
            record(&ctx, code, About::Entry(&entry), Some(field), message)
        },
    );
}

/// A ledger string longer than scripts may hold is an input error naming the value,
/// not a script failure far from its cause.
fn check_string_sizes(facts: &Facts, limits: &Limits) -> Result<(), GateError> {
    fn walk(node: &Node, limit: usize) -> Option<&Node> {
        match &node.value {
            Value::Str(s) if s.len() > limit => Some(node),
            Value::Seq(items) => items.iter().find_map(|i| walk(i, limit)),
            Value::Map(entries) => entries.iter().find_map(|(_, v)| walk(v, limit)),
            _ => None,
        }
    }
    let ledger = &facts.ledger;
    let source = &ledger.source;
    let too_long = walk(&ledger.root, limits.string_size).or_else(|| {
        ledger
            .entries
            .iter()
            .find_map(|entry| walk(&entry.node, limits.string_size))
    });
    match too_long {
        None => Ok(()),
        Some(node) => {
            let len = node.span.len();
            Err(GateError::new(
                &source.name,
                format!(
                    "holds a {len}-byte string, over the {}-byte limit for values scripts see",
                    limits.string_size
                ),
            )
            .at(source, node.span.start..node.span.start, "this value")
            .with_help("shorten the value, or raise [limits] string_size in config"))
        }
    }
}

/// `ledger` as scripts see it: its top-level keys, `freezes` as entries (with `index`),
/// and `file`.
fn ledger_value(facts: &Facts) -> Dynamic {
    let ledger = &facts.ledger;
    // The top-level keys but `freezes`, which is built from the entries below.
    let mut map = match &ledger.root.value {
        Value::Map(entries) => bindings::to_map(entries.iter().filter(|(key, _)| key != "freezes")),
        _ => Map::new(),
    };
    let freezes: rhai::Array = (0..ledger.entries.len())
        .map(|index| Dynamic::from(bindings::Freeze::new(Arc::clone(&ledger.entries), index)))
        .collect();
    map.insert("freezes".into(), Dynamic::from_array(freezes));
    map.insert("file".into(), ledger.source.name.as_str().into());
    map.insert("has_base".into(), ledger.has_base.into());
    // What run and proof records must name (FZ404); hashed only when records were given.
    if facts.loaded.runs.is_given() || facts.loaded.proof.is_given() {
        map.insert("sha256".into(), ledger.sha256().into());
    }
    if !map.contains_key("max_window_days") {
        map.insert("max_window_days".into(), Dynamic::UNIT);
    }
    Dynamic::from_map(map)
}

/// `baseline` as scripts see it: its entries, each with every field written and
/// `baseline_index`.
fn baseline_value(baseline: &crate::inputs::baseline::Baseline) -> Dynamic {
    let entries: rhai::Array = baseline
        .entries
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let mut map = bindings::to_dynamic(&entry.node)
                .try_cast::<Map>()
                .unwrap_or_default();
            map.insert("baseline_index".into(), (i as i64).into());
            Dynamic::from_map(map)
        })
        .collect();
    let mut map = Map::new();
    map.insert("entries".into(), Dynamic::from_array(entries));
    map.insert(
        "file".into(),
        baseline.name.clone().map_or(Dynamic::UNIT, Dynamic::from),
    );
    Dynamic::from_map(map)
}

/// `params` as scripts see it; allow entries carry `allow_index` so reports can point at them.
fn params_value(params: Option<&Node>) -> Dynamic {
    let Some(node) = params else {
        return Dynamic::from_map(Map::new());
    };
    let mut map = bindings::to_dynamic(node)
        .try_cast::<Map>()
        .unwrap_or_default();
    if let Some(Value::Seq(items)) = node.get("allow_inherited").map(|n| &n.value) {
        let entries: rhai::Array = items
            .iter()
            .enumerate()
            .map(
                |(i, item)| match bindings::to_dynamic(item).try_cast::<Map>() {
                    Some(mut entry) => {
                        entry.insert("allow_index".into(), (i as i64).into());
                        Dynamic::from_map(entry)
                    }
                    None => bindings::to_dynamic(item),
                },
            )
            .collect();
        map.insert("allow_inherited".into(), Dynamic::from_array(entries));
    }
    Dynamic::from_map(map)
}

/// A script that failed to run: exit 2, naming the script and pointing at the line.
fn script_error(
    script: &Script,
    err: &EvalAltResult,
    limits: &Limits,
    modules: &Mutex<HashMap<String, crate::source::Source>>,
) -> GateError {
    let (message, help) = match err.unwrap_inner() {
        EvalAltResult::ErrorTerminated(..) => (
            format!("script ran longer than its wall-time limit ({} ms)", limits.wall_time_ms),
            Some("raise [limits] wall_time_ms in config if the script is right, or make it cheaper"),
        ),
        EvalAltResult::ErrorTooManyOperations(..) => (
            format!("script exceeded its operation limit ({})", limits.operations),
            Some("raise [limits] operations in config, or use native set operations instead of loops"),
        ),
        EvalAltResult::ErrorStackOverflow(..) => (
            format!("script exceeded its call-depth limit ({})", limits.call_depth),
            Some("raise [limits] call_depth in config"),
        ),
        EvalAltResult::ErrorDataTooLarge(what, ..) => (
            format!("script exceeded a size limit: {what}"),
            Some("raise [limits] string_size / array_size / map_size in config"),
        ),
        _ => (format!("script failed: {}", strip_position(&err.to_string())), None),
    };
    let (place, pos) = innermost_place(err);
    // The innermost position is in the script, or in an imported module whose source
    // the resolver kept: point there, and say where the script called it.
    let module = (!place.is_empty() && place != script.name)
        .then(|| lock(modules).get(&place).cloned())
        .flatten();
    let (name, source, pos) = match &module {
        Some(source) => (place.as_str(), source, pos),
        None if place.is_empty() || place == script.name => {
            (script.name.as_str(), &script.source, pos)
        }
        None => (script.name.as_str(), &script.source, err.position()),
    };
    let mut error = GateError::script(name, message);
    if !pos.is_none() {
        let at = policy::position_offset(source, pos);
        let end = source.text[at..]
            .find('\n')
            .map_or(source.text.len(), |i| at + i);
        error = error.at(source, at..end.max(at), "here");
    }
    let called_from = match (&module, err.position().line()) {
        (Some(_), Some(line)) => Some(format!(
            "reached from {}:{line}:{}",
            script.name,
            err.position().position().unwrap_or(1)
        )),
        _ => None,
    };
    match (help, called_from) {
        (Some(help), Some(from)) => error.with_help(format!("{from}; {help}")),
        (Some(help), None) => error.with_help(help),
        (None, Some(from)) => error.with_help(from),
        (None, None) => error,
    }
}

/// Where the error really happened: the source name (`""` for the running script itself)
/// and position of the innermost call or module the error passed through.
fn innermost_place(err: &EvalAltResult) -> (String, Position) {
    let mut best = (String::new(), err.position());
    let mut current = err;
    loop {
        let (source, inner) = match current {
            EvalAltResult::ErrorInFunctionCall(_, source, inner, _) => (source, inner),
            EvalAltResult::ErrorInModule(source, inner, _) => (source, inner),
            _ => break,
        };
        if !inner.position().is_none() {
            best = (source.clone(), inner.position());
        }
        current = inner;
    }
    best
}

fn strip_position(message: &str) -> String {
    match message.rfind(" (line ") {
        Some(i) if message.ends_with(')') => message[..i].to_string(),
        _ => message.to_string(),
    }
}
