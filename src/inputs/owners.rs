//! Code ownership from a CODEOWNERS-style file (config `owners_file`), so org rules can
//! ask who owns a path without reading files themselves.
//!
//! Each non-blank, non-comment line is `PATTERN OWNER...`; for a path, the **last**
//! matching line wins (its owner list may be empty: "no owner"). Patterns follow
//! GitHub's CODEOWNERS rules:
//!
//! - a pattern without a `/` (other than a trailing one) matches at any depth:
//!   `*.py`, `conftest.py`, `payments/`;
//! - a leading `/`, or a `/` inside the pattern, anchors it at the repository root:
//!   `/tests/payments/`, `tests/payments/*.py`;
//! - `*` and `?` never cross `/`; `**` matches any number of directories;
//! - a pattern naming a directory also owns everything inside it (`/tests/payments`
//!   owns `tests/payments/test_x.py`), except a pattern ending in `/*`, which owns only
//!   the files directly in that directory;
//! - a trailing `/` matches directories only.

use std::sync::Arc;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::GateError;
use crate::source::Source;

/// The parsed ownership rules, shared without copying (scripts get a handle).
#[derive(Debug, Clone)]
pub struct Owners(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    name: String,
    globs: GlobSet,
    /// For every glob in `globs`: the index of the line (rule) it came from.
    rule_of_glob: Vec<usize>,
    /// Owners of each rule, in file order.
    owners: Vec<Vec<String>>,
}

impl Owners {
    /// Parses a CODEOWNERS file; a pattern that is not a valid glob is an error pointing at it.
    pub fn parse(source: &Source) -> Result<Owners, GateError> {
        let mut builder = GlobSetBuilder::new();
        let mut rule_of_glob = Vec::new();
        let mut owners = Vec::new();
        let mut offset = 0;
        for line in source.text.split_inclusive('\n') {
            let line_start = offset;
            offset += line.len();
            let content = line.trim_end_matches(['\n', '\r']);
            let trimmed = content.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let mut words = trimmed.split_whitespace();
            let pattern = words.next().unwrap_or_default();
            let line_owners: Vec<String> = words
                .take_while(|w| !w.starts_with('#'))
                .map(str::to_string)
                .collect();
            let at = line_start + (content.len() - trimmed.len());
            let rule = owners.len();
            for glob in globs_for(pattern) {
                let compiled = GlobBuilder::new(&glob)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                    .map_err(|e| {
                        GateError::new(
                            &source.name,
                            format!("`{pattern}` is not a valid pattern: {}", e.kind()),
                        )
                        .at(source, at..at + pattern.len(), "this pattern")
                        .with_help("CODEOWNERS lines are `PATTERN OWNER...`, e.g. `/tests/payments/ @payments-team`")
                    })?;
                builder.add(compiled);
                rule_of_glob.push(rule);
            }
            owners.push(line_owners);
        }
        let globs = builder.build().map_err(|e| {
            GateError::new(&source.name, format!("cannot compile the patterns: {e}"))
        })?;
        Ok(Owners(Arc::new(Inner {
            name: source.name.clone(),
            globs,
            rule_of_glob,
            owners,
        })))
    }

    /// Reads config's `owners_file`, when set (a missing file is an error naming it).
    pub fn from_config(config: &crate::config::Config) -> Result<Option<Owners>, GateError> {
        let Some(path) = &config.owners_file else {
            return Ok(None);
        };
        let name = crate::config::display_path(path, &config.repo_root);
        let help =
            "`owners_file` in config names a CODEOWNERS-style file, relative to the config file";
        let source = config
            .tree
            .read(path, &name)
            .map_err(|e| e.with_help(help))?
            .ok_or_else(|| crate::error::GateError::missing(&name).with_help(help))?;
        Owners::parse(&source).map(Some)
    }

    /// The owners of a repository-relative path: those of the last matching line, or
    /// none when no line matches.
    pub fn of(&self, path: &str) -> &[String] {
        let path = path.trim_start_matches("./").trim_start_matches('/');
        self.0
            .globs
            .matches(path)
            .into_iter()
            .map(|glob| self.0.rule_of_glob[glob])
            .max()
            .map_or(&[], |rule| &self.0.owners[rule])
    }

    /// The number of rules (pattern lines) in the file.
    pub fn len(&self) -> usize {
        self.0.owners.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.owners.is_empty()
    }

    /// The file's name as shown to users.
    pub fn name(&self) -> &str {
        &self.0.name
    }
}

/// The globs one CODEOWNERS pattern stands for (see the module documentation).
fn globs_for(pattern: &str) -> Vec<String> {
    let dir_only = pattern.ends_with('/');
    let body = pattern.trim_end_matches('/');
    let anchored = body.starts_with('/') || body.contains('/');
    let body = body.trim_start_matches('/');
    if body.is_empty() {
        // `/` alone: the whole repository.
        return vec!["**".into()];
    }
    let base = if anchored {
        body.to_string()
    } else {
        format!("**/{body}")
    };
    let mut globs = Vec::new();
    if !dir_only {
        globs.push(base.clone());
    }
    if !body.ends_with("/*") || dir_only {
        globs.push(format!("{base}/**"));
    }
    globs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    fn owners(text: &str) -> Owners {
        Owners::parse(&SourceFile::new("CODEOWNERS", "CODEOWNERS", text)).unwrap()
    }

    fn of(o: &Owners, path: &str) -> Vec<String> {
        o.of(path).to_vec()
    }

    #[test]
    fn the_last_matching_line_wins() {
        let o = owners(
            "# default owners\n*       @core\n*.py    @py\n/tests/payments/  @payments @finley\n/tests/payments/legacy.py\n",
        );
        assert_eq!(of(&o, "README.md"), ["@core"]);
        assert_eq!(of(&o, "src/app.py"), ["@py"]);
        assert_eq!(of(&o, "tests/payments/test_x.py"), ["@payments", "@finley"]);
        assert_eq!(
            of(&o, "tests/payments/deep/test_y.py"),
            ["@payments", "@finley"]
        );
        // A later line without owners makes the path unowned.
        assert!(of(&o, "tests/payments/legacy.py").is_empty());
        assert_eq!(o.len(), 4);
    }

    #[test]
    fn anchoring_and_depth_follow_codeowners() {
        let o = owners(
            "docs/*  @docs\napps/  @apps\n/build/logs/ @logs\n**/fixtures @fx\nconftest.py @conf\n",
        );
        // `docs/*` owns files directly in root docs/, not nested ones or other docs/.
        assert_eq!(of(&o, "docs/a.md"), ["@docs"]);
        assert!(of(&o, "docs/sub/b.md").is_empty());
        assert!(of(&o, "x/docs/a.md").is_empty());
        // `apps/` (no leading slash) owns any apps directory at any depth.
        assert_eq!(of(&o, "apps/a.py"), ["@apps"]);
        assert_eq!(of(&o, "src/apps/deep/a.py"), ["@apps"]);
        assert_eq!(of(&o, "build/logs/x.log"), ["@logs"]);
        assert!(of(&o, "src/build/logs/x.log").is_empty());
        assert_eq!(of(&o, "a/b/fixtures/data.json"), ["@fx"]);
        assert_eq!(of(&o, "tests/conftest.py"), ["@conf"]);
        assert_eq!(of(&o, "./tests/conftest.py"), ["@conf"]);
    }

    #[test]
    fn star_does_not_cross_slashes() {
        let o = owners("/tests/*.py @flat\n");
        assert_eq!(of(&o, "tests/test_a.py"), ["@flat"]);
        assert!(of(&o, "tests/sub/test_a.py").is_empty());
    }

    #[test]
    fn a_bad_pattern_points_at_itself() {
        let source = SourceFile::new("CODEOWNERS", "CODEOWNERS", "*.py @a\n  /tests/[x @b\n");
        let err = Owners::parse(&source).unwrap_err();
        assert!(err.to_string().contains("CODEOWNERS:2:3"), "{err}");
        assert!(err.to_string().contains("/tests/[x"), "{err}");
    }
}
