//! One orchestrator cycle: ContextBuilder → Planner → Validator → Executor (the watermark raise in
//! the executor's transaction) → outbox drain, plus the spec step and the acknowledgement.
//!
//! A cycle that stops without a decision posts one status comment (keyed by job and cycle, so a
//! retried job never posts it twice) and leaves its events pending.

use relay_core::{IssueId, JobId};
use std::sync::Arc;

use super::validator::ActionsValidator;
use anyhow::Context as _;
use relay_actions::{
    BatchId, DrainReport, Executor, IssueRows, Lease, Snapshot, ThreadRef, ValidationContext,
    WatermarkRaise,
};
use relay_agent::agent_settings::AgentSettings;
use relay_agent::context::ContextBuilder;
use relay_agent::llm::LlmClient;
use relay_agent::planner::{Explorer, PlanOutcome, PlanResult, Planner, PlannerLimits, StopReason};
use relay_agent::trace::{TraceKind, Tracer, capped};
use relay_core::action::PostComment;
use relay_core::{Action, ActionBatch};
use relay_store::PgPool;
use relay_store::outbox::WriteKind;
use relay_tracker::{IssueRef, IssueTracker};
use secrecy::SecretString;
use serde_json::json;

use super::admission::Admission;
use super::issue_context::{self, Note};
use super::spec_step::{self, SpecStep};
use super::status::{status_comment, status_reply_to};

/// What a cycle needs; built once per job.
#[derive(Clone)]
pub struct CycleDeps {
    pub pool: PgPool,
    pub tracker: Arc<dyn IssueTracker>,
    pub issue_ref: IssueRef,
    pub planner: LlmClient,
    pub spec: LlmClient,
    pub explorer: Arc<dyn Explorer>,
    /// The explored checkout (`None`: findings cannot be verified and are refused).
    pub snapshot: Option<Snapshot>,
    pub settings: AgentSettings,
    pub bot_username: String,
    /// Secret values never to appear in a prompt.
    pub redactions: Vec<SecretString>,
    /// The job run's trace (the LLM clients and explorer above carry their own handles).
    pub tracer: Tracer,
    /// Whether the queue will run this job again if the cycle stops.
    pub attempt: Attempt,
    /// Which pending events' authors may make Relay act (decided per event by the job).
    pub admission: Admission,
    /// The job's lease: the batch transaction is fenced by it.
    pub lease: Option<Lease>,
    /// `[prices]`, for the cost in the living summary's footer.
    pub prices: Arc<relay_core::prices::Prices>,
    /// The repository's guidance (`.relay.toml` instructions, guidance files) at the commit.
    pub guidance: relay_core::repo_config::GuidanceText,
    /// Pending events that were commands Relay already answered (`@bot help`, …): shown to the
    /// planner as answered, never as something to act on.
    pub answered_commands: Vec<super::commands::AnsweredCommand>,
}

/// Whether a job attempt is its last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// A failed cycle is retried after a backoff: a transient stop (the LLM unavailable) says
    /// nothing yet.
    Retryable,
    /// No retry follows: every stop posts its status comment.
    Last,
}

/// How a cycle ended.
#[derive(Debug)]
pub enum CycleEnd {
    /// No event above the watermark.
    NothingPending,
    /// A batch was applied (events consumed) and the outbox drained.
    Applied {
        outcome: PlanOutcome,
        drain: DrainReport,
        spec_version: Option<i32>,
    },
    /// No decision; the status comment was queued and sent; the events stay pending (the job
    /// decides whether a retry could help, see [`super::status::recurs`]).
    Stopped {
        outcome: PlanOutcome,
        drain: DrainReport,
        /// The last pending event the cycle saw (what the status comment answered).
        through: i64,
    },
}

/// Runs cycle `cycle` of job `job_id` on `issue_id`.
pub async fn run_cycle(
    deps: &CycleDeps,
    issue_id: IssueId,
    job_id: JobId,
    cycle: i32,
) -> anyhow::Result<CycleEnd> {
    let tracer = deps.tracer.for_agent("orchestrator");
    tracer.event(
        TraceKind::Stage,
        json!({ "stage": "cycle", "phase": "begin", "cycle": cycle }),
    );
    let end = run_cycle_inner(deps, issue_id, job_id, cycle).await;
    tracer.event(
        TraceKind::Stage,
        match &end {
            Ok(end) => {
                json!({ "stage": "cycle", "phase": "end", "cycle": cycle, "end": end.name() })
            }
            Err(error) => json!({
                "stage": "cycle", "phase": "end", "cycle": cycle, "end": "error",
                "error": capped(&format!("{error:#}")),
            }),
        },
    );
    if let Ok(CycleEnd::Applied { drain, .. } | CycleEnd::Stopped { drain, .. }) = &end {
        trace_drain(&tracer, drain);
    }
    end
}

impl CycleEnd {
    /// How the cycle ended, as the trace names it.
    pub fn name(&self) -> &'static str {
        match self {
            CycleEnd::NothingPending => "nothing_pending",
            CycleEnd::Applied { .. } => "applied",
            CycleEnd::Stopped { .. } => "stopped",
        }
    }
}

/// One `action` event per tracker write the drain sent or gave up on.
pub(crate) fn trace_drain(tracer: &Tracer, drain: &DrainReport) {
    for sent in &drain.sent {
        tracer.event(
            TraceKind::Action,
            json!({
                "action": "tracker_write",
                "ok": true,
                "idempotency_key": sent.idempotency_key,
                "note_id": sent.note_id,
                "recovered": sent.recovered,
            }),
        );
    }
    for failure in &drain.failures {
        tracer.event(
            TraceKind::Action,
            json!({ "action": failure.location, "ok": false, "error": capped(&failure.to_string()) }),
        );
    }
}

async fn run_cycle_inner(
    deps: &CycleDeps,
    issue_id: IssueId,
    job_id: JobId,
    cycle: i32,
) -> anyhow::Result<CycleEnd> {
    let mut conn = deps
        .pool
        .acquire()
        .await
        .context("no database connection")?;
    let state = issue_context::load(&mut conn, issue_id)
        .await?
        .with_context(|| format!("issue {issue_id} does not exist"))?;
    let Some(last_event) = state.events.last().map(|e| e.id) else {
        return Ok(CycleEnd::NothingPending);
    };
    let thread: Vec<Note> = deps
        .tracker
        .list_thread(&deps.issue_ref)
        .await
        .map_err(|error| {
            super::pre_cycle::PreCycleFailure::new(
                super::pre_cycle::PreCycleStep::ThreadFetch,
                &error,
            )
        })?
        .iter()
        .map(Note::from)
        .collect();
    let mut input = issue_context::build(&state, &thread);
    // Per event: authors who may not engage Relay are shown as context only.
    input.context_only_actors = state
        .events
        .iter()
        .filter(|e| !deps.admission.admits(&e.actor))
        .map(|e| e.actor.clone())
        .collect();
    input.context_only_actors.dedup();
    issue_context::mark_answered_commands(&mut input, &state, &deps.answered_commands);
    input.guidance = deps.guidance.clone();
    // Writes the tracker refused for good since the planner last decided: it is told.
    let refused = relay_store::outbox::unshown_failures(&mut conn, issue_id)
        .await
        .context("failed to load refused writes")?;
    input.failed_writes = refused.iter().map(refused_line).collect();
    let context = ContextBuilder::new(deps.settings.context_max_tokens)
        .with_redactions(deps.redactions.clone())
        .build(&input);
    issue_context::count_shown_learnings(&mut conn, &state, context.learnings_shown).await;

    // The Validator's context comes from the same state as the planner's, with the thread just
    // listed (fresher than the cache).
    let mut validation = ValidationContext::from_rows(
        IssueRows {
            issue: &state.issue,
            gaps: &state.gaps,
            live_findings: &state.findings,
            spec: state.spec.as_ref(),
            thread: thread
                .iter()
                .map(|n| ThreadRef {
                    note_id: n.note_id.clone(),
                    discussion_id: n.discussion_id.clone(),
                })
                .collect(),
        },
        deps.snapshot.clone(),
    );
    // Decisions count only in the words of an admitted event.
    validation.authority = deps.admission.authority(&state.events, &thread);
    // A comment without `reply_to` answers in the triggering note's discussion (GitLab), like
    // the status comment; a new thread only when the issue itself triggered the cycle.
    validation.default_reply = status_reply_to(&state.events, &thread).and_then(|note_id| {
        thread
            .iter()
            .find(|n| n.note_id == note_id)
            .map(|n| ThreadRef {
                note_id: n.note_id.clone(),
                discussion_id: n.discussion_id.clone(),
            })
    });
    // What the planner sees of an internal note (or of a confidential issue) stays here:
    // learnings drawn from it are stored for this issue only.
    let internal_note = thread.iter().any(|n| n.internal);
    validation.private_context |= state.issue.confidential || internal_note;
    // Gaps and findings opened with an internal note in context stay out of the public summary.
    validation.internal_context |= internal_note;
    // What a learning proposed in this cycle records about where it came from.
    validation.provenance = relay_actions::LearningProvenance {
        note_id: state.events.iter().rev().find_map(|e| e.note_id.clone()),
        guidance_digest: (!deps.guidance.is_empty()).then(|| deps.guidance.digest()),
    };
    drop(conn);

    let validator = Arc::new(ActionsValidator::new(validation.clone()));
    let planner = Planner::new(
        deps.planner.clone(),
        deps.explorer.clone(),
        validator.clone(),
        PlannerLimits::from(&deps.settings),
    )
    .with_tracer(&deps.tracer);
    let outcome = planner.plan(&context).await;
    let executor = Executor::new(deps.pool.clone(), deps.tracker.clone()).with_lease(deps.lease);
    let batch_id = BatchId { job_id, cycle };
    let batch = match &outcome.result {
        PlanResult::Submitted(batch) => batch.clone(),
        PlanResult::Stopped(reason) => {
            tracing::warn!(issue.id = issue_id.get(), reason = %reason, "planning cycle stopped");
            // An unavailable LLM may be back for the retry: stay silent until the last attempt
            // (the queue backs off meanwhile). Other stops would recur, so they are said at once.
            if matches!(reason, StopReason::Llm(_)) && deps.attempt == Attempt::Retryable {
                // What is already queued (the acknowledgement) still goes out.
                let drain = executor.drain_outbox(issue_id, &deps.issue_ref).await?;
                return Ok(CycleEnd::Stopped {
                    outcome,
                    drain,
                    through: last_event,
                });
            }
            // Never silent: one status comment, keyed by (job, cycle), in the triggering note's
            // discussion when there is one; the events stay pending.
            let status = ActionBatch {
                actions: vec![Action::PostComment(PostComment {
                    content: status_comment(&outcome, reason, &deps.bot_username),
                    reply_to: status_reply_to(&state.events, &thread),
                })],
            };
            let validated = relay_actions::validate(&validation, &status)
                .map_err(|report| anyhow::anyhow!("status comment refused: {report}"))?;
            executor.execute(&validated, batch_id, None).await?;
            let drain = executor.drain_outbox(issue_id, &deps.issue_ref).await?;
            return Ok(CycleEnd::Stopped {
                outcome,
                drain,
                through: last_event,
            });
        }
    };
    // The planner's validator accepted it: its typed form is what the executor takes.
    let validated = validator
        .take_accepted(&batch)
        .context("the planner submitted a batch its validator did not accept")?;
    let applied = executor
        .execute(
            &validated,
            batch_id,
            Some(WatermarkRaise {
                issue_id,
                through_delivery: last_event,
            }),
        )
        .await?;
    let tracer = deps.tracer.for_agent("executor");
    for action in &batch.actions {
        tracer.event(
            TraceKind::Action,
            json!({ "action": action.kind(), "ok": true, "batch": format!("{job_id}:{cycle}") }),
        );
    }

    if !refused.is_empty() {
        let shown: Vec<relay_core::OutboxId> = refused.iter().map(|row| row.id).collect();
        let mut conn = deps.pool.acquire().await?;
        relay_store::outbox::mark_failures_shown(&mut conn, &shown).await?;
    }

    // The spec step's failure is returned only after the batch's own writes were drained.
    let spec = match (&applied.spec_requested, applied.spec_request_id) {
        (Some(handover), Some(request)) => {
            Some(spec_step::run(deps, &context, handover, issue_id, batch_id, request).await)
        }
        _ => None,
    };
    let written_version = match &spec {
        Some(Ok(SpecStep::Written { version, .. })) => Some(*version),
        _ => None,
    };
    // The living summary follows what the cycle changed (sent with the cycle's writes).
    let summary = deps.settings.summary_comment && changed_state(&applied, written_version);
    if summary {
        relay_actions::summary::refresh_summary(&deps.pool, issue_id, Some(job_id), &deps.prices)
            .await?;
    }
    let mut drain = executor.drain_outbox(issue_id, &deps.issue_ref).await?;
    let spec_version = match spec {
        Some(Ok(SpecStep::Written {
            spec_id,
            version,
            keys,
        })) => {
            let mut conn = deps.pool.acquire().await?;
            let posted =
                relay_actions::execute::record_spec_posted(&mut conn, spec_id, &keys).await?;
            drop(conn);
            // The spec is now posted: the summary says so (an edit only if the body changed).
            if summary && posted {
                relay_actions::summary::refresh_summary(
                    &deps.pool,
                    issue_id,
                    Some(job_id),
                    &deps.prices,
                )
                .await?;
                let more = executor.drain_outbox(issue_id, &deps.issue_ref).await?;
                drain.sent.extend(more.sent);
                drain.failures.extend(more.failures);
                drain.reschedule_after = more.reschedule_after.or(drain.reschedule_after);
            }
            Some(version)
        }
        Some(Ok(SpecStep::GaveUp)) | None => None,
        Some(Err(error)) => {
            trace_drain(&deps.tracer.for_agent("orchestrator"), &drain);
            return Err(error);
        }
    };
    Ok(CycleEnd::Applied {
        outcome,
        drain,
        spec_version,
    })
}

/// A refused write as the planner is told: `FAILED: post_comment | validation failed: … | permanent`.
fn refused_line(row: &relay_store::outbox::OutboxRow) -> String {
    let kind = row.write_kind().map_or("write", WriteKind::action_name);
    relay_actions::Failure::permanent(kind, capped(row.last_error.as_deref().unwrap_or("refused")))
        .to_string()
}

/// Whether an applied batch changed what the summary shows: gaps, findings or the spec.
fn changed_state(applied: &relay_actions::Applied, spec_version: Option<i32>) -> bool {
    !(applied.opened_gaps.is_empty()
        && applied.closed_gaps.is_empty()
        && applied.added_findings.is_empty()
        && applied.removed_findings.is_empty()
        && applied.dropped_findings.is_empty())
        || applied.spec_verdict.is_some()
        || spec_version.is_some()
}

/// Queues the first-contact acknowledgement (an "eyes" reaction on the triggering comment, or the
/// issue): keyed per issue, so it is sent once whatever happens to the job.
pub async fn enqueue_acknowledgement(
    pool: &PgPool,
    issue_id: IssueId,
    job_id: JobId,
    note_id: Option<&str>,
) -> anyhow::Result<()> {
    let mut conn = pool.acquire().await?;
    relay_actions::notices::enqueue_acknowledgement(&mut conn, issue_id, job_id, note_id).await?;
    Ok(())
}
