//! The living summary comment per issue: the body last enqueued and its revision, so
//! an update that would not change the body is never sent.

use relay_core::IssueId;
use sqlx::PgConnection;

use crate::Result;

/// The outbox key of the issue's summary comment (its first post; also its marker).
pub fn post_key(issue_id: IssueId) -> String {
    format!("summary-i{issue_id}")
}

/// The outbox key of revision `revision` of the summary, an edit of the posted comment.
pub fn edit_key(issue_id: IssueId, revision: i32) -> String {
    format!("{}-r{revision}", post_key(issue_id))
}

/// Whether `key` is a write of the issue's summary (its post or an edit): each one replaces the
/// comment's whole text, so only the newest may reach the tracker.
pub fn is_summary_write(issue_id: IssueId, key: &str) -> bool {
    let post = post_key(issue_id);
    key == post
        || key
            .strip_prefix(&post)
            .and_then(|rest| rest.strip_prefix("-r"))
            .is_some_and(|revision| revision.parse::<i32>().is_ok())
}

/// What was last enqueued for an issue's summary.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SummaryRow {
    pub issue_id: IssueId,
    pub body: String,
    pub revision: i32,
}

/// The issue's summary state, locked for the caller's transaction (one writer at a time).
pub async fn get_for_update(
    conn: &mut PgConnection,
    issue_id: IssueId,
) -> Result<Option<SummaryRow>> {
    Ok(sqlx::query_as(
        "SELECT issue_id, body, revision FROM issue_summaries WHERE issue_id = $1 FOR UPDATE",
    )
    .bind(issue_id)
    .fetch_optional(conn)
    .await?)
}

/// Records the body enqueued as `revision`.
pub async fn save(
    conn: &mut PgConnection,
    issue_id: IssueId,
    body: &str,
    revision: i32,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO issue_summaries (issue_id, body, revision) VALUES ($1, $2, $3)
         ON CONFLICT (issue_id) DO UPDATE SET body = $2, revision = $3, updated_at = now()",
    )
    .bind(issue_id)
    .bind(body)
    .bind(revision)
    .execute(conn)
    .await?;
    Ok(())
}

/// Replaces the body of a write that no attempt has started yet (so it cannot be on the tracker
/// in another form); `false` when the write is sent, failed or in flight. The body goes through
/// the outbox's one door (`outbox::outgoing_body`: the secret scrub).
pub async fn rewrite_unsent(
    conn: &mut PgConnection,
    idempotency_key: &str,
    body: &str,
) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE outbox SET body = $2, updated_at = now()
         WHERE idempotency_key = $1 AND status = 'pending' AND NOT maybe_sent",
    )
    .bind(idempotency_key)
    .bind(crate::outbox::outgoing_body(idempotency_key, None, body).as_ref())
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Puts a post the tracker refused for good back in the queue with `body`: pending, due now, its
/// attempts counted afresh (the refusal may have been fixed since, a permission granted); `false`
/// when the write is not refused. The body goes through the outbox's one door
/// (`outbox::outgoing_body`: the secret scrub).
pub async fn rearm_refused(
    conn: &mut PgConnection,
    idempotency_key: &str,
    body: &str,
) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE outbox SET status = 'pending', body = $2, attempts = 0, next_attempt_at = now(),
                last_error = NULL, failure_shown_at = NULL, updated_at = now()
         WHERE idempotency_key = $1 AND status = 'failed'",
    )
    .bind(idempotency_key)
    .bind(crate::outbox::outgoing_body(idempotency_key, None, body).as_ref())
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}
