//! The reconciler's state: one pass at a time per database (a session advisory lock), the
//! projects to poll with their watermarks, what Relay already knows of the issues and notes a pass
//! found, and the pass's outcome per project (one statement for all of them).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::pool::PoolConnection;
use sqlx::{Connection as _, PgConnection, PgPool, Postgres};

use crate::Result;

/// The advisory lock key of the reconciler ("relay-reconcile" folded into an i64).
const LOCK_KEY: i64 = 0x7265_6c61_7972_6563;

/// Held while a pass runs. The connection is detached from the pool: if the process dies or the
/// guard is dropped without [`ReconcileLock::release`], closing the connection frees the lock.
pub struct ReconcileLock {
    conn: PgConnection,
}

impl std::fmt::Debug for ReconcileLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReconcileLock")
    }
}

/// Takes the reconciler's lock if no one holds it (`None`: another process is running a pass).
pub async fn try_lock(pool: &PgPool) -> Result<Option<ReconcileLock>> {
    let conn: PoolConnection<Postgres> = pool.acquire().await?;
    let mut conn = conn.detach();
    let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
        .bind(LOCK_KEY)
        .fetch_one(&mut conn)
        .await?;
    Ok(locked.then_some(ReconcileLock { conn }))
}

impl ReconcileLock {
    /// Releases the lock and closes its connection.
    pub async fn release(self) -> Result<()> {
        // Closing the session releases the lock as well; the explicit close only says so sooner.
        self.conn.close().await?;
        Ok(())
    }
}

/// A project the reconciler polls, with its watermark.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ProjectState {
    pub tracker: String,
    pub project_key: String,
    pub project_path: String,
    pub project_id: Option<String>,
    pub first_seen_at: DateTime<Utc>,
    pub watermark: Option<DateTime<Utc>>,
    pub last_pass_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub last_found: i32,
}

/// A project named in `[[trackers]] projects`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedProject {
    pub tracker: String,
    pub project_path: String,
}

/// The projects of `trackers` to poll: every project with an issue Relay has recorded, plus the
/// listed ones (two statements: register the new ones, then read all).
pub async fn projects(
    pool: &PgPool,
    trackers: &[String],
    listed: &[ListedProject],
) -> Result<Vec<ProjectState>> {
    let listed_trackers: Vec<&str> = listed.iter().map(|p| p.tracker.as_str()).collect();
    let listed_paths: Vec<&str> = listed.iter().map(|p| p.project_path.as_str()).collect();
    sqlx::query(
        "INSERT INTO reconcile_projects (tracker, project_key, project_path, project_id, first_seen_at)
         SELECT DISTINCT ON (tracker, key) tracker, key, project_path, project_id, first_seen
         FROM (
             SELECT tracker, lower(project_path) AS key, max(project_path) AS project_path,
                    max(project_id) AS project_id, min(created_at) AS first_seen
             FROM issues WHERE tracker = ANY($1) GROUP BY tracker, lower(project_path)
             UNION ALL
             SELECT t, lower(trim(both '/' from p)), trim(both '/' from p), NULL, now()
             FROM unnest($2::text[], $3::text[]) AS l(t, p)
         ) found
         ORDER BY tracker, key, project_id NULLS LAST, first_seen
         ON CONFLICT (tracker, project_key) DO UPDATE SET project_id = EXCLUDED.project_id
         WHERE reconcile_projects.project_id IS NULL AND EXCLUDED.project_id IS NOT NULL",
    )
    .bind(trackers)
    .bind(&listed_trackers)
    .bind(&listed_paths)
    .execute(pool)
    .await?;
    Ok(sqlx::query_as(
        "SELECT tracker, project_key, project_path, project_id, first_seen_at, watermark,
                last_pass_at, last_error, last_found
         FROM reconcile_projects WHERE tracker = ANY($1) ORDER BY tracker, project_key",
    )
    .bind(trackers)
    .fetch_all(pool)
    .await?)
}

/// Every recorded project state (for operators and tests).
pub async fn list(pool: &PgPool) -> Result<Vec<ProjectState>> {
    Ok(sqlx::query_as(
        "SELECT tracker, project_key, project_path, project_id, first_seen_at, watermark,
                last_pass_at, last_error, last_found
         FROM reconcile_projects ORDER BY tracker, project_key",
    )
    .fetch_all(pool)
    .await?)
}

/// What Relay has stored of an issue a pass found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownIssue {
    pub body: String,
    pub labels: Vec<String>,
    pub assignees: Vec<String>,
    pub updated_at: DateTime<Utc>,
    /// Stored notes of the issue asked about: note id → the tracker's `updated_at`.
    pub notes: HashMap<String, DateTime<Utc>>,
}

/// What Relay has stored of issues `numbers` of a project and of notes `note_ids` on them (one
/// statement). Issues Relay has never seen are absent.
pub async fn known(
    pool: &PgPool,
    tracker: &str,
    project_id: &str,
    numbers: &[i64],
    note_ids: &[String],
) -> Result<HashMap<i64, KnownIssue>> {
    type Row = (
        i64,
        String,
        Vec<String>,
        Vec<String>,
        DateTime<Utc>,
        Option<String>,
        Option<DateTime<Utc>>,
    );
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT i.number, i.body, i.labels, i.assignees, i.updated_at, n.note_id, n.updated_at
         FROM issues i
         LEFT JOIN issue_notes n ON n.issue_id = i.id AND n.note_id = ANY($4)
         WHERE i.tracker = $1 AND i.project_id = $2 AND i.number = ANY($3)",
    )
    .bind(tracker)
    .bind(project_id)
    .bind(numbers)
    .bind(note_ids)
    .fetch_all(pool)
    .await?;
    let mut known: HashMap<i64, KnownIssue> = HashMap::new();
    for (number, body, labels, assignees, updated_at, note_id, note_updated) in rows {
        let issue = known.entry(number).or_insert_with(|| KnownIssue {
            body,
            labels,
            assignees,
            updated_at,
            notes: HashMap::new(),
        });
        if let (Some(id), Some(at)) = (note_id, note_updated) {
            issue.notes.insert(id, at);
        }
    }
    Ok(known)
}

/// How a pass over one project ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassResult {
    pub tracker: String,
    pub project_key: String,
    /// The resolved project id, when the pass learned it.
    pub project_id: Option<String>,
    /// The new watermark; `None` when the pass failed (the watermark stays).
    pub watermark: Option<DateTime<Utc>>,
    pub error: Option<String>,
    pub found: i32,
}

/// Records every project's outcome of a pass in one statement.
pub async fn finish_pass(pool: &PgPool, results: &[PassResult]) -> Result<()> {
    if results.is_empty() {
        return Ok(());
    }
    let trackers: Vec<&str> = results.iter().map(|r| r.tracker.as_str()).collect();
    let keys: Vec<&str> = results.iter().map(|r| r.project_key.as_str()).collect();
    let ids: Vec<Option<&str>> = results.iter().map(|r| r.project_id.as_deref()).collect();
    let marks: Vec<Option<DateTime<Utc>>> = results.iter().map(|r| r.watermark).collect();
    let errors: Vec<Option<&str>> = results.iter().map(|r| r.error.as_deref()).collect();
    let found: Vec<i32> = results.iter().map(|r| r.found).collect();
    sqlx::query(
        "UPDATE reconcile_projects p SET
             watermark = COALESCE(r.watermark, p.watermark),
             project_id = COALESCE(p.project_id, r.project_id),
             last_pass_at = now(), last_error = r.error, last_found = r.found
         FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::int4[])
              AS r(tracker, project_key, project_id, watermark, error, found)
         WHERE p.tracker = r.tracker AND p.project_key = r.project_key",
    )
    .bind(&trackers)
    .bind(&keys)
    .bind(&ids)
    .bind(&marks)
    .bind(&errors)
    .bind(&found)
    .execute(pool)
    .await?;
    Ok(())
}
