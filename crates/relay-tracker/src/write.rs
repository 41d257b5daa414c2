//! [`TrackerWrite`]: every change Relay makes on a tracker, as one value. The outbox stores one
//! per row and the drain hands it to [`crate::IssueTracker::write`], so a new kind of write is a
//! new variant here that the compiler then walks through each client's `write` and the outbox's
//! stored form.

use crate::types::{CommentTarget, NoteRef, PostedComment, Reaction, ReactionTarget};

/// One write to one issue (the issue is [`crate::IssueTracker::write`]'s other argument, so a
/// write cannot address another issue).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrackerWrite {
    /// Posts a comment: a new thread, or a reply (GitLab: in the discussion; GitHub, which has no
    /// threads: a new comment that quotes and links the one it answers). `body` is posted as is;
    /// callers add their idempotency marker.
    Comment { target: CommentTarget, body: String },
    /// Replaces the body of one of the comments.
    Edit { note: NoteRef, body: String },
    /// Adds a reaction (GitHub) / award emoji (GitLab) to the issue or one of its comments.
    /// Adding one that is already there succeeds.
    React {
        target: ReactionTarget,
        reaction: Reaction,
    },
}

impl TrackerWrite {
    /// Whether sending it twice leaves the tracker as sending it once. A write that does not
    /// (a comment) is first looked up by its marker when an earlier attempt may have landed.
    pub fn repeats_safely(&self) -> bool {
        match self {
            TrackerWrite::Comment { .. } => false,
            TrackerWrite::Edit { .. } | TrackerWrite::React { .. } => true,
        }
    }
}

/// What the tracker answered to a [`TrackerWrite`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteAck {
    /// The comment it created.
    Posted(PostedComment),
    /// The edit or reaction is in place (the tracker returns nothing Relay keeps).
    Done,
}

impl WriteAck {
    /// The comment created, if the write created one.
    pub fn posted(&self) -> Option<&PostedComment> {
        match self {
            WriteAck::Posted(comment) => Some(comment),
            WriteAck::Done => None,
        }
    }
}
