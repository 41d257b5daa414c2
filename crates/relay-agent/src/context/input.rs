//! The ContextBuilder's input: everything known about one issue, as plain data.

use chrono::{DateTime, Utc};
use relay_core::Citation;
use relay_core::action::{CloseReason, LearningKind, Respondent, Severity};
use serde::{Deserialize, Serialize};

/// One issue and what Relay knows about it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssueContext {
    pub title: String,
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub labels: Vec<String>,
    /// The issue's author.
    #[serde(default)]
    pub reporter: Option<String>,
    #[serde(default)]
    pub assignees: Vec<String>,
    /// Open gaps (any order; rendered grouped by severity).
    #[serde(default)]
    pub open_gaps: Vec<OpenGapView>,
    /// Closed gaps, oldest first (the last 10 are rendered).
    #[serde(default)]
    pub closed_gaps: Vec<ClosedGapView>,
    #[serde(default)]
    pub findings: Vec<FindingView>,
    /// The repository's learnings.
    #[serde(default)]
    pub learnings: Vec<LearningView>,
    /// The current spec, if one was written.
    #[serde(default)]
    pub spec: Option<SpecView>,
    /// The thread, oldest first (the last 100 are rendered).
    #[serde(default)]
    pub thread: Vec<ThreadNoteView>,
    /// What triggered this cycle.
    #[serde(default)]
    pub triggers: Vec<TriggerView>,
    /// Authors of triggering events who may not engage Relay: their events are context only,
    /// never an approval, a go-ahead or a gap answer.
    #[serde(default)]
    pub context_only_actors: Vec<String>,
    /// Tracker writes refused for good since the planner last decided, one line each
    /// (`FAILED: post_comment | validation failed: … | permanent`).
    #[serde(default)]
    pub failed_writes: Vec<String>,
    /// The repository's guidance (`.relay.toml` instructions, guidance files), shown first,
    /// right below the system rules, each text fenced with its origin.
    #[serde(default)]
    pub guidance: relay_core::repo_config::GuidanceText,
}

/// An open gap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenGapView {
    /// The issue-scoped short id.
    pub number: i32,
    pub question: String,
    pub severity: Severity,
    pub respondent: Respondent,
    #[serde(default)]
    pub evidence: Option<String>,
}

/// A closed gap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClosedGapView {
    pub number: i32,
    pub question: String,
    pub reason: CloseReason,
    pub note: String,
}

/// A finding with its verified sources.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindingView {
    /// The issue-scoped short id.
    pub id: i32,
    pub synthesis: String,
    #[serde(default)]
    pub sources: Vec<Citation>,
    /// A push changed the cited code: the finding may no longer hold.
    #[serde(default)]
    pub stale: bool,
}

/// A repository learning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LearningView {
    pub kind: LearningKind,
    pub content: String,
    /// Where it was drawn from (`this issue`, `another issue of this repository`).
    #[serde(default)]
    pub origin: Option<String>,
}

/// The current spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecView {
    pub version: i32,
    /// `draft`, `posted`, `approved` or `rejected`.
    pub status: String,
    pub body: String,
}

/// One comment of the thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadNoteView {
    /// The id `post_comment.reply_to` may name.
    pub note_id: String,
    /// The GitLab discussion it belongs to.
    #[serde(default)]
    pub discussion_id: Option<String>,
    pub author: String,
    /// The author's role on the project when the tracker says it (`owner`, `member`, ...).
    #[serde(default)]
    pub author_role: Option<String>,
    /// Written by Relay itself: rendered as an assistant turn.
    #[serde(default)]
    pub by_bot: bool,
    pub body: String,
    /// A GitLab internal note (project members only).
    #[serde(default)]
    pub internal: bool,
    #[serde(default)]
    pub created_at: Option<DateTime<Utc>>,
}

/// An event that triggered this cycle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TriggerView {
    /// `mention`, `comment`, `edit`, `label`, `opened`, ...
    pub kind: String,
    pub actor: String,
    /// The comment it concerns, if any.
    #[serde(default)]
    pub note_id: Option<String>,
}
