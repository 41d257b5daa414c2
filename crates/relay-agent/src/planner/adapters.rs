//! The ExploreAgent as the planner's [`Explorer`] seam. (The `BatchValidator` over the write-back
//! Validator lives in `relay_worker::jobs::orchestrator::validator`, so the agent depends on neither
//! the store nor the tracker.)

use super::seams::{ExploreFailure, ExploreOutcome, ExploreRequest, Explorer};
use crate::explore::{ExploreAgent, ExploreReport};

/// What the planner reads of an explore's report.
pub fn explore_outcome(report: &ExploreReport) -> ExploreOutcome {
    ExploreOutcome {
        answer: report.answer.clone(),
        evidence: report.evidence.clone(),
        confidence: report.confidence.as_str().to_owned(),
        unanswered: report.unanswered.clone(),
        dropped_citations: report.dropped_citations,
        tokens: report.tokens_in + report.tokens_out,
    }
}

/// An explore that could not run, as the planner reads it.
pub fn explore_failure(error: &crate::Error) -> ExploreFailure {
    ExploreFailure {
        message: error.to_string(),
        tokens: 0,
    }
}

#[async_trait::async_trait]
impl Explorer for ExploreAgent {
    async fn explore(&self, request: ExploreRequest) -> Result<ExploreOutcome, ExploreFailure> {
        match ExploreAgent::explore(self, request).await {
            Ok(report) => Ok(explore_outcome(&report)),
            Err(error) => Err(explore_failure(&error)),
        }
    }

    fn default_thoroughness(&self) -> super::seams::Thoroughness {
        ExploreAgent::default_thoroughness(self)
    }
}
