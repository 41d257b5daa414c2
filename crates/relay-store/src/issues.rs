//! The issue mirror, its thread cache (comments / notes) and pending issue events: what jobs read.
//! The gateway writes them in one statement with the delivery (see [`crate::intake`]).

use chrono::{DateTime, Utc};
use relay_core::IssueId;
use sqlx::{PgConnection, PgPool};

use crate::Result;

/// A stored issue.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct IssueRow {
    pub id: IssueId,
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
    /// The GitHub App installation that delivered the issue's webhooks (migration 0005).
    pub installation_id: Option<i64>,
    /// `public`, `internal` or `private` as the webhooks said; `None` until one did (migration 0009).
    pub project_visibility: Option<String>,
}

pub async fn get(conn: &mut PgConnection, issue_id: IssueId) -> Result<Option<IssueRow>> {
    Ok(sqlx::query_as(
        "SELECT id, tracker, project_id, project_path, number, title, body, state, labels, author,
                assignees, url, confidential, updated_at, installation_id, project_visibility
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
pub async fn notes(conn: &mut PgConnection, issue_id: IssueId) -> Result<Vec<NoteRow>> {
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
    /// The actor's numeric user id as the webhook gave it (GitLab `user.id`), when the stored
    /// payload has one: the exact key for a member lookup.
    pub actor_id: Option<i64>,
    pub note_id: Option<String>,
    pub created_at: DateTime<Utc>,
    /// For a `trigger_label` event: the trigger labels it added (`None` for other events and
    /// for deliveries recorded before migration 0098).
    pub trigger_labels: Option<Vec<String>>,
}

/// Events of the issue that no job has handled yet, oldest first.
pub async fn pending_events(
    conn: &mut PgConnection,
    issue_id: IssueId,
) -> Result<Vec<IssueEventRow>> {
    Ok(sqlx::query_as(
        "SELECT d.id, d.reason AS kind, COALESCE(d.actor, '') AS actor,
                -- Only a well-formed id: the payload is data, and a bad cast would fail the job.
                CASE WHEN d.payload->'user'->>'id' ~ '^[0-9]{1,18}$'
                     THEN (d.payload->'user'->>'id')::bigint END AS actor_id,
                d.note_id, d.received_at AS created_at, d.trigger_labels
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
    issue_id: IssueId,
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

/// Whether someone mentioned the bot on the issue (an accepted `mention` delivery) after
/// delivery `after`, handled or not.
pub async fn mentioned_after(
    conn: &mut PgConnection,
    issue_id: IssueId,
    after: i64,
) -> Result<bool> {
    Ok(sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM deliveries
                        WHERE issue_id = $1 AND outcome = 'accepted' AND reason = 'mention'
                          AND id > $2)",
    )
    .bind(issue_id)
    .bind(after)
    .fetch_one(conn)
    .await?)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Migration 0004 keeps every pending event of a database written by earlier versions: pending
    /// `issue_events` stay pending (as deliveries above the watermark), processed ones do not come
    /// back.
    #[sqlx::test(migrations = false)]
    async fn migration_0004_keeps_pending_events(pool: PgPool) {
        for sql in [
            include_str!("../../../migrations/0001_foundation.sql"),
            include_str!("../../../migrations/0002_llm_usage.sql"),
            include_str!("../../../migrations/0003_codegraph.sql"),
        ] {
            sqlx::raw_sql(sql).execute(&pool).await.unwrap();
        }
        sqlx::raw_sql(
            "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
             VALUES ('github', '1', 'o/r', 1, 'handled', 'open', 'a', 'u', now()),
                    ('github', '1', 'o/r', 2, 'partly', 'open', 'a', 'u', now()),
                    ('github', '1', 'o/r', 3, 'quiet', 'open', 'a', 'u', now());
             INSERT INTO deliveries (tracker, event_type, delivery_key, outcome, reason, payload, issue_id)
             VALUES ('github', 'issue_comment', 'd1', 'accepted', 'mention', '{}', 1),
                    ('github', 'issue_comment', 'd2', 'accepted', 'mention', '{}', 2),
                    ('github', 'issue_comment', 'd3', 'accepted', 'thread_reply', '{}', 2),
                    ('github', 'issue_comment', 'd4', 'ignored', 'no_mention', '{}', 3);
             INSERT INTO issue_events (issue_id, delivery_id, kind, actor, note_id, processed_at)
             VALUES (1, 1, 'mention', 'alice', 'n1', now()),
                    (2, 2, 'mention', 'bob', 'n2', now()),
                    (2, 3, 'thread_reply', 'carol', 'n3', NULL);",
        )
        .execute(&pool)
        .await
        .unwrap();

        sqlx::raw_sql(include_str!(
            "../../../migrations/0004_events_in_deliveries.sql"
        ))
        .execute(&pool)
        .await
        .unwrap();
        // The queries below are today's: bring the schema up to date after the move under test.
        for migration in crate::MIGRATOR.iter().filter(|m| m.version > 4) {
            sqlx::raw_sql(migration.sql.clone())
                .execute(&pool)
                .await
                .unwrap_or_else(|e| panic!("migration {}: {e}", migration.version));
        }

        assert_eq!(count_pending_events(&pool).await.unwrap(), 1);
        let mut conn = pool.acquire().await.unwrap();
        assert!(
            pending_events(&mut conn, relay_core::IssueId(1))
                .await
                .unwrap()
                .is_empty()
        );
        assert!(
            pending_events(&mut conn, relay_core::IssueId(3))
                .await
                .unwrap()
                .is_empty()
        );
        let pending = pending_events(&mut conn, relay_core::IssueId(2))
            .await
            .unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(
            (
                pending[0].id,
                pending[0].kind.as_str(),
                pending[0].actor.as_str()
            ),
            (3, "thread_reply", "carol")
        );
        assert_eq!(pending[0].note_id.as_deref(), Some("n3"));

        // Handling it moves the watermark past it; it never moves back.
        mark_events_handled(&mut conn, relay_core::IssueId(2), 3)
            .await
            .unwrap();
        mark_events_handled(&mut conn, relay_core::IssueId(2), 2)
            .await
            .unwrap();
        assert_eq!(count_pending_events(&pool).await.unwrap(), 0);
    }
}
