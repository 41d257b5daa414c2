//! Job kinds and their payloads: the versioned contract between the gateway (which enqueues)
//! and workers (which run). Payloads are stored as JSONB; add fields with `#[serde(default)]`,
//! never rename or remove them.

use crate::IssueId;
use serde::{Deserialize, Serialize};

/// Every kind of job the queue knows. The string form is what is stored in `jobs.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobKind {
    /// Work on one issue: read it and its pending events, plan, ask, or write the spec.
    ProcessIssue,
    /// Move a repository's checkout to a pushed default-branch commit (and re-index it).
    UpdateCheckout,
}

impl JobKind {
    pub const ALL: [JobKind; 2] = [JobKind::ProcessIssue, JobKind::UpdateCheckout];

    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::ProcessIssue => "process_issue",
            JobKind::UpdateCheckout => "update_checkout",
        }
    }

    pub fn parse(s: &str) -> Option<JobKind> {
        JobKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// Payload of [`JobKind::ProcessIssue`]. Version 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessIssue {
    /// `issues.id` of the issue to work on.
    pub issue_id: IssueId,
}

impl ProcessIssue {
    /// What the concurrency key of an issue's job starts with (SQL that queues the job for many
    /// issues at once appends the id itself).
    pub const KEY_PREFIX: &str = "issue:";

    /// The concurrency key that serializes all work on one issue.
    pub fn concurrency_key(&self) -> String {
        format!("{}{}", Self::KEY_PREFIX, self.issue_id)
    }
}

/// Payload of [`JobKind::UpdateCheckout`]. Version 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpdateCheckout {
    /// The configured tracker the push came from.
    pub tracker: String,
    /// Stable project id (GitHub repository id, GitLab project id).
    pub project_id: String,
    /// `owner/repo` or `group/sub/project`.
    pub project_path: String,
    /// The pushed commit (full SHA) on the default branch.
    pub commit: String,
}

impl UpdateCheckout {
    /// One updater per repository at a time; a newer push joins the queued update.
    pub fn concurrency_key(&self) -> String {
        format!("repo:{}:{}", self.tracker, self.project_id)
    }
}
