//! The write-back Validator (`relay_actions::validate`) as the planner's `submit_actions` judge.

use relay_actions::ValidationContext;
use relay_agent::planner::seams::{BatchValidator, Verdict};
use relay_core::ActionBatch;

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
