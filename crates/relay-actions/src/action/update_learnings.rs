//! `update_learnings`: propose what Relay should remember about the repository (kept with the
//! issue when the batch's context is private).

use relay_core::action::{ProposedLearning, UpdateLearnings};
use relay_store::PgConnection;

use super::batch::{Applied, At};
use super::checks::{MAX_LEARNING_CHARS, check_text};
use super::privacy::check_text_places;
use crate::Result;
use crate::context::ValidationContext;
use crate::report::Failure;

/// The learnings to propose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LearningsToPropose {
    pub propose: Vec<ProposedLearning>,
}

/// Checks each learning's text.
pub(crate) fn validate(
    ctx: &ValidationContext,
    at: &str,
    update: &UpdateLearnings,
    failures: &mut Vec<Failure>,
) -> Option<LearningsToPropose> {
    for (i, learning) in update.propose.iter().enumerate() {
        check_text(
            failures,
            &format!("{at}.propose[{i}].content"),
            &learning.content,
            MAX_LEARNING_CHARS,
        );
        check_text_places(
            ctx,
            failures,
            &format!("{at}.propose[{i}].content"),
            &learning.content,
        );
    }
    Some(LearningsToPropose {
        propose: update.propose.clone(),
    })
}

/// Proposes each learning (a duplicate of a known one is counted, not stored again).
pub(crate) async fn apply(
    learnings: &LearningsToPropose,
    conn: &mut PgConnection,
    at: At<'_>,
    applied: &mut Applied,
) -> Result<()> {
    let scope = at.scope;
    for learning in &learnings.propose {
        let new = relay_store::learnings::propose(
            conn,
            &relay_store::learnings::NewLearning {
                tracker: &scope.tracker,
                project_id: &scope.project_id,
                kind: learning.kind.as_str(),
                content: &learning.content,
                issue_id: Some(scope.issue_id),
                run: at.run(),
                restricted: scope.private_context,
                note_id: scope.provenance.note_id.as_deref(),
                guidance_digest: scope.provenance.guidance_digest.as_deref(),
            },
        )
        .await?;
        if new {
            applied.new_learnings += 1;
        } else {
            applied.duplicate_learnings += 1;
        }
    }
    Ok(())
}
