//! An issue's Relay state, loaded in one place: the issue, its gaps with the code their evidence
//! cites, its live findings and its current spec. The orchestrator's context, the living summary,
//! the read API and the status page start from it and add what only they show.

use crate::Result;
use crate::findings::FindingRow;
use crate::gaps::{GapEvidence, GapRow};
use crate::issues::IssueRow;
use crate::specs::SpecRow;
use relay_core::IssueId;

/// What Relay keeps about one issue.
#[derive(Debug, Clone)]
pub struct IssueState {
    pub issue: IssueRow,
    pub gaps: Vec<GapRow>,
    /// The code places the gaps' evidence cites, by gap number.
    pub gap_evidence: Vec<GapEvidence>,
    /// The findings not superseded.
    pub findings: Vec<FindingRow>,
    pub spec: Option<SpecRow>,
}

/// Loads the issue's state on one connection (`None`: no such issue). Run it in a transaction
/// when the caller writes from what it read.
pub async fn load(conn: &mut sqlx::PgConnection, issue_id: IssueId) -> Result<Option<IssueState>> {
    let Some(issue) = crate::issues::get(conn, issue_id).await? else {
        return Ok(None);
    };
    let gaps = crate::gaps::list(conn, issue_id).await?;
    let gap_evidence = crate::gaps::evidence_sources(conn, issue_id).await?;
    let findings = crate::findings::live(conn, issue_id).await?;
    let spec = crate::specs::current(conn, issue_id).await?;
    Ok(Some(IssueState {
        issue,
        gaps,
        gap_evidence,
        findings,
        spec,
    }))
}
