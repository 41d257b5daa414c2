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

/// A pending issue event: an accepted delivery of the issue after its watermark (see
/// `migrations/0004_events_in_deliveries.sql`).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct IssueEventRow {
    /// The delivery's id; ids of one issue's events increase in commit order.
    pub id: i64,
    /// What engaged the bot: `mention`, `thread_reply`, `trigger_label`, `assigned`.
    pub kind: String,
    /// Who did it (empty for deliveries recorded before the actor was kept).
    pub actor: String,
    pub note_id: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// Events of the issue that no job has handled yet, oldest first.
pub async fn pending_events(conn: &mut PgConnection, issue_id: i64) -> Result<Vec<IssueEventRow>> {
    Ok(sqlx::query_as(
        "SELECT d.id, d.reason AS kind, COALESCE(d.actor, '') AS actor, d.note_id,
                d.received_at AS created_at
         FROM deliveries d
         WHERE d.issue_id = $1 AND d.outcome = 'accepted'
           AND d.id > (SELECT handled_delivery_id FROM issues WHERE id = $1)
         ORDER BY d.id",
    )
    .bind(issue_id)
    .fetch_all(conn)
    .await?)
}

/// Marks the issue's events up to and including delivery `through` as handled: later ones stay
/// pending for the follow-up job. The watermark never moves back.
pub async fn mark_events_handled(
    conn: &mut PgConnection,
    issue_id: i64,
    through: i64,
) -> Result<()> {
    sqlx::query(
        "UPDATE issues SET handled_delivery_id = $2
         WHERE id = $1 AND handled_delivery_id < $2",
    )
    .bind(issue_id)
    .bind(through)
    .execute(conn)
    .await?;
    Ok(())
}

/// Counts all events of all issues that are still pending (for tests and operators).
pub async fn count_pending_events(pool: &PgPool) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "SELECT count(*) FROM deliveries d JOIN issues i ON i.id = d.issue_id
         WHERE d.outcome = 'accepted' AND d.id > i.handled_delivery_id",
    )
    .fetch_one(pool)
    .await?)
}
