//! The code graph the job's explorers query: the configured store at the snapshot's commit,
//! indexed first when the store does not hold that commit yet (a mention can arrive before any
//! push has been indexed).

use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use relay_agent::toolbox::GraphAccess;
use relay_codegraph::ops::GraphScope;
use relay_core::repo_config::ExcludeSet;
use relay_repo::{RepoManager, RepoSpec};

use crate::jobs::reindex::CodegraphIndexing;

/// The store's name for a repository: the same key `update_checkout` indexes under.
pub fn graph_repo_key(tracker: &str, project_path: &str) -> String {
    format!("{tracker}/{project_path}")
}

/// The graph of `repo` at `commit` (checked out at `root`), indexing and storing it (without
/// the repository's excluded paths) when the store's latest snapshot of `repo` is another commit.
pub async fn ensure_graph(
    indexing: &CodegraphIndexing,
    repos: &RepoManager,
    spec: &RepoSpec,
    repo: &str,
    commit: &str,
    root: &Path,
    exclude: Arc<ExcludeSet>,
) -> anyhow::Result<GraphAccess> {
    let latest = indexing
        .store()
        .latest_commit(repo)
        .await
        .context("failed to read the code-graph store")?;
    if latest.as_deref() != Some(commit) {
        let detail = indexing
            .index_commit(repos, spec, repo, commit, root.to_path_buf(), exclude)
            .await?;
        tracing::info!(repo = %repo, commit = %commit, detail = %detail, "code graph indexed for the job");
    }
    Ok(GraphAccess::single(
        indexing.store(),
        GraphScope::at(repo, commit),
    ))
}
