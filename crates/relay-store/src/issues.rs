//! The issue mirror, its thread cache (comments / notes) and pending issue events: what jobs read.
//! The gateway writes them in one statement with the delivery (see [`crate::intake`]).

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};

use crate::Result;

/// A stored issue.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct IssueRow {
    pub id: i64,
    pub tracker: String,
    pub project_id: String,
    pub project_path: String,
    pub number: i64,
    pub title: String,
    pub body: String,
    pub state: String,
    pub labels: Vec<String>,
    pub author: String,
    pub assignees: Vec<String>,
    pub url: String,
    pub confidential: bool,
    pub updated_at: DateTime<Utc>,
}

pub async fn get(conn: &mut PgConnection, issue_id: i64) -> Result<Option<IssueRow>> {
    Ok(sqlx::query_as(
        "SELECT id, tracker, project_id, project_path, number, title, body, state, labels, author,
                assignees, url, confidential, updated_at
         FROM issues WHERE id = $1",
    )
    .bind(issue_id)
    .fetch_optional(conn)
    .await?)
}

/// A cached note.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct NoteRow {
    pub note_id: String,
    pub discussion_id: Option<String>,
    pub author: String,
    pub body: String,
    pub internal: bool,
    pub created_at: DateTime<Utc>,
}

/// The issue's cached thread, oldest first.
pub async fn notes(conn: &mut PgConnection, issue_id: i64) -> Result<Vec<NoteRow>> {
    Ok(sqlx::query_as(
        "SELECT note_id, discussion_id, author, body, internal, created_at
         FROM issue_notes WHERE issue_id = $1 ORDER BY created_at, note_id",
    )
    .bind(issue_id)
    .fetch_all(conn)
    .await?)
}

/// A pending (unprocessed) issue event.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct IssueEventRow {
    pub id: i64,
    pub kind: String,
    pub actor: String,
    pub note_id: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// Events of the issue that no job has processed yet, oldest first.
pub async fn pending_events(conn: &mut PgConnection, issue_id: i64) -> Result<Vec<IssueEventRow>> {
    Ok(sqlx::query_as(
        "SELECT id, kind, actor, note_id, created_at FROM issue_events
         WHERE issue_id = $1 AND processed_at IS NULL ORDER BY id",
    )
    .bind(issue_id)
    .fetch_all(conn)
    .await?)
}

/// Marks exactly these events as processed by `job_id` (events that arrived later stay pending).
pub async fn mark_events_processed(
    conn: &mut PgConnection,
    event_ids: &[i64],
    job_id: i64,
) -> Result<u64> {
    let result = sqlx::query(
        "UPDATE issue_events SET processed_at = now(), processed_by = $2
         WHERE id = ANY($1) AND processed_at IS NULL",
    )
    .bind(event_ids)
    .bind(job_id)
    .execute(conn)
    .await?;
    Ok(result.rows_affected())
}

/// Counts all events of all issues that are still pending (for tests and operators).
pub async fn count_pending_events(pool: &PgPool) -> Result<i64> {
    Ok(
        sqlx::query_scalar("SELECT count(*) FROM issue_events WHERE processed_at IS NULL")
            .fetch_one(pool)
            .await?,
    )
}
