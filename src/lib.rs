//! freezegate: a policy-as-code gate for test freezes.
//!
//! The data flows config → inputs → engine → report → commands.

pub mod cli;
pub mod commands;
pub mod config;
pub mod engine;
pub mod error;
pub mod inputs;
pub mod report;
pub mod source;
