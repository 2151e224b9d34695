//! `freezegate.toml` (and `[tool.freezegate]` in `pyproject.toml`): `Config::from_source`
//! on arbitrary bytes; a config that loads is then used to load the gate (builtin pack)
//! and select its rules, as `check` does. Without `--trusted-ref` the config comes from
//! the patch, so it is untrusted input too. The first byte picks `pyproject.toml` (`p`)
//! or `freezegate.toml` (anything else, kept as part of the text).
#![no_main]

mod common;

use freezegate::gate::Gate;
use freezegate::config::{Config, PolicySpec};
use freezegate::engine::selection::Selection;
use freezegate::source::SourceFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (name, text) = match data.first() {
        Some(b'p') => ("pyproject.toml", &data[1..]),
        _ => ("freezegate.toml", data),
    };
    let Some(decoded) = common::source(name, text) else {
        return;
    };
    // A root that does not exist: policy directories and owners files are not found.
    let root = std::path::Path::new("/freezegate-fuzz-config");
    let source = SourceFile::new(name, root.join(name), decoded.text.clone());
    let config = match Config::from_source(source, name == "pyproject.toml", root) {
        Ok(Some(config)) => config,
        Ok(None) => return,
        Err(err) => return common::render(&err),
    };
    // Compiling the builtin pack costs milliseconds: only for configs that use it alone.
    if config.policies.iter().any(|p| *p != PolicySpec::Builtin) || config.owners_file.is_some() {
        return;
    }
    match Gate::with_config(config) {
        Ok(gate) => {
            for (select, ignore) in [
                (&[][..], &[][..]),
                (&["FZ1".to_string()][..], &["FZ106".to_string()][..]),
            ] {
                if let Err(err) = Selection::new(&gate.pack, &gate.config, select, ignore) {
                    common::render(&err);
                }
            }
        }
        Err(err) => common::render(&err),
    }
});
