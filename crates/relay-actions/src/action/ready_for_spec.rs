//! `ready_for_spec_generation`: the go-ahead for the spec, once no blocking gap is open and
//! something is known; quoted from an admitted person's note. Applied as a pending spec request
//! the orchestrator's spec step picks up.

use relay_core::action::{GapNumber, MAX_COMMENT_CHARS, ReadyForSpecGeneration, Severity};
use relay_store::PgConnection;

use super::batch::{Applied, At};
use super::checks::{MAX_TEXT_CHARS, Working, check_len, check_text, quoted, refusal_line};
use super::privacy::check_text_places;
use crate::context::ValidationContext;
use crate::report::Failure;
use crate::{Error, Result};

/// Checks the go-ahead against the issue as the batch leaves it, and who gave it. The validated
/// form is the planner's own ([`ReadyForSpecGeneration`]): nothing in it needs resolving.
pub(crate) fn validate(
    ctx: &ValidationContext,
    state: &Working,
    at: &str,
    ready: &ReadyForSpecGeneration,
    failures: &mut Vec<Failure>,
) -> Option<ReadyForSpecGeneration> {
    check_ready(state, at, ready, failures);
    // The handover is what the spec is written from: a place it names would be in the spec.
    check_text_places(
        ctx,
        failures,
        &format!("{at}.proceed_signal"),
        &ready.proceed_signal,
    );
    check_text_places(
        ctx,
        failures,
        &format!("{at}.context_summary"),
        &ready.context_summary,
    );
    if let Err(refusal) = ctx.authority.check(
        ready.proceed_note_id.as_deref(),
        &ready.proceed_signal,
        "proceed_note_id",
    ) {
        failures.push(refusal_line(at, "proceed_signal", refusal));
    }
    Some(ready.clone())
}

/// Records the go-ahead (`spec_requests`) in the batch's transaction.
pub(crate) async fn apply(
    ready: &ReadyForSpecGeneration,
    conn: &mut PgConnection,
    at: At<'_>,
    applied: &mut Applied,
) -> Result<()> {
    let handover = serde_json::to_value(ready)
        .map_err(|e| Error::Conflict(format!("unencodable handover: {e}")))?;
    applied.spec_request_id = Some(
        relay_store::specs::request(conn, at.scope.issue_id, &handover, at.batch.job_id).await?,
    );
    applied.spec_requested = Some(ready.clone());
    Ok(())
}

fn check_ready(
    state: &Working,
    at: &str,
    ready: &ReadyForSpecGeneration,
    failures: &mut Vec<Failure>,
) {
    check_text(
        failures,
        &format!("{at}.proceed_signal"),
        &ready.proceed_signal,
        MAX_TEXT_CHARS,
    );
    check_len(
        failures,
        &format!("{at}.context_summary"),
        &ready.context_summary,
        MAX_COMMENT_CHARS,
    );
    let open_blocking: Vec<String> = state
        .gaps
        .iter()
        .filter(|(_, (open, severity))| *open && *severity == Severity::Blocking)
        .map(|(number, _)| number.to_string())
        .collect();
    if !open_blocking.is_empty() {
        failures.push(Failure::permanent(
            at,
            format!("blocking gaps still open: {}", open_blocking.join(", ")),
        ));
    }
    if state.added_blocking > 0 {
        failures.push(Failure::permanent(
            at,
            "this batch opens a blocking gap; it must be answered first",
        ));
    }
    let closed = state.gaps.values().filter(|(open, _)| !open).count();
    if closed == 0 && state.findings.is_empty() && state.added_findings == 0 {
        failures.push(Failure::permanent(
            at,
            "needs at least one closed gap or finding",
        ));
    }
    for (i, gap) in ready.closed_gaps.iter().enumerate() {
        let closed = GapNumber::parse(gap)
            .and_then(|n| state.gaps.get(&n.0))
            .is_some_and(|(open, _)| !open);
        if !closed {
            failures.push(Failure::permanent(
                format!("{at}.closed_gaps[{i}]"),
                format!("{} is not a closed gap of this issue", quoted(gap)),
            ));
        }
    }
    for (i, number) in ready.finding_ids.iter().enumerate() {
        if !state.findings.contains(number) {
            failures.push(Failure::permanent(
                format!("{at}.finding_ids[{i}]"),
                format!("finding {number} is not a finding of this issue"),
            ));
        } else if state.stale.contains(number) {
            failures.push(Failure::permanent(
                format!("{at}.finding_ids[{i}]"),
                format!(
                    "finding {number} is stale (its cited code changed): re-verify it with an explore and add it again, or remove it"
                ),
            ));
        }
    }
}
