//! The follow-up job: a job stops after `cycles_per_job` cycles even when events keep arriving,
//! so that one busy issue cannot hold a worker forever. The events left pending get the issue's
//! next `process_issue` job (enqueue-or-join: a follow-up already queued by the intake is reused,
//! never doubled), which runs after this one (one job per issue at a time).

use anyhow::Context as _;
use relay_core::IssueId;
use relay_core::ProcessIssue;
use relay_store::PgPool;
use relay_store::queue::{Enqueued, Job as _};

/// Queues (or joins) the issue's follow-up `process_issue` job when events are still pending.
pub async fn ensure_follow_up(
    pool: &PgPool,
    issue_id: IssueId,
    max_attempts: i32,
) -> anyhow::Result<Option<Enqueued>> {
    let mut conn = pool.acquire().await.context("no database connection")?;
    let pending = relay_store::issues::pending_events(&mut conn, issue_id)
        .await
        .context("failed to load pending events")?;
    if pending.is_empty() {
        return Ok(None);
    }
    let enqueued = ProcessIssue { issue_id }
        .enqueue(&mut conn, max_attempts)
        .await
        .context("failed to queue the follow-up job")?;
    drop(conn);
    relay_store::queue::notify_workers(pool)
        .await
        .context("failed to wake the workers")?;
    tracing::info!(
        issue.id = issue_id.get(),
        pending = pending.len(),
        job.id = enqueued.job_id().get(),
        "follow-up job queued"
    );
    Ok(Some(enqueued))
}

/// A write still pending when the job ends gets the issue a `process_issue` job at the time it
/// is due: that job drains it first. A queued job of the issue that is due later
/// is moved up to that time, never delayed. Nothing sleeps with a lease held.
pub async fn follow_up_for_outbox(
    pool: &PgPool,
    issue_id: IssueId,
    max_attempts: i32,
) -> anyhow::Result<Option<Enqueued>> {
    let mut conn = pool.acquire().await.context("no database connection")?;
    let Some(due) = relay_store::outbox::next_pending_at(&mut conn, issue_id)
        .await
        .context("failed to look for pending writes")?
    else {
        return Ok(None);
    };
    let delay = (due - chrono::Utc::now())
        .to_std()
        .unwrap_or(std::time::Duration::ZERO);
    let enqueued = ProcessIssue { issue_id }
        .enqueue_at(&mut conn, max_attempts, delay)
        .await
        .context("failed to queue the outbox follow-up job")?;
    drop(conn);
    if delay.is_zero() {
        relay_store::queue::notify_workers(pool)
            .await
            .context("failed to wake the workers")?;
    }
    tracing::info!(
        issue.id = issue_id.get(),
        job.id = enqueued.job_id().get(),
        delay_secs = delay.as_secs(),
        "a tracker write is pending: the issue's next job is queued for when it is due"
    );
    Ok(Some(enqueued))
}
