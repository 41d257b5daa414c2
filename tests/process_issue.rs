//! The issue job: events that arrive while it runs are not lost.

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
        Outcome::Succeeded { job_id: first_job }
    );
    let worker = Worker::new(
        pool.clone(),
        crate::push::registry(&tempfile::tempdir().unwrap(), None),
        settings(),
    );
    assert_eq!(
        worker.drain().await.unwrap(),
        vec![Outcome::Succeeded { job_id: follow_up }]
    );

    assert_eq!(
        relay_store::issues::count_pending_events(&pool)
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        events_seen_by_job(&pool).await,
        vec![(first_job, 1), (follow_up, 2)]
    );
}

/// `(job id, events it handled)` for every successful run, from what the runs recorded.
async fn events_seen_by_job(pool: &PgPool) -> Vec<(i64, i64)> {
    sqlx::query_as(
        "SELECT job_id, jsonb_array_length(detail -> 'events')::bigint FROM job_runs
         WHERE outcome = 'succeeded' ORDER BY job_id",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

/// The pending-event watermark under load: mentions for a few issues arrive concurrently while
/// workers drain the queue concurrently. Every accepted delivery is handled by exactly one job
/// (none lost below a watermark that moved past it, none handled twice).
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn concurrent_events_are_each_handled_exactly_once(pool: PgPool) {
    const ISSUES: u64 = 3;
    const PER_ISSUE: u64 = 40;
    let app = relay_gateway::app(state(pool.clone()));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut workers = Vec::new();
    for _ in 0..3 {
        let worker = Worker::new(
            pool.clone(),
            crate::push::registry(&tempfile::tempdir().unwrap(), None),
            settings(),
        );
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
    let drain = Worker::new(
        pool.clone(),
        crate::push::registry(&tempfile::tempdir().unwrap(), None),
        settings(),
    );
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
    // Each delivery appears in exactly one run's events.
    let handled: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT (e ->> 'id')::bigint, count(*) FROM job_runs,
                jsonb_array_elements(detail -> 'events') e
         WHERE outcome = 'succeeded' GROUP BY 1 ORDER BY 1",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        handled.len() as u64,
        ISSUES * PER_ISSUE,
        "every event handled"
    );
    assert!(
        handled.iter().all(|(_, n)| *n == 1),
        "an event handled twice: {handled:?}"
    );
}
