//! `[retention] snapshots_per_repository` for a graph store outside Postgres (ArangoDB): the rule
//! the Postgres pass applies in SQL (`relay_store::retention`), applied to the store's own
//! snapshots — the newest K per repository stay, and so does any snapshot a live finding quotes
//! or a running job may be reading (one whose commit its payload names, or the repository's
//! newest when it started). The worker's periodic pass and `relay prune` both run it.

use std::collections::BTreeMap;

use relay_codegraph::store::{GraphStore, Snapshot, SnapshotInfo, StoreError};
use relay_store::retention::{PruneMode, SnapshotGuards};

/// What one pass over a graph store did (or, dry, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GraphPruneReport {
    /// Snapshots removed (dry: that would be).
    pub pruned: u64,
    /// Snapshots past the newest K kept because a live finding or a running job uses them.
    pub kept_in_use: u64,
}

/// Errors of a graph-store pass.
#[derive(Debug, thiserror::Error)]
pub enum GraphPruneError {
    #[error("failed to read what keeps snapshots alive")]
    Guards(#[source] relay_store::Error),
    #[error("the graph store failed")]
    Store(#[source] StoreError),
}

/// The snapshots the rule lets go, given every stored snapshot (any order), the number kept per
/// repository, and the guards read from the database.
pub fn prunable(
    snapshots: &[SnapshotInfo],
    keep_per_repository: u32,
    guards: &SnapshotGuards,
) -> (Vec<Snapshot>, u64) {
    let mut by_repo: BTreeMap<&str, Vec<&SnapshotInfo>> = BTreeMap::new();
    for info in snapshots {
        by_repo.entry(&info.snapshot.repo).or_default().push(info);
    }
    let mut prunable = Vec::new();
    let mut kept_in_use = 0;
    for infos in by_repo.values_mut() {
        // Newest first; ties broken by commit so the choice is stable.
        infos.sort_by(|a, b| {
            (b.updated_at, &a.snapshot.commit).cmp(&(a.updated_at, &b.snapshot.commit))
        });
        let keep = usize::try_from(keep_per_repository).unwrap_or(usize::MAX);
        for candidate in infos.iter().skip(keep) {
            if in_use(candidate, infos, guards) {
                kept_in_use += 1;
            } else {
                prunable.push(candidate.snapshot.clone());
            }
        }
    }
    (prunable, kept_in_use)
}

/// Whether a live finding quotes the candidate's commit or a running job may be reading it.
fn in_use(candidate: &SnapshotInfo, repository: &[&SnapshotInfo], guards: &SnapshotGuards) -> bool {
    let commit = candidate.snapshot.commit.as_str();
    if guards.live_commits.contains(commit) {
        return true;
    }
    guards.running_jobs.iter().any(|job| {
        job.payload.contains(commit)
            || (candidate.updated_at <= job.started_at
                && !repository.iter().any(|newer| {
                    newer.updated_at > candidate.updated_at && newer.updated_at <= job.started_at
                }))
    })
}

/// One pass over `store`: lists its snapshots, reads the guards from `pool`, and deletes (or,
/// dry, counts) what the rule lets go. Deleting is idempotent: a snapshot already gone counts
/// nothing.
pub async fn prune_graph_store(
    pool: &relay_store::PgPool,
    store: &dyn GraphStore,
    keep_per_repository: u32,
    mode: PruneMode,
) -> Result<GraphPruneReport, GraphPruneError> {
    let snapshots = store.snapshots().await.map_err(GraphPruneError::Store)?;
    let guards = relay_store::retention::snapshot_guards(pool)
        .await
        .map_err(GraphPruneError::Guards)?;
    let (prunable, kept_in_use) = prunable(&snapshots, keep_per_repository, &guards);
    let mut report = GraphPruneReport {
        pruned: 0,
        kept_in_use,
    };
    for snapshot in prunable {
        let gone = match mode {
            PruneMode::DryRun => true,
            PruneMode::Delete => store
                .delete_snapshot(&snapshot)
                .await
                .map_err(GraphPruneError::Store)?,
        };
        report.pruned += u64::from(gone);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Duration, Utc};
    use relay_store::retention::RunningJob;

    use super::*;

    fn at(minutes: i64) -> DateTime<Utc> {
        DateTime::UNIX_EPOCH + Duration::minutes(minutes)
    }

    fn info(repo: &str, commit: &str, minutes: i64) -> SnapshotInfo {
        SnapshotInfo {
            snapshot: Snapshot::new(repo, commit),
            updated_at: at(minutes),
        }
    }

    fn commits(snapshots: &[Snapshot]) -> Vec<String> {
        let mut commits: Vec<String> = snapshots
            .iter()
            .map(|s| format!("{}@{}", s.repo, s.commit))
            .collect();
        commits.sort();
        commits
    }

    #[test]
    fn keeps_the_newest_per_repository_and_what_findings_and_running_jobs_use() {
        let snapshots = [
            info("a", "a1", 1),
            info("a", "a2", 2),
            info("a", "a3", 3),
            info("a", "a4", 4),
            info("a", "a5", 5),
            info("b", "b1", 1),
        ];
        let none = SnapshotGuards::default();
        let (gone, in_use) = prunable(&snapshots, 2, &none);
        assert_eq!(commits(&gone), ["a@a1", "a@a2", "a@a3"]);
        assert_eq!(in_use, 0);

        let guards = SnapshotGuards {
            live_commits: ["a1".to_owned()].into(),
            running_jobs: vec![
                // Names a2 in its payload.
                RunningJob {
                    started_at: at(10),
                    payload: r#"{"commit":"a2"}"#.into(),
                },
                // Started when a3 was the newest of `a`.
                RunningJob {
                    started_at: at(3),
                    payload: "{}".into(),
                },
            ],
        };
        let (gone, in_use) = prunable(&snapshots, 2, &guards);
        assert!(gone.is_empty(), "{gone:?}");
        assert_eq!(in_use, 3);
    }
}
