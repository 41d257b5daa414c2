//! What the orchestrating `process_issue` needs beyond the queue: trackers, LLM and agent
//! settings, tool limits. Built by the binary when an LLM is configured.

use std::sync::Arc;

use anyhow::Context as _;
use relay_actions::{Executor, Snapshot};
use relay_agent::agent_settings::AgentSettings;
use relay_agent::explore::ExploreAgent;
use relay_agent::llm::{LlmClient, LlmError, LlmSettings, Role, UsageContext};
use relay_agent::toolbox::Toolbox;
use relay_agent::trace::{TraceKind, Tracer};
use relay_core::TrackerSettings;
use relay_repo::RepoManager;
use relay_store::PgPool;
use relay_tracker::{IssueRef, Trackers};
use serde_json::{Value, json};

use super::cycle::{Attempt, CycleDeps, CycleEnd, enqueue_acknowledgement, run_cycle};
use super::pre_cycle::{self, FailedJob, PreCycleFailure, PreCycleStep};
use super::role_cache::RoleCache;
use crate::handler::JobError;
use crate::jobs::RepoSpecs;
use crate::tool_graph::{StoreExploreObserver, load_hint, repo_key};

/// The job attempt [`Brain::orchestrate`] serves.
#[derive(Debug, Clone)]
pub struct JobRun {
    pub job_id: i64,
    /// Attempts of the follow-up job, when events are left after the last cycle.
    pub max_attempts: i32,
    pub issue_id: i64,
    /// Where the run's trace events go.
    pub tracer: Tracer,
    /// The claim's lease: the executor's transactions are fenced by it (`None`: unfenced, for
    /// runs outside the queue).
    pub lease: Option<relay_actions::Lease>,
    /// Whether the queue retries the job if a cycle stops ([`Attempt::Last`] unless told).
    pub attempt: Attempt,
}

impl JobRun {
    /// An untraced run.
    pub fn new(job_id: i64, max_attempts: i32, issue_id: i64) -> JobRun {
        JobRun {
            job_id,
            max_attempts,
            issue_id,
            tracer: Tracer::noop(),
            attempt: Attempt::Last,
            lease: None,
        }
    }

    /// The same run, fenced by the claim's lease.
    #[must_use]
    pub fn with_lease(mut self, lease: relay_actions::Lease) -> JobRun {
        self.lease = Some(lease);
        self
    }

    /// The same run, as attempt `attempt` of `max_attempts` of its job.
    #[must_use]
    pub fn at_attempt(mut self, attempt: i32, max_attempts: i32) -> JobRun {
        self.attempt = if attempt < max_attempts {
            Attempt::Retryable
        } else {
            Attempt::Last
        };
        self
    }

    /// The same run, traced to `tracer`.
    #[must_use]
    pub fn with_tracer(mut self, tracer: Tracer) -> JobRun {
        self.tracer = tracer;
        self
    }
}

/// The orchestrator's dependencies.
pub struct Brain {
    pub trackers: Trackers,
    pub tracker_settings: Vec<TrackerSettings>,
    pub llm: LlmSettings,
    pub agent: AgentSettings,
    pub tools: relay_tools::ToolLimits,
    /// The code-graph store and indexer (`None`: explorers get no `codegraph` tool).
    pub codegraph: Option<Arc<crate::jobs::reindex::CodegraphIndexing>>,
    /// Authors' roles looked up recently (`RoleCache::default()`), shared by all jobs.
    pub roles: RoleCache,
}

impl Brain {
    /// Runs up to `cycles_per_job` cycles on the issue (`max_attempts`: the follow-up job's, when
    /// events are left after the last cycle). A cycle stopped by an unavailable LLM fails the job
    /// retryably so the queue backs off (its events stay pending); a stop a retry would repeat
    /// (iteration cap, cycle budget, repeated validation failures) ends the job after its status
    /// comment, its events consumed.
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
        let result = self.orchestrate_inner(pool, repos, specs, run).await;
        if let Some(target) = self.write_target(pool, run.issue_id).await {
            super::outbox_care::report_refused_replies(pool, &target, run).await;
        }
        // A job the queue will run again drains first on its retry; otherwise (done, or its
        // last attempt) a write still pending gets the issue a job at its due time.
        let retried =
            matches!(result, Err(JobError::Retryable(_))) && run.attempt == Attempt::Retryable;
        if !retried
            && let Err(error) =
                super::follow_up::follow_up_for_outbox(pool, run.issue_id, run.max_attempts).await
        {
            tracing::warn!(
                issue.id = run.issue_id,
                error.message = %format!("{error:#}"),
                "failed to schedule the outbox follow-up; the sweeper will pick the writes up"
            );
        }
        result
    }

    async fn orchestrate_inner(
        &self,
        pool: &PgPool,
        repos: &RepoManager,
        specs: &RepoSpecs,
        run: &JobRun,
    ) -> Result<Value, JobError> {
        let (job_id, max_attempts, issue_id) = (run.job_id, run.max_attempts, run.issue_id);
        let tracer = run.tracer.for_agent("orchestrator");
        let mut conn = pool.acquire().await.context("no database connection")?;
        let issue = relay_store::issues::get(&mut conn, issue_id)
            .await
            .context("failed to load the issue")?
            .ok_or_else(|| anyhow::anyhow!("issue {issue_id} does not exist"))
            .map_err(JobError::Permanent)?;
        drop(conn);
        let settings = self
            .tracker_settings
            .iter()
            .find(|t| t.name.as_str() == issue.tracker)
            .ok_or_else(|| anyhow::anyhow!("tracker {:?} is not configured", issue.tracker))
            .map_err(JobError::Permanent)?;
        let tracker = self
            .trackers
            .get_str(&issue.tracker)
            .ok_or_else(|| anyhow::anyhow!("tracker {:?} has no client", issue.tracker))
            .map_err(JobError::Permanent)?;

        let issue_ref = IssueRef {
            project_id: issue.project_id.clone(),
            project_path: issue.project_path.clone(),
            number: issue.number,
            installation_id: issue.installation_id,
        };

        // Before anything else, and so before every early return: the issue's due writes (a
        // crash or a tracker outage may have left them behind the watermark).
        let drain = Executor::new(pool.clone(), tracker.clone())
            .drain_outbox(issue_id, &issue_ref)
            .await
            .context("failed to drain the outbox")?;
        super::cycle::trace_drain(&tracer, &drain);

        let mut conn = pool.acquire().await.context("no database connection")?;
        let events = relay_store::issues::pending_events(&mut conn, issue_id)
            .await
            .context("failed to load pending events")?;
        let spec_request = relay_store::specs::pending_request(&mut conn, issue_id)
            .await
            .context("failed to load the pending go-ahead")?;
        drop(conn);
        if events.is_empty() && spec_request.is_none() {
            return Ok(json!({
                "cycles": 0,
                "reason": "nothing pending",
                "drained": drain.sent.len(),
            }));
        }

        // Who may make Relay act, per event: each pending event's author by their role on the
        // project. A lookup that fails is retried (the job backs off), never read as "no".
        // Nobody allowed → the events are consumed as ignored, with the reasons, and no LLM is
        // called.
        let admission = match self.admit(&tracker, &issue, &issue_ref, &events).await {
            Ok(admission) => admission,
            Err(failure) => return Err(failure.fail_job(run, &tracer)),
        };
        if !events.is_empty() && !admission.any_admitted(&events) {
            let reasons = admission.ignored.clone();
            let last = events.last().map_or(0, |e| e.id);
            let mut conn = pool.acquire().await.context("no database connection")?;
            relay_store::issues::mark_events_handled(&mut conn, issue_id, last)
                .await
                .context("failed to mark ignored events handled")?;
            tracing::info!(issue.id = issue_id, reasons = ?reasons, "mention ignored");
            tracer.event(
                TraceKind::Decision,
                json!({ "decision": "ignored", "reason": "engage_roles", "actors": reasons }),
            );
            // A go-ahead left pending by an earlier job is still retried below.
            if spec_request.is_none() {
                return Ok(json!({ "cycles": 0, "ignored": reasons }));
            }
        }

        // Past the tracker's daily budget: no LLM call today; the events wait for the reset.
        if let Some(deferred) = super::daily_budget::stop(
            pool,
            &issue.tracker,
            self.agent.daily_token_budget,
            issue_id,
            max_attempts,
        )
        .await?
        {
            return Ok(deferred);
        }

        // Past the issue's token budget: one note, then silence until a new mention.
        if let Some(stopped) = self
            .budget_stop(
                pool,
                &tracker,
                &issue_ref,
                issue_id,
                job_id,
                &settings.bot_username,
            )
            .await?
        {
            return Ok(stopped);
        }

        // The default branch as it is now (cloned on first use when no push has arrived yet).
        let spec = specs
            .spec(&issue.tracker, &issue.project_path)
            .map_err(JobError::Permanent)?;
        // Before the first cycle: a failure here ends in one status comment on the last attempt.
        let failed_job = FailedJob {
            pool,
            tracker: &tracker,
            issue_ref: &issue_ref,
            issue_id,
            job_id,
            attempt: run.attempt,
            bot_username: &settings.bot_username,
            trigger_note: events.iter().rev().find_map(|e| e.note_id.as_deref()),
        };
        let spec = match pre_cycle::clone_spec(spec, &tracker, &issue_ref).await {
            Ok(spec) => spec,
            Err(failure) => return Err(failed_job.say(failure).await),
        };
        let snapshot = match repos.snapshot(&spec, None).await {
            Ok(snapshot) => snapshot,
            Err(error) => {
                let failure = PreCycleFailure::new(PreCycleStep::Snapshot, &error);
                return Err(failed_job.say(failure).await);
            }
        };
        let graph = match &self.codegraph {
            Some(indexing) => {
                let repo = super::graph::graph_repo_key(&issue.tracker, &issue.project_path);
                match super::graph::ensure_graph(
                    indexing,
                    repos,
                    &spec,
                    &repo,
                    snapshot.commit(),
                    snapshot.path(),
                )
                .await
                {
                    Ok(access) => Some(access),
                    // Exploring without the graph (grep and read) beats not answering at all.
                    Err(error) => {
                        tracing::warn!(
                            error.message = %error,
                            error.cause_chain = %format!("{error:#}"),
                            "code graph unavailable: explorers fall back to the code tools"
                        );
                        None
                    }
                }
            }
            None => None,
        };
        let toolbox = Toolbox::new(snapshot.path(), graph, self.tools.clone())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        // Every call of the job is recorded against the issue and the job (the role is the
        // client's), so the issue's spend per role and its budget read from `llm_usage`.
        let usage = UsageContext {
            job_id: Some(job_id),
            issue_id: Some(issue_id),
        };
        // What earlier explores of this repository learned (tool sequences), as a prompt hint.
        let repo = repo_key(&issue.tracker, &issue.project_path);
        let hint = if self.agent.tool_hints {
            load_hint(pool, &repo).await
        } else {
            None
        };
        let explorer = ExploreAgent::new(
            metered_client(&self.llm, Role::Explore, pool, usage)
                .map_err(|e| JobError::Permanent(e.into()))?
                .with_tracer(&run.tracer),
            Arc::new(toolbox),
            self.agent.explore.clone(),
        )
        .with_tracer(&run.tracer)
        .with_observer(Arc::new(StoreExploreObserver::new(
            pool.clone(),
            repo.clone(),
        )))
        .with_hint(hint);
        // Thorough queries start from what earlier jobs on this issue explored.
        let mut traversal = super::traversal::load(pool, issue_id).await;
        let explorer = Arc::new(explorer.with_traversal_state(traversal.clone()));
        let commit_sha = snapshot.commit().to_owned();
        let sandbox = relay_tools::sandbox::Sandbox::new(snapshot.path())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let deps = CycleDeps {
            pool: pool.clone(),
            tracker: tracker.clone(),
            issue_ref: issue_ref.clone(),
            planner: metered_client(&self.llm, Role::Planner, pool, usage)
                .map_err(|e| JobError::Permanent(e.into()))?
                .with_tracer(&run.tracer),
            spec: metered_client(&self.llm, Role::Spec, pool, usage)
                .map_err(|e| JobError::Permanent(e.into()))?
                .with_tracer(&run.tracer),
            explorer: explorer.clone(),
            snapshot: Some(Snapshot {
                sandbox,
                commit_sha: snapshot.commit().to_owned(),
            }),
            settings: self.agent.clone(),
            bot_username: settings.bot_username.clone(),
            redactions: self
                .tracker_settings
                .iter()
                .map(|t| t.token.clone())
                .collect(),
            tracer: run.tracer.clone(),
            attempt: run.attempt,
            admission,
            lease: run.lease,
        };

        // A go-ahead whose spec is not written yet comes first: it was accepted by an earlier
        // cycle, and the spec writer failed (its retry is this job).
        if let Some(request) = spec_request {
            super::spec_step::retry_request(&deps, issue_id, job_id, &request).await?;
        }
        let mut deps = deps;

        // First contact: one reaction per issue (on an admitted author's event), sent with the
        // cycle's drain.
        if let Some(first) = events.iter().find(|e| deps.admission.admits(&e.actor)) {
            enqueue_acknowledgement(pool, issue_id, job_id, first.note_id.as_deref()).await?;
        }

        let mut cycles = 0;
        for cycle in 0..self.agent.cycles_per_job {
            if cycle > 0
                && let Some(stopped) = self
                    .budget_stop(
                        pool,
                        &tracker,
                        &issue_ref,
                        issue_id,
                        job_id,
                        &settings.bot_username,
                    )
                    .await?
            {
                tracer.event(
                    TraceKind::Decision,
                    json!({ "decision": "stop_job", "reason": "issue_token_budget", "detail": stopped }),
                );
                return Ok(json!({ "cycles": cycles, "budget": stopped }));
            }
            if cycle > 0
                && let Some(mut deferred) = super::daily_budget::stop(
                    pool,
                    &issue.tracker,
                    self.agent.daily_token_budget,
                    issue_id,
                    max_attempts,
                )
                .await?
            {
                deferred["cycles"] = json!(cycles);
                return Ok(deferred);
            }
            if cycle > 0 {
                // Events that arrived during the job: their authors are checked like the first.
                let mut conn = pool.acquire().await.context("no database connection")?;
                let events = relay_store::issues::pending_events(&mut conn, issue_id)
                    .await
                    .context("failed to load pending events")?;
                drop(conn);
                deps.admission = match self.admit(&tracker, &issue, &issue_ref, &events).await {
                    Ok(admission) => admission,
                    Err(failure) => return Err(failure.fail_job(run, &tracer)),
                };
            }
            let cycle = i32::try_from(cycle).unwrap_or(i32::MAX);
            let ended = match run_cycle(&deps, issue_id, job_id, cycle).await {
                Err(error) => match error.downcast::<PreCycleFailure>() {
                    Ok(failure) => return Err(failed_job.say(failure).await),
                    Err(error) => Err(error),
                },
                ended => ended,
            };
            super::traversal::save_if_changed(
                pool,
                issue_id,
                &commit_sha,
                &explorer,
                &mut traversal,
            )
            .await;
            match ended? {
                CycleEnd::NothingPending => break,
                CycleEnd::Applied { .. } => cycles += 1,
                CycleEnd::Stopped {
                    outcome, through, ..
                } => {
                    let reason = match &outcome.result {
                        relay_agent::planner::PlanResult::Stopped(reason) => Some(reason),
                        relay_agent::planner::PlanResult::Submitted(_) => None,
                    };
                    match reason {
                        // It would stop the same way again: the status comment answered the
                        // events, so they are consumed and the job ends here instead of being
                        // run `max_attempts` times.
                        Some(reason) if super::status::recurs(reason) => {
                            let mut conn =
                                pool.acquire().await.context("no database connection")?;
                            relay_store::issues::mark_events_handled(&mut conn, issue_id, through)
                                .await
                                .context("failed to consume the answered events")?;
                            tracing::warn!(
                                issue.id = issue_id,
                                job.id = job_id,
                                reason = %reason,
                                "planning stopped for a reason a retry would repeat: job ended"
                            );
                            tracer.event(
                                TraceKind::Decision,
                                json!({ "decision": "stop_job", "reason": "recurring_stop", "detail": reason.to_string() }),
                            );
                            return Ok(json!({ "cycles": cycles, "stopped": reason.to_string() }));
                        }
                        _ => {
                            return Err(JobError::Retryable(anyhow::anyhow!(
                                "planning cycle {cycle} stopped without a decision"
                            )));
                        }
                    }
                }
            }
        }
        drop(snapshot);
        // Cut off at `cycles_per_job` with events still arriving: they get the next job.
        let follow_up = if cycles >= self.agent.cycles_per_job {
            super::follow_up::ensure_follow_up(pool, issue_id, max_attempts)
                .await?
                .map(|enqueued| enqueued.job_id())
        } else {
            None
        };
        Ok(json!({ "cycles": cycles, "follow_up_job": follow_up }))
    }
}

/// The client for `role`, recording each call's tokens in `llm_usage` under `context`.
pub fn metered_client(
    llm: &LlmSettings,
    role: Role,
    pool: &PgPool,
    context: UsageContext,
) -> Result<LlmClient, LlmError> {
    Ok(LlmClient::from_settings(llm, role)?
        .with_usage_sink(Arc::new(crate::llm_usage::StoreUsageSink::new(
            pool.clone(),
        )))
        .with_context(context))
}
