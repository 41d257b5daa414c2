//! Engagement rules: they live in `relay_core::engage`, shared with the worker's reconciler, so a
//! webhook and a reconciled event are decided the same way.

pub use relay_core::engage::{Context, Decision, decide, needs_context};
