//! Job setup, in the order the diagram draws it: the issue and its tracker (with the due writes
//! drained first), then — once an admitted author is pending — the snapshot and the repository's
//! configuration at its commit (`Orchestrator::checkout`), then — once the job is going to
//! plan — the code graph, the toolbox, the explorers, the metered LLM clients and thorough
//! mode's traversal state (`Orchestrator::prepare`).

use std::sync::Arc;

use anyhow::Context as _;
use relay_actions::{Executor, Snapshot};
use relay_agent::explore::{ExploreAgent, Thoroughness};
use relay_agent::llm::{LlmClient, LlmError, LlmSettings, Role, UsageContext};
use relay_agent::thorough::state::TraversalState;
use relay_agent::toolbox::Toolbox;
use relay_core::TrackerSettings;
use relay_core::repo_config::Thoroughness as RepoThoroughness;
use relay_repo::{RepoManager, RepoSpec, SnapshotGuard};
use relay_store::PgPool;
use relay_store::issues::{IssueEventRow, IssueRow};
use relay_store::specs::SpecRequestRow;
use relay_tracker::{IssueRef, IssueTracker};
use serde_json::{Value, json};

use super::admission::Admission;
use super::cycle::CycleDeps;
use super::pre_cycle::{self, FailedJob, PreCycleFailure, PreCycleStep};
use super::{JobRun, Orchestrator};
use crate::handler::JobError;
use crate::jobs::RepoSpecs;
use crate::jobs::repo_config::LoadedConfig;
use crate::tool_graph::{StoreExploreObserver, load_class_hints, load_hint, repo_key};

/// The issue a job serves and what is pending on it, loaded once at the job's start.
pub struct IssueJob<'a> {
    pub issue: IssueRow,
    pub settings: &'a TrackerSettings,
    pub tracker: Arc<dyn IssueTracker>,
    pub issue_ref: IssueRef,
    pub events: Vec<IssueEventRow>,
    /// A go-ahead whose spec an earlier job failed to write.
    pub spec_request: Option<SpecRequestRow>,
}

/// How the job starts.
pub enum Start<'a> {
    /// Nothing is pending: the job's result.
    Idle(Value),
    Pending(Box<IssueJob<'a>>),
}

/// What the cycles run with; the snapshot is leased until the job ends.
pub struct Prepared {
    pub deps: CycleDeps,
    pub snapshot: SnapshotGuard,
    pub explorer: Arc<ExploreAgent>,
    /// The traversal state as last saved (the cycles save it when it changed).
    pub traversal: TraversalState,
    /// The repository's configuration the job runs under.
    pub config: LoadedConfig,
}

/// The snapshot a job explores and the repository's configuration at its commit.
pub struct Checkout {
    pub spec: RepoSpec,
    pub snapshot: SnapshotGuard,
    pub config: LoadedConfig,
}

/// Which commit the job checks out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head {
    /// The default branch's checkout as the last push left it.
    Current,
    /// The remote's default-branch head, fetched now (`@bot refresh`).
    Fetch,
}

impl Orchestrator {
    /// Loads the issue and its tracker, drains the issue's due writes (a crash or a tracker
    /// outage may have left them behind the watermark: before anything else, and so before every
    /// early return), then loads what is pending.
    pub(super) async fn start(&self, pool: &PgPool, run: &JobRun) -> Result<Start<'_>, JobError> {
        let issue_id = run.issue_id;
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
        let drain = Executor::new(pool.clone(), tracker.clone())
            .drain_outbox(issue_id, &issue_ref)
            .await
            .context("failed to drain the outbox")?;
        super::cycle::trace_drain(&run.tracer.for_agent("orchestrator"), &drain);

        let mut conn = pool.acquire().await.context("no database connection")?;
        let events = relay_store::issues::pending_events(&mut conn, issue_id)
            .await
            .context("failed to load pending events")?;
        let spec_request = relay_store::specs::pending_request(&mut conn, issue_id)
            .await
            .context("failed to load the pending go-ahead")?;
        if events.is_empty() && spec_request.is_none() {
            return Ok(Start::Idle(json!({
                "cycles": 0,
                "reason": "nothing pending",
                "drained": drain.sent.len(),
            })));
        }
        Ok(Start::Pending(Box::new(IssueJob {
            issue,
            settings,
            tracker,
            issue_ref,
            events,
            spec_request,
        })))
    }

    /// The snapshot of the default branch as it is now (cloned on first use when no push has
    /// arrived yet; with [`Head::Fetch`], synced to the remote's head first) and the
    /// repository's configuration at its commit (recorded for the status page). A failure here
    /// ends in one status comment on the last attempt.
    pub(super) async fn checkout(
        &self,
        pool: &PgPool,
        repos: &RepoManager,
        specs: &RepoSpecs,
        run: &JobRun,
        job: &IssueJob<'_>,
        head: Head,
    ) -> Result<Checkout, JobError> {
        let issue = &job.issue;
        let spec = specs
            .spec(&issue.tracker, &issue.project_path)
            .map_err(JobError::Permanent)?;
        let failed_job = job.failed_job(pool, run);
        let spec = match pre_cycle::clone_spec(spec, &job.tracker, &job.issue_ref).await {
            Ok(spec) => spec,
            Err(failure) => return Err(failed_job.say(failure).await),
        };
        if head == Head::Fetch
            && let Err(error) = repos.sync_to(&spec, None).await
        {
            let failure = PreCycleFailure::new(PreCycleStep::Snapshot, &error);
            return Err(failed_job.say(failure).await);
        }
        let snapshot = match repos.snapshot(&spec, None).await {
            Ok(snapshot) => snapshot,
            Err(error) => {
                let failure = PreCycleFailure::new(PreCycleStep::Snapshot, &error);
                return Err(failed_job.say(failure).await);
            }
        };
        let policy = crate::jobs::repo_config::server_policy(&self.agent, job.settings);
        let config = crate::jobs::repo_config::load(repos, &spec, snapshot.commit(), &policy).await;
        crate::jobs::repo_config::record(
            pool,
            &issue.tracker,
            &issue.project_id,
            &issue.project_path,
            &config,
        )
        .await;
        Ok(Checkout {
            spec,
            snapshot,
            config,
        })
    }

    /// The code graph of the checkout, the toolbox, the explorers and the metered LLM clients,
    /// all under the repository's configuration (exclusions, guidance, thoroughness, summary).
    pub(super) async fn prepare(
        &self,
        pool: &PgPool,
        repos: &RepoManager,
        run: &JobRun,
        job: &IssueJob<'_>,
        checkout: Checkout,
        admission: Admission,
    ) -> Result<Prepared, JobError> {
        let (issue, issue_id, job_id) = (&job.issue, run.issue_id, run.job_id);
        let Checkout {
            spec,
            snapshot,
            config,
        } = checkout;
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
                    config.excludes.clone(),
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
        let toolbox = Toolbox::with_excludes(
            snapshot.path(),
            graph,
            self.tools.clone(),
            config.excludes.clone(),
        )
        .context("failed to build the toolbox over the snapshot")?;
        // Every call of the job is recorded against the issue and the job (the role is the
        // client's), so the issue's spend per role and its budget read from `llm_usage`.
        let usage = UsageContext {
            job_id: Some(job_id),
            issue_id: Some(issue_id),
        };
        let client = |role: Role| -> Result<LlmClient, JobError> {
            Ok(metered_client(&self.llm, role, pool, usage)
                .map_err(|e| JobError::Permanent(e.into()))?
                .with_tracer(&run.tracer))
        };
        // What earlier explores of this repository learned (tool sequences), as a prompt hint.
        let repo = repo_key(&issue.tracker, &issue.project_path);
        let (hint, class_hints) = if self.agent.tool_hints {
            (
                load_hint(pool, &repo).await,
                load_class_hints(pool, &repo).await,
            )
        } else {
            (None, Default::default())
        };
        let thoroughness = match config.effective.thoroughness {
            Some(RepoThoroughness::Quick) => Thoroughness::Quick,
            Some(RepoThoroughness::Thorough) => Thoroughness::Thorough,
            Some(RepoThoroughness::Medium) | None => Thoroughness::Medium,
        };
        let explorer = ExploreAgent::new(
            client(Role::Explore)?,
            Arc::new(toolbox),
            self.agent.explore.clone(),
        )
        .with_tracer(&run.tracer)
        .with_observer(Arc::new(StoreExploreObserver::new(
            pool.clone(),
            repo.clone(),
        )))
        .with_hint(hint)
        .with_class_hints(class_hints)
        .with_guidance(&config.guidance)
        .with_default_thoroughness(thoroughness);
        // Thorough queries start from what earlier jobs on this issue explored.
        let traversal = super::traversal::load(pool, issue_id).await;
        let explorer = Arc::new(explorer.with_traversal_state(traversal.clone()));
        // The validator's citation checks see the checkout as the tools do.
        let sandbox = relay_tools::sandbox::Sandbox::new(snapshot.path())
            .context("failed to sandbox the snapshot for the validator")?
            .with_excludes(config.excludes.clone());
        let mut settings = self.agent.clone();
        settings.summary_comment = config.effective.summary_comment;
        let deps = CycleDeps {
            pool: pool.clone(),
            tracker: job.tracker.clone(),
            issue_ref: job.issue_ref.clone(),
            planner: client(Role::Planner)?,
            spec: client(Role::Spec)?,
            explorer: explorer.clone(),
            snapshot: Some(Snapshot {
                sandbox,
                commit_sha: snapshot.commit().to_owned(),
            }),
            settings,
            bot_username: job.settings.bot_username.clone(),
            redactions: super::secrets::prompt_redactions(&self.tracker_settings),
            tracer: run.tracer.clone(),
            attempt: run.attempt,
            admission,
            lease: run.lease,
            prices: self.prices.clone(),
            guidance: config.guidance.clone(),
            answered_commands: Vec::new(),
        };
        Ok(Prepared {
            deps,
            snapshot,
            explorer,
            traversal,
            config,
        })
    }
}

impl IssueJob<'_> {
    /// Where the job is, for the status comment of a failure before the first cycle.
    pub fn failed_job<'a>(&'a self, pool: &'a PgPool, run: &JobRun) -> FailedJob<'a> {
        FailedJob {
            pool,
            tracker: &self.tracker,
            issue_ref: &self.issue_ref,
            issue_id: run.issue_id,
            job_id: run.job_id,
            attempt: run.attempt,
            bot_username: &self.settings.bot_username,
            trigger_note: self.events.iter().rev().find_map(|e| e.note_id.as_deref()),
        }
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
