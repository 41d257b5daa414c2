//! The planner's actions, one file each (mini-redis's `cmd/` shape): each holds its validated
//! form, its `validate` (the action's rules, over the batch's `Working` state) and its `apply`
//! (its state changes and outbox rows, in the batch's transaction). [`ValidatedAction`] only
//! dispatches; [`crate::validate()`] walks the batch and [`crate::Executor::apply`] applies it.
//!
//! Layout: [`post_comment`], [`update_gaps`], [`update_findings`], [`update_learnings`],
//! [`ready_for_spec`] (`ready_for_spec_generation`), [`set_spec_status`]; `checks` (the batch's
//! working state, the shared text checks and limits), `privacy` (no place of a related repository
//! more private than the issue in what is written), `batch` (what applying reads and writes
//! besides the action: [`Applied`]).
//!
//! A new action: its file here, a variant of [`ValidatedAction`] and of
//! [`relay_core::action::Action`]; the compiler points at both `match`es below.

mod batch;
mod checks;
pub mod post_comment;
pub mod privacy;
pub mod ready_for_spec;
pub mod set_spec_status;
pub mod update_findings;
pub mod update_gaps;
pub mod update_learnings;

use relay_core::action::{Action, ReadyForSpecGeneration};
use relay_store::PgConnection;

pub use batch::Applied;
pub(crate) use batch::{At, BatchScope};
pub(crate) use checks::Working;
pub use checks::{MAX_LEARNING_CHARS, MAX_SOURCES_PER_FINDING, MAX_TEXT_CHARS, normalise};
pub use post_comment::CommentToPost;
pub use set_spec_status::SpecVerdictToSet;
pub use update_findings::{FindingChanges, VerifiedSource};
pub use update_gaps::{GapChanges, GapToOpen};
pub use update_learnings::LearningsToPropose;

use crate::Result;
use crate::context::ValidationContext;
use crate::report::Failure;

/// One action, resolved: gap numbers parsed, reply targets resolved to this notes,
/// citations normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValidatedAction {
    PostComment(CommentToPost),
    UpdateGaps(GapChanges),
    UpdateFindings(FindingChanges),
    UpdateLearnings(LearningsToPropose),
    ReadyForSpecGeneration(ReadyForSpecGeneration),
    SetSpecStatus(SpecVerdictToSet),
}

impl ValidatedAction {
    /// Checks `action` (at `at`, e.g. `update_gaps[3]`) against the issue as the batch has left
    /// it so far, recording every problem in `failures`. `None` when the action cannot be
    /// resolved at all; the caller keeps an action only when it added no failure.
    pub(crate) fn validate(
        ctx: &ValidationContext,
        state: &mut Working,
        at: &str,
        action: &Action,
        failures: &mut Vec<Failure>,
    ) -> Option<ValidatedAction> {
        match action {
            Action::PostComment(c) => {
                post_comment::validate(ctx, at, c, failures).map(ValidatedAction::PostComment)
            }
            Action::UpdateGaps(u) => {
                update_gaps::validate(ctx, state, at, u, failures).map(ValidatedAction::UpdateGaps)
            }
            Action::UpdateFindings(u) => update_findings::validate(ctx, state, at, u, failures)
                .map(ValidatedAction::UpdateFindings),
            Action::UpdateLearnings(u) => update_learnings::validate(ctx, at, u, failures)
                .map(ValidatedAction::UpdateLearnings),
            Action::ReadyForSpecGeneration(r) => {
                ready_for_spec::validate(ctx, state, at, r, failures)
                    .map(ValidatedAction::ReadyForSpecGeneration)
            }
            Action::SetSpecStatus(s) => {
                set_spec_status::validate(ctx, at, s, failures).map(ValidatedAction::SetSpecStatus)
            }
        }
    }

    /// Writes the action's state changes and outbox rows through `conn` (the batch's
    /// transaction), adding what it changed to `applied`.
    pub(crate) async fn apply(
        &self,
        conn: &mut PgConnection,
        at: At<'_>,
        applied: &mut Applied,
    ) -> Result<()> {
        match self {
            ValidatedAction::PostComment(c) => post_comment::apply(c, conn, at, applied).await,
            ValidatedAction::UpdateGaps(g) => update_gaps::apply(g, conn, at, applied).await,
            ValidatedAction::UpdateFindings(f) => {
                update_findings::apply(f, conn, at, applied).await
            }
            ValidatedAction::UpdateLearnings(l) => {
                update_learnings::apply(l, conn, at, applied).await
            }
            ValidatedAction::ReadyForSpecGeneration(r) => {
                ready_for_spec::apply(r, conn, at, applied).await
            }
            ValidatedAction::SetSpecStatus(s) => set_spec_status::apply(s, conn, at, applied).await,
        }
    }
}
