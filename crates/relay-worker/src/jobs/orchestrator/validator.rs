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

#[cfg(test)]
mod tests {
    use relay_actions::Authority;
    use relay_core::Action;
    use relay_core::action::PostComment;

    use super::*;

    fn comment(content: &str) -> ActionBatch {
        ActionBatch {
            actions: vec![Action::PostComment(PostComment {
                content: content.into(),
                reply_to: None,
            })],
        }
    }

    #[tokio::test]
    async fn the_accepted_batch_is_handed_over_once_and_only_for_that_batch() {
        let validator = ActionsValidator::new(ValidationContext {
            issue_id: relay_core::IssueId(1),
            tracker: "github".into(),
            project_id: "1".into(),
            gaps: Vec::new(),
            findings: Vec::new(),
            stale_findings: Vec::new(),
            thread: Vec::new(),
            snapshot: None,
            spec: None,
            authority: Authority::Unrestricted,
            default_reply: None,
            private_context: false,
            visibility: relay_core::ProjectVisibility::Public,
            internal_context: false,
            provenance: Default::default(),
            existing: Default::default(),
        });
        let batch = comment("Which version do you run?");
        assert_eq!(validator.validate(&batch).await, Verdict::Accepted);
        assert!(
            validator
                .take_accepted(&comment("something else"))
                .is_none()
        );
        assert_eq!(validator.validate(&batch).await, Verdict::Accepted);
        assert!(validator.take_accepted(&batch).is_some());
        assert!(
            validator.take_accepted(&batch).is_none(),
            "handed over once"
        );
    }
}
