//! Provider-neutral requests and answers of [`crate::IssueTracker`].

use chrono::{DateTime, Utc};

/// One issue on one tracker: the only thing a write can be addressed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueRef {
    /// GitHub repository id / GitLab project id, as text.
    pub project_id: String,
    /// `owner/repo` (GitHub REST paths use it) or `group/sub/project`.
    pub project_path: String,
    /// GitHub `number` / GitLab `iid`.
    pub number: i64,
    /// The GitHub App installation that delivered the issue's webhooks (App auth only).
    pub installation_id: Option<i64>,
}

/// A project the reconciler asks about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRef {
    /// The tracker's id when known (GitHub repository id, GitLab project id).
    pub project_id: Option<String>,
    /// `owner/repo` or `group/sub/project`.
    pub project_path: String,
}

/// What changed on a project since a time: the reconciler's question to a tracker.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectChanges {
    /// The project's id: the one asked with, or the one the tracker said (GitHub is asked for it
    /// only when something changed and it was not known).
    pub project_id: Option<String>,
    /// Issues updated since, oldest change first (pull requests skipped), with their snapshot.
    pub issues: Vec<ChangedIssue>,
    /// Comments and notes updated since on those issues, oldest change first (GitLab system
    /// notes skipped).
    pub notes: Vec<ChangedNote>,
}

/// An issue that changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedIssue {
    /// Its current state; `project_id` is [`ProjectChanges::project_id`] (empty if unknown).
    pub issue: relay_core::IssueSnapshot,
    pub created_at: DateTime<Utc>,
}

/// A comment or note that was created or edited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedNote {
    /// The issue it belongs to (`number` of one of [`ProjectChanges::issues`]).
    pub issue_number: i64,
    pub note: relay_core::NoteSnapshot,
}

/// One comment of an issue's thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadNote {
    pub note: relay_core::NoteSnapshot,
    /// Whether the bot wrote it.
    pub by_bot: bool,
    /// What the tracker says of the author on this project, when it says it (GitHub's
    /// `author_association`).
    pub author_role: Option<AuthorRole>,
}

/// Where a new comment goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommentTarget {
    /// A new top-level comment / discussion.
    NewThread,
    /// A reply to an existing comment of the same issue.
    Reply(NoteRef),
}

/// A comment of the issue: its note id, and on GitLab the discussion it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteRef {
    pub note_id: String,
    pub discussion_id: Option<String>,
}

/// A comment the tracker accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostedComment {
    pub note_id: String,
    pub discussion_id: Option<String>,
    pub url: Option<String>,
    pub created_at: Option<DateTime<Utc>>,
}

/// What a reaction is put on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReactionTarget {
    Issue,
    Note(NoteRef),
}

/// The reactions Relay uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reaction {
    /// "Seen, working on it" (first contact).
    Eyes,
    ThumbsUp,
}

impl Reaction {
    /// The GitHub `content` value.
    pub fn github(self) -> &'static str {
        match self {
            Reaction::Eyes => "eyes",
            Reaction::ThumbsUp => "+1",
        }
    }

    /// The GitLab award emoji name.
    pub fn gitlab(self) -> &'static str {
        match self {
            Reaction::Eyes => "eyes",
            Reaction::ThumbsUp => "thumbsup",
        }
    }
}

pub use relay_core::AuthorRole;

/// Who a tracker credential acts as (`relay tracker check`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotIdentity {
    /// The login comments appear under: a user name, or `slug[bot]` for a GitHub App.
    pub login: String,
    /// The GitHub App's slug when authenticated as an App.
    pub app_slug: Option<String>,
}

/// What the tracker says of a repository Relay's credentials can read (a related repository's
/// admission).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepositoryInfo {
    /// The tracker's id (GitHub repository id, GitLab project id).
    pub project_id: String,
    /// The path as the tracker spells it (`acme/sdk`, `group/sub/project`).
    pub project_path: String,
    pub visibility: relay_core::ProjectVisibility,
}
