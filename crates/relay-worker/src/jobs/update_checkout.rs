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
        let codegraph = match &self.codegraph {
            Some(codegraph) => {
                // Hold the snapshot for the whole indexing run so it cannot be pruned under us.
                let snapshot = self
                    .repos
                    .snapshot(&spec, Some(&checkout.commit))
                    .await
                    .map_err(classify)?;
                let repo = format!("{}/{}", payload.tracker, payload.project_path);
                let detail = codegraph
                    .index_commit(
                        &self.repos,
                        &spec,
                        &repo,
                        &checkout.commit,
                        snapshot.path().to_path_buf(),
                    )
                    .await
                    .map_err(JobError::Retryable)?;
                drop(snapshot);
                detail
            }
            None => Value::Null,
        };
        Ok(json!({
            "project": payload.project_path,
            "commit": checkout.commit,
            "default_branch": checkout.default_branch,
            "codegraph": codegraph,
        }))
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
