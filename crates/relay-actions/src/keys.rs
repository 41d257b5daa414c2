//! Idempotency keys and the hidden marker every tracker write carries. Every outbox key format
//! is here: a new kind of write adds its key here, and only `relay-actions` enqueues writes.
//!
//! A planner batch's key is derived only from (issue, job, planner cycle, action index, part):
//! replaying the same batch of the same job maps to the same keys, so the outbox's unique key
//! turns the replay into a no-op and the tracker lookup finds what an interrupted attempt already
//! posted. Relay's own notices are keyed by what they answer, so each is said once.

use relay_core::{DeliveryId, IssueId, JobId, OutboxId};

/// Which planner decision a batch is: the job and the planner cycle within it. Together with the
/// issue and action index it determines every idempotency key of the batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BatchId {
    /// `jobs.id`.
    pub job_id: JobId,
    /// The planner turn within the job (0 for the first).
    pub cycle: i32,
}

/// The marker prefix. The validator refuses planner content containing it, so a model cannot
/// pre-empt (and so suppress) a later write by posting its marker.
pub const MARKER_PREFIX: &str = "<!-- relay:write:";

/// The key of part `part` of action `action_index` of a batch.
pub fn action_key(issue_id: IssueId, batch: BatchId, action_index: usize, part: usize) -> String {
    format!(
        "i{issue_id}-j{}-c{}-a{action_index}-p{part}",
        batch.job_id, batch.cycle
    )
}

/// The key of part `part` of spec version `version`.
pub fn spec_key(issue_id: IssueId, batch: BatchId, version: i32, part: usize) -> String {
    format!(
        "i{issue_id}-j{}-c{}-spec{version}-p{part}",
        batch.job_id, batch.cycle
    )
}

/// What a spec part's key says: the issue, the batch that queued it, the spec version, the part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecPartKey {
    pub issue_id: IssueId,
    pub batch: BatchId,
    pub version: i32,
    pub part: usize,
}

/// The spec part `key` stands for (`i<issue>-j<job>-c<cycle>-spec<version>-p<part>`).
pub fn parse_spec_key(key: &str) -> Option<SpecPartKey> {
    let rest = key.strip_prefix('i')?;
    let (issue, rest) = rest.split_once("-j")?;
    let (job, rest) = rest.split_once("-c")?;
    let (cycle, rest) = rest.split_once("-spec")?;
    let (version, part) = rest.split_once("-p")?;
    Some(SpecPartKey {
        issue_id: issue.parse().ok()?,
        batch: BatchId {
            job_id: job.parse().ok()?,
            cycle: cycle.parse().ok()?,
        },
        version: version.parse().ok()?,
        part: part.parse().ok()?,
    })
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

/// The status comment of a go-ahead whose spec could not be written.
pub fn spec_failed_key(request_id: i64) -> String {
    format!("spec-failed:{request_id}")
}

/// The status comment about the reply in outbox row `outbox_id`, refused for good.
pub fn refused_reply_key(outbox_id: OutboxId) -> String {
    format!("refused:{outbox_id}")
}

/// Whether `key` is a planner action's (`i<issue>-j<job>-c<cycle>-a<action>-p<part>`), not a
/// status comment of ours, a spec part or a budget note.
pub fn is_action_key(key: &str) -> bool {
    key.starts_with('i') && key.contains("-a") && !key.contains("-spec")
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
    use super::*;

    #[test]
    fn spec_keys_parse_back() {
        let batch = BatchId {
            job_id: JobId(12),
            cycle: -1,
        };
        let key = spec_key(IssueId(7), batch, 3, 2);
        assert_eq!(
            parse_spec_key(&key),
            Some(SpecPartKey {
                issue_id: IssueId(7),
                batch,
                version: 3,
                part: 2
            })
        );
        assert_eq!(parse_spec_key(&action_key(IssueId(7), batch, 0, 0)), None);
        assert_eq!(parse_spec_key("summary-i7"), None);
    }

    #[test]
    fn keys_are_deterministic_and_distinct() {
        let batch = BatchId {
            job_id: JobId(7),
            cycle: 1,
        };
        assert_eq!(action_key(IssueId(3), batch, 2, 0), "i3-j7-c1-a2-p0");
        assert_eq!(
            action_key(IssueId(3), batch, 2, 0),
            action_key(IssueId(3), batch, 2, 0)
        );
        assert_ne!(
            action_key(IssueId(3), batch, 2, 0),
            action_key(IssueId(3), batch, 2, 1)
        );
        assert_ne!(
            action_key(IssueId(3), batch, 2, 0),
            action_key(
                IssueId(3),
                BatchId {
                    job_id: JobId(7),
                    cycle: 2
                },
                2,
                0
            )
        );
        assert_eq!(spec_key(IssueId(3), batch, 2, 1), "i3-j7-c1-spec2-p1");
        assert_eq!(with_marker("hi", "k"), "hi\n\n<!-- relay:write:k -->");
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
        assert_eq!(
            parse_budget_note_key(&acknowledgement_key(IssueId(7)), IssueId(7)),
            None
        );
        assert_eq!(parse_budget_note_key("budget:7:2:41:x", IssueId(7)), None);
    }

    #[test]
    fn only_planner_actions_have_action_keys() {
        let batch = BatchId {
            job_id: JobId(1),
            cycle: 1,
        };
        assert!(is_action_key(&action_key(IssueId(1), batch, 0, 0)));
        assert!(!is_action_key(&spec_key(IssueId(1), batch, 1, 0)));
        assert!(!is_action_key(&pre_cycle_status_key(IssueId(1), JobId(1))));
        assert!(!is_action_key(&budget_note_key(
            IssueId(1),
            BudgetNoteKey {
                epoch: 1,
                through: 3
            }
        )));
        assert!(!is_action_key(&refused_reply_key(OutboxId(5))));
    }
}
