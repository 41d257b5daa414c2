//! What the cycles run with, once the job is going to plan ([`prepare`] → `CycleEnv`): the code
//! graph of the checkout, the toolbox, the explorers and the metered LLM clients, all under the
//! repository's configuration (exclusions, guidance, thoroughness, summary), and thorough mode's
//! traversal state of the issue.

use std::sync::Arc;

use anyhow::Context as _;
use relay_actions::{RelatedSnapshot, Snapshot};
use relay_agent::agent_settings::AgentSettings;
use relay_agent::explore::{ExploreAgent, Thoroughness};
use relay_agent::llm::{LlmClient, LlmError, LlmSettings, Role, UsageContext};
use relay_agent::toolbox::{GraphAccess, RelatedCheckout, Toolbox};
use relay_codegraph::ops::RelatedGraph;
use relay_core::TrackerSettings;
use relay_core::prices::Prices;
use relay_core::repo_config::Thoroughness as RepoThoroughness;
use relay_repo::RepoManager;
use relay_store::PgPool;

use super::checkout::CheckedOut;
use super::cycle::CycleEnv;
use super::job::{Job, JobRun};
use super::related::RelatedSet;
use crate::handler::JobError;
use crate::jobs::reindex::CodegraphIndexing;
use crate::tool_graph::{StoreExploreObserver, load_class_hints, load_hint, repo_key};

/// The server's settings the cycles are built from.
#[derive(Clone, Copy)]
pub struct Setup<'a> {
    pub llm: &'a LlmSettings,
    pub agent: &'a AgentSettings,
    pub tools: &'a relay_tools::ToolLimits,
    /// The code-graph store and indexer (`None`: explorers get no `codegraph` tool).
    pub codegraph: Option<&'a CodegraphIndexing>,
    /// Every tracker's settings: their tokens never reach a prompt.
    pub trackers: &'a [TrackerSettings],
    pub prices: &'a Arc<Prices>,
}

/// The cycles' environment over `checkout`; loads the issue's traversal state into `job`.
pub async fn prepare(
    setup: Setup<'_>,
    pool: &PgPool,
    repos: &RepoManager,
    run: &JobRun,
    job: &mut Job,
    checkout: &CheckedOut,
    related: &RelatedSet,
) -> Result<CycleEnv, JobError> {
    let (issue, config) = (&job.issue, &checkout.config);
    let graph = match setup.codegraph {
        Some(indexing) => {
            graph(
                indexing,
                repos,
                checkout,
                &issue.tracker,
                &issue.project_path,
            )
            .await
        }
        None => None,
    };
    // Each related repository's graph is its own snapshot under its own key, indexed (or
    // updated) when the store does not hold its commit yet.
    let related_graphs = match setup.codegraph {
        Some(indexing) => related_graphs(indexing, repos, related, &issue.tracker).await,
        None => related.checkouts.iter().map(|_| None).collect(),
    };
    let graph_commits: Vec<Option<String>> = related_graphs
        .iter()
        .map(|g| g.as_ref().and_then(|g| g.scope.commit.clone()))
        .collect();
    super::related::record(pool, run.job_id, job, related, &graph_commits).await;
    // The issue's graph queried with the related ones beside it (those that could be had).
    let graph = graph.map(|mut access| {
        access.related = related
            .checkouts
            .iter()
            .zip(&related_graphs)
            .filter_map(|(checkout, graph)| {
                graph.as_ref().map(|g| RelatedGraph {
                    label: checkout.label.clone(),
                    scope: g.scope.clone(),
                })
            })
            .collect();
        access
    });
    let issue = &job.issue;
    let snapshot = &checkout.snapshot;
    let toolbox = Toolbox::with_excludes(
        snapshot.path(),
        graph,
        setup.tools.clone(),
        config.excludes.clone(),
    )
    .context("failed to build the toolbox over the snapshot")?;
    // `history` reads the repository's mirror at the snapshot's commit.
    let toolbox = match relay_repo::GitHistory::of_snapshot(
        repos,
        &checkout.spec,
        snapshot.commit(),
    ) {
        Ok(history) => toolbox.with_history(history),
        Err(error) => {
            tracing::warn!(error.message = %error, "no git history for the explorers: `history` is not offered");
            toolbox
        }
    };
    // The related repositories' checkouts, for the code tools' `repo` argument and places.
    let toolbox = toolbox
        .with_related(
            related
                .checkouts
                .iter()
                .map(|c| RelatedCheckout {
                    label: c.label.clone(),
                    root: c.snapshot.path().to_path_buf(),
                    excludes: c.excludes.clone(),
                    history: relay_repo::GitHistory::of_snapshot(
                        repos,
                        &c.spec,
                        c.snapshot.commit(),
                    )
                    .ok(),
                })
                .collect(),
        )
        .context("failed to add the related repositories to the toolbox")?
        .with_own_label(issue.project_path.clone());
    // Every call of the job is recorded against the issue and the job (the role is the
    // client's), so the issue's spend per role and its budget read from `llm_usage`.
    let usage = UsageContext {
        job_id: Some(run.job_id),
        issue_id: Some(run.issue_id),
    };
    let client = |role: Role| -> Result<LlmClient, JobError> {
        Ok(metered_client(setup.llm, role, pool, usage)
            .map_err(|e| JobError::Permanent(e.into()))?
            .with_tracer(&run.tracer))
    };
    // What earlier explores of this repository learned (tool sequences), as a prompt hint.
    let repo = repo_key(&issue.tracker, &issue.project_path);
    let (hint, class_hints) = if setup.agent.tool_hints {
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
        setup.agent.explore.clone(),
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
    job.traversal = super::traversal::load(pool, run.issue_id).await;
    let explorer = Arc::new(explorer.with_traversal_state(job.traversal.clone()));
    // The validator's citation checks see the checkout as the tools do.
    let sandbox = relay_tools::sandbox::Sandbox::new(snapshot.path())
        .context("failed to sandbox the snapshot for the validator")?
        .with_excludes(config.excludes.clone());
    let mut settings = setup.agent.clone();
    settings.summary_comment = config.effective.summary_comment;
    Ok(CycleEnv {
        pool: pool.clone(),
        run: run.clone(),
        planner: client(Role::Planner)?,
        spec: client(Role::Spec)?,
        explorer: explorer.clone(),
        traversal: Some(explorer),
        snapshot: Some(Snapshot {
            sandbox,
            commit_sha: snapshot.commit().to_owned(),
            related: related_snapshots(related)?,
        }),
        settings,
        redactions: super::secrets::prompt_redactions(setup.trackers),
        prices: setup.prices.clone(),
        guidance: config.guidance.clone(),
    })
}

/// The related checkouts as the Validator verifies places in them: each with its commit (stored
/// with the sources cited there) and its visibility (a place of a repository more private than
/// the issue is refused, even one admitted by mistake).
fn related_snapshots(related: &RelatedSet) -> anyhow::Result<Vec<RelatedSnapshot>> {
    related
        .checkouts
        .iter()
        .map(|c| {
            Ok(RelatedSnapshot {
                label: c.label.clone(),
                sandbox: relay_tools::sandbox::Sandbox::new(c.snapshot.path())
                    .with_context(|| format!("failed to sandbox {} for the validator", c.label))?
                    .with_excludes(c.excludes.clone()),
                commit_sha: c.snapshot.commit().to_owned(),
                visibility: c.visibility,
            })
        })
        .collect()
}

/// The code graph of the checkout's commit; `None` (logged) when it cannot be had: exploring
/// without the graph (grep and read) beats not answering at all.
async fn graph(
    indexing: &CodegraphIndexing,
    repos: &RepoManager,
    checkout: &CheckedOut,
    tracker: &str,
    project_path: &str,
) -> Option<GraphAccess> {
    let repo = super::graph::graph_repo_key(tracker, project_path);
    let snapshot = &checkout.snapshot;
    let access = super::graph::ensure_graph(
        indexing,
        repos,
        &checkout.spec,
        &repo,
        snapshot.commit(),
        snapshot.path(),
        checkout.config.excludes.clone(),
    )
    .await;
    match access {
        Ok(access) => Some(access),
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

/// The code graph of each related checkout, in order; `None` (logged) for one that cannot be
/// had.
async fn related_graphs(
    indexing: &CodegraphIndexing,
    repos: &RepoManager,
    related: &RelatedSet,
    tracker: &str,
) -> Vec<Option<GraphAccess>> {
    let mut graphs = Vec::with_capacity(related.checkouts.len());
    for checkout in &related.checkouts {
        let key = super::graph::graph_repo_key(tracker, &checkout.label);
        let access = super::graph::ensure_graph(
            indexing,
            repos,
            &checkout.spec,
            &key,
            checkout.snapshot.commit(),
            checkout.snapshot.path(),
            checkout.excludes.clone(),
        )
        .await;
        graphs.push(match access {
            Ok(access) => Some(access),
            Err(error) => {
                tracing::warn!(related.path = %checkout.label, error.message = %error, "related repository's code graph unavailable");
                None
            }
        });
    }
    graphs
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
