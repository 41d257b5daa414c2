//! Backoff policy: exponential with jitter, overridden by the delay the provider asks for.

use std::time::Duration;

use rand::Rng;

use super::error::LlmError;

/// How a model is retried before the client moves on to the next fallback model.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// Delay before the first retry when the provider gives none.
    pub initial_backoff: Duration,
    /// Upper bound of the exponential backoff.
    pub max_backoff: Duration,
    /// Randomize delays (down to 75 %) so parallel callers do not retry in lockstep.
    pub jitter: bool,
    /// Overall deadline of one call across all attempts and fallback models.
    pub deadline: Duration,
}

impl Default for RetryPolicy {
    /// The official SDKs' defaults (0.5 s doubling to 8 s) with three retries.
    fn default() -> Self {
        Self {
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            jitter: true,
            deadline: Duration::from_secs(600),
        }
    }
}

impl RetryPolicy {
    /// The delay before retry number `retry` (1-based) after `error`.
    ///
    /// A `retry-after` (or rate-limit reset) from the provider wins over the computed backoff: it
    /// is the provider telling us when capacity returns. The caller still checks the deadline.
    pub fn delay(&self, retry: u32, error: &LlmError) -> Duration {
        if let Some(requested) = error.retry_after() {
            return requested;
        }
        let exponent = retry.saturating_sub(1).min(16);
        let backoff = self
            .initial_backoff
            .saturating_mul(1 << exponent)
            .min(self.max_backoff);
        if self.jitter {
            backoff.mul_f64(rand::rng().random_range(0.75..=1.0))
        } else {
            backoff
        }
    }
}
