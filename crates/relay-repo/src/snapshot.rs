//! Immutable per-commit snapshots, reader leases and pruning.
//!
//! A snapshot is a plain directory tree of one commit at `snapshots/<sha>/`, built in
//! `snapshots/.tmp-<sha>-<n>/` and renamed into place, so it is either complete or absent. Nothing
//! ever modifies a snapshot after the rename; a job reading it sees one commit for its whole run.
//!
//! Readers hold a [`SnapshotGuard`], backed by a lease file `leases/<sha>.<pid>-<n>`. Leases are
//! created under a shared `flock` on `snapshots.lock`; pruning takes it exclusively, so a snapshot
//! cannot disappear between a reader's existence check and its lease. Pruning removes snapshots
//! that are not current, have no lease from a live process, and were last used longer ago than the
//! retention period (renamed to `.trash-*` under the lock, deleted after).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use crate::error::{IoContext, Result};
use crate::lock::flock;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A unique suffix for temporary names: process id and a per-process counter.
pub(crate) fn unique_suffix() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// The files and directories of one repository under the data directory.
#[derive(Debug, Clone)]
pub(crate) struct RepoPaths {
    /// `<data_dir>/repos/<slug>`.
    pub dir: PathBuf,
    /// The bare mirror.
    pub mirror: PathBuf,
    /// Snapshot directories.
    pub snapshots: PathBuf,
    /// Lease files.
    pub leases: PathBuf,
    /// File holding the SHA of the current default-branch snapshot.
    pub current: PathBuf,
    /// Shared/exclusive lock between lease takers and the pruner.
    pub snapshots_lock: PathBuf,
}

impl RepoPaths {
    pub(crate) fn new(dir: PathBuf) -> Self {
        Self {
            mirror: dir.join("mirror.git"),
            snapshots: dir.join("snapshots"),
            leases: dir.join("leases"),
            current: dir.join("current"),
            snapshots_lock: dir.join("snapshots.lock"),
            dir,
        }
    }

    pub(crate) fn snapshot(&self, sha: &str) -> PathBuf {
        self.snapshots.join(sha)
    }

    pub(crate) async fn create_dirs(&self) -> Result<()> {
        for dir in [&self.dir, &self.snapshots, &self.leases] {
            tokio::fs::create_dir_all(dir)
                .await
                .io_context(|| format!("cannot create {}", dir.display()))?;
        }
        Ok(())
    }

    /// The current commit, if the repository has been synced.
    pub(crate) async fn read_current(&self) -> Result<Option<String>> {
        match tokio::fs::read_to_string(&self.current).await {
            Ok(text) => Ok(Some(text.trim().to_string()).filter(|sha| !sha.is_empty())),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => {
                Err(error).io_context(|| format!("cannot read {}", self.current.display()))
            }
        }
    }

    /// Atomically replaces the current commit.
    pub(crate) async fn write_current(&self, sha: &str) -> Result<()> {
        let tmp = self.dir.join(format!(".tmp-current-{}", unique_suffix()));
        tokio::fs::write(&tmp, format!("{sha}\n"))
            .await
            .io_context(|| format!("cannot write {}", tmp.display()))?;
        tokio::fs::rename(&tmp, &self.current)
            .await
            .io_context(|| format!("cannot replace {}", self.current.display()))
    }
}

/// A lease on one snapshot: its directory will not be pruned while the guard lives.
#[derive(Debug)]
pub struct SnapshotGuard {
    path: PathBuf,
    commit: String,
    lease: PathBuf,
}

impl SnapshotGuard {
    /// The snapshot directory: the repository tree at [`commit`](Self::commit). Read-only by
    /// convention; never modify it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The full commit SHA of the snapshot (record it as the explored commit).
    pub fn commit(&self) -> &str {
        &self.commit
    }
}

impl Drop for SnapshotGuard {
    fn drop(&mut self) {
        touch(&self.path);
        if let Err(error) = std::fs::remove_file(&self.lease)
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(lease.path = %self.lease.display(), error.message = %error, "cannot remove snapshot lease");
        }
    }
}

/// Takes a lease on `sha` if its snapshot exists.
pub(crate) async fn try_acquire(paths: &RepoPaths, sha: &str) -> Result<Option<SnapshotGuard>> {
    let _shared = flock(paths.snapshots_lock.clone(), true).await?;
    let path = paths.snapshot(sha);
    if !tokio::fs::metadata(&path)
        .await
        .is_ok_and(|metadata| metadata.is_dir())
    {
        return Ok(None);
    }
    let lease = paths.leases.join(format!("{sha}.{}", unique_suffix()));
    tokio::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lease)
        .await
        .io_context(|| format!("cannot create lease {}", lease.display()))?;
    touch(&path);
    Ok(Some(SnapshotGuard {
        path,
        commit: sha.to_string(),
        lease,
    }))
}

/// Removes leftovers of interrupted builds and prunes. Call with the update lock held.
pub(crate) async fn remove_temporaries(paths: &RepoPaths) -> Result<()> {
    let mut doomed = Vec::new();
    for dir in [&paths.dir, &paths.snapshots] {
        let mut entries = match tokio::fs::read_dir(dir).await {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => {
                return Err(error).io_context(|| format!("cannot list {}", dir.display()));
            }
        };
        while let Some(entry) = entries
            .next_entry()
            .await
            .io_context(|| format!("cannot list {}", dir.display()))?
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(".tmp-") || name.starts_with(".trash-") {
                doomed.push(entry.path());
            }
        }
    }
    remove_all(doomed).await;
    Ok(())
}

/// Prunes unused snapshots (see the module docs). Call with the update lock held. Returns how
/// many snapshots were removed.
pub(crate) async fn prune(paths: &RepoPaths, retention: Duration) -> Result<usize> {
    let current = paths.read_current().await?;
    let exclusive = flock(paths.snapshots_lock.clone(), false).await?;
    let live = live_leases(&paths.leases).await?;
    let mut trash = Vec::new();
    let mut entries = tokio::fs::read_dir(&paths.snapshots)
        .await
        .io_context(|| format!("cannot list {}", paths.snapshots.display()))?;
    while let Some(entry) = entries
        .next_entry()
        .await
        .io_context(|| "cannot list snapshots".to_string())?
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.')
            || current.as_deref() == Some(name.as_str())
            || live.contains(&name)
        {
            continue;
        }
        let last_used = entry
            .metadata()
            .await
            .ok()
            .and_then(|metadata| metadata.modified().ok());
        let age = last_used
            .and_then(|time| SystemTime::now().duration_since(time).ok())
            .unwrap_or(Duration::MAX);
        if age < retention {
            continue;
        }
        let target = paths
            .snapshots
            .join(format!(".trash-{name}-{}", unique_suffix()));
        tokio::fs::rename(entry.path(), &target)
            .await
            .io_context(|| format!("cannot retire snapshot {name}"))?;
        trash.push(target);
    }
    drop(exclusive);
    let removed = trash.len();
    remove_all(trash).await;
    Ok(removed)
}

/// SHAs with a lease held by a live process; stale lease files are removed.
async fn live_leases(leases: &Path) -> Result<HashSet<String>> {
    let mut live = HashSet::new();
    let mut entries = match tokio::fs::read_dir(leases).await {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(live),
        Err(error) => return Err(error).io_context(|| format!("cannot list {}", leases.display())),
    };
    while let Some(entry) = entries
        .next_entry()
        .await
        .io_context(|| "cannot list leases".to_string())?
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        // `<sha>.<pid>-<counter>`
        let Some((sha, suffix)) = name.split_once('.') else {
            continue;
        };
        let pid = suffix.split('-').next().unwrap_or_default();
        let alive = pid.parse::<u32>().is_ok_and(|pid| {
            pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists()
        });
        if alive {
            live.insert(sha.to_string());
        } else {
            let _ = tokio::fs::remove_file(entry.path()).await;
        }
    }
    Ok(live)
}

async fn remove_all(paths: Vec<PathBuf>) {
    if paths.is_empty() {
        return;
    }
    let result = tokio::task::spawn_blocking(move || {
        for path in paths {
            let result = if path.is_dir() { std::fs::remove_dir_all(&path) } else { std::fs::remove_file(&path) };
            if let Err(error) = result {
                tracing::warn!(path = %path.display(), error.message = %error, "cannot remove temporary path");
            }
        }
    })
    .await;
    if let Err(error) = result {
        tracing::warn!(error.message = %error, "cleanup task failed");
    }
}

/// Sets a directory's modification time to now (marks a snapshot as recently used).
fn touch(path: &Path) {
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.set_modified(SystemTime::now());
    }
}
