//! The per-job token budget. One [`TokenBudget`] is shared (behind an `Arc`) by every LLM call a
//! job makes; each call charges it, and once the hard limit is reached further calls fail with
//! [`BudgetExceeded`] before anything is sent.

use std::sync::atomic::{AtomicU64, Ordering};

use super::types::Usage;

/// A token allowance for one job.
#[derive(Debug)]
pub struct TokenBudget {
    hard_limit: u64,
    soft_limit: Option<u64>,
    used: AtomicU64,
}

/// The budget is spent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("token budget exhausted: {used} of {limit} tokens used")]
pub struct BudgetExceeded {
    /// Tokens charged so far.
    pub used: u64,
    /// The hard limit.
    pub limit: u64,
}

/// Where a budget stands after a charge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetState {
    /// Below the soft limit (or no soft limit).
    Ok,
    /// Past the soft limit: callers should wrap up (e.g. stop exploring and write the result).
    Low,
    /// At or past the hard limit: the next call will be refused.
    Exhausted,
}

impl TokenBudget {
    /// A budget of `hard_limit` prompt + completion tokens.
    pub fn new(hard_limit: u64) -> Self {
        Self {
            hard_limit,
            soft_limit: None,
            used: AtomicU64::new(0),
        }
    }

    /// Adds a soft limit at which [`BudgetState::Low`] is reported.
    #[must_use]
    pub fn with_soft_limit(mut self, soft_limit: u64) -> Self {
        self.soft_limit = Some(soft_limit);
        self
    }

    /// Tokens charged so far.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// Tokens left before the hard limit.
    pub fn remaining(&self) -> u64 {
        self.hard_limit.saturating_sub(self.used())
    }

    /// The hard limit.
    pub fn hard_limit(&self) -> u64 {
        self.hard_limit
    }

    /// Fails when the hard limit has been reached; called before each request.
    pub fn check(&self) -> Result<(), BudgetExceeded> {
        let used = self.used();
        if used >= self.hard_limit {
            Err(BudgetExceeded {
                used,
                limit: self.hard_limit,
            })
        } else {
            Ok(())
        }
    }

    /// Charges a response's usage. Tokens already spent are always charged, even past the limit:
    /// the budget reports what was really used, and the *next* call is refused.
    pub fn charge(&self, usage: &Usage) -> BudgetState {
        let total = usage.total();
        let before = self
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                Some(used.saturating_add(total))
            })
            .unwrap_or_else(|used| used);
        self.state_at(before.saturating_add(total))
    }

    /// Where the budget stands now.
    pub fn state(&self) -> BudgetState {
        self.state_at(self.used())
    }

    fn state_at(&self, used: u64) -> BudgetState {
        if used >= self.hard_limit {
            BudgetState::Exhausted
        } else if self.soft_limit.is_some_and(|soft| used >= soft) {
            BudgetState::Low
        } else {
            BudgetState::Ok
        }
    }
}
