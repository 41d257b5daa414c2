//! [`RepoSettings`]: where checkouts live and how long git may take.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Settings of the repository manager (`[repo]` in the configuration).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RepoSettings {
    /// Directory holding one subdirectory per tracked repository (mirror, snapshots, locks).
    /// Several worker processes may share it. Default: `./data`.
    pub data_dir: PathBuf,
    /// The git executable. Default: `git` (looked up in `PATH`).
    pub git_binary: PathBuf,
    /// Timeout for one network git command (clone, fetch, ls-remote), in seconds. Default: 600.
    pub network_timeout_secs: u64,
    /// Timeout for one local git command (rev-parse, read-tree), in seconds. Default: 300.
    pub local_timeout_secs: u64,
    /// How long, in seconds, a snapshot that is neither current nor in use is kept after its last
    /// use before it is pruned. Default: 900.
    pub snapshot_retention_secs: u64,
}

impl Default for RepoSettings {
    fn default() -> Self {
        Self {
            data_dir: PathBuf::from("data"),
            git_binary: PathBuf::from("git"),
            network_timeout_secs: 600,
            local_timeout_secs: 300,
            snapshot_retention_secs: 900,
        }
    }
}
