//! Deadlines and cancellation of one tool call.
//!
//! Tools run on tokio's blocking pool, where dropping the awaiting future does not stop them.
//! Every call therefore carries a [`CallControl`]: a shared cancellation flag (set when the
//! explore or job that awaits the call is dropped or cancelled, see
//! [`crate::ToolRegistry::call_async`]) and a deadline (`[tools] call_timeout_secs`). Long loops
//! (the grep walk and its per-line sink, glob and tree walks, the fuzzy "did you mean" walk)
//! poll [`CallControl::stop`] and wind down.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Why a call must stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The caller went away (the explore or job was cancelled).
    Cancelled,
    /// The call ran past its deadline.
    DeadlineExceeded,
}

/// The cancellation flag and deadline of one call. Cheap to clone; clones share the flag.
#[derive(Debug, Clone, Default)]
pub struct CallControl {
    cancelled: Arc<AtomicBool>,
    deadline: Option<Instant>,
}

impl CallControl {
    /// A control that stops after `timeout` (or when cancelled).
    pub fn with_timeout(timeout: Duration) -> Self {
        Self {
            cancelled: Arc::default(),
            deadline: Instant::now().checked_add(timeout),
        }
    }

    /// Cancels the call (every clone sees it).
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// Whether the call must stop, and why.
    pub fn stop(&self) -> Option<Stop> {
        if self.cancelled.load(Ordering::Relaxed) {
            Some(Stop::Cancelled)
        } else if self
            .deadline
            .is_some_and(|deadline| Instant::now() >= deadline)
        {
            Some(Stop::DeadlineExceeded)
        } else {
            None
        }
    }

    /// A guard that cancels this call when dropped, unless [`CancelOnDrop::disarm`]ed: held by
    /// the future that awaits the call, so dropping that future stops the blocking work.
    pub fn cancel_on_drop(&self) -> CancelOnDrop {
        CancelOnDrop {
            control: Some(self.clone()),
        }
    }
}

/// Cancels a call when dropped (see [`CallControl::cancel_on_drop`]).
#[derive(Debug)]
pub struct CancelOnDrop {
    control: Option<CallControl>,
}

impl CancelOnDrop {
    /// The call finished: dropping the guard no longer cancels anything.
    pub fn disarm(mut self) {
        self.control = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(control) = &self.control {
            control.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropping_the_guard_cancels_every_clone() {
        let control = CallControl::with_timeout(Duration::from_secs(3600));
        let seen_by_tool = control.clone();
        assert_eq!(seen_by_tool.stop(), None);
        drop(control.cancel_on_drop());
        assert_eq!(seen_by_tool.stop(), Some(Stop::Cancelled));

        let finished = CallControl::default();
        finished.cancel_on_drop().disarm();
        assert_eq!(finished.stop(), None);
    }

    #[test]
    fn the_deadline_stops_the_call() {
        let control = CallControl::with_timeout(Duration::ZERO);
        assert_eq!(control.stop(), Some(Stop::DeadlineExceeded));
    }
}
