//! The README cannot drift: its main-job command (a replay of the demo's recordings)
//! passes, and fails on the recorded patches it shows. (The rule pages and the docs'
//! runnable blocks: tests/docs_site.rs; the org-rule examples: tests/docs_policies.rs.)

mod common;

const README: &str = include_str!("../README.md");

/// The README's replays of the demo, each as shown: `bash examples/pytest-demo/replay.sh
/// ARGS`, with this build's binary. Their human output is snapshot-tested.
fn replay(args: &[&str]) -> (Option<i32>, String) {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = common::hermetic(&mut std::process::Command::new("bash"))
        .arg(repo.join("examples/pytest-demo/replay.sh"))
        .args(args)
        .env("FREEZEGATE", env!("CARGO_BIN_EXE_freezegate"))
        .current_dir(repo)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.is_empty(),
        "replay.sh {args:?} wrote to stderr:\n{stderr}"
    );
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The README's lines `bash examples/pytest-demo/replay.sh ...`, their arguments.
fn readme_replays() -> Vec<Vec<&'static str>> {
    README
        .lines()
        .filter_map(|l| {
            l.trim_start()
                .strip_prefix("bash examples/pytest-demo/replay.sh")
        })
        .map(|rest| {
            let args = rest.split('#').next().unwrap_or_default();
            args.split_whitespace().collect()
        })
        .collect()
}

#[test]
fn readme_main_job_command_passes_on_the_recorded_run_with_every_gap_explained() {
    let replays = readme_replays();
    assert_eq!(
        replays.first().map(Vec::len),
        Some(0),
        "the README's first command is `bash examples/pytest-demo/replay.sh`: {replays:?}"
    );
    let (status, stdout) = replay(&[]);
    assert_eq!(status, Some(0), "{stdout}");
    assert!(
        stdout.contains("freezegate: passed: 0 errors, 0 warnings in 1 freeze"),
        "{stdout}"
    );
    // It judges the run record, base run and proof, not the five-file fallback.
    for flag in [
        "--run ",
        "--base-run ",
        "--proof ",
        "--base base",
        "--trusted-ref base",
    ] {
        assert!(
            stdout.lines().next().unwrap_or_default().contains(flag),
            "{flag}: {stdout}"
        );
    }
    // Each rule not evaluated is explained on a line of its own, saying what to give.
    let summary = stdout.lines().last().unwrap_or_default();
    let not_evaluated = summary
        .split("; not evaluated: ")
        .nth(1)
        .unwrap_or_default();
    for code in not_evaluated.split(", ").filter(|c| !c.is_empty()) {
        assert!(
            stdout.lines().any(|l| l.starts_with("not evaluated: ")
                && l.contains(code)
                && l.contains(": give --")),
            "{code} is not evaluated and not explained:\n{stdout}"
        );
    }
    insta::assert_snapshot!("replay_freeze", stdout);
}

#[test]
fn readme_failing_replays_show_the_rule_at_the_line() {
    let replays = readme_replays();
    let shown = |name: &str| replays.iter().any(|args| args.first() == Some(&name));
    for (name, code) in [("inline-skip", "FZ601"), ("hollow-deposit", "FZ210")] {
        assert!(
            shown(name),
            "the README shows `replay.sh {name}`: {replays:?}"
        );
        let (status, stdout) = replay(&[name]);
        assert_eq!(status, Some(1), "{stdout}");
        assert!(stdout.contains(&format!("{code} ")), "{stdout}");
        insta::assert_snapshot!(format!("replay_{name}"), stdout);
    }
    let (_, skipped) = replay(&["inline-skip"]);
    assert!(
        skipped.contains("tests/test_billing.py:6:1]")
            && skipped.contains(" 6 │ @pytest.mark.skip(reason="),
        "FZ601 points at the decorator: {skipped}"
    );
    let (_, hollow) = replay(&["hollow-deposit"]);
    assert!(
        hollow.contains("only tests/test_billing.py::test_proration_rounding kills")
            && hollow
                .contains("let through: examples/pytest-demo/billing/proration.py:22 (- return"),
        "FZ210 names the mutants the hollow property lets through: {hollow}"
    );
    // The same recording fails once the freeze has expired.
    let expired = ["--today", "2026-12-05"];
    assert!(replays.iter().any(|args| args == &expired), "{replays:?}");
    let (status, stdout) = replay(&expired);
    assert_eq!(status, Some(1), "{stdout}");
    assert!(stdout.contains("FZ103 expired-freeze"), "{stdout}");
}
