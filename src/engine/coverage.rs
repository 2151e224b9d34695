//! The `coverage` binding: per-test line coverage, asked through native helpers so a
//! script never loops over line sets.
//!
//! `of` is one node id; `by` is a node id, an array of node ids, or `()` (none).

use rhai::{Array, Dynamic, Engine, EvalAltResult, Position, FLOAT, INT};

use crate::inputs::coverage::Coverage;

fn ids(by: Dynamic) -> Result<Vec<String>, Box<EvalAltResult>> {
    if by.is_unit() {
        return Ok(Vec::new());
    }
    if by.is_string() {
        return Ok(vec![by.to_string()]);
    }
    let type_name = by.type_name();
    match by.try_cast::<Array>() {
        Some(items) => items
            .into_iter()
            .map(|item| {
                if item.is_string() {
                    Ok(item.to_string())
                } else {
                    Err(bad_ids(item.type_name()))
                }
            })
            .collect(),
        None => Err(bad_ids(type_name)),
    }
}

fn bad_ids(type_name: &str) -> Box<EvalAltResult> {
    EvalAltResult::ErrorRuntime(
        format!("coverage: expected a node id or an array of node ids, got {type_name}").into(),
        Position::NONE,
    )
    .into()
}

/// Registers the `Coverage` type and its helpers.
pub fn register(engine: &mut Engine) {
    engine
        .register_type_with_name::<Coverage>("Coverage")
        .register_fn("has", |c: &mut Coverage, id: &str| c.has(id))
        .register_fn("lines", |c: &mut Coverage, id: &str| c.lines(id) as INT)
        .register_fn("unique_lines", |c: &mut Coverage, id: &str| {
            c.unique_lines(id) as INT
        })
        .register_fn(
            "at_stake",
            |c: &mut Coverage, of: &str, by: Dynamic| -> Result<INT, Box<EvalAltResult>> {
                Ok(c.deposit(of, &ids(by)?).at_stake.len() as INT)
            },
        )
        .register_fn(
            "covered",
            |c: &mut Coverage, of: &str, by: Dynamic| -> Result<INT, Box<EvalAltResult>> {
                Ok(c.deposit(of, &ids(by)?).covered as INT)
            },
        )
        .register_fn(
            "share",
            |c: &mut Coverage, of: &str, by: Dynamic| -> Result<FLOAT, Box<EvalAltResult>> {
                Ok(c.deposit(of, &ids(by)?).share() as FLOAT)
            },
        )
        .register_fn(
            "uncovered",
            |c: &mut Coverage,
             of: &str,
             by: Dynamic,
             n: INT|
             -> Result<Array, Box<EvalAltResult>> {
                let n = usize::try_from(n).unwrap_or(0);
                Ok(c.uncovered(of, &ids(by)?, n)
                    .into_iter()
                    .map(Dynamic::from)
                    .collect())
            },
        )
        .register_fn("shared_context", |c: &mut Coverage, id: &str| {
            c.shared_context(id)
                .map_or(Dynamic::UNIT, |context| Dynamic::from(context.to_string()))
        })
        .register_get("function_contexts", |c: &mut Coverage| {
            c.has_function_contexts()
        })
        .register_get("tests", |c: &mut Coverage| c.test_count() as INT)
        .register_fn("to_string", |c: &mut Coverage| {
            format!(
                "Coverage({} tests, {} lines)",
                c.test_count(),
                c.line_count()
            )
        })
        .register_fn("to_debug", |c: &mut Coverage| {
            format!(
                "Coverage({} tests, {} lines)",
                c.test_count(),
                c.line_count()
            )
        });
}
