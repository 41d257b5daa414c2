//! `set_spec_status`: the verdict on the posted spec (accepted, changes requested, …), quoted
//! from an admitted person's note.

use relay_core::action::{SetSpecStatus, SpecVerdict};
use relay_store::PgConnection;

use super::batch::{Applied, At};
use super::checks::{MAX_TEXT_CHARS, check_len, refusal_line};
use super::privacy::check_text_places;
use crate::context::ValidationContext;
use crate::report::Failure;
use crate::{Error, Result};
use relay_core::SpecId;

/// The verdict, resolved to the posted spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecVerdictToSet {
    pub spec_id: SpecId,
    pub status: SpecVerdict,
    pub note: Option<String>,
}

/// Checks the note and who gave it; refuses a verdict when no spec has been posted.
pub(crate) fn validate(
    ctx: &ValidationContext,
    at: &str,
    set: &SetSpecStatus,
    failures: &mut Vec<Failure>,
) -> Option<SpecVerdictToSet> {
    if let Some(note) = &set.note {
        check_len(failures, &format!("{at}.note"), note, MAX_TEXT_CHARS);
        check_text_places(ctx, failures, &format!("{at}.note"), note);
    }
    if let Err(refusal) = ctx.authority.check(
        set.note_id.as_deref(),
        set.note.as_deref().unwrap_or(""),
        "note_id",
    ) {
        failures.push(refusal_line(at, "note", refusal));
    }
    match &ctx.spec {
        Some(spec) if spec.status != "draft" => Some(SpecVerdictToSet {
            spec_id: spec.id,
            status: set.status,
            note: set.note.clone(),
        }),
        _ => {
            failures.push(Failure::permanent(
                at,
                "no spec has been posted on this issue",
            ));
            None
        }
    }
}

/// Records the verdict on the spec.
pub(crate) async fn apply(
    verdict: &SpecVerdictToSet,
    conn: &mut PgConnection,
    _at: At<'_>,
    applied: &mut Applied,
) -> Result<()> {
    let SpecVerdictToSet {
        spec_id,
        status,
        note,
    } = verdict;
    if !relay_store::specs::set_status(conn, *spec_id, status.as_str(), note.as_deref()).await? {
        return Err(Error::Conflict(format!("spec {spec_id} no longer exists")));
    }
    applied.spec_verdict = Some(*status);
    Ok(())
}
