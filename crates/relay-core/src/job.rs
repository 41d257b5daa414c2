//! Job kinds and their payloads: the versioned contract between the gateway (which enqueues)
//! and workers (which run). Payloads are stored as JSONB; add fields with `#[serde(default)]`,
//! never rename or remove them.

use serde::{Deserialize, Serialize};

/// Every kind of job the queue knows. The string form is what is stored in `jobs.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobKind {
    /// Work on one issue: read it and its pending events, plan, ask, or write the spec.
    ProcessIssue,
}

impl JobKind {
    pub const ALL: [JobKind; 1] = [JobKind::ProcessIssue];

    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::ProcessIssue => "process_issue",
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
    pub issue_id: i64,
}

impl ProcessIssue {
    /// The concurrency key that serializes all work on one issue.
    pub fn concurrency_key(&self) -> String {
        format!("issue:{}", self.issue_id)
    }
}
