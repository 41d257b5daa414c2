#![doc = include_str!("../README.md")]
//!
//! Layout:
//! - [`types`]: provider-neutral requests and answers ([`IssueRef`], [`CommentTarget`], …).
//! - [`write`](mod@write): [`TrackerWrite`], every change Relay makes on a tracker, and its [`WriteAck`].
//! - [`error`]: [`TrackerError`], classified once at the client boundary.
//! - the [`IssueTracker`] trait (this file).
//! - [`GitHubClient`] ([`github`]) and [`GitLabClient`] ([`gitlab`]): the implementations.
//! - [`build`] and [`Trackers`] ([`registry`]): clients from configuration, by tracker name.
//! - [`pacing`]: the per-installation write token bucket; `classify`: error classification.
//! - `http`: the HTTP plumbing both clients share (timeouts, pacing, failures classified);
//!   [`pagination`]: following GitHub's `Link` and GitLab's `x-next-page` headers.
//! - `fake` (feature `test-support`): local GitHub and GitLab servers for tests.

mod classify;
pub mod error;
pub mod github;
pub mod gitlab;
mod http;
pub mod pacing;
pub mod pagination;
pub mod registry;
pub mod types;
pub mod write;

#[cfg(feature = "test-support")]
pub mod fake;

pub use classify::{DEFAULT_RATE_LIMIT_WAIT, MAX_RETRY_AFTER};
pub use error::{Result, TrackerError};
pub use github::GitHubClient;
pub use gitlab::GitLabClient;
pub use http::{USER_AGENT, http_client};
pub use pacing::WritePacing;
pub use registry::{Trackers, build, build_with};
pub use types::{
    AuthorRole, BotIdentity, ChangedIssue, ChangedNote, CommentTarget, IssueRef, NoteRef,
    PostedComment, ProjectChanges, ProjectRef, Reaction, ReactionTarget, RepositoryInfo,
    ThreadNote,
};
pub use write::{TrackerWrite, WriteAck};

use relay_core::{IssueSnapshot, Provider};

/// Everything Relay reads from and writes to an issue tracker. Every method is scoped to one
/// issue ([`IssueRef`]): a caller cannot address another issue through a comment id.
///
/// Each client (GitHub, GitLab) has an inherent method of the same name for every method here,
/// in the file of its concern; the trait impl only forwards (a trait impl cannot be split across
/// files).
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

    /// Makes one change on the issue: a comment, an edit, a reaction ([`TrackerWrite`]).
    async fn write(&self, issue: &IssueRef, write: &TrackerWrite) -> Result<WriteAck>;

    /// The bot's own comment on this issue whose body contains `marker`, if any. Comments by
    /// anyone else are never returned, whatever they contain.
    async fn find_marked_comment(
        &self,
        issue: &IssueRef,
        marker: &str,
    ) -> Result<Option<PostedComment>>;

    /// What `username` may do on the issue's project (for who-may-trigger rules).
    async fn author_role(&self, issue: &IssueRef, username: &str) -> Result<AuthorRole>;

    /// What changed on `project` since `since` (issues and their comments/notes), every page:
    /// the reconciler's poll. When nothing changed it costs one call (GitLab) or two (GitHub).
    /// The default says the implementation cannot tell, so test doubles need not implement it.
    async fn changes_since(
        &self,
        project: &ProjectRef,
        since: chrono::DateTime<chrono::Utc>,
    ) -> Result<ProjectChanges> {
        let _ = (project, since);
        Err(TrackerError::Config(
            "this tracker client cannot list changes".into(),
        ))
    }

    /// [`IssueTracker::author_role`] when the webhook also gave the user's numeric id: a tracker
    /// that can look a member up by id (GitLab) does so exactly; the default uses the name.
    async fn author_role_by_id(
        &self,
        issue: &IssueRef,
        username: &str,
        user_id: Option<i64>,
    ) -> Result<AuthorRole> {
        let _ = user_id;
        self.author_role(issue, username).await
    }
    /// The token git should clone this issue's repository with over HTTPS: the configured token,
    /// or in GitHub App mode an installation access token for the issue's installation (minted
    /// and refreshed by the client). `None` when the client has no credential for git (test
    /// doubles). Callers pass it to git only through the environment.
    async fn clone_credential(&self, _issue: &IssueRef) -> Result<Option<secrecy::SecretString>> {
        Ok(None)
    }

    /// The repository at `path` as Relay's credentials see it (in GitHub App mode, those of the
    /// installation of `issue`'s repository): `Ok(None)` when it does not exist or Relay may not
    /// read it (trackers answer both with a 404). For a related repository's admission; the
    /// default says the implementation cannot tell.
    async fn repository(&self, issue: &IssueRef, path: &str) -> Result<Option<RepositoryInfo>> {
        let _ = (issue, path);
        Err(TrackerError::Config(
            "this tracker client cannot look repositories up".into(),
        ))
    }

    /// The token git should clone the related repository at `path` with: read-only where the
    /// tracker can say so (in GitHub App mode an installation token for that repository alone,
    /// with `contents: read` and `metadata: read`; the issue's write token never reaches another
    /// repository's clone). `None` as for [`IssueTracker::clone_credential`].
    async fn read_credential(
        &self,
        issue: &IssueRef,
        path: &str,
    ) -> Result<Option<secrecy::SecretString>> {
        let _ = (issue, path);
        Ok(None)
    }

    /// Who the configured credential acts as (`relay tracker check`). The default says the
    /// implementation cannot tell, so test doubles need not implement it.
    async fn whoami(&self) -> Result<BotIdentity> {
        Err(TrackerError::Config(
            "this tracker client cannot report its identity".into(),
        ))
    }
}
