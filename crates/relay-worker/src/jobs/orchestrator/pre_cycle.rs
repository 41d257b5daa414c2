//! What a job says when a step before the planner fails: a failure before the planner could run
//! (the clone credential, the clone, the thread fetch) ends, on the job's last attempt, in one
//! status comment that says what failed ([`PreCycleFailure`], [`say`]). Never silence; never one
//! per retry.

use relay_actions::notices::NoticePlace;
use relay_store::PgPool;

use super::job::{Attempt, Job, JobRun};
use crate::cause::Cause;
use crate::handler::JobError;

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
    /// The classified error behind it (a tracker's, for the credential and the thread), kept for
    /// the operator's list of failed jobs (the reason is only its text).
    pub cause: Option<Cause>,
}

impl PreCycleFailure {
    pub fn new(step: PreCycleStep, error: &(dyn std::error::Error + 'static)) -> PreCycleFailure {
        let text = error.to_string();
        let first = text.lines().next().unwrap_or_default();
        PreCycleFailure {
            step,
            reason: first.chars().take(MAX_REASON_CHARS).collect(),
            cause: Cause::of_source(error),
        }
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

/// Says `failure` (on the last attempt) and returns the job's retryable error.
pub async fn say(pool: &PgPool, run: &JobRun, job: &Job, failure: PreCycleFailure) -> JobError {
    say_pre_cycle_failure(pool, run, job, &failure).await;
    JobError::Retryable(anyhow::Error::new(failure))
}

/// `error` as the job's: a [`PreCycleFailure`] is said first (see [`say`]).
pub async fn fail(pool: &PgPool, run: &JobRun, job: &Job, error: anyhow::Error) -> JobError {
    match error.downcast::<PreCycleFailure>() {
        Ok(failure) => say(pool, run, job, failure).await,
        Err(error) => error.into(),
    }
}

/// On the last attempt, queues the one status comment that says what failed (keyed by the job,
/// so a replay never posts it twice; the job's last drain sends it). Earlier attempts stay
/// silent: the retry may work. Errors while queueing it are logged; the job's own failure is
/// what it returns.
async fn say_pre_cycle_failure(pool: &PgPool, run: &JobRun, job: &Job, failure: &PreCycleFailure) {
    tracing::warn!(
        issue.id = run.issue_id.get(),
        job.id = run.job_id.get(),
        error.message = %failure,
        "the job failed before its first cycle"
    );
    if run.attempt != Attempt::Last {
        return;
    }
    let body = status_body(failure, job.bot());
    let enqueued = async {
        let mut conn = pool.acquire().await?;
        // The comment answers in the newest triggering note's discussion when it has one
        // (GitLab), like every status comment.
        let discussion_of_trigger = match job.pending.trigger_note() {
            Some(note) => relay_store::issues::notes(&mut conn, run.issue_id)
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
            run.issue_id,
            run.job_id,
            &body,
            place,
        )
        .await?;
        anyhow::Ok(())
    };
    if let Err(error) = enqueued.await {
        tracing::error!(
            issue.id = run.issue_id.get(),
            error.message = %format!("{error:#}"),
            "could not queue the status comment of a failure before the first cycle"
        );
    }
}
