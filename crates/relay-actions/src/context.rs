//! [`ValidationContext`]: what the validator checks a batch against, loaded once per planner turn.

use relay_core::action::Severity;
use relay_store::PgConnection;
use relay_tools::sandbox::Sandbox;

use crate::authority::Authority;
use crate::{Error, Result};

/// The checkout the job explored: findings' sources are verified against it.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub sandbox: Sandbox,
    /// The commit the checkout is at; stored with every verified source.
    pub commit_sha: String,
}

/// A note of this issue's thread that `reply_to` may name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadRef {
    pub note_id: String,
    /// GitLab discussion id; `None` on GitHub.
    pub discussion_id: Option<String>,
}

/// A gap as the validator needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GapState {
    pub number: i32,
    pub open: bool,
    pub severity: Severity,
}

/// The issue's current spec version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecState {
    pub id: i64,
    pub version: i32,
    /// `draft`, `posted`, `approved` or `rejected`.
    pub status: String,
}

/// Everything a batch is validated against. Build it with [`ValidationContext::load`], or by hand
/// in tests; every field is plain data.
#[derive(Debug, Clone)]
pub struct ValidationContext {
    /// `issues.id`: the only issue this batch can touch.
    pub issue_id: i64,
    /// Tracker name and project id: where learnings are kept.
    pub tracker: String,
    pub project_id: String,
    pub gaps: Vec<GapState>,
    /// Numbers of the live findings.
    pub findings: Vec<i32>,
    /// Live findings with a stale source (a push changed the cited code): a spec may not rest
    /// on them until the planner re-verifies (replaces) or removes them.
    pub stale_findings: Vec<i32>,
    /// The notes of this issue's thread (the only valid `reply_to` values).
    pub thread: Vec<ThreadRef>,
    /// `None` when the job explored no checkout: findings cannot be verified and are refused.
    pub snapshot: Option<Snapshot>,
    pub spec: Option<SpecState>,
    /// Which pending events may make Relay decide (approve, go ahead, answer a gap). `load`
    /// leaves it [`Authority::Events`] with no admitted text: the orchestrator fills it per
    /// event, so a forgotten step refuses decisions instead of admitting them.
    pub authority: Authority,
    /// Where a `post_comment` without `reply_to` goes: the triggering note's discussion when the
    /// cycle was triggered by a note in one (GitLab), so the answer lands where the asker looks;
    /// `None` (a new thread) when the trigger was the issue itself, and always on GitHub.
    pub default_reply: Option<ThreadRef>,
    /// The planner's context held text that must not leave this issue (a GitLab internal note,
    /// a confidential issue): learnings proposed from it are stored restricted to this issue.
    pub private_context: bool,
}

impl ValidationContext {
    /// Loads the issue's gaps, live findings, cached thread (`issue_notes`) and current spec.
    /// Callers holding a fresher thread (just listed from the tracker) replace
    /// [`ValidationContext::thread`].
    pub async fn load(
        conn: &mut PgConnection,
        issue_id: i64,
        snapshot: Option<Snapshot>,
    ) -> Result<ValidationContext> {
        let issue = relay_store::issues::get(conn, issue_id)
            .await?
            .ok_or_else(|| Error::Conflict(format!("issue {issue_id} does not exist")))?;
        let gaps = relay_store::gaps::list(conn, issue_id)
            .await?
            .into_iter()
            .map(|g| GapState {
                number: g.number,
                open: g.is_open(),
                // The schema's CHECK admits only the four known severities.
                severity: Severity::parse(&g.severity).unwrap_or(Severity::Blocking),
            })
            .collect();
        let live = relay_store::findings::live(conn, issue_id).await?;
        let stale_findings = live.iter().filter(|f| f.stale).map(|f| f.number).collect();
        let findings = live.into_iter().map(|f| f.number).collect();
        let thread = relay_store::issues::notes(conn, issue_id)
            .await?
            .into_iter()
            .map(|n| ThreadRef {
                note_id: n.note_id,
                discussion_id: n.discussion_id,
            })
            .collect();
        let spec = relay_store::specs::current(conn, issue_id)
            .await?
            .map(|s| SpecState {
                id: s.id,
                version: s.version,
                status: s.status,
            });
        Ok(ValidationContext {
            issue_id,
            tracker: issue.tracker,
            project_id: issue.project_id,
            gaps,
            findings,
            stale_findings,
            thread,
            snapshot,
            spec,
            authority: Authority::Events {
                admitted: Vec::new(),
                refused: Vec::new(),
            },
            default_reply: None,
            private_context: issue.confidential,
        })
    }
}
