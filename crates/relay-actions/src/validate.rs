//! The Validator: every rule checked before anything is written, batch-aware.
//!
//! The batch is walked in order over a working copy of the issue's state, so "close gap 2" after
//! an earlier "close gap 2" in the same batch is refused, and `ready_for_spec_generation` sees the
//! gaps and findings as they will be after the batch. Gaps and findings added in the batch get
//! their numbers only at execution, so nothing in the batch can refer to them.

use std::collections::{BTreeMap, BTreeSet};

use relay_core::Citation;
use relay_core::action::{
    Action, ActionBatch, GapNumber, MAX_ACTIONS_PER_BATCH, MAX_COMMENT_CHARS,
    MAX_FINDINGS_PER_ISSUE, MAX_GAPS_PER_ACTION, MAX_OPEN_GAPS_PER_ISSUE, ReadyForSpecGeneration,
    Severity,
};
use relay_tracker::{CommentTarget, NoteRef};

use crate::authority::{Authority, Refusal};
use crate::context::{ValidationContext, source_key};
use crate::keys::MARKER_PREFIX;
use crate::report::{Failure, ValidationReport};
pub use crate::validated::{GapToOpen, ValidatedAction, ValidatedBatch};

/// Longest gap question, close note, evidence or finding synthesis, in characters.
pub const MAX_TEXT_CHARS: usize = 4_000;
/// Longest learning, in characters.
pub const MAX_LEARNING_CHARS: usize = 1_000;
/// Most sources of one finding.
pub const MAX_SOURCES_PER_FINDING: usize = 10;

/// The issue's state as the batch changes it.
struct Working {
    /// number → (open, severity)
    gaps: BTreeMap<i32, (bool, Severity)>,
    added_blocking: usize,
    findings: BTreeSet<i32>,
    /// Live findings with a stale source (removing one in the batch takes it out of `findings`).
    stale: BTreeSet<i32>,
    added_findings: usize,
    /// Gaps this batch adds so far (they are open once applied).
    added_gaps: usize,
    /// Normalised question → where this batch first asks it.
    asked: BTreeMap<String, String>,
    /// Normalised (synthesis, sources) → where this batch first adds it.
    found: BTreeMap<(String, Vec<String>), String>,
}

/// Lower case with every run of whitespace one space, trimmed: how duplicates are compared.
pub fn normalise(text: &str) -> String {
    text.split_whitespace()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

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
    let mut state = Working {
        gaps: ctx
            .gaps
            .iter()
            .map(|g| (g.number, (g.open, g.severity)))
            .collect(),
        added_blocking: 0,
        findings: ctx.findings.iter().copied().collect(),
        stale: ctx.stale_findings.iter().copied().collect(),
        added_findings: 0,
        added_gaps: 0,
        asked: BTreeMap::new(),
        found: BTreeMap::new(),
    };
    // A finding removed anywhere in the batch may be added again (re-verified), and so may a
    // stale one: neither counts as a duplicate.
    let replaced: BTreeSet<i32> = batch
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::UpdateFindings(u) => Some(u.remove.iter().copied()),
            _ => None,
        })
        .flatten()
        .chain(ctx.stale_findings.iter().copied())
        .collect();
    let mut actions = Vec::with_capacity(batch.actions.len());
    for (index, action) in batch.actions.iter().enumerate() {
        let at = location(batch, index);
        let before = failures.len();
        let validated = match action {
            Action::PostComment(c) => {
                check_text(
                    &mut failures,
                    &format!("{at}.content"),
                    &c.content,
                    MAX_COMMENT_CHARS,
                );
                let target = match &c.reply_to {
                    None => match &ctx.default_reply {
                        Some(trigger) => CommentTarget::Reply(NoteRef {
                            note_id: trigger.note_id.clone(),
                            discussion_id: trigger.discussion_id.clone(),
                        }),
                        None => CommentTarget::NewThread,
                    },
                    Some(id) => match resolve_reply(ctx, id) {
                        Some(note) => CommentTarget::Reply(note),
                        None => {
                            failures.push(Failure::permanent(
                                format!("{at}.reply_to"),
                                format!("{} is not a note of this issue's thread", quoted(id)),
                            ));
                            CommentTarget::NewThread
                        }
                    },
                };
                ValidatedAction::PostComment {
                    content: c.content.clone(),
                    target,
                }
            }
            Action::UpdateGaps(u) => {
                if u.add.len() > MAX_GAPS_PER_ACTION {
                    failures.push(Failure::permanent(
                        format!("{at}.add"),
                        format!(
                            "{} gaps, at most {MAX_GAPS_PER_ACTION} per update_gaps: ask only what changes the plan",
                            u.add.len()
                        ),
                    ));
                }
                for (i, gap) in u.add.iter().enumerate() {
                    let here = format!("{at}.add[{i}]");
                    check_text(
                        &mut failures,
                        &format!("{here}.question"),
                        &gap.question,
                        MAX_TEXT_CHARS,
                    );
                    check_new_question(ctx, &mut state, &here, &gap.question, &mut failures);
                    if let Some(evidence) = &gap.evidence {
                        check_len(
                            &mut failures,
                            &format!("{here}.evidence"),
                            evidence,
                            MAX_TEXT_CHARS,
                        );
                    }
                    if gap.severity == Severity::Blocking {
                        state.added_blocking += 1;
                    }
                }
                let mut close = Vec::new();
                for (i, c) in u.close.iter().enumerate() {
                    let here = format!("{at}.close[{i}]");
                    check_text(
                        &mut failures,
                        &format!("{here}.note"),
                        &c.note,
                        MAX_TEXT_CHARS,
                    );
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
                                Some(refusal) => {
                                    failures.push(refusal_line(&here, "note", refusal))
                                }
                                None => {
                                    *open = false;
                                    close.push((number, c.reason, c.note.clone()));
                                }
                            }
                        }
                    }
                }
                state.added_gaps += u.add.len();
                let open = state.gaps.values().filter(|(open, _)| *open).count() + state.added_gaps;
                if !u.add.is_empty() && open > MAX_OPEN_GAPS_PER_ISSUE {
                    failures.push(Failure::permanent(
                        format!("{at}.add"),
                        format!(
                            "{open} gaps would be open, at most {MAX_OPEN_GAPS_PER_ISSUE} per issue: close the answered or irrelevant ones first"
                        ),
                    ));
                }
                let add = u
                    .add
                    .iter()
                    .map(|gap| GapToOpen {
                        gap: gap.clone(),
                        evidence_sources: evidence_sources(ctx, gap.evidence.as_deref()),
                    })
                    .collect();
                ValidatedAction::UpdateGaps { add, close }
            }
            Action::UpdateFindings(u) => {
                let mut add = Vec::new();
                if u.add.len() > MAX_FINDINGS_PER_ISSUE {
                    failures.push(Failure::permanent(
                        format!("{at}.add"),
                        format!("{} findings, at most {MAX_FINDINGS_PER_ISSUE}", u.add.len()),
                    ));
                }
                for (i, finding) in u.add.iter().enumerate() {
                    let here = format!("{at}.add[{i}]");
                    check_text(
                        &mut failures,
                        &format!("{here}.synthesis"),
                        &finding.synthesis,
                        MAX_TEXT_CHARS,
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
                    for (j, source) in finding.sources.iter().enumerate() {
                        let Some(snapshot) = &ctx.snapshot else {
                            failures.push(Failure::permanent(
                                format!("{here}.sources[{j}]"),
                                "no checkout was explored in this run; findings need one",
                            ));
                            break;
                        };
                        match relay_tools::citation::verify(&snapshot.sandbox, source) {
                            Ok(verified) => sources.push(verified.citation),
                            Err(problem) => failures.push(Failure::permanent(
                                format!("{here}.sources[{j}]"),
                                problem.to_string(),
                            )),
                        }
                    }
                    check_new_finding(ctx, &mut state, &replaced, &here, finding, &mut failures);
                    state.added_findings += 1;
                    add.push((finding.synthesis.clone(), sources));
                }
                for (i, number) in u.remove.iter().enumerate() {
                    if !state.findings.remove(number) {
                        failures.push(Failure::permanent(
                            format!("{at}.remove[{i}]"),
                            format!("finding {number} is not a finding of this issue"),
                        ));
                    }
                }
                ValidatedAction::UpdateFindings {
                    add,
                    remove: u.remove.clone(),
                }
            }
            Action::UpdateLearnings(u) => {
                for (i, learning) in u.propose.iter().enumerate() {
                    check_text(
                        &mut failures,
                        &format!("{at}.propose[{i}].content"),
                        &learning.content,
                        MAX_LEARNING_CHARS,
                    );
                }
                ValidatedAction::UpdateLearnings {
                    propose: u.propose.clone(),
                }
            }
            Action::ReadyForSpecGeneration(r) => {
                check_ready(&state, &at, r, &mut failures);
                if let Err(refusal) = ctx.authority.check(
                    r.proceed_note_id.as_deref(),
                    &r.proceed_signal,
                    "proceed_note_id",
                ) {
                    failures.push(refusal_line(&at, "proceed_signal", refusal));
                }
                ValidatedAction::ReadyForSpecGeneration(r.clone())
            }
            Action::SetSpecStatus(s) => {
                if let Some(note) = &s.note {
                    check_len(&mut failures, &format!("{at}.note"), note, MAX_TEXT_CHARS);
                }
                if let Err(refusal) = ctx.authority.check(
                    s.note_id.as_deref(),
                    s.note.as_deref().unwrap_or(""),
                    "note_id",
                ) {
                    failures.push(refusal_line(&at, "note", refusal));
                }
                match &ctx.spec {
                    Some(spec) if spec.status != "draft" => ValidatedAction::SetSpecStatus {
                        spec_id: spec.id,
                        status: s.status,
                        note: s.note.clone(),
                    },
                    _ => {
                        failures.push(Failure::permanent(
                            at.clone(),
                            "no spec has been posted on this issue",
                        ));
                        continue;
                    }
                }
            }
        };
        if failures.len() == before {
            actions.push(validated);
        }
    }
    if failures.is_empty() {
        Ok(ValidatedBatch {
            issue_id: ctx.issue_id,
            tracker: ctx.tracker.clone(),
            project_id: ctx.project_id.clone(),
            commit_sha: ctx.snapshot.as_ref().map(|s| s.commit_sha.clone()),
            actions,
            private_context: ctx.private_context,
            internal_context: ctx.internal_context,
            provenance: ctx.provenance.clone(),
        })
    } else {
        Err(ValidationReport { failures })
    }
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

/// Refuses a finding with the synthesis and sources of a live finding (not one the batch
/// removes, not a stale one) or of an earlier finding of the batch.
fn check_new_finding(
    ctx: &ValidationContext,
    state: &mut Working,
    replaced: &BTreeSet<i32>,
    here: &str,
    finding: &relay_core::action::NewFinding,
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
        !replaced.contains(&f.number) && normalise(&f.synthesis) == synthesis && {
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

/// The failure line of a refused decision: on the action's id field (`note_id`,
/// `proceed_note_id`) or on its quote field.
fn refusal_line(at: &str, quote_field: &str, refusal: Refusal) -> Failure {
    let field = if refusal.on_id {
        refusal.id_field
    } else {
        quote_field.to_owned()
    };
    Failure::permanent(format!("{at}.{field}"), refusal.problem)
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

/// A `reply_to` must name a note or discussion of this issue's thread; nothing else (another
/// issue's note, a URL) can match.
fn resolve_reply(ctx: &ValidationContext, id: &str) -> Option<NoteRef> {
    let id = id.trim();
    ctx.thread
        .iter()
        .find(|n| n.note_id == id || n.discussion_id.as_deref() == Some(id))
        .map(|n| NoteRef {
            note_id: n.note_id.clone(),
            discussion_id: n.discussion_id.clone(),
        })
}

/// Non-empty, within `max` characters, and free of Relay's write marker.
fn check_text(failures: &mut Vec<Failure>, at: &str, text: &str, max: usize) {
    if text.trim().is_empty() {
        failures.push(Failure::permanent(at, "is empty"));
    }
    check_len(failures, at, text, max);
}

fn check_len(failures: &mut Vec<Failure>, at: &str, text: &str, max: usize) {
    let chars = text.chars().count();
    if chars > max {
        failures.push(Failure::permanent(
            at,
            format!("{chars} characters, at most {max}"),
        ));
    }
    if text.contains(MARKER_PREFIX) {
        failures.push(Failure::permanent(
            at,
            "contains Relay's reserved write marker",
        ));
    }
}

/// Quotes a model-supplied value for an error line, shortened so a huge value cannot flood it.
fn quoted(value: &str) -> String {
    const SHOWN: usize = 40;
    let short: String = value.chars().take(SHOWN).collect();
    if value.chars().count() > SHOWN {
        format!("{short:?}…")
    } else {
        format!("{short:?}")
    }
}

/// The code places a gap's evidence cites that stand in the run's checkout (none without one).
fn evidence_sources(ctx: &ValidationContext, evidence: Option<&str>) -> Vec<Citation> {
    let (Some(snapshot), Some(evidence)) = (&ctx.snapshot, evidence) else {
        return Vec::new();
    };
    relay_core::citation::cited_in_text(evidence)
        .iter()
        .filter_map(|place| relay_tools::citation::verify(&snapshot.sandbox, place).ok())
        .map(|verified| verified.citation)
        .collect()
}
