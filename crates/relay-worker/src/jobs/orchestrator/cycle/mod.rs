//! One cycle ([`run`]), as ARCHITECTURE.md walks it:
//!
//! 1. [`load`]: the issue's state with the pending events the job read, the thread fresh from the
//!    tracker, the planner's context and the Validator's (none pending: nothing, no LLM call);
//! 2. [`plan`]: the Planner, its explorers and the Validator as the judge of `submit_actions`;
//! 3. [`apply`]: the accepted batch and the watermark raise in one transaction, the spec written
//!    after a go-ahead ([`spec`]), the living summary queued — or, without a decision,
//!    [`stopped`]: one status comment queued, the events left pending;
//! 4. [`after`]: the cycle's one drain, and what is pending read again for the next cycle.
//!
//! Every cycle runs with the job's [`CycleEnv`] ([`mod@env`]); what changes between cycles lives in
//! the job. A go-ahead left pending by an earlier job is retried before the first cycle, as a
//! cycle of its own ([`retry_spec`]).
//!
//! Layout: [`mod@env`], [`load`], [`plan`], [`apply`], [`stopped`], [`spec`], [`after`].

pub mod after;
pub mod apply;
pub mod env;
pub mod load;
pub mod plan;
pub mod spec;
pub mod stopped;

use anyhow::Context as _;
use relay_actions::{BatchId, DrainReport};
use relay_agent::context::ContextBuilder;
use relay_agent::planner::{PlanOutcome, PlanResult};
use relay_agent::trace::{TraceKind, capped};
use relay_core::action::ReadyForSpecGeneration;
use relay_store::specs::SpecRequestRow;
use serde_json::json;

use self::apply::Queued;
pub use self::env::CycleEnv;
use super::job::{Job, trace_drain};
use super::planning_input::{self, Note};

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
    /// decides whether a retry could help, see [`stopped::end_job`]).
    Stopped {
        outcome: PlanOutcome,
        drain: DrainReport,
        /// The last pending event the cycle saw (what the status comment answered).
        through: i64,
    },
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

/// Runs cycle `n` of the job, traced as the `cycle` stage.
pub async fn run(env: &CycleEnv, job: &mut Job, n: u32) -> anyhow::Result<CycleEnd> {
    let n = i32::try_from(n).unwrap_or(i32::MAX);
    let tracer = env.run.tracer.for_agent("orchestrator");
    tracer.event(
        TraceKind::Stage,
        json!({ "stage": "cycle", "phase": "begin", "cycle": n }),
    );
    let end = stages(env, job, n).await;
    after::save_traversal(env, job).await;
    tracer.event(
        TraceKind::Stage,
        match &end {
            Ok(end) => json!({ "stage": "cycle", "phase": "end", "cycle": n, "end": end.name() }),
            Err(error) => json!({
                "stage": "cycle", "phase": "end", "cycle": n, "end": "error",
                "error": capped(&format!("{error:#}")),
            }),
        },
    );
    if let Ok(CycleEnd::Applied { drain, .. } | CycleEnd::Stopped { drain, .. }) = &end {
        trace_drain(&tracer, drain);
    }
    end
}

/// load → plan → apply | stopped → after.
async fn stages(env: &CycleEnv, job: &mut Job, n: i32) -> anyhow::Result<CycleEnd> {
    let Some(loaded) = load::load(env, job).await? else {
        return Ok(CycleEnd::NothingPending);
    };
    let batch = BatchId {
        job_id: env.run.job_id,
        run: env.run.run,
        cycle: n,
    };
    let (outcome, validator) = plan::plan(env, &loaded).await;
    match &outcome.result {
        PlanResult::Submitted(actions) => {
            let queued = apply::apply(env, job, &loaded, &validator, actions, batch).await?;
            let sent = after::send(env, job, queued).await?;
            Ok(CycleEnd::Applied {
                outcome,
                drain: sent.drain,
                spec_version: sent.spec_version,
            })
        }
        PlanResult::Stopped(reason) => {
            stopped::say(env, job, &loaded, &outcome, reason).await?;
            let sent = after::send(env, job, Queued::default()).await?;
            Ok(CycleEnd::Stopped {
                outcome,
                drain: sent.drain,
                through: loaded.last_event,
            })
        }
    }
}

/// The batch cycle number of a go-ahead's retry (distinct from every planner cycle's).
const RETRY_CYCLE: i32 = -1;

/// Retries a go-ahead left pending by an earlier job: the context rebuilt from the issue as it
/// is now, the spec written, then the cycle's after stage (the drain, what is pending read
/// again).
pub async fn retry_spec(
    env: &CycleEnv,
    job: &mut Job,
    request: &SpecRequestRow,
) -> anyhow::Result<()> {
    let handover: ReadyForSpecGeneration = serde_json::from_value(request.handover.clone())
        .context("the recorded go-ahead is malformed")?;
    let issue_id = job.issue.id;
    let mut conn = env.pool.acquire().await?;
    let input = planning_input::load(&mut conn, issue_id, &job.pending.events)
        .await?
        .with_context(|| format!("issue {issue_id} does not exist"))?;
    drop(conn);
    let thread: Vec<Note> = job
        .tracker
        .list_thread(&job.issue_ref)
        .await
        .context("failed to list the thread")?
        .iter()
        .map(Note::from)
        .collect();
    let context = ContextBuilder::new(env.settings.context_max_tokens)
        .with_redactions(env.redactions.clone())
        .build(&planning_input::build(&input, &thread));
    // Cycle numbers of the job's own cycles start at 0; the retry's writes get their own.
    let batch = BatchId {
        job_id: env.run.job_id,
        run: env.run.run,
        cycle: RETRY_CYCLE,
    };
    let step = spec::write(env, job, &context, &handover, batch, request.id).await?;
    let queued = Queued {
        spec: Some(Ok(step)),
        summary: false,
    };
    let sent = after::send(env, job, queued).await?;
    trace_drain(&env.run.tracer.for_agent("executor"), &sent.drain);
    Ok(())
}
