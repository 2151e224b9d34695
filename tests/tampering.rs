//! The pytest process belongs to the patch: each red-team patch that made a failing test
//! stop failing from inside pytest (a shadowing `pytest.py`, a hook that zeroes the
//! failure count, hooks and fixtures that replace what pytest calls, a hook hidden by its
//! `__module__` or that unregisters itself, a property that asserts only under a proof)
//! judged as the shipped workflow judges a pull request — `freezegate run --check` with
//! the base, its run record and the trusted ref — must end with exit 1 or 2, never 0,
//! with its rule at its line. And the inputs the plugin's first call reads are regular
//! files of the repository.
//!
//! Needs the venv of `.ci/python-env`; without it these tests fail, they never skip.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::project::*;
use common::text;
use serde_json::Value;

/// The patch breaks `price` for one case: `test_cases[3]` fails, honestly.
fn break_price(project: &Project) {
    edit(
        project,
        "tests/test_app.py",
        "def price(amount):\n    return max(0, amount)",
        "def price(amount):\n    return 0 if amount == 3 else max(0, amount)",
    );
}

/// The base on `main`, then `patch` (after breaking `price`) on a branch, run and judged
/// as the shipped workflow does: the verdict's exit status, report and output.
fn judged(patch: impl Fn(&Project)) -> (Option<i32>, Value, String) {
    let project = Project::new();
    project.base_then_patch(|p| {
        break_price(p);
        patch(p);
    });
    project.supervised(Some(SHIPPED), &[])
}

fn found(report: &Value) -> Vec<String> {
    let mut found = codes(report);
    found.dedup();
    found
}

/// The verdict is a refusal (exit 1) naming `code` at `file:line`.
#[track_caller]
fn refused_at(verdict: &(Option<i32>, Value, String), code: &str, file: &str, line: u64) {
    let (exit, report, said) = verdict;
    assert_eq!(*exit, Some(1), "{report:#}\n{said}");
    let at: Vec<(String, u64)> = report["violations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["code"] == code)
        .map(|v| {
            (
                v["file"].as_str().unwrap_or("").to_string(),
                v["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert!(
        at.contains(&(file.to_string(), line)),
        "no {code} at {file}:{line} (found {at:?}) in {report:#}\n{said}"
    );
}

#[test]
fn the_controls_pass_a_benign_patch_and_fail_an_honest_failure() {
    // A patch adding an ordinary test module passes, its own autouse fixture with it
    // (it reaches the module's new tests alone).
    let project = Project::new();
    project.base_then_patch(|p| {
        p.write(
            "tests/test_more.py",
            "import pytest\n\nfrom tests.test_app import price\n\n\n@pytest.fixture(autouse=True)\ndef plain_prices(monkeypatch):\n    monkeypatch.setenv(\"PRICE_MODE\", \"plain\")\n\n\ndef test_zero():\n    with pytest.raises(TypeError):\n        price(None)\n    assert price(0) == 0\n",
        );
    });
    let (exit, report, said) = project.supervised(Some(SHIPPED), &[]);
    assert_eq!((exit, found(&report)), (Some(0), vec![]), "{said}");
    // The broken price, untampered: pytest exits 1 and the record's outcome says so.
    let verdict = judged(nothing);
    refused_at(&verdict, "FZ609", "tests/test_app.py", 15);
    common::assert_contains(
        violation(&verdict.1, "FZ609")["message"].as_str().unwrap(),
        "the run record shows 1 test failed or errored: tests/test_app.py::test_cases[3] (failed)",
    );
}

const ZERO_THE_FAILURES: &str = r#"import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session):
    result = yield
    session.testsfailed = 0
    return result
"#;

#[test]
fn a_runtestloop_wrapper_that_zeroes_the_failures_is_refused_by_the_record_s_outcomes() {
    let verdict = judged(|p| p.write("conftest.py", ZERO_THE_FAILURES));
    let (_, report, said) = &verdict;
    assert_eq!(
        found(report),
        ["FZ502", "FZ606", "FZ607", "FZ609"],
        "{report:#}\n{said}"
    );
    refused_at(&verdict, "FZ607", "conftest.py", 7);
    refused_at(&verdict, "FZ606", "conftest.py", 4);
    refused_at(&verdict, "FZ609", "tests/test_app.py", 15);
    common::assert_contains(
        said,
        "pytest exited with status 0, but 1 test failed or errored",
    );
}

/// Rewrites the plugin's outcomes at the end of the session, finding it by what it
/// holds (no name of freezegate's to scan for) and adding a property that never ran.
const REWRITE_THE_RECORD: &str = r#"import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    for plugin in session.config.pluginmanager.get_plugins():
        outcomes = getattr(plugin, "tests", None)
        if isinstance(outcomes, dict):
            for entry in outcomes.values():
                entry["outcome"] = "passed"
            outcomes["tests/test_app.py::test_never_ran"] = {"outcome": "passed"}
"#;

#[test]
fn a_record_rewritten_after_the_tests_reported_is_exit_2_naming_the_test() {
    let verdict = judged(|p| p.write("conftest.py", REWRITE_THE_RECORD));
    let (exit, report, said) = &verdict;
    assert_eq!(*exit, Some(2), "{report:#}\n{said}");
    common::assert_contains(
        said,
        "the record disagrees with the rows the plugin sent as each test finished: tests/test_app.py::test_cases[3] finished failed, and the record says passed",
    );
    // The check still ran: the hook that did it is at its line.
    let hook = violation(report, "FZ606");
    assert_eq!(
        (hook["file"].as_str(), hook["line"].as_u64()),
        (Some("conftest.py"), Some(4)),
        "{report:#}"
    );
}

/// Finds the plugin's pipe by what it holds (no name of freezegate's), sends a row
/// saying the failing test passed with the real token, and ends the process before
/// pytest reports the failure.
const FORGE_A_ROW_AND_EXIT: &str = r#"import gc
import os

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    if item.name == "test_cases[3]":
        pipe = next(o for o in gc.get_objects() if hasattr(o, "_token") and hasattr(o, "_stream"))
        pipe.row(item.nodeid, {"outcome": "passed"})
        os._exit(0)
"#;

#[test]
fn a_row_forged_with_the_real_token_then_os_exit_is_never_a_pass() {
    let verdict = judged(|p| p.write("conftest.py", FORGE_A_ROW_AND_EXIT));
    let (exit, report, said) = &verdict;
    // No record came: the run is not judged (exit 2), the partial record kept.
    assert_eq!(*exit, Some(2), "{report:#}\n{said}");
    common::assert_contains(said, "no complete run record");
    common::assert_contains(said, "marked incomplete");
}

#[test]
fn a_pytest_py_at_the_root_is_not_imported_and_is_refused_from_the_diff() {
    // Under `python -m pytest` the working directory would come first on the path: this
    // module would be pytest, and could forge the record.
    let verdict = judged(|p| {
        p.write(
            "pytest.py",
            "import sys\n\nprint('forged pytest')\nsys.exit(0)\n",
        )
    });
    let (_, report, said) = &verdict;
    assert!(!said.contains("forged pytest"), "{said}");
    refused_at(&verdict, "FZ607", "pytest.py", 1);
    assert!(found(report).contains(&"FZ609".to_string()), "{report:#}");
}

#[test]
fn a_tool_module_imported_from_the_repository_is_fz608() {
    // A `hypothesis` package inside the repository, put first on the path by a conftest
    // (as `pythonpath` or rootdir-relative imports would), stands in for Hypothesis: the
    // plugin records where it came from.
    let project = Project::new();
    project.base_then_patch(|p| {
        p.write(
            "conftest.py",
            "import os\nimport sys\n\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), \"vendor\"))\n",
        );
        p.write("vendor/hypothesis/__init__.py", "# a stand-in\n");
        p.write(
            "tests/test_shim.py",
            "def test_shim():\n    import hypothesis\n    assert hypothesis\n",
        );
        p.git(&["rm", "-q", "tests/test_props.py"]);
    });
    let (exit, report, said) = project.supervised(Some(SHIPPED), &[]);
    assert_eq!(exit, Some(1), "{report:#}\n{said}");
    let v = violation(&report, "FZ608");
    common::assert_contains(
        v["message"].as_str().unwrap(),
        "the run imported hypothesis from vendor/hypothesis/__init__.py, a file in the repository, not the installed hypothesis",
    );
    // The diff alone says it too.
    let tool_module = report["violations"]
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v["code"] == "FZ607" && v["file"] == "vendor/hypothesis/__init__.py");
    assert!(tool_module, "{report:#}");
}

const PYFUNC_CALL: &str = r#"import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    return True  # the test's body never runs
"#;

#[test]
fn hooks_the_old_census_did_not_list_are_fz606_at_their_line() {
    let verdict = judged(|p| p.write("conftest.py", PYFUNC_CALL));
    refused_at(&verdict, "FZ606", "conftest.py", 4);
    common::assert_contains(
        &verdict.1.to_string(),
        "adds an implementation of pytest_pyfunc_call",
    );
}

const DISGUISED: &str = r#"import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        report.outcome = "passed"
    return report


pytest_runtest_makereport.__module__ = "_pytest.runner"
"#;

#[test]
fn a_hook_whose_module_says_pytest_is_judged_by_its_code_s_file() {
    let verdict = judged(|p| p.write("conftest.py", DISGUISED));
    refused_at(&verdict, "FZ606", "conftest.py", 4);
}

const SELF_UNREGISTERING: &str = r#"import pytest


class Quiet:
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        report.outcome = "passed"
        return report

    def pytest_runtest_logfinish(self, nodeid, location):
        pass


quiet = Quiet()


def pytest_configure(config):
    config.pluginmanager.register(quiet, "quiet")


def pytest_collection_finish(session):
    pass


def pytest_sessionfinish(session):
    session.config.pluginmanager.unregister(quiet)
"#;

#[test]
fn a_hook_that_unregisters_itself_before_the_census_is_still_seen() {
    let verdict = judged(|p| p.write("conftest.py", SELF_UNREGISTERING));
    refused_at(&verdict, "FZ606", "conftest.py", 5);
    refused_at(&verdict, "FZ607", "conftest.py", 19);
    refused_at(&verdict, "FZ607", "conftest.py", 27);
}

const PLUGIN_MODULE: &str = r#"import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    outcome = yield
    outcome.force_result(None)
"#;

#[test]
fn hooks_loaded_through_pytest_plugins_are_in_the_census() {
    let verdict = judged(|p| {
        p.write("tests/helpers/__init__.py", "");
        p.write("tests/helpers/quiet.py", PLUGIN_MODULE);
        p.write(
            "conftest.py",
            "pytest_plugins = [\"tests.helpers.quiet\"]\n",
        );
    });
    refused_at(&verdict, "FZ606", "tests/helpers/quiet.py", 4);
}

const SWAP_THE_FUNCTION: &str = r#"import pytest


@pytest.fixture(autouse=True)
def quiet(request):
    request.node.obj = lambda *args, **kwargs: None
    yield
"#;

#[test]
fn an_autouse_fixture_in_the_test_module_that_swaps_the_function_is_fz607() {
    let verdict = judged(|p| {
        append_to_the_app_tests(
            p,
            &format!("\n\n{}", SWAP_THE_FUNCTION.replace("import pytest\n\n", "")),
        )
    });
    let (_, report, _) = &verdict;
    // The fixture's assignment, appended after the app's tests.
    refused_at(&verdict, "FZ607", "tests/test_app.py", 36);
    common::assert_contains(
        violation(report, "FZ607")["message"].as_str().unwrap(),
        "adds \"request.node.obj = lambda *args, **kwargs: None\" (obj): it replaces the function pytest calls for a test",
    );
}

/// Puts `price` back for every test of the module: nothing the static scan names (a
/// monkeypatch of the code under test is ordinary in a test), so the census lists it.
const RESTORE_THE_PRICE: &str = r#"

@pytest.fixture(autouse=True)
def steady_prices(monkeypatch):
    monkeypatch.setattr(f"{__name__}.price", lambda amount: max(0, amount))
"#;

/// The app's test module with `fixture` appended (after the patch broke `price`) is
/// refused with FZ606 at `line` of it, the only finding (the broken case passes), its
/// message saying `message`.
#[track_caller]
fn an_appended_fixture_is_fz606(fixture: &str, line: u64, message: &str) {
    let verdict = judged(|p| append_to_the_app_tests(p, fixture));
    let (_, report, said) = &verdict;
    refused_at(&verdict, "FZ606", "tests/test_app.py", line);
    assert_eq!(
        found(report),
        ["FZ606"],
        "the broken case passes: the fixture is the one finding\n{said}"
    );
    common::assert_contains(
        violation(report, "FZ606")["message"].as_str().unwrap(),
        message,
    );
}

fn append_to_the_app_tests(project: &Project, text: &str) {
    let before = std::fs::read_to_string(project.root.join("tests/test_app.py")).unwrap();
    project.write("tests/test_app.py", &format!("{before}{text}"));
}

#[test]
fn an_autouse_fixture_that_monkeypatches_the_code_under_test_is_fz606_at_its_line() {
    // At the fixture's decorator, as Python numbers a decorated function's first line.
    an_appended_fixture_is_fz606(
        RESTORE_THE_PRICE,
        APP.lines().count() as u64 + 3,
        "adds the autouse fixture steady_prices, which the base run did not have",
    );
}

/// The same fixture, not autouse: the module's `pytestmark` applies it to every test.
const RESTORE_THE_PRICE_BY_MARK: &str = r#"

pytestmark = pytest.mark.usefixtures("steady_prices")


@pytest.fixture
def steady_prices(monkeypatch):
    monkeypatch.setattr(f"{__name__}.price", lambda amount: max(0, amount))
"#;

#[test]
fn a_fixture_a_usefixtures_mark_applies_to_the_module_is_fz606_at_its_line() {
    an_appended_fixture_is_fz606(
        RESTORE_THE_PRICE_BY_MARK,
        APP.lines().count() as u64 + 6,
        "adds the fixture steady_prices, which a usefixtures mark of tests/test_app.py applies and the base run did not have",
    );
}

#[test]
fn a_conftest_fixture_the_ini_file_s_usefixtures_applies_is_fz606_at_its_line() {
    let verdict = judged(|p| {
        p.write(
            "conftest.py",
            "import pytest\n\n\n@pytest.fixture\ndef steady_prices(request, monkeypatch):\n    monkeypatch.setattr(request.module, \"price\", lambda amount: max(0, amount))\n",
        );
        edit(
            p,
            "pytest.ini",
            "freezegate = true\n",
            "freezegate = true\nusefixtures = steady_prices\n",
        );
    });
    let (_, report, said) = &verdict;
    refused_at(&verdict, "FZ606", "conftest.py", 4);
    common::assert_contains(
        violation(report, "FZ606")["message"].as_str().unwrap(),
        "conftest.py:4 adds the fixture steady_prices, which the ini file's usefixtures applies",
    );
    // The ini file and the conftest changed: FZ502 says so, a warning beside the refusal.
    assert_eq!(found(report), ["FZ502", "FZ606"], "{said}");
}

#[test]
fn a_property_that_asserts_only_under_a_proof_and_monkeypatching_the_plugin_are_fz607() {
    let verdict = judged(|p| {
        edit(
            p,
            "tests/test_props.py",
            "    assert price(amount) >= 0",
            "    import os\n    if os.environ.get(\"MUTANT_UNDER_TEST\"):\n        assert price(amount) >= 0",
        );
        p.write(
            "conftest.py",
            "import freezegate.plugin\n\n\ndef pytest_configure(config):\n    freezegate.plugin._PASSED = {\"outcome\": \"passed\"}\n",
        );
    });
    refused_at(&verdict, "FZ607", "tests/test_props.py", 10);
    refused_at(&verdict, "FZ607", "conftest.py", 1);
    refused_at(&verdict, "FZ607", "conftest.py", 5);
}

#[test]
fn a_ledger_that_is_a_link_to_a_device_or_a_fifo_is_exit_2_at_once() {
    let project = Project::new();
    let ledger = project.root.join("gate/freeze_ledger.json");
    for (what, make) in [
        (
            "a link to /dev/zero",
            "ln -sf /dev/zero gate/freeze_ledger.json",
        ),
        (
            "a FIFO",
            "rm -f gate/freeze_ledger.json && mkfifo gate/freeze_ledger.json",
        ),
        (
            "a link to /etc/hostname",
            "rm -f gate/freeze_ledger.json && ln -s /etc/hostname gate/freeze_ledger.json",
        ),
    ] {
        let made = Command::new("sh")
            .args(["-c", make])
            .current_dir(&project.root)
            .status()
            .unwrap();
        assert!(made.success(), "{make}");
        for args in [
            &["skips"][..],
            &["check", "--collected", "tests/__init__.py"][..],
        ] {
            let started = Instant::now();
            let out = hermetic(&mut Command::new(BIN))
                .args(args)
                .current_dir(&project.root)
                .output()
                .unwrap();
            let said = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{what}, {args:?}: {said}");
            common::assert_contains(&said, "gate/freeze_ledger.json");
            // A hang watchdog, not a timing target: a FIFO that blocked would never return.
            assert!(started.elapsed() < Duration::from_secs(20), "{what}: hung");
        }
        // The plugin's first call (`freezegate skips`) stops pytest with the same words.
        let out = project.pytest(&[]);
        assert_ne!(out.status.code(), Some(0), "{what}");
        common::assert_contains(
            &format!("{}{}", text(&out.stdout), text(&out.stderr)),
            "gate/freeze_ledger.json",
        );
    }
    assert!(ledger.symlink_metadata().is_ok());
}
