//! Gaps: the open questions of an issue, numbered per issue (`gap 3`). Written by the action
//! executor inside its batch transaction; read by the validator and the read API.

use chrono::{DateTime, Utc};
use relay_core::IssueId;
use relay_core::JobId;
use sqlx::PgConnection;

use crate::Result;
use crate::findings::{Position, SourceRow, SourceStatus};

/// A stored gap.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct GapRow {
    pub id: i64,
    pub issue_id: IssueId,
    /// The issue-scoped short number people and the planner see.
    pub number: i32,
    pub question: String,
    /// `blocking`, `high`, `medium` or `low`.
    pub severity: String,
    /// `reporter` or `assignee`.
    pub respondent: String,
    pub evidence: Option<String>,
    /// `open` or `closed`.
    pub status: String,
    /// `answered`, `inferred` or `not_relevant` once closed.
    pub close_reason: Option<String>,
    pub close_note: Option<String>,
    pub opened_by_run: Option<JobId>,
    pub closed_by_run: Option<JobId>,
    pub created_at: DateTime<Utc>,
    pub closed_at: Option<DateTime<Utc>>,
}

impl GapRow {
    pub fn is_open(&self) -> bool {
        self.status == "open"
    }
}

/// A gap to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGapRow<'a> {
    pub question: &'a str,
    pub severity: &'a str,
    pub respondent: &'a str,
    pub evidence: Option<&'a str>,
    /// `jobs.id` of the run that opens it.
    pub run: Option<JobId>,
}

/// How a gap is closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GapClosure<'a> {
    pub reason: &'a str,
    pub note: &'a str,
    pub run: Option<JobId>,
}

const COLUMNS: &str = "id, issue_id, number, question, severity, respondent, evidence, status, \
     close_reason, close_note, opened_by_run, closed_by_run, created_at, closed_at";

/// Every gap of an issue, by number.
pub async fn list(conn: &mut PgConnection, issue_id: IssueId) -> Result<Vec<GapRow>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM gaps WHERE issue_id = $1 ORDER BY number"
    )))
    .bind(issue_id)
    .fetch_all(conn)
    .await?)
}

/// Opens a gap with the next free number of the issue. Jobs of one issue never run concurrently
/// (the queue's concurrency key), and the `(issue_id, number)` key refuses a racing duplicate.
pub async fn open(
    conn: &mut PgConnection,
    issue_id: IssueId,
    gap: &NewGapRow<'_>,
) -> Result<GapRow> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "INSERT INTO gaps (issue_id, number, question, severity, respondent, evidence, opened_by_run)
         SELECT $1, coalesce(max(number), 0) + 1, $2, $3, $4, $5, $6 FROM gaps WHERE issue_id = $1
         RETURNING {COLUMNS}"
    )))
    .bind(issue_id)
    .bind(gap.question)
    .bind(gap.severity)
    .bind(gap.respondent)
    .bind(gap.evidence)
    .bind(gap.run)
    .fetch_one(conn)
    .await?)
}

/// Marks a gap as opened with a GitLab internal note in context (migration 0086).
pub async fn mark_internal(conn: &mut PgConnection, gap_id: i64) -> Result<()> {
    sqlx::query("UPDATE gaps SET internal = true WHERE id = $1")
        .bind(gap_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// The numbers of the issue's gaps marked internal ([`mark_internal`]).
pub async fn internal_numbers(conn: &mut PgConnection, issue_id: IssueId) -> Result<Vec<i32>> {
    Ok(sqlx::query_scalar(
        "SELECT number FROM gaps WHERE issue_id = $1 AND internal ORDER BY number",
    )
    .bind(issue_id)
    .fetch_all(conn)
    .await?)
}

/// Records the code places a gap's evidence cites, each at the commit it was verified at.
pub async fn add_evidence_sources(
    conn: &mut PgConnection,
    gap_id: i64,
    sources: &[EvidencePlace<'_>],
) -> Result<()> {
    for (position, source) in sources.iter().enumerate() {
        sqlx::query(
            "INSERT INTO gap_sources (gap_id, position, path, start_line, end_line, commit_sha)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(gap_id)
        .bind(position as i32)
        .bind(&source.place.path)
        .bind(source.place.start_line)
        .bind(source.place.end_line)
        .bind(source.commit_sha)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// A place a gap's evidence cites and the commit it was verified at (a related repository's
/// place, `owner/name:path`, at that repository's commit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvidencePlace<'a> {
    pub place: &'a Position,
    pub commit_sha: &'a str,
}

/// One code place a gap's evidence cites, with its re-verification state.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GapEvidence {
    pub gap_number: i32,
    #[serde(flatten)]
    pub source: SourceRow,
}

/// The places one gap's evidence cites, read from the issue's [`evidence_sources`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GapSources<'a> {
    pub sources: Vec<&'a SourceRow>,
}

impl<'a> GapSources<'a> {
    /// The sources of gap `number` among the issue's `evidence`.
    pub fn of(evidence: &'a [GapEvidence], number: i32) -> GapSources<'a> {
        GapSources {
            sources: evidence
                .iter()
                .filter(|e| e.gap_number == number)
                .map(|e| &e.source)
                .collect(),
        }
    }

    /// A push found the code one of them cites changed.
    pub fn stale(&self) -> bool {
        self.sources.iter().any(|s| s.status == SourceStatus::Stale)
    }
}

/// The evidence sources of the issue's gaps, by gap number and position.
pub async fn evidence_sources(
    conn: &mut PgConnection,
    issue_id: IssueId,
) -> Result<Vec<GapEvidence>> {
    // A source under the project's re-verification watermark stands verified at its commit.
    let rows: Vec<GapSourceRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT g.number AS gap_number, s.path, s.start_line, s.end_line,
                {} AS commit_sha, s.status, s.moved_from_path, s.moved_from_start,
                s.moved_from_end
         FROM gaps g JOIN gap_sources s ON s.gap_id = g.id
         LEFT JOIN issues i ON i.id = $1
         LEFT JOIN reverify_watermarks w ON w.tracker = i.tracker AND w.project_id = i.project_id
         WHERE g.issue_id = $1 ORDER BY g.number, s.position",
        crate::reverify::EFFECTIVE_COMMIT
    )))
    .bind(issue_id)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(GapSourceRow::into_evidence).collect())
}

#[derive(sqlx::FromRow)]
struct GapSourceRow {
    gap_number: i32,
    path: String,
    start_line: i32,
    end_line: i32,
    commit_sha: String,
    status: String,
    moved_from_path: Option<String>,
    moved_from_start: Option<i32>,
    moved_from_end: Option<i32>,
}

impl GapSourceRow {
    fn into_evidence(self) -> GapEvidence {
        let moved_from = match (
            self.moved_from_path,
            self.moved_from_start,
            self.moved_from_end,
        ) {
            (Some(path), Some(start_line), Some(end_line)) => Some(Position {
                path,
                start_line,
                end_line,
            }),
            _ => None,
        };
        GapEvidence {
            gap_number: self.gap_number,
            source: SourceRow {
                path: self.path,
                start_line: self.start_line,
                end_line: self.end_line,
                quote: None,
                commit_sha: self.commit_sha,
                status: SourceStatus::parse(&self.status),
                moved_from,
            },
        }
    }
}

/// Closes an open gap; `false` when the issue has no open gap with that number.
pub async fn close(
    conn: &mut PgConnection,
    issue_id: IssueId,
    number: i32,
    closure: &GapClosure<'_>,
) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE gaps SET status = 'closed', close_reason = $3, close_note = $4,
                closed_by_run = $5, closed_at = now()
         WHERE issue_id = $1 AND number = $2 AND status = 'open'",
    )
    .bind(issue_id)
    .bind(number)
    .bind(closure.reason)
    .bind(closure.note)
    .bind(closure.run)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::PgPool;

    fn gap(question: &str) -> NewGapRow<'_> {
        NewGapRow {
            question,
            severity: "blocking",
            respondent: "reporter",
            evidence: Some("the handler ignores it"),
            run: Some(relay_core::JobId(7)),
        }
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn numbers_are_per_issue_and_closing_is_once(pool: PgPool) {
        let mut conn = pool.acquire().await.unwrap();
        let first = open(&mut conn, relay_core::IssueId(1), &gap("which db?"))
            .await
            .unwrap();
        let second = open(&mut conn, relay_core::IssueId(1), &gap("which port?"))
            .await
            .unwrap();
        let other = open(&mut conn, relay_core::IssueId(2), &gap("which os?"))
            .await
            .unwrap();
        assert_eq!((first.number, second.number, other.number), (1, 2, 1));
        assert!(first.is_open());
        assert_eq!(first.evidence.as_deref(), Some("the handler ignores it"));

        let closure = GapClosure {
            reason: "answered",
            note: "postgres",
            run: Some(relay_core::JobId(8)),
        };
        assert!(
            close(&mut conn, relay_core::IssueId(1), 1, &closure)
                .await
                .unwrap()
        );
        assert!(
            !close(&mut conn, relay_core::IssueId(1), 1, &closure)
                .await
                .unwrap(),
            "already closed"
        );
        assert!(
            !close(&mut conn, relay_core::IssueId(1), 9, &closure)
                .await
                .unwrap(),
            "no such gap"
        );

        let gaps = list(&mut conn, relay_core::IssueId(1)).await.unwrap();
        assert_eq!(gaps.len(), 2);
        assert_eq!(gaps[0].status, "closed");
        assert_eq!(gaps[0].close_reason.as_deref(), Some("answered"));
        assert_eq!(gaps[0].close_note.as_deref(), Some("postgres"));
        assert_eq!(gaps[0].closed_by_run, Some(JobId(8)));
        assert!(gaps[0].closed_at.is_some());
        assert!(gaps[1].is_open());
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn invalid_values_are_refused_by_the_schema(pool: PgPool) {
        let mut conn = pool.acquire().await.unwrap();
        let bad = NewGapRow {
            severity: "urgent",
            ..gap("q")
        };
        assert!(open(&mut conn, relay_core::IssueId(1), &bad).await.is_err());
    }
}
