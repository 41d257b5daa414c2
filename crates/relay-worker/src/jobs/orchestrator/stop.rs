//! Where the job stops early: the spend gates checked before each cycle (the tracker's daily
//! budget, the issue's token budget) and a cycle that stopped without a decision.

use anyhow::Context as _;
use relay_agent::planner::{PlanOutcome, PlanResult};
use relay_agent::trace::TraceKind;
use relay_store::PgPool;
use serde_json::{Value, json};

use super::setup::IssueJob;
use super::{JobRun, Orchestrator};
use crate::handler::JobError;

/// When the spend gates are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    BeforeFirstCycle,
    /// After `cycles` applied cycles of this job.
    BetweenCycles {
        cycles: u32,
    },
}

impl Orchestrator {
    /// `Some` (the job's result) when a spend gate stops the job: past the tracker's daily
    /// budget no LLM call is made today (the events wait for the reset); past the issue's cap
    /// (`cap`: the server's, narrowed by the repository) one note is posted, then silence until
    /// a maintainer raises it.
    pub(super) async fn spend_stop(
        &self,
        pool: &PgPool,
        job: &IssueJob<'_>,
        run: &JobRun,
        moment: Moment,
        cap: super::budget::IssueCap,
    ) -> Result<Option<Value>, JobError> {
        let daily = || {
            super::daily_budget::stop(
                pool,
                &job.issue.tracker,
                self.agent.daily_token_budget,
                run.issue_id,
                run.max_attempts,
            )
        };
        let issue_budget = || {
            self.budget_stop(
                pool,
                &job.tracker,
                &job.issue_ref,
                run.issue_id,
                run.job_id,
                &job.settings.bot_username,
                cap,
            )
        };
        match moment {
            Moment::BeforeFirstCycle => {
                if let Some(deferred) = daily().await? {
                    return Ok(Some(deferred));
                }
                Ok(issue_budget().await?)
            }
            Moment::BetweenCycles { cycles } => {
                if let Some(stopped) = issue_budget().await? {
                    run.tracer.for_agent("orchestrator").event(
                        TraceKind::Decision,
                        json!({ "decision": "stop_job", "reason": "issue_token_budget", "detail": stopped }),
                    );
                    return Ok(Some(json!({ "cycles": cycles, "budget": stopped })));
                }
                Ok(daily().await?.map(|mut deferred| {
                    deferred["cycles"] = json!(cycles);
                    deferred
                }))
            }
        }
    }
}

/// Cycle `cycle` stopped without a decision (its status comment was posted). A stop a retry
/// would repeat ends the job here, its events consumed (the status comment answered them)
/// instead of being run `max_attempts` times; any other stop fails the job retryably.
pub async fn stopped_cycle(
    pool: &PgPool,
    run: &JobRun,
    outcome: &PlanOutcome,
    through: i64,
    cycle: i32,
    cycles: u32,
) -> Result<Value, JobError> {
    let reason = match &outcome.result {
        PlanResult::Stopped(reason) if super::status::recurs(reason) => reason,
        _ => {
            return Err(JobError::Retryable(anyhow::anyhow!(
                "planning cycle {cycle} stopped without a decision"
            )));
        }
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
