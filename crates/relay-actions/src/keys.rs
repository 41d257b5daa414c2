//! Idempotency keys and the hidden marker every tracker write carries. Every outbox key format
//! is here: a new kind of write adds its key here, and only `relay-actions` enqueues writes.
//!
//! Two writes share a key only when they are the same write: the outbox's unique key turns the
//! second into a no-op, and the drain's marker lookup takes it for already posted. So a key names
//! its kind (a prefix or suffix no other kind uses) and everything that tells two writes of that
//! kind apart:
//!
//! - A planner batch's writes (replies, spec parts) by (issue, job, run, planner cycle, action
//!   index or spec version, part). The run is the queue's claim of the job ([`BatchId::run`]): two
//!   runs of one job plan their cycles from 0 again (a retry after a failure, the operator's
//!   `relay jobs retry`, a job picked up after its worker died), and what a later run decides is
//!   a new write. Replaying the same batch of the same run maps to the same keys (the batch, its
//!   outbox rows and the watermark raise commit as one, so a crash never leaves a batch half
//!   written for a new run to plan again).
//! - Relay's own notices by what they answer, so each is said once whatever job or run says it:
//!   a stopped cycle's status by the last event it answered, a command's answer by its delivery,
//!   a budget note by its epoch, …
//!
//! `tests` below check every pair of kinds that can occur in one job.

use relay_core::{DeliveryId, IssueId, JobId, OutboxId};

/// Which planner decision a batch is: the job, the run of the job, and the planner cycle within
/// the run. Together with the issue and action index it determines every idempotency key of the
/// batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BatchId {
    /// `jobs.id`.
    pub job_id: JobId,
    /// The job's run: `jobs.runs` at the claim, counted from 1 and never reset (unlike
    /// `attempts`, which the operator's retry resets and a release at shutdown gives back).
    pub run: i32,
    /// The planner turn within the run (0 for the first).
    pub cycle: i32,
}

/// The marker prefix. The validator refuses planner content containing it, so a model cannot
/// pre-empt (and so suppress) a later write by posting its marker.
pub const MARKER_PREFIX: &str = "<!-- relay:write:";

/// What every key of a batch starts with: `i<issue>-j<job>-r<run>-c<cycle>`.
fn batch_prefix(issue_id: IssueId, batch: BatchId) -> String {
    format!(
        "i{issue_id}-j{}-r{}-c{}",
        batch.job_id, batch.run, batch.cycle
    )
}

/// The key of part `part` of action `action_index` of a batch.
pub fn action_key(issue_id: IssueId, batch: BatchId, action_index: usize, part: usize) -> String {
    format!("{}-a{action_index}-p{part}", batch_prefix(issue_id, batch))
}

/// The key of part `part` of spec version `version`.
pub fn spec_key(issue_id: IssueId, batch: BatchId, version: i32, part: usize) -> String {
    format!("{}-spec{version}-p{part}", batch_prefix(issue_id, batch))
}

/// What a spec part's key says: the issue, the batch that queued it (as its key prefix), the
/// spec version, the part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecPartKey {
    pub issue_id: IssueId,
    /// `i<issue>-j<job>-r<run>-c<cycle>`, or without `-r<run>` for a key queued before runs
    /// were counted (migration 0088): the other parts' keys are built from it as it is.
    batch_prefix: String,
    pub version: i32,
    pub part: usize,
}

impl SpecPartKey {
    /// The key of part `part` of the same spec, queued by the same batch.
    pub fn part_key(&self, part: usize) -> String {
        format!("{}-spec{}-p{part}", self.batch_prefix, self.version)
    }
}

/// The spec part `key` stands for (`i<issue>-j<job>-r<run>-c<cycle>-spec<version>-p<part>`).
pub fn parse_spec_key(key: &str) -> Option<SpecPartKey> {
    let (batch_prefix, rest) = key.split_once("-spec")?;
    let (version, part) = rest.split_once("-p")?;
    let issue = parse_batch_prefix(batch_prefix)?;
    Some(SpecPartKey {
        issue_id: issue,
        batch_prefix: batch_prefix.to_owned(),
        version: version.parse().ok()?,
        part: part.parse().ok()?,
    })
}

/// The issue of a batch prefix `i<issue>-j<job>[-r<run>]-c<cycle>`, when `prefix` is one.
fn parse_batch_prefix(prefix: &str) -> Option<IssueId> {
    let rest = prefix.strip_prefix('i')?;
    let (issue, rest) = rest.split_once("-j")?;
    let (job_and_run, cycle) = rest.split_once("-c")?;
    let job = match job_and_run.split_once("-r") {
        Some((job, run)) => {
            run.parse::<i32>().ok()?;
            job
        }
        None => job_and_run,
    };
    job.parse::<i64>().ok()?;
    cycle.parse::<i32>().ok()?;
    issue.parse().ok()
}

/// The first-contact reaction: one per issue, whatever job sends it.
pub fn acknowledgement_key(issue_id: IssueId) -> String {
    format!("ack:{issue_id}")
}

/// Prefix of the budget notes' keys, `budget:{issue}:{epoch}:{through}`.
const BUDGET_NOTE_PREFIX: &str = "budget";

/// What a budget note's key says: the budget epoch it closed and the last delivery it consumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetNoteKey {
    pub epoch: u32,
    pub through: i64,
}

/// The key of the budget note of `epoch`, which consumed the issue's events through delivery
/// `through`.
pub fn budget_note_key(issue_id: IssueId, note: BudgetNoteKey) -> String {
    format!(
        "{BUDGET_NOTE_PREFIX}:{issue_id}:{}:{}",
        note.epoch, note.through
    )
}

/// The budget note `key` stands for, when it is one of `issue_id`'s.
pub fn parse_budget_note_key(key: &str, issue_id: IssueId) -> Option<BudgetNoteKey> {
    let mut parts = key.split(':');
    if parts.next()? != BUDGET_NOTE_PREFIX || parts.next()?.parse::<i64>().ok()? != issue_id {
        return None;
    }
    let epoch = parts.next()?.parse().ok()?;
    let through = parts.next()?.parse().ok()?;
    parts
        .next()
        .is_none()
        .then_some(BudgetNoteKey { epoch, through })
}

/// The status comment of a job that failed before its first cycle.
pub fn pre_cycle_status_key(issue_id: IssueId, job_id: JobId) -> String {
    format!("i{issue_id}-j{job_id}-pre-cycle")
}

/// The status comment of a planning cycle that stopped without a decision, answering the
/// issue's pending events through delivery `through`. Keyed by what it answers, not by the run:
/// a later run of the job (a retry, the operator's) that stops on the same events says nothing
/// new, and its reply, when it gets one, is a batch write with a key of its own.
pub fn stopped_status_key(issue_id: IssueId, through: i64) -> String {
    format!("stopped:{issue_id}:{through}")
}

/// The status comment of a go-ahead whose spec could not be written.
pub fn spec_failed_key(request_id: i64) -> String {
    format!("spec-failed:{request_id}")
}

/// The status comment about the reply in outbox row `outbox_id`, refused for good.
pub fn refused_reply_key(outbox_id: OutboxId) -> String {
    format!("refused:{outbox_id}")
}

/// Whether `key` is a planner action's (`i<issue>-j<job>-r<run>-c<cycle>-a<action>-p<part>`, or
/// without `-r<run>` when queued before runs were counted), not a status comment of ours, a spec
/// part or a budget note.
pub fn is_action_key(key: &str) -> bool {
    let Some((head, part)) = key.rsplit_once("-p") else {
        return false;
    };
    let Some((batch_prefix, action)) = head.rsplit_once("-a") else {
        return false;
    };
    part.parse::<usize>().is_ok()
        && action.parse::<usize>().is_ok()
        && parse_batch_prefix(batch_prefix).is_some()
}

/// The answer to the command in delivery `delivery_id` (`@bot help`, …): one per command,
/// whatever job or retry answers it.
pub fn command_reply_key(issue_id: IssueId, delivery_id: DeliveryId) -> String {
    format!("cmd:{issue_id}:{delivery_id}")
}

/// The living summary comment: one per issue (the format lives with the store, which
/// `relay writes retry` reads it with: [`relay_store::summaries::post_key`]).
pub fn summary_key(issue_id: IssueId) -> String {
    relay_store::summaries::post_key(issue_id)
}

/// Revision `revision` of the summary comment, as an edit
/// ([`relay_store::summaries::edit_key`]).
pub fn summary_edit_key(issue_id: IssueId, revision: i32) -> String {
    relay_store::summaries::edit_key(issue_id, revision)
}

/// The stale-findings notice after a push moved the default branch to `commit`.
pub fn stale_findings_key(issue_id: IssueId, commit: &str) -> String {
    format!("stale-i{issue_id}-{commit}")
}

/// `<!-- relay:write:KEY -->`.
pub fn marker(key: &str) -> String {
    format!("{MARKER_PREFIX}{key} -->")
}

/// The body as sent: the content, a blank line, the marker (invisible in rendered Markdown).
pub fn with_marker(body: &str, key: &str) -> String {
    format!("{body}\n\n{}", marker(key))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn batch(job: i64, run: i32, cycle: i32) -> BatchId {
        BatchId {
            job_id: JobId(job),
            run,
            cycle,
        }
    }

    /// Small values, the same numbers for every kind's parameters, so that a format that could
    /// read one kind's numbers as another's would collide here.
    const N: [i64; 3] = [0, 1, 2];

    /// Every kind of write one job can queue or send (its drain sends the issue's pending writes,
    /// whoever queued them), with its keys over the small values.
    fn keys_by_kind() -> BTreeMap<&'static str, Vec<String>> {
        let issues = N.map(IssueId);
        let small = N.map(|n| usize::try_from(n).unwrap());
        let cycles = [-1, 0, 1, 2];
        let mut kinds: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
        let mut add = |kind, key: String| kinds.entry(kind).or_default().push(key);
        for issue in issues {
            for job in N {
                for run in [1, 2] {
                    for cycle in cycles {
                        let b = batch(job, run, cycle);
                        for index in small {
                            for part in small {
                                add("reply", action_key(issue, b, index, part));
                                add("spec part", spec_key(issue, b, index as i32, part));
                            }
                        }
                    }
                }
                add("pre-cycle status", pre_cycle_status_key(issue, JobId(job)));
                add("stopped status", stopped_status_key(issue, job));
                add("command reply", command_reply_key(issue, DeliveryId(job)));
                add("summary edit", summary_edit_key(issue, job as i32));
                for through in N {
                    let note = BudgetNoteKey {
                        epoch: job as u32,
                        through,
                    };
                    add("budget note", budget_note_key(issue, note));
                }
            }
            add("acknowledgement", acknowledgement_key(issue));
            add("summary", summary_key(issue));
            add("stale findings", stale_findings_key(issue, "0a1b"));
        }
        // Keyed by ids unique across issues.
        for id in N {
            add("spec failed", spec_failed_key(id));
            add("refused reply", refused_reply_key(OutboxId(id)));
        }
        kinds
    }

    /// A key for which a classifier says "mine": the kinds the drain and the job tell apart by
    /// their key.
    fn classified(key: &str) -> Vec<&'static str> {
        let mut kinds = Vec::new();
        if is_action_key(key) {
            kinds.push("reply");
        }
        if parse_spec_key(key).is_some() {
            kinds.push("spec part");
        }
        if N.iter()
            .any(|&issue| parse_budget_note_key(key, IssueId(issue)).is_some())
        {
            kinds.push("budget note");
        }
        kinds
    }

    #[test]
    fn no_two_kinds_of_write_share_a_key() {
        let kinds = keys_by_kind();
        let names: Vec<_> = kinds.keys().copied().collect();
        for (i, a) in names.iter().enumerate() {
            for b in &names[i + 1..] {
                let shared: Vec<_> = kinds[a].iter().filter(|k| kinds[b].contains(k)).collect();
                assert!(shared.is_empty(), "{a} and {b} share {shared:?}");
            }
        }
    }

    #[test]
    fn within_a_kind_distinct_writes_have_distinct_keys() {
        for (kind, keys) in keys_by_kind() {
            let mut seen = std::collections::BTreeSet::new();
            for key in &keys {
                assert!(seen.insert(key), "{kind}: {key} twice");
            }
        }
    }

    #[test]
    fn each_key_is_classified_as_its_own_kind_only() {
        for (kind, keys) in keys_by_kind() {
            for key in keys {
                let found = classified(&key);
                let expected: Vec<&str> = match kind {
                    "reply" | "spec part" | "budget note" => vec![kind],
                    _ => Vec::new(),
                };
                assert_eq!(found, expected, "{key} ({kind})");
            }
        }
    }

    /// Issue #45 §1: the LLM failed until the job died, its status was posted; the operator's
    /// retry (a new run, attempts reset) planned cycle 0 again and its reply took the status's
    /// key, so the outbox dropped it.
    #[test]
    fn a_later_runs_reply_never_takes_a_notice_or_an_earlier_runs_key() {
        let issue = IssueId(2);
        let dead = batch(2, 5, 0);
        let retried = batch(2, 6, 0);
        let reply = action_key(issue, retried, 0, 0);
        assert_eq!(reply, "i2-j2-r6-c0-a0-p0");
        assert_ne!(reply, action_key(issue, dead, 0, 0));
        assert_ne!(reply, stopped_status_key(issue, 9));
        assert_ne!(reply, pre_cycle_status_key(issue, JobId(2)));
        assert_ne!(spec_key(issue, retried, 1, 0), spec_key(issue, dead, 1, 0));
    }

    #[test]
    fn a_replayed_batch_of_the_same_run_keeps_its_keys() {
        let b = batch(7, 2, 1);
        assert_eq!(action_key(IssueId(3), b, 2, 0), "i3-j7-r2-c1-a2-p0");
        assert_eq!(
            action_key(IssueId(3), b, 2, 0),
            action_key(IssueId(3), b, 2, 0)
        );
        assert_eq!(spec_key(IssueId(3), b, 2, 1), "i3-j7-r2-c1-spec2-p1");
        assert_eq!(with_marker("hi", "k"), "hi\n\n<!-- relay:write:k -->");
    }

    #[test]
    fn spec_keys_parse_back_to_their_siblings() {
        let b = batch(12, 3, -1);
        let key = spec_key(IssueId(7), b, 3, 2);
        let part = parse_spec_key(&key).unwrap();
        assert_eq!((part.issue_id, part.version, part.part), (IssueId(7), 3, 2));
        assert_eq!(part.part_key(0), spec_key(IssueId(7), b, 3, 0));
        // A part queued before runs were counted keeps its own format for its siblings.
        let old = parse_spec_key("i7-j12-c0-spec3-p1").unwrap();
        assert_eq!(old.part_key(0), "i7-j12-c0-spec3-p0");
        assert!(is_action_key("i7-j12-c0-a1-p0"));
        assert_eq!(parse_spec_key(&action_key(IssueId(7), b, 0, 0)), None);
        assert_eq!(parse_spec_key("summary-i7"), None);
        assert_eq!(parse_spec_key("ix-j1-c0-spec1-p0"), None);
    }

    #[test]
    fn budget_note_keys_parse_back_for_their_issue_only() {
        let note = BudgetNoteKey {
            epoch: 2,
            through: 41,
        };
        assert_eq!(budget_note_key(IssueId(7), note), "budget:7:2:41");
        assert_eq!(
            parse_budget_note_key("budget:7:2:41", IssueId(7)),
            Some(note)
        );
        assert_eq!(parse_budget_note_key("budget:8:2:41", IssueId(7)), None);
        assert_eq!(parse_budget_note_key("budget:7:2:41:x", IssueId(7)), None);
    }
}
