//! The parts of GitLab's v4 JSON Relay reads. Unknown fields are ignored.

use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::AuthorRole;

#[derive(Debug, Deserialize)]
pub(crate) struct User {
    pub username: String,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Issue {
    pub iid: i64,
    pub project_id: i64,
    pub title: String,
    #[serde(default)]
    pub description: Option<String>,
    /// `opened` or `closed`.
    pub state: String,
    #[serde(default)]
    pub labels: Vec<String>,
    #[serde(default)]
    pub author: Option<User>,
    #[serde(default)]
    pub assignees: Vec<User>,
    pub web_url: String,
    #[serde(default)]
    pub confidential: bool,
    pub updated_at: DateTime<Utc>,
    #[serde(default)]
    pub created_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Discussion {
    /// 40-hex string (docs say integer; real ids are strings).
    pub id: String,
    #[serde(default)]
    pub notes: Vec<Note>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Note {
    pub id: i64,
    #[serde(default)]
    pub body: String,
    pub author: User,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    #[serde(default)]
    pub system: bool,
    #[serde(default)]
    pub internal: bool,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Member {
    pub username: String,
    pub access_level: u32,
}

/// GitLab access levels.
pub(crate) const REPORTER: u32 = 20;
pub(crate) const MAINTAINER: u32 = 40;

/// Access level → [`AuthorRole`]: Maintainer and Owner are owners; Reporter and Developer are
/// members; Guest and below contributors.
pub(crate) fn access_role(level: u32) -> AuthorRole {
    if level >= MAINTAINER {
        AuthorRole::Owner
    } else if level >= REPORTER {
        AuthorRole::Member
    } else if level > 0 {
        AuthorRole::Contributor
    } else {
        AuthorRole::None
    }
}

/// `GET /projects/:id`: what a related repository's admission reads.
#[derive(Debug, Deserialize)]
pub(crate) struct Project {
    pub id: i64,
    pub path_with_namespace: String,
    /// `public`, `internal` or `private`; absent for a token that may not see it (then private).
    #[serde(default)]
    pub visibility: Option<String>,
}

impl Project {
    pub fn visibility(&self) -> relay_core::ProjectVisibility {
        self.visibility
            .as_deref()
            .and_then(relay_core::ProjectVisibility::parse)
            .unwrap_or(relay_core::ProjectVisibility::Private)
    }
}
