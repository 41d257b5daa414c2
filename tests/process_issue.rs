//! The issue job: events that arrive while it runs are not lost.
//!
//! These tests assert on the issue's pending-event watermark (`issues.handled_delivery_id`) and on
//! job states, never on the handler's output: the planner replaces that output, the bookkeeping
//! stays.

use relay_core::JobId;
use std::sync::Arc;

use relay_worker::{JobContext, JobError, JobHandler, Outcome, Registry, Worker};
use serde_json::{Value, json};
use sqlx::PgPool;
use tokio::sync::Notify;

use crate::helpers::*;
use crate::queue::settings;

/// Runs the real handler, then waits for the test before finishing.
struct Paused {
    reached: Arc<Notify>,
    release: Arc<Notify>,
}

#[async_trait::async_trait]
impl JobHandler for Paused {
    async fn run(&self, context: JobContext) -> Result<Value, JobError> {
        let result = relay_worker::jobs::process_issue::ProcessIssueJob::default()
            .run(context)
            .await;
        self.reached.notify_one();
        self.release.notified().await;
        result
    }
}

/// One run of the issue job as the watermark saw it: the events it handled are the issue's accepted
/// deliveries in `(before, after]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Run {
    issue_id: i64,
    before: i64,
    after: i64,
}

/// Runs the real handler and records how it moved the watermark. Jobs of one issue never overlap
/// (their concurrency key), so nothing else moves the watermark between the two reads.
struct Watched {
    runs: Arc<std::sync::Mutex<Vec<Run>>>,
}

#[async_trait::async_trait]
impl JobHandler for Watched {
    async fn run(&self, context: JobContext) -> Result<Value, JobError> {
        let issue_id = context.job.payload["issue_id"].as_i64().unwrap();
        let pool = context.pool.clone();
        let before = watermark(&pool, issue_id).await;
        let result = relay_worker::jobs::process_issue::ProcessIssueJob::default()
            .run(context)
            .await;
        let after = watermark(&pool, issue_id).await;
        self.runs.lock().unwrap().push(Run {
            issue_id,
            before,
            after,
        });
        result
    }
}

async fn watermark(pool: &PgPool, issue_id: i64) -> i64 {
    sqlx::query_scalar("SELECT handled_delivery_id FROM issues WHERE id = $1")
        .bind(issue_id)
        .fetch_one(pool)
        .await
        .unwrap()
}

async fn job_status(pool: &PgPool, job_id: i64) -> String {
    relay_store::queue::get(pool, JobId(job_id))
        .await
        .unwrap()
        .unwrap()
        .status
}

fn mention(comment_id: u64) -> Vec<u8> {
    let mut payload = fixture_json("webhooks/github/issue_comment.created.on-issue.json");
    payload["comment"]["id"] = json!(comment_id);
    payload["comment"]["body"] = json!(format!("@relay-bot round {comment_id}"));
    serde_json::to_vec(&payload).unwrap()
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn events_during_a_run_go_to_the_follow_up_job(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    let first = call(&app, github_request("issue_comment", "p-1", mention(1))).await;
    assert_eq!(first.outcome(), "accepted");
    let first_job = first.body["job"].as_i64().unwrap();

    let reached = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let registry = Registry::new().register(
        "process_issue",
        Paused {
            reached: reached.clone(),
            release: release.clone(),
        },
    );
    let worker = Worker::new(pool.clone(), registry, settings());
    let running = tokio::spawn({
        let worker = worker.clone();
        async move { worker.run_next_job().await.unwrap() }
    });
    reached.notified().await;

    // Two more mentions arrive mid-run: one follow-up job is queued for both.
    let second = call(&app, github_request("issue_comment", "p-2", mention(2))).await;
    let third = call(&app, github_request("issue_comment", "p-3", mention(3))).await;
    let follow_up = second.body["job"].as_i64().unwrap();
    assert_ne!(follow_up, first_job);
    assert_eq!(third.body["job"].as_i64().unwrap(), follow_up);
    // It cannot start while the first one runs.
    assert_eq!(worker.run_next_job().await.unwrap(), Outcome::Empty);

    release.notify_one();
    assert_eq!(
        running.await.unwrap(),
        Outcome::Succeeded {
            job_id: JobId(first_job)
        }
    );
    // The first run handled exactly the event it saw: the watermark stops at its delivery, the two
    // mid-run mentions stay pending for the queued follow-up.
    let delivery = |answer: &Answer| answer.body["delivery"].as_i64().unwrap();
    let issue_id: i64 = sqlx::query_scalar("SELECT issue_id FROM deliveries WHERE id = $1")
        .bind(delivery(&first))
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(watermark(&pool, issue_id).await, delivery(&first));
    assert_eq!(
        relay_store::issues::count_pending_events(&pool)
            .await
            .unwrap(),
        2
    );
    assert_eq!(job_status(&pool, first_job).await, "succeeded");
    assert_eq!(job_status(&pool, follow_up).await, "queued");

    let worker = Worker::new(
        pool.clone(),
        crate::push::registry(&tempfile::tempdir().unwrap(), None),
        settings(),
    );
    assert_eq!(
        worker.drain().await.unwrap(),
        vec![Outcome::Succeeded {
            job_id: JobId(follow_up)
        }]
    );

    // The follow-up handled both: the watermark is at the last mention, nothing is pending.
    assert_eq!(watermark(&pool, issue_id).await, delivery(&third));
    assert!(delivery(&second) < delivery(&third));
    assert_eq!(
        relay_store::issues::count_pending_events(&pool)
            .await
            .unwrap(),
        0
    );
    assert_eq!(job_status(&pool, follow_up).await, "succeeded");
}

/// The pending-event watermark under load: mentions for a few issues arrive concurrently while
/// workers drain the queue concurrently. Every accepted delivery is handled by exactly one job
/// (none lost below a watermark that moved past it, none handled twice).
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn concurrent_events_are_each_handled_exactly_once(pool: PgPool) {
    const ISSUES: u64 = 3;
    const PER_ISSUE: u64 = 40;
    let app = relay_gateway::app(state(pool.clone()));
    let runs = Arc::new(std::sync::Mutex::new(Vec::new()));
    let watched = || Registry::new().register("process_issue", Watched { runs: runs.clone() });
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut workers = Vec::new();
    for _ in 0..3 {
        let worker = Worker::new(pool.clone(), watched(), settings());
        let stop = stop.clone();
        workers.push(tokio::spawn(async move {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if worker.run_next_job().await.unwrap() == Outcome::Empty {
                    tokio::task::yield_now().await;
                }
            }
        }));
    }
    let mut senders = tokio::task::JoinSet::new();
    for sender in 0..8u64 {
        let app = app.clone();
        senders.spawn(async move {
            let mut accepted = 0;
            for i in (sender..ISSUES * PER_ISSUE).step_by(8) {
                let mut payload =
                    fixture_json("webhooks/github/issue_comment.created.on-issue.json");
                payload["issue"]["number"] = json!(1000 + i % ISSUES);
                payload["comment"]["id"] = json!(50_000 + i);
                payload["comment"]["body"] = json!(format!("@relay-bot load {i}"));
                let body = serde_json::to_vec(&payload).unwrap();
                let answer = call(
                    &app,
                    github_request("issue_comment", &format!("load-{i}"), body),
                )
                .await;
                assert_eq!(answer.outcome(), "accepted");
                accepted += 1;
            }
            accepted
        });
    }
    let mut accepted = 0;
    while let Some(n) = senders.join_next().await {
        accepted += n.unwrap();
    }
    assert_eq!(accepted, ISSUES * PER_ISSUE);
    // Let the workers finish what is queued, then stop them.
    let drain = Worker::new(pool.clone(), watched(), settings());
    loop {
        let depth = relay_store::queue::depth(&pool).await.unwrap();
        if depth
            .iter()
            .all(|(status, n)| *n == 0 || !matches!(status.as_str(), "queued" | "running"))
        {
            break;
        }
        drain.run_next_job().await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for w in workers {
        w.await.unwrap();
    }

    assert_eq!(
        relay_store::issues::count_pending_events(&pool)
            .await
            .unwrap(),
        0
    );
    // Every job succeeded; none is left queued or running.
    let states: Vec<(String, i64)> =
        sqlx::query_as("SELECT status, count(*) FROM jobs GROUP BY 1 ORDER BY 1")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert!(
        states.iter().all(|(status, _)| status == "succeeded"),
        "{states:?}"
    );

    // Each issue's runs tile its accepted deliveries: every run starts where the previous one left
    // the watermark (no event handled twice) and the last ends at the newest delivery (none lost).
    let mut runs = runs.lock().unwrap().clone();
    runs.sort();
    let newest: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT issue_id, max(id) FROM deliveries WHERE outcome = 'accepted' GROUP BY 1 ORDER BY 1",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(newest.len() as u64, ISSUES);
    for (issue_id, newest) in newest {
        let mut at = 0;
        for run in runs.iter().filter(|run| run.issue_id == issue_id) {
            assert_eq!(run.before, at, "runs of issue {issue_id}: {runs:?}");
            assert!(run.after >= run.before, "the watermark never moves back");
            at = run.after;
        }
        assert_eq!(at, newest, "issue {issue_id}: every event handled");
    }
}
