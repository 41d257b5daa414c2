//! The parts of GitHub's REST JSON Relay reads. Unknown fields are ignored and optional ones
//! defaulted: GitHub adds fields over time.

use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::AuthorRole;

#[derive(Debug, Deserialize)]
pub(crate) struct User {
    pub login: String,
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Label {
    pub name: String,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Issue {
    pub number: i64,
    pub title: String,
    #[serde(default)]
    pub body: Option<String>,
    pub state: String,
    #[serde(default)]
    pub labels: Vec<Label>,
    #[serde(default)]
    pub user: Option<User>,
    #[serde(default)]
    pub assignees: Vec<User>,
    pub html_url: String,
    pub updated_at: DateTime<Utc>,
    #[serde(default)]
    pub created_at: Option<DateTime<Utc>>,
    /// Present on pull requests (GitHub lists them among the issues).
    #[serde(default)]
    pub pull_request: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Comment {
    pub id: i64,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub user: Option<User>,
    pub html_url: String,
    /// `https://api.github.com/repos/o/r/issues/N`: which issue the comment belongs to.
    pub issue_url: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    #[serde(default)]
    pub author_association: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct InstallationToken {
    pub token: String,
    pub expires_at: DateTime<Utc>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Installation {
    pub id: i64,
}

#[derive(Debug, Deserialize)]
pub(crate) struct App {
    pub slug: String,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Permission {
    pub permission: String,
}

/// `author_association` → [`AuthorRole`].
pub(crate) fn association_role(association: &str) -> AuthorRole {
    match association {
        "OWNER" => AuthorRole::Owner,
        "MEMBER" => AuthorRole::Member,
        "COLLABORATOR" => AuthorRole::Collaborator,
        "CONTRIBUTOR" | "FIRST_TIME_CONTRIBUTOR" | "FIRST_TIMER" => AuthorRole::Contributor,
        _ => AuthorRole::None,
    }
}

/// A collaborator permission (`GET /repos/o/r/collaborators/u/permission`) → [`AuthorRole`].
pub(crate) fn permission_role(permission: &str) -> AuthorRole {
    match permission {
        "admin" => AuthorRole::Owner,
        "maintain" | "write" => AuthorRole::Member,
        "triage" => AuthorRole::Collaborator,
        "read" => AuthorRole::Contributor,
        _ => AuthorRole::None,
    }
}

/// `GET /repos/{owner}/{repo}`: what a related repository's admission reads.
#[derive(Debug, Deserialize)]
pub(crate) struct Repository {
    pub id: i64,
    pub full_name: String,
    /// `true` for private and internal repositories.
    #[serde(default)]
    pub private: bool,
    /// `public`, `private` or `internal` (GitHub Enterprise); older servers omit it.
    #[serde(default)]
    pub visibility: Option<String>,
}

impl Repository {
    /// What it says, the more private reading when `visibility` and `private` disagree or
    /// `visibility` is unknown.
    pub fn visibility(&self) -> relay_core::ProjectVisibility {
        use relay_core::ProjectVisibility;
        match (self.visibility.as_deref(), self.private) {
            (Some("public"), false) => ProjectVisibility::Public,
            (Some("internal"), _) => ProjectVisibility::Internal,
            (None, false) => ProjectVisibility::Public,
            _ => ProjectVisibility::Private,
        }
    }
}
