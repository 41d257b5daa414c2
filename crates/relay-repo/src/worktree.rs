//! What a local working tree is at: its HEAD and whether it has changes. For `relay codegraph`
//! and `relay index` on a user's checkout (the service's own checkouts are managed by
//! [`crate::RepoManager`]). The git CLI belongs to this crate; the code graph asks here.

use std::path::Path;

/// A working tree's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeState {
    /// The commit HEAD points at.
    pub head: String,
    /// No uncommitted or untracked changes to the paths asked about.
    pub clean: bool,
}

/// The state of the working tree at `root`, with "clean" judged only on paths matching `pathspecs`
/// (git pathspecs such as `*.go`). `None` when `root` is not in a git repository, has no commit yet,
/// or git is not installed: callers treat that as an unversioned directory.
pub async fn state(root: &Path, pathspecs: &[&str]) -> Option<WorktreeState> {
    let head = git(root, &["rev-parse", "--verify", "HEAD"]).await?;
    let mut status = vec!["status", "--porcelain", "--untracked-files=all", "--"];
    status.extend_from_slice(pathspecs);
    let changes = git(root, &status).await?;
    Some(WorktreeState {
        head: head.trim().to_owned(),
        clean: changes.trim().is_empty(),
    })
}

async fn git(root: &Path, args: &[&str]) -> Option<String> {
    let output = tokio::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .await
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}
