//! The in-memory code graph for runs without a configured store (`relay explore`, tests).

use std::path::Path;
use std::sync::Arc;

use relay_codegraph::index::{IndexOptions, ProgressFn, index_repository};
use relay_codegraph::ops::{GraphScope, RelatedGraph};
use relay_codegraph::store::GraphStore;
use relay_codegraph::store::memory::MemoryStore;

use super::{GraphAccess, ToolboxError};

/// The commit name of a graph indexed from the working tree (no git involved).
const WORKTREE_COMMIT: &str = "worktree";

/// Indexes the checkout at `root` (on the blocking pool; `progress` sees each phase) into a fresh
/// [`MemoryStore`] and returns the access the `codegraph` tool needs.
pub async fn index_in_memory(
    root: &Path,
    progress: Option<ProgressFn>,
) -> Result<GraphAccess, ToolboxError> {
    let store = MemoryStore::new();
    let scope = index_into(&store, root, progress).await?;
    Ok(GraphAccess::single(Arc::new(store), scope))
}

/// Indexes the related checkout at `root` into `store` (beside the issue's own graph) as the
/// graph of `label`.
pub async fn index_related_in_memory(
    store: &dyn GraphStore,
    label: &str,
    root: &Path,
) -> Result<RelatedGraph, ToolboxError> {
    Ok(RelatedGraph {
        label: label.to_owned(),
        scope: index_into(store, root, None).await?,
    })
}

/// Indexes the working tree at `root` into `store` under its path.
async fn index_into(
    store: &dyn GraphStore,
    root: &Path,
    progress: Option<ProgressFn>,
) -> Result<GraphScope, ToolboxError> {
    let index_root = root.to_owned();
    let output = tokio::task::spawn_blocking(move || {
        let options = IndexOptions {
            progress,
            ..IndexOptions::default()
        };
        index_repository(&index_root, &options)
    })
    .await
    .map_err(|error| {
        ToolboxError::Snapshot(relay_tools::ToolError::Io(format!(
            "indexing task failed: {error}"
        )))
    })?
    .map_err(ToolboxError::Index)?;
    let repo = root.to_string_lossy().into_owned();
    store
        .replace_graph(&repo, WORKTREE_COMMIT, &output.graph)
        .await
        .map_err(ToolboxError::Store)?;
    Ok(GraphScope::at(repo, WORKTREE_COMMIT))
}
