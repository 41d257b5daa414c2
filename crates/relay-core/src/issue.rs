//! Normalized issue and note snapshots, extracted from webhook payloads by the gateway
//! and persisted by the store. Provider differences end here.

use chrono::{DateTime, Utc};

/// An issue as the tracker described it at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueSnapshot {
    /// Stable project identity (GitHub repository id, GitLab project id), as text.
    pub project_id: String,
    /// Human path: `owner/repo` or `group/subgroup/project`.
    pub project_path: String,
    /// The per-project number: GitHub `issue.number`, GitLab `iid` (never the global id).
    pub number: i64,
    pub title: String,
    pub body: String,
    /// `open` or `closed`.
    pub state: String,
    pub labels: Vec<String>,
    /// `None` when the payload does not say (GitLab note hooks carry only ids); the stored value is kept.
    pub author: Option<String>,
    /// `None` when the payload does not say; the stored value is kept.
    pub assignees: Option<Vec<String>>,
    pub url: String,
    pub confidential: bool,
    pub updated_at: DateTime<Utc>,
    /// Who can see the project; `None` when the payload does not say (the stored value is kept).
    pub visibility: Option<ProjectVisibility>,
}

/// Who can see a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectVisibility {
    /// Anyone.
    Public,
    /// Any signed-in user of the instance (GitLab `internal`, GitHub Enterprise `internal`).
    Internal,
    /// Members only.
    Private,
}

impl ProjectVisibility {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Internal => "internal",
            Self::Private => "private",
        }
    }

    /// The stored name read back; `None` for anything else.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "public" => Some(Self::Public),
            "internal" => Some(Self::Internal),
            "private" => Some(Self::Private),
            _ => None,
        }
    }
}

/// One comment (GitHub) or note (GitLab) on an issue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteSnapshot {
    pub note_id: String,
    /// GitLab discussion id; `None` on GitHub.
    pub discussion_id: Option<String>,
    pub author: String,
    pub body: String,
    pub internal: bool,
    pub url: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}
