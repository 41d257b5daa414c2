//! A cycle's last stage: its one drain (the batch's writes, the status comment, the spec's
//! parts, the summary, and what the job queued before the cycle — command answers, the
//! acknowledgement), the spec recorded as posted, and what is pending read again for the next
//! cycle ([`send`]); thorough mode's traversal state saved when it changed
//! ([`save_traversal`]).

use relay_actions::DrainReport;

use super::super::job::{Job, trace_drain};
use super::apply::Queued;
use super::env::CycleEnv;
use super::spec::SpecStep;

/// What the cycle's drain sent.
#[derive(Debug)]
pub struct Sent {
    pub drain: DrainReport,
    /// The spec version the cycle wrote and posted.
    pub spec_version: Option<i32>,
}

/// Drains what the cycle queued, records a written spec as posted, and reloads what is pending.
/// A spec step's failure is returned only now, after the batch's own writes were sent.
pub async fn send(env: &CycleEnv, job: &mut Job, queued: Queued) -> anyhow::Result<Sent> {
    let issue_id = job.issue.id;
    let drain = job.drain(&env.pool).await?;
    let spec_version = match queued.spec {
        Some(Ok(SpecStep::Written {
            spec_id,
            version,
            keys,
        })) => {
            let mut conn = env.pool.acquire().await?;
            let posted =
                relay_actions::execute::record_spec_posted(&mut conn, spec_id, &keys).await?;
            drop(conn);
            // The spec is now posted: the summary says so (an edit only if the body changed),
            // sent with the next drain — the next cycle's, or the job's last.
            if queued.summary && posted {
                relay_actions::summary::refresh_summary(
                    &env.pool,
                    issue_id,
                    Some(env.run.job_id),
                    &env.prices,
                )
                .await?;
            }
            Some(version)
        }
        Some(Ok(SpecStep::GaveUp)) | None => None,
        Some(Err(error)) => {
            trace_drain(&env.run.tracer.for_agent("orchestrator"), &drain);
            return Err(error);
        }
    };
    job.pending
        .reload(&env.pool, issue_id, &job.settings.bot_username)
        .await?;
    Ok(Sent {
        drain,
        spec_version,
    })
}

/// Writes back the explorer's traversal state when it changed since the job last saved it.
pub async fn save_traversal(env: &CycleEnv, job: &mut Job) {
    let (Some(explorer), Some(snapshot)) = (&env.traversal, &env.snapshot) else {
        return;
    };
    super::super::traversal::save_if_changed(
        &env.pool,
        job.issue.id,
        &snapshot.commit_sha,
        explorer,
        &mut job.traversal,
    )
    .await;
}
