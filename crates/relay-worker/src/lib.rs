#![doc = include_str!("../README.md")]
//!
//! Layout:
//! - [`settings`]: `WorkerSettings` (`[worker]`).
//! - [`handler`]: the `JobHandler` trait, `JobContext`, `JobError` and the `Registry`.
//! - [`runner`]: `Worker`: claim, heartbeat, complete/retry/dead-letter, the run loop, shutdown.
//! - [`cause`]: why an attempt failed, classified (the LLM's or the tracker's error kind).
//! - [`jobs`]: one module per job kind.
//! - [`retention`]: `RetentionSettings` (`[retention]`) and the periodic pruning pass.
//! - [`graph_retention`]: the same snapshot rule for a graph store outside Postgres (ArangoDB).
//! - [`reconcile`]: the reconciler: polls the trackers for events whose webhook never arrived.
//! - [`tool_graph`]: tool-sequence learning: the explore observer and the prompt hint.
//! - [`trace_sink`]: `TraceRun`: one job run's trace, buffered and written to Postgres in batches.
//! - [`llm_usage`]: the LLM usage sink that writes `llm_usage` rows (the agent owns the seam).

pub mod cause;
pub mod graph_retention;
pub mod handler;
pub mod jobs;
pub mod llm_usage;
pub mod reconcile;
pub mod retention;
pub mod runner;
pub mod settings;
pub mod tool_graph;
pub mod trace_sink;

/// Creates at 0 the counter series a worker counts that the alert rules read, for the label values
/// known at start-up (every job kind and outcome, every kind of tracker write and outcome, the
/// daily budget of each of `trackers`), so the first event after a start is an increase
/// (`relay_telemetry::metrics::zero_counter`). The reconciler creates its own when it starts.
pub fn zero_counters(trackers: &[&str]) {
    runner::zero_job_counters();
    relay_actions::drain::zero_write_counters();
    jobs::orchestrator::gates::daily_budget::zero_counters(trackers);
}

pub use handler::{JobContext, JobError, JobHandler, Registry};
pub use retention::RetentionSettings;
pub use runner::{Outcome, Worker};
pub use settings::WorkerSettings;
