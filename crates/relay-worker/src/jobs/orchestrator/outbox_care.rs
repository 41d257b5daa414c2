//! After the job: a reply the tracker refused for good (a 4xx) is said once, in a short status
//! comment, so the person who asked is not left waiting for an answer that will never come
//!. The planner is told in its next cycle's context (`cycle`), and the write is
//! counted in `/metrics` (`relay_tracker_writes_total{outcome="failed"}`) and listed in
//! `/api/issues/{id}` (`failed_writes`).

use relay_core::IssueId;
use std::sync::Arc;

use relay_actions::Executor;
use relay_store::PgPool;
use relay_store::outbox::{OutboxRow, WriteKind};
use relay_tracker::{IssueRef, IssueTracker};

use super::cycle::Attempt;
use super::{JobRun, Orchestrator};
use crate::handler::JobError;

/// Where an issue's writes go.
pub struct WriteTarget {
    pub issue_id: IssueId,
    pub tracker: Arc<dyn IssueTracker>,
    pub issue_ref: IssueRef,
    pub bot_username: String,
}

/// After the job, whatever way it ended: a reply refused for good gets its status comment, and
/// a write still pending gets the issue a job at its due time — unless the queue runs this job
/// again, whose retry drains first, or the issue's tracker is not configured.
pub(super) async fn after_job(
    orchestrator: &Orchestrator,
    pool: &PgPool,
    run: &JobRun,
    result: &Result<serde_json::Value, JobError>,
) {
    // No target (the issue's tracker is no longer configured, or it cannot be read): no
    // follow-up either, or a job that cannot send would queue itself again at once. The sweeper
    // brings the writes out once the tracker is configured again.
    let Some(target) = orchestrator.write_target(pool, run.issue_id).await else {
        return;
    };
    report_refused_replies(pool, &target, run).await;
    let retried =
        matches!(result, Err(JobError::Retryable(_))) && run.attempt == Attempt::Retryable;
    if !retried
        && let Err(error) =
            super::follow_up::follow_up_for_outbox(pool, run.issue_id, run.max_attempts).await
    {
        tracing::warn!(
            issue.id = run.issue_id.get(),
            error.message = %format!("{error:#}"),
            "failed to schedule the outbox follow-up; the sweeper will pick the writes up"
        );
    }
}

impl Orchestrator {
    /// The issue's tracker client and reference (`None` when the issue or its tracker is gone).
    pub(crate) async fn write_target(
        &self,
        pool: &PgPool,
        issue_id: IssueId,
    ) -> Option<WriteTarget> {
        let mut conn = pool.acquire().await.ok()?;
        let issue = relay_store::issues::get(&mut conn, issue_id).await.ok()??;
        let settings = self
            .tracker_settings
            .iter()
            .find(|t| t.name.as_str() == issue.tracker)?;
        Some(WriteTarget {
            issue_id,
            tracker: self.trackers.get_str(&issue.tracker)?,
            issue_ref: IssueRef {
                project_id: issue.project_id,
                project_path: issue.project_path,
                number: issue.number,
                installation_id: issue.installation_id,
            },
            bot_username: settings.bot_username.clone(),
        })
    }
}

/// Queues (once per refused reply: the key is the refused row's) and sends the status comment
/// for every reply of the planner the tracker refused for good. Failures are logged: this is a
/// courtesy on top of the trace, the metric and the read API.
pub async fn report_refused_replies(pool: &PgPool, target: &WriteTarget, run: &JobRun) {
    if let Err(error) = report(pool, target, run).await {
        tracing::warn!(
            issue.id = target.issue_id.get(),
            error.message = %format!("{error:#}"),
            "failed to post the status comment about a refused reply"
        );
    }
}

async fn report(pool: &PgPool, target: &WriteTarget, run: &JobRun) -> anyhow::Result<()> {
    let mut conn = pool.acquire().await?;
    let refused = relay_store::outbox::unshown_failures(&mut conn, target.issue_id).await?;
    let mut queued = false;
    for row in refused.iter().filter(|row| is_planner_reply(row)) {
        let body = refused_body(row, &target.bot_username);
        queued |= relay_actions::notices::enqueue_refused_reply(
            &mut conn,
            target.issue_id,
            run.job_id,
            row.id,
            &body,
        )
        .await?;
    }
    drop(conn);
    if queued {
        Executor::new(pool.clone(), target.tracker.clone())
            .drain_outbox(target.issue_id, &target.issue_ref)
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

    fn row(key: &str, kind: &str) -> OutboxRow {
        OutboxRow {
            id: relay_core::OutboxId(1),
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
        assert!(is_planner_reply(&row("i1-j2-c0-a0-p0", "reply")));
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
