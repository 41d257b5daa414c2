//! Why a job attempt failed, classified for the operator: the root cause ([`Cause`]) is the
//! deepest classified error of the attempt's error chain — the LLM's [`LlmError`] kind or the
//! tracker's [`TrackerError`] kind — stored with the job (`jobs.last_cause`, migration 0089) and
//! shown by `relay jobs list`, `/ui/ops` and the read API next to the last error, which says the
//! rest; the run trace (`relay trace JOB`) has every step.
//!
//! A stage that cannot keep the error itself as the source (a planner stop's reason, a failure
//! before the first cycle, both summarised as text) carries its cause in [`Classified`] or
//! [`crate::jobs::orchestrator::pre_cycle::PreCycleFailure`].

use relay_agent::llm::LlmError;
use relay_tracker::TrackerError;

use crate::jobs::orchestrator::pre_cycle::PreCycleFailure;

/// The classified root cause of a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The language model's call failed (`server_error`, `rate_limited`, `authentication`, …).
    Llm(&'static str),
    /// The tracker answered with an error (`forbidden`, `not_found`, `transient`, …).
    Tracker(&'static str),
}

impl Cause {
    /// As stored and shown: `llm server_error`, `tracker forbidden`.
    pub fn label(self) -> String {
        match self {
            Cause::Llm(kind) => format!("llm {kind}"),
            Cause::Tracker(kind) => format!("tracker {kind}"),
        }
    }

    /// The cause an LLM error is.
    pub fn llm(error: &LlmError) -> Cause {
        Cause::Llm(error.kind().as_str())
    }

    /// The deepest classified error in `error`'s chain.
    pub fn of(error: &anyhow::Error) -> Option<Cause> {
        error.chain().filter_map(direct).last()
    }

    /// The deepest classified error in the chain from `error` through its sources.
    pub fn of_source(error: &(dyn std::error::Error + 'static)) -> Option<Cause> {
        std::iter::successors(Some(error), |e| e.source())
            .filter_map(direct)
            .last()
    }
}

/// The cause `error` names by itself (not through its sources).
fn direct(error: &(dyn std::error::Error + 'static)) -> Option<Cause> {
    if let Some(llm) = error.downcast_ref::<LlmError>() {
        return Some(Cause::llm(llm));
    }
    if let Some(tracker) = error.downcast_ref::<TrackerError>() {
        return Some(Cause::Tracker(tracker.kind()));
    }
    if let Some(classified) = error.downcast_ref::<Classified>() {
        return Some(classified.cause);
    }
    error.downcast_ref::<PreCycleFailure>()?.cause
}

/// An error summarised as text that keeps its classified cause (the source itself could not be
/// kept: a planner's stop reason is not `Clone`).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Classified {
    pub cause: Cause,
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deepest_classified_error_is_the_cause() {
        let llm = LlmError::Server {
            status: 500,
            message: "boom".into(),
        };
        let error = anyhow::Error::new(llm).context("planning cycle 0 stopped without a decision");
        assert_eq!(Cause::of(&error), Some(Cause::Llm("server_error")));
        assert_eq!(Cause::of(&error).unwrap().label(), "llm server_error");

        let tracker = anyhow::Error::new(TrackerError::Forbidden("no scope".into()))
            .context("role lookup for @a failed");
        assert_eq!(Cause::of(&tracker), Some(Cause::Tracker("forbidden")));

        let classified = anyhow::Error::new(Classified {
            cause: Cause::Llm("timeout"),
            message: "the llm call failed".into(),
        })
        .context("planning cycle 1 stopped without a decision");
        assert_eq!(Cause::of(&classified), Some(Cause::Llm("timeout")));

        assert_eq!(Cause::of(&anyhow::anyhow!("no handler")), None);
        assert_eq!(
            Cause::of_source(&TrackerError::Transient("502".into())),
            Some(Cause::Tracker("transient"))
        );
    }
}
