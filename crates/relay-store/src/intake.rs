//! The gateway's writes, as few round trips as possible: one read of what the payload may not say,
//! then one atomic statement that records the delivery, refreshes the issue and its thread, and
//! enqueues work.
//!
//! As few rows as possible, too: on a 2-core machine intake throughput is bounded by Postgres'
//! work per delivery, which grows with every heap tuple and index entry written. An engaging
//! delivery *is* its pending event (no separate event row; see
//! `migrations/0004_events_in_deliveries.sql`), so a mention writes the delivery, the issue row
//! (a HOT update), the note and the job (a new one, or the queued one it joins).
//!
//! Why one statement: a webhook is answered only after its writes are durable, so intake latency is
//! round trips plus one commit. A single statement is its own transaction (no BEGIN/COMMIT round
//! trips), and a redelivery makes the delivery insert fail on its unique key, which rolls back every
//! other write of that statement.

use relay_core::{BotAccount, IssueSnapshot, NoteSnapshot};
use relay_core::{DeliveryId, IssueId, JobId};
use serde_json::Value;
use sqlx::PgPool;

use crate::Result;
use crate::error::is_unique_violation;
use crate::queue::enqueue_or_join;

/// What the store knows about an issue before a delivery changes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IssueContext {
    /// The stored issue body.
    pub body: Option<String>,
    /// The bot has a note in the thread (the given discussion, or anywhere in the issue).
    pub bot_in_thread: bool,
    /// The stored body of the note being edited.
    pub note_body: Option<String>,
}

/// Reads the [`IssueContext`] for an issue (all empty when the issue is new to us).
pub async fn issue_context(
    pool: &PgPool,
    tracker: &str,
    issue: &IssueSnapshot,
    bot: &BotAccount,
    note: Option<&NoteSnapshot>,
) -> Result<IssueContext> {
    let row: Option<(String, bool, Option<String>)> = sqlx::query_as(
        "SELECT i.body,
                EXISTS (SELECT 1 FROM issue_notes n
                        WHERE n.issue_id = i.id AND lower(n.author) = ANY($4)
                          AND ($5::text IS NULL OR n.discussion_id = $5)),
                (SELECT n.body FROM issue_notes n WHERE n.issue_id = i.id AND n.note_id = $6)
         FROM issues i WHERE i.tracker = $1 AND i.project_id = $2 AND i.number = $3",
    )
    .bind(tracker)
    .bind(&issue.project_id)
    .bind(issue.number)
    // Every login the bot may post under (`relay-app` and `relay-app[bot]`), lowercase.
    .bind(bot.logins())
    .bind(note.and_then(|n| n.discussion_id.as_deref()))
    .bind(note.map(|n| n.note_id.as_str()))
    .fetch_optional(pool)
    .await?;
    Ok(match row {
        Some((body, bot_in_thread, note_body)) => IssueContext {
            body: Some(body),
            bot_in_thread,
            note_body,
        },
        None => IssueContext::default(),
    })
}

/// A delivery that is about an issue.
#[derive(Debug, Clone)]
pub struct IssueDelivery<'a> {
    pub tracker: &'a str,
    pub event_type: &'a str,
    pub action: Option<&'a str>,
    pub delivery_key: &'a str,
    pub payload: &'a Value,
    pub issue: &'a IssueSnapshot,
    /// The GitHub App installation that delivered it (`installation.id`); `None` keeps the
    /// stored one.
    pub installation_id: Option<i64>,
    pub note: Option<&'a NoteSnapshot>,
    /// `Some` when the delivery engages the bot.
    pub engage: Option<Engagement<'a>>,
    /// The reason recorded when it does not engage (`None` when it engages).
    pub ignore_reason: Option<&'a str>,
    /// `webhook` or `reconcile` (`relay_core::engage::Origin`).
    pub origin: &'a str,
    /// The event's content identity (`relay_core::engage::event_key`), unique per tracker.
    pub event_key: Option<&'a str>,
    /// For a `trigger_label` engagement: the trigger labels the event added
    /// (`relay_core::engage::trigger_labels_added`).
    pub trigger_labels: Option<&'a [String]>,
}

/// The work an engaging delivery creates.
#[derive(Debug, Clone)]
pub struct Engagement<'a> {
    /// `mention`, `thread_reply`, `trigger_label`, `assigned`.
    pub kind: &'a str,
    pub actor: &'a str,
    pub job_kind: &'a str,
    pub max_attempts: i32,
}

/// What was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recorded {
    pub delivery_id: DeliveryId,
    pub issue_id: IssueId,
    /// The job created or joined, for engaging deliveries.
    pub job_id: Option<JobId>,
}

/// Records an issue delivery atomically. Returns `None` for a redelivery (nothing written).
///
/// The `process_issue` job's payload is `{"issue_id": <id>}` and its concurrency key `issue:<id>`
/// (see `relay_core::ProcessIssue`).
pub async fn record_issue_delivery(
    pool: &PgPool,
    delivery: &IssueDelivery<'_>,
) -> Result<Option<Recorded>> {
    // A concurrent delivery can insert a newer snapshot of a brand-new issue after this statement's
    // snapshot was taken; then neither branch of `issue` sees it and nothing is written. Trying
    // again (with a fresh snapshot) settles it.
    let mut tries = 0;
    loop {
        tries += 1;
        match record_issue_delivery_once(pool, delivery).await {
            Err(crate::Error::Database(sqlx::Error::RowNotFound)) if tries < 3 => continue,
            other => return other,
        }
    }
}

async fn record_issue_delivery_once(
    pool: &PgPool,
    delivery: &IssueDelivery<'_>,
) -> Result<Option<Recorded>> {
    let issue = delivery.issue;
    let note = delivery.note;
    let engage = delivery.engage.as_ref();
    let result: std::result::Result<(DeliveryId, IssueId, Option<JobId>), sqlx::Error> = sqlx::query_as(concat!(
        "WITH upserted AS (
             INSERT INTO issues (tracker, project_id, project_path, number, title, body, state, labels,
                                 author, assignees, url, confidential, updated_at, installation_id,
                                 project_visibility)
             VALUES ($1, $6, $7, $8, $9, $10, $11, $12, COALESCE($13, ''), COALESCE($14, '{}'), $15, $16, $17, $31,
                     $32)
             ON CONFLICT (tracker, project_id, number) DO UPDATE SET
                 project_path = EXCLUDED.project_path, title = EXCLUDED.title, body = EXCLUDED.body,
                 state = EXCLUDED.state, labels = EXCLUDED.labels,
                 author = COALESCE($13, issues.author), assignees = COALESCE($14, issues.assignees),
                 url = EXCLUDED.url, confidential = EXCLUDED.confidential,
                 updated_at = EXCLUDED.updated_at, synced_at = now(),
                 installation_id = COALESCE($31, issues.installation_id),
                 project_visibility = COALESCE($32, issues.project_visibility)
             WHERE issues.updated_at <= EXCLUDED.updated_at
             RETURNING id
         ), issue AS (
             SELECT id FROM upserted
             UNION ALL
             SELECT id FROM issues
             WHERE tracker = $1 AND project_id = $6 AND number = $8 AND NOT EXISTS (SELECT 1 FROM upserted)
         ), note AS (
             INSERT INTO issue_notes (issue_id, note_id, discussion_id, author, body, internal, url, created_at, updated_at)
             SELECT issue.id, $18, $19, $20, $21, $22, $23, $24, $25 FROM issue WHERE $18::text IS NOT NULL
             ON CONFLICT (issue_id, note_id) DO UPDATE SET
                 discussion_id = COALESCE(EXCLUDED.discussion_id, issue_notes.discussion_id),
                 body = EXCLUDED.body, internal = issue_notes.internal OR EXCLUDED.internal, url = EXCLUDED.url,
                 updated_at = EXCLUDED.updated_at
             WHERE issue_notes.updated_at <= EXCLUDED.updated_at
         ), job AS (",
        enqueue_or_join!(
            "SELECT $27, jsonb_build_object('issue_id', issue.id), 'issue:' || issue.id, $28
             FROM issue WHERE $26::text IS NOT NULL"
        ),
        " RETURNING id
         ), delivery AS (
             INSERT INTO deliveries (tracker, event_type, action, delivery_key, outcome, reason, payload,
                                     issue_id, job_id, actor, note_id, origin, event_key,
                                     trigger_labels)
             SELECT $1, $2, $3, $4, CASE WHEN $26::text IS NULL THEN 'ignored' ELSE 'accepted' END,
                    COALESCE($26, $29), $5, issue.id, (SELECT id FROM job),
                    CASE WHEN $26::text IS NOT NULL THEN $30 END, $18, $33, $34, $35
             FROM issue
             RETURNING id, issue_id, job_id
         )
         SELECT id, issue_id, job_id FROM delivery"
    ))
    .bind(delivery.tracker) // $1
    .bind(delivery.event_type) // $2
    .bind(delivery.action) // $3
    .bind(delivery.delivery_key) // $4
    .bind(delivery.payload) // $5
    .bind(&issue.project_id) // $6
    .bind(&issue.project_path) // $7
    .bind(issue.number) // $8
    .bind(&issue.title) // $9
    .bind(&issue.body) // $10
    .bind(&issue.state) // $11
    .bind(&issue.labels) // $12
    .bind(&issue.author) // $13
    .bind(&issue.assignees) // $14
    .bind(&issue.url) // $15
    .bind(issue.confidential) // $16
    .bind(issue.updated_at) // $17
    .bind(note.map(|n| n.note_id.as_str())) // $18
    .bind(note.and_then(|n| n.discussion_id.as_deref())) // $19
    .bind(note.map(|n| n.author.as_str())) // $20
    .bind(note.map(|n| n.body.as_str())) // $21
    .bind(note.map(|n| n.internal)) // $22
    .bind(note.and_then(|n| n.url.as_deref())) // $23
    .bind(note.map(|n| n.created_at)) // $24
    .bind(note.map(|n| n.updated_at)) // $25
    .bind(engage.map(|e| e.kind)) // $26
    .bind(engage.map(|e| e.job_kind).unwrap_or("")) // $27
    .bind(engage.map(|e| e.max_attempts.max(1)).unwrap_or(1)) // $28
    .bind(delivery.ignore_reason) // $29
    .bind(engage.map(|e| e.actor).unwrap_or("")) // $30
    .bind(delivery.installation_id) // $31
    .bind(issue.visibility.map(|v| v.as_str())) // $32
    .bind(delivery.origin) // $33
    .bind(delivery.event_key) // $34
    .bind(delivery.trigger_labels) // $35
    .fetch_one(pool)
    .await;
    match result {
        Ok((delivery_id, issue_id, job_id)) => Ok(Some(Recorded {
            delivery_id,
            issue_id,
            job_id,
        })),
        Err(e) if is_duplicate_delivery(&e) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Records a delivery that is not about an issue (or is ignored before we know which issue).
/// Returns `None` for a redelivery.
pub async fn record_plain_delivery(
    pool: &PgPool,
    tracker: &str,
    event_type: &str,
    action: Option<&str>,
    delivery_key: &str,
    reason: &str,
    payload: &Value,
) -> Result<Option<DeliveryId>> {
    Ok(sqlx::query_scalar(
        "INSERT INTO deliveries (tracker, event_type, action, delivery_key, outcome, reason, payload)
         VALUES ($1, $2, $3, $4, 'ignored', $5, $6)
         ON CONFLICT (tracker, delivery_key) DO NOTHING
         RETURNING id",
    )
    .bind(tracker)
    .bind(event_type)
    .bind(action)
    .bind(delivery_key)
    .bind(reason)
    .bind(payload)
    .fetch_optional(pool)
    .await?)
}

/// A redelivery (same delivery key) or the same event again (same content identity).
fn is_duplicate_delivery(error: &sqlx::Error) -> bool {
    is_unique_violation(error)
        && matches!(error, sqlx::Error::Database(db) if matches!(
            db.constraint(),
            Some("deliveries_tracker_delivery_key_key" | "deliveries_event_key_idx")
        ))
}

/// Records a delivery that creates (or joins) one job, atomically. Returns `None` for a
/// redelivery; then no job was created either.
#[allow(clippy::too_many_arguments)]
pub async fn record_job_delivery(
    pool: &PgPool,
    tracker: &str,
    event_type: &str,
    action: Option<&str>,
    delivery_key: &str,
    reason: &str,
    payload: &Value,
    job: &crate::queue::NewJob<'_>,
) -> Result<Option<(DeliveryId, JobId)>> {
    let result: std::result::Result<(DeliveryId, JobId), sqlx::Error> = sqlx::query_as(concat!(
        "WITH job AS (",
        enqueue_or_join!("VALUES ($7, $8, $9, $10)"),
        " RETURNING id
         )
         INSERT INTO deliveries (tracker, event_type, action, delivery_key, outcome, reason, payload, job_id)
         SELECT $1, $2, $3, $4, 'accepted', $5, $6, job.id FROM job
         RETURNING id, job_id"
    ))
    .bind(tracker)
    .bind(event_type)
    .bind(action)
    .bind(delivery_key)
    .bind(reason)
    .bind(payload)
    .bind(job.kind)
    .bind(job.payload)
    .bind(job.concurrency_key)
    .bind(job.max_attempts.max(1))
    .fetch_one(pool)
    .await;
    match result {
        Ok(ids) => Ok(Some(ids)),
        Err(e) if is_duplicate_delivery(&e) => Ok(None),
        Err(e) => Err(e.into()),
    }
}
