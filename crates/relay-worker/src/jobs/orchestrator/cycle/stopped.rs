//! A cycle that stopped without a decision: its one status comment queued ([`say`]: what Relay
//! did, what stopped it, how to re-trigger; short on purpose, keyed by the events it answers so a
//! retried job never posts it twice), and how the job ends after it ([`end_job`]). Its events
//! stay pending.

use anyhow::Context as _;
use relay_actions::notices::NoticePlace;
use relay_agent::planner::{PlanOutcome, PlanResult, StopReason};
use relay_agent::trace::TraceKind;
use relay_store::PgPool;
use serde_json::{Value, json};

use super::super::job::{Attempt, Job, JobRun};
use super::super::planning_input::status_reply_to;
use super::env::CycleEnv;
use super::load::CycleView;
use crate::cause::{Cause, Classified};
use crate::handler::JobError;

/// Queues the stopped cycle's status comment, in the triggering note's discussion when there is
/// one. An unavailable LLM may be back for the retry: nothing is said until the last attempt
/// (the queue backs off meanwhile); other stops would recur, so they are said at once.
///
/// The comment is a notice keyed by the events it answers, never a planner batch's write: a
/// later run of the job (the operator's retry of a dead job) plans its cycles from 0 again, and
/// its reply must not take the notice's key (issue #45).
pub async fn say(
    env: &CycleEnv,
    job: &Job,
    loaded: &CycleView,
    outcome: &PlanOutcome,
    reason: &StopReason,
) -> anyhow::Result<()> {
    tracing::warn!(issue.id = job.issue.id.get(), reason = %reason, "planning cycle stopped");
    if matches!(reason, StopReason::Llm(_)) && env.run.attempt == Attempt::Retryable {
        return Ok(());
    }
    let body = status_comment(outcome, reason, job.bot());
    let answered = status_reply_to(&loaded.input.events, &loaded.thread)
        .and_then(|note_id| loaded.thread.iter().find(|n| n.note_id == note_id));
    let place = match answered {
        Some(note) => NoticePlace::Reply {
            note_id: &note.note_id,
            discussion_id: note.discussion_id.as_deref(),
        },
        None => NoticePlace::Issue,
    };
    let mut tx = env
        .pool
        .begin()
        .await
        .context("failed to begin a transaction")?;
    relay_actions::execute::fence(&mut tx, env.run.lease).await?;
    relay_actions::notices::enqueue_stopped_status(
        &mut tx,
        job.issue.id,
        env.run.job_id,
        loaded.last_event,
        &body,
        place,
    )
    .await?;
    tx.commit()
        .await
        .context("failed to commit the status comment")?;
    Ok(())
}

/// Cycle `cycle` stopped without a decision (its status comment was posted). A stop a retry
/// would repeat ends the job here, its events consumed through `through` (the status comment
/// answered them) instead of being run `max_attempts` times; any other stop fails the job
/// retryably.
pub async fn end_job(
    pool: &PgPool,
    run: &JobRun,
    outcome: &PlanOutcome,
    through: i64,
    cycle: u32,
    cycles: u32,
) -> Result<Value, JobError> {
    let stopped = || format!("planning cycle {cycle} stopped without a decision");
    let reason = match &outcome.result {
        PlanResult::Stopped(reason) if recurs(reason) => reason,
        PlanResult::Stopped(reason @ StopReason::Llm(llm)) => {
            // Why it stopped is the job's error, with its classified cause (the LLM's error
            // kind), so the operator's list of failed jobs says it without the trace. The
            // planner's error is borrowed: its text and kind are kept, not the error itself.
            let error = anyhow::Error::new(Classified {
                cause: Cause::llm(llm),
                message: reason.to_string(),
            });
            return Err(JobError::Retryable(error.context(stopped())));
        }
        _ => return Err(JobError::Retryable(anyhow::anyhow!(stopped()))),
    };
    let mut conn = pool.acquire().await.context("no database connection")?;
    relay_store::issues::mark_events_handled(&mut conn, run.issue_id, through)
        .await
        .context("failed to consume the answered events")?;
    tracing::warn!(
        issue.id = run.issue_id.get(),
        job.id = run.job_id.get(),
        reason = %reason,
        "planning stopped for a reason a retry would repeat: job ended"
    );
    run.tracer.for_agent("orchestrator").event(
        TraceKind::Decision,
        json!({ "decision": "stop_job", "reason": "recurring_stop", "detail": reason.to_string() }),
    );
    Ok(json!({ "cycles": cycles, "stopped": reason.to_string() }))
}

/// The comment body for a stopped cycle.
pub fn status_comment(outcome: &PlanOutcome, reason: &StopReason, bot_username: &str) -> String {
    let did = if outcome.explores == 0 {
        "I read the issue and the thread".to_owned()
    } else {
        format!(
            "I read the issue and the thread and ran {} code exploration{}",
            outcome.explores,
            if outcome.explores == 1 { "" } else { "s" }
        )
    };
    let why = match reason {
        StopReason::IterationCap(_) => "I hit my step limit before reaching a decision",
        StopReason::Budget { .. } => "I ran out of my token budget for this round",
        StopReason::RepeatedValidationFailures { .. } => {
            "my proposed updates failed validation repeatedly, so I wrote nothing"
        }
        StopReason::Llm(_) => "the language model was unavailable",
        _ => "something stopped me",
    };
    format!("{did}, but {why}. Nothing else was changed. Mention @{bot_username} to try again.")
}

/// Whether the same stop would happen again on a retry of the job: the same issue, context and
/// limits give the planner the same turns, budget and validator. Such a stop ends the job (its
/// status comment said so); only an unavailable LLM is worth the queue's retries.
pub fn recurs(reason: &StopReason) -> bool {
    match reason {
        StopReason::IterationCap(_)
        | StopReason::Budget { .. }
        | StopReason::RepeatedValidationFailures { .. } => true,
        StopReason::Llm(_) => false,
        // A stop added later is assumed to recur: a retry loop costs tokens, a missed retry only
        // waits for the next mention.
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use relay_agent::planner::{PlanResult, TokenSplit};

    use super::*;

    #[test]
    fn status_comments_say_what_was_done_what_stopped_and_how_to_retry() {
        let outcome = PlanOutcome {
            result: PlanResult::Stopped(StopReason::IterationCap(8)),
            iterations: 8,
            replans: 0,
            explores: 2,
            usage: Default::default(),
            explore_tokens: 0,
            split: TokenSplit::default(),
            submissions: Vec::new(),
        };
        let PlanResult::Stopped(reason) = &outcome.result else {
            unreachable!()
        };
        assert_eq!(
            status_comment(&outcome, reason, "relay-bot"),
            "I read the issue and the thread and ran 2 code explorations, but I hit my step \
             limit before reaching a decision. Nothing else was changed. Mention @relay-bot to \
             try again."
        );
    }

    #[test]
    fn only_an_unavailable_llm_is_worth_a_retry() {
        assert!(recurs(&StopReason::IterationCap(8)));
        assert!(recurs(&StopReason::Budget { used: 10, limit: 5 }));
        assert!(recurs(&StopReason::RepeatedValidationFailures {
            attempts: 3,
            last: String::new()
        }));
        assert!(!recurs(&StopReason::Llm(
            relay_agent::llm::LlmError::Timeout(std::time::Duration::from_secs(1))
        )));
    }
}
