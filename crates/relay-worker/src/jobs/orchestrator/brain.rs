//! What the orchestrating `process_issue` needs beyond the queue: trackers, LLM and agent
//! settings, tool limits. Built by the binary when an LLM is configured.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use relay_actions::{Executor, Snapshot};
use relay_agent::agent_settings::{AgentSettings, EngageDecision, Visibility};
use relay_agent::explore::ExploreAgent;
use relay_agent::llm::{LlmClient, LlmError, LlmSettings, Role, UsageContext};
use relay_agent::toolbox::Toolbox;
use relay_agent::trace::{TraceKind, Tracer};
use relay_core::TrackerSettings;
use relay_repo::RepoManager;
use relay_store::PgPool;
use relay_tracker::{IssueRef, IssueTracker, Trackers};
use serde_json::{Value, json};

use super::budget::{self, BudgetGate};
use super::cycle::{Attempt, CycleDeps, CycleEnd, enqueue_acknowledgement, run_cycle};
use super::role_cache::{RoleCache, RoleKey};
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
        }
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
    /// Sends the issue's queued outbox writes (none: no tracker call); returns how many went out.
    async fn drain_queued(
        &self,
        pool: &PgPool,
        issue: &relay_store::issues::IssueRow,
    ) -> Result<usize, JobError> {
        let mut conn = pool.acquire().await.context("no database connection")?;
        let pending = relay_store::outbox::pending(&mut conn, issue.id)
            .await
            .context("failed to load the outbox")?;
        drop(conn);
        if pending.is_empty() {
            return Ok(0);
        }
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
        let report = Executor::new(pool.clone(), tracker)
            .drain_outbox(issue.id, &issue_ref)
            .await
            .context("failed to drain the outbox")?;
        if let Some(wait) = report.reschedule_after {
            return Err(JobError::Retryable(anyhow::anyhow!(
                "tracker writes must wait {} s",
                wait.as_secs()
            )));
        }
        Ok(report.sent.len())
    }

    /// Runs up to `cycles_per_job` cycles on the issue (`max_attempts`: the follow-up job's, when
    /// events are left after the last cycle). A stopped cycle (after its status
    /// comment) fails the job retryably so the queue backs off; its events stay pending.
    pub async fn orchestrate(
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
        let events = relay_store::issues::pending_events(&mut conn, issue_id)
            .await
            .context("failed to load pending events")?;
        drop(conn);
        if events.is_empty() {
            // Writes queued outside a cycle (a push's summary edits) are sent by the issue's job.
            let sent = self.drain_queued(pool, &issue).await?;
            return Ok(json!({ "cycles": 0, "reason": "nothing pending", "sent": sent }));
        }
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

        // Who may make Relay spend: the actors of the pending events, by their role on the
        // project. Nobody allowed → the events are consumed as ignored, with the reasons, and no
        // LLM is called.
        let mut reasons = Vec::new();
        let mut engage = false;
        let mut actors: Vec<&str> = events.iter().map(|e| e.actor.as_str()).collect();
        actors.dedup();
        for actor in actors {
            let role = if actor.is_empty() {
                None
            } else {
                let key = RoleKey {
                    tracker: issue.tracker.clone(),
                    project: issue.project_id.clone(),
                    username: actor.to_owned(),
                };
                match self.roles.get(&key, Instant::now()) {
                    Some(role) => Some(role),
                    None => {
                        let role = tracker.author_role(&issue_ref, actor).await.ok();
                        if let Some(role) = role {
                            self.roles.insert(key, role, Instant::now());
                        }
                        role
                    }
                }
            };
            match self
                .agent
                .engage_roles
                .decide(&issue.tracker, engage_visibility(&issue), role)
            {
                EngageDecision::Engage => engage = true,
                EngageDecision::Ignore { reason } => reasons.push(format!("@{actor}: {reason}")),
            }
        }
        if !engage {
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
            return Ok(json!({ "cycles": 0, "ignored": reasons }));
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
        let snapshot = repos
            .snapshot(&spec, None)
            .await
            .context("failed to snapshot the default branch")?;
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
        };

        // First contact: one reaction per issue, sent with the cycle's drain.
        enqueue_acknowledgement(pool, issue_id, job_id, events[0].note_id.as_deref()).await?;

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
            let cycle = i32::try_from(cycle).unwrap_or(i32::MAX);
            let ended = run_cycle(&deps, issue_id, job_id, cycle).await;
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
                CycleEnd::Stopped { .. } => {
                    return Err(JobError::Retryable(anyhow::anyhow!(
                        "planning cycle {cycle} stopped without a decision"
                    )));
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

    /// Checks the issue's token budget before a cycle. `Some` (the job's result) when the job must
    /// stop: the budget note was queued and sent (first time past the allowance), or the issue is
    /// paused (the pending events are consumed without an LLM call). `None` when nothing is
    /// pending or the budget allows another cycle.
    async fn budget_stop(
        &self,
        pool: &PgPool,
        tracker: &Arc<dyn IssueTracker>,
        issue_ref: &IssueRef,
        issue_id: i64,
        job_id: i64,
        bot_username: &str,
    ) -> anyhow::Result<Option<Value>> {
        let mut conn = pool.acquire().await.context("no database connection")?;
        let events = relay_store::issues::pending_events(&mut conn, issue_id)
            .await
            .context("failed to load pending events")?;
        let Some(through) = events.last().map(|e| e.id) else {
            return Ok(None);
        };
        let budget = self.agent.issue_token_budget;
        match budget::gate(pool, issue_id, budget).await? {
            BudgetGate::Within { .. } => Ok(None),
            BudgetGate::Paused { spent } => {
                relay_store::issues::mark_events_handled(&mut conn, issue_id, through)
                    .await
                    .context("failed to consume the events")?;
                tracing::info!(
                    issue.id = issue_id,
                    spent,
                    "issue paused on its token budget"
                );
                Ok(Some(
                    json!({ "cycles": 0, "paused": "issue token budget", "spent": spent }),
                ))
            }
            BudgetGate::Exceeded {
                spent,
                allowance,
                epoch,
            } => {
                drop(conn);
                let body = budget::note_body(spent, allowance, budget, bot_username);
                budget::enqueue_note(pool, issue_id, job_id, epoch, through, &body).await?;
                let drain = Executor::new(pool.clone(), tracker.clone())
                    .drain_outbox(issue_id, issue_ref)
                    .await?;
                tracing::warn!(
                    issue.id = issue_id,
                    spent,
                    allowance,
                    epoch,
                    "issue token budget reached"
                );
                Ok(Some(json!({
                    "cycles": 0,
                    "budget_reached": { "spent": spent, "allowance": allowance, "epoch": epoch },
                    "drain_failures": drain.failures.len(),
                })))
            }
        }
    }
}

/// Which engage policy applies to the issue's project. Only a project the webhooks said is private
/// gets the private policy: an internal project (any signed-in user of the instance can comment)
/// and one whose visibility is not known yet get the stricter public rule.
fn engage_visibility(issue: &relay_store::issues::IssueRow) -> Visibility {
    match issue
        .project_visibility
        .as_deref()
        .and_then(relay_core::ProjectVisibility::parse)
    {
        Some(relay_core::ProjectVisibility::Private) => Visibility::Private,
        _ => Visibility::Public,
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
