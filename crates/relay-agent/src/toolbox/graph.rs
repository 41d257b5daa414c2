//! The in-memory code graph for runs without a configured store (`relay explore`, tests).

use std::path::Path;
use std::sync::Arc;

use relay_codegraph::index::{IndexOptions, ProgressFn, index_repository};
use relay_codegraph::ops::GraphScope;
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
    let store = MemoryStore::new();
    store
        .replace_graph(&repo, WORKTREE_COMMIT, &output.graph)
        .await
        .map_err(ToolboxError::Store)?;
    Ok(GraphAccess {
        store: Arc::new(store),
        scope: GraphScope::at(repo, WORKTREE_COMMIT),
    })
}
