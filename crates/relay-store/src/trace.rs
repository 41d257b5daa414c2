//! The run trace (migration 0007): one `trace_runs` row per attempt of a job and its events in
//! `trace_events`. The worker's sink writes events in batches ([`insert_events`]: one statement
//! per batch) and wakes readers with a notification on [`NOTIFY_CHANNEL`] carrying the job id;
//! readers (the SSE endpoint, `relay trace`) page with [`events_after`] by cursor.
//!
//! The store knows nothing of the agent's event types: kinds are their stored names.

use chrono::{DateTime, Utc};
use relay_core::{IssueId, JobId};
use serde_json::Value;
use sqlx::PgPool;

use crate::Result;

/// The LISTEN/NOTIFY channel on which trace writes wake readers; the payload is the job id.
pub const NOTIFY_CHANNEL: &str = "relay_trace";

/// Most events one [`events_after`] page returns.
pub const MAX_PAGE: i64 = 1000;

/// A run to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRun<'a> {
    pub job_id: JobId,
    pub issue_id: Option<IssueId>,
    /// `jobs.attempts` when the run started.
    pub attempt: i32,
    pub worker: &'a str,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutcome {
    Succeeded,
    /// Failed; the queue will run the job again.
    Retrying,
    /// Failed for good (permanent error or out of attempts).
    Failed,
}

impl RunOutcome {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Succeeded => "succeeded",
            Self::Retrying => "retrying",
            Self::Failed => "failed",
        }
    }
}

/// An event to append. `kind` is a stored type name (`llm_call`, `tool_call`, `stage`,
/// `validation_failure`, `action`, `decision`, `error`).
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent<'a> {
    pub seq: i32,
    pub at: DateTime<Utc>,
    pub kind: &'a str,
    pub agent: &'a str,
    pub payload: &'a Value,
}

/// A stored run.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct Run {
    pub id: i64,
    pub job_id: JobId,
    pub issue_id: Option<IssueId>,
    pub attempt: i32,
    pub worker: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub outcome: Option<String>,
    pub dropped: i64,
}

/// A stored event.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow, serde::Serialize)]
pub struct Event {
    pub cursor: i64,
    pub run_id: i64,
    pub job_id: JobId,
    pub seq: i32,
    pub at: DateTime<Utc>,
    #[sqlx(rename = "type")]
    #[serde(rename = "type")]
    pub kind: String,
    pub agent: String,
    pub payload: Value,
}

/// Starts a run and returns its id.
pub async fn start_run(pool: &PgPool, run: &NewRun<'_>) -> Result<i64> {
    let id = sqlx::query_scalar(
        "INSERT INTO trace_runs (job_id, issue_id, attempt, worker)
         VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(run.job_id)
    .bind(run.issue_id)
    .bind(run.attempt.max(1))
    .bind(run.worker)
    .fetch_one(pool)
    .await?;
    Ok(id)
}

/// Appends one batch of a stored run's events and wakes readers of the job (one statement).
pub async fn insert_events(
    pool: &PgPool,
    run_id: i64,
    job_id: JobId,
    events: &[NewEvent<'_>],
) -> Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    write_batch(pool, job_id, &RunRef::Stored(run_id), events, None).await?;
    Ok(())
}

/// Which run a batch belongs to: one already stored, or one to create with the batch (a short
/// job's whole trace is then a single statement).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunRef<'a> {
    Stored(i64),
    New {
        run: NewRun<'a>,
        started_at: DateTime<Utc>,
    },
}

/// How a run ended and what it dropped, to record with its last batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finish {
    pub outcome: RunOutcome,
    pub dropped: i64,
}

/// A batch that creates its run ($8 issue, $9 attempt, $10 worker, $11 started, $12 outcome,
/// $13 dropped).
const NEW_RUN_BATCH: &str = "WITH r AS (
                 INSERT INTO trace_runs (job_id, issue_id, attempt, worker, started_at, finished_at,
                                         outcome, dropped)
                 VALUES ($1, $8, $9, $10, $11, CASE WHEN $12::text IS NULL THEN NULL ELSE now() END,
                         $12, $13)
                 RETURNING id
             ),
             e AS (
                 INSERT INTO trace_events (run_id, job_id, seq, at, type, agent, payload)
                 SELECT r.id, $1, x.seq, x.at, x.kind, x.agent, x.payload
                 FROM r, unnest($3::int[], $4::timestamptz[], $5::text[], $6::text[], $7::jsonb[])
                      WITH ORDINALITY AS x(seq, at, kind, agent, payload, n)
                 ORDER BY x.n
             )
             SELECT r.id FROM r, pg_notify($2, $1::text)";

/// A batch of a stored run, finishing it when $9 (outcome) is given ($8 run, $10 dropped).
const STORED_RUN_BATCH: &str = "WITH e AS (
                 INSERT INTO trace_events (run_id, job_id, seq, at, type, agent, payload)
                 SELECT $8, $1, x.seq, x.at, x.kind, x.agent, x.payload
                 FROM unnest($3::int[], $4::timestamptz[], $5::text[], $6::text[], $7::jsonb[])
                      WITH ORDINALITY AS x(seq, at, kind, agent, payload, n)
                 ORDER BY x.n
             ),
             u AS (
                 UPDATE trace_runs SET finished_at = now(), outcome = $9, dropped = dropped + $10
                 WHERE id = $8 AND $9::text IS NOT NULL
             )
             SELECT $8::bigint FROM pg_notify($2, $1::text)";

/// Writes one batch of a run's events — creating the run first when `run` is new, finishing it
/// when `finish` is given — and wakes the job's readers, all in ONE statement (one round trip on
/// the job's path). Returns the run's id.
///
/// The NOTIFY rides in the statement's own implicit transaction: trace writes are small and at
/// most a few per second per running job, so the notify lock they take at commit is brief (unlike
/// the intake's transactions, see `queue::enqueue`).
pub async fn write_batch(
    pool: &PgPool,
    job_id: JobId,
    run: &RunRef<'_>,
    events: &[NewEvent<'_>],
    finish: Option<Finish>,
) -> Result<i64> {
    let columns = EventColumns::of(events);
    let outcome = finish.map(|f| f.outcome.as_str());
    let dropped = finish.map_or(0, |f| f.dropped.max(0));
    // $1-$7 are common to both statements; the run's own parameters follow.
    let sql = match run {
        RunRef::New { .. } => NEW_RUN_BATCH,
        RunRef::Stored(_) => STORED_RUN_BATCH,
    };
    let query = sqlx::query_scalar(sql)
        .bind(job_id)
        .bind(NOTIFY_CHANNEL)
        .bind(&columns.seqs)
        .bind(&columns.ats)
        .bind(&columns.kinds)
        .bind(&columns.agents)
        .bind(&columns.payloads);
    let query = match run {
        RunRef::New { run, started_at } => query
            .bind(run.issue_id)
            .bind(run.attempt.max(1))
            .bind(run.worker)
            .bind(started_at)
            .bind(outcome)
            .bind(dropped),
        RunRef::Stored(id) => query.bind(*id).bind(outcome).bind(dropped),
    };
    Ok(query.fetch_one(pool).await?)
}

/// A batch as the column arrays `unnest` takes.
struct EventColumns<'a> {
    seqs: Vec<i32>,
    ats: Vec<DateTime<Utc>>,
    kinds: Vec<&'a str>,
    agents: Vec<&'a str>,
    payloads: Vec<&'a Value>,
}

impl<'a> EventColumns<'a> {
    fn of(events: &[NewEvent<'a>]) -> EventColumns<'a> {
        EventColumns {
            seqs: events.iter().map(|e| e.seq).collect(),
            ats: events.iter().map(|e| e.at).collect(),
            kinds: events.iter().map(|e| e.kind).collect(),
            agents: events.iter().map(|e| e.agent).collect(),
            payloads: events.iter().map(|e| e.payload).collect(),
        }
    }
}

/// Marks a run finished with its outcome and the number of events it dropped, then wakes readers.
pub async fn finish_run(
    pool: &PgPool,
    run_id: i64,
    job_id: JobId,
    outcome: RunOutcome,
    dropped: i64,
) -> Result<()> {
    sqlx::query(
        "UPDATE trace_runs SET finished_at = now(), outcome = $2, dropped = dropped + $3
         WHERE id = $1",
    )
    .bind(run_id)
    .bind(outcome.as_str())
    .bind(dropped.max(0))
    .execute(pool)
    .await?;
    notify(pool, job_id).await
}

/// Wakes the job's readers. A separate statement after the write has committed (see
/// `queue::enqueue` on why a NOTIFY never rides inside a writing transaction).
async fn notify(pool: &PgPool, job_id: JobId) -> Result<()> {
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(NOTIFY_CHANNEL)
        .bind(job_id.to_string())
        .execute(pool)
        .await?;
    Ok(())
}

/// The job's events after `cursor` (0: from the start), oldest first, at most `limit`
/// (capped at [`MAX_PAGE`]).
pub async fn events_after(
    pool: &PgPool,
    job_id: JobId,
    cursor: i64,
    limit: i64,
) -> Result<Vec<Event>> {
    let events = sqlx::query_as(
        "SELECT cursor, run_id, job_id, seq, at, type, agent, payload
         FROM trace_events WHERE job_id = $1 AND cursor > $2
         ORDER BY cursor LIMIT $3",
    )
    .bind(job_id)
    .bind(cursor)
    .bind(limit.clamp(1, MAX_PAGE))
    .fetch_all(pool)
    .await?;
    Ok(events)
}

/// The job's runs, oldest first.
pub async fn runs(pool: &PgPool, job_id: JobId) -> Result<Vec<Run>> {
    let runs = sqlx::query_as(
        "SELECT id, job_id, issue_id, attempt, worker, started_at, finished_at, outcome, dropped
         FROM trace_runs WHERE job_id = $1 ORDER BY id",
    )
    .bind(job_id)
    .fetch_all(pool)
    .await?;
    Ok(runs)
}

/// Where a job stands, for a trace reader deciding whether more events can come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobProgress {
    /// Queued or running: more events may come.
    Live,
    /// Succeeded, failed or dead: its trace is complete.
    Finished,
}

/// The job's progress, or `None` when there is no such job.
pub async fn job_progress(pool: &PgPool, job_id: JobId) -> Result<Option<JobProgress>> {
    let status: Option<String> = sqlx::query_scalar("SELECT status FROM jobs WHERE id = $1")
        .bind(job_id)
        .fetch_optional(pool)
        .await?;
    Ok(status.map(|status| match status.as_str() {
        "queued" | "running" => JobProgress::Live,
        _ => JobProgress::Finished,
    }))
}

/// A LISTEN connection on [`NOTIFY_CHANNEL`]. Notifications can be lost across a reconnect, so
/// readers also poll.
pub struct TraceNotifications(sqlx::postgres::PgListener);

impl TraceNotifications {
    pub async fn connect(pool: &PgPool) -> Result<TraceNotifications> {
        let mut listener = sqlx::postgres::PgListener::connect_with(pool).await?;
        listener.listen(NOTIFY_CHANNEL).await?;
        Ok(TraceNotifications(listener))
    }

    /// Waits for the next notification and returns the job id it names (`None` for a payload that
    /// is not one).
    pub async fn recv(&mut self) -> Result<Option<i64>> {
        let notification = self.0.recv().await?;
        Ok(notification.payload().parse().ok())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn event<'a>(seq: i32, kind: &'a str, payload: &'a Value) -> NewEvent<'a> {
        NewEvent {
            seq,
            at: Utc::now(),
            kind,
            agent: "planner",
            payload,
        }
    }

    /// Migration 0023: a tool call's start and a long step's progress are stored kinds; an
    /// unknown kind is still refused.
    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn tool_start_and_progress_events_are_stored(pool: PgPool) {
        let run = start_run(
            &pool,
            &NewRun {
                job_id: relay_core::JobId(9),
                issue_id: None,
                attempt: 1,
                worker: "w1",
            },
        )
        .await
        .unwrap();
        let payload = json!({ "call_id": "t1" });
        let events = [
            event(0, "tool_start", &payload),
            event(1, "progress", &payload),
            event(2, "log", &payload),
        ];
        insert_events(&pool, run, relay_core::JobId(9), &events)
            .await
            .unwrap();
        let kinds: Vec<String> = events_after(&pool, relay_core::JobId(9), 0, 10)
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.kind)
            .collect();
        assert_eq!(kinds, ["tool_start", "progress", "log"]);
        assert!(
            insert_events(
                &pool,
                run,
                relay_core::JobId(9),
                &[event(3, "tool_end", &payload)]
            )
            .await
            .is_err()
        );
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn batches_keep_order_and_pages_resume_by_cursor(pool: PgPool) {
        let run = start_run(
            &pool,
            &NewRun {
                job_id: relay_core::JobId(7),
                issue_id: Some(relay_core::IssueId(3)),
                attempt: 1,
                worker: "w1",
            },
        )
        .await
        .unwrap();
        let payloads: Vec<Value> = (0..5).map(|n| json!({ "n": n })).collect();
        let first: Vec<_> = (0..3)
            .map(|i| event(i, "tool_call", &payloads[i as usize]))
            .collect();
        let second: Vec<_> = (3..5)
            .map(|i| event(i, "llm_call", &payloads[i as usize]))
            .collect();
        insert_events(&pool, run, relay_core::JobId(7), &first)
            .await
            .unwrap();
        insert_events(&pool, run, relay_core::JobId(7), &second)
            .await
            .unwrap();
        // Another job's events never show up in this job's pages.
        insert_events(
            &pool,
            run,
            relay_core::JobId(8),
            &[event(5, "stage", &payloads[0])],
        )
        .await
        .unwrap();

        let all = events_after(&pool, relay_core::JobId(7), 0, 100)
            .await
            .unwrap();
        let ns: Vec<i64> = all
            .iter()
            .map(|e| e.payload["n"].as_i64().unwrap())
            .collect();
        assert_eq!(ns, [0, 1, 2, 3, 4]);
        assert!(all.windows(2).all(|w| w[0].cursor < w[1].cursor));
        assert_eq!(all[3].kind, "llm_call");

        let rest = events_after(&pool, relay_core::JobId(7), all[1].cursor, 2)
            .await
            .unwrap();
        let seqs: Vec<i32> = rest.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [2, 3]);
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn runs_finish_with_outcome_and_progress_follows_the_job(pool: PgPool) {
        assert_eq!(
            job_progress(&pool, relay_core::JobId(1)).await.unwrap(),
            None
        );
        let job: i64 = sqlx::query_scalar(
            "INSERT INTO jobs (kind, payload, max_attempts) VALUES ('x', '{}', 3) RETURNING id",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        assert_eq!(
            job_progress(&pool, relay_core::JobId(job)).await.unwrap(),
            Some(JobProgress::Live)
        );
        let run = start_run(
            &pool,
            &NewRun {
                job_id: relay_core::JobId(job),
                issue_id: None,
                attempt: 1,
                worker: "w1",
            },
        )
        .await
        .unwrap();
        finish_run(&pool, run, relay_core::JobId(job), RunOutcome::Retrying, 2)
            .await
            .unwrap();
        let runs = runs(&pool, relay_core::JobId(job)).await.unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].outcome.as_deref(), Some("retrying"));
        assert_eq!(runs[0].dropped, 2);
        assert!(runs[0].finished_at.is_some());

        sqlx::query("UPDATE jobs SET status = 'succeeded' WHERE id = $1")
            .bind(job)
            .execute(&pool)
            .await
            .unwrap();
        assert_eq!(
            job_progress(&pool, relay_core::JobId(job)).await.unwrap(),
            Some(JobProgress::Finished)
        );
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn a_short_runs_whole_trace_is_one_statement_and_a_long_one_finishes_with_its_last_batch(
        pool: PgPool,
    ) {
        let payload = json!({"x": 1});
        let started_at = Utc::now() - chrono::Duration::seconds(5);
        let new = RunRef::New {
            run: NewRun {
                job_id: relay_core::JobId(11),
                issue_id: Some(relay_core::IssueId(4)),
                attempt: 2,
                worker: "w",
            },
            started_at,
        };
        let done = Some(Finish {
            outcome: RunOutcome::Failed,
            dropped: 3,
        });
        let short = write_batch(
            &pool,
            relay_core::JobId(11),
            &new,
            &[event(0, "stage", &payload)],
            done,
        )
        .await
        .unwrap();
        let runs = runs(&pool, relay_core::JobId(11)).await.unwrap();
        assert_eq!(runs[0].id, short);
        assert_eq!(runs[0].outcome.as_deref(), Some("failed"));
        assert_eq!((runs[0].attempt, runs[0].dropped), (2, 3));
        assert_eq!(runs[0].started_at.timestamp(), started_at.timestamp());
        assert_eq!(
            events_after(&pool, relay_core::JobId(11), 0, 10)
                .await
                .unwrap()
                .len(),
            1
        );

        // A run created by its first batch, still running, then finished by its last.
        let long = write_batch(
            &pool,
            relay_core::JobId(12),
            &RunRef::New {
                run: NewRun {
                    job_id: relay_core::JobId(12),
                    issue_id: None,
                    attempt: 1,
                    worker: "w",
                },
                started_at,
            },
            &[event(0, "stage", &payload)],
            None,
        )
        .await
        .unwrap();
        assert!(
            super::runs(&pool, relay_core::JobId(12)).await.unwrap()[0]
                .finished_at
                .is_none()
        );
        let finish = Some(Finish {
            outcome: RunOutcome::Succeeded,
            dropped: 0,
        });
        write_batch(
            &pool,
            relay_core::JobId(12),
            &RunRef::Stored(long),
            &[event(1, "stage", &payload)],
            finish,
        )
        .await
        .unwrap();
        let run = &super::runs(&pool, relay_core::JobId(12)).await.unwrap()[0];
        assert_eq!(run.outcome.as_deref(), Some("succeeded"));
        let seqs: Vec<i32> = events_after(&pool, relay_core::JobId(12), 0, 10)
            .await
            .unwrap()
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(seqs, [0, 1]);
        // An empty last batch only finishes.
        let empty = write_batch(
            &pool,
            relay_core::JobId(13),
            &RunRef::New {
                run: NewRun {
                    job_id: relay_core::JobId(13),
                    issue_id: None,
                    attempt: 1,
                    worker: "w",
                },
                started_at,
            },
            &[],
            finish,
        )
        .await
        .unwrap();
        assert_eq!(
            super::runs(&pool, relay_core::JobId(13)).await.unwrap()[0].id,
            empty
        );
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn writes_wake_listeners_with_the_job_id(pool: PgPool) {
        let mut listener = TraceNotifications::connect(&pool).await.unwrap();
        let run = start_run(
            &pool,
            &NewRun {
                job_id: relay_core::JobId(42),
                issue_id: None,
                attempt: 1,
                worker: "w1",
            },
        )
        .await
        .unwrap();
        let payload = json!({});
        insert_events(
            &pool,
            run,
            relay_core::JobId(42),
            &[event(0, "decision", &payload)],
        )
        .await
        .unwrap();
        assert_eq!(listener.recv().await.unwrap(), Some(42));
    }
}
