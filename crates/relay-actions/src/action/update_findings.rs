//! `update_findings`: add findings (a synthesis and the code places it rests on, each verified in
//! the run's checkout, or a place `label:path` in that related repository's) and remove ones that
//! no longer hold.

use relay_core::Citation;
use relay_core::action::{MAX_FINDINGS_PER_ISSUE, NewFinding, UpdateFindings};
use relay_store::PgConnection;

use super::batch::{Applied, At};
use super::checks::{MAX_SOURCES_PER_FINDING, MAX_TEXT_CHARS, Working, check_text, normalise};
use super::privacy::{check_source_place, check_text_places};
use crate::context::{ValidationContext, source_key};
use crate::report::Failure;
use crate::{Error, Result};

/// The findings to add (synthesis and verified sources) and the numbers to remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindingChanges {
    pub add: Vec<(String, Vec<VerifiedSource>)>,
    pub remove: Vec<i32>,
}

/// A source that passed verification, and the commit it was verified at: the run's checkout's,
/// or for a place `label:path` that related repository's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedSource {
    /// The citation, its path normalised (`label:path` in a related repository).
    pub citation: Citation,
    /// The related repository it is in (`None`: the issue's own).
    pub repository: Option<String>,
    pub commit_sha: String,
}

/// Verifies `source` in the snapshot's checkouts: the verified source, or why it failed.
pub(crate) fn verify_source(
    snapshot: &crate::context::Snapshot,
    sandboxes: &relay_tools::SandboxSet,
    source: &Citation,
) -> Result<VerifiedSource, relay_tools::citation::CitationProblem> {
    let verified = relay_tools::citation::verify_in(sandboxes, source)?;
    let repository = sandboxes.label_of(&verified.citation.path);
    Ok(VerifiedSource {
        commit_sha: snapshot.commit_of(repository).to_owned(),
        repository: repository.map(str::to_owned),
        citation: verified.citation,
    })
}

/// Checks every finding to add (size, sources verified in the checkout, duplicates) and that
/// every one to remove is this issue's.
pub(crate) fn validate(
    ctx: &ValidationContext,
    state: &mut Working,
    at: &str,
    update: &UpdateFindings,
    failures: &mut Vec<Failure>,
) -> Option<FindingChanges> {
    let mut add = Vec::new();
    if update.add.len() > MAX_FINDINGS_PER_ISSUE {
        failures.push(Failure::permanent(
            format!("{at}.add"),
            format!(
                "{} findings, at most {MAX_FINDINGS_PER_ISSUE}",
                update.add.len()
            ),
        ));
    }
    for (i, finding) in update.add.iter().enumerate() {
        let here = format!("{at}.add[{i}]");
        check_text(
            failures,
            &format!("{here}.synthesis"),
            &finding.synthesis,
            MAX_TEXT_CHARS,
        );
        check_text_places(
            ctx,
            failures,
            &format!("{here}.synthesis"),
            &finding.synthesis,
        );
        if finding.sources.is_empty() {
            failures.push(Failure::permanent(
                format!("{here}.sources"),
                "a finding needs at least one source",
            ));
        }
        if finding.sources.len() > MAX_SOURCES_PER_FINDING {
            failures.push(Failure::permanent(
                format!("{here}.sources"),
                format!(
                    "{} sources, at most {MAX_SOURCES_PER_FINDING}",
                    finding.sources.len()
                ),
            ));
        }
        let mut sources = Vec::new();
        let sandboxes = ctx.snapshot.as_ref().map(|snapshot| snapshot.sandboxes());
        for (j, source) in finding.sources.iter().enumerate() {
            let (Some(snapshot), Some(sandboxes)) = (&ctx.snapshot, &sandboxes) else {
                failures.push(Failure::permanent(
                    format!("{here}.sources[{j}]"),
                    "no checkout was explored in this run; findings need one",
                ));
                break;
            };
            let at_source = format!("{here}.sources[{j}]");
            if check_source_place(ctx, failures, &at_source, &source.path) {
                continue;
            }
            match verify_source(snapshot, sandboxes, source) {
                Ok(verified) => sources.push(verified),
                Err(problem) => failures.push(Failure::permanent(at_source, problem.to_string())),
            }
        }
        check_new_finding(ctx, state, &here, finding, failures);
        state.added_findings += 1;
        add.push((finding.synthesis.clone(), sources));
    }
    for (i, number) in update.remove.iter().enumerate() {
        if !state.findings.remove(number) {
            failures.push(Failure::permanent(
                format!("{at}.remove[{i}]"),
                format!("finding {number} is not a finding of this issue"),
            ));
        }
    }
    Some(FindingChanges {
        add,
        remove: update.remove.clone(),
    })
}

/// Removes, then adds (dropping the oldest past the cap, told to the planner in a note).
pub(crate) async fn apply(
    changes: &FindingChanges,
    conn: &mut PgConnection,
    at: At<'_>,
    applied: &mut Applied,
) -> Result<()> {
    let issue_id = at.scope.issue_id;
    for number in &changes.remove {
        let by = relay_store::findings::RemovedBy::Planner;
        if !relay_store::findings::remove(conn, issue_id, *number, by).await? {
            return Err(Error::Conflict(format!(
                "finding {number} no longer exists"
            )));
        }
        applied.removed_findings.push(*number);
    }
    for (synthesis, sources) in &changes.add {
        let rows: Vec<_> = sources
            .iter()
            .map(|source| relay_store::findings::SourceRow {
                path: source.citation.path.clone(),
                start_line: source.citation.start_line as i32,
                end_line: source.citation.end_line as i32,
                quote: source.citation.quote.clone(),
                commit_sha: source.commit_sha.clone(),
                ..Default::default()
            })
            .collect();
        let number =
            relay_store::findings::insert(conn, issue_id, synthesis, at.run(), &rows).await?;
        if at.scope.internal_context {
            relay_store::findings::mark_internal(conn, issue_id, number).await?;
        }
        applied.added_findings.push(number);
    }
    if !changes.add.is_empty() {
        let dropped =
            relay_store::findings::drop_oldest_past(conn, issue_id, MAX_FINDINGS_PER_ISSUE).await?;
        if !dropped.is_empty() {
            applied.notes.push(format!(
                "dropped the oldest findings {} (at most {MAX_FINDINGS_PER_ISSUE} are kept per issue)",
                join(&dropped)
            ));
            applied.dropped_findings.extend(dropped);
        }
    }
    Ok(())
}

/// Refuses a finding with the synthesis and sources of a live finding (not one the batch
/// removes, not a stale one) or of an earlier finding of the batch.
fn check_new_finding(
    ctx: &ValidationContext,
    state: &mut Working,
    here: &str,
    finding: &NewFinding,
    failures: &mut Vec<Failure>,
) {
    let synthesis = normalise(&finding.synthesis);
    let mut sources: Vec<String> = finding
        .sources
        .iter()
        .map(|c| source_key(&c.path, c.start_line, c.end_line))
        .collect();
    sources.sort();
    sources.dedup();
    if let Some(known) = ctx.existing.findings.iter().find(|f| {
        !state.replaced.contains(&f.number) && normalise(&f.synthesis) == synthesis && {
            let mut theirs = f.sources.clone();
            theirs.sort();
            theirs.dedup();
            theirs == sources
        }
    }) {
        failures.push(Failure::permanent(
            here,
            format!(
                "duplicate of finding {}: same synthesis and sources",
                known.number
            ),
        ));
        return;
    }
    let key = (synthesis, sources);
    match state.found.get(&key) {
        Some(first) => failures.push(Failure::permanent(
            here,
            format!("duplicate of {first} in this batch"),
        )),
        None => {
            state.found.insert(key, here.to_owned());
        }
    }
}

fn join(numbers: &[i32]) -> String {
    numbers
        .iter()
        .map(i32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
