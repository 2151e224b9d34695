//! Policy scripts run sandboxed: no file, process, network or environment access,
//! imports only from the policy directory, and every resource limit is an exit-2 error
//! naming the script.

mod common;

use common::World;

const HEADER: &str = "const RULES = #{ ORG1: #{ name: \"x\", severity: \"error\", summary: \"s\", help: \"h\" } };\n";

fn run_script(body: &str, limits: &str, extra: &[(&str, &str)]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut world = World::passing();
    world.config = format!("policies = [\"builtin\", \"org\"]\n[limits]\n{limits}\n");
    world
        .files
        .push(("org/rule.rhai".into(), format!("{HEADER}{body}")));
    for (name, text) in extra {
        world.files.push((name.to_string(), text.to_string()));
    }
    let out = world.run_in(dir.path(), "json");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code(), stderr)
}

fn assert_refused(body: &str, limits: &str, needle: &str) {
    let (code, stderr) = run_script(body, limits, &[]);
    assert_eq!(code, Some(2), "{body}: {stderr}");
    assert!(
        stderr.contains("org/rule.rhai"),
        "names the script: {stderr}"
    );
    assert!(
        stderr.contains(needle),
        "{body}: expected `{needle}` in {stderr}"
    );
}

#[test]
fn no_file_process_network_or_environment_functions() {
    for call in [
        "open_file(\"/etc/passwd\")",
        "system(\"ls\")",
        "env(\"HOME\")",
        "read_file(\"x\")",
        "http_get(\"http://localhost\")",
    ] {
        assert_refused(&format!("{call};\n"), "", "Function not found");
    }
    // Stopping early would silently check less.
    assert_refused(
        "exit(0);\n",
        "",
        "exit() is not available to policy scripts",
    );
    assert_refused("eval(\"1 + 1\");\n", "", "org/rule.rhai");
}

#[test]
fn imports_stay_inside_the_policy_directory() {
    assert_refused("import \"/etc/hosts\" as h;\n", "", "plain relative paths");
    assert_refused(
        "import \"../freezegate\" as h;\n",
        "",
        "plain relative paths",
    );
    assert_refused(
        "import \"missing\" as h;\n",
        "",
        "no such file in the policy directory",
    );
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.rhai"), "fn x() { 1 }\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut world = World::passing();
    world.config = "policies = [\"builtin\", \"org\"]\n".into();
    world.files.push((
        "org/rule.rhai".into(),
        format!("{HEADER}import \"link\" as l;\n"),
    ));
    world.files.push(("org/.keep".into(), String::new()));
    std::fs::create_dir_all(dir.path().join("org")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.rhai"),
        dir.path().join("org/link.rhai"),
    )
    .unwrap();
    let out = world.run_in(dir.path(), "json");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    // Refused as every input is: a link out of the repository is read by nothing.
    assert!(
        stderr.contains("org/link.rhai: is a symbolic link out of the repository"),
        "{stderr}"
    );
    // A helper inside the directory is fine.
    let (code, stderr) = run_script(
        "import \"lib/helpers\" as h;\nif h::two() != 2 { throw \"bad\"; }\n",
        "",
        &[("org/lib/helpers.rhai", "fn two() { 2 }\n")],
    );
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn every_limit_is_configurable_and_named() {
    assert_refused(
        "let i = 0; loop { i += 1; }\n",
        "operations = 50000",
        "operation limit (50000)",
    );
    assert_refused(
        "let i = 0; loop { i += 1; }\n",
        "operations = 100000000000\nwall_time_ms = 200",
        "wall-time limit (200 ms)",
    );
    assert_refused(
        "fn f(n) { f(n + 1) }\nf(0);\n",
        "call_depth = 16",
        "call-depth limit (16)",
    );
    let nested = format!("let x = {}1{};\n", "(".repeat(100), ")".repeat(100));
    assert_refused(&nested, "", "exceeds maximum complexity");
    let (code, stderr) = run_script(&nested, "expr_depth = 256", &[]);
    assert_eq!(
        code,
        Some(0),
        "the same expression fits a higher limit: {stderr}"
    );
    assert_refused(
        "let s = \"ab\"; loop { s += s; }\n",
        "string_size = 4096",
        "size limit",
    );
    assert_refused(
        "let a = []; loop { a.push(1); }\n",
        "array_size = 1000",
        "size limit",
    );
    assert_refused(
        "let m = #{}; let i = 0; loop { let n = #{}; n[`k${i}`] = i; m += n; i += 1; }\n",
        "map_size = 1000\nwall_time_ms = 5000",
        "size limit",
    );
    let (code, stderr) = run_script("", "operations = 0", &[]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("must be a positive integer (0 would mean unlimited)"),
        "{stderr}"
    );
}

#[test]
fn a_script_cannot_change_what_another_sees() {
    // Each script marks every binding it can reach, then looks for the other's marks.
    // Scripts run in any order or at once; the later one would see the earlier's marks.
    let script = |code: &str, mine: &str, theirs: &str| {
        let seen = format!(
            "ledger.{theirs} != () || params.{theirs} != () || ledger.freezes.is_empty() || ledger.freezes[0].{theirs} != ()"
        );
        format!(
            "const RULES = #{{ {code}: #{{ name: \"{mine}\", severity: \"error\", summary: \"s\", help: \"h\" }} }};\n\
             let seen = {seen};\n\
             ledger.{mine} = 1; params.{mine} = 1; ledger.freezes[0].{mine} = 1; ledger.freezes.clear();\n\
             let n = 0; for i in 0..20000 {{ n += 1; }}\n\
             if seen || ledger.{theirs} != () || params.{theirs} != () {{ report(\"{code}\", \"saw {theirs}\"); }}\n"
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let mut world = World::passing();
    world.config = "policies = [\"builtin\", \"org\"]\n[params]\nmin_distinct = 3\n".into();
    world
        .files
        .push(("org/a.rhai".into(), script("ORG101", "mark_a", "mark_b")));
    world
        .files
        .push(("org/b.rhai".into(), script("ORG102", "mark_b", "mark_a")));
    let verdict = common::Verdict::from_output(world.run_in(dir.path(), "json"));
    verdict.assert_passes();
    // Both ran to their end: a script that never ran would see nothing either.
    verdict.assert_evaluated("ORG101");
    verdict.assert_evaluated("ORG102");
}
