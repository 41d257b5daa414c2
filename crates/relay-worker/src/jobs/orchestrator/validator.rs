//! The write-back Validator (`relay_actions::validate`) as the planner's `submit_actions` judge.
//!
//! It keeps the typed batch of the last submission it accepted, so the executor applies what
//! was validated and the batch is validated once.

use std::sync::Mutex;

use relay_actions::{ValidatedBatch, ValidationContext};
use relay_agent::planner::seams::{BatchValidator, Verdict};
use relay_core::ActionBatch;

/// The write-back Validator over one issue's state and the explored snapshot.
#[derive(Debug)]
pub struct ActionsValidator {
    pub context: ValidationContext,
    /// The last accepted submission and its typed form.
    accepted: Mutex<Option<(ActionBatch, ValidatedBatch)>>,
}

impl ActionsValidator {
    pub fn new(context: ValidationContext) -> ActionsValidator {
        ActionsValidator {
            context,
            accepted: Mutex::new(None),
        }
    }

    /// The typed form of `batch`, when it is the submission this validator accepted last.
    pub fn take_accepted(&self, batch: &ActionBatch) -> Option<ValidatedBatch> {
        let mut accepted = self
            .accepted
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match accepted.take() {
            Some((submitted, validated)) if &submitted == batch => Some(validated),
            _ => None,
        }
    }
}

#[async_trait::async_trait]
impl BatchValidator for ActionsValidator {
    async fn validate(&self, batch: &ActionBatch) -> Verdict {
        match relay_actions::validate(&self.context, batch) {
            Ok(validated) => {
                *self
                    .accepted
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()) =
                    Some((batch.clone(), validated));
                Verdict::Accepted
            }
            Err(report) => Verdict::Rejected {
                failures: report.to_string(),
            },
        }
    }
}
