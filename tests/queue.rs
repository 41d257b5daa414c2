//! The job queue and worker runtime against the real Postgres.

use relay_core::JobId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use relay_store::queue::{self, FailureKind, NewJob};
use relay_worker::{JobContext, JobError, JobHandler, Outcome, Registry, Worker, WorkerSettings};
use serde_json::{Value, json};
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

type HandlerFn = dyn Fn(JobContext) -> BoxFuture<'static, Result<Value, JobError>> + Send + Sync;

/// A handler made from a closure.
pub struct FnHandler(Arc<HandlerFn>);

impl FnHandler {
    pub fn new<F, Fut>(f: F) -> FnHandler
    where
        F: Fn(JobContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Value, JobError>> + Send + 'static,
    {
        FnHandler(Arc::new(move |ctx| Box::pin(f(ctx))))
    }
}

#[async_trait::async_trait]
impl JobHandler for FnHandler {
    async fn run(&self, context: JobContext) -> Result<Value, JobError> {
        (self.0)(context).await
    }
}

pub fn settings() -> WorkerSettings {
    WorkerSettings {
        concurrency: 4,
        lease_secs: 30,
        poll_interval_secs: 1,
        max_attempts: 3,
        backoff_base_secs: 1,
        backoff_max_secs: 60,
        job_timeout_secs: 60,
        shutdown_grace_secs: 5,
        trace: true,
        // Off unless a test is about it: jobs here are the ones each test queues.
        sweep_interval_secs: 0,
    }
}

pub async fn enqueue(
    pool: &PgPool,
    kind: &str,
    payload: Value,
    key: Option<&str>,
    max_attempts: i32,
) -> i64 {
    let mut conn = pool.acquire().await.unwrap();
    queue::enqueue(
        &mut conn,
        &NewJob {
            kind,
            payload: &payload,
            concurrency_key: key,
            max_attempts,
        },
    )
    .await
    .unwrap()
    .job_id()
    .get()
}

async fn status(pool: &PgPool, job_id: i64) -> (String, i32, Option<String>) {
    let job = queue::get(pool, JobId(job_id)).await.unwrap().unwrap();
    (job.status, job.attempts, job.last_error)
}

async fn make_due(pool: &PgPool) {
    sqlx::query("UPDATE jobs SET run_after = now() WHERE status = 'queued'")
        .execute(pool)
        .await
        .unwrap();
}

/// Moves a running job's lease into the past, as if its worker had been silent for longer than the
/// lease: tests drive expiry with this instead of sleeping past a short lease (which flakes on a
/// loaded machine).
async fn expire_lease(pool: &PgPool, job_id: i64) {
    let moved = sqlx::query(
        "UPDATE jobs SET lease_expires_at = now() - interval '1 second'
         WHERE id = $1 AND status = 'running'",
    )
    .bind(job_id)
    .execute(pool)
    .await
    .unwrap()
    .rows_affected();
    assert_eq!(moved, 1, "job {job_id} is running");
}

async fn lease_expires_at(pool: &PgPool, job_id: i64) -> (chrono::DateTime<chrono::Utc>, bool) {
    sqlx::query_as("SELECT lease_expires_at, lease_expires_at > now() FROM jobs WHERE id = $1")
        .bind(job_id)
        .fetch_one(pool)
        .await
        .unwrap()
}

/// Polls `check` until it holds. Not a timing assertion: the deadline only turns a hang into a
/// failure.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !check().await {
        assert!(
            std::time::Instant::now() < deadline,
            "never happened: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_dead_workers_job_runs_again_and_completes_once(pool: PgPool) {
    let runs = Arc::new(Mutex::new(0));
    let counter = runs.clone();
    let registry = Registry::new().register(
        "test",
        FnHandler::new(move |_| {
            let counter = counter.clone();
            async move {
                *counter.lock().unwrap() += 1;
                Ok(json!({}))
            }
        }),
    );
    let job_id = enqueue(&pool, "test", json!({}), None, 3).await;

    // Worker A claims and dies (never heartbeats, never completes).
    let dead = queue::claim(&pool, "worker-a", Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();
    let worker_b = Worker::new(pool.clone(), registry, settings());
    assert_eq!(
        worker_b.run_next_job().await.unwrap(),
        Outcome::Empty,
        "the lease is still live"
    );
    expire_lease(&pool, job_id).await;
    assert_eq!(
        worker_b.run_next_job().await.unwrap(),
        Outcome::Succeeded {
            job_id: JobId(job_id)
        }
    );

    // A comes back from the dead: its writes are fenced off by the lease token.
    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(
        queue::complete(&mut conn, &dead, &json!({})).await.unwrap(),
        None
    );
    assert!(
        !queue::heartbeat(&pool, &dead, Duration::from_secs(1))
            .await
            .unwrap()
    );
    let backoff = settings().backoff();
    assert_eq!(
        queue::fail(
            &pool,
            &dead,
            &queue::Failure {
                error: "late",
                cause: None
            },
            FailureKind::Retryable,
            backoff
        )
        .await
        .unwrap(),
        queue::Failed::LeaseLost
    );

    assert_eq!(*runs.lock().unwrap(), 1);
    assert_eq!(status(&pool, job_id).await.0, "succeeded");
    assert_eq!(
        status(&pool, job_id).await.1,
        2,
        "the dead worker's attempt counts"
    );
    assert_eq!(
        queue::count_runs(&pool, JobId(job_id), "succeeded")
            .await
            .unwrap(),
        1
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_live_long_job_keeps_its_lease(pool: PgPool) {
    // The job runs until the test releases it, however slow the machine.
    let release = Arc::new(tokio::sync::Notify::new());
    let registry = Registry::new().register(
        "slow",
        FnHandler::new({
            let release = release.clone();
            move |_| {
                let release = release.clone();
                async move {
                    release.notified().await;
                    Ok(json!({}))
                }
            }
        }),
    );
    let job_id = enqueue(&pool, "slow", json!({}), None, 3).await;
    // A 1 s lease: the heartbeat renews it every third of a second.
    let worker = Worker::new(
        pool.clone(),
        registry,
        WorkerSettings {
            lease_secs: 1,
            ..settings()
        },
    );
    let running = tokio::spawn({
        let worker = worker.clone();
        async move { worker.run_next_job().await.unwrap() }
    });
    eventually("the job runs", || async {
        status(&pool, job_id).await.0 == "running"
    })
    .await;

    // Twice: the lease is made to look expired, and the heartbeat of the live worker moves it
    // back into the future (same token, so the job is still this worker's).
    for _ in 0..2 {
        expire_lease(&pool, job_id).await;
        let (expired_at, live) = lease_expires_at(&pool, job_id).await;
        assert!(!live);
        eventually("the heartbeat renews the lease", || async {
            let (at, live) = lease_expires_at(&pool, job_id).await;
            live && at > expired_at
        })
        .await;
    }
    release.notify_one();
    assert_eq!(
        running.await.unwrap(),
        Outcome::Succeeded {
            job_id: JobId(job_id)
        }
    );
    assert_eq!(
        status(&pool, job_id).await.1,
        1,
        "one attempt, never stolen"
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn many_workers_never_run_a_job_twice(
    options: sqlx::postgres::PgPoolOptions,
    connect: sqlx::postgres::PgConnectOptions,
) {
    let pool = options
        .max_connections(20)
        .connect_with(connect)
        .await
        .unwrap();
    const JOBS: usize = 200;
    let runs: Arc<Mutex<HashMap<i64, u32>>> = Arc::default();
    let counter = runs.clone();
    let registry = Registry::new().register(
        "test",
        FnHandler::new(move |ctx| {
            let counter = counter.clone();
            async move {
                *counter.lock().unwrap().entry(ctx.job.id.get()).or_default() += 1;
                tokio::time::sleep(Duration::from_millis(2)).await;
                Ok(json!({}))
            }
        }),
    );
    for i in 0..JOBS {
        enqueue(&pool, "test", json!({ "i": i }), None, 3).await;
    }
    let shutdown = CancellationToken::new();
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let worker = Worker::new(pool.clone(), registry.clone(), settings());
            tokio::spawn(worker.run(shutdown.clone()))
        })
        .collect();
    wait_until_idle(&pool).await;
    shutdown.cancel();
    for worker in workers {
        worker.await.unwrap();
    }
    let runs = runs.lock().unwrap().clone();
    assert_eq!(runs.len(), JOBS);
    assert!(
        runs.values().all(|&n| n == 1),
        "some job ran twice: {runs:?}"
    );
    let succeeded: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs WHERE status = 'succeeded'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(succeeded, JOBS as i64);
}

async fn wait_until_idle(pool: &PgPool) {
    for _ in 0..600 {
        let open: i64 =
            sqlx::query_scalar("SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')")
                .fetch_one(pool)
                .await
                .unwrap();
        if open == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("jobs did not finish within 60 s");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn jobs_of_one_issue_never_overlap(
    options: sqlx::postgres::PgPoolOptions,
    connect: sqlx::postgres::PgConnectOptions,
) {
    // Three workers with four slots each, their LISTEN connections and the enqueuer: more than
    // the five connections a test pool gets by default.
    let pool = options
        .max_connections(20)
        .connect_with(connect)
        .await
        .unwrap();
    /// Running jobs per key, the most ever seen at once for one key, and runs in total.
    type Overlap = (HashMap<String, i32>, i32, u32);
    let active: Arc<Mutex<Overlap>> = Arc::default();
    let tracker = active.clone();
    let registry = Registry::new().register(
        "issue",
        FnHandler::new(move |ctx| {
            let tracker = tracker.clone();
            async move {
                let key = ctx.job.concurrency_key.clone().unwrap();
                {
                    let mut state = tracker.lock().unwrap();
                    let now = {
                        let n = state.0.entry(key.clone()).or_default();
                        *n += 1;
                        *n
                    };
                    state.1 = state.1.max(now);
                    state.2 += 1;
                }
                tokio::time::sleep(Duration::from_millis(15)).await;
                *tracker.lock().unwrap().0.get_mut(&key).unwrap() -= 1;
                Ok(json!({}))
            }
        }),
    );
    let shutdown = CancellationToken::new();
    let workers: Vec<_> = (0..3)
        .map(|_| {
            tokio::spawn(
                Worker::new(pool.clone(), registry.clone(), settings()).run(shutdown.clone()),
            )
        })
        .collect();
    // Events keep arriving for three issues while workers run.
    for i in 0..90 {
        let key = format!("issue:{}", i % 3);
        enqueue(&pool, "issue", json!({}), Some(&key), 3).await;
        if i % 10 == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    wait_until_idle(&pool).await;
    shutdown.cancel();
    for worker in workers {
        worker.await.unwrap();
    }
    let state = active.lock().unwrap().clone();
    assert_eq!(state.1, 1, "two jobs of one issue ran at the same time");
    assert!(state.2 >= 3, "every issue was worked on");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn failures_back_off_then_dead_letter(pool: PgPool) {
    let registry = Registry::new()
        .register(
            "flaky",
            FnHandler::new(|_| async { Err(JobError::Retryable(anyhow::anyhow!("upstream 502"))) }),
        )
        .register(
            "broken",
            FnHandler::new(|_| async { Err(JobError::Permanent(anyhow::anyhow!("bad payload"))) }),
        )
        .register("panics", FnHandler::new(|_| async { panic!("boom") }));
    let worker = Worker::new(pool.clone(), registry, settings());

    let flaky = enqueue(&pool, "flaky", json!({}), None, 3).await;
    assert_eq!(
        worker.run_next_job().await.unwrap(),
        Outcome::Retried {
            job_id: JobId(flaky)
        }
    );
    // Backoff is computed in SQL: base 1 s with ±25% jitter, so not due yet.
    let job = queue::get(&pool, JobId(flaky)).await.unwrap().unwrap();
    let delay = (job.run_after - chrono::Utc::now()).num_milliseconds();
    assert!((500..=1300).contains(&delay), "first delay {delay} ms");
    assert_eq!(worker.run_next_job().await.unwrap(), Outcome::Empty);
    make_due(&pool).await;
    assert_eq!(
        worker.run_next_job().await.unwrap(),
        Outcome::Retried {
            job_id: JobId(flaky)
        }
    );
    let job = queue::get(&pool, JobId(flaky)).await.unwrap().unwrap();
    let delay = (job.run_after - chrono::Utc::now()).num_milliseconds();
    assert!(
        (1200..=2600).contains(&delay),
        "second delay {delay} ms doubles"
    );
    make_due(&pool).await;
    assert_eq!(
        worker.run_next_job().await.unwrap(),
        Outcome::Dead {
            job_id: JobId(flaky)
        }
    );
    let (state, attempts, error) = status(&pool, flaky).await;
    assert_eq!(
        (state.as_str(), attempts, error.as_deref()),
        ("dead", 3, Some("upstream 502"))
    );
    assert_eq!(
        queue::count_runs(&pool, JobId(flaky), "retried")
            .await
            .unwrap(),
        2
    );

    let broken = enqueue(&pool, "broken", json!({}), None, 3).await;
    assert_eq!(
        worker.run_next_job().await.unwrap(),
        Outcome::Failed {
            job_id: JobId(broken)
        }
    );
    assert_eq!(status(&pool, broken).await.0, "failed");

    // A panic fails the attempt, not the worker, which goes on to the next job.
    let panics = enqueue(&pool, "panics", json!({}), None, 1).await;
    assert_eq!(
        worker.run_next_job().await.unwrap(),
        Outcome::Dead {
            job_id: JobId(panics)
        }
    );
    assert!(
        status(&pool, panics)
            .await
            .2
            .unwrap()
            .contains("job panicked: boom")
    );
    let unknown = enqueue(&pool, "no-such-kind", json!({}), None, 3).await;
    assert_eq!(
        worker.run_next_job().await.unwrap(),
        Outcome::Failed {
            job_id: JobId(unknown)
        }
    );
}

/// Every attempt is a trace run: the worker's own begin/end events around the handler's, finished
/// with the attempt's outcome before the job's status changes.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn every_attempt_leaves_a_finished_trace_run(pool: PgPool) {
    use relay_agent::trace::TraceKind;
    use relay_store::trace;

    let registry = Registry::new().register(
        "flaky",
        FnHandler::new(|context: JobContext| async move {
            let tracer = context.tracer.for_agent("handler");
            tracer.event(TraceKind::ToolCall, json!({ "tool": "grep", "ok": true }));
            if context.job.attempt < 2 {
                Err(JobError::Retryable(anyhow::anyhow!("upstream 502")))
            } else {
                Ok(json!({}))
            }
        }),
    );
    let worker = Worker::new(pool.clone(), registry, settings());
    let job = enqueue(&pool, "flaky", json!({ "issue_id": 9 }), None, 3).await;
    assert_eq!(
        worker.run_next_job().await.unwrap(),
        Outcome::Retried { job_id: JobId(job) }
    );
    make_due(&pool).await;
    assert_eq!(
        worker.run_next_job().await.unwrap(),
        Outcome::Succeeded { job_id: JobId(job) }
    );

    let runs = trace::runs(&pool, JobId(job)).await.unwrap();
    let outcomes: Vec<_> = runs
        .iter()
        .map(|r| (r.attempt, r.outcome.as_deref(), r.issue_id))
        .collect();
    assert_eq!(
        outcomes,
        [
            (1, Some("retrying"), Some(relay_core::IssueId(9))),
            (2, Some("succeeded"), Some(relay_core::IssueId(9)))
        ]
    );
    let events = trace::events_after(&pool, JobId(job), 0, 100)
        .await
        .unwrap();
    let summary: Vec<(i64, &str, &str)> = events
        .iter()
        .map(|e| (e.run_id, e.agent.as_str(), e.kind.as_str()))
        .collect();
    let (first, second) = (runs[0].id, runs[1].id);
    assert_eq!(
        summary,
        [
            (first, "worker", "stage"),
            (first, "handler", "tool_call"),
            (first, "worker", "stage"),
            (second, "worker", "stage"),
            (second, "handler", "tool_call"),
            (second, "worker", "stage"),
        ]
    );
    assert_eq!(events[2].payload["outcome"], "retrying");
    assert_eq!(events[2].payload["error"], "upstream 502");

    // Switched off: no trace runs at all.
    let worker = Worker::new(
        pool.clone(),
        Registry::new().register("quiet", FnHandler::new(|_| async { Ok(json!({})) })),
        WorkerSettings {
            trace: false,
            ..settings()
        },
    );
    let quiet = enqueue(&pool, "quiet", json!({}), None, 3).await;
    worker.run_next_job().await.unwrap();
    assert!(trace::runs(&pool, JobId(quiet)).await.unwrap().is_empty());
}

/// A job error that quotes a configured secret is stored, traced and logged without it: the
/// registry the outbox scrubs with is the one job errors are scrubbed with.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_failed_jobs_error_never_carries_a_configured_secret(pool: PgPool) {
    let secret = "ghp_job-error-secret-0001";
    relay_core::secrets::register_secret(
        "trackers.test.token",
        &secrecy::SecretString::from(secret.to_owned()),
    );
    let registry = Registry::new().register(
        "leaky",
        FnHandler::new(move |_| async move {
            Err(JobError::Permanent(anyhow::anyhow!(
                "GET https://x-access-token:{secret}@example.test failed"
            )))
        }),
    );
    let worker = Worker::new(pool.clone(), registry, settings());
    let job = enqueue(&pool, "leaky", json!({}), None, 1).await;
    assert_eq!(
        worker.run_next_job().await.unwrap(),
        Outcome::Failed { job_id: JobId(job) }
    );
    let error = status(&pool, job).await.2.unwrap();
    assert!(!error.contains(secret), "{error}");
    assert!(error.contains("[REDACTED]@example.test"), "{error}");
    let traced: Vec<String> = sqlx::query_scalar("SELECT payload::text FROM trace_events")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert!(traced.iter().all(|t| !t.contains(secret)), "{traced:?}");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_failed_retry_folds_into_the_queued_follow_up(pool: PgPool) {
    let registry = Registry::new().register(
        "flaky",
        FnHandler::new(|_| async { Err(JobError::Retryable(anyhow::anyhow!("nope"))) }),
    );
    let worker = Worker::new(pool.clone(), registry, settings());
    let first = enqueue(&pool, "flaky", json!({ "n": 1 }), Some("issue:1"), 3).await;
    let claimed = queue::claim(&pool, "w", Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id, first);
    // While it runs, a new event queues the follow-up.
    let follow_up = enqueue(&pool, "flaky", json!({ "n": 2 }), Some("issue:1"), 3).await;
    assert_ne!(first, follow_up);
    // And a third event joins the follow-up instead of piling up.
    assert_eq!(
        enqueue(&pool, "flaky", json!({ "n": 3 }), Some("issue:1"), 3).await,
        follow_up
    );
    let failed = queue::fail(
        &pool,
        &claimed,
        &queue::Failure {
            error: "nope",
            cause: Some("tracker transient"),
        },
        FailureKind::Retryable,
        settings().backoff(),
    )
    .await
    .unwrap();
    assert_eq!(
        failed,
        queue::Failed::FoldedInto {
            job_id: JobId(follow_up)
        }
    );
    let (state, attempts, _) = status(&pool, follow_up).await;
    assert_eq!(
        (state.as_str(), attempts),
        ("queued", 1),
        "the attempt count carries over"
    );
    assert_eq!(status(&pool, first).await.0, "failed");
    let causes: Vec<Option<String>> =
        sqlx::query_scalar("SELECT last_cause FROM jobs WHERE id IN ($1, $2) ORDER BY id")
            .bind(first)
            .bind(follow_up)
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(
        causes,
        [
            Some("tracker transient".to_owned()),
            Some("tracker transient".to_owned())
        ],
        "the cause is kept with the error, on both rows"
    );
    let _ = worker;
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn graceful_shutdown_finishes_or_releases(pool: PgPool) {
    let registry = Registry::new()
        .register(
            "quick",
            FnHandler::new(|_| async {
                tokio::time::sleep(Duration::from_millis(300)).await;
                Ok(json!({}))
            }),
        )
        .register(
            "endless",
            FnHandler::new(|_| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok(json!({}))
            }),
        );
    let quick = enqueue(&pool, "quick", json!({}), None, 3).await;
    let endless = enqueue(&pool, "endless", json!({}), None, 3).await;
    let shutdown = CancellationToken::new();
    let worker = Worker::new(
        pool.clone(),
        registry,
        WorkerSettings {
            shutdown_grace_secs: 1,
            ..settings()
        },
    );
    let handle = tokio::spawn(worker.run(shutdown.clone()));
    // Wait until both run.
    for _ in 0..100 {
        let running: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs WHERE status = 'running'")
            .fetch_one(&pool)
            .await
            .unwrap();
        if running == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(30), handle)
        .await
        .expect("worker stops")
        .unwrap();
    // A job enqueued after shutdown began is not claimed.
    assert_eq!(
        status(&pool, quick).await.0,
        "succeeded",
        "finished within the grace period"
    );
    let (state, attempts, _) = status(&pool, endless).await;
    assert_eq!(
        (state.as_str(), attempts),
        ("queued", 0),
        "released without counting the attempt"
    );
    assert_eq!(
        queue::count_runs(&pool, JobId(endless), "released")
            .await
            .unwrap(),
        1
    );
}
