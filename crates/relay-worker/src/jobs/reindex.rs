//! Keeps the code graph at the checkout's commit: after `update_checkout` moves a repository, the
//! new commit is indexed — incrementally (only the files changed between the two commits are
//! re-parsed, and edges into and out of them recomputed) when this process indexed the previous
//! commit, fully otherwise — and stored (`apply_delta` / `replace_graph`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
// Indexing runs on its own thread with the indexer's stack size (its recursion is bounded).
use relay_codegraph::index::{INDEX_STACK_BYTES, IndexOptions, Indexer};
use relay_codegraph::store::{GraphStore, IndexLimits, StoreError};
use relay_core::repo_config::ExcludeSet;
use relay_repo::{RepoManager, RepoSpec};
use serde_json::{Value, json};
use tokio::sync::Mutex;

/// The code-graph side of `update_checkout`.
pub struct CodegraphIndexing {
    store: Arc<dyn GraphStore>,
    /// The last index built per repository (commit and indexer state), for incremental updates.
    /// Bounded: the least recently used entry is dropped past `max_cached`.
    cache: Mutex<HashMap<String, Cached>>,
    max_cached: usize,
    /// `[codegraph.index]`: the per-file size cap and the parse memory budget.
    limits: IndexLimits,
}

struct Cached {
    commit: String,
    /// The exclusions it was indexed with: other exclusions need a full index.
    exclude: Arc<ExcludeSet>,
    indexer: Indexer,
    used: std::time::Instant,
}

impl CodegraphIndexing {
    pub fn new(store: Arc<dyn GraphStore>, max_cached: usize) -> CodegraphIndexing {
        CodegraphIndexing {
            store,
            cache: Mutex::new(HashMap::new()),
            max_cached: max_cached.max(1),
            limits: IndexLimits::default(),
        }
    }

    /// Indexes with `limits` (`[codegraph.index]`) instead of the defaults.
    pub fn with_limits(mut self, limits: IndexLimits) -> CodegraphIndexing {
        self.limits = limits;
        self
    }

    /// The store the graphs are kept in.
    pub fn store(&self) -> Arc<dyn GraphStore> {
        self.store.clone()
    }

    /// Indexes `commit` of `repo` (whose snapshot lives at `root`) without the paths `exclude`
    /// matches (the repository's configuration at that commit) and stores the graph. While the
    /// store is unavailable the push is not indexed (`"codegraph": "skipped"`): the job does not
    /// fail over it, and the next push or the first mention that needs the graph indexes the
    /// commit once the store is back.
    pub async fn index_commit(
        &self,
        repos: &RepoManager,
        spec: &RepoSpec,
        repo: &str,
        commit: &str,
        root: PathBuf,
        exclude: Arc<ExcludeSet>,
    ) -> anyhow::Result<Value> {
        match self
            .index_and_store(repos, spec, repo, commit, root, exclude)
            .await
        {
            Err(error) if store_unavailable(&error) => {
                tracing::warn!(
                    error.message = %error,
                    error.cause_chain = %format!("{error:#}"),
                    "code-graph store unavailable: the push is not indexed"
                );
                Ok(json!({
                    "codegraph": "skipped",
                    "commit": commit,
                    "reason": format!("{error:#}"),
                }))
            }
            other => other,
        }
    }

    async fn index_and_store(
        &self,
        repos: &RepoManager,
        spec: &RepoSpec,
        repo: &str,
        commit: &str,
        root: PathBuf,
        exclude: Arc<ExcludeSet>,
    ) -> anyhow::Result<Value> {
        // One indexing per repository at a time is guaranteed by the job's concurrency key; the
        // cache entry is taken out while we work so the lock is not held across the indexing.
        let cached = self
            .cache
            .lock()
            .await
            .remove(repo)
            .filter(|cached| cached.exclude == exclude);
        let (indexer, detail) = match cached {
            Some(cached) if cached.commit == commit => {
                let detail = json!({ "codegraph": "unchanged", "commit": commit });
                (cached.indexer, detail)
            }
            Some(cached)
                if self
                    .store
                    .latest_commit(repo)
                    .await
                    .ok()
                    .flatten()
                    .as_deref()
                    == Some(cached.commit.as_str()) =>
            {
                let changed = repos
                    .changed_files(spec, &cached.commit, commit)
                    .await
                    .context("failed to list the files changed by the push")?;
                let mut indexer = cached.indexer;
                let files = changed.len();
                let (indexer, delta) = on_big_stack(move || {
                    indexer.set_root(&root);
                    let paths: Vec<PathBuf> = changed.iter().map(PathBuf::from).collect();
                    let delta = indexer.update(&paths);
                    (indexer, delta)
                })
                .await?;
                let delta = delta.context("incremental re-index failed")?;
                self.store
                    .apply_delta(repo, &cached.commit, commit, &delta)
                    .await
                    .context("failed to store the code-graph delta")?;
                let detail = json!({
                    "codegraph": "incremental",
                    "from": cached.commit,
                    "commit": commit,
                    "changed_files": files,
                    "reparsed": delta.reparsed,
                    "resolved": delta.resolved,
                    "duration_ms": delta.duration.as_millis() as u64,
                });
                (indexer, detail)
            }
            _ => {
                let options = IndexOptions {
                    exclude: exclude.clone(),
                    ..self.limits.options()
                };
                let indexer = on_big_stack(move || Indexer::full_with(&root, options))
                    .await?
                    .context("indexing failed")?;
                let graph = indexer.graph();
                self.store
                    .replace_graph(repo, commit, &graph)
                    .await
                    .context("failed to store the code graph")?;
                let stats = indexer.stats();
                let detail = json!({
                    "codegraph": "full",
                    "commit": commit,
                    "files": stats.files,
                    "symbols": stats.symbols,
                    "edges": stats.edges,
                    "skipped": stats.skipped,
                    "depth_limited": stats.depth_limited,
                    "duration_ms": stats.duration.as_millis() as u64,
                });
                (indexer, detail)
            }
        };
        let mut cache = self.cache.lock().await;
        cache.insert(
            repo.to_owned(),
            Cached {
                commit: commit.to_owned(),
                exclude,
                indexer,
                used: std::time::Instant::now(),
            },
        );
        while cache.len() > self.max_cached {
            let oldest = cache
                .iter()
                .min_by_key(|(_, entry)| entry.used)
                .map(|(key, _)| key.clone());
            match oldest {
                Some(key) => cache.remove(&key),
                None => break,
            };
        }
        Ok(detail)
    }
}

/// Whether `error` comes from a graph store that cannot be reached.
fn store_unavailable(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|cause| cause.downcast_ref::<StoreError>())
        .any(StoreError::is_unavailable)
}

async fn on_big_stack<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> anyhow::Result<T> {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("relay-index".into())
        .stack_size(INDEX_STACK_BYTES)
        .spawn(move || {
            let _ = sender.send(work());
        })
        .context("failed to start the indexer thread")?;
    receiver.await.context("the indexer thread panicked")
}

#[cfg(test)]
mod tests {
    use anyhow::Context as _;
    use relay_codegraph::store::StoreError;

    use super::store_unavailable;

    #[test]
    fn a_store_that_cannot_be_reached_is_told_from_other_failures() {
        let unavailable: anyhow::Result<()> =
            Err(StoreError::Unavailable("connection refused".into()))
                .context("failed to store the code graph");
        assert!(store_unavailable(&unavailable.unwrap_err()));
        let wrong: anyhow::Result<()> =
            Err(StoreError::Corrupt("bad row".into())).context("failed to store the code graph");
        assert!(!store_unavailable(&wrong.unwrap_err()));
        assert!(!store_unavailable(&anyhow::anyhow!("indexing failed")));
    }
}
