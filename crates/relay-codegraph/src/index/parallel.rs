//! A small scoped-thread parallel map (no extra dependency).

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Maps `f` over `items` on `threads` threads, preserving order; `tick` is called after each item
/// with the number of items done so far.
pub(crate) fn par_map<T, R, F, P>(items: &[T], threads: usize, f: F, tick: P) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
    P: Fn(usize) + Sync,
{
    let threads = threads.clamp(1, items.len().max(1));
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::with_capacity(items.len()));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let worker = || {
                let mut local = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= items.len() {
                        break;
                    }
                    local.push((i, f(&items[i])));
                    tick(done.fetch_add(1, Ordering::Relaxed) + 1);
                }
                results
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .extend(local);
            };
            // Deeply nested source (long operator chains, big literals) recurses deeply.
            let spawned = std::thread::Builder::new()
                .stack_size(super::INDEX_STACK_BYTES)
                .spawn_scoped(scope, worker);
            if let Err(e) = spawned {
                tracing::warn!(error.message = %e, "failed to spawn an indexer thread");
            }
        }
    });
    let mut results = results
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // Items no worker took (a thread could not be spawned) run here.
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= items.len() {
            break;
        }
        results.push((i, f(&items[i])));
        tick(done.fetch_add(1, Ordering::Relaxed) + 1);
    }
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}
