//! relay-worker: the orchestrator's cycle and budgets, and the retention pass, against the real Postgres.
//!
//! One test binary for the crate (each file a module): two cores link one binary, not one per file.

mod graph_retention;
mod orchestrator_budget;
mod orchestrator_counts;
mod orchestrator_cycle;
mod retention_pass;
mod reverify_watermark;
mod support;
