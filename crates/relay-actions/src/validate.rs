//! The Validator: every rule checked before anything is written, batch-aware.
//!
//! The batch is walked in order over a working copy of the issue's state, so "close gap 2" after
//! an earlier "close gap 2" in the same batch is refused, and `ready_for_spec_generation` sees the
//! gaps and findings as they will be after the batch. Gaps and findings added in the batch get
//! their numbers only at execution, so nothing in the batch can refer to them. Each action's
//! rules are in its file under [`crate::action`]; this file walks the batch.

use relay_core::action::{ActionBatch, MAX_ACTIONS_PER_BATCH};

use crate::action::{BatchScope, ValidatedAction, Working};
use crate::context::ValidationContext;
use crate::report::{Failure, ValidationReport};
use crate::validated::ValidatedBatch;

pub use crate::action::{MAX_LEARNING_CHARS, MAX_SOURCES_PER_FINDING, MAX_TEXT_CHARS, normalise};

/// Validates `batch` against `ctx`. Every problem is reported, not only the first.
pub fn validate(
    ctx: &ValidationContext,
    batch: &ActionBatch,
) -> Result<ValidatedBatch, ValidationReport> {
    let mut failures = Vec::new();
    if batch.actions.len() > MAX_ACTIONS_PER_BATCH {
        failures.push(Failure::permanent(
            "actions",
            format!(
                "{} actions, at most {MAX_ACTIONS_PER_BATCH} per batch",
                batch.actions.len()
            ),
        ));
    }
    let mut state = Working::new(ctx, batch);
    let mut actions = Vec::with_capacity(batch.actions.len());
    for (index, action) in batch.actions.iter().enumerate() {
        let at = location(batch, index);
        let before = failures.len();
        let validated = ValidatedAction::validate(ctx, &mut state, &at, action, &mut failures);
        if let Some(validated) = validated
            && failures.len() == before
        {
            actions.push(validated);
        }
    }
    if failures.is_empty() {
        Ok(ValidatedBatch {
            scope: BatchScope {
                issue_id: ctx.issue_id,
                tracker: ctx.tracker.clone(),
                project_id: ctx.project_id.clone(),
                private_context: ctx.private_context,
                internal_context: ctx.internal_context,
                provenance: ctx.provenance.clone(),
            },
            actions,
        })
    } else {
        Err(ValidationReport { failures })
    }
}

/// Checks a spec's body before it is posted ([`crate::execute::enqueue_spec`]): no part may
/// name a place (`label:path`) of a related repository more private than the issue. Failures are
/// on `spec.part[N]`, numbered from 1 as the parts are posted.
pub fn validate_spec(ctx: &ValidationContext, body: &str) -> Result<(), ValidationReport> {
    let mut failures = Vec::new();
    let parts = crate::spec::split_spec(body, crate::spec::SPEC_PART_CHARS);
    for (index, part) in parts.iter().enumerate() {
        crate::action::privacy::check_text_places(
            ctx,
            &mut failures,
            &format!("spec.part[{}]", index + 1),
            part,
        );
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(ValidationReport { failures })
    }
}

/// `update_gaps`, or `update_gaps[3]` when the batch has more than one `update_gaps`.
fn location(batch: &ActionBatch, index: usize) -> String {
    let kind = batch.actions[index].kind();
    let same = batch.actions.iter().filter(|a| a.kind() == kind).count();
    if same > 1 {
        format!("{kind}[{index}]")
    } else {
        kind.to_owned()
    }
}
