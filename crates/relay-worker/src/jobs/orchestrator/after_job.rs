//! After the job, whatever way it ended ([`after_job`]):
//!
//! - a reply the tracker refused for good (a 4xx) is said once, in a short status comment, so
//!   the person who asked is not left waiting for an answer that will never come. The planner is
//!   told in its next cycle's context (`cycle/load.rs`), and the write is counted in `/metrics`
//!   (`relay_tracker_writes_total{outcome="failed"}`) and listed in `/api/issues/{id}`
//!   (`failed_writes`);
//! - the job's last drain sends what it queued after its last one: an early end's notice (the
//!   command answers, the budget note, the status comment of a failure before the first cycle),
//!   the summary that says a spec is posted, the status comment above. Only when a write is due
//!   now: a write a drain could not send waits for its backoff;
//! - a write still pending gets the issue a `process_issue` job at the time it is due: that job
//!   drains it first. A queued job of the issue that is due later is moved up to that time, never
//!   delayed. Nothing sleeps with a lease held.
//!
//! And [`follow_up`]: a job stops after `cycles_per_job` cycles even when events keep arriving,
//! so that one busy issue cannot hold a worker forever. The events left pending get the issue's
//! next `process_issue` job (enqueue-or-join: a follow-up already queued by the intake is reused,
//! never doubled), which runs after this one (one job per issue at a time).

use anyhow::Context as _;
use relay_core::ProcessIssue;
use relay_store::PgPool;
use relay_store::outbox::{OutboxRow, WriteKind};
use relay_store::queue::{Enqueued, Job as _};
use serde_json::Value;

use super::job::{Attempt, Job, JobRun, trace_drain};
use super::pending::Pending;
use crate::handler::JobError;
use relay_core::IssueId;
use relay_core::JobId;

/// After the job: the status comment of a reply refused for good, the job's last drain, and a
/// job at the due time of a write still pending — unless the queue runs this job again, whose
/// retry drains first.
pub async fn after_job(pool: &PgPool, run: &JobRun, job: &Job, result: &Result<Value, JobError>) {
    report_refused_replies(pool, run, job).await;
    if let Err(error) = last_drain(pool, run, job).await {
        tracing::warn!(
            issue.id = run.issue_id.get(),
            error.message = %format!("{error:#}"),
            "the job's last drain failed; the writes wait for their follow-up job"
        );
    }
    let retried =
        matches!(result, Err(JobError::Retryable(_))) && run.attempt == Attempt::Retryable;
    if !retried && let Err(error) = follow_up_for_outbox(pool, run.issue_id, run.max_attempts).await
    {
        tracing::warn!(
            issue.id = run.issue_id.get(),
            error.message = %format!("{error:#}"),
            "failed to schedule the outbox follow-up; the sweeper will pick the writes up"
        );
    }
}

/// Queues (or joins) the issue's follow-up `process_issue` job when events are still pending
/// (`pending`: as the job read it last). Returns the job's id.
pub async fn follow_up(
    pool: &PgPool,
    run: &JobRun,
    pending: &Pending,
) -> anyhow::Result<Option<JobId>> {
    if pending.events.is_empty() {
        return Ok(None);
    }
    let mut conn = pool.acquire().await.context("no database connection")?;
    let enqueued = ProcessIssue {
        issue_id: run.issue_id,
    }
    .enqueue(&mut conn, run.max_attempts)
    .await
    .context("failed to queue the follow-up job")?;
    drop(conn);
    relay_store::queue::notify_workers(pool)
        .await
        .context("failed to wake the workers")?;
    tracing::info!(
        issue.id = run.issue_id.get(),
        pending = pending.events.len(),
        job.id = enqueued.job_id().get(),
        "follow-up job queued"
    );
    Ok(Some(enqueued.job_id()))
}

/// The job's last drain, when a write is due now (the job queued it after its last drain).
async fn last_drain(pool: &PgPool, run: &JobRun, job: &Job) -> anyhow::Result<()> {
    let mut conn = pool.acquire().await.context("no database connection")?;
    let due = relay_store::outbox::next_pending_at(&mut conn, run.issue_id)
        .await
        .context("failed to look for pending writes")?;
    drop(conn);
    if due.is_some_and(|at| at <= chrono::Utc::now()) {
        let drain = job.drain(pool).await?;
        trace_drain(&run.tracer.for_agent("orchestrator"), &drain);
    }
    Ok(())
}

/// A write still pending when the job ends gets the issue a `process_issue` job at the time it
/// is due.
async fn follow_up_for_outbox(
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

/// Queues (once per refused reply: the key is the refused row's) the status comment for every
/// reply of the planner the tracker refused for good. Failures are logged: this is a courtesy
/// on top of the trace, the metric and the read API.
async fn report_refused_replies(pool: &PgPool, run: &JobRun, job: &Job) {
    if let Err(error) = report(pool, run, job).await {
        tracing::warn!(
            issue.id = run.issue_id.get(),
            error.message = %format!("{error:#}"),
            "failed to queue the status comment about a refused reply"
        );
    }
}

async fn report(pool: &PgPool, run: &JobRun, job: &Job) -> anyhow::Result<()> {
    let mut conn = pool.acquire().await?;
    let refused = relay_store::outbox::unshown_failures(&mut conn, run.issue_id).await?;
    for row in refused.iter().filter(|row| is_planner_reply(row)) {
        let body = refused_body(row, job.bot());
        relay_actions::notices::enqueue_refused_reply(
            &mut conn,
            run.issue_id,
            run.job_id,
            row.id,
            &body,
        )
        .await?;
    }
    Ok(())
}

/// A comment the planner decided (`i<issue>-j<job>-c<cycle>-a<action>-p<part>`), not a status
/// comment of ours, a spec part or a budget note.
fn is_planner_reply(row: &OutboxRow) -> bool {
    matches!(
        row.write_kind(),
        Some(WriteKind::Comment | WriteKind::Reply)
    ) && relay_actions::keys::is_action_key(&row.idempotency_key)
}

/// The status comment. Only the error's kind is quoted: the tracker's message is its text, not
/// ours.
fn refused_body(row: &OutboxRow, bot_username: &str) -> String {
    let kind = row
        .last_error
        .as_deref()
        .and_then(|e| e.split(':').next())
        .unwrap_or("refused");
    format!(
        "I could not post my reply here: the tracker refused it ({kind}). An operator can see \
         it in Relay's failed writes for this issue. Mention @{bot_username} to try again."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_core::OutboxId;

    fn row(key: &str, kind: &str) -> OutboxRow {
        OutboxRow {
            id: OutboxId(1),
            idempotency_key: key.into(),
            issue_id: IssueId(1),
            job_id: None,
            kind: kind.into(),
            body: String::new(),
            target_note_id: None,
            target_discussion_id: None,
            status: "failed".into(),
            attempts: 1,
            maybe_sent: true,
            next_attempt_at: chrono::Utc::now(),
            note_id: None,
            discussion_id: None,
            last_error: Some("validation failed: body is too long".into()),
            created_at: chrono::Utc::now(),
            sent_at: None,
        }
    }

    #[test]
    fn only_the_planners_replies_get_a_status_comment() {
        assert!(is_planner_reply(&row("i1-j2-r3-c0-a0-p0", "reply")));
        // Queued before runs were counted.
        assert!(is_planner_reply(&row("i1-j2-c0-a0-p0", "reply")));
        // A stopped cycle's status is a notice of ours, not the planner's reply.
        assert!(!is_planner_reply(&row("stopped:1:9", "comment")));
        assert!(is_planner_reply(&row("i1-j2-c0-a1-p0", "comment")));
        assert!(!is_planner_reply(&row("i1-j2-c0-spec1-p0", "comment")));
        assert!(!is_planner_reply(&row("refused:4", "comment")));
        assert!(!is_planner_reply(&row("budget:1:1:3", "comment")));
        assert!(!is_planner_reply(&row("i1-j2-c0-reaction", "reaction")));
        let body = refused_body(&row("i1-j2-c0-a0-p0", "reply"), "relay");
        assert!(body.contains("(validation failed)"), "{body}");
        assert!(
            !body.contains("too long"),
            "the tracker's text is not echoed"
        );
    }
}
