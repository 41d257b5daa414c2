//! Retry policy of the outbox drain: which tracker errors are worth another attempt, and whether
//! to wait inline (short backoff) or hand the delay back to the job queue (never sleep long with
//! a lease held).

use std::time::Duration;

use rand::Rng;
use relay_tracker::TrackerError;

/// Backoff before the 2nd and 3rd attempts, and the delay handed back after the 3rd fails.
pub const DEFAULT_BACKOFF: [Duration; 3] = [
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
];
/// Longest wait the drain sleeps through itself; longer ones (a 60 s secondary limit) are
/// rescheduled through the job queue.
pub const DEFAULT_MAX_INLINE_WAIT: Duration = Duration::from_secs(4);
/// Jitter adds up to this fraction of the backoff, so writers that failed together do not retry
/// together.
const JITTER_FRACTION: f64 = 0.25;

/// Whether backoffs are jittered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Jitter {
    On,
    Off,
}

/// How the drain retries one write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// `backoff[k]` is the wait after failure `k + 1`; its length is the number of attempts
    /// made inline. The last entry is also the reschedule delay after the last attempt.
    pub backoff: Vec<Duration>,
    pub max_inline_wait: Duration,
    pub jitter: Jitter,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            backoff: DEFAULT_BACKOFF.to_vec(),
            max_inline_wait: DEFAULT_MAX_INLINE_WAIT,
            jitter: Jitter::On,
        }
    }
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Sleep this long, then attempt again.
    Inline(Duration),
    /// Stop; the job is retried by the queue after this delay.
    Reschedule(Duration),
    /// Do not retry: the error is permanent.
    GiveUp,
}

impl RetryPolicy {
    /// No waits at all (tests): the same attempts and classification, zero backoff. Waits the
    /// tracker asks for beyond `max_inline_wait` are still rescheduled, not slept.
    pub fn immediate() -> RetryPolicy {
        RetryPolicy {
            backoff: vec![Duration::ZERO; DEFAULT_BACKOFF.len()],
            max_inline_wait: DEFAULT_MAX_INLINE_WAIT,
            jitter: Jitter::Off,
        }
    }

    /// Attempts made inline before rescheduling.
    pub fn attempts(&self) -> usize {
        self.backoff.len().max(1)
    }

    /// The decision after `failures` failed attempts (1-based) ending in `error`.
    pub fn after_failure(&self, failures: usize, error: &TrackerError) -> Wait {
        if !error.is_retryable() {
            return Wait::GiveUp;
        }
        let asked = error.retry_after().unwrap_or(Duration::ZERO);
        if asked > self.max_inline_wait {
            return Wait::Reschedule(asked);
        }
        let last = self.backoff.last().copied().unwrap_or(Duration::ZERO);
        if failures >= self.attempts() {
            return Wait::Reschedule(last.max(asked).max(Duration::from_secs(1)));
        }
        let base = self.backoff.get(failures - 1).copied().unwrap_or(last);
        let jittered = match self.jitter {
            Jitter::Off => base,
            Jitter::On => base.mul_f64(1.0 + rand::rng().random_range(0.0..JITTER_FRACTION)),
        };
        Wait::Inline(jittered.max(asked))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            jitter: Jitter::Off,
            ..RetryPolicy::default()
        }
    }

    #[test]
    fn transient_errors_back_off_then_reschedule() {
        let p = policy();
        let e = TrackerError::Transient("503 service unavailable".into());
        assert_eq!(p.after_failure(1, &e), Wait::Inline(Duration::from_secs(1)));
        assert_eq!(p.after_failure(2, &e), Wait::Inline(Duration::from_secs(2)));
        assert_eq!(
            p.after_failure(3, &e),
            Wait::Reschedule(Duration::from_secs(4))
        );
    }

    #[test]
    fn rate_limits_honour_their_delay() {
        let p = policy();
        let short = TrackerError::RateLimited {
            retry_after: Duration::from_secs(3),
        };
        assert_eq!(
            p.after_failure(1, &short),
            Wait::Inline(Duration::from_secs(3))
        );
        let secondary = TrackerError::RateLimited {
            retry_after: Duration::from_secs(60),
        };
        assert_eq!(
            p.after_failure(1, &secondary),
            Wait::Reschedule(Duration::from_secs(60))
        );
        assert_eq!(
            RetryPolicy::immediate().after_failure(1, &secondary),
            Wait::Reschedule(Duration::from_secs(60))
        );
    }

    #[test]
    fn other_client_errors_are_permanent() {
        let p = policy();
        for e in [
            TrackerError::Validation("body is too long".into()),
            TrackerError::Forbidden("resource not accessible".into()),
            TrackerError::NotFound("issue".into()),
            TrackerError::Unauthorized("bad credentials".into()),
        ] {
            assert_eq!(p.after_failure(1, &e), Wait::GiveUp, "{e}");
        }
    }

    #[test]
    fn jitter_only_lengthens_within_bounds() {
        let p = RetryPolicy::default();
        let e = TrackerError::Transient("timeout".into());
        for _ in 0..100 {
            let Wait::Inline(d) = p.after_failure(2, &e) else {
                panic!("expected an inline wait")
            };
            assert!(
                d >= Duration::from_secs(2) && d <= Duration::from_millis(2500),
                "{d:?}"
            );
        }
    }
}
