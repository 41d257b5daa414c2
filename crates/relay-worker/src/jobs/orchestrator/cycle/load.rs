//! A cycle's first stage: the issue's state with the pending events the job read, the thread
//! fresh from the tracker, and from them the planner's context and the Validator's (one view for
//! both, so the judge sees what the planner saw).

use anyhow::Context as _;
use relay_actions::{IssueRows, ThreadRef, ValidationContext};
use relay_agent::context::{BuiltContext, ContextBuilder};
use relay_agent::trace::capped;
use relay_store::outbox::{OutboxRow, WriteKind};

use super::super::job::Job;
use super::super::planning_input::{self, Note, PlanningInput, status_reply_to};
use super::super::pre_cycle::{PreCycleFailure, PreCycleStep};
use super::env::CycleEnv;

/// What a cycle plans from.
pub struct CycleView {
    pub input: PlanningInput,
    /// The thread as the tracker listed it now.
    pub thread: Vec<Note>,
    /// The planner's context.
    pub context: BuiltContext,
    /// The Validator's context, from the same rows and thread.
    pub validation: ValidationContext,
    /// Writes the tracker refused for good that the planner is told about in this cycle.
    pub refused: Vec<OutboxRow>,
    /// The last pending event the cycle answers (the watermark it raises).
    pub last_event: i64,
}

/// Loads the cycle's view of the issue; `None` when no event is pending.
pub async fn load(env: &CycleEnv, job: &Job) -> anyhow::Result<Option<CycleView>> {
    let Some(last_event) = job.pending.last_event() else {
        return Ok(None);
    };
    let issue_id = job.issue.id;
    let mut conn = env.pool.acquire().await.context("no database connection")?;
    let input = planning_input::load(&mut conn, issue_id, &job.pending.events)
        .await?
        .with_context(|| format!("issue {issue_id} does not exist"))?;
    let thread: Vec<Note> = job
        .tracker
        .list_thread(&job.issue_ref)
        .await
        .map_err(|error| PreCycleFailure::new(PreCycleStep::ThreadFetch, &error))?
        .iter()
        .map(Note::from)
        .collect();
    let mut context = planning_input::build(&input, &thread);
    // Per event: authors who may not engage Relay are shown as context only.
    context.context_only_actors = input
        .events
        .iter()
        .filter(|e| !job.admission.admits(&e.actor))
        .map(|e| e.actor.clone())
        .collect();
    context.context_only_actors.dedup();
    planning_input::mark_answered_commands(&mut context, &input, &job.answered);
    context.guidance = env.guidance.clone();
    // Writes the tracker refused for good since the planner last decided: it is told.
    let refused = relay_store::outbox::unshown_failures(&mut conn, issue_id)
        .await
        .context("failed to load refused writes")?;
    context.failed_writes = refused.iter().map(refused_line).collect();
    let context = ContextBuilder::new(env.settings.context_max_tokens)
        .with_redactions(env.redactions.clone())
        .build(&context);
    planning_input::count_shown_learnings(&mut conn, &input, context.learnings_shown).await;
    drop(conn);
    let validation = validation(env, job, &input, &thread);
    Ok(Some(CycleView {
        input,
        thread,
        context,
        validation,
        refused,
        last_event,
    }))
}

/// The Validator's context: the same rows as the planner's, with the thread just listed
/// (fresher than the cache).
fn validation(
    env: &CycleEnv,
    job: &Job,
    input: &PlanningInput,
    thread: &[Note],
) -> ValidationContext {
    let thread_ref = |n: &Note| ThreadRef {
        note_id: n.note_id.clone(),
        discussion_id: n.discussion_id.clone(),
    };
    let mut validation = ValidationContext::from_rows(
        IssueRows {
            issue: &input.issue,
            gaps: &input.gaps,
            live_findings: &input.findings,
            spec: input.spec.as_ref(),
            thread: thread.iter().map(thread_ref).collect(),
        },
        env.snapshot.clone(),
    );
    // Decisions count only in the words of an admitted event.
    validation.authority = job.admission.authority(&input.events, thread);
    // A comment without `reply_to` answers in the triggering note's discussion (GitLab), like
    // the status comment; a new thread only when the issue itself triggered the cycle.
    validation.default_reply = status_reply_to(&input.events, thread)
        .and_then(|note_id| thread.iter().find(|n| n.note_id == note_id).map(thread_ref));
    // What the planner sees of an internal note (or of a confidential issue) stays here:
    // learnings drawn from it are stored for this issue only.
    let internal_note = thread.iter().any(|n| n.internal);
    validation.private_context |= input.issue.confidential || internal_note;
    // Gaps and findings opened with an internal note in context stay out of the public summary.
    validation.internal_context |= internal_note;
    // What a learning proposed in this cycle records about where it came from.
    validation.provenance = relay_actions::LearningProvenance {
        note_id: input.events.iter().rev().find_map(|e| e.note_id.clone()),
        guidance_digest: (!env.guidance.is_empty()).then(|| env.guidance.digest()),
    };
    validation
}

/// A refused write as the planner is told: `FAILED: post_comment | validation failed: … | permanent`.
fn refused_line(row: &OutboxRow) -> String {
    let kind = row.write_kind().map_or("write", WriteKind::action_name);
    relay_actions::Failure::permanent(kind, capped(row.last_error.as_deref().unwrap_or("refused")))
        .to_string()
}
