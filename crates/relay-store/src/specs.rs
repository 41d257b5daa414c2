//! Specs: versioned per issue, with their status and the tracker notes they were posted as.

use chrono::{DateTime, Utc};
use relay_core::SpecId;
use relay_core::{IssueId, JobId};
use sqlx::PgConnection;

use crate::Result;

/// A stored spec version.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct SpecRow {
    pub id: SpecId,
    pub issue_id: IssueId,
    pub version: i32,
    pub body: String,
    /// `draft`, `posted`, `approved` or `rejected`.
    pub status: String,
    pub note: Option<String>,
    pub note_ids: Vec<String>,
    pub created_by_run: Option<JobId>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

const COLUMNS: &str =
    "id, issue_id, version, body, status, note, note_ids, created_by_run, created_at, updated_at";

/// Stores a new draft version (the next version number of the issue).
pub async fn insert_draft(
    conn: &mut PgConnection,
    issue_id: IssueId,
    body: &str,
    run: Option<JobId>,
) -> Result<SpecRow> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "INSERT INTO specs (issue_id, version, body, created_by_run)
         SELECT $1, coalesce(max(version), 0) + 1, $2, $3 FROM specs WHERE issue_id = $1
         RETURNING {COLUMNS}"
    )))
    .bind(issue_id)
    .bind(body)
    .bind(run)
    .fetch_one(conn)
    .await?)
}

/// The latest version of the issue's spec.
pub async fn current(conn: &mut PgConnection, issue_id: IssueId) -> Result<Option<SpecRow>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM specs WHERE issue_id = $1 ORDER BY version DESC LIMIT 1"
    )))
    .bind(issue_id)
    .fetch_optional(conn)
    .await?)
}

/// Version `version` of the issue's spec.
pub async fn by_version(
    conn: &mut PgConnection,
    issue_id: IssueId,
    version: i32,
) -> Result<Option<SpecRow>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM specs WHERE issue_id = $1 AND version = $2"
    )))
    .bind(issue_id)
    .bind(version)
    .fetch_optional(conn)
    .await?)
}

/// Records the notes a spec was posted as and marks it `posted`.
pub async fn mark_posted(
    conn: &mut PgConnection,
    spec_id: SpecId,
    note_ids: &[String],
) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE specs SET status = 'posted', note_ids = $2, updated_at = now()
         WHERE id = $1 AND status IN ('draft', 'posted')",
    )
    .bind(spec_id)
    .bind(note_ids)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Sets a human's verdict (`approved` / `rejected`) with their note.
pub async fn set_status(
    conn: &mut PgConnection,
    spec_id: SpecId,
    status: &str,
    note: Option<&str>,
) -> Result<bool> {
    let done =
        sqlx::query("UPDATE specs SET status = $2, note = $3, updated_at = now() WHERE id = $1")
            .bind(spec_id)
            .bind(status)
            .bind(note)
            .execute(conn)
            .await?;
    Ok(done.rows_affected() == 1)
}

/// A recorded go-ahead whose spec is not written yet (`migrations/0012_spec_requests.sql`).
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct SpecRequestRow {
    pub id: i64,
    pub issue_id: IssueId,
    pub handover: serde_json::Value,
    pub job_id: Option<JobId>,
}

/// Records a go-ahead (in the batch's transaction); a pending one of the issue is replaced.
pub async fn request(
    conn: &mut PgConnection,
    issue_id: IssueId,
    handover: &serde_json::Value,
    job_id: JobId,
) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "INSERT INTO spec_requests (issue_id, handover, job_id) VALUES ($1, $2, $3)
         ON CONFLICT (issue_id) WHERE status = 'pending'
         DO UPDATE SET handover = EXCLUDED.handover, job_id = EXCLUDED.job_id, updated_at = now()
         RETURNING id",
    )
    .bind(issue_id)
    .bind(handover)
    .bind(job_id)
    .fetch_one(conn)
    .await?)
}

/// The issue's pending go-ahead, if any.
pub async fn pending_request(
    conn: &mut PgConnection,
    issue_id: IssueId,
) -> Result<Option<SpecRequestRow>> {
    Ok(sqlx::query_as(
        "SELECT id, issue_id, handover, job_id FROM spec_requests
         WHERE issue_id = $1 AND status = 'pending'",
    )
    .bind(issue_id)
    .fetch_optional(conn)
    .await?)
}

/// Ends a request: `written` (in the transaction that stores the spec) or `failed` (with why).
pub async fn finish_request(
    conn: &mut PgConnection,
    id: i64,
    outcome: SpecRequestOutcome,
    error: Option<&str>,
) -> Result<()> {
    sqlx::query(
        "UPDATE spec_requests SET status = $2, last_error = $3, updated_at = now()
         WHERE id = $1 AND status = 'pending'",
    )
    .bind(id)
    .bind(outcome.as_str())
    .bind(error)
    .execute(conn)
    .await?;
    Ok(())
}

/// How a go-ahead ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecRequestOutcome {
    Written,
    Failed,
}

impl SpecRequestOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            SpecRequestOutcome::Written => "written",
            SpecRequestOutcome::Failed => "failed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::PgPool;

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn versions_post_and_verdict(pool: PgPool) {
        let mut conn = pool.acquire().await.unwrap();
        assert!(
            current(&mut conn, relay_core::IssueId(1))
                .await
                .unwrap()
                .is_none()
        );
        let v1 = insert_draft(
            &mut conn,
            relay_core::IssueId(1),
            "spec one",
            Some(relay_core::JobId(4)),
        )
        .await
        .unwrap();
        let v2 = insert_draft(
            &mut conn,
            relay_core::IssueId(1),
            "spec two",
            Some(relay_core::JobId(5)),
        )
        .await
        .unwrap();
        assert_eq!((v1.version, v2.version), (1, 2));
        assert_eq!(v2.status, "draft");

        let notes = vec!["100".to_string(), "101".to_string()];
        assert!(mark_posted(&mut conn, v2.id, &notes).await.unwrap());
        let posted = current(&mut conn, relay_core::IssueId(1))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(posted.status, "posted");
        assert_eq!(posted.note_ids, notes);

        assert!(
            set_status(&mut conn, v2.id, "approved", Some("lgtm"))
                .await
                .unwrap()
        );
        let approved = current(&mut conn, relay_core::IssueId(1))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (approved.status.as_str(), approved.note.as_deref()),
            ("approved", Some("lgtm"))
        );
        // An approved spec is not re-marked as posted.
        assert!(!mark_posted(&mut conn, v2.id, &notes).await.unwrap());
        assert!(set_status(&mut conn, v2.id, "bogus", None).await.is_err());
    }
}
