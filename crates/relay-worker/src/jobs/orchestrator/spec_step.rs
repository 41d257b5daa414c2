//! The spec step: after an accepted go-ahead, the spec writer's draft is stored as a new version
//! and its parts queued in the outbox, and the go-ahead (`spec_requests`, recorded with the batch
//! that consumed it) is marked written in the same transaction.
//!
//! A go-ahead is never lost: when the writer fails (the LLM is out, its turn cap)
//! the request stays pending and the job fails retryably; every later job on the issue retries
//! it before anything else. On the job's last attempt the request is closed as failed and one
//! status comment (keyed by the request) says so.

use anyhow::Context as _;
use relay_actions::BatchId;
use relay_agent::context::{BuiltContext, ContextBuilder};
use relay_agent::spec::{SpecError, SpecWriter};
use relay_agent::trace::{TraceKind, capped};
use relay_core::action::ReadyForSpecGeneration;
use relay_core::{IssueId, JobId, SpecId};
use relay_store::specs::{SpecRequestOutcome, SpecRequestRow};
use serde_json::json;

use super::cycle::{Attempt, CycleDeps};
use super::issue_context::{self, Note};

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

/// Writes and stores the spec for go-ahead `request_id` (the outbox is drained by the caller).
pub async fn run(
    deps: &CycleDeps,
    context: &BuiltContext,
    handover: &ReadyForSpecGeneration,
    issue_id: IssueId,
    batch_id: BatchId,
    request_id: i64,
) -> anyhow::Result<SpecStep> {
    let tracer = deps.tracer.for_agent("executor");
    tracer.event(
        TraceKind::Stage,
        json!({ "stage": "spec", "phase": "begin", "request": request_id }),
    );
    let writer = SpecWriter::new(
        deps.spec.clone(),
        deps.explorer.clone(),
        deps.settings.spec_max_iterations,
        deps.settings.explore.max_parallel_explores,
    );
    let draft = match writer.write(context, handover).await {
        Ok(draft) => draft,
        Err(error) => {
            tracer.event(
                TraceKind::Stage,
                json!({ "stage": "spec", "phase": "end", "error": capped(&error.to_string()),
                        "last_attempt": deps.attempt == Attempt::Last }),
            );
            if deps.attempt == Attempt::Retryable {
                return Err(anyhow::Error::new(error)
                    .context("the spec writer failed; the go-ahead stays pending for the retry"));
            }
            give_up(deps, issue_id, batch_id, request_id, &error).await?;
            return Ok(SpecStep::GaveUp);
        }
    };
    let mut tx = deps.pool.begin().await?;
    relay_actions::execute::fence(&mut tx, deps.lease).await?;
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

/// Retries a go-ahead left pending by an earlier job: the context is rebuilt from the issue as
/// it is now, the spec written, the outbox drained.
pub async fn retry_request(
    deps: &CycleDeps,
    issue_id: IssueId,
    job_id: JobId,
    request: &SpecRequestRow,
) -> anyhow::Result<()> {
    let handover: ReadyForSpecGeneration = serde_json::from_value(request.handover.clone())
        .context("the recorded go-ahead is malformed")?;
    let mut conn = deps.pool.acquire().await?;
    let state = issue_context::load(&mut conn, issue_id)
        .await?
        .with_context(|| format!("issue {issue_id} does not exist"))?;
    drop(conn);
    let thread: Vec<Note> = deps
        .tracker
        .list_thread(&deps.issue_ref)
        .await
        .context("failed to list the thread")?
        .iter()
        .map(Note::from)
        .collect();
    let context = ContextBuilder::new(deps.settings.context_max_tokens)
        .with_redactions(deps.redactions.clone())
        .build(&issue_context::build(&state, &thread));
    // Cycle numbers of the job's own cycles start at 0; the retry's writes get their own.
    let batch_id = BatchId {
        job_id,
        cycle: RETRY_CYCLE,
    };
    let step = run(deps, &context, &handover, issue_id, batch_id, request.id).await?;
    let executor = relay_actions::Executor::new(deps.pool.clone(), deps.tracker.clone());
    let drain = executor.drain_outbox(issue_id, &deps.issue_ref).await?;
    super::cycle::trace_drain(&deps.tracer.for_agent("executor"), &drain);
    if let SpecStep::Written { spec_id, keys, .. } = step {
        let mut conn = deps.pool.acquire().await?;
        relay_actions::execute::record_spec_posted(&mut conn, spec_id, &keys).await?;
    }
    Ok(())
}

/// The batch cycle number of a go-ahead's retry (distinct from every planner cycle's).
const RETRY_CYCLE: i32 = -1;

/// Closes the request as failed and queues the one status comment that says so.
async fn give_up(
    deps: &CycleDeps,
    issue_id: IssueId,
    batch_id: BatchId,
    request_id: i64,
    error: &SpecError,
) -> anyhow::Result<()> {
    let why = match error {
        SpecError::IterationCap(_) => "the spec writer hit its step limit",
        SpecError::Llm(_) => "the language model was unavailable",
        _ => "the spec writer failed",
    };
    let body = format!(
        "I could not write the spec after your go-ahead: {why}, on every attempt. Nothing \
         else was changed. Mention @{} and say to go ahead again to retry.",
        deps.bot_username
    );
    let mut tx = deps.pool.begin().await?;
    relay_actions::execute::fence(&mut tx, deps.lease).await?;
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
        Some(&error.to_string()),
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
