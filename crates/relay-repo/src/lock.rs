//! Locks: one updater per repository at a time, across tasks (an in-process async mutex) and
//! across processes sharing the data directory (an exclusive `flock` on `<repo>/lock`); and a
//! shared/exclusive `flock` on `<repo>/snapshots.lock` that lets readers take a lease while no
//! pruning is in progress.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

use crate::error::{Error, IoContext, Result};

/// In-process updater mutexes, one per repository directory.
#[derive(Debug, Default)]
pub(crate) struct LockTable {
    locks: Mutex<HashMap<PathBuf, Arc<AsyncMutex<()>>>>,
}

/// Held while updating one repository; released on drop.
#[derive(Debug)]
pub(crate) struct UpdateLock {
    _file: File,
    _guard: OwnedMutexGuard<()>,
}

impl LockTable {
    /// Waits for the in-process mutex, then for the exclusive file lock.
    pub(crate) async fn lock(&self, repo_dir: &Path) -> Result<UpdateLock> {
        let mutex = {
            let mut locks = self
                .locks
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            Arc::clone(locks.entry(repo_dir.to_path_buf()).or_default())
        };
        let guard = mutex.lock_owned().await;
        let file = flock(repo_dir.join("lock"), false).await?;
        Ok(UpdateLock {
            _file: file,
            _guard: guard,
        })
    }
}

/// Opens (creating) `path` and takes a shared or exclusive lock on it, off the async runtime.
pub(crate) async fn flock(path: PathBuf, shared: bool) -> Result<File> {
    tokio::task::spawn_blocking(move || {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .io_context(|| format!("cannot open lock file {}", path.display()))?;
        if shared {
            file.lock_shared()
        } else {
            file.lock()
        }
        .io_context(|| format!("cannot lock {}", path.display()))?;
        Ok(file)
    })
    .await
    .map_err(|error| Error::Io {
        context: "lock task failed".into(),
        source: std::io::Error::other(error),
    })?
}
