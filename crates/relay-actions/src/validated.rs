//! What the validator hands the executor: a batch resolved against the issue. Only
//! [`crate::validate()`] constructs one.

use crate::action::{BatchScope, ValidatedAction};
use relay_core::IssueId;

/// A batch that passed every rule, resolved against the issue: only [`validate()`](crate::validate()) builds one, so
/// the executor cannot be handed an unchecked batch.
#[derive(Debug, Clone)]
pub struct ValidatedBatch {
    /// The issue, and how the batch's rows are marked.
    pub(crate) scope: BatchScope,
    pub(crate) actions: Vec<ValidatedAction>,
}

impl ValidatedBatch {
    pub fn issue_id(&self) -> IssueId {
        self.scope.issue_id
    }

    pub fn actions(&self) -> &[ValidatedAction] {
        &self.actions
    }
}
