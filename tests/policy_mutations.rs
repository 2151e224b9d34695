//! The default pack's fixture suite has teeth: every mechanical mutation of every
//! default script (a flipped comparison, a dropped negation, a swapped `&&`/`||`, a
//! removed `report(...)` call, a nudged default constant) must make
//! `freezegate test policies/tests --policies <mutated copy>` fail.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Every script of the default pack, from the pack itself.
const SCRIPTS: [&str; freezegate::engine::policy::BUILTIN.len()] = {
    let mut names = [""; freezegate::engine::policy::BUILTIN.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = freezegate::engine::policy::BUILTIN[i].0;
        i += 1;
    }
    names
};

#[derive(Debug, Clone)]
struct Mutation {
    script: &'static str,
    line: usize,
    what: String,
    text: String,
}

/// Which bytes of a script are code (not comments, not string or template literals).
fn code_mask(text: &str) -> Vec<bool> {
    let bytes = text.as_bytes();
    let mut mask = vec![true; bytes.len()];
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        let end = match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => bytes[i..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |p| i + p),
            b'/' if bytes.get(i + 1) == Some(&b'*') => text[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |p| i + 2 + p + 2),
            quote @ (b'"' | b'`' | b'\'') => {
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != quote {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                j + 1
            }
            _ => {
                i += 1;
                continue;
            }
        };
        let end = end.min(bytes.len());
        mask[start..end].iter_mut().for_each(|m| *m = false);
        i = end;
    }
    mask
}

fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

fn replace(text: &str, at: usize, len: usize, with: &str) -> String {
    format!("{}{with}{}", &text[..at], &text[at + len..])
}

/// Every mutation of one script, generated from its text.
fn mutations(script: &'static str, text: &str) -> Vec<Mutation> {
    let mask = code_mask(text);
    let bytes = text.as_bytes();
    let code = |i: usize| i < bytes.len() && mask[i];
    let mut out = Vec::new();
    let mut push = |at: usize, len: usize, with: &str, what: String| {
        out.push(Mutation {
            script,
            line: line_of(text, at),
            what,
            text: replace(text, at, len, with),
        });
    };
    let mut i = 0;
    while i < bytes.len() {
        if !code(i) {
            i += 1;
            continue;
        }
        let next = if code(i + 1) { bytes[i + 1] } else { 0 };
        let prev = if i > 0 && code(i - 1) {
            bytes[i - 1]
        } else {
            0
        };
        let two = [bytes[i], next];
        let (len, with): (usize, &str) = match &two {
            b"<=" => (2, "<"),
            b">=" => (2, ">"),
            b"==" => (2, "!="),
            b"!=" => (2, "=="),
            b"&&" => (2, "||"),
            b"||" => (2, "&&"),
            [b'<', _] if next != b'<' && prev != b'<' => (1, "<="),
            [b'>', _] if next != b'>' && !matches!(prev, b'=' | b'-' | b'>') => (1, ">="),
            [b'!', _] => (1, ""),
            _ => (0, ""),
        };
        if len > 0 {
            let from = &text[i..i + len];
            let what = if with.is_empty() {
                "drop the negation `!`".to_string()
            } else {
                format!("`{from}` → `{with}`")
            };
            push(i, len, with, what);
            i += len;
        } else {
            i += 1;
        }
    }
    // Every report(...) call: removed.
    for (at, _) in text.match_indices("report(") {
        let word_start =
            at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        if !code(at) || !word_start {
            continue;
        }
        let mut depth = 0;
        let mut end = at;
        for (j, &b) in bytes.iter().enumerate().skip(at + "report".len()) {
            if !code(j) {
                continue;
            }
            match b {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = j + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        while end < bytes.len() && bytes[end] == b' ' {
            end += 1;
        }
        if bytes.get(end) == Some(&b';') {
            end += 1;
        }
        let code_name = text[at + 8..].split('"').next().unwrap_or("?");
        push(
            at,
            end - at,
            "",
            format!("remove report(\"{code_name}\", ...)"),
        );
    }
    // Every integer constant: one more and one less.
    for (at, _) in text.match_indices("const ") {
        let rest = &text[at..];
        let Some(eq) = rest.find('=') else { continue };
        let Some(semi) = rest.find(';') else { continue };
        let value = rest[eq + 1..semi].trim();
        if let Ok(n) = value.parse::<i64>() {
            let value_at = at + eq + 1 + rest[eq + 1..].find(value).unwrap();
            for m in [n + 1, n - 1] {
                push(
                    value_at,
                    value.len(),
                    &m.to_string(),
                    format!("constant {n} → {m}"),
                );
            }
        }
    }
    out
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the pack's fixture suite (the cases whose path has `filter`, when given) against
/// a policy directory; returns the exit code and output.
fn run_suite(policies: &Path, filter: Option<&str>) -> (i32, String) {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_freezegate"));
    command
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .args(["test", "policies/tests", "--policies"])
        .arg(policies);
    if let Some(filter) = filter {
        command.args(["-k", filter]);
    }
    let out = command.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn write_pack(dir: &Path, originals: &[(&str, String)], mutated: Option<&Mutation>) {
    for (name, text) in originals {
        let text = match mutated {
            Some(m) if m.script == *name => &m.text,
            _ => text,
        };
        std::fs::write(dir.join(name), text).unwrap();
    }
}

/// The folder prefix of the fixture cases of a script's rules.
fn own_cases(script: &str) -> Option<&'static str> {
    match script {
        "shape.rhai" => Some("fz1"),
        "deposit.rhai" => Some("fz20"),
        "proof.rhai" => Some("fz21"),
        "samples.rhai" => Some("fz3"),
        "inheritance.rhai" => Some("fz4"),
        "accounting.rhai" => Some("fz6"),
        _ => None,
    }
}

#[test]
fn the_fixture_suite_catches_every_mutation_of_the_default_pack() {
    let originals: Vec<(&str, String)> = SCRIPTS
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(repo().join("policies").join(name)).unwrap();
            (*name, text)
        })
        .collect();

    // The unmutated copy passes: a failure below is the mutation's doing.
    let base = tempfile::tempdir().unwrap();
    write_pack(base.path(), &originals, None);
    let (code, output) = run_suite(base.path(), None);
    assert_eq!(
        code, 0,
        "the pack's own copy must pass its suite:\n{output}"
    );

    // Mutants that do not even parse are not mutants of the policy, only typos.
    let engine = rhai::Engine::new();
    let mut all: Vec<Mutation> = originals
        .iter()
        .flat_map(|(name, text)| mutations(name, text))
        .filter(|m| engine.compile(&m.text).is_ok())
        .collect();
    all.sort_by(|a, b| (a.script, a.line).cmp(&(b.script, b.line)));
    for script in SCRIPTS {
        let count = all.iter().filter(|m| m.script == script).count();
        assert!(
            count >= 5,
            "only {count} mutations of {script}: the generator is broken"
        );
    }
    let kinds = ["→", "negation", "remove report", "constant"];
    for kind in kinds {
        assert!(
            all.iter().any(|m| m.what.contains(kind)),
            "no mutation of kind {kind}"
        );
    }

    let next = AtomicUsize::new(0);
    let survivors = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism()
        .map_or(4, |n| n.get())
        .clamp(2, 16);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(mutation) = all.get(i) else { break };
                let dir = tempfile::tempdir().unwrap();
                write_pack(dir.path(), &originals, Some(mutation));
                // The cases of the mutated script's own rules first (most mutants fall
                // there, in a tenth of the time); a mutant they miss faces the whole suite.
                let (code, output) = match own_cases(mutation.script) {
                    Some(filter) => match run_suite(dir.path(), Some(filter)) {
                        (0, _) => run_suite(dir.path(), None),
                        failed => failed,
                    },
                    None => run_suite(dir.path(), None),
                };
                if code == 0 {
                    survivors.lock().unwrap().push(mutation.clone());
                } else {
                    assert!(
                        output.contains(" failed"),
                        "the runner ended without its closing line:\n{output}"
                    );
                }
            });
        }
    });
    let survivors = survivors.into_inner().unwrap();
    let tried = all.len();
    let caught = tried - survivors.len();
    eprintln!("policy mutations: {caught} caught of {tried} tried");
    for s in &survivors {
        eprintln!("  survived: {}:{}: {}", s.script, s.line, s.what);
    }
    assert!(
        survivors.is_empty(),
        "{} of {tried} mutations survived the fixture suite (add a case that tells them apart):\n{}",
        survivors.len(),
        survivors
            .iter()
            .map(|s| format!("  {}:{}: {}", s.script, s.line, s.what))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(tried >= 60, "only {tried} mutations tried");
}

#[test]
fn the_mutation_generator_skips_comments_strings_and_arrows() {
    let text = "// a < b\nlet x = `${a < b}`; let y = \"!=\";\nswitch v { 1 => true, _ => false }\nif a < b && !c { report(\"X1\", `(${a})`); }\nconst N = 8;\n";
    let found = mutations("t.rhai", text);
    let whats: Vec<&str> = found.iter().map(|m| m.what.as_str()).collect();
    assert_eq!(
        whats,
        [
            "`<` → `<=`",
            "`&&` → `||`",
            "drop the negation `!`",
            "remove report(\"X1\", ...)",
            "constant 8 → 9",
            "constant 8 → 7"
        ],
        "{whats:?}"
    );
    let removed = found.iter().find(|m| m.what.starts_with("remove")).unwrap();
    assert!(
        removed.text.contains("if a < b && !c {  }"),
        "{}",
        removed.text
    );
    assert!(found.iter().all(|m| m.line >= 1));
}
