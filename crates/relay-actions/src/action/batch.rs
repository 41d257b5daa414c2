//! What applying an action reads and writes besides the action: the batch's issue-level facts
//! ([`BatchScope`]), the action's place ([`At`]) and what the batch changed ([`Applied`]).

use relay_core::action::{ReadyForSpecGeneration, SpecVerdict};

use crate::context::LearningProvenance;
use crate::keys::BatchId;
use relay_core::IssueId;
use relay_core::JobId;

/// The issue a validated batch is for, and how its rows are marked.
#[derive(Debug, Clone)]
pub(crate) struct BatchScope {
    pub issue_id: IssueId,
    pub tracker: String,
    pub project_id: String,
    /// Learnings of this batch stay with the issue ([`crate::ValidationContext::private_context`]).
    pub private_context: bool,
    /// Gaps and findings of this batch are marked internal
    /// ([`crate::ValidationContext::internal_context`]).
    pub internal_context: bool,
    pub provenance: LearningProvenance,
}

/// Where one action is applied: its batch's scope, which planner decision the batch is, and the
/// action's index in it (together they make its idempotency keys).
#[derive(Debug, Clone, Copy)]
pub(crate) struct At<'a> {
    pub scope: &'a BatchScope,
    pub batch: BatchId,
    pub index: usize,
}

impl At<'_> {
    /// `gaps.run` / `findings.run` / `learnings.run`: the job that decided the batch.
    pub fn run(&self) -> Option<JobId> {
        Some(self.batch.job_id)
    }
}

/// What a batch changed, for the orchestrator and the planner's next turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    pub opened_gaps: Vec<i32>,
    pub closed_gaps: Vec<i32>,
    pub added_findings: Vec<i32>,
    pub removed_findings: Vec<i32>,
    /// The oldest findings dropped because the issue went past the cap.
    pub dropped_findings: Vec<i32>,
    pub new_learnings: usize,
    pub duplicate_learnings: usize,
    /// The outbox rows written (or already there from a replay), in order.
    pub outbox_keys: Vec<String>,
    /// `ready_for_spec_generation` was accepted: the orchestrator starts the spec step.
    pub spec_requested: Option<ReadyForSpecGeneration>,
    /// The go-ahead as recorded in the batch's transaction (`spec_requests.id`): it stays
    /// pending until the spec is stored, so a failed spec writer is retried, never lost.
    pub spec_request_id: Option<i64>,
    pub spec_verdict: Option<SpecVerdict>,
    /// Lines for the planner about what was done implicitly (e.g. dropped findings).
    pub notes: Vec<String>,
}
