//! The Orchestrator that `process_issue` becomes: one job on one issue as a pipeline of stages,
//! free functions over explicit values ([`Orchestrator::orchestrate`] reads top to bottom). A
//! stage either goes on or ends the job with its result ([`job::JobStep`]); the cycles run with one
//! [`cycle::CycleEnv`] that never changes, and what changes between them lives in the
//! [`job::Job`]. Notices and command answers are only queued: the job drains at its start, once
//! per cycle, and once at its end when something is left.
//!
//! Layout, in the order the job runs:
//! - [`start`]: the issue and its tracker, the due writes drained (the job's one early drain),
//!   what is pending ([`pending`]);
//! - [`admit`]: actors → roles ([`role_cache`]) → who may make Relay act ([`admission`]),
//!   narrowed by the repository's `.relay.toml`; the first contact acknowledged;
//! - [`checkout`]: the snapshot and the repository's configuration at its commit; a failure before
//!   the first cycle says so once ([`pre_cycle`]);
//! - [`commands`]: `@bot help`, `status`, `refresh`, `stop`, `resume`, `forget`, `budget`,
//!   answered before any planning;
//! - [`gates`]: the spend gates before each cycle (the tracker's daily budget, the cap);
//! - [`related`]: the related repositories the repository and the server name, judged, the
//!   admitted ones checked out beside the issue's own;
//! - [`prepare`]: the code graphs ([`graph`]), toolbox, explorers, metered LLM clients and the
//!   prompt redactions ([`secrets`]) → the cycles' environment;
//! - [`cycle`]: load → plan (the Validator as judge: [`validator`]) → apply | stopped → after, up
//!   to `cycles_per_job` times, over the planner's input ([`planning_input`]); thorough mode's
//!   traversal state kept across jobs ([`traversal`]);
//! - [`after_job`]: the follow-up job, refused replies said once, the job's last drain, a job for
//!   writes still pending.
//!
//! Below them: [`job`] (the run, the job, how a stage ends it) and [`counts`] (the job's reads of
//! what is pending and its drains, counted for the tests that keep them to one per cycle).

pub mod admission;
pub mod admit;
pub mod after_job;
pub mod checkout;
pub mod commands;
pub mod counts;
pub mod cycle;
pub mod gates;
pub mod graph;
pub mod job;
pub mod pending;
pub mod planning_input;
pub mod pre_cycle;
pub mod prepare;
pub mod related;
pub mod role_cache;
pub mod secrets;
pub mod start;
pub mod traversal;
pub mod validator;

use std::sync::Arc;

use relay_agent::agent_settings::AgentSettings;
use relay_agent::llm::LlmSettings;
use relay_core::TrackerSettings;
use relay_repo::RepoManager;
use relay_store::PgPool;
use relay_tracker::Trackers;
use serde_json::{Value, json};

use self::admit::RoleLookup;
use self::checkout::{Head, Repos};
use self::cycle::{CycleEnd, stopped};
use self::gates::{Limits, Moment};
use self::job::{Job, JobStep};
use self::prepare::Setup;
use self::role_cache::RoleCache;
use crate::handler::JobError;
use crate::jobs::RepoSpecs;

pub use self::job::JobRun;
pub use self::prepare::metered_client;

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
    /// Whatever way the job ends, a reply refused for good gets one short status comment, what
    /// the job queued after its last drain is sent, and a tracker write still pending gets the
    /// issue a job at the time it is due.
    pub async fn orchestrate(
        &self,
        pool: &PgPool,
        repos: &RepoManager,
        specs: &RepoSpecs,
        run: &JobRun,
    ) -> Result<Value, JobError> {
        let mut job = start::open(&self.trackers, &self.tracker_settings, pool, run).await?;
        let ended = self.run(pool, repos, specs, run, &mut job).await;
        let result = ended.or_else(job::JobEnd::into_result);
        after_job::after_job(pool, run, &job, &result).await;
        result
    }

    /// The job, stage by stage.
    async fn run(
        &self,
        pool: &PgPool,
        repos: &RepoManager,
        specs: &RepoSpecs,
        run: &JobRun,
        job: &mut Job,
    ) -> JobStep<Value> {
        let (roles, from, prices) = (self.roles(), self.repos(repos, specs), &self.prices);
        start::start(pool, run, job).await?;
        admit::engage(roles, pool, run, job).await?;
        let mut checkout = checkout::checkout(from, pool, run, job, Head::Current).await?;
        admit::narrow(pool, run, job, &checkout.config.effective).await?;
        commands::answer(pool, run, from, prices, job, &mut checkout).await?;
        let limits = Limits::of(&checkout, &self.agent, prices);
        gates::check(pool, run, job, &limits, Moment::BeforeFirstCycle).await?;
        let related = related::check_out(from, pool, job, &checkout).await;
        let env =
            prepare::prepare(self.setup(), pool, repos, run, job, &checkout, &related).await?;
        if let Some(request) = job.pending.spec_request.clone() {
            cycle::retry_spec(&env, job, &request).await?;
        }
        admit::acknowledge(pool, run, job).await?;
        let mut cycles = 0;
        for n in 0..self.agent.cycles_per_job {
            if n > 0 {
                gates::check(pool, run, job, &limits, Moment::BetweenCycles { cycles }).await?;
                admit::readmit(roles, run, job, &checkout.config.effective).await?;
                // A command that arrived meanwhile is answered before any planning: by the next job.
                if job.admission.any_command(&job.pending.commands) {
                    break;
                }
            }
            match cycle::run(&env, job, n).await {
                Ok(CycleEnd::NothingPending) => break,
                Ok(CycleEnd::Applied { .. }) => cycles += 1,
                Ok(CycleEnd::Stopped {
                    outcome, through, ..
                }) => return Ok(stopped::end_job(pool, run, &outcome, through, n, cycles).await?),
                Err(error) => return Err(pre_cycle::fail(pool, run, job, error).await.into()),
            }
            // The commands this job answered were shown with the first cycle's events.
            job.answered.clear();
        }
        // Events still pending after the last cycle (cut off at `cycles_per_job`, or handed over
        // for their commands) get the next job.
        let follow_up = after_job::follow_up(pool, run, &job.pending).await?;
        Ok(json!({ "cycles": cycles, "follow_up_job": follow_up }))
    }

    /// Who decides whether an author may engage.
    fn roles(&self) -> RoleLookup<'_> {
        RoleLookup {
            cache: &self.roles,
            policy: &self.agent.engage_roles,
        }
    }

    /// Where the job's checkouts come from.
    fn repos<'a>(&'a self, repos: &'a RepoManager, specs: &'a RepoSpecs) -> Repos<'a> {
        Repos {
            repos,
            specs,
            agent: &self.agent,
        }
    }

    /// The settings the cycles are built from.
    fn setup(&self) -> Setup<'_> {
        Setup {
            llm: &self.llm,
            agent: &self.agent,
            tools: &self.tools,
            codegraph: self.codegraph.as_deref(),
            trackers: &self.tracker_settings,
            prices: &self.prices,
        }
    }
}
