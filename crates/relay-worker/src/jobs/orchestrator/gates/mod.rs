//! The spend gates a job passes before each cycle: the tracker's daily budget
//! ([`daily_budget`]) and the issue's cap ([`budget`]), each a stop that ends the job with its
//! result ([`check`]).
//!
//! Layout: [`mod@budget`] (the per-issue cap across jobs, its note and its raises),
//! [`daily_budget`] (a tracker's spend per UTC day).

pub mod budget;
pub mod daily_budget;

use relay_agent::agent_settings::AgentSettings;
use relay_agent::trace::TraceKind;
use relay_core::prices::Prices;
use relay_store::PgPool;
use serde_json::json;

use self::budget::IssueCap;
use super::checkout::CheckedOut;
use super::job::{Job, JobEnd, JobRun, JobStep};

/// When the spend gates are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    BeforeFirstCycle,
    /// After `cycles` applied cycles of this job.
    BetweenCycles {
        cycles: u32,
    },
}

/// The limits a job spends under.
#[derive(Debug, Clone, Copy)]
pub struct Limits<'a> {
    /// The issue's cap: the server's, narrowed by the repository.
    pub cap: IssueCap,
    /// The tracker's tokens per UTC day (`[agent] daily_token_budget`; 0: none).
    pub daily_tokens: u64,
    /// `[prices]`, to count the cap's dollars.
    pub prices: &'a Prices,
}

impl Limits<'_> {
    /// The limits under the checkout's configuration.
    pub fn of<'a>(checkout: &CheckedOut, agent: &AgentSettings, prices: &'a Prices) -> Limits<'a> {
        Limits {
            cap: IssueCap::of(&checkout.config.effective),
            daily_tokens: agent.daily_token_budget,
            prices,
        }
    }
}

/// Ends the job (with its result) when a spend gate stops it: past the tracker's daily budget
/// no LLM call is made today (the events wait for the reset); past the issue's cap one note is
/// queued, then silence until a maintainer raises it.
pub async fn check(
    pool: &PgPool,
    run: &JobRun,
    job: &Job,
    limits: &Limits<'_>,
    moment: Moment,
) -> JobStep {
    let daily = || {
        daily_budget::stop(
            pool,
            &job.issue.tracker,
            limits.daily_tokens,
            run.issue_id,
            run.max_attempts,
        )
    };
    let issue_budget = || budget::stop(pool, run, job, limits.cap, limits.prices);
    let stopped = match moment {
        Moment::BeforeFirstCycle => match daily().await? {
            Some(deferred) => Some(deferred),
            None => issue_budget().await?,
        },
        Moment::BetweenCycles { cycles } => match issue_budget().await? {
            Some(stopped) => {
                run.tracer.for_agent("orchestrator").event(
                    TraceKind::Decision,
                    json!({ "decision": "stop_job", "reason": "issue_token_budget", "detail": stopped }),
                );
                Some(json!({ "cycles": cycles, "budget": stopped }))
            }
            None => daily().await?.map(|mut deferred| {
                deferred["cycles"] = json!(cycles);
                deferred
            }),
        },
    };
    match stopped {
        Some(result) => Err(JobEnd::Done(result)),
        None => Ok(()),
    }
}
