//! The outbox as this crate sees it: a [`TrackerWrite`] stored as an outbox row
//! (`enqueue`), and a row read back as the write it stands for (`write_of`). Both directions
//! match every kind, so a new [`TrackerWrite`] or [`WriteKind`] is pointed at here by the compiler.

use relay_store::PgConnection;
use relay_store::outbox::{NewWrite, OutboxRow, WriteKind};
use relay_tracker::{CommentTarget, NoteRef, Reaction, ReactionTarget, TrackerError, TrackerWrite};

use crate::Result;
use relay_core::{IssueId, JobId};

/// Reaction names as stored in an outbox row's body.
pub const REACTION_EYES: &str = "eyes";
pub const REACTION_THUMBS_UP: &str = "thumbs_up";

/// One write to record: its idempotency key (see [`crate::keys`]), its issue, the job that
/// queues it, and the write. A comment's or edit's body already carries its marker.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Queued<'a> {
    pub key: &'a str,
    pub issue_id: IssueId,
    pub job_id: Option<JobId>,
    pub write: &'a TrackerWrite,
}

/// Records `queued` in the outbox through `conn` (the caller's transaction). Returns whether the
/// row is new (a replay finds it already there).
pub(crate) async fn enqueue(conn: &mut PgConnection, queued: Queued<'_>) -> Result<bool> {
    let (kind, body, target): (WriteKind, &str, Option<&NoteRef>) = match queued.write {
        TrackerWrite::Comment {
            target: CommentTarget::NewThread,
            body,
        } => (WriteKind::Comment, body, None),
        TrackerWrite::Comment {
            target: CommentTarget::Reply(note),
            body,
        } => (WriteKind::Reply, body, Some(note)),
        TrackerWrite::Edit { note, body } => (WriteKind::Edit, body, Some(note)),
        TrackerWrite::React { target, reaction } => {
            let note = match target {
                ReactionTarget::Issue => None,
                ReactionTarget::Note(note) => Some(note),
            };
            (WriteKind::Reaction, reaction_name(*reaction), note)
        }
    };
    Ok(relay_store::outbox::enqueue(
        conn,
        &NewWrite {
            idempotency_key: queued.key,
            issue_id: queued.issue_id,
            job_id: queued.job_id,
            kind,
            body,
            target_note_id: target.map(|n| n.note_id.as_str()),
            target_discussion_id: target.and_then(|n| n.discussion_id.as_deref()),
        },
    )
    .await?)
}

/// The write a row of kind `kind` stands for. A reply or edit without its target note is refused
/// as the tracker would refuse it (no row this crate writes lacks one).
pub(crate) fn write_of(
    row: &OutboxRow,
    kind: WriteKind,
) -> std::result::Result<TrackerWrite, TrackerError> {
    let note = row.target_note_id.as_ref().map(|note_id| NoteRef {
        note_id: note_id.clone(),
        discussion_id: row.target_discussion_id.clone(),
    });
    let body = row.body.clone();
    let no_target = || TrackerError::Validation("the write has no target note".into());
    Ok(match kind {
        WriteKind::Comment => TrackerWrite::Comment {
            target: CommentTarget::NewThread,
            body,
        },
        WriteKind::Reply => TrackerWrite::Comment {
            target: CommentTarget::Reply(note.ok_or_else(no_target)?),
            body,
        },
        WriteKind::Edit => TrackerWrite::Edit {
            note: note.ok_or_else(no_target)?,
            body,
        },
        WriteKind::Reaction => TrackerWrite::React {
            target: note.map_or(ReactionTarget::Issue, ReactionTarget::Note),
            reaction: match row.body.as_str() {
                REACTION_THUMBS_UP => Reaction::ThumbsUp,
                _ => Reaction::Eyes,
            },
        },
    })
}

fn reaction_name(reaction: Reaction) -> &'static str {
    match reaction {
        Reaction::Eyes => REACTION_EYES,
        Reaction::ThumbsUp => REACTION_THUMBS_UP,
    }
}
