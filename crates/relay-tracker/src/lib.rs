#![doc = include_str!("../README.md")]
//!
//! Layout:
//! - [`types`]: provider-neutral requests and answers ([`IssueRef`], [`CommentTarget`], …).
//! - [`error`]: [`TrackerError`], classified once at the client boundary.
//! - the [`IssueTracker`] trait (this file).

pub mod error;
pub mod types;

pub use error::{Result, TrackerError};
pub use types::{
    AuthorRole, CommentTarget, IssueRef, NoteRef, PostedComment, Reaction, ReactionTarget,
    ThreadNote,
};

use relay_core::{IssueSnapshot, Provider};

/// Everything Relay reads from and writes to an issue tracker. Every method is scoped to one
/// issue ([`IssueRef`]): a caller cannot address another issue through a comment id.
#[async_trait::async_trait]
pub trait IssueTracker: Send + Sync {
    /// GitHub or GitLab.
    fn provider(&self) -> Provider;

    /// The bot's username on this tracker (without `@`).
    fn bot_username(&self) -> &str;

    /// The issue as the tracker has it now.
    async fn get_issue(&self, issue: &IssueRef) -> Result<IssueSnapshot>;

    /// The whole thread, oldest first, every page; GitLab system notes are skipped.
    async fn list_thread(&self, issue: &IssueRef) -> Result<Vec<ThreadNote>>;

    /// Posts a comment: a new thread, or a reply (GitLab: in the discussion; GitHub, which has no
    /// threads: a new comment that quotes and links the one it answers). `body` is posted as is;
    /// callers add their idempotency marker.
    async fn post_comment(
        &self,
        issue: &IssueRef,
        body: &str,
        target: &CommentTarget,
    ) -> Result<PostedComment>;

    /// Replaces the body of one of this issue's comments.
    async fn edit_comment(&self, issue: &IssueRef, note: &NoteRef, body: &str) -> Result<()>;

    /// Adds a reaction (GitHub) / award emoji (GitLab) to the issue or one of its comments.
    /// Adding one that is already there succeeds.
    async fn add_reaction(
        &self,
        issue: &IssueRef,
        target: &ReactionTarget,
        reaction: Reaction,
    ) -> Result<()>;

    /// The bot's own comment on this issue whose body contains `marker`, if any. Comments by
    /// anyone else are never returned, whatever they contain.
    async fn find_marked_comment(
        &self,
        issue: &IssueRef,
        marker: &str,
    ) -> Result<Option<PostedComment>>;

    /// What `username` may do on the issue's project (for who-may-trigger rules).
    async fn author_role(&self, issue: &IssueRef, username: &str) -> Result<AuthorRole>;
}
