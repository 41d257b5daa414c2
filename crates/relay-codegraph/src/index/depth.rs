//! The one bound on recursion over syntax and values.
//!
//! Every recursive walker of the indexer (tree walks that build the expression IR, the Go and
//! Python evaluators, the value-flow keys and digests, type and MRO walks) enters a [`Depth`]
//! guard per level. Past [`MAX_DEPTH`] nested levels on one thread, `enter` refuses and the
//! walker treats what lies below as unresolved (an unknown expression, an unknown type, no
//! value), so a 250,000-deep parenthesis or a 300,000-term sum costs a bounded stack and leaves
//! the rest of the file indexed. The counter is per thread because the walkers run on several
//! parser and resolver threads and call each other (the evaluator reads the IR the builder made);
//! one counter bounds every mix of them.

use std::cell::Cell;

/// Nested recursive calls allowed per thread. Real code nests a few dozen levels; Python itself
/// refuses to compile past ~200 nested parentheses. At a few kilobytes per frame in a debug
/// build this stays far below [`super::INDEX_STACK_BYTES`].
pub(crate) const MAX_DEPTH: u32 = 1_000;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Set when a walker on this thread hit the limit (read and cleared per file).
    static HIT: Cell<bool> = const { Cell::new(false) };
}

/// One level of recursion, released when dropped.
#[must_use = "the level is released when the guard is dropped"]
pub(crate) struct Depth(());

impl Depth {
    /// Enters one more level, or `None` past [`MAX_DEPTH`] (the caller stops descending).
    pub(crate) fn enter() -> Option<Depth> {
        DEPTH.with(|depth| {
            let current = depth.get();
            if current >= MAX_DEPTH {
                HIT.with(|hit| hit.set(true));
                None
            } else {
                depth.set(current + 1);
                Some(Depth(()))
            }
        })
    }
}

impl Drop for Depth {
    fn drop(&mut self) {
        DEPTH.with(|depth| depth.set(depth.get().saturating_sub(1)));
    }
}

/// Whether a walker on this thread hit the limit since the last call (and clears the mark).
pub(crate) fn take_hit() -> bool {
    HIT.with(|hit| hit.replace(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nest(level: u32) -> u32 {
        match Depth::enter() {
            Some(_level) => nest(level + 1),
            None => level,
        }
    }

    #[test]
    fn the_limit_stops_descent_and_is_released() {
        let _ = take_hit();
        assert_eq!(nest(0), MAX_DEPTH);
        assert!(take_hit());
        assert!(!take_hit());
        // Every level was released: the next walk gets the whole allowance again.
        assert_eq!(nest(0), MAX_DEPTH);
    }
}
