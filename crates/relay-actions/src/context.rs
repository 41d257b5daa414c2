//! [`ValidationContext`]: what the validator checks a batch against, loaded once per planner turn.

use relay_core::IssueId;
use relay_core::ProjectVisibility;
use relay_core::SpecId;
use relay_core::action::Severity;
use relay_store::PgConnection;
use relay_store::findings::FindingRow;
use relay_store::gaps::GapRow;
use relay_store::issues::IssueRow;
use relay_store::specs::SpecRow;
use relay_tools::sandbox::Sandbox;
use relay_tools::{RelatedSandbox, SandboxSet};

use crate::authority::Authority;
use crate::{Error, Result};

/// The checkout the job explored: findings' sources are verified against it (a place
/// `label:path` against that related repository's checkout).
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub sandbox: Sandbox,
    /// The commit the checkout is at; stored with every verified source in it.
    pub commit_sha: String,
    /// The related repositories checked out for the job (distinct labels).
    pub related: Vec<RelatedSnapshot>,
}

/// A related repository's checkout: sources in it are written `label:path`, verified here and
/// stored with its commit.
#[derive(Debug, Clone)]
pub struct RelatedSnapshot {
    /// The repository's tracker path (`acme/sdk`, GitLab `group/sub/project`).
    pub label: String,
    pub sandbox: Sandbox,
    /// The commit its checkout is at; stored with every verified source in it.
    pub commit_sha: String,
    /// Who can see it: a place of a repository more private than the issue is refused.
    pub visibility: ProjectVisibility,
}

impl Snapshot {
    /// The issue's checkout with no related repository.
    pub fn new(sandbox: Sandbox, commit_sha: impl Into<String>) -> Snapshot {
        Snapshot {
            sandbox,
            commit_sha: commit_sha.into(),
            related: Vec::new(),
        }
    }

    /// Every checkout a source may cite.
    pub fn sandboxes(&self) -> SandboxSet {
        SandboxSet {
            primary: self.sandbox.clone(),
            related: self
                .related
                .iter()
                .map(|r| RelatedSandbox {
                    label: r.label.clone(),
                    sandbox: r.sandbox.clone(),
                })
                .collect(),
        }
    }

    /// The commit a source in repository `label` (`None`: the issue's own) is verified at.
    pub fn commit_of(&self, label: Option<&str>) -> &str {
        label
            .and_then(|label| self.related.iter().find(|r| r.label == label))
            .map_or(self.commit_sha.as_str(), |r| r.commit_sha.as_str())
    }
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
    pub id: SpecId,
    pub version: i32,
    /// `draft`, `posted`, `approved` or `rejected`.
    pub status: String,
}

/// Everything a batch is validated against. Build it with [`ValidationContext::load`], or by hand
/// in tests; every field is plain data.
#[derive(Debug, Clone)]
pub struct ValidationContext {
    /// `issues.id`: the only issue this batch can touch.
    pub issue_id: IssueId,
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
    /// Who can see the issue: its project's visibility, `private` when the issue is confidential.
    /// No place of a related repository more private than this may appear in what is written.
    pub visibility: ProjectVisibility,
    /// The planner's context held a GitLab internal note: the gaps and findings this cycle opens
    /// are marked internal, and the public living summary leaves them out.
    pub internal_context: bool,
    /// Where this cycle's learnings come from (the triggering note, the guidance in effect).
    pub provenance: LearningProvenance,
    /// The gaps' questions and the live findings' words: a batch may not add one again.
    pub existing: Existing,
}

/// What the issue already holds, as a duplicate is compared (whitespace- and case-normalised).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Existing {
    /// Every gap, open or closed: a closed gap's question is answered, not asked again.
    pub gaps: Vec<KnownGap>,
    /// The live findings.
    pub findings: Vec<KnownFinding>,
}

/// A stored gap's number and question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownGap {
    pub number: i32,
    pub question: String,
}

/// A live finding's number, synthesis and sources (`path:start-end`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownFinding {
    pub number: i32,
    pub synthesis: String,
    pub sources: Vec<String>,
}

/// What a proposed learning records about where it came from, besides its issue and job.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LearningProvenance {
    /// The newest triggering note of the cycle.
    pub note_id: Option<String>,
    /// The repository guidance's digest in effect.
    pub guidance_digest: Option<String>,
}

impl ValidationContext {
    /// Loads the issue's gaps, live findings, cached thread (`issue_notes`) and current spec.
    /// Callers holding a fresher thread (just listed from the tracker) replace
    /// [`ValidationContext::thread`].
    pub async fn load(
        conn: &mut PgConnection,
        issue_id: IssueId,
        snapshot: Option<Snapshot>,
    ) -> Result<ValidationContext> {
        let issue = relay_store::issues::get(conn, issue_id)
            .await?
            .ok_or_else(|| Error::Conflict(format!("issue {issue_id} does not exist")))?;
        let gaps = relay_store::gaps::list(conn, issue_id).await?;
        let live = relay_store::findings::live(conn, issue_id).await?;
        let thread = relay_store::issues::notes(conn, issue_id)
            .await?
            .into_iter()
            .map(|n| ThreadRef {
                note_id: n.note_id,
                discussion_id: n.discussion_id,
            })
            .collect();
        let spec = relay_store::specs::current(conn, issue_id).await?;
        Ok(ValidationContext::from_rows(
            IssueRows {
                issue: &issue,
                gaps: &gaps,
                live_findings: &live,
                spec: spec.as_ref(),
                thread,
            },
            snapshot,
        ))
    }

    /// The context derived from rows the caller already loaded (the orchestrator reads the
    /// issue's state once per cycle, for the planner's context and for this one).
    pub fn from_rows(rows: IssueRows<'_>, snapshot: Option<Snapshot>) -> ValidationContext {
        let gaps = rows
            .gaps
            .iter()
            .map(|g| GapState {
                number: g.number,
                open: g.is_open(),
                // The schema's CHECK admits only the four known severities.
                severity: Severity::parse(&g.severity).unwrap_or(Severity::Blocking),
            })
            .collect();
        let live = rows.live_findings;
        let stale_findings = live.iter().filter(|f| f.stale).map(|f| f.number).collect();
        let findings = live.iter().map(|f| f.number).collect();
        let spec = rows.spec.map(|s| SpecState {
            id: s.id,
            version: s.version,
            status: s.status.clone(),
        });
        ValidationContext {
            issue_id: rows.issue.id,
            tracker: rows.issue.tracker.clone(),
            project_id: rows.issue.project_id.clone(),
            gaps,
            findings,
            stale_findings,
            thread: rows.thread,
            snapshot,
            spec,
            authority: Authority::Events {
                admitted: Vec::new(),
                refused: Vec::new(),
            },
            default_reply: None,
            private_context: rows.issue.confidential,
            visibility: issue_visibility(rows.issue),
            internal_context: false,
            provenance: LearningProvenance::default(),
            existing: Existing {
                gaps: rows
                    .gaps
                    .iter()
                    .map(|g| KnownGap {
                        number: g.number,
                        question: g.question.clone(),
                    })
                    .collect(),
                findings: live
                    .iter()
                    .map(|f| KnownFinding {
                        number: f.number,
                        synthesis: f.synthesis.clone(),
                        sources: f
                            .sources
                            .iter()
                            .map(|s| source_key(&s.path, s.start_line, s.end_line))
                            .collect(),
                    })
                    .collect(),
            },
        }
    }
}

/// Who can see an issue: `private` when it is confidential, else its project's visibility. A
/// project whose visibility is not known counts as `public`, the strictest for what may be
/// shown on it.
pub fn issue_visibility(issue: &IssueRow) -> ProjectVisibility {
    if issue.confidential {
        return ProjectVisibility::Private;
    }
    issue
        .project_visibility
        .as_deref()
        .and_then(ProjectVisibility::parse)
        .unwrap_or(ProjectVisibility::Public)
}

/// How two sources are compared: `path:start-end`, the path without a leading `./`.
pub fn source_key(
    path: &str,
    start_line: impl std::fmt::Display,
    end_line: impl std::fmt::Display,
) -> String {
    format!(
        "{}:{start_line}-{end_line}",
        path.trim().trim_start_matches("./")
    )
}

/// The issue's rows a [`ValidationContext`] is derived from.
#[derive(Debug, Clone)]
pub struct IssueRows<'a> {
    pub issue: &'a IssueRow,
    pub gaps: &'a [GapRow],
    /// The live findings (`relay_store::findings::live`).
    pub live_findings: &'a [FindingRow],
    /// The current spec version.
    pub spec: Option<&'a SpecRow>,
    /// The thread notes `reply_to` may name (freshest known).
    pub thread: Vec<ThreadRef>,
}
