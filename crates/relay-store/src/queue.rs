//! The job queue.
//!
//! States: `queued` → `running` → `succeeded` | `failed` (permanent) | `dead` (attempts exhausted),
//! and `running` → `queued` again on a retryable failure (with backoff computed in SQL) or when a
//! worker shuts down.
//!
//! Invariants (enforced by unique partial indexes, not by callers):
//! - at most one `running` job per concurrency key, so work on one issue is serialized;
//! - at most one `queued` job per concurrency key: events that arrive while a job runs join the one
//!   follow-up job instead of piling up.
//!
//! A claim is a lease: the worker holds a random `lease_token` and must renew the lease before it
//! expires. Every state change after the claim is fenced by that token, so a worker that lost its
//! lease (it stalled, the job was reclaimed) can never complete or fail the job it no longer owns.

use relay_core::JobId;
use std::time::Duration;

use chrono::{DateTime, Utc};
use relay_core::{JobKind, ProcessIssue, UpdateCheckout};
use serde::Serialize;
use serde_json::Value;
use sqlx::{Acquire, PgConnection, PgPool};
use uuid::Uuid;

use crate::Result;
use crate::error::is_unique_violation;

/// The LISTEN/NOTIFY channel on which enqueues and completions wake workers.
pub const NOTIFY_CHANNEL: &str = "relay_jobs";

/// A job to enqueue.
#[derive(Debug, Clone)]
pub struct NewJob<'a> {
    pub kind: &'a str,
    pub payload: &'a Value,
    /// Jobs with the same key never run at the same time and coalesce while queued.
    pub concurrency_key: Option<&'a str>,
    pub max_attempts: i32,
}

/// What [`enqueue`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enqueued {
    /// A new job row.
    Created(JobId),
    /// A job with the same concurrency key was already queued; it now carries this payload.
    Joined(JobId),
}

impl Enqueued {
    pub fn job_id(self) -> JobId {
        match self {
            Enqueued::Created(id) | Enqueued::Joined(id) => id,
        }
    }
}

/// Enqueue-or-join, the one copy of this SQL: inserts a job (`rows` is the `VALUES (..)` or
/// `SELECT ..` giving kind, payload, concurrency key, max attempts), or, when a job with the same
/// concurrency key is already queued, joins it (its payload becomes the new one). A running job with
/// the key does not conflict (the unique index is partial on `status = 'queued'`): the new job is the
/// follow-up that runs after it. Callers append their own `RETURNING`.
macro_rules! enqueue_or_join {
    ($rows:literal) => {
        concat!(
            "INSERT INTO jobs (kind, payload, concurrency_key, max_attempts) ",
            $rows,
            " ON CONFLICT (concurrency_key) WHERE status = 'queued'
              DO UPDATE SET payload = EXCLUDED.payload, updated_at = now()"
        )
    };
}
pub(crate) use enqueue_or_join;

/// Enqueues a job (or joins the queued job with the same concurrency key).
///
/// This does not wake workers: call [`notify_workers`] after the transaction commits. (A `NOTIFY`
/// inside the transaction would hold Postgres' global notify lock across the commit's WAL flush and
/// serialize every concurrent intake transaction.)
pub async fn enqueue(conn: &mut PgConnection, job: &NewJob<'_>) -> Result<Enqueued> {
    let (id, inserted): (JobId, bool) = sqlx::query_as(concat!(
        enqueue_or_join!("VALUES ($1, $2, $3, $4)"),
        " RETURNING id, (xmax = 0) AS inserted"
    ))
    .bind(job.kind)
    .bind(job.payload)
    .bind(job.concurrency_key)
    .bind(job.max_attempts.max(1))
    .fetch_one(&mut *conn)
    .await?;
    Ok(if inserted {
        Enqueued::Created(id)
    } else {
        Enqueued::Joined(id)
    })
}

/// A job kind that enqueues itself: its payload type knows its kind and its concurrency key, so
/// no caller spells either (crates.io's background jobs are the model). SQL that builds the
/// same row for ids only it knows (the intake, the outbox sweep, `relay writes retry`) uses the
/// key's prefix [`ProcessIssue::KEY_PREFIX`].
pub trait Job: Serialize + Sync {
    /// The kind stored in `jobs.kind`, which picks the handler.
    const KIND: JobKind;

    /// Jobs with the same key never run at the same time and coalesce while queued.
    fn key(&self) -> String;

    /// Enqueues this job (or joins the queued one with the same key): see [`enqueue`].
    fn enqueue(
        &self,
        conn: &mut PgConnection,
        max_attempts: i32,
    ) -> impl Future<Output = Result<Enqueued>> + Send {
        async move {
            let payload = serde_json::to_value(self).expect("job payloads serialize");
            let key = self.key();
            enqueue(conn, &new_job::<Self>(&payload, &key, max_attempts)).await
        }
    }

    /// Enqueues this job to run no earlier than `delay` from now: see [`enqueue_at`].
    fn enqueue_at(
        &self,
        conn: &mut PgConnection,
        max_attempts: i32,
        delay: Duration,
    ) -> impl Future<Output = Result<Enqueued>> + Send {
        async move {
            let payload = serde_json::to_value(self).expect("job payloads serialize");
            let key = self.key();
            enqueue_at(conn, &new_job::<Self>(&payload, &key, max_attempts), delay).await
        }
    }
}

fn new_job<'a, J: Job + ?Sized>(payload: &'a Value, key: &'a str, max_attempts: i32) -> NewJob<'a> {
    NewJob {
        kind: J::KIND.as_str(),
        payload,
        concurrency_key: Some(key),
        max_attempts,
    }
}

impl Job for ProcessIssue {
    const KIND: JobKind = JobKind::ProcessIssue;

    fn key(&self) -> String {
        self.concurrency_key()
    }
}

impl Job for UpdateCheckout {
    const KIND: JobKind = JobKind::UpdateCheckout;

    fn key(&self) -> String {
        self.concurrency_key()
    }
}

/// Holds a queued job until `until` (a later `run_after` stays): the daily token budget's wait.
pub async fn defer_queued(
    conn: &mut PgConnection,
    job_id: JobId,
    until: DateTime<Utc>,
) -> Result<()> {
    sqlx::query(
        "UPDATE jobs SET run_after = GREATEST(run_after, $2), updated_at = now()
         WHERE id = $1 AND status = 'queued'",
    )
    .bind(job_id)
    .bind(until)
    .execute(conn)
    .await?;
    Ok(())
}

/// Enqueues a job to run no earlier than `delay` from now, or moves the queued job with the same
/// concurrency key to that time if it was due later (never later: it may carry newer work).
pub async fn enqueue_at(
    conn: &mut PgConnection,
    job: &NewJob<'_>,
    delay: Duration,
) -> Result<Enqueued> {
    let (id, inserted): (JobId, bool) = sqlx::query_as(
        "INSERT INTO jobs (kind, payload, concurrency_key, max_attempts, run_after)
         VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))
         ON CONFLICT (concurrency_key) WHERE status = 'queued'
         DO UPDATE SET run_after = LEAST(jobs.run_after, EXCLUDED.run_after), updated_at = now()
         RETURNING id, (xmax = 0) AS inserted",
    )
    .bind(job.kind)
    .bind(job.payload)
    .bind(job.concurrency_key)
    .bind(job.max_attempts.max(1))
    .bind(delay.as_secs_f64())
    .fetch_one(&mut *conn)
    .await?;
    Ok(if inserted {
        Enqueued::Created(id)
    } else {
        Enqueued::Joined(id)
    })
}

/// Fences a transaction by the job's lease: locks the job row (shared) when `token` still holds
/// its lease, so the lease cannot pass to another worker before the transaction ends. Returns
/// `false` when the lease is lost: the caller must roll back.
pub async fn hold_lease(conn: &mut PgConnection, job_id: JobId, token: Uuid) -> Result<bool> {
    let held: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM jobs WHERE id = $1 AND lease_token = $2 AND status = 'running' FOR SHARE",
    )
    .bind(job_id)
    .bind(token)
    .fetch_optional(conn)
    .await?;
    Ok(held.is_some())
}

/// Wakes every listening worker. Run it outside of (after) the transaction that changed the queue.
pub async fn notify_workers(pool: &PgPool) -> Result<()> {
    sqlx::query("SELECT pg_notify($1, '')")
        .bind(NOTIFY_CHANNEL)
        .execute(pool)
        .await?;
    Ok(())
}

/// A job held under a lease by one worker.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ClaimedJob {
    pub id: JobId,
    pub kind: String,
    pub payload: Value,
    pub concurrency_key: Option<String>,
    /// 1 for the first run; the operator's retry starts it from 0 again, a release at shutdown
    /// gives one back.
    pub attempt: i32,
    /// How many times the job was claimed, this claim included (`jobs.runs`): never reset, so
    /// each run of a job has its own number (its writes are keyed by it).
    pub run: i32,
    pub max_attempts: i32,
    pub lease_token: Uuid,
    pub lease_owner: String,
    pub started_at: DateTime<Utc>,
}

/// The columns of a [`ClaimedJob`], for the claim statements.
macro_rules! returning_claimed {
    () => {
        " RETURNING jobs.id, jobs.kind, jobs.payload, jobs.concurrency_key,
            jobs.attempts AS attempt, jobs.runs AS run, jobs.max_attempts, jobs.lease_token, jobs.lease_owner, jobs.started_at"
    };
}

/// Claims the next runnable job for `worker`, or returns `None` when there is none.
///
/// Order of preference: a job whose lease expired (its worker died), then the oldest due queued
/// job whose concurrency key has nothing running. Jobs whose lease expired on their last allowed
/// attempt are dead-lettered instead of run again.
pub async fn claim(pool: &PgPool, worker: &str, lease: Duration) -> Result<Option<ClaimedJob>> {
    if let Some(job) = reclaim_expired(pool, worker, lease).await? {
        return Ok(Some(job));
    }
    claim_queued(pool, worker, lease).await
}

/// Dead-letters jobs whose lease expired on their last attempt, then claims one job whose lease
/// expired with attempts left (its worker died or stalled). Workers run this on a timer rather
/// than before every claim: a lease only lapses after `lease` anyway.
pub async fn reclaim_expired(
    pool: &PgPool,
    worker: &str,
    lease: Duration,
) -> Result<Option<ClaimedJob>> {
    let lease_secs = lease.as_secs_f64();
    sqlx::query(
        "UPDATE jobs SET status = 'dead', finished_at = now(), updated_at = now(),
             lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
             last_error = 'lease expired on the last attempt (worker died or stalled)',
             last_cause = NULL
         WHERE status = 'running' AND lease_expires_at < now() AND attempts >= max_attempts",
    )
    .execute(pool)
    .await?;

    Ok(sqlx::query_as(concat!(
        "WITH candidate AS (
             SELECT id FROM jobs
             WHERE status = 'running' AND lease_expires_at < now() AND attempts < max_attempts
             ORDER BY lease_expires_at LIMIT 1 FOR UPDATE SKIP LOCKED)
         UPDATE jobs SET attempts = jobs.attempts + 1, runs = jobs.runs + 1,
             lease_owner = $1, lease_token = $2,
             lease_expires_at = now() + make_interval(secs => $3), started_at = now(), updated_at = now(),
             last_error = 'lease expired (worker died or stalled)', last_cause = NULL
         FROM candidate WHERE jobs.id = candidate.id",
        returning_claimed!()
    ))
    .bind(worker)
    .bind(Uuid::new_v4())
    .bind(lease_secs)
    .fetch_optional(pool)
    .await?)
}

/// Claims the oldest due queued job whose concurrency key has nothing running.
pub async fn claim_queued(
    pool: &PgPool,
    worker: &str,
    lease: Duration,
) -> Result<Option<ClaimedJob>> {
    let lease_secs = lease.as_secs_f64();
    let claimed = sqlx::query_as(concat!(
        "WITH candidate AS (
             SELECT id FROM jobs j
             WHERE j.status = 'queued' AND j.run_after <= now()
               AND (j.concurrency_key IS NULL OR NOT EXISTS (
                   SELECT 1 FROM jobs r WHERE r.concurrency_key = j.concurrency_key AND r.status = 'running'))
             ORDER BY j.run_after, j.id LIMIT 1 FOR UPDATE SKIP LOCKED)
         UPDATE jobs SET status = 'running', attempts = jobs.attempts + 1, runs = jobs.runs + 1,
             lease_owner = $1, lease_token = $2,
             lease_expires_at = now() + make_interval(secs => $3), started_at = now(), updated_at = now()
         FROM candidate WHERE jobs.id = candidate.id",
        returning_claimed!()
    ))
    .bind(worker)
    .bind(Uuid::new_v4())
    .bind(lease_secs)
    .fetch_optional(pool)
    .await;
    match claimed {
        Ok(job) => Ok(job),
        // Another worker started a job with the same key between our check and our update.
        // Nothing was claimed; the caller simply tries again.
        Err(e) if is_unique_violation(&e) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Extends the lease. Returns `false` when the lease was lost (the job was reclaimed or finished).
pub async fn heartbeat(pool: &PgPool, job: &ClaimedJob, lease: Duration) -> Result<bool> {
    let result = sqlx::query(
        "UPDATE jobs SET lease_expires_at = now() + make_interval(secs => $3), updated_at = now()
         WHERE id = $1 AND lease_token = $2 AND status = 'running'",
    )
    .bind(job.id)
    .bind(job.lease_token)
    .bind(lease.as_secs_f64())
    .execute(pool)
    .await?;
    Ok(result.rows_affected() == 1)
}

/// Marks the job succeeded and records the run, in one statement. Returns `None` when the lease
/// was lost (someone else owns the job now), else whether a follow-up job with the same
/// concurrency key is queued (and waiting for this one), so the caller knows to wake workers.
pub async fn complete(
    conn: &mut PgConnection,
    job: &ClaimedJob,
    detail: &Value,
) -> Result<Option<bool>> {
    let (completed, follow_up): (bool, bool) = sqlx::query_as(
        "WITH done AS (
             UPDATE jobs SET status = 'succeeded', finished_at = now(), updated_at = now(),
                 lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
             WHERE id = $1 AND lease_token = $2 AND status = 'running'
             RETURNING id, concurrency_key
         ), run AS (
             INSERT INTO job_runs (job_id, attempt, worker, outcome, detail, started_at)
             SELECT id, $3, $4, 'succeeded', $5, $6 FROM done
         )
         SELECT EXISTS (SELECT 1 FROM done),
                EXISTS (SELECT 1 FROM jobs q JOIN done ON q.concurrency_key = done.concurrency_key
                        WHERE q.status = 'queued')",
    )
    .bind(job.id)
    .bind(job.lease_token)
    .bind(job.attempt)
    .bind(&job.lease_owner)
    .bind(detail)
    .bind(job.started_at)
    .fetch_one(conn)
    .await?;
    Ok(completed.then_some(follow_up))
}

/// How failures are retried.
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    /// Delay after the first failure.
    pub base: Duration,
    /// Upper bound for any delay.
    pub max: Duration,
}

/// What [`fail`] did with a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failed {
    /// Queued again to run at the given time.
    Retried { run_after: DateTime<Utc> },
    /// A follow-up job with the same key was already queued; the retry was folded into it.
    FoldedInto { job_id: JobId },
    /// Attempts exhausted; kept as `dead` with the error.
    Dead,
    /// A permanent failure; kept as `failed` with the error.
    Failed,
    /// The lease was lost; the outcome belongs to the new holder.
    LeaseLost,
}

/// Whether a failed attempt may be tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// Transient (network, rate limit, lease lost to a slow machine): retry with backoff until
    /// `max_attempts`, then dead-letter.
    Retryable,
    /// Retrying cannot help (bad input, missing repository): fail now.
    Permanent,
}

/// What a failed attempt leaves on its job: `last_error` and `last_cause`.
#[derive(Debug, Clone, Copy)]
pub struct Failure<'a> {
    /// The error's whole chain (secrets scrubbed).
    pub error: &'a str,
    /// Its classified root cause (`llm server_error`, `tracker forbidden`), when one is known.
    pub cause: Option<&'a str>,
}

/// Records a failed attempt: retry with exponential backoff and jitter (computed in SQL), or
/// dead-letter once attempts are exhausted, or fail at once when the failure is
/// [`FailureKind::Permanent`].
pub async fn fail(
    pool: &PgPool,
    job: &ClaimedJob,
    failure: &Failure<'_>,
    kind: FailureKind,
    backoff: Backoff,
) -> Result<Failed> {
    let error = failure.error;
    let cause = failure.cause;
    let mut tx = pool.begin().await?;
    let terminal = match kind {
        FailureKind::Permanent => Some("failed"),
        FailureKind::Retryable if job.attempt >= job.max_attempts => Some("dead"),
        FailureKind::Retryable => None,
    };

    if let Some(status) = terminal {
        let result = sqlx::query(
            "UPDATE jobs SET status = $3, last_error = $4, last_cause = $5, finished_at = now(),
                 updated_at = now(), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
             WHERE id = $1 AND lease_token = $2 AND status = 'running'",
        )
        .bind(job.id)
        .bind(job.lease_token)
        .bind(status)
        .bind(error)
        .bind(cause)
        .execute(&mut *tx)
        .await?;
        if result.rows_affected() != 1 {
            return Ok(Failed::LeaseLost);
        }
        record_run(
            &mut tx,
            job,
            status,
            &serde_json::json!({ "error": error, "cause": cause }),
        )
        .await?;
        tx.commit().await?;
        return Ok(if status == "dead" {
            Failed::Dead
        } else {
            Failed::Failed
        });
    }

    // Retry. A savepoint lets us detect a queued sibling through the unique index.
    let mut savepoint = tx.begin().await?;
    let requeued: std::result::Result<Option<DateTime<Utc>>, sqlx::Error> = sqlx::query_scalar(
        "UPDATE jobs SET status = 'queued', last_error = $3, last_cause = $6, updated_at = now(),
             lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
             run_after = now() + make_interval(secs =>
                 LEAST($5::float8, $4::float8 * power(2, attempts - 1)) * (0.75 + random() * 0.5))
         WHERE id = $1 AND lease_token = $2 AND status = 'running'
         RETURNING run_after",
    )
    .bind(job.id)
    .bind(job.lease_token)
    .bind(error)
    .bind(backoff.base.as_secs_f64())
    .bind(backoff.max.as_secs_f64())
    .bind(cause)
    .fetch_optional(&mut *savepoint)
    .await;
    let outcome = match requeued {
        Ok(Some(run_after)) => {
            savepoint.commit().await?;
            record_run(
                &mut tx,
                job,
                "retried",
                &serde_json::json!({ "error": error, "cause": cause }),
            )
            .await?;
            Failed::Retried { run_after }
        }
        Ok(None) => return Ok(Failed::LeaseLost),
        Err(e) if is_unique_violation(&e) => {
            savepoint.rollback().await?;
            let sibling: JobId = sqlx::query_scalar(
                "UPDATE jobs SET attempts = GREATEST(attempts, $2), last_error = $3,
                     last_cause = $6, updated_at = now(),
                     run_after = GREATEST(run_after, now() + make_interval(secs =>
                         LEAST($5::float8, $4::float8 * power(2, $2 - 1)) * (0.75 + random() * 0.5)))
                 WHERE concurrency_key = $1 AND status = 'queued'
                 RETURNING id",
            )
            .bind(&job.concurrency_key)
            .bind(job.attempt)
            .bind(error)
            .bind(backoff.base.as_secs_f64())
            .bind(backoff.max.as_secs_f64())
            .bind(cause)
            .fetch_one(&mut *tx)
            .await?;
            let result = sqlx::query(
                "UPDATE jobs SET status = 'failed', finished_at = now(), updated_at = now(),
                     last_error = $3, last_cause = $4, lease_owner = NULL, lease_token = NULL,
                     lease_expires_at = NULL
                 WHERE id = $1 AND lease_token = $2 AND status = 'running'",
            )
            .bind(job.id)
            .bind(job.lease_token)
            .bind(format!("{error} (retry folded into queued job {sibling})"))
            .bind(cause)
            .execute(&mut *tx)
            .await?;
            if result.rows_affected() != 1 {
                return Ok(Failed::LeaseLost);
            }
            record_run(
                &mut tx,
                job,
                "retried",
                &serde_json::json!({ "error": error, "cause": cause, "folded_into": sibling }),
            )
            .await?;
            Failed::FoldedInto { job_id: sibling }
        }
        Err(e) => return Err(e.into()),
    };
    tx.commit().await?;
    Ok(outcome)
}

/// Gives a job back without counting the attempt (graceful shutdown ran out of time).
/// Returns `false` when the lease was already lost.
pub async fn release(pool: &PgPool, job: &ClaimedJob) -> Result<bool> {
    let mut tx = pool.begin().await?;
    let mut savepoint = tx.begin().await?;
    let released = sqlx::query(
        "UPDATE jobs SET status = 'queued', attempts = GREATEST(attempts - 1, 0), run_after = now(),
             updated_at = now(), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
         WHERE id = $1 AND lease_token = $2 AND status = 'running'",
    )
    .bind(job.id)
    .bind(job.lease_token)
    .execute(&mut *savepoint)
    .await;
    match released {
        Ok(result) if result.rows_affected() == 1 => savepoint.commit().await?,
        Ok(_) => return Ok(false),
        Err(e) if is_unique_violation(&e) => {
            // The queued follow-up will redo the work; this row is closed out.
            savepoint.rollback().await?;
            let result = sqlx::query(
                "UPDATE jobs SET status = 'failed', finished_at = now(), updated_at = now(),
                     last_error = 'released at shutdown; the queued follow-up job takes over',
                     lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
                 WHERE id = $1 AND lease_token = $2 AND status = 'running'",
            )
            .bind(job.id)
            .bind(job.lease_token)
            .execute(&mut *tx)
            .await?;
            if result.rows_affected() != 1 {
                return Ok(false);
            }
        }
        Err(e) => return Err(e.into()),
    }
    record_run(&mut tx, job, "released", &serde_json::json!({})).await?;
    tx.commit().await?;
    Ok(true)
}

async fn record_run(
    conn: &mut PgConnection,
    job: &ClaimedJob,
    outcome: &str,
    detail: &Value,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO job_runs (job_id, attempt, worker, outcome, detail, started_at)
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(job.id)
    .bind(job.attempt)
    .bind(&job.lease_owner)
    .bind(outcome)
    .bind(detail)
    .bind(job.started_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// The live statuses `/metrics` reports (finished jobs are counted by `relay_jobs_total`).
pub const LIVE_STATUSES: [&str; 2] = ["queued", "running"];

/// Counts the live jobs per status over the partial indexes of those statuses
/// (`jobs_claimable_idx`, `jobs_one_running_per_key`, which holds NULL keys too): a scrape reads the queue's live rows only,
/// however many finished jobs the table holds.
pub const DEPTH_SQL: &str =
    "SELECT 'queued'::text, (SELECT count(*) FROM jobs WHERE status = 'queued')
     UNION ALL
     SELECT 'running'::text, (SELECT count(*) FROM jobs WHERE status = 'running')";

/// Number of live jobs in each status (both statuses present, zero included).
pub async fn depth(pool: &PgPool) -> Result<Vec<(String, i64)>> {
    Ok(sqlx::query_as(DEPTH_SQL).fetch_all(pool).await?)
}

/// Seconds the longest-waiting claimable job (queued, due) has been due; 0 when none is. Reads
/// the first entry of the claimable partial index, so a scrape costs one index probe.
pub async fn oldest_due_age_secs(pool: &PgPool) -> Result<f64> {
    Ok(sqlx::query_scalar(
        "SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(run_after)), 0)::float8
         FROM jobs WHERE status = 'queued' AND run_after <= now()",
    )
    .fetch_one(pool)
    .await?)
}

/// A job row, for tests and operators.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct JobRow {
    pub id: JobId,
    pub kind: String,
    pub payload: Value,
    pub concurrency_key: Option<String>,
    pub status: String,
    pub attempts: i32,
    pub max_attempts: i32,
    pub run_after: DateTime<Utc>,
    pub last_error: Option<String>,
}

pub async fn get(pool: &PgPool, job_id: JobId) -> Result<Option<JobRow>> {
    Ok(sqlx::query_as(
        "SELECT id, kind, payload, concurrency_key, status, attempts, max_attempts, run_after, last_error
         FROM jobs WHERE id = $1",
    )
    .bind(job_id)
    .fetch_optional(pool)
    .await?)
}

/// Number of runs recorded for a job with the given outcome.
pub async fn count_runs(pool: &PgPool, job_id: JobId, outcome: &str) -> Result<i64> {
    Ok(
        sqlx::query_scalar("SELECT count(*) FROM job_runs WHERE job_id = $1 AND outcome = $2")
            .bind(job_id)
            .bind(outcome)
            .fetch_one(pool)
            .await?,
    )
}

/// How long until the next queued job becomes due (`None` when nothing is queued).
pub async fn next_due_in(pool: &PgPool) -> Result<Option<Duration>> {
    let seconds: Option<f64> = sqlx::query_scalar(
        "SELECT GREATEST(0, EXTRACT(EPOCH FROM (min(run_after) - now())))::float8
         FROM jobs WHERE status = 'queued'",
    )
    .fetch_one(pool)
    .await?;
    Ok(seconds.map(Duration::from_secs_f64))
}

/// A LISTEN connection that wakes workers when jobs are enqueued or finish.
pub struct Notifications(sqlx::postgres::PgListener);

impl Notifications {
    pub async fn connect(pool: &PgPool) -> Result<Notifications> {
        let mut listener = sqlx::postgres::PgListener::connect_with(pool).await?;
        listener.listen(NOTIFY_CHANNEL).await?;
        Ok(Notifications(listener))
    }

    /// Waits for the next notification. After a lost connection it reconnects (notifications sent
    /// meanwhile are lost, which is why workers also poll).
    pub async fn recv(&mut self) -> Result<()> {
        self.0.recv().await?;
        Ok(())
    }
}
