//! A decided cycle's writes: the batch the Validator accepted, applied by the Executor with the
//! watermark raise in one transaction; the spec written after an accepted go-ahead; the living
//! summary refreshed when the batch changed what it shows. Everything is queued: the cycle's
//! drain (`after`) sends it.

use anyhow::Context as _;
use relay_actions::{Applied, BatchId, Executor, WatermarkRaise};
use relay_agent::trace::TraceKind;
use relay_core::ActionBatch;
use serde_json::json;

use super::super::job::Job;
use super::super::validator::ActionsValidator;
use super::env::CycleEnv;
use super::load::CycleView;
use super::spec::{self, SpecStep};
use relay_core::OutboxId;

/// What a cycle queued that its drain finishes.
#[derive(Default)]
pub struct Queued {
    /// The spec step after an accepted go-ahead (its failure is returned after the drain).
    pub spec: Option<anyhow::Result<SpecStep>>,
    /// Whether the living summary follows what the cycle changed (refreshed again once a spec
    /// is posted).
    pub summary: bool,
}

/// Applies `batch` (accepted by `validator`) and queues what follows from it.
pub async fn apply(
    env: &CycleEnv,
    job: &Job,
    loaded: &CycleView,
    validator: &ActionsValidator,
    batch: &ActionBatch,
    batch_id: BatchId,
) -> anyhow::Result<Queued> {
    let issue_id = job.issue.id;
    // The planner's validator accepted it: its typed form is what the executor takes.
    let validated = validator
        .take_accepted(batch)
        .context("the planner submitted a batch its validator did not accept")?;
    let applied = Executor::new(env.pool.clone(), job.tracker.clone())
        .with_lease(env.run.lease)
        .execute(
            &validated,
            batch_id,
            Some(WatermarkRaise {
                issue_id,
                through_delivery: loaded.last_event,
            }),
        )
        .await?;
    let tracer = env.run.tracer.for_agent("executor");
    for action in &batch.actions {
        tracer.event(
            TraceKind::Action,
            json!({
                "action": action.kind(), "ok": true,
                "batch": format!("{}:{}", batch_id.job_id, batch_id.cycle),
            }),
        );
    }
    if !loaded.refused.is_empty() {
        let shown: Vec<OutboxId> = loaded.refused.iter().map(|row| row.id).collect();
        let mut conn = env.pool.acquire().await?;
        relay_store::outbox::mark_failures_shown(&mut conn, &shown).await?;
    }
    let spec = match (&applied.spec_requested, applied.spec_request_id) {
        (Some(handover), Some(request)) => {
            Some(spec::write(env, job, &loaded.context, handover, batch_id, request).await)
        }
        _ => None,
    };
    let written_version = match &spec {
        Some(Ok(SpecStep::Written { version, .. })) => Some(*version),
        _ => None,
    };
    // The living summary follows what the cycle changed (sent with the cycle's writes).
    let summary = env.settings.summary_comment && changed_state(&applied, written_version);
    if summary {
        relay_actions::summary::refresh_summary(
            &env.pool,
            issue_id,
            Some(batch_id.job_id),
            &env.prices,
        )
        .await?;
    }
    Ok(Queued { spec, summary })
}

/// Whether an applied batch changed what the summary shows: gaps, findings or the spec.
fn changed_state(applied: &Applied, spec_version: Option<i32>) -> bool {
    !(applied.opened_gaps.is_empty()
        && applied.closed_gaps.is_empty()
        && applied.added_findings.is_empty()
        && applied.removed_findings.is_empty()
        && applied.dropped_findings.is_empty())
        || applied.spec_verdict.is_some()
        || spec_version.is_some()
}
