//! Hostile and broken input: every case is a clear exit-2 error naming the file, or a
//! correct verdict. Never a panic, never a hang, never a silently smaller check.

mod common;

use common::{freezegate, write, World};

fn check_ledger(name: &str, bytes: &[u8]) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut world = World::passing();
    world.ledger_name = name.into();
    world.run_in(dir.path(), "json");
    std::fs::write(dir.path().join(name), bytes).unwrap();
    let child = freezegate(dir.path())
        .args([
            "check",
            "--format",
            "json",
            "--today",
            "2026-12-05",
            "--select",
            "FZ1",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = common::ended_by_itself(name, child);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.len() < 20_000,
        "diagnostics stay short: {} bytes",
        stderr.len()
    );
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
    )
}

fn assert_exit_2(name: &str, bytes: &[u8], needle: &str) {
    let (code, _, stderr) = check_ledger(name, bytes);
    assert_eq!(code, Some(2), "{name}: {stderr}");
    assert!(stderr.contains(name), "names the file: {stderr}");
    assert!(
        stderr.contains(needle),
        "{name}: expected `{needle}` in {stderr}"
    );
}

/// The FZ103 location in the JSON report.
fn fz103_place(stdout: &str) -> (u64, u64) {
    let report: serde_json::Value = serde_json::from_str(stdout).unwrap();
    let v = report["violations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["code"] == "FZ103")
        .unwrap()
        .clone();
    (v["line"].as_u64().unwrap(), v["column"].as_u64().unwrap())
}

#[test]
fn yaml_alias_bomb_is_refused_quickly() {
    let mut bomb = String::from("a0: &a0 [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n");
    for i in 1..12 {
        let prev = format!("*a{}", i - 1);
        bomb.push_str(&format!("a{i}: &a{i} [{}]\n", vec![prev; 9].join(", ")));
    }
    bomb.push_str("schema: 1\nfreezes: []\n");
    assert_exit_2(
        "gate/freeze_ledger.yaml",
        bomb.as_bytes(),
        "is not valid YAML",
    );
}

#[test]
fn deeply_nested_json_is_refused() {
    let mut text = String::from("{\"schema\": 1, \"freezes\": [], \"x\": ");
    text.push_str(&"[".repeat(100_000));
    text.push_str(&"]".repeat(100_000));
    text.push('}');
    assert_exit_2(
        "gate/freeze_ledger.json",
        text.as_bytes(),
        "nested deeper than 64 levels",
    );
    let mut yaml = String::from("schema: 1\nfreezes: []\nx: ");
    yaml.push_str(&"[".repeat(100_000));
    yaml.push_str(&"]".repeat(100_000));
    assert_exit_2(
        "gate/freeze_ledger.yaml",
        yaml.as_bytes(),
        "is not valid YAML",
    );
    let mut toml = String::from("schema = 1\nfreezes = []\nx = ");
    toml.push_str(&"[".repeat(100_000));
    toml.push_str(&"]".repeat(100_000));
    let (code, _, stderr) = check_ledger("gate/freeze_ledger.toml", toml.as_bytes());
    assert_eq!(code, Some(2), "{stderr}");
    let mut shallow = String::from("{\"schema\": 1, \"freezes\": [], \"x\": ");
    shallow.push_str(&"[".repeat(100));
    shallow.push_str(&"]".repeat(100));
    shallow.push('}');
    assert_exit_2(
        "gate/freeze_ledger.json",
        shallow.as_bytes(),
        "nested deeper than 64 levels",
    );
}

#[test]
fn huge_strings_are_named_or_judged() {
    let ledger = |owner: String| {
        serde_json::json!({"schema": 1, "freezes": [{
            "test_id": common::FROZEN, "reason": "r", "owner": owner, "opened": "2026-11-20",
            "expires": "2026-12-04", "invariant": "i", "compensating_property": common::PROPERTY}]})
        .to_string()
    };
    // Over the scripts' string limit: a clear input error at the value.
    let (code, _, stderr) = check_ledger(
        "gate/freeze_ledger.json",
        ledger("x".repeat(20 << 20)).as_bytes(),
    );
    assert_eq!(code, Some(2), "{}", &stderr[..stderr.len().min(2000)]);
    assert!(
        stderr.contains("over the 1048576-byte limit")
            && stderr.contains("gate/freeze_ledger.json:1:"),
        "{stderr}"
    );
    // Long but within the limit: an ordinary verdict.
    let (code, stdout, stderr) = check_ledger(
        "gate/freeze_ledger.json",
        ledger("y".repeat(500_000)).as_bytes(),
    );
    assert_eq!(code, Some(1), "{}", &stderr[..stderr.len().min(2000)]);
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let codes: Vec<&str> = report["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["FZ103"]);
}

#[test]
fn nul_bytes_are_an_error_or_a_bad_node_id() {
    assert_exit_2(
        "gate/freeze_ledger.json",
        b"{\"schema\": 1, \"freezes\": [{\"test_id\": \"a\0b\"}]}",
        "control character",
    );
    let escaped = br#"{"schema": 1, "freezes": [{"test_id": "tests/a.py::t\u0000x", "reason": "r", "owner": "o", "opened": "2026-12-01", "expires": "2026-12-05", "invariant": "i", "compensating_property": "tests/p.py::p"}]}"#;
    let (code, stdout, _) = check_ledger("gate/freeze_ledger.json", escaped);
    assert_eq!(code, Some(1));
    assert!(stdout.contains("\"FZ108\""), "{stdout}");
}

#[test]
fn duplicate_keys_name_both_places_in_every_format() {
    assert_exit_2(
        "gate/freeze_ledger.json",
        b"{\"schema\": 1, \"freezes\": [{\"owner\": \"a\", \"owner\": \"b\"}]}",
        "duplicate key `owner`",
    );
    let (code, _, stderr) = check_ledger(
        "gate/freeze_ledger.yaml",
        b"schema: 1\nfreezes:\n  - owner: a\n    owner: b\n",
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.to_lowercase().contains("duplicate"), "{stderr}");
    assert!(
        stderr.contains(":3:") || stderr.contains(":4:"),
        "points at a line: {stderr}"
    );
    let (code, _, stderr) = check_ledger(
        "gate/freeze_ledger.toml",
        b"schema = 1\n[[freezes]]\nowner = \"a\"\nowner = \"b\"\n",
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("duplicate key"), "{stderr}");
    assert!(stderr.contains("freeze_ledger.toml:4:"), "{stderr}");
}

#[test]
fn bom_and_crlf_keep_spans_exact() {
    let dir = tempfile::tempdir().unwrap();
    World::passing().run_in(dir.path(), "json");
    let lf = std::fs::read_to_string(dir.path().join("gate/freeze_ledger.json")).unwrap();
    let (_, plain, _) = check_ledger("gate/freeze_ledger.json", lf.as_bytes());
    let expected = fz103_place(&plain);
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(lf.as_bytes());
    let (code, stdout, stderr) = check_ledger("gate/freeze_ledger.json", &bom);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(fz103_place(&stdout), expected);
    let crlf = lf.replace('\n', "\r\n");
    let (code, stdout, stderr) = check_ledger("gate/freeze_ledger.json", crlf.as_bytes());
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(fz103_place(&stdout), expected);
    let yaml = "schema: 1\r\nfreezes:\r\n  - test_id: tests/test_a.py::test_frozen\r\n    expires: \"2026-12-04\"\r\n";
    let (_, stdout, _) = check_ledger("gate/freeze_ledger.yaml", yaml.as_bytes());
    assert_eq!(fz103_place(&stdout), (4, 14));
    let toml = "schema = 1\r\n[[freezes]]\r\ntest_id = \"tests/test_a.py::test_frozen\"\r\nexpires = \"2026-12-04\"\r\n";
    let (_, stdout, _) = check_ledger("gate/freeze_ledger.toml", toml.as_bytes());
    assert_eq!(fz103_place(&stdout), (4, 11));
}

#[test]
fn empty_truncated_and_wrong_shape_ledgers() {
    assert_exit_2("gate/freeze_ledger.json", b"", "is empty");
    assert_exit_2("gate/freeze_ledger.json", b"  \n\t\n", "is empty");
    assert_exit_2(
        "gate/freeze_ledger.json",
        b"{\"schema\": 1, \"freezes\": [{\"owner\": \"o\"",
        "is not valid JSON",
    );
    assert_exit_2("gate/freeze_ledger.json", b"[1, 2]", "must be a table");
    assert_exit_2(
        "gate/freeze_ledger.json",
        b"{\"schema\": 1, \"freezes\": {}}",
        "`freezes` must be a list",
    );
    assert_exit_2(
        "gate/freeze_ledger.yaml",
        b"schema: 1\nfreezes: [\n",
        "is not valid YAML",
    );
    assert_exit_2(
        "gate/freeze_ledger.toml",
        b"schema = 1\nfreezes = [\n",
        "is not valid TOML",
    );
    assert_exit_2(
        "gate/freeze_ledger.json",
        b"{\"schema\": \"1\", \"freezes\": []}",
        "unknown `schema`",
    );
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "gate/freeze_ledger.txt", "{}");
    let out = freezegate(dir.path())
        .args(["check", "--ledger", "gate/freeze_ledger.txt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown extension"));
}

/// A huge value on the line next to the one reported (or inside a label over a whole
/// freeze) would be printed as snippet context: the human report drops such snippets and
/// keeps the place in the message.
#[test]
fn giant_neighbouring_lines_do_not_flood_the_human_report() {
    let mut world = World::passing();
    let entry = world.entry_mut();
    entry.insert("reason".into(), "r".repeat(200_000).into());
    entry.insert("owner".into(), "".into());
    entry.remove("invariant");
    let dir = tempfile::tempdir().unwrap();
    let out = world.run_in(dir.path(), "human");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        &stdout[..stdout.len().min(2000)]
    );
    assert!(
        stdout.len() < 20_000,
        "{} bytes: {}",
        stdout.len(),
        &stdout[..2000]
    );
    assert!(
        stdout.contains("FZ101") && stdout.contains("[gate/freeze_ledger.json:"),
        "{stdout}"
    );
}
