//! Stamps the commit this binary was built from into `freezegate --version`.
//!
//! Emits `FREEZEGATE_VERSION_LINE` (what `--version` prints after the name: `0.1.0` or
//! `0.1.0 (1a2b3c4 2026-11-30)`) and, when the commit is known, `FREEZEGATE_COMMIT`.
//! The commit is known when this crate is the top level of a git work tree and `git`
//! runs; a packager building from the sdist or a crate tarball (no `.git`) may set
//! `FREEZEGATE_BUILD_COMMIT` (and `FREEZEGATE_BUILD_COMMIT_DATE`) in the environment
//! instead. (Not `FREEZEGATE_COMMIT` itself: `cargo run` and `cargo test` export the
//! emitted variables to the processes they start, and a cargo started from one of those
//! would take the old value for an override.)
//! Nothing here fails the build: no git, no `.git`, or another repository around the
//! sources (say a home directory kept in git) just means no commit in the version.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=FREEZEGATE_BUILD_COMMIT");
    println!("cargo:rerun-if-env-changed=FREEZEGATE_BUILD_COMMIT_DATE");

    let version = env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());

    let from_env = env::var("FREEZEGATE_BUILD_COMMIT")
        .ok()
        .filter(|c| is_commit(c))
        .map(|c| {
            (
                c,
                env::var("FREEZEGATE_BUILD_COMMIT_DATE")
                    .ok()
                    .filter(|d| is_date(d)),
            )
        });
    let commit = from_env.or_else(|| from_git(&manifest_dir));

    let line = match &commit {
        Some((hash, Some(date))) => format!("{version} ({hash} {date})"),
        Some((hash, None)) => format!("{version} ({hash})"),
        None => version,
    };
    if let Some((hash, _)) = &commit {
        println!("cargo:rustc-env=FREEZEGATE_COMMIT={hash}");
    }
    println!("cargo:rustc-env=FREEZEGATE_VERSION_LINE={line}");

    embed_dir(
        &manifest_dir,
        "tests",
        "PACK_TESTS",
        "fixture cases",
        "pack_tests.rs",
    );
    embed_dir(
        &manifest_dir,
        "docs",
        "PACK_DOCS",
        "rule docs",
        "pack_docs.rs",
    );
}

/// Lists every file under `policies/<dir>` for `include_str!`, as `const NAME` in
/// `OUT_DIR/<out>`: the fixture cases (`init` copies them beside the scripts, `freezegate
/// test` runs there) and the rules' docs (`explain` prints them).
fn embed_dir(manifest_dir: &Path, dir: &str, name: &str, what: &str, out: &str) {
    let root = manifest_dir.join("policies").join(dir);
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                println!("cargo:rerun-if-changed={}", path.display());
                dirs.push(path);
            } else if let Ok(relative) = path.strip_prefix(&root) {
                files.push((relative.to_string_lossy().replace('\\', "/"), path.clone()));
            }
        }
    }
    files.sort();
    // The binary promises them: a build that found none is broken, not smaller.
    assert!(
        !files.is_empty(),
        "no {what} under {}: the default pack ships them",
        root.display()
    );
    let mut text = format!(
        "/// The default pack's {what}: path under `policies/{dir}/`, text.\npub const {name}: &[(&str, &str)] = &[\n"
    );
    for (relative, path) in files {
        text.push_str(&format!(
            "    ({relative:?}, include_str!({:?})),\n",
            path.display().to_string()
        ));
    }
    text.push_str("];\n");
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_default());
    std::fs::write(out_dir.join(out), text).expect("OUT_DIR is writable");
}

/// The short hash and commit date of HEAD, when the manifest directory is the top of a
/// git work tree. Also asks cargo to rerun this script when HEAD moves.
fn from_git(manifest_dir: &Path) -> Option<(String, Option<String>)> {
    let toplevel = git(manifest_dir, &["rev-parse", "--show-toplevel"])?;
    if !same_dir(Path::new(&toplevel), manifest_dir) {
        return None;
    }
    // HEAD itself, the branch it points at (loose or packed): any commit or checkout
    // changes one of them. `--git-path` resolves them for linked work trees too.
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(head_ref) = git(manifest_dir, &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(head_ref);
    }
    for name in watched {
        if let Some(path) = git(manifest_dir, &["rev-parse", "--git-path", &name]) {
            let path = manifest_dir.join(path);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    let hash = git(manifest_dir, &["rev-parse", "--short", "HEAD"]).filter(|h| is_commit(h))?;
    let date = git(manifest_dir, &["log", "-1", "--format=%cs", "HEAD"]).filter(|d| is_date(d));
    Some((hash, date))
}

/// Runs git in `dir`; its trimmed stdout on success, `None` on any failure.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn is_commit(s: &str) -> bool {
    (4..=40).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_date(s: &str) -> bool {
    s.len() == 10
        && s.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        })
}
