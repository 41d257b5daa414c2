//! The issue mirror, its thread cache (comments / notes) and pending issue events.

use chrono::{DateTime, Utc};
use relay_core::{IssueSnapshot, NoteSnapshot};
use sqlx::{PgConnection, PgPool};

use crate::Result;

/// Inserts or refreshes an issue; an older snapshot never overwrites a newer one.
/// Returns the issue's id.
pub async fn upsert(conn: &mut PgConnection, tracker: &str, issue: &IssueSnapshot) -> Result<i64> {
    let updated: Option<i64> = sqlx::query_scalar(
        "INSERT INTO issues (tracker, project_id, project_path, number, title, body, state, labels,
                             author, assignees, url, confidential, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, COALESCE($9, ''), COALESCE($10, '{}'), $11, $12, $13)
         ON CONFLICT (tracker, project_id, number) DO UPDATE SET
             project_path = EXCLUDED.project_path, title = EXCLUDED.title, body = EXCLUDED.body,
             state = EXCLUDED.state, labels = EXCLUDED.labels,
             author = COALESCE($9, issues.author), assignees = COALESCE($10, issues.assignees), url = EXCLUDED.url, confidential = EXCLUDED.confidential,
             updated_at = EXCLUDED.updated_at, synced_at = now()
         WHERE issues.updated_at <= EXCLUDED.updated_at
         RETURNING id",
    )
    .bind(tracker)
    .bind(&issue.project_id)
    .bind(&issue.project_path)
    .bind(issue.number)
    .bind(&issue.title)
    .bind(&issue.body)
    .bind(&issue.state)
    .bind(&issue.labels)
    .bind(&issue.author)
    .bind(&issue.assignees)
    .bind(&issue.url)
    .bind(issue.confidential)
    .bind(issue.updated_at)
    .fetch_optional(&mut *conn)
    .await?;
    if let Some(id) = updated {
        return Ok(id);
    }
    // The stored snapshot is newer; keep it.
    Ok(sqlx::query_scalar(
        "SELECT id FROM issues WHERE tracker = $1 AND project_id = $2 AND number = $3",
    )
    .bind(tracker)
    .bind(&issue.project_id)
    .bind(issue.number)
    .fetch_one(conn)
    .await?)
}

/// Inserts or refreshes a note in an issue's thread cache.
pub async fn upsert_note(
    conn: &mut PgConnection,
    issue_id: i64,
    note: &NoteSnapshot,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO issue_notes (issue_id, note_id, discussion_id, author, body, internal, url, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (issue_id, note_id) DO UPDATE SET
             discussion_id = COALESCE(EXCLUDED.discussion_id, issue_notes.discussion_id),
             body = EXCLUDED.body, internal = EXCLUDED.internal, url = EXCLUDED.url,
             updated_at = EXCLUDED.updated_at
         WHERE issue_notes.updated_at <= EXCLUDED.updated_at",
    )
    .bind(issue_id)
    .bind(&note.note_id)
    .bind(&note.discussion_id)
    .bind(&note.author)
    .bind(&note.body)
    .bind(note.internal)
    .bind(&note.url)
    .bind(note.created_at)
    .bind(note.updated_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Whether `author` has posted in the issue's thread: in the given GitLab discussion, or anywhere
/// in the issue when there is no discussion (GitHub's flat thread).
pub async fn has_posted_in_thread(
    conn: &mut PgConnection,
    issue_id: i64,
    discussion_id: Option<&str>,
    author: &str,
) -> Result<bool> {
    Ok(sqlx::query_scalar(
        "SELECT EXISTS (
             SELECT 1 FROM issue_notes
             WHERE issue_id = $1 AND lower(author) = lower($3)
               AND ($2::text IS NULL OR discussion_id = $2))",
    )
    .bind(issue_id)
    .bind(discussion_id)
    .bind(author)
    .fetch_one(conn)
    .await?)
}

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
         FROM issue_notes WHERE issue_id = $1 ORDER BY created_at, id",
    )
    .bind(issue_id)
    .fetch_all(conn)
    .await?)
}

/// An engaging event to remember until a job handles it.
#[derive(Debug, Clone)]
pub struct NewIssueEvent<'a> {
    pub issue_id: i64,
    pub delivery_id: i64,
    /// Why it engaged: `mention`, `thread_reply`, `trigger_label`, `assigned`.
    pub kind: &'a str,
    pub actor: &'a str,
    pub note_id: Option<&'a str>,
}

pub async fn insert_event(conn: &mut PgConnection, event: &NewIssueEvent<'_>) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "INSERT INTO issue_events (issue_id, delivery_id, kind, actor, note_id)
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(event.issue_id)
    .bind(event.delivery_id)
    .bind(event.kind)
    .bind(event.actor)
    .bind(event.note_id)
    .fetch_one(conn)
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

/// The stored body of an issue, if we have it (to tell whether a mention in an edit is new).
pub async fn stored_body(
    conn: &mut PgConnection,
    tracker: &str,
    project_id: &str,
    number: i64,
) -> Result<Option<String>> {
    Ok(sqlx::query_scalar(
        "SELECT body FROM issues WHERE tracker = $1 AND project_id = $2 AND number = $3",
    )
    .bind(tracker)
    .bind(project_id)
    .bind(number)
    .fetch_optional(conn)
    .await?)
}

/// The stored body of a note, if we have it.
pub async fn stored_note_body(
    conn: &mut PgConnection,
    issue_id: i64,
    note_id: &str,
) -> Result<Option<String>> {
    Ok(
        sqlx::query_scalar("SELECT body FROM issue_notes WHERE issue_id = $1 AND note_id = $2")
            .bind(issue_id)
            .bind(note_id)
            .fetch_optional(conn)
            .await?,
    )
}
