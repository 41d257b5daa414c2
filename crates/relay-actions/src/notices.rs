//! Relay's own notices: the tracker writes a job queues outside a planner batch — the
//! first-contact acknowledgement, the budget note, the answers to commands (`@bot help`) and the
//! status comments (a failure before the first cycle, a cycle that stopped without a decision, a
//! spec that could not be written, a reply the tracker refused). Like every write
//! they are outbox rows, keyed in [`crate::keys`] and sent by [`crate::Executor::drain_outbox`];
//! only this crate enqueues them. Each returns whether the row is new (a replayed job finds its
//! notice already queued).

use relay_core::{DeliveryId, IssueId, JobId, OutboxId};
use relay_store::PgConnection;
use relay_tracker::{CommentTarget, NoteRef, Reaction, ReactionTarget, TrackerWrite};

use crate::Result;
use crate::keys::{self, BudgetNoteKey};
use crate::outbox::Queued;

/// Where a comment notice goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticePlace<'a> {
    /// A new comment on the issue.
    Issue,
    /// A reply in the discussion of a note (GitLab threads).
    Reply {
        note_id: &'a str,
        discussion_id: Option<&'a str>,
    },
}

/// The first-contact reaction (👀) on the triggering note, or on the issue (`note_id: None`);
/// once per issue, whichever job queues it.
pub async fn enqueue_acknowledgement(
    conn: &mut PgConnection,
    issue_id: IssueId,
    job_id: JobId,
    note_id: Option<&str>,
) -> Result<bool> {
    let key = keys::acknowledgement_key(issue_id);
    let target = match note_id {
        None => ReactionTarget::Issue,
        Some(note_id) => ReactionTarget::Note(NoteRef {
            note_id: note_id.to_owned(),
            discussion_id: None,
        }),
    };
    let write = TrackerWrite::React {
        target,
        reaction: Reaction::Eyes,
    };
    crate::outbox::enqueue(
        conn,
        Queued {
            key: &key,
            issue_id,
            job_id: Some(job_id),
            write: &write,
        },
    )
    .await
}

/// The note that closes budget epoch `note.epoch` (the caller consumes the events through
/// `note.through` in the same transaction).
pub async fn enqueue_budget_note(
    conn: &mut PgConnection,
    issue_id: IssueId,
    job_id: JobId,
    note: BudgetNoteKey,
    body: &str,
) -> Result<bool> {
    let key = keys::budget_note_key(issue_id, note);
    enqueue_comment(conn, &key, issue_id, job_id, body, NoticePlace::Issue).await
}

/// The status comment of a job that failed before its first cycle.
pub async fn enqueue_pre_cycle_status(
    conn: &mut PgConnection,
    issue_id: IssueId,
    job_id: JobId,
    body: &str,
    place: NoticePlace<'_>,
) -> Result<bool> {
    let key = keys::pre_cycle_status_key(issue_id, job_id);
    enqueue_comment(conn, &key, issue_id, job_id, body, place).await
}

/// The status comment of a planning cycle that stopped without a decision; it answers the
/// issue's pending events through delivery `through`, which stay pending (see
/// [`keys::stopped_status_key`]: one per set of events answered, whichever run says it).
pub async fn enqueue_stopped_status(
    conn: &mut PgConnection,
    issue_id: IssueId,
    job_id: JobId,
    through: i64,
    body: &str,
    place: NoticePlace<'_>,
) -> Result<bool> {
    let key = keys::stopped_status_key(issue_id, through);
    enqueue_comment(conn, &key, issue_id, job_id, body, place).await
}

/// The status comment of go-ahead `request_id` whose spec could not be written.
pub async fn enqueue_spec_failed(
    conn: &mut PgConnection,
    issue_id: IssueId,
    job_id: JobId,
    request_id: i64,
    body: &str,
) -> Result<bool> {
    let key = keys::spec_failed_key(request_id);
    enqueue_comment(conn, &key, issue_id, job_id, body, NoticePlace::Issue).await
}

/// The answer to the command of delivery `delivery_id` (`@bot help`, `status`, …), in the
/// command note's discussion on GitLab.
pub async fn enqueue_command_reply(
    conn: &mut PgConnection,
    issue_id: IssueId,
    job_id: JobId,
    delivery_id: DeliveryId,
    body: &str,
    place: NoticePlace<'_>,
) -> Result<bool> {
    let key = keys::command_reply_key(issue_id, delivery_id);
    enqueue_comment(conn, &key, issue_id, job_id, body, place).await
}

/// The status comment about the reply in outbox row `outbox_id`, which the tracker refused.
pub async fn enqueue_refused_reply(
    conn: &mut PgConnection,
    issue_id: IssueId,
    job_id: JobId,
    outbox_id: OutboxId,
    body: &str,
) -> Result<bool> {
    let key = keys::refused_reply_key(outbox_id);
    enqueue_comment(conn, &key, issue_id, job_id, body, NoticePlace::Issue).await
}

/// A comment notice; like every write it carries its marker, so a retried drain finds a notice
/// that already landed.
async fn enqueue_comment(
    conn: &mut PgConnection,
    key: &str,
    issue_id: IssueId,
    job_id: JobId,
    body: &str,
    place: NoticePlace<'_>,
) -> Result<bool> {
    let target = match place {
        NoticePlace::Issue => CommentTarget::NewThread,
        NoticePlace::Reply {
            note_id,
            discussion_id,
        } => CommentTarget::Reply(NoteRef {
            note_id: note_id.to_owned(),
            discussion_id: discussion_id.map(str::to_owned),
        }),
    };
    let write = TrackerWrite::Comment {
        target,
        body: keys::with_marker(body, key),
    };
    crate::outbox::enqueue(
        conn,
        Queued {
            key,
            issue_id,
            job_id: Some(job_id),
            write: &write,
        },
    )
    .await
}
