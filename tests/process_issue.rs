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
        let result = relay_worker::jobs::process_issue::ProcessIssueJob
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
    let seen: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT processed_by, count(*) FROM issue_events GROUP BY processed_by ORDER BY processed_by",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(seen, vec![(first_job, 1), (follow_up, 2)]);
}
