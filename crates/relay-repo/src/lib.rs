#![doc = include_str!("../README.md")]
//!
//! # Layout
//! - [`manager`]: [`RepoManager`] — clone, fetch, move the default-branch checkout, snapshots.
//! - [`snapshot`]: immutable per-commit snapshots, [`SnapshotGuard`] leases, pruning.
//! - [`spec`]: [`RepoSpec`] and [`Provider`] — clone URLs and credentials.
//! - [`settings`]: the [`RepoSettings`] struct.
//! - [`error`]: the [`Error`] enum.
//! - [`history`]: paths changed between two commits (with renames) and a file at a commit.
//! - [`code_history`]: [`GitHistory`] — the commits that touched a path or a line range at one
//!   commit (log and blame), bounded, for the agents' `history` tool.
//! - [`worktree`]: HEAD and cleanliness of a local working tree (for the CLI commands).
//! - `git`: running the git CLI (isolated, non-interactive, redacted errors).
//! - `lock`: in-process and cross-process locks.
//! - `rules`: what differs per tracker (clone user, API-to-web URL, project path shape), one row
//!   per provider.

pub mod code_history;
pub mod error;
mod git;
pub mod history;
mod lock;
pub mod manager;
mod rules;
pub mod settings;
pub mod snapshot;
pub mod spec;
pub mod worktree;

pub use code_history::GitHistory;
pub use error::{Error, Result};
pub use history::{PathChange, PathChanges};
pub use manager::{Checkout, RepoManager};
pub use settings::RepoSettings;
pub use snapshot::SnapshotGuard;
pub use spec::{Provider, RepoSpec};
