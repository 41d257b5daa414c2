//! The real implementations of the planner's seams: the [`ExploreAgent`] answers `explore`, and
//! `relay_actions::validate` judges `submit_actions` against a [`ValidationContext`].

use relay_actions::ValidationContext;
use relay_core::ActionBatch;

use super::seams::{
    BatchValidator, ExploreFailure, ExploreOutcome, ExploreRequest, Explorer, Thoroughness, Verdict,
};
use crate::explore::{self, ExploreAgent};

impl From<Thoroughness> for explore::Thoroughness {
    fn from(value: Thoroughness) -> Self {
        match value {
            Thoroughness::Quick => explore::Thoroughness::Quick,
            Thoroughness::Medium => explore::Thoroughness::Medium,
            Thoroughness::Thorough => explore::Thoroughness::Thorough,
        }
    }
}

#[async_trait::async_trait]
impl Explorer for ExploreAgent {
    async fn explore(&self, request: ExploreRequest) -> Result<ExploreOutcome, ExploreFailure> {
        let request = explore::ExploreRequest::new(request.query, request.thoroughness.into());
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
}

/// The write-back Validator over one issue's state and the explored snapshot.
#[derive(Debug, Clone)]
pub struct ActionsValidator {
    pub context: ValidationContext,
}

#[async_trait::async_trait]
impl BatchValidator for ActionsValidator {
    async fn validate(&self, batch: &ActionBatch) -> Verdict {
        match relay_actions::validate(&self.context, batch) {
            Ok(_) => Verdict::Accepted,
            Err(report) => Verdict::Rejected {
                failures: report.to_string(),
            },
        }
    }
}
