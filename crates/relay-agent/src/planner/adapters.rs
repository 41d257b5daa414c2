//! The ExploreAgent as the planner's [`Explorer`] seam. (The `BatchValidator` over the write-back
//! Validator lives in `relay_worker::jobs::orchestrator::validator`, so the agent depends on neither
//! the store nor the tracker.)

use super::seams::{ExploreFailure, ExploreOutcome, ExploreRequest, Explorer};
use crate::explore::ExploreAgent;

#[async_trait::async_trait]
impl Explorer for ExploreAgent {
    async fn explore(&self, request: ExploreRequest) -> Result<ExploreOutcome, ExploreFailure> {
        match ExploreAgent::explore(self, request).await {
            Ok(report) => Ok(ExploreOutcome {
                answer: report.answer,
                evidence: report.evidence,
                confidence: report.confidence.as_str().to_owned(),
                unanswered: report.unanswered,
                dropped_citations: report.dropped_citations,
                tokens: report.tokens_in + report.tokens_out,
            }),
            Err(error) => Err(ExploreFailure {
                message: error.to_string(),
                tokens: 0,
            }),
        }
    }

    fn default_thoroughness(&self) -> super::seams::Thoroughness {
        ExploreAgent::default_thoroughness(self)
    }
}
