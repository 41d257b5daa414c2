//! `update_checkout`: move a repository's checkout to a pushed default-branch commit.
//!
//! One updater per repository runs at a time (the job's concurrency key), and a newer push joins
//! the queued update instead of queueing another. Jobs that read the code take their own
//! per-commit snapshot, so an update never changes what a running job sees.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use relay_core::{TrackerSettings, UpdateCheckout};
use relay_repo::{RepoManager, RepoSpec};
use relay_tracker::IssueRef;
use serde_json::{Value, json};

use crate::handler::{JobContext, JobError, JobHandler};

/// How to reach each tracked repository: the tracker's base URL and token, or a local path
/// (development and tests).
#[derive(Clone, Default)]
pub struct RepoSpecs {
    trackers: HashMap<String, TrackerSettings>,
    local: HashMap<(String, String), PathBuf>,
}

impl RepoSpecs {
    pub fn new(trackers: &[TrackerSettings]) -> RepoSpecs {
        RepoSpecs {
            trackers: trackers
                .iter()
                .map(|t| (t.name.as_str().to_owned(), t.clone()))
                .collect(),
            local: HashMap::new(),
        }
    }

    /// Serves `project_path` of `tracker` from a local repository instead of the tracker.
    pub fn with_local(mut self, tracker: &str, project_path: &str, path: PathBuf) -> RepoSpecs {
        self.local
            .insert((tracker.to_owned(), project_path.to_owned()), path);
        self
    }

    /// The settings of tracker `name`.
    pub fn tracker(&self, name: &str) -> Option<&TrackerSettings> {
        self.trackers.get(name)
    }

    pub fn spec(&self, tracker: &str, project_path: &str) -> anyhow::Result<RepoSpec> {
        let settings = self
            .trackers
            .get(tracker)
            .with_context(|| format!("tracker {tracker:?} is not configured"))?;
        let spec = RepoSpec::new(settings.provider, settings.base_url.clone(), project_path);
        Ok(
            match self
                .local
                .get(&(tracker.to_owned(), project_path.to_owned()))
            {
                Some(path) => spec.with_local_path(path.clone()),
                None => spec.with_token(settings.token.clone()),
            },
        )
    }
}

pub struct UpdateCheckoutJob {
    pub repos: Arc<RepoManager>,
    pub specs: Arc<RepoSpecs>,
    pub codegraph: Option<Arc<super::reindex::CodegraphIndexing>>,
    /// Trackers and agent settings: with them, a push that changes citations refreshes the
    /// issues' summaries (`None`: citations are re-verified, nothing is written to trackers).
    pub orchestrator: Option<Arc<super::orchestrator::Orchestrator>>,
}

#[async_trait::async_trait]
impl JobHandler for UpdateCheckoutJob {
    async fn run(&self, context: JobContext) -> Result<Value, JobError> {
        let payload: UpdateCheckout = serde_json::from_value(context.job.payload.clone())
            .context("update_checkout payload is malformed")
            .map_err(JobError::Permanent)?;
        let spec = self
            .specs
            .spec(&payload.tracker, &payload.project_path)
            .map_err(JobError::Permanent)?;
        let spec = self.with_clone_credential(&payload, spec).await?;
        let checkout = self
            .repos
            .sync_to(&spec, Some(&payload.commit))
            .await
            .map_err(classify)?;
        tracing::info!(
            repo.path = %payload.project_path,
            commit = %checkout.commit,
            "checkout updated"
        );
        // Hold the snapshot for re-verification and the whole indexing run so it cannot be
        // pruned under us.
        let snapshot = self
            .repos
            .snapshot(&spec, Some(&checkout.commit))
            .await
            .map_err(classify)?;
        // The repository's configuration is picked up again on every push: its exclusions
        // shape the graph, its summary setting how stale findings are told, and the status
        // page shows what is in effect.
        let config = self
            .repo_config(&context, &payload, &spec, &checkout.commit)
            .await;
        let findings = self
            .reverify(
                &context,
                &payload,
                &spec,
                &checkout.commit,
                snapshot.path(),
                config.effective.summary_comment,
            )
            .await;
        let codegraph = match &self.codegraph {
            Some(codegraph) => {
                let repo = format!("{}/{}", payload.tracker, payload.project_path);
                codegraph
                    .index_commit(
                        &self.repos,
                        &spec,
                        &repo,
                        &checkout.commit,
                        snapshot.path().to_path_buf(),
                        config.excludes.clone(),
                    )
                    .await
                    .map_err(JobError::Retryable)?
            }
            None => Value::Null,
        };
        drop(snapshot);
        Ok(json!({
            "project": payload.project_path,
            "commit": checkout.commit,
            "default_branch": checkout.default_branch,
            "codegraph": codegraph,
            "findings": findings,
        }))
    }
}

impl UpdateCheckoutJob {
    /// The configuration at the pushed commit; recorded when the orchestrator (and so the
    /// server's policy) is configured.
    async fn repo_config(
        &self,
        context: &JobContext,
        payload: &UpdateCheckout,
        spec: &RepoSpec,
        commit: &str,
    ) -> super::repo_config::LoadedConfig {
        let policy = self.orchestrator.as_ref().and_then(|orchestrator| {
            let tracker = orchestrator
                .tracker_settings
                .iter()
                .find(|t| t.name.as_str() == payload.tracker)?;
            Some(super::repo_config::server_policy(
                &orchestrator.agent,
                tracker,
            ))
        });
        let Some(policy) = policy else {
            // Without the orchestrator nothing plans; the exclusions still shape the graph.
            let defaults = relay_agent::agent_settings::AgentSettings::default();
            let tracker = self.specs.tracker(&payload.tracker);
            let policy = match tracker {
                Some(tracker) => super::repo_config::server_policy(&defaults, tracker),
                None => return super::repo_config::LoadedConfig::default(),
            };
            return super::repo_config::load(&self.repos, spec, commit, &policy).await;
        };
        let loaded = super::repo_config::load(&self.repos, spec, commit, &policy).await;
        super::repo_config::record(
            &context.pool,
            &payload.tracker,
            &payload.project_id,
            &payload.project_path,
            &loaded,
        )
        .await;
        loaded
    }

    /// `spec` with the tracker's clone credential, as an issue's job clones: in GitHub App mode
    /// the configured token is empty and git needs an installation access token for the pushed
    /// repository (its installation looked up by the repository). Without tracker clients (no
    /// LLM configured) the configured token is all there is.
    async fn with_clone_credential(
        &self,
        payload: &UpdateCheckout,
        spec: RepoSpec,
    ) -> Result<RepoSpec, JobError> {
        let Some(tracker) = self
            .orchestrator
            .as_ref()
            .and_then(|orchestrator| orchestrator.trackers.get_str(&payload.tracker))
        else {
            return Ok(spec);
        };
        let repository = IssueRef {
            project_id: payload.project_id.clone(),
            project_path: payload.project_path.clone(),
            // A push names no issue: the credential depends only on the repository.
            number: 0,
            installation_id: None,
        };
        // A credential that cannot be had now (the tracker down, the App not installed yet) is
        // retried with the job's backoff; its last attempt leaves the reason in the dead job.
        super::orchestrator::checkout::clone_spec(spec, &tracker, &repository)
            .await
            .map_err(|failure| JobError::Retryable(anyhow::Error::new(failure)))
    }

    /// Re-verifies the project's findings at the new commit and queues what people should hear.
    /// A failure is logged and reported in the job's detail, never fails the checkout update:
    /// the sources keep their last verified commit, so the next push checks them again.
    async fn reverify(
        &self,
        context: &JobContext,
        payload: &UpdateCheckout,
        spec: &RepoSpec,
        commit: &str,
        root: &std::path::Path,
        summary_comment: bool,
    ) -> Value {
        let target = super::reverify::PushTarget {
            tracker: &payload.tracker,
            project_id: &payload.project_id,
            project_path: &payload.project_path,
            commit,
        };
        let outcome =
            match super::reverify::reverify_project(&context.pool, &self.repos, spec, target, root)
                .await
            {
                Ok(outcome) => outcome,
                Err(error) => {
                    tracing::warn!(
                        error.message = %error,
                        error.cause_chain = %format!("{error:#}"),
                        "findings re-verification failed"
                    );
                    return json!({ "error": format!("{error:#}") });
                }
            };
        let mut detail = serde_json::to_value(&outcome).unwrap_or(Value::Null);
        let Some(orchestrator) = &self.orchestrator else {
            return detail;
        };
        let channel = if summary_comment {
            super::reverify::publish::Channel::Summary {
                prices: &orchestrator.prices,
            }
        } else {
            super::reverify::publish::Channel::StaleNotice
        };
        match super::reverify::publish::publish(
            &context.pool,
            context.job.id,
            commit,
            channel,
            context.job.max_attempts,
            &outcome.issues,
        )
        .await
        {
            Ok(published) => detail["published"] = json!(published),
            Err(error) => {
                tracing::warn!(
                    error.message = %error,
                    error.cause_chain = %format!("{error:#}"),
                    "cannot queue the findings' summaries"
                );
                detail["published"] = json!({ "error": format!("{error:#}") });
            }
        }
        detail
    }
}

/// Errors retrying cannot fix are permanent; the rest are retried with backoff.
fn classify(error: relay_repo::Error) -> JobError {
    use relay_repo::Error as E;
    let permanent = matches!(
        error,
        E::InvalidSpec(_) | E::Auth { .. } | E::RepoNotFound { .. } | E::CommitNotFound { .. }
    );
    let error = anyhow::Error::new(error).context("failed to update the checkout");
    if permanent {
        JobError::Permanent(error)
    } else {
        JobError::Retryable(error)
    }
}
