//! What an operator can do about what the operations page shows, without SQL: retry or discard a
//! dead job, retry a tracker write refused for good (`relay jobs …`, `relay writes …`).
//!
//! Every action is one short transaction that changes a row only from the state the action is
//! for (`dead`, `failed`), so running it twice, or while workers run, does nothing the second
//! time and never touches a job a worker holds. Each is recorded in `operator_actions` and, when a
//! job is concerned, as a `decision` event of agent `operator` in that job's run trace.

use chrono::{DateTime, Utc};
use relay_core::IssueId;
use relay_core::{JobId, OutboxId};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::Result;
use crate::trace::{Finish, NewEvent, NewRun, RunOutcome, RunRef};

/// The trace's worker name for an operator's run.
pub const OPERATOR_WORKER: &str = "operator";

/// Which jobs `relay jobs list` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobFilter {
    Dead,
    Failed,
    Discarded,
}

impl JobFilter {
    pub fn as_str(self) -> &'static str {
        match self {
            JobFilter::Dead => "dead",
            JobFilter::Failed => "failed",
            JobFilter::Discarded => "discarded",
        }
    }
}

/// A finished job as the operator sees it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct FinishedJob {
    pub id: JobId,
    pub kind: String,
    pub status: String,
    pub attempts: i32,
    pub max_attempts: i32,
    pub concurrency_key: Option<String>,
    pub finished_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    /// The classified root cause of the last failed attempt (`llm server_error`).
    pub last_cause: Option<String>,
}

/// Jobs in `filter`'s state, newest first, at most `limit`.
pub async fn list_jobs(pool: &PgPool, filter: JobFilter, limit: i64) -> Result<Vec<FinishedJob>> {
    Ok(sqlx::query_as(
        "SELECT id, kind, status, attempts, max_attempts, concurrency_key, finished_at, last_error,
                last_cause
         FROM jobs WHERE status = $1 ORDER BY id DESC LIMIT $2",
    )
    .bind(filter.as_str())
    .bind(limit.clamp(1, 1000))
    .fetch_all(pool)
    .await?)
}

/// What an action did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionOutcome {
    /// Done: the job is queued again / discarded, the write is pending again (with the job that
    /// will send it, when one could be queued).
    Done {
        job_id: Option<JobId>,
    },
    /// Nothing to do: the row is not in the state the action is for (already retried, running,
    /// sent…); its current status.
    NotApplicable {
        status: String,
    },
    /// Nothing to do: another queued job under the same concurrency key will do the work.
    Superseded {
        by_job: JobId,
    },
    /// Nothing to do: a later write replaces what this one would write (a newer revision of the
    /// issue's summary); sending this one would put older text over newer.
    Replaced {
        by_write: String,
    },
    NotFound,
}

impl ActionOutcome {
    fn label(&self) -> &'static str {
        match self {
            ActionOutcome::Done { .. } => "done",
            ActionOutcome::NotApplicable { .. } => "not_applicable",
            ActionOutcome::Superseded { .. } | ActionOutcome::Replaced { .. } => "superseded",
            ActionOutcome::NotFound => "not_found",
        }
    }
}

/// Queues a dead job again (attempts from zero, due now).
pub async fn retry_job(pool: &PgPool, job_id: JobId, actor: &str) -> Result<ActionOutcome> {
    let mut tx = pool.begin().await?;
    let current: Option<(String, Option<String>)> =
        sqlx::query_as("SELECT status, concurrency_key FROM jobs WHERE id = $1 FOR UPDATE")
            .bind(job_id)
            .fetch_optional(&mut *tx)
            .await?;
    let outcome = match current {
        None => ActionOutcome::NotFound,
        Some((status, _)) if status != "dead" => ActionOutcome::NotApplicable { status },
        Some((_, key)) => {
            // One queued job per concurrency key: if another is queued, it does this work.
            let queued: Option<JobId> = match &key {
                Some(key) => {
                    sqlx::query_scalar(
                        "SELECT id FROM jobs WHERE concurrency_key = $1 AND status = 'queued'",
                    )
                    .bind(key)
                    .fetch_optional(&mut *tx)
                    .await?
                }
                None => None,
            };
            match queued {
                Some(by_job) => ActionOutcome::Superseded { by_job },
                None => {
                    sqlx::query(
                        "UPDATE jobs SET status = 'queued', attempts = 0, run_after = now(),
                                finished_at = NULL, lease_owner = NULL, lease_token = NULL,
                                lease_expires_at = NULL, updated_at = now()
                         WHERE id = $1 AND status = 'dead'",
                    )
                    .bind(job_id)
                    .execute(&mut *tx)
                    .await?;
                    ActionOutcome::Done {
                        job_id: Some(job_id),
                    }
                }
            }
        }
    };
    record(&mut tx, actor, "job_retry", job_id.get(), &outcome).await?;
    tx.commit().await?;
    if matches!(outcome, ActionOutcome::Done { .. }) {
        wake_workers(pool).await?;
    }
    trace(
        pool,
        Some(job_id),
        actor,
        "job_retry",
        job_id.get(),
        &outcome,
    )
    .await?;
    Ok(outcome)
}

/// Lets a dead job go: it is `discarded` (kept for the record, no longer listed as dead).
pub async fn discard_job(pool: &PgPool, job_id: JobId, actor: &str) -> Result<ActionOutcome> {
    let mut tx = pool.begin().await?;
    let status: Option<String> =
        sqlx::query_scalar("SELECT status FROM jobs WHERE id = $1 FOR UPDATE")
            .bind(job_id)
            .fetch_optional(&mut *tx)
            .await?;
    let outcome = match status {
        None => ActionOutcome::NotFound,
        Some(status) if status != "dead" => ActionOutcome::NotApplicable { status },
        Some(_) => {
            sqlx::query(
                "UPDATE jobs SET status = 'discarded', finished_at = COALESCE(finished_at, now()),
                        updated_at = now()
                 WHERE id = $1 AND status = 'dead'",
            )
            .bind(job_id)
            .execute(&mut *tx)
            .await?;
            ActionOutcome::Done {
                job_id: Some(job_id),
            }
        }
    };
    record(&mut tx, actor, "job_discard", job_id.get(), &outcome).await?;
    tx.commit().await?;
    trace(
        pool,
        Some(job_id),
        actor,
        "job_discard",
        job_id.get(),
        &outcome,
    )
    .await?;
    Ok(outcome)
}

/// Makes a failed write pending again (due now, attempts from zero) and queues the issue's job
/// that drains it (as the outbox sweeper would; none when one is already queued or running). The
/// write keeps its idempotency key and whether an earlier attempt may have landed
/// (`maybe_sent`), so the drain looks for its marker on the tracker before posting, as it does
/// for any write an attempt may have delivered: it is still sent at most once. A summary write
/// that a later one replaces is not sent again ([`ActionOutcome::Replaced`]).
pub async fn retry_write(pool: &PgPool, write_id: OutboxId, actor: &str) -> Result<ActionOutcome> {
    let mut tx = pool.begin().await?;
    let row: Option<(String, IssueId, Option<JobId>, String)> = sqlx::query_as(
        "SELECT status, issue_id, job_id, idempotency_key FROM outbox WHERE id = $1 FOR UPDATE",
    )
    .bind(write_id)
    .fetch_optional(&mut *tx)
    .await?;
    let newer = match &row {
        Some((status, issue_id, _, key))
            if status == "failed" && crate::summaries::is_summary_write(*issue_id, key) =>
        {
            newer_summary_write(&mut tx, *issue_id, write_id).await?
        }
        _ => None,
    };
    let (outcome, traced_job) = match (row, newer) {
        (None, _) => (ActionOutcome::NotFound, None),
        (Some((status, _, job, _)), _) if status != "failed" => {
            (ActionOutcome::NotApplicable { status }, job)
        }
        (Some((_, _, job, _)), Some(by_write)) => (ActionOutcome::Replaced { by_write }, job),
        (Some((_, issue_id, job, _)), None) => {
            sqlx::query(
                "UPDATE outbox SET status = 'pending', attempts = 0,
                        next_attempt_at = now(), updated_at = now()
                 WHERE id = $1 AND status = 'failed'",
            )
            .bind(write_id)
            .execute(&mut *tx)
            .await?;
            let drain: Option<JobId> = sqlx::query_scalar(
                "INSERT INTO jobs (kind, payload, concurrency_key, max_attempts)
                 SELECT $3, jsonb_build_object('issue_id', $1::bigint), $4::text || $1, $2
                 WHERE NOT EXISTS (SELECT 1 FROM jobs r
                                   WHERE r.concurrency_key = $4::text || $1 AND r.status = 'running')
                 ON CONFLICT (concurrency_key) WHERE status = 'queued' DO NOTHING
                 RETURNING id",
            )
            .bind(issue_id)
            .bind(DRAIN_MAX_ATTEMPTS)
            .bind(relay_core::JobKind::ProcessIssue.as_str())
            .bind(relay_core::ProcessIssue::KEY_PREFIX)
            .fetch_optional(&mut *tx)
            .await?;
            (ActionOutcome::Done { job_id: drain }, job)
        }
    };
    record(&mut tx, actor, "write_retry", write_id.get(), &outcome).await?;
    tx.commit().await?;
    if matches!(outcome, ActionOutcome::Done { job_id: Some(_) }) {
        wake_workers(pool).await?;
    }
    trace(
        pool,
        traced_job,
        actor,
        "write_retry",
        write_id.get(),
        &outcome,
    )
    .await?;
    Ok(outcome)
}

/// The key of a summary write of the issue recorded after `write_id` (a newer revision), if any.
async fn newer_summary_write(
    tx: &mut sqlx::PgConnection,
    issue_id: IssueId,
    write_id: OutboxId,
) -> Result<Option<String>> {
    let later: Vec<String> = sqlx::query_scalar(
        "SELECT idempotency_key FROM outbox WHERE issue_id = $1 AND id > $2 ORDER BY id DESC",
    )
    .bind(issue_id)
    .bind(write_id)
    .fetch_all(tx)
    .await?;
    Ok(later
        .into_iter()
        .find(|key| crate::summaries::is_summary_write(issue_id, key)))
}

/// Attempts of the drain job a write retry queues (the sweeper's jobs use the worker's setting;
/// the CLI has no worker settings to hand, so it uses the default).
const DRAIN_MAX_ATTEMPTS: i32 = 5;

async fn record(
    tx: &mut sqlx::PgConnection,
    actor: &str,
    action: &str,
    target_id: i64,
    outcome: &ActionOutcome,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO operator_actions (actor, action, target_id, outcome, detail)
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(actor)
    .bind(action)
    .bind(target_id)
    .bind(outcome.label())
    .bind(detail(outcome))
    .execute(tx)
    .await?;
    Ok(())
}

fn detail(outcome: &ActionOutcome) -> Value {
    match outcome {
        ActionOutcome::Done { job_id } => json!({ "job_id": job_id }),
        ActionOutcome::NotApplicable { status } => json!({ "status": status }),
        ActionOutcome::Superseded { by_job } => json!({ "by_job": by_job }),
        ActionOutcome::Replaced { by_write } => json!({ "replaced_by": by_write }),
        ActionOutcome::NotFound => json!({}),
    }
}

/// One operator run with one `decision` event in `job_id`'s trace (nothing when no job).
async fn trace(
    pool: &PgPool,
    job_id: Option<JobId>,
    actor: &str,
    action: &str,
    target_id: i64,
    outcome: &ActionOutcome,
) -> Result<()> {
    let Some(job_id) = job_id else {
        return Ok(());
    };
    let issue_id: Option<IssueId> =
        sqlx::query_scalar("SELECT (payload->>'issue_id')::bigint FROM jobs WHERE id = $1")
            .bind(job_id)
            .fetch_optional(pool)
            .await?
            .flatten();
    let payload = json!({
        "operator": actor,
        "action": action,
        "target_id": target_id,
        "outcome": outcome.label(),
        "detail": detail(outcome),
    });
    let now = Utc::now();
    let run = RunRef::New {
        run: NewRun {
            job_id,
            issue_id,
            attempt: 1,
            worker: OPERATOR_WORKER,
        },
        started_at: now,
    };
    let events = [NewEvent {
        seq: 0,
        at: now,
        kind: "decision",
        agent: "operator",
        payload: &payload,
    }];
    crate::trace::write_batch(
        pool,
        job_id,
        &run,
        &events,
        Some(Finish {
            outcome: RunOutcome::Succeeded,
            dropped: 0,
        }),
    )
    .await?;
    Ok(())
}

/// Wakes idle workers (the queue's channel), after the commit.
async fn wake_workers(pool: &PgPool) -> Result<()> {
    sqlx::query("SELECT pg_notify($1, '')")
        .bind(crate::queue::NOTIFY_CHANNEL)
        .execute(pool)
        .await?;
    Ok(())
}
