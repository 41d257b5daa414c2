#![doc = include_str!("../README.md")]
//!
//! # Layout
//! - [`name`]: [`ToolName`], the one list of the explore tools' names.
//! - [`tool`]: the [`Tool`] trait, the per-job [`ToolContext`] and the [`ToolRegistry`].
//! - [`grep`], [`read`], [`glob`], [`tree`], [`history`]: one module per tool (`history` asks
//!   relay-repo's [`relay_repo::code_history`] for the git part).
//! - [`sandbox`]: path confinement to the checkout root.
//! - [`place`]: how a path in a related repository is written (`acme/sdk:pkg/x.go`).
//! - [`sandboxes`]: the [`SandboxSet`] of the checkout and its related repositories'.
//! - [`citation`]: checks that a `path:start-end` citation (and its quote) exists in the checkout
//!   (or, written as a place, in a related repository's).
//! - [`search`]: the parallel search engine behind `grep`.
//! - [`retry`]: the deterministic retry ladder for empty `grep` results.
//! - [`closest`]: closest existing paths for "file not found".
//! - [`budget`]: per-call caps, per-job totals and the traversal state.
//! - [`control`]: the deadline and cancellation flag of one call.
//! - [`walk`]: the shared `.gitignore`-aware walker.
//! - [`output`]: size notes and line cutting.
//! - [`error`]: the [`ToolError`] enum, whose text the agent reads.

pub mod budget;
pub mod citation;
pub mod closest;
pub mod control;
pub mod error;
pub mod glob;
pub mod grep;
pub mod history;
pub mod name;
pub mod output;
pub mod place;
pub mod read;
pub mod retry;
pub mod sandbox;
pub mod sandboxes;
pub mod search;
pub mod tool;
pub mod tree;
pub mod walk;

use std::path::Path;

pub use budget::{JobBudget, ToolLimits};
pub use error::ToolError;
pub use name::{ToolName, UnknownToolName};
/// Where the `history` tool reads (relay-repo's, re-exported for the agents' toolbox).
pub use relay_repo::GitHistory;
pub use sandboxes::{NotRelated, RelatedSandbox, SandboxSet};
pub use tool::{JobState, Tool, ToolContext, ToolRegistry};

/// `Result` with [`ToolError`].
pub type Result<T, E = ToolError> = std::result::Result<T, E>;

/// Runs one tool call on the checkout at `repo_root` with default limits and a fresh job state,
/// returning exactly the text the agent would receive (this is what `relay tool` prints). When the
/// checkout is in a git repository, `history` reads it at `HEAD`.
pub fn run_tool(name: &str, repo_root: &Path, args_json: &str) -> Result<String> {
    run_tool_with_limits(name, repo_root, args_json, ToolLimits::default())
}

/// [`run_tool`] with explicit limits (e.g. [`ToolLimits::unbounded`] for benchmarks).
pub fn run_tool_with_limits(
    name: &str,
    repo_root: &Path,
    args_json: &str,
    limits: ToolLimits,
) -> Result<String> {
    let context = ToolContext::new(repo_root, limits)?.with_worktree_history();
    ToolRegistry::standard().call(&context, name, args_json)
}
