//! Gaps: the open questions of an issue, numbered per issue (`gap 3`). Written by the action
//! executor inside its batch transaction; read by the validator and the read API.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;

use crate::Result;

/// A stored gap.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct GapRow {
    pub id: i64,
    pub issue_id: i64,
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
    pub opened_by_run: Option<i64>,
    pub closed_by_run: Option<i64>,
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
    pub run: Option<i64>,
}

/// How a gap is closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GapClosure<'a> {
    pub reason: &'a str,
    pub note: &'a str,
    pub run: Option<i64>,
}

const COLUMNS: &str = "id, issue_id, number, question, severity, respondent, evidence, status, \
     close_reason, close_note, opened_by_run, closed_by_run, created_at, closed_at";

/// Every gap of an issue, by number.
pub async fn list(conn: &mut PgConnection, issue_id: i64) -> Result<Vec<GapRow>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM gaps WHERE issue_id = $1 ORDER BY number"
    )))
    .bind(issue_id)
    .fetch_all(conn)
    .await?)
}

/// Opens a gap with the next free number of the issue. Jobs of one issue never run concurrently
/// (the queue's concurrency key), and the `(issue_id, number)` key refuses a racing duplicate.
pub async fn open(conn: &mut PgConnection, issue_id: i64, gap: &NewGapRow<'_>) -> Result<GapRow> {
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

/// Closes an open gap; `false` when the issue has no open gap with that number.
pub async fn close(
    conn: &mut PgConnection,
    issue_id: i64,
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
            run: Some(7),
        }
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn numbers_are_per_issue_and_closing_is_once(pool: PgPool) {
        let mut conn = pool.acquire().await.unwrap();
        let first = open(&mut conn, 1, &gap("which db?")).await.unwrap();
        let second = open(&mut conn, 1, &gap("which port?")).await.unwrap();
        let other = open(&mut conn, 2, &gap("which os?")).await.unwrap();
        assert_eq!((first.number, second.number, other.number), (1, 2, 1));
        assert!(first.is_open());
        assert_eq!(first.evidence.as_deref(), Some("the handler ignores it"));

        let closure = GapClosure {
            reason: "answered",
            note: "postgres",
            run: Some(8),
        };
        assert!(close(&mut conn, 1, 1, &closure).await.unwrap());
        assert!(
            !close(&mut conn, 1, 1, &closure).await.unwrap(),
            "already closed"
        );
        assert!(
            !close(&mut conn, 1, 9, &closure).await.unwrap(),
            "no such gap"
        );

        let gaps = list(&mut conn, 1).await.unwrap();
        assert_eq!(gaps.len(), 2);
        assert_eq!(gaps[0].status, "closed");
        assert_eq!(gaps[0].close_reason.as_deref(), Some("answered"));
        assert_eq!(gaps[0].close_note.as_deref(), Some("postgres"));
        assert_eq!(gaps[0].closed_by_run, Some(8));
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
        assert!(open(&mut conn, 1, &bad).await.is_err());
    }
}
