//! The job's start: the issue and its tracker ([`open`]), then the issue's due writes drained and
//! what is pending read ([`start`]).
//!
//! The drain here is the job's one early drain: a crash or a tracker outage may have left writes
//! behind the watermark, so they go out before anything else, and so before every early end.

use std::sync::Arc;

use anyhow::Context as _;
use relay_core::TrackerSettings;
use relay_store::PgPool;
use relay_tracker::{IssueTracker, Trackers};
use serde_json::json;

use super::job::{Job, JobEnd, JobRun, JobStep, trace_drain};
use super::pending::Pending;
use crate::handler::JobError;

/// The issue `run` serves with its tracker's settings and client.
pub async fn open(
    trackers: &Trackers,
    tracker_settings: &[TrackerSettings],
    pool: &PgPool,
    run: &JobRun,
) -> Result<Job, JobError> {
    let issue_id = run.issue_id;
    let mut conn = pool.acquire().await.context("no database connection")?;
    let issue = relay_store::issues::get(&mut conn, issue_id)
        .await
        .context("failed to load the issue")?
        .ok_or_else(|| anyhow::anyhow!("issue {issue_id} does not exist"))
        .map_err(JobError::Permanent)?;
    drop(conn);
    let settings = tracker_settings
        .iter()
        .find(|t| t.name.as_str() == issue.tracker)
        .ok_or_else(|| anyhow::anyhow!("tracker {:?} is not configured", issue.tracker))
        .map_err(JobError::Permanent)?;
    let tracker: Arc<dyn IssueTracker> = trackers
        .get_str(&issue.tracker)
        .ok_or_else(|| anyhow::anyhow!("tracker {:?} has no client", issue.tracker))
        .map_err(JobError::Permanent)?;
    Ok(Job::new(issue, settings.clone(), tracker))
}

/// Drains the issue's due writes, then reads what is pending; ends the job when nothing is.
pub async fn start(pool: &PgPool, run: &JobRun, job: &mut Job) -> JobStep {
    let drain = job
        .drain(pool)
        .await
        .context("failed to drain the outbox")?;
    trace_drain(&run.tracer.for_agent("orchestrator"), &drain);
    let mut conn = pool.acquire().await.context("no database connection")?;
    job.pending = Pending::load(&mut conn, run.issue_id, job.bot()).await?;
    if job.pending.is_empty() {
        return Err(JobEnd::Done(json!({
            "cycles": 0,
            "reason": "nothing pending",
            "drained": drain.sent.len(),
        })));
    }
    Ok(())
}
