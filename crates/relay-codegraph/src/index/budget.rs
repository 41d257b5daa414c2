//! The memory budget of the parses in flight: a parse (syntax tree plus the facts being
//! extracted) costs about [`PARSE_BYTES_PER_SOURCE_BYTE`] times its file's size, so a few large
//! generated files parsed on every core at once could take the worker down. Each parse reserves
//! its estimated cost before it starts and waits while the parses already running would exceed
//! [`super::IndexOptions::parse_memory_bytes`]; one parse always runs, so a file larger than the
//! whole budget is parsed alone rather than never (the per-file cap,
//! [`super::IndexOptions::max_file_bytes`], bounds that one).

use std::sync::{Condvar, Mutex, MutexGuard};

/// Estimated peak memory of parsing one source byte (tree-sitter's tree and the extraction's
/// working set), measured on generated Go and Python files of 1–4 MiB (see the README's indexer
/// section).
pub(crate) const PARSE_BYTES_PER_SOURCE_BYTE: u64 = 64;

/// Estimated memory that parsing a file of `len` bytes reserves.
pub(crate) fn parse_cost(len: u64) -> u64 {
    len.saturating_mul(PARSE_BYTES_PER_SOURCE_BYTE)
}

/// A budget of bytes shared by the parses of one index or update.
#[derive(Debug)]
pub(crate) struct ParseBudget {
    limit: u64,
    state: Mutex<State>,
    freed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// Bytes reserved by the parses running now.
    in_use: u64,
    /// Parses running now.
    running: usize,
    /// The most parses that ran at once.
    peak_running: usize,
    /// The most bytes reserved at once.
    peak_in_use: u64,
}

/// A reservation, given back when dropped.
#[derive(Debug)]
pub(crate) struct Permit<'a> {
    budget: &'a ParseBudget,
    cost: u64,
}

impl ParseBudget {
    /// A budget of `limit` bytes (`0`: no limit).
    pub(crate) fn new(limit: u64) -> ParseBudget {
        ParseBudget {
            limit: if limit == 0 { u64::MAX } else { limit },
            state: Mutex::new(State::default()),
            freed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Reserves `cost` bytes, waiting while other parses hold the budget (never when none runs).
    pub(crate) fn acquire(&self, cost: u64) -> Permit<'_> {
        let mut state = self.lock();
        while state.running > 0 && state.in_use.saturating_add(cost) > self.limit {
            state = self
                .freed
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        state.in_use = state.in_use.saturating_add(cost);
        state.running += 1;
        state.peak_running = state.peak_running.max(state.running);
        state.peak_in_use = state.peak_in_use.max(state.in_use);
        Permit { budget: self, cost }
    }

    /// The most parses that ran at once so far.
    #[cfg(test)]
    pub(crate) fn peak_running(&self) -> usize {
        self.lock().peak_running
    }

    /// The most bytes reserved at once so far.
    #[cfg(test)]
    pub(crate) fn peak_in_use(&self) -> u64 {
        self.lock().peak_in_use
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut state = self.budget.lock();
        state.in_use = state.in_use.saturating_sub(self.cost);
        state.running = state.running.saturating_sub(1);
        drop(state);
        self.budget.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn parses_over_the_budget_wait_for_each_other() {
        let budget = ParseBudget::new(100);
        let running = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..16 {
                s.spawn(|| {
                    for _ in 0..20 {
                        let _permit = budget.acquire(60);
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::yield_now();
                        running.fetch_sub(1, Ordering::SeqCst);
                    }
                });
            }
        });
        assert_eq!(most.load(Ordering::SeqCst), 1);
        assert_eq!(budget.peak_running(), 1);
        assert_eq!(budget.peak_in_use(), 60);
    }

    #[test]
    fn a_parse_larger_than_the_budget_runs_alone() {
        let budget = ParseBudget::new(10);
        let permit = budget.acquire(1_000);
        drop(permit);
        let small = budget.acquire(4);
        let other = budget.acquire(4);
        assert_eq!(budget.peak_running(), 2);
        drop((small, other));
        let unlimited = ParseBudget::new(0);
        let held: Vec<_> = (0..8).map(|_| unlimited.acquire(u64::MAX / 4)).collect();
        assert_eq!(unlimited.peak_running(), 8);
        drop(held);
    }
}
