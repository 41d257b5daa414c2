//! The spec step: after an accepted go-ahead, the spec writer's draft is stored as a new version
//! and its parts queued in the outbox, and the go-ahead (`spec_requests`, recorded with the batch
//! that consumed it) is marked written in the same transaction.
//!
//! A go-ahead is never lost: when the writer fails (the LLM is out, its turn cap)
//! the request stays pending and the job fails retryably; every later job on the issue retries
//! it before anything else (`cycle::retry_spec`). On the job's last attempt the request is closed as failed and one
//! status comment (keyed by the request) says so.

use relay_actions::BatchId;
use relay_agent::context::BuiltContext;
use relay_agent::spec::{SpecError, SpecWriter};
use relay_agent::trace::{TraceKind, capped};
use relay_core::action::ReadyForSpecGeneration;
use relay_store::specs::SpecRequestOutcome;
use serde_json::json;

use super::super::job::{Attempt, Job};
use super::env::CycleEnv;
use relay_core::SpecId;

/// How a spec step ended (a retryable failure is an `Err`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecStep {
    /// Stored as `version`; its parts are queued under `keys`.
    Written {
        spec_id: SpecId,
        version: i32,
        keys: Vec<String>,
    },
    /// The last attempt failed: the request is closed and the status comment queued.
    GaveUp,
}

/// Writes and stores the spec for go-ahead `request_id` (its parts are queued: the cycle's drain
/// sends them).
pub async fn write(
    env: &CycleEnv,
    job: &Job,
    context: &BuiltContext,
    handover: &ReadyForSpecGeneration,
    batch_id: BatchId,
    request_id: i64,
) -> anyhow::Result<SpecStep> {
    let issue_id = job.issue.id;
    let tracer = env.run.tracer.for_agent("executor");
    tracer.event(
        TraceKind::Stage,
        json!({ "stage": "spec", "phase": "begin", "request": request_id }),
    );
    let writer = SpecWriter::new(
        env.spec.clone(),
        env.explorer.clone(),
        env.settings.spec_max_iterations,
        env.settings.explore.max_parallel_explores,
    );
    let draft = match writer.write(context, handover).await {
        Ok(draft) => draft,
        Err(error) => {
            tracer.event(
                TraceKind::Stage,
                json!({ "stage": "spec", "phase": "end", "error": capped(&error.to_string()),
                        "last_attempt": env.run.attempt == Attempt::Last }),
            );
            if env.run.attempt == Attempt::Retryable {
                return Err(anyhow::Error::new(error)
                    .context("the spec writer failed; the go-ahead stays pending for the retry"));
            }
            let why = match &error {
                SpecError::IterationCap(_) => {
                    "the spec writer hit its step limit, on every attempt"
                }
                SpecError::Llm(_) => "the language model was unavailable, on every attempt",
                _ => "the spec writer failed, on every attempt",
            };
            give_up(env, job, batch_id, request_id, why, &error.to_string()).await?;
            return Ok(SpecStep::GaveUp);
        }
    };
    if let Some(label) = hidden_place(env, job, &draft.markdown) {
        // Nothing of a repository more private than the issue is posted on it, even from one
        // admitted by mistake; a retry would write from the same explorations.
        let why =
            format!("the spec named code of {label}, a repository more private than this issue");
        tracer.event(
            TraceKind::Stage,
            json!({ "stage": "spec", "phase": "end", "error": capped(&why) }),
        );
        give_up(env, job, batch_id, request_id, &why, &why).await?;
        return Ok(SpecStep::GaveUp);
    }
    let mut tx = env.pool.begin().await?;
    relay_actions::execute::fence(&mut tx, env.run.lease).await?;
    let row = relay_store::specs::insert_draft(&mut tx, issue_id, &draft.markdown, None).await?;
    let keys = relay_actions::execute::enqueue_spec(&mut tx, &row, batch_id).await?;
    relay_store::specs::finish_request(&mut tx, request_id, SpecRequestOutcome::Written, None)
        .await?;
    tx.commit().await?;
    tracer.event(
        TraceKind::Stage,
        json!({ "stage": "spec", "phase": "end", "version": row.version, "parts": keys.len() }),
    );
    Ok(SpecStep::Written {
        spec_id: row.id,
        version: row.version,
        keys,
    })
}

/// The label of a related repository more private than the issue whose place `markdown` names.
fn hidden_place(env: &CycleEnv, job: &Job, markdown: &str) -> Option<String> {
    let snapshot = env.snapshot.as_ref()?;
    let issue = relay_actions::context::issue_visibility(&job.issue);
    relay_actions::action::privacy::hidden_in(snapshot, issue)
        .into_iter()
        .find(|(label, _)| relay_tools::place::names_place_of(markdown, label))
        .map(|(label, _)| label.to_owned())
}

/// Closes the request as failed (`error` recorded with it) and queues the one status comment
/// that says `why`.
async fn give_up(
    env: &CycleEnv,
    job: &Job,
    batch_id: BatchId,
    request_id: i64,
    why: &str,
    error: &str,
) -> anyhow::Result<()> {
    let body = format!(
        "I could not write the spec after your go-ahead: {why}. Nothing \
         else was changed. Mention @{} and say to go ahead again to retry.",
        job.bot()
    );
    let issue_id = job.issue.id;
    let mut tx = env.pool.begin().await?;
    relay_actions::execute::fence(&mut tx, env.run.lease).await?;
    relay_actions::notices::enqueue_spec_failed(
        &mut tx,
        issue_id,
        batch_id.job_id,
        request_id,
        &body,
    )
    .await?;
    relay_store::specs::finish_request(
        &mut tx,
        request_id,
        SpecRequestOutcome::Failed,
        Some(error),
    )
    .await?;
    tx.commit().await?;
    tracing::error!(
        issue.id = issue_id.get(),
        request = request_id,
        error.message = %error,
        "the spec writer failed on the job's last attempt; the go-ahead is closed as failed"
    );
    Ok(())
}
