//! Debugging a policy: errors point at the right line of the right file (the script,
//! a function in it, or an imported module), `print`/`debug` reach stderr with the
//! script's name, and `--trace` shows what each script did.

mod common;

use common::World;

const RULES: &str = "const RULES = #{ ORG1: #{ name: \"org-rule\", severity: \"error\", summary: \"s\", help: \"h\" } };\n";

const LIB: &str = "// helpers
fn shout(text) {
    print(`lib says ${text}`);
    debug(text);
    text
}

fn boom(entry) {
    let n = 1;
    n + entry.owner.no_such_method()
}
";

fn org_world(script: &str) -> World {
    let mut world = World::passing();
    world.config = "policies = [\"builtin\", \"org\"]\n".into();
    world.files.push(("org/lib.rhai".into(), LIB.into()));
    world
        .files
        .push(("org/rule.rhai".into(), format!("{RULES}{script}")));
    world
}

fn run(world: &World) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = world.run_in(dir.path(), "json");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_error_inside_an_imported_module_points_into_the_module() {
    let world =
        org_world("import \"lib\" as lib;\n\nfor e in ledger.freezes {\n    lib::boom(e);\n}\n");
    let (code, stdout, stderr) = run(&world);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(stdout.is_empty(), "no report on a script error: {stdout}");
    assert!(
        stderr.contains("org/lib.rhai:10:21: script failed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("10 │     n + entry.owner.no_such_method()"),
        "the module's own source is shown:\n{stderr}"
    );
    assert!(
        stderr.contains("reached from org/rule.rhai:5:10"),
        "{stderr}"
    );
}

#[test]
fn an_error_in_a_scripts_own_function_points_at_its_line() {
    let world = org_world("\nfn check(e) {\n    let z = 2;\n    z * e.nothing_here()\n}\n\nfor e in ledger.freezes { check(e); }\n");
    let (code, _, stderr) = run(&world);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("org/rule.rhai:5:11: script failed"),
        "{stderr}"
    );
    assert!(stderr.contains("5 │     z * e.nothing_here()"), "{stderr}");
}

#[test]
fn an_error_while_a_module_loads_points_into_the_module() {
    let mut world = org_world("\nimport \"init\" as init;\n");
    world.files.push((
        "org/init.rhai".into(),
        "// init\nlet zero = 0;\nlet boom = 1 / zero;\n".into(),
    ));
    let (code, _, stderr) = run(&world);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("org/init.rhai:3:14: script failed: Division by zero"),
        "{stderr}"
    );
    assert!(stderr.contains("3 │ let boom = 1 / zero;"), "{stderr}");
    assert!(stderr.contains("reached from org/rule.rhai:3:"), "{stderr}");
}

#[test]
fn a_parse_error_points_at_the_script_and_line() {
    let world = org_world("\nlet x = ;\n");
    let (code, _, stderr) = run(&world);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("org/rule.rhai:3:9: script does not parse"),
        "{stderr}"
    );
}

#[test]
fn print_and_debug_go_to_stderr_with_the_script_name() {
    let world = org_world(
        "import \"lib\" as lib;\nprint(\"hello\");\ndebug(ledger.freezes.len());\nlib::shout(\"hi\");\n",
    );
    let (code, stdout, stderr) = run(&world);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    // stdout stays a clean report.
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["summary"]["errors"], 0);
    assert!(stderr.contains("[org/rule.rhai] hello\n"), "{stderr}");
    assert!(stderr.contains("[org/rule.rhai:4] 1\n"), "{stderr}");
    // print inside a module function is prefixed with the running script; debug with the
    // module and line it was called on.
    assert!(stderr.contains("[org/rule.rhai] lib says hi\n"), "{stderr}");
    assert!(stderr.contains("[org/lib.rhai:4] \"hi\"\n"), "{stderr}");
}

#[test]
fn array_methods_on_ledger_freezes_do_not_abort() {
    // Entries were once shared values, and Rhai's size checks panic on those.
    let world = org_world(
        "let open = ledger.freezes.filter(|e| e.owner != ());\nif open.len() != ledger.freezes.len() { report(\"ORG1\", \"mismatch\"); }\n",
    );
    let (code, stdout, stderr) = run(&world);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
}

#[test]
fn trace_shows_each_script_its_time_and_its_reports() {
    let mut world = World::passing();
    world.today = "2026-12-05".into();
    world.extra_args = vec!["--trace".into()];
    let (code, _, stderr) = run(&world);
    assert_eq!(code, 1, "{stderr}");
    let traces: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("trace: "))
        .collect();
    for script in ["shape", "deposit", "samples", "inheritance"] {
        let line = traces
            .iter()
            .find(|l| l.starts_with(&format!("trace: builtin:{script}.rhai: ")))
            .unwrap_or_else(|| panic!("no trace for {script}:\n{stderr}"));
        // `12.34 ms, ` or, for a script that waited for an input still loading,
        // `12.34 ms (+5.67 ms waiting for inputs), `.
        let rest = line.split_once(".rhai: ").unwrap().1;
        let (ran, rest) = rest.split_once(" ms").unwrap();
        assert!(ran.parse::<f64>().is_ok(), "{line}");
        let rest = match rest.strip_prefix(" (+") {
            Some(wait) => {
                let (waited, rest) = wait.split_once(" ms waiting for inputs)").unwrap();
                assert!(waited.parse::<f64>().is_ok(), "{line}");
                rest
            }
            None => rest,
        };
        assert!(rest.starts_with(", "), "{line}");
        let expected = if script == "shape" {
            "1 reported"
        } else {
            "0 reported"
        };
        assert!(line.ends_with(expected), "{line}");
    }
    // Without --trace, nothing of the kind.
    world.extra_args.clear();
    let (_, _, stderr) = run(&world);
    assert!(!stderr.contains("trace: "), "{stderr}");
}
