//! The planner's two seams: running explore agents, and validating a batch. The real
//! implementations live elsewhere (the ExploreAgent in this crate's `explore` module, the
//! Validator in `relay-actions`); tests and `relay plan` may plug in others.

use relay_core::{ActionBatch, Citation};

pub use crate::explore::{ExploreRequest, Thoroughness};

/// What an explore agent reported (only verified citations).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExploreOutcome {
    pub answer: String,
    pub evidence: Vec<Citation>,
    /// `high`, `medium` or `low`.
    pub confidence: String,
    pub unanswered: Vec<String>,
    /// Citations the agent gave that did not verify and were dropped.
    pub dropped_citations: usize,
    /// Tokens the exploration spent (charged to the planning cycle).
    pub tokens: u64,
}

impl ExploreOutcome {
    /// The outcome as the tool result the planner reads.
    pub fn render(&self) -> String {
        let mut out = format!("answer ({} confidence): {}\n", self.confidence, self.answer);
        if self.evidence.is_empty() {
            out.push_str("evidence: none\n");
        } else {
            out.push_str("evidence (verified):\n");
            for citation in &self.evidence {
                match &citation.quote {
                    Some(quote) => out.push_str(&format!("- {citation} `{quote}`\n")),
                    None => out.push_str(&format!("- {citation}\n")),
                }
            }
        }
        if !self.unanswered.is_empty() {
            out.push_str(&format!("unanswered: {}\n", self.unanswered.join("; ")));
        }
        if self.dropped_citations > 0 {
            out.push_str(&format!(
                "{} unverifiable citations were dropped\n",
                self.dropped_citations
            ));
        }
        out
    }
}

/// An exploration that could not run or finish.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("explore failed: {message}")]
pub struct ExploreFailure {
    pub message: String,
    /// Tokens spent before it failed.
    pub tokens: u64,
}

/// Runs explore agents against the job's snapshot.
#[async_trait::async_trait]
pub trait Explorer: Send + Sync {
    async fn explore(&self, request: ExploreRequest) -> Result<ExploreOutcome, ExploreFailure>;

    /// The thoroughness of an `explore` call that names none (the repository's `.relay.toml`
    /// `thoroughness`, else medium).
    fn default_thoroughness(&self) -> Thoroughness {
        Thoroughness::Medium
    }
}

/// The validator's verdict on one batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Accepted,
    /// Terse, model-readable failures, one per line
    /// (`FAILED: update_gaps.close[0] | gap 9 is not a gap of this issue | permanent`).
    Rejected {
        failures: String,
    },
}

/// Validates a batch against the state and the explored snapshot.
#[async_trait::async_trait]
pub trait BatchValidator: Send + Sync {
    async fn validate(&self, batch: &ActionBatch) -> Verdict;
}
