//! `[retention]`: the periodic pruning pass every worker process runs (one at a time per
//! database: a pass that finds another holding the lock skips its turn).

use std::time::Duration;

use relay_store::PgPool;
use relay_store::retention::{PruneMode, PruneReport, RetentionPolicy};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

/// `[retention]`: how long Relay keeps what it no longer needs. A period of 0 keeps that kind
/// forever.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetentionSettings {
    /// Run the pruning pass in worker processes (`relay prune` works either way).
    #[serde(default = "default_enabled")]
    pub enabled: bool,
    /// Seconds between two passes.
    #[serde(default = "default_interval_secs")]
    pub interval_secs: u64,
    /// Days after which a handled delivery's payload is emptied (the row and its dedupe key stay).
    #[serde(default = "default_delivery_payload_days")]
    pub delivery_payload_days: u32,
    /// Days after which a finished run trace (runs and events) is deleted.
    #[serde(default = "default_trace_days")]
    pub trace_days: u32,
    /// Days after which a finished job (succeeded, failed, dead) and its attempt log are deleted.
    #[serde(default = "default_finished_job_days")]
    pub finished_job_days: u32,
    /// Days after which a sent or failed outbox row is deleted (budget notes stay).
    #[serde(default = "default_outbox_days")]
    pub outbox_days: u32,
    /// Code-graph snapshots kept per repository, newest first (plus any a live finding or a
    /// running job uses).
    #[serde(default = "default_snapshots_per_repository")]
    pub snapshots_per_repository: u32,
    /// Rows per delete statement.
    #[serde(default = "default_batch_size")]
    pub batch_size: u32,
}

impl Default for RetentionSettings {
    fn default() -> Self {
        RetentionSettings {
            enabled: default_enabled(),
            interval_secs: default_interval_secs(),
            delivery_payload_days: default_delivery_payload_days(),
            trace_days: default_trace_days(),
            finished_job_days: default_finished_job_days(),
            outbox_days: default_outbox_days(),
            snapshots_per_repository: default_snapshots_per_repository(),
            batch_size: default_batch_size(),
        }
    }
}

fn default_enabled() -> bool {
    true
}
fn default_interval_secs() -> u64 {
    3600
}
fn default_delivery_payload_days() -> u32 {
    14
}
fn default_trace_days() -> u32 {
    30
}
fn default_finished_job_days() -> u32 {
    30
}
fn default_outbox_days() -> u32 {
    90
}
fn default_snapshots_per_repository() -> u32 {
    3
}
fn default_batch_size() -> u32 {
    1000
}

/// 0 means "keep forever".
fn period(value: u32) -> Option<u32> {
    (value > 0).then_some(value)
}

impl RetentionSettings {
    pub fn policy(&self) -> RetentionPolicy {
        RetentionPolicy {
            delivery_payload_days: period(self.delivery_payload_days),
            trace_days: period(self.trace_days),
            finished_job_days: period(self.finished_job_days),
            outbox_days: period(self.outbox_days),
            snapshots_per_repository: period(self.snapshots_per_repository),
            batch_size: self.batch_size.max(1),
        }
    }
}

/// Runs a pass every `interval_secs` (the first one at start) until `shutdown`. `graph` is a code
/// graph store outside Postgres (ArangoDB): its snapshots follow the same rule
/// ([`crate::graph_retention`]) in the same pass.
pub async fn run_pruner(
    pool: PgPool,
    settings: RetentionSettings,
    graph: Option<std::sync::Arc<dyn relay_codegraph::store::GraphStore>>,
    shutdown: CancellationToken,
) {
    if !settings.enabled {
        tracing::info!("retention disabled: nothing is pruned");
        return;
    }
    let policy = settings.policy();
    let interval = Duration::from_secs(settings.interval_secs.max(1));
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            outcome = relay_store::retention::prune(&pool, &policy, PruneMode::Delete) => {
                // The graph store's pass runs in the process whose database pass ran (one
                // process at a time, mostly; deleting a snapshot twice is harmless).
                let ran = matches!(outcome, Ok(Some(_)));
                log_pass(outcome);
                if ran
                    && let (Some(graph), Some(keep)) = (&graph, policy.snapshots_per_repository)
                {
                    prune_graph(&pool, graph.as_ref(), keep).await;
                }
            }
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(interval) => {}
        }
    }
}

async fn prune_graph(pool: &PgPool, graph: &dyn relay_codegraph::store::GraphStore, keep: u32) {
    // Postgres snapshots are pruned by the database pass itself.
    if graph.backend() == "postgres" {
        return;
    }
    match crate::graph_retention::prune_graph_store(pool, graph, keep, PruneMode::Delete).await {
        Ok(report) if report.pruned > 0 => tracing::info!(
            retention.table = "codegraph snapshots (graph store)",
            retention.rows = report.pruned,
            retention.kept_in_use = report.kept_in_use,
            codegraph.backend = graph.backend(),
            "pruned"
        ),
        Ok(_) => {}
        Err(e) => tracing::warn!(
            error.message = %e,
            error.cause_chain = %relay_core::error::cause_chain(&e),
            "graph store retention pass failed"
        ),
    }
}

fn log_pass(outcome: relay_store::Result<Option<PruneReport>>) {
    match outcome {
        Ok(Some(report)) => {
            for target in &report.targets {
                if target.rows > 0 {
                    tracing::info!(
                        retention.table = target.target.label(),
                        retention.rows = target.rows,
                        retention.dependent_rows = target.dependent_rows,
                        "pruned"
                    );
                }
            }
        }
        Ok(None) => tracing::debug!("another process is pruning this database"),
        Err(e) => {
            tracing::warn!(error.message = %e, error.cause_chain = ?e, "retention pass failed")
        }
    }
}
