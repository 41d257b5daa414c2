//! [`RepoManager`]: clone, fetch, move the default-branch checkout, hand out snapshots.
//!
//! Layout under `<data_dir>/repos/<slug>/` (the slug is readable and collision-free:
//! `<provider>-<host>-<path>-<hash>`):
//! - `mirror.git/` — bare clone; `git fetch +refs/heads/*:refs/heads/*` keeps it current and `HEAD`
//!   follows the remote's default branch (`git ls-remote --symref`);
//! - `snapshots/<sha>/` — immutable trees (see [`crate::snapshot`]);
//! - `current` — SHA of the default-branch checkout, replaced atomically;
//! - `lock`, `snapshots.lock`, `leases/` — coordination between tasks and processes.
//!
//! A failed clone leaves nothing behind (it runs in `.tmp-mirror-*`, renamed on success); a failed
//! fetch or snapshot build leaves `current` and every existing snapshot untouched.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Error, IoContext, Result};
use crate::git::{Git, Reach, args};
use crate::lock::LockTable;
use crate::settings::RepoSettings;
use crate::snapshot::{
    RepoPaths, SnapshotGuard, prune, remove_temporaries, try_acquire, unique_suffix,
};
use crate::spec::RepoSpec;

/// Keeps one checkout per tracked repository under the data directory.
#[derive(Debug)]
pub struct RepoManager {
    settings: RepoSettings,
    locks: LockTable,
}

/// The default-branch checkout after [`RepoManager::sync_to`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    /// Full SHA of the checked-out commit.
    pub commit: String,
    /// The snapshot directory of that commit. Take a [`SnapshotGuard`] (via
    /// [`RepoManager::snapshot`]) to keep it from being pruned while reading.
    pub path: PathBuf,
    /// The remote's default branch (e.g. `main`).
    pub default_branch: String,
}

impl RepoManager {
    /// A manager storing checkouts under `settings.data_dir` (created if missing).
    pub fn new(settings: RepoSettings) -> Result<Self> {
        let repos = settings.data_dir.join("repos");
        std::fs::create_dir_all(&repos)
            .io_context(|| format!("cannot create data directory {}", repos.display()))?;
        Ok(Self {
            settings,
            locks: LockTable::default(),
        })
    }

    /// The settings in force.
    pub fn settings(&self) -> &RepoSettings {
        &self.settings
    }

    /// The directory holding this repository's mirror and snapshots.
    pub fn repo_dir(&self, spec: &RepoSpec) -> Result<PathBuf> {
        spec.validate()?;
        Ok(self.settings.data_dir.join("repos").join(slug(spec)))
    }

    /// The current default-branch commit, if the repository has been synced.
    pub async fn current_commit(&self, spec: &RepoSpec) -> Result<Option<String>> {
        RepoPaths::new(self.repo_dir(spec)?).read_current().await
    }

    /// Brings the default-branch checkout to `commit` (a pushed commit) or, with `None`, to the
    /// remote's default-branch head: clones if missing, fetches, builds the snapshot and makes it
    /// current. A commit that is an ancestor of the current one (a late, out-of-order push) leaves
    /// the checkout where it is. One updater per repository runs at a time, across processes.
    #[tracing::instrument(skip_all, fields(repo.path = %spec.project_path), err(level = "warn"))]
    pub async fn sync_to(&self, spec: &RepoSpec, commit: Option<&str>) -> Result<Checkout> {
        if let Some(commit) = commit {
            validate_commit(commit)?;
        }
        let (git, paths, source) = self.prepare(spec).await?;
        let _lock = self.locks.lock(&paths.dir).await?;
        remove_temporaries(&paths).await?;
        let cloned = self.ensure_mirror(&git, &paths, &source).await?;
        let known = match commit {
            Some(commit) if !cloned => self.resolve(&git, &paths, commit).await.ok(),
            _ => None,
        };
        if !cloned && known.is_none() {
            self.fetch(&git, &paths, &source).await?;
        }
        let mut target = match (known, commit) {
            (Some(sha), _) => sha,
            (None, Some(commit)) => {
                self.resolve(&git, &paths, commit)
                    .await
                    .map_err(|error| match error {
                        Error::Git { repo, .. } => Error::CommitNotFound {
                            repo,
                            commit: commit.to_string(),
                        },
                        other => other,
                    })?
            }
            (None, None) => {
                self.resolve(&git, &paths, "HEAD")
                    .await
                    .map_err(|error| match error {
                        Error::Git { repo, .. } => Error::CommitNotFound {
                            repo,
                            commit: "HEAD of the default branch (is the repository empty?)".into(),
                        },
                        other => other,
                    })?
            }
        };
        if let (Some(_), Some(current)) = (commit, paths.read_current().await?)
            && current != target
            && self.is_ancestor(&git, &paths, &target, &current).await
        {
            tracing::info!(repo.commit = %target, repo.current = %current, "pushed commit is older than the checkout; keeping it");
            target = current;
        }
        self.ensure_snapshot(&git, &paths, &target).await?;
        paths.write_current(&target).await?;
        let default_branch = self.default_branch(&git, &paths).await?;
        match prune(&paths, self.retention()).await {
            Ok(removed) if removed > 0 => {
                tracing::debug!(snapshots.removed = removed, "pruned snapshots")
            }
            Ok(_) => {}
            Err(error) => tracing::warn!(error.message = %error, "cannot prune snapshots"),
        }
        tracing::info!(repo.commit = %target, "checkout updated");
        Ok(Checkout {
            path: paths.snapshot(&target),
            commit: target,
            default_branch,
        })
    }

    /// A stable snapshot of `commit` (or, with `None`, of the current default-branch checkout,
    /// syncing first if the repository was never synced) that stays on disk while the guard
    /// lives. Builds the snapshot (fetching if the commit is unknown) when needed; never moves the
    /// default-branch checkout.
    #[tracing::instrument(skip_all, fields(repo.path = %spec.project_path), err(level = "warn"))]
    pub async fn snapshot(&self, spec: &RepoSpec, commit: Option<&str>) -> Result<SnapshotGuard> {
        if let Some(commit) = commit {
            validate_commit(commit)?;
        }
        let paths = RepoPaths::new(self.repo_dir(spec)?);
        let wanted = match commit {
            Some(commit) => commit.to_ascii_lowercase(),
            None => match paths.read_current().await? {
                Some(current) => current,
                None => self.sync_to(spec, None).await?.commit,
            },
        };
        if is_full_sha(&wanted)
            && let Some(guard) = try_acquire(&paths, &wanted).await?
        {
            return Ok(guard);
        }
        let (git, paths, source) = self.prepare(spec).await?;
        let _lock = self.locks.lock(&paths.dir).await?;
        remove_temporaries(&paths).await?;
        let cloned = self.ensure_mirror(&git, &paths, &source).await?;
        let sha = match self.resolve(&git, &paths, &wanted).await {
            Ok(sha) => sha,
            Err(_) if !cloned => {
                self.fetch(&git, &paths, &source).await?;
                self.resolve(&git, &paths, &wanted)
                    .await
                    .map_err(|_| Error::CommitNotFound {
                        repo: spec.display_name(),
                        commit: wanted.clone(),
                    })?
            }
            Err(_) => {
                return Err(Error::CommitNotFound {
                    repo: spec.display_name(),
                    commit: wanted.clone(),
                });
            }
        };
        self.ensure_snapshot(&git, &paths, &sha).await?;
        // Still under the update lock, so no pruner can run between the build and the lease.
        try_acquire(&paths, &sha).await?.ok_or_else(|| Error::Io {
            context: format!("snapshot {sha} vanished after it was built"),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        })
    }

    /// Repository-relative paths of the files that differ between two synced commits (added,
    /// modified or deleted; a rename is a deletion plus an addition). Used by incremental
    /// re-indexing, which re-parses only these.
    pub async fn changed_files(
        &self,
        spec: &RepoSpec,
        from: &str,
        to: &str,
    ) -> Result<Vec<String>> {
        validate_commit(from)?;
        validate_commit(to)?;
        let (git, paths, _) = self.prepare(spec).await?;
        let mut diff = vec![git_dir_arg(&paths)];
        diff.extend(args([
            "diff",
            "--name-only",
            "--no-renames",
            "-z",
            "--end-of-options",
            from,
            to,
        ]));
        let output = git.run(None, &diff, &[], self.local()).await?;
        Ok(output
            .split('\0')
            .map(str::trim)
            .filter(|path| !path.is_empty())
            .map(str::to_owned)
            .collect())
    }

    /// Prunes this repository's unused snapshots now; returns how many were removed.
    pub async fn prune(&self, spec: &RepoSpec) -> Result<usize> {
        let paths = RepoPaths::new(self.repo_dir(spec)?);
        paths.create_dirs().await?;
        let _lock = self.locks.lock(&paths.dir).await?;
        prune(&paths, self.retention()).await
    }

    fn retention(&self) -> Duration {
        Duration::from_secs(self.settings.snapshot_retention_secs)
    }

    fn network(&self) -> Reach {
        Reach::Network(Duration::from_secs(self.settings.network_timeout_secs))
    }

    pub(crate) fn local(&self) -> Reach {
        Reach::Local(Duration::from_secs(self.settings.local_timeout_secs))
    }

    pub(crate) async fn prepare(&self, spec: &RepoSpec) -> Result<(Git, RepoPaths, String)> {
        let source = spec.clone_source()?;
        let git = Git::new(&self.settings.git_binary, spec)?;
        let paths = RepoPaths::new(self.repo_dir(spec)?);
        paths.create_dirs().await?;
        Ok((git, paths, source))
    }

    /// Clones the bare mirror if it does not exist yet. Returns whether it cloned.
    async fn ensure_mirror(&self, git: &Git, paths: &RepoPaths, source: &str) -> Result<bool> {
        if tokio::fs::metadata(paths.mirror.join("HEAD")).await.is_ok() {
            return Ok(false);
        }
        if tokio::fs::metadata(&paths.mirror).await.is_ok() {
            // A mirror without HEAD is broken (e.g. removed by hand); start over.
            tokio::fs::remove_dir_all(&paths.mirror)
                .await
                .io_context(|| format!("cannot remove broken mirror {}", paths.mirror.display()))?;
        }
        let tmp = paths.dir.join(format!(".tmp-mirror-{}", unique_suffix()));
        let mut clone_args = args(["clone", "--bare", "--no-tags", "--quiet", "--"]);
        clone_args.push(source.into());
        clone_args.push(tmp.clone().into_os_string());
        if let Err(error) = git.run(None, &clone_args, &[], self.network()).await {
            let _ = tokio::fs::remove_dir_all(&tmp).await;
            return Err(error);
        }
        tokio::fs::rename(&tmp, &paths.mirror)
            .await
            .io_context(|| format!("cannot move mirror into {}", paths.mirror.display()))?;
        tracing::info!("repository cloned");
        Ok(true)
    }

    /// Fetches all branches and points `HEAD` at the remote's default branch.
    async fn fetch(&self, git: &Git, paths: &RepoPaths, source: &str) -> Result<()> {
        let git_dir = git_dir_arg(paths);
        let mut fetch = vec![git_dir.clone()];
        fetch.extend(args(["fetch", "--prune", "--no-tags", "--quiet", "--"]));
        fetch.push(source.into());
        fetch.push("+refs/heads/*:refs/heads/*".into());
        git.run(None, &fetch, &[], self.network()).await?;
        let mut ls_remote = vec![git_dir.clone()];
        ls_remote.extend(args(["ls-remote", "--symref", "--"]));
        ls_remote.push(source.into());
        ls_remote.push("HEAD".into());
        let listing = git.run(None, &ls_remote, &[], self.network()).await?;
        if let Some(branch) = listing
            .lines()
            .find_map(|line| line.strip_prefix("ref: refs/heads/"))
            .and_then(|rest| rest.split('\t').next())
            .filter(|branch| valid_branch(branch))
        {
            let mut symbolic = vec![git_dir];
            symbolic.extend(args(["symbolic-ref", "HEAD"]));
            symbolic.push(format!("refs/heads/{branch}").into());
            git.run(None, &symbolic, &[], self.local()).await?;
        }
        Ok(())
    }

    async fn resolve(&self, git: &Git, paths: &RepoPaths, revision: &str) -> Result<String> {
        let mut rev_parse = vec![git_dir_arg(paths)];
        rev_parse.extend(args([
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
        ]));
        rev_parse.push(format!("{revision}^{{commit}}").into());
        git.run(None, &rev_parse, &[], self.local()).await
    }

    async fn is_ancestor(
        &self,
        git: &Git,
        paths: &RepoPaths,
        ancestor: &str,
        descendant: &str,
    ) -> bool {
        let mut merge_base = vec![git_dir_arg(paths)];
        merge_base.extend(args(["merge-base", "--is-ancestor", ancestor, descendant]));
        git.run(None, &merge_base, &[], self.local()).await.is_ok()
    }

    async fn default_branch(&self, git: &Git, paths: &RepoPaths) -> Result<String> {
        let mut symbolic = vec![git_dir_arg(paths)];
        symbolic.extend(args(["symbolic-ref", "--short", "HEAD"]));
        git.run(None, &symbolic, &[], self.local()).await
    }

    /// Builds `snapshots/<sha>` if missing: `read-tree -u` into a temporary directory with a
    /// throw-away index, then an atomic rename.
    async fn ensure_snapshot(&self, git: &Git, paths: &RepoPaths, sha: &str) -> Result<()> {
        let target = paths.snapshot(sha);
        if tokio::fs::metadata(&target).await.is_ok() {
            return Ok(());
        }
        let suffix = unique_suffix();
        let tmp = paths.snapshots.join(format!(".tmp-{sha}-{suffix}"));
        let index = paths.snapshots.join(format!(".tmp-{sha}-{suffix}.index"));
        tokio::fs::create_dir(&tmp)
            .await
            .io_context(|| format!("cannot create {}", tmp.display()))?;
        let mut read_tree = vec![git_dir_arg(paths), work_tree_arg(&tmp)];
        read_tree.extend(args(["read-tree", "--reset", "-u", sha]));
        let result = git
            .run(
                None,
                &read_tree,
                &[("GIT_INDEX_FILE", index.clone().into_os_string())],
                self.local(),
            )
            .await;
        let _ = tokio::fs::remove_file(&index).await;
        if let Err(error) = result {
            let _ = tokio::fs::remove_dir_all(&tmp).await;
            return Err(error);
        }
        tokio::fs::rename(&tmp, &target)
            .await
            .io_context(|| format!("cannot move snapshot into {}", target.display()))
    }
}

pub(crate) fn git_dir_arg(paths: &RepoPaths) -> OsString {
    let mut arg = OsString::from("--git-dir=");
    arg.push(&paths.mirror);
    arg
}

fn work_tree_arg(dir: &std::path::Path) -> OsString {
    let mut arg = OsString::from("--work-tree=");
    arg.push(dir);
    arg
}

/// Commits are given as hex object ids (abbreviated ones of 7+ digits are accepted).
pub(crate) fn validate_commit(commit: &str) -> Result<()> {
    if (7..=64).contains(&commit.len()) && commit.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err(Error::InvalidSpec(format!(
            "commit `{}` is not a hex object id",
            commit.escape_debug()
        )))
    }
}

fn is_full_sha(commit: &str) -> bool {
    matches!(commit.len(), 40 | 64)
        && commit
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
}

fn valid_branch(branch: &str) -> bool {
    !branch.is_empty()
        && !branch.starts_with('-')
        && !branch.contains("..")
        && branch
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-'))
}

/// `<provider>-<host>-<path>-<hash>`, with anything outside `[A-Za-z0-9._-]` replaced by `_`.
fn slug(spec: &RepoSpec) -> String {
    let identity = match &spec.local_path {
        Some(path) => format!("local\n{}\n{}", path.display(), spec.project_path),
        None => format!(
            "{}\n{}\n{}",
            spec.provider.as_str(),
            spec.web_base().unwrap_or_default(),
            spec.project_path
        ),
    };
    let readable: String = spec
        .display_name()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    format!(
        "{}-{readable}-{:016x}",
        spec.provider.as_str(),
        fnv1a(identity.as_bytes())
    )
}

/// 64-bit FNV-1a (stable across Rust versions, unlike `DefaultHasher`).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Provider;

    #[test]
    fn commits_are_validated() {
        assert!(validate_commit("0123456789abcdef0123456789abcdef01234567").is_ok());
        assert!(validate_commit("abc1234").is_ok());
        assert!(validate_commit("--upload-pack=x").is_err());
        assert!(validate_commit("HEAD").is_err());
        assert!(validate_commit("abc").is_err());
    }

    #[test]
    fn slugs_are_stable_and_distinct() {
        let a = RepoSpec::new(Provider::GitHub, "https://github.com", "owner/repo");
        let b = RepoSpec::new(Provider::GitHub, "https://ghe.example.com", "owner/repo");
        assert_eq!(slug(&a), slug(&a.clone()));
        assert_ne!(slug(&a), slug(&b));
        assert!(
            slug(&a).starts_with("github-github.com_owner_repo-"),
            "{}",
            slug(&a)
        );
    }
}
