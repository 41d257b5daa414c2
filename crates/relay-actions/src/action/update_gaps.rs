//! `update_gaps`: open new gaps (questions the planner needs answered) and close answered ones.

use relay_core::action::{
    CloseReason, GapNumber, MAX_GAPS_PER_ACTION, MAX_OPEN_GAPS_PER_ISSUE, NewGap, Severity,
    UpdateGaps,
};
use relay_store::PgConnection;

use super::batch::{Applied, At};
use super::checks::{
    MAX_TEXT_CHARS, Working, check_len, check_text, normalise, quoted, refusal_line,
};
use super::privacy::check_text_places;
use super::update_findings::{VerifiedSource, verify_source};
use crate::authority::Authority;
use crate::context::ValidationContext;
use crate::report::Failure;
use crate::{Error, Result};

/// A gap to open, with the code places its evidence cites that stand in the run's checkout or,
/// written `label:path`, in a related repository's (a place that does not stand there is left in
/// the text, untracked: evidence is prose, not a citation the planner must get right). Every
/// place is kept as one of the gap's sources at the commit it was verified at (a related
/// repository's at its own) and re-checked on every push of its repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GapToOpen {
    pub gap: NewGap,
    pub evidence_sources: Vec<VerifiedSource>,
}

/// The gaps to open and to close, numbers parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GapChanges {
    pub add: Vec<GapToOpen>,
    pub close: Vec<(GapNumber, CloseReason, String)>,
}

/// Checks every gap to add (size, duplicates, the open-gap cap) and every one to close (it is
/// this issue's, open, and a human's answer is quoted from an admitted person's note).
pub(crate) fn validate(
    ctx: &ValidationContext,
    state: &mut Working,
    at: &str,
    update: &UpdateGaps,
    failures: &mut Vec<Failure>,
) -> Option<GapChanges> {
    if update.add.len() > MAX_GAPS_PER_ACTION {
        failures.push(Failure::permanent(
            format!("{at}.add"),
            format!(
                "{} gaps, at most {MAX_GAPS_PER_ACTION} per update_gaps: ask only what changes the plan",
                update.add.len()
            ),
        ));
    }
    for (i, gap) in update.add.iter().enumerate() {
        let here = format!("{at}.add[{i}]");
        check_text(
            failures,
            &format!("{here}.question"),
            &gap.question,
            MAX_TEXT_CHARS,
        );
        check_new_question(ctx, state, &here, &gap.question, failures);
        check_text_places(ctx, failures, &format!("{here}.question"), &gap.question);
        if let Some(evidence) = &gap.evidence {
            check_len(
                failures,
                &format!("{here}.evidence"),
                evidence,
                MAX_TEXT_CHARS,
            );
            check_text_places(ctx, failures, &format!("{here}.evidence"), evidence);
        }
        if gap.severity == Severity::Blocking {
            state.added_blocking += 1;
        }
    }
    let mut close = Vec::new();
    for (i, c) in update.close.iter().enumerate() {
        let here = format!("{at}.close[{i}]");
        check_text(failures, &format!("{here}.note"), &c.note, MAX_TEXT_CHARS);
        check_text_places(ctx, failures, &format!("{here}.note"), &c.note);
        let Some(number) = GapNumber::parse(&c.gap) else {
            failures.push(Failure::permanent(
                here,
                format!(
                    "{} is not a gap id (use \"3\", \"gap 3\" or \"#3\")",
                    quoted(&c.gap)
                ),
            ));
            continue;
        };
        match state.gaps.get_mut(&number.0) {
            None => failures.push(Failure::permanent(
                here,
                format!("gap {number} is not a gap of this issue"),
            )),
            Some((open, _)) if !*open => failures.push(Failure::permanent(
                here,
                format!("gap {number} is already closed"),
            )),
            Some((open, _)) => {
                // A human's answer counts only in an admitted person's own words.
                let refused = Authority::needs_note(c.reason)
                    .then(|| {
                        ctx.authority
                            .check(c.note_id.as_deref(), &c.note, "note_id")
                            .err()
                    })
                    .flatten();
                match refused {
                    Some(refusal) => failures.push(refusal_line(&here, "note", refusal)),
                    None => {
                        *open = false;
                        close.push((number, c.reason, c.note.clone()));
                    }
                }
            }
        }
    }
    state.added_gaps += update.add.len();
    let open = state.gaps.values().filter(|(open, _)| *open).count() + state.added_gaps;
    if !update.add.is_empty() && open > MAX_OPEN_GAPS_PER_ISSUE {
        failures.push(Failure::permanent(
            format!("{at}.add"),
            format!(
                "{open} gaps would be open, at most {MAX_OPEN_GAPS_PER_ISSUE} per issue: close the answered or irrelevant ones first"
            ),
        ));
    }
    let add = update
        .add
        .iter()
        .map(|gap| GapToOpen {
            gap: gap.clone(),
            evidence_sources: evidence_sources(ctx, gap.evidence.as_deref()),
        })
        .collect();
    Some(GapChanges { add, close })
}

/// Closes first (numbers in `close` refer to gaps that existed before the batch), then opens.
pub(crate) async fn apply(
    changes: &GapChanges,
    conn: &mut PgConnection,
    at: At<'_>,
    applied: &mut Applied,
) -> Result<()> {
    let issue_id = at.scope.issue_id;
    let run = at.run();
    for (number, reason, note) in &changes.close {
        let closure = relay_store::gaps::GapClosure {
            reason: reason.as_str(),
            note,
            run,
        };
        if !relay_store::gaps::close(conn, issue_id, number.0, &closure).await? {
            return Err(Error::Conflict(format!("gap {number} is no longer open")));
        }
        applied.closed_gaps.push(number.0);
    }
    for GapToOpen {
        gap,
        evidence_sources,
    } in &changes.add
    {
        let row = relay_store::gaps::open(
            conn,
            issue_id,
            &relay_store::gaps::NewGapRow {
                question: &gap.question,
                severity: gap.severity.as_str(),
                respondent: gap.respondent.as_str(),
                evidence: gap.evidence.as_deref(),
                run,
            },
        )
        .await?;
        if at.scope.internal_context {
            relay_store::gaps::mark_internal(conn, row.id).await?;
        }
        // Each place at the commit it was verified at: a related repository's at its own.
        let places: Vec<relay_store::findings::Position> = evidence_sources
            .iter()
            .map(|source| relay_store::findings::Position {
                path: source.citation.path.clone(),
                start_line: source.citation.start_line as i32,
                end_line: source.citation.end_line as i32,
            })
            .collect();
        let evidence: Vec<relay_store::gaps::EvidencePlace<'_>> = places
            .iter()
            .zip(evidence_sources)
            .map(|(place, source)| relay_store::gaps::EvidencePlace {
                place,
                commit_sha: &source.commit_sha,
            })
            .collect();
        if !evidence.is_empty() {
            relay_store::gaps::add_evidence_sources(conn, row.id, &evidence).await?;
        }
        applied.opened_gaps.push(row.number);
    }
    Ok(())
}

/// Refuses a question an existing gap (open or closed) or an earlier gap of the batch asks.
fn check_new_question(
    ctx: &ValidationContext,
    state: &mut Working,
    here: &str,
    question: &str,
    failures: &mut Vec<Failure>,
) {
    let key = normalise(question);
    if key.is_empty() {
        return;
    }
    if let Some(gap) = ctx
        .existing
        .gaps
        .iter()
        .find(|g| normalise(&g.question) == key)
    {
        let open = state.gaps.get(&gap.number).is_some_and(|(open, _)| *open);
        let what = if open {
            "is open: wait for its answer or close it"
        } else {
            "is closed: its answer stands, do not ask again"
        };
        failures.push(Failure::permanent(
            format!("{here}.question"),
            format!("duplicate of gap {}, which {what}", gap.number),
        ));
        return;
    }
    match state.asked.get(&key) {
        Some(first) => failures.push(Failure::permanent(
            format!("{here}.question"),
            format!("duplicate of {first} in this batch"),
        )),
        None => {
            state.asked.insert(key, here.to_owned());
        }
    }
}

/// The code places a gap's evidence cites that stand in the run's checkouts (none without one).
fn evidence_sources(ctx: &ValidationContext, evidence: Option<&str>) -> Vec<VerifiedSource> {
    let (Some(snapshot), Some(evidence)) = (&ctx.snapshot, evidence) else {
        return Vec::new();
    };
    let sandboxes = snapshot.sandboxes();
    relay_tools::place::cited_places_in_text(evidence, &sandboxes.labels())
        .iter()
        .filter_map(|place| verify_source(snapshot, &sandboxes, place).ok())
        .collect()
}
