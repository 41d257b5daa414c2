//! What a job read and sent, counted per job run for the tests that hold the pipeline to its
//! shape: one read of what is pending at the start and one per cycle ([`super::pending`]), one
//! drain at the start and one per cycle ([`super::job::Job::drain`]).
//!
//! A count lives in a task-local scope opened by [`counted`]; outside one (in production)
//! nothing is counted. The tests below check that those two functions are the only places in
//! the orchestrator that read pending events or drain the outbox, so nothing escapes the count.

use std::cell::Cell;
use std::future::Future;

/// What one job run read and sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Reads of the pending events.
    pub pending_reads: u32,
    /// Drains of the outbox.
    pub drains: u32,
}

tokio::task_local! {
    static COUNTS: Cell<Counts>;
}

/// Runs `future` (a job run) and counts what it read and sent.
pub async fn counted<F: Future>(future: F) -> (F::Output, Counts) {
    COUNTS
        .scope(Cell::new(Counts::default()), async {
            let output = future.await;
            (output, COUNTS.with(Cell::get))
        })
        .await
}

/// One read of the pending events.
pub(super) fn pending_read() {
    bump(|counts| counts.pending_reads += 1);
}

/// One drain of the outbox.
pub(super) fn drained() {
    bump(|counts| counts.drains += 1);
}

fn bump(count: impl FnOnce(&mut Counts)) {
    // Outside a `counted` scope there is nothing to count.
    let _ = COUNTS.try_with(|cell| {
        let mut counts = cell.get();
        count(&mut counts);
        cell.set(counts);
    });
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    /// Every `.rs` file of the orchestrator, relative to its folder, with its text.
    fn sources() -> Vec<(String, String)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/jobs/orchestrator");
        let mut out = Vec::new();
        let mut stack: Vec<PathBuf> = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let rel = path
                        .strip_prefix(&root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    out.push((rel, std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    /// The files (and how often) a call appears in, outside `#[cfg(test)]` modules.
    fn callers(call: &str) -> Vec<(String, usize)> {
        sources()
            .into_iter()
            .filter_map(|(file, text)| {
                let production = text.split("#[cfg(test)]").next().unwrap_or_default();
                let n = production.matches(call).count();
                (n > 0).then_some((file, n))
            })
            .collect()
    }

    #[test]
    fn pending_events_are_read_in_one_place_and_the_outbox_drained_in_one() {
        assert_eq!(
            callers("pending_events("),
            [("pending.rs".to_owned(), 1)],
            "read pending events through `Pending::load`, which counts the read"
        );
        assert_eq!(
            callers("drain_outbox("),
            [("job.rs".to_owned(), 1)],
            "drain through `Job::drain`, which counts the drain"
        );
        // Notices and command answers are queued; only the start, each cycle and the job's end
        // send them.
        assert_eq!(
            callers(".drain("),
            [
                ("after_job.rs".to_owned(), 1),
                ("cycle/after.rs".to_owned(), 1),
                ("start.rs".to_owned(), 1)
            ]
        );
    }

    #[tokio::test]
    async fn a_scope_counts_only_its_own_run() {
        pending_read();
        let ((), counts) = counted(async {
            pending_read();
            drained();
            drained();
        })
        .await;
        assert_eq!(
            counts,
            Counts {
                pending_reads: 1,
                drains: 2
            }
        );
    }
}
