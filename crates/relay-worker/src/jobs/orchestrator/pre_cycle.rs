//! What a job needs before its first cycle, and what it says when that fails.
//!
//! - [`clone_spec`]: the repository spec with the tracker's clone credential (in GitHub App mode
//!   an installation access token for the issue's installation, minted and refreshed by the
//!   tracker client; passed to git only through the environment by `relay-repo`).
//! - [`PreCycleFailure`] and [`say_pre_cycle_failure`]: a failure before the planner could run
//!   (the clone, the thread fetch, the snapshot) ends, on the job's last attempt, in one status
//!   comment that says what failed. Never silence; never one per retry.

use relay_core::{IssueId, JobId};
use std::sync::Arc;

use relay_actions::Executor;
use relay_actions::notices::NoticePlace;
use relay_repo::RepoSpec;
use relay_store::PgPool;
use relay_tracker::{IssueRef, IssueTracker};

use super::cycle::Attempt;

/// Longest reason quoted in the status comment (the error's first line), in characters.
const MAX_REASON_CHARS: usize = 300;

/// Which step before the first cycle failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreCycleStep {
    /// Getting the credential git clones with (the App's installation token).
    CloneCredential,
    /// Cloning or updating the repository and taking the snapshot.
    Snapshot,
    /// Listing the issue's thread from the tracker.
    ThreadFetch,
}

impl PreCycleStep {
    fn says(self) -> &'static str {
        match self {
            PreCycleStep::CloneCredential => "I could not get a token to clone the repository",
            PreCycleStep::Snapshot => "I could not clone or update the repository",
            PreCycleStep::ThreadFetch => "I could not read this issue's thread",
        }
    }
}

/// A failure before the planner ran, carried in the job's error so the job can say it.
#[derive(Debug, thiserror::Error)]
#[error("{}: {reason}", step.says())]
pub struct PreCycleFailure {
    pub step: PreCycleStep,
    pub reason: String,
}

impl PreCycleFailure {
    pub fn new(step: PreCycleStep, error: &dyn std::fmt::Display) -> PreCycleFailure {
        let text = error.to_string();
        let first = text.lines().next().unwrap_or_default();
        PreCycleFailure {
            step,
            reason: first.chars().take(MAX_REASON_CHARS).collect(),
        }
    }
}

/// `spec` with the tracker's clone credential, unless it is served from a local path.
pub async fn clone_spec(
    spec: RepoSpec,
    tracker: &Arc<dyn IssueTracker>,
    issue: &IssueRef,
) -> Result<RepoSpec, PreCycleFailure> {
    if spec.local_path.is_some() {
        return Ok(spec);
    }
    match tracker.clone_credential(issue).await {
        Ok(Some(token)) => Ok(spec.with_token(token)),
        Ok(None) => Ok(spec),
        Err(error) => Err(PreCycleFailure::new(PreCycleStep::CloneCredential, &error)),
    }
}

/// The status comment's body.
pub fn status_body(failure: &PreCycleFailure, bot_username: &str) -> String {
    format!(
        "{} ({}), so I could not start on this issue. Nothing was changed. \
         Mention @{bot_username} to try again once it is fixed.",
        failure.step.says(),
        failure.reason
    )
}

/// Where the job is when a pre-cycle step fails.
pub struct FailedJob<'a> {
    pub pool: &'a PgPool,
    pub tracker: &'a Arc<dyn IssueTracker>,
    pub issue_ref: &'a IssueRef,
    pub issue_id: IssueId,
    pub job_id: JobId,
    pub attempt: Attempt,
    pub bot_username: &'a str,
    /// The newest triggering note: the comment answers in its discussion when it has one
    /// (GitLab), like every status comment.
    pub trigger_note: Option<&'a str>,
}

impl FailedJob<'_> {
    /// Says `failure` (on the last attempt) and returns the job's retryable error.
    pub async fn say(&self, failure: PreCycleFailure) -> crate::handler::JobError {
        say_pre_cycle_failure(self, &failure).await;
        crate::handler::JobError::Retryable(anyhow::Error::new(failure))
    }
}

/// On the last attempt, queues and sends the one status comment that says what failed (keyed by
/// the job, so a replay never posts it twice). Earlier attempts stay silent: the retry may work.
/// Errors while saying it are logged; the job's own failure is what it returns.
pub async fn say_pre_cycle_failure(job: &FailedJob<'_>, failure: &PreCycleFailure) {
    tracing::warn!(
        issue.id = job.issue_id.get(),
        job.id = job.job_id.get(),
        error.message = %failure,
        "the job failed before its first cycle"
    );
    if job.attempt != Attempt::Last {
        return;
    }
    let body = status_body(failure, job.bot_username);
    let enqueued = async {
        let mut conn = job.pool.acquire().await?;
        let discussion_of_trigger = match job.trigger_note {
            Some(note) => relay_store::issues::notes(&mut conn, job.issue_id)
                .await?
                .into_iter()
                .find(|n| n.note_id == note && n.discussion_id.is_some()),
            None => None,
        };
        let place = match &discussion_of_trigger {
            Some(n) => NoticePlace::Reply {
                note_id: &n.note_id,
                discussion_id: n.discussion_id.as_deref(),
            },
            None => NoticePlace::Issue,
        };
        relay_actions::notices::enqueue_pre_cycle_status(
            &mut conn,
            job.issue_id,
            job.job_id,
            &body,
            place,
        )
        .await?;
        drop(conn);
        Executor::new(job.pool.clone(), job.tracker.clone())
            .drain_outbox(job.issue_id, job.issue_ref)
            .await?;
        anyhow::Ok(())
    };
    if let Err(error) = enqueued.await {
        tracing::error!(
            issue.id = job.issue_id.get(),
            error.message = %format!("{error:#}"),
            "could not post the status comment of a failure before the first cycle"
        );
    }
}
