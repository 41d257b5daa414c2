//! `post_comment`: a comment on the issue, or a reply to one of its notes. Applied as one outbox
//! row; the drain posts it.

use relay_core::action::{MAX_COMMENT_CHARS, PostComment};
use relay_store::PgConnection;
use relay_tracker::{CommentTarget, NoteRef, TrackerWrite};

use super::batch::{Applied, At};
use super::checks::{check_text, quoted};
use super::privacy::check_text_places;
use crate::Result;
use crate::context::ValidationContext;
use crate::keys;
use crate::outbox::Queued;
use crate::report::Failure;

/// A comment to post, its target resolved to a note of this issue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommentToPost {
    pub content: String,
    pub target: CommentTarget,
}

/// Checks the content; resolves `reply_to` (or, without one, the trigger's thread).
pub(crate) fn validate(
    ctx: &ValidationContext,
    at: &str,
    comment: &PostComment,
    failures: &mut Vec<Failure>,
) -> Option<CommentToPost> {
    check_text(
        failures,
        &format!("{at}.content"),
        &comment.content,
        MAX_COMMENT_CHARS,
    );
    check_text_places(ctx, failures, &format!("{at}.content"), &comment.content);
    let target = match &comment.reply_to {
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
    Some(CommentToPost {
        content: comment.content.clone(),
        target,
    })
}

/// Queues the comment, with its marker, under the action's key.
pub(crate) async fn apply(
    comment: &CommentToPost,
    conn: &mut PgConnection,
    at: At<'_>,
    applied: &mut Applied,
) -> Result<()> {
    let issue_id = at.scope.issue_id;
    let key = keys::action_key(issue_id, at.batch, at.index, 0);
    let write = TrackerWrite::Comment {
        target: comment.target.clone(),
        body: keys::with_marker(&comment.content, &key),
    };
    crate::outbox::enqueue(
        conn,
        Queued {
            key: &key,
            issue_id,
            job_id: Some(at.batch.job_id),
            write: &write,
        },
    )
    .await?;
    applied.outbox_keys.push(key);
    Ok(())
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
