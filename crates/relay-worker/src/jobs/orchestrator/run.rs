//! The Orchestrator's loop, as its diagram draws it: start (drain, what is pending) →
//! engagement (the server's roles) → checkout and the repository's `.relay.toml` → engagement
//! narrowed by it → commands → spend gates (its caps) → job setup → up to `cycles_per_job`
//! [`super::cycle`]s → the follow-up job. Each step lives in its own file; this one only sequences them.

use std::sync::Arc;

use relay_agent::agent_settings::AgentSettings;
use relay_agent::llm::LlmSettings;
use relay_core::TrackerSettings;
use relay_repo::RepoManager;
use relay_store::PgPool;
use relay_tracker::Trackers;
use serde_json::{Value, json};

use super::JobRun;
use super::commands::replies::cap_of;
use super::commands::{CommandEnv, Commands, commands_pending};
use super::cycle::{CycleEnd, enqueue_acknowledgement, run_cycle};
use super::engagement::Engagement;
use super::pre_cycle::PreCycleFailure;
use super::role_cache::RoleCache;
use super::setup::{Head, Start};
use super::stop::{Moment, stopped_cycle};
use crate::handler::JobError;
use crate::jobs::RepoSpecs;

/// The orchestrator's dependencies: trackers, LLM and agent settings, tool limits. Built by the
/// binary when an LLM is configured.
pub struct Orchestrator {
    pub trackers: Trackers,
    pub tracker_settings: Vec<TrackerSettings>,
    pub llm: LlmSettings,
    pub agent: AgentSettings,
    pub tools: relay_tools::ToolLimits,
    /// The code-graph store and indexer (`None`: explorers get no `codegraph` tool).
    pub codegraph: Option<Arc<crate::jobs::reindex::CodegraphIndexing>>,
    /// Authors' roles looked up recently (`RoleCache::default()`), shared by all jobs.
    pub roles: RoleCache,
    /// `[prices]`: the living summary's footer shows a cost for the models it knows.
    pub prices: Arc<relay_core::prices::Prices>,
}

impl Orchestrator {
    /// Runs up to `cycles_per_job` cycles on the issue. A cycle stopped by an unavailable LLM
    /// fails the job retryably so the queue backs off (its events stay pending); a stop a retry
    /// would repeat ends the job after its status comment, its events consumed.
    ///
    /// Whatever way the job ends, a tracker write still pending gets the issue a job at the time
    /// it is due, and a reply refused for good gets one short status comment.
    pub async fn orchestrate(
        &self,
        pool: &PgPool,
        repos: &RepoManager,
        specs: &RepoSpecs,
        run: &JobRun,
    ) -> Result<Value, JobError> {
        let result = self.run_cycles(pool, repos, specs, run).await;
        super::outbox_care::after_job(self, pool, run, &result).await;
        result
    }

    async fn run_cycles(
        &self,
        pool: &PgPool,
        repos: &RepoManager,
        specs: &RepoSpecs,
        run: &JobRun,
    ) -> Result<Value, JobError> {
        let job = match self.start(pool, run).await? {
            Start::Idle(result) => return Ok(result),
            Start::Pending(job) => job,
        };
        let admission = match self.engage(pool, &job, run).await? {
            Engagement::Plan(admission) => admission,
            Engagement::Done(result) => return Ok(result),
        };
        // The repository's configuration at the checkout narrows who may engage, answers the
        // commands, and sets the caps.
        let mut checkout = self
            .checkout(pool, repos, specs, run, &job, Head::Current)
            .await?;
        let config = &checkout.config.effective;
        let admission = match self.narrow(pool, &job, run, config, admission).await? {
            Engagement::Plan(admission) => admission,
            Engagement::Done(result) => return Ok(result),
        };
        let env = CommandEnv {
            pool,
            repos,
            specs,
            run,
        };
        let answered = match self
            .run_commands(&env, &job, &mut checkout, &admission)
            .await?
        {
            Commands::Plan(answered) => answered,
            Commands::Done(result) => return Ok(result),
        };
        let cap = cap_of(&checkout);
        if let Some(stopped) = self
            .spend_stop(pool, &job, run, Moment::BeforeFirstCycle, cap)
            .await?
        {
            return Ok(stopped);
        }
        let mut prepared = self
            .prepare(pool, repos, run, &job, checkout, admission)
            .await?;
        prepared.deps.answered_commands = answered;
        let (deps, issue_id, job_id) = (&mut prepared.deps, run.issue_id, run.job_id);
        // A go-ahead whose spec is not written yet comes first: it was accepted by an earlier
        // cycle, and the spec writer failed (its retry is this job).
        if let Some(request) = &job.spec_request {
            super::spec_step::retry_request(deps, issue_id, job_id, request).await?;
        }
        // First contact: one reaction per issue (on an admitted author's event), sent with the
        // cycle's drain.
        if let Some(first) = job.events.iter().find(|e| deps.admission.admits(&e.actor)) {
            enqueue_acknowledgement(pool, issue_id, job_id, first.note_id.as_deref()).await?;
        }
        let mut cycles = 0;
        let mut handed_over = false;
        for cycle in 0..self.agent.cycles_per_job {
            if cycle > 0 {
                let moment = Moment::BetweenCycles { cycles };
                if let Some(stopped) = self.spend_stop(pool, &job, run, moment, cap).await? {
                    return Ok(stopped);
                }
                deps.admission = self
                    .readmit(pool, &job, run, &prepared.config.effective)
                    .await?;
                // A command that arrived meanwhile is answered before any planning: by the
                // next job.
                if commands_pending(pool, issue_id, &deps.bot_username, &deps.admission).await? {
                    handed_over = true;
                    break;
                }
            }
            let cycle = i32::try_from(cycle).unwrap_or(i32::MAX);
            let ended = match run_cycle(deps, issue_id, job_id, cycle).await {
                Err(error) => match error.downcast::<PreCycleFailure>() {
                    Ok(failure) => return Err(job.failed_job(pool, run).say(failure).await),
                    Err(error) => Err(error),
                },
                ended => ended,
            };
            let commit = prepared.snapshot.commit();
            let (explorer, traversal) = (&prepared.explorer, &mut prepared.traversal);
            super::traversal::save_if_changed(pool, issue_id, commit, explorer, traversal).await;
            match ended? {
                CycleEnd::NothingPending => break,
                CycleEnd::Applied { .. } => cycles += 1,
                CycleEnd::Stopped {
                    outcome, through, ..
                } => return stopped_cycle(pool, run, &outcome, through, cycle, cycles).await,
            }
            // The commands this job answered were shown with the first cycle's events.
            deps.answered_commands.clear();
        }
        drop(prepared);
        // Cut off at `cycles_per_job` with events still arriving (or handed over for their
        // commands): they get the next job.
        let follow_up = if cycles >= self.agent.cycles_per_job || handed_over {
            super::follow_up::ensure_follow_up(pool, issue_id, run.max_attempts)
                .await?
                .map(|enqueued| enqueued.job_id())
        } else {
            None
        };
        Ok(json!({ "cycles": cycles, "follow_up_job": follow_up }))
    }
}
