//! The outbox of tracker writes. The action executor inserts rows in its batch transaction (so
//! they exist before any tracker call); the drain attempts them in order and records the outcome.
//!
//! Crash safety: [`start_attempt`] commits `maybe_sent = true` before the tracker is called, so
//! whatever happens after, the next attempt knows the write may already be on the tracker and looks
//! for its marker first.

use relay_core::OutboxId;
use relay_core::{IssueId, JobId};
use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::PgConnection;

use crate::Result;

/// Declares [`WriteKind`] from one list: each variant with its `outbox.kind` spelling. `ALL`,
/// `as_str`, `parse` and the serialised form all come from it, so no second list can drift (the
/// migration's `CHECK (kind IN …)` is compared with `ALL` by the repository's tidy test).
macro_rules! write_kinds {
    ($($(#[$doc:meta])* $variant:ident => $text:literal,)+) => {
        /// What an outbox row asks the tracker to do.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum WriteKind {
            $($(#[$doc])* $variant,)+
        }

        impl WriteKind {
            /// Every kind, in declaration order.
            pub const ALL: &'static [WriteKind] = &[$(WriteKind::$variant),+];

            /// The `outbox.kind` spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(WriteKind::$variant => $text,)+
                }
            }
        }
    };
}

write_kinds! {
    /// A new top-level comment / discussion.
    Comment => "comment",
    /// A reply in an existing thread (target note / discussion set).
    Reply => "reply",
    /// Replace the body of the target note.
    Edit => "edit",
    /// A reaction on the target note, or on the issue when there is no target.
    Reaction => "reaction",
}

impl WriteKind {
    /// The tracker action a write performs, as failure lines and metrics name it (a comment and a
    /// reply are both `post_comment`).
    pub fn action_name(self) -> &'static str {
        match self {
            WriteKind::Comment | WriteKind::Reply => "post_comment",
            WriteKind::Edit => "edit_comment",
            WriteKind::Reaction => "add_reaction",
        }
    }

    pub fn parse(s: &str) -> Option<WriteKind> {
        WriteKind::ALL.iter().copied().find(|k| k.as_str() == s)
    }
}

impl std::str::FromStr for WriteKind {
    type Err = UnknownWriteKind;

    fn from_str(s: &str) -> std::result::Result<WriteKind, UnknownWriteKind> {
        WriteKind::parse(s).ok_or_else(|| UnknownWriteKind(s.to_owned()))
    }
}

impl serde::Serialize for WriteKind {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// An `outbox.kind` no [`WriteKind`] spells.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown write kind {0:?}")]
pub struct UnknownWriteKind(pub String);

/// A write to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewWrite<'a> {
    pub idempotency_key: &'a str,
    pub issue_id: IssueId,
    pub job_id: Option<JobId>,
    pub kind: WriteKind,
    /// The full body as it will be sent (marker included); for a reaction, its name.
    pub body: &'a str,
    pub target_note_id: Option<&'a str>,
    pub target_discussion_id: Option<&'a str>,
}

/// A stored write.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct OutboxRow {
    pub id: OutboxId,
    pub idempotency_key: String,
    pub issue_id: IssueId,
    pub job_id: Option<JobId>,
    pub kind: String,
    pub body: String,
    pub target_note_id: Option<String>,
    pub target_discussion_id: Option<String>,
    /// `pending`, `sent` or `failed`.
    pub status: String,
    pub attempts: i32,
    /// An attempt started and may have reached the tracker.
    pub maybe_sent: bool,
    pub next_attempt_at: DateTime<Utc>,
    pub note_id: Option<String>,
    pub discussion_id: Option<String>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
}

impl OutboxRow {
    pub fn write_kind(&self) -> Option<WriteKind> {
        WriteKind::parse(&self.kind)
    }
}

const COLUMNS: &str = "id, idempotency_key, issue_id, job_id, kind, body, target_note_id, \
     target_discussion_id, status, attempts, maybe_sent, next_attempt_at, note_id, discussion_id, \
     last_error, created_at, sent_at";

/// The one door into the outbox: every body written to a row ([`enqueue`], and the summary's
/// [`crate::summaries::rewrite_unsent`] and [`crate::summaries::rearm_refused`]) passes here first.
/// It is scanned for the process's configured secrets ([`relay_core::secrets::scrub_secrets`])
/// and for credentials of a known shape, whoever's they are
/// ([`relay_core::token_shapes::scrub_token_shapes`]: a token a model read in a repository or an
/// issue), whichever tracker and whoever composed the text. Each one found is replaced by
/// `[REDACTED]`, counted (`relay_outgoing_credentials_redacted_total{kind}`) and logged (what
/// kind, never the value).
pub(crate) fn outgoing_body<'a>(
    idempotency_key: &str,
    issue_id: Option<IssueId>,
    body: &'a str,
) -> std::borrow::Cow<'a, str> {
    use relay_telemetry::metrics::OUTGOING_CREDENTIALS_REDACTED_TOTAL;
    let scrubbed = relay_core::secrets::scrub_secrets(body);
    if !scrubbed.redacted.is_empty() {
        metrics::counter!(OUTGOING_CREDENTIALS_REDACTED_TOTAL, "kind" => "configured_secret")
            .increment(scrubbed.redacted.len() as u64);
        tracing::warn!(
            outbox.key = idempotency_key,
            issue.id = issue_id.map(IssueId::get),
            secrets = ?scrubbed.redacted,
            "a configured secret was found in an outgoing tracker write and redacted"
        );
    }
    let shaped = relay_core::token_shapes::scrub_token_shapes(&scrubbed.body);
    if shaped.redacted.is_empty() {
        return scrubbed.body;
    }
    for shape in &shaped.redacted {
        metrics::counter!(OUTGOING_CREDENTIALS_REDACTED_TOTAL, "kind" => shape.as_str())
            .increment(1);
    }
    let kinds: Vec<&str> = shaped.redacted.iter().map(|s| s.as_str()).collect();
    tracing::warn!(
        outbox.key = idempotency_key,
        issue.id = issue_id.map(IssueId::get),
        credentials = ?kinds,
        "a credential was found in an outgoing tracker write and redacted"
    );
    std::borrow::Cow::Owned(shaped.body.into_owned())
}

/// Records a write; a write with the same key already recorded (a replayed batch) is left as it
/// is. Returns whether the row is new. The body goes through `outgoing_body`.
pub async fn enqueue(conn: &mut PgConnection, write: &NewWrite<'_>) -> Result<bool> {
    let body = outgoing_body(write.idempotency_key, Some(write.issue_id), write.body);
    let done = sqlx::query(
        "INSERT INTO outbox (idempotency_key, issue_id, job_id, kind, body, target_note_id, target_discussion_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (idempotency_key) DO NOTHING",
    )
    .bind(write.idempotency_key)
    .bind(write.issue_id)
    .bind(write.job_id)
    .bind(write.kind.as_str())
    .bind(body.as_ref())
    .bind(write.target_note_id)
    .bind(write.target_discussion_id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The issue's pending writes in the order they were recorded, due or not: the drain keeps
/// that order and stops at the first one that is not due yet.
pub async fn pending(conn: &mut PgConnection, issue_id: IssueId) -> Result<Vec<OutboxRow>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM outbox WHERE issue_id = $1 AND status = 'pending' ORDER BY id"
    )))
    .bind(issue_id)
    .fetch_all(conn)
    .await?)
}

/// Every write of an issue, oldest first (for tests, operators and the read API).
pub async fn for_issue(conn: &mut PgConnection, issue_id: IssueId) -> Result<Vec<OutboxRow>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM outbox WHERE issue_id = $1 ORDER BY id"
    )))
    .bind(issue_id)
    .fetch_all(conn)
    .await?)
}

/// One write by key.
pub async fn get(conn: &mut PgConnection, key: &str) -> Result<Option<OutboxRow>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM outbox WHERE idempotency_key = $1"
    )))
    .bind(key)
    .fetch_optional(conn)
    .await?)
}

/// Records that an attempt starts (and may reach the tracker). Must be committed before the
/// tracker is called. Returns the attempt number.
pub async fn start_attempt(conn: &mut PgConnection, id: OutboxId) -> Result<i32> {
    Ok(sqlx::query_scalar(
        "UPDATE outbox SET attempts = attempts + 1, maybe_sent = true, updated_at = now()
         WHERE id = $1 RETURNING attempts",
    )
    .bind(id)
    .fetch_one(conn)
    .await?)
}

/// Records that the tracker accepted the write (or already had it).
pub async fn mark_sent(
    conn: &mut PgConnection,
    id: OutboxId,
    note_id: Option<&str>,
    discussion_id: Option<&str>,
) -> Result<()> {
    sqlx::query(
        "UPDATE outbox SET status = 'sent', note_id = $2, discussion_id = $3, last_error = NULL,
                sent_at = now(), updated_at = now()
         WHERE id = $1",
    )
    .bind(id)
    .bind(note_id)
    .bind(discussion_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Leaves the write pending, to be tried again after `delay`.
pub async fn mark_retry(
    conn: &mut PgConnection,
    id: OutboxId,
    error: &str,
    delay: Duration,
) -> Result<()> {
    sqlx::query(
        "UPDATE outbox SET last_error = $2, next_attempt_at = now() + make_interval(secs => $3),
                updated_at = now()
         WHERE id = $1",
    )
    .bind(id)
    .bind(error)
    .bind(delay.as_secs_f64())
    .execute(conn)
    .await?;
    Ok(())
}

/// Gives up on a write (a permanent error).
pub async fn mark_failed(conn: &mut PgConnection, id: OutboxId, error: &str) -> Result<()> {
    sqlx::query(
        "UPDATE outbox SET status = 'failed', last_error = $2, updated_at = now() WHERE id = $1",
    )
    .bind(id)
    .bind(error)
    .execute(conn)
    .await?;
    Ok(())
}

/// When the issue's next pending write is due (`None`: nothing pending). A job that ends with
/// a write due later hands the issue a follow-up job at that time.
pub async fn next_pending_at(
    conn: &mut PgConnection,
    issue_id: IssueId,
) -> Result<Option<DateTime<Utc>>> {
    Ok(sqlx::query_scalar(
        "SELECT min(next_attempt_at) FROM outbox WHERE issue_id = $1 AND status = 'pending'",
    )
    .bind(issue_id)
    .fetch_one(conn)
    .await?)
}

/// Most issues one sweep queues drain jobs for; the rest wait for the next tick.
pub const SWEEP_MAX_ISSUES: i64 = 100;

/// Which issues' writes a sweep may queue drain jobs for.
#[derive(Debug, Clone, Copy)]
pub enum SweepScope<'a> {
    /// Every issue (tests and tools that run no tracker).
    AllTrackers,
    /// Only issues of these trackers: the configured ones. A write for a tracker removed from the
    /// configuration stays pending, untouched (nothing could send it: a drain job would fail on
    /// every tick), and is swept again once the tracker is configured again.
    Trackers(&'a [String]),
}

/// The outbox sweeper's one statement: for every issue (at most [`SWEEP_MAX_ISSUES`]) in `scope`
/// with a pending write that is due and no queued or running job under its concurrency key
/// (`issue:<id>`), queues a `kind` job (`{"issue_id": id}`) that drains it. Restart-safe: it
/// keeps no state, and the unique index on queued jobs makes concurrent sweeps (one per worker)
/// queue at most one job per issue. Returns the issues it queued a job for.
pub async fn sweep(
    conn: &mut PgConnection,
    kind: &str,
    max_attempts: i32,
    scope: SweepScope<'_>,
) -> Result<Vec<i64>> {
    let trackers = match scope {
        SweepScope::AllTrackers => None,
        SweepScope::Trackers(names) => Some(names),
    };
    Ok(sqlx::query_scalar(
        "WITH due AS (
             SELECT DISTINCT o.issue_id FROM outbox o
             WHERE o.status = 'pending' AND o.next_attempt_at <= now()
               AND ($4::text[] IS NULL
                    OR EXISTS (SELECT 1 FROM issues i WHERE i.id = o.issue_id AND i.tracker = ANY($4)))
             LIMIT $3)
         INSERT INTO jobs (kind, payload, concurrency_key, max_attempts)
         SELECT $1, jsonb_build_object('issue_id', due.issue_id), 'issue:' || due.issue_id, $2
         FROM due
         -- Two probes, one per partial unique index (queued, running): an `IN` over both
         -- statuses would scan the whole jobs table.
         WHERE NOT EXISTS (SELECT 1 FROM jobs q
                           WHERE q.concurrency_key = 'issue:' || due.issue_id AND q.status = 'queued')
           AND NOT EXISTS (SELECT 1 FROM jobs r
                           WHERE r.concurrency_key = 'issue:' || due.issue_id AND r.status = 'running')
         ON CONFLICT (concurrency_key) WHERE status = 'queued' DO NOTHING
         RETURNING (payload->>'issue_id')::bigint",
    )
    .bind(kind)
    .bind(max_attempts.max(1))
    .bind(SWEEP_MAX_ISSUES)
    .bind(trackers)
    .fetch_all(conn)
    .await?)
}

/// Pending writes of issues whose tracker is not among `configured`, per tracker.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct UnroutableWrites {
    pub tracker: String,
    pub writes: i64,
}

/// The pending writes no configured tracker can send (their tracker was removed from the
/// configuration): kept, never swept, and reported at startup so the operator knows.
pub async fn unroutable(
    conn: &mut PgConnection,
    configured: &[String],
) -> Result<Vec<UnroutableWrites>> {
    Ok(sqlx::query_as(
        "SELECT i.tracker, count(*) AS writes FROM outbox o JOIN issues i ON i.id = o.issue_id
         WHERE o.status = 'pending' AND NOT (i.tracker = ANY($1))
         GROUP BY i.tracker ORDER BY i.tracker",
    )
    .bind(configured)
    .fetch_all(conn)
    .await?)
}

/// Most refused writes shown to the planner in one cycle.
pub const MAX_FAILURES_SHOWN: i64 = 10;

/// The issue's writes refused for good that the planner has not been told about yet, oldest
/// first (at most [`MAX_FAILURES_SHOWN`]).
pub async fn unshown_failures(
    conn: &mut PgConnection,
    issue_id: IssueId,
) -> Result<Vec<OutboxRow>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM outbox
         WHERE issue_id = $1 AND status = 'failed' AND failure_shown_at IS NULL
         ORDER BY id LIMIT $2"
    )))
    .bind(issue_id)
    .bind(MAX_FAILURES_SHOWN)
    .fetch_all(conn)
    .await?)
}

/// Records that the planner was shown these refused writes (run it with the batch that the
/// planner decided after seeing them, so a stopped cycle shows them again).
pub async fn mark_failures_shown(conn: &mut PgConnection, ids: &[OutboxId]) -> Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    sqlx::query("UPDATE outbox SET failure_shown_at = now() WHERE id = ANY($1)")
        .bind(ids)
        .execute(conn)
        .await?;
    Ok(())
}

/// A tracker write refused for good, as the read API (`/api/issues/{id}`), the status page's
/// operations view and `relay writes list` show it: no body (it can be long; the key finds it).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct FailedWrite {
    /// `outbox.id` (what `relay writes retry` takes).
    pub id: OutboxId,
    pub idempotency_key: String,
    pub issue_id: IssueId,
    pub job_id: Option<JobId>,
    /// The issue's tracker, project and number, for a listing across issues.
    pub tracker: String,
    pub project_path: String,
    pub number: i64,
    pub kind: String,
    pub attempts: i32,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    /// When it was refused (the row's last update).
    pub failed_at: DateTime<Utc>,
}

/// Whose refused writes to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailedWrites {
    /// Every issue's.
    All,
    /// One issue's.
    OfIssue(IssueId),
}

/// Most refused writes one listing returns.
pub const MAX_FAILED_WRITES: i64 = 1_000;

/// Refused writes, newest first, at most `limit` (clamped to 1..=[`MAX_FAILED_WRITES`]).
pub async fn failed_writes(
    pool: &sqlx::PgPool,
    of: FailedWrites,
    limit: i64,
) -> Result<Vec<FailedWrite>> {
    let issue = match of {
        FailedWrites::All => None,
        FailedWrites::OfIssue(issue_id) => Some(issue_id),
    };
    Ok(sqlx::query_as(
        "SELECT o.id, o.idempotency_key, o.issue_id, o.job_id, i.tracker, i.project_path, i.number,
                o.kind, o.attempts, o.last_error, o.created_at, o.updated_at AS failed_at
         FROM outbox o JOIN issues i ON i.id = o.issue_id
         WHERE o.status = 'failed' AND ($1::bigint IS NULL OR o.issue_id = $1)
         ORDER BY o.id DESC LIMIT $2",
    )
    .bind(issue)
    .bind(limit.clamp(1, MAX_FAILED_WRITES))
    .fetch_all(pool)
    .await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::PgPool;

    fn write(key: &str) -> NewWrite<'_> {
        NewWrite {
            idempotency_key: key,
            issue_id: relay_core::IssueId(1),
            job_id: Some(relay_core::JobId(9)),
            kind: WriteKind::Reply,
            body: "hello <!-- relay:write:k -->",
            target_note_id: Some("n1"),
            target_discussion_id: Some("d1"),
        }
    }

    /// A credential that is no configured secret of Relay's (a model read it somewhere) still
    /// never reaches the tracker: the body is stored with `[REDACTED]`, each one counted.
    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn credentials_of_a_known_shape_are_redacted_and_counted(pool: PgPool) {
        use metrics_util::debugging::{DebugValue, DebuggingRecorder};
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        // One thread: the local recorder sees this test's metrics only.
        let _local = metrics::set_default_local_recorder(&recorder);
        let foreign = format!("ghp_{}", "Zq8".repeat(12));
        let body = format!(
            "Found in config.py: {foreign} and AKIAIOSFODNN7EXAMPLE\n\
             -----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n"
        );
        let mut conn = pool.acquire().await.unwrap();
        let new = NewWrite {
            body: &body,
            ..write("leak")
        };
        assert!(enqueue(&mut conn, &new).await.unwrap());
        let stored = get(&mut conn, "leak").await.unwrap().unwrap().body;
        assert_eq!(
            stored,
            "Found in config.py: [REDACTED] and [REDACTED]\n[REDACTED]\n"
        );
        let counted: u64 = snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .filter(|(key, ..)| key.key().name() == "relay_outgoing_credentials_redacted_total")
            .map(|(.., value)| match value {
                DebugValue::Counter(n) => n,
                _ => 0,
            })
            .sum();
        assert_eq!(counted, 3);
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn lifecycle_and_replay(pool: PgPool) {
        let mut conn = pool.acquire().await.unwrap();
        assert!(enqueue(&mut conn, &write("a")).await.unwrap());
        assert!(
            !enqueue(&mut conn, &write("a")).await.unwrap(),
            "replay is a no-op"
        );
        assert!(enqueue(&mut conn, &write("b")).await.unwrap());
        assert!(enqueue(&mut conn, &write("c")).await.unwrap());

        let rows = pending(&mut conn, relay_core::IssueId(1)).await.unwrap();
        assert_eq!(rows.len(), 3);
        let a = &rows[0];
        assert_eq!(a.write_kind(), Some(WriteKind::Reply));
        assert_eq!((a.attempts, a.maybe_sent), (0, false));
        assert_eq!(a.target_discussion_id.as_deref(), Some("d1"));

        assert_eq!(start_attempt(&mut conn, a.id).await.unwrap(), 1);
        mark_sent(&mut conn, a.id, Some("n9"), Some("d1"))
            .await
            .unwrap();
        let b = &rows[1];
        assert_eq!(start_attempt(&mut conn, b.id).await.unwrap(), 1);
        mark_retry(&mut conn, b.id, "transient: 503", Duration::from_secs(60))
            .await
            .unwrap();
        mark_failed(&mut conn, rows[2].id, "validation failed: body")
            .await
            .unwrap();

        let sent = get(&mut conn, "a").await.unwrap().unwrap();
        assert_eq!(
            (sent.status.as_str(), sent.note_id.as_deref()),
            ("sent", Some("n9"))
        );
        assert!(sent.sent_at.is_some());
        let retry = get(&mut conn, "b").await.unwrap().unwrap();
        assert_eq!(retry.status, "pending");
        assert!(retry.maybe_sent);
        assert!(retry.next_attempt_at > Utc::now() + chrono::Duration::seconds(30));
        assert_eq!(retry.last_error.as_deref(), Some("transient: 503"));
        assert_eq!(get(&mut conn, "c").await.unwrap().unwrap().status, "failed");
        assert_eq!(
            pending(&mut conn, relay_core::IssueId(1))
                .await
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            for_issue(&mut conn, relay_core::IssueId(1))
                .await
                .unwrap()
                .len(),
            3
        );
        assert!(get(&mut conn, "zzz").await.unwrap().is_none());
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn the_sweeper_queues_one_drain_job_per_stranded_issue(pool: PgPool) {
        let mut conn = pool.acquire().await.unwrap();
        for (key, issue) in [("a", 1), ("b", 1), ("c", 2), ("d", 3)] {
            enqueue(
                &mut conn,
                &NewWrite {
                    issue_id: relay_core::IssueId(issue),
                    ..write(key)
                },
            )
            .await
            .unwrap();
        }
        // Issue 2's write waits out a delay; issue 3's is sent.
        let c = get(&mut conn, "c").await.unwrap().unwrap();
        mark_retry(&mut conn, c.id, "rate limited", Duration::from_secs(600))
            .await
            .unwrap();
        let d = get(&mut conn, "d").await.unwrap().unwrap();
        mark_sent(&mut conn, d.id, None, None).await.unwrap();

        assert_eq!(
            sweep(&mut conn, "process_issue", 5, SweepScope::AllTrackers)
                .await
                .unwrap(),
            vec![1]
        );
        assert!(
            sweep(&mut conn, "process_issue", 5, SweepScope::AllTrackers)
                .await
                .unwrap()
                .is_empty(),
            "a queued job covers the issue"
        );
        let job = crate::queue::claim(&pool, "w", Duration::from_secs(30))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(job.concurrency_key.as_deref(), Some("issue:1"));
        assert_eq!(job.payload, serde_json::json!({"issue_id": 1}));
        assert!(
            sweep(&mut conn, "process_issue", 5, SweepScope::AllTrackers)
                .await
                .unwrap()
                .is_empty(),
            "a running job covers the issue"
        );
        assert!(
            next_pending_at(&mut conn, relay_core::IssueId(2))
                .await
                .unwrap()
                .unwrap()
                > Utc::now()
        );
        assert_eq!(
            next_pending_at(&mut conn, relay_core::IssueId(3))
                .await
                .unwrap(),
            None
        );
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn a_sweep_leaves_the_writes_of_an_unconfigured_tracker_pending(pool: PgPool) {
        let mut conn = pool.acquire().await.unwrap();
        let issue = |tracker: &'static str, number: i64| {
            sqlx::query_scalar::<_, i64>(
                "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
                 VALUES ($1, '1', 'g/p', $2, 't', 'opened', 'a', 'u', now()) RETURNING id",
            )
            .bind(tracker)
            .bind(number)
        };
        let kept = issue("gitlab", 1).fetch_one(&mut *conn).await.unwrap();
        let retired = issue("retired", 2).fetch_one(&mut *conn).await.unwrap();
        for (key, issue_id) in [("a", kept), ("b", retired), ("c", retired)] {
            enqueue(
                &mut conn,
                &NewWrite {
                    issue_id: relay_core::IssueId(issue_id),
                    ..write(key)
                },
            )
            .await
            .unwrap();
        }
        let configured = ["gitlab".to_owned()];
        assert_eq!(
            sweep(
                &mut conn,
                "process_issue",
                5,
                SweepScope::Trackers(&configured)
            )
            .await
            .unwrap(),
            vec![kept]
        );
        assert_eq!(
            unroutable(&mut conn, &configured).await.unwrap(),
            [UnroutableWrites {
                tracker: "retired".into(),
                writes: 2
            }]
        );
        assert_eq!(
            pending(&mut conn, relay_core::IssueId(retired))
                .await
                .unwrap()
                .len(),
            2,
            "kept, not failed"
        );
        // Configured again: swept like any other.
        let both = ["gitlab".to_owned(), "retired".to_owned()];
        assert_eq!(
            sweep(&mut conn, "process_issue", 5, SweepScope::Trackers(&both))
                .await
                .unwrap(),
            vec![retired]
        );
        assert!(unroutable(&mut conn, &both).await.unwrap().is_empty());
    }
}
