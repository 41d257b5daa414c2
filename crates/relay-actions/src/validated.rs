//! What the validator hands the executor: a batch resolved against the issue. Only
//! [`crate::validate()`] constructs one.

use relay_core::Citation;
use relay_core::action::{
    CloseReason, GapNumber, NewGap, ProposedLearning, ReadyForSpecGeneration, SpecVerdict,
};
use relay_core::{IssueId, SpecId};
use relay_tracker::CommentTarget;

/// A batch that passed every rule, resolved against the issue: only [`validate()`](crate::validate()) builds one, so
/// the executor cannot be handed an unchecked batch.
#[derive(Debug, Clone)]
pub struct ValidatedBatch {
    pub(crate) issue_id: IssueId,
    pub(crate) tracker: String,
    pub(crate) project_id: String,
    pub(crate) commit_sha: Option<String>,
    pub(crate) actions: Vec<ValidatedAction>,
    /// Learnings of this batch stay with the issue ([`crate::ValidationContext::private_context`]).
    pub(crate) private_context: bool,
    /// Gaps and findings of this batch are marked internal
    /// ([`crate::ValidationContext::internal_context`]).
    pub(crate) internal_context: bool,
    pub(crate) provenance: crate::context::LearningProvenance,
}

impl ValidatedBatch {
    pub fn issue_id(&self) -> IssueId {
        self.issue_id
    }

    pub fn actions(&self) -> &[ValidatedAction] {
        &self.actions
    }
}

/// A gap to open, with the code places its evidence cites that stand in the run's checkout
/// (kept as the gap's sources and re-checked on every push; a place that does not stand there is
/// left in the text, untracked: evidence is prose, not a citation the planner must get right).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GapToOpen {
    pub gap: NewGap,
    pub evidence_sources: Vec<Citation>,
}

/// One action, resolved: gap numbers parsed, reply targets resolved to this issue's notes,
/// citations normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValidatedAction {
    PostComment {
        content: String,
        target: CommentTarget,
    },
    UpdateGaps {
        add: Vec<GapToOpen>,
        close: Vec<(GapNumber, CloseReason, String)>,
    },
    UpdateFindings {
        add: Vec<(String, Vec<Citation>)>,
        remove: Vec<i32>,
    },
    UpdateLearnings {
        propose: Vec<ProposedLearning>,
    },
    ReadyForSpecGeneration(ReadyForSpecGeneration),
    SetSpecStatus {
        spec_id: SpecId,
        status: SpecVerdict,
        note: Option<String>,
    },
}
