//! `relay jobs` / `relay writes` actions on the real Postgres: each changes a row only from the
//! state it is for, so a second run (or one racing a worker) does nothing, and each is recorded
//! in `operator_actions` and the job's run trace.

use relay_store::PgPool;
use relay_store::operator::{
    self, ActionOutcome, JobFilter, discard_job, list_jobs, retry_job, retry_write,
};
use relay_store::outbox::{FailedWrites, failed_writes};

async fn exec(pool: &PgPool, sql: &'static str) {
    sqlx::query(sql).execute(pool).await.unwrap();
}

async fn status(pool: &PgPool, job: i64) -> String {
    sqlx::query_scalar("SELECT status FROM jobs WHERE id = $1")
        .bind(job)
        .fetch_one(pool)
        .await
        .unwrap()
}

async fn operator_events(pool: &PgPool, job: i64) -> Vec<serde_json::Value> {
    sqlx::query_scalar(
        "SELECT e.payload FROM trace_events e JOIN trace_runs r ON r.id = e.run_id
         WHERE e.job_id = $1 AND r.worker = 'operator' AND e.agent = 'operator' ORDER BY e.cursor",
    )
    .bind(job)
    .fetch_all(pool)
    .await
    .unwrap()
}

async fn seed_jobs(pool: &PgPool) {
    exec(
        pool,
        "INSERT INTO jobs (id, kind, payload, concurrency_key, max_attempts, status, attempts, last_error, finished_at)
         OVERRIDING SYSTEM VALUE VALUES
         (1, 'process_issue', '{\"issue_id\": 7}', 'issue:7', 5, 'dead', 5, 'boom', now()),
         (2, 'process_issue', '{\"issue_id\": 8}', 'issue:8', 5, 'dead', 5, 'bang', now()),
         (3, 'process_issue', '{\"issue_id\": 8}', 'issue:8', 5, 'queued', 0, NULL, NULL),
         (4, 'process_issue', '{\"issue_id\": 9}', 'issue:9', 5, 'running', 1, NULL, NULL),
         (5, 'update_checkout', '{}', NULL, 5, 'dead', 5, 'gone', now())",
    )
    .await;
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn retrying_a_dead_job_queues_it_once(pool: PgPool) {
    seed_jobs(&pool).await;
    let dead = list_jobs(&pool, JobFilter::Dead, 50).await.unwrap();
    assert_eq!(dead.iter().map(|j| j.id).collect::<Vec<_>>(), [5, 2, 1]);
    assert_eq!(dead[2].last_error.as_deref(), Some("boom"));

    assert_eq!(
        retry_job(&pool, relay_core::ids::JobId(1), "alice")
            .await
            .unwrap(),
        ActionOutcome::Done {
            job_id: Some(relay_core::ids::JobId(1))
        }
    );
    assert_eq!(status(&pool, 1).await, "queued");
    let (attempts, finished): (i32, Option<chrono::DateTime<chrono::Utc>>) =
        sqlx::query_as("SELECT attempts, finished_at FROM jobs WHERE id = 1")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!((attempts, finished), (0, None));
    // Idempotent: the second run finds it queued and changes nothing.
    assert_eq!(
        retry_job(&pool, relay_core::ids::JobId(1), "alice")
            .await
            .unwrap(),
        ActionOutcome::NotApplicable {
            status: "queued".into()
        }
    );
    // Another queued job of the same issue does the work: nothing is queued twice.
    assert_eq!(
        retry_job(&pool, relay_core::ids::JobId(2), "alice")
            .await
            .unwrap(),
        ActionOutcome::Superseded {
            by_job: relay_core::ids::JobId(3)
        }
    );
    assert_eq!(status(&pool, 2).await, "dead");
    // A job a worker holds is never touched.
    assert_eq!(
        retry_job(&pool, relay_core::ids::JobId(4), "alice")
            .await
            .unwrap(),
        ActionOutcome::NotApplicable {
            status: "running".into()
        }
    );
    assert_eq!(
        retry_job(&pool, relay_core::ids::JobId(99), "alice")
            .await
            .unwrap(),
        ActionOutcome::NotFound
    );
    // Recorded: the audit table and the job's run trace.
    let actions: Vec<(String, String, i64, String)> = sqlx::query_as(
        "SELECT actor, action, target_id, outcome FROM operator_actions ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(actions.len(), 5);
    assert_eq!(
        actions[0],
        ("alice".into(), "job_retry".into(), 1, "done".into())
    );
    let traced = operator_events(&pool, 1).await;
    assert_eq!(traced.len(), 2, "{traced:?}");
    assert_eq!(traced[0]["action"], "job_retry");
    assert_eq!(traced[0]["outcome"], "done");
    assert_eq!(traced[1]["outcome"], "not_applicable");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn discarding_a_dead_job_keeps_it_out_of_the_dead_list(pool: PgPool) {
    seed_jobs(&pool).await;
    assert_eq!(
        discard_job(&pool, relay_core::ids::JobId(5), "bob")
            .await
            .unwrap(),
        ActionOutcome::Done {
            job_id: Some(relay_core::ids::JobId(5))
        }
    );
    assert_eq!(
        discard_job(&pool, relay_core::ids::JobId(5), "bob")
            .await
            .unwrap(),
        ActionOutcome::NotApplicable {
            status: "discarded".into()
        }
    );
    assert_eq!(
        discard_job(&pool, relay_core::ids::JobId(4), "bob")
            .await
            .unwrap(),
        ActionOutcome::NotApplicable {
            status: "running".into()
        }
    );
    let dead = list_jobs(&pool, JobFilter::Dead, 50).await.unwrap();
    assert!(dead.iter().all(|j| j.id != 5));
    let discarded = list_jobs(&pool, JobFilter::Discarded, 50).await.unwrap();
    assert_eq!(discarded.len(), 1);
    assert_eq!(operator_events(&pool, 5).await.len(), 2);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn retrying_a_failed_write_makes_it_pending_and_queues_its_drain_once(pool: PgPool) {
    exec(
        &pool,
        "INSERT INTO issues (id, tracker, project_id, project_path, number, title, state, author, url, updated_at)
         OVERRIDING SYSTEM VALUE VALUES (7, 'github', '1', 'o/r', 1, 't', 'open', 'a', 'u', now())",
    )
    .await;
    exec(
        &pool,
        "INSERT INTO jobs (id, kind, payload, concurrency_key, max_attempts, status, finished_at)
         OVERRIDING SYSTEM VALUE VALUES (1001, 'process_issue', '{\"issue_id\": 7}', 'issue:7', 5, 'succeeded', now())",
    )
    .await;
    exec(
        &pool,
        "INSERT INTO outbox (id, idempotency_key, issue_id, job_id, kind, body, status, attempts, last_error)
         OVERRIDING SYSTEM VALUE VALUES
         (1, 'w1', 7, 1001, 'comment', 'hello', 'failed', 1, '422 Validation Failed'),
         (2, 'w2', 7, 1001, 'comment', 'sent one', 'sent', 1, NULL)",
    )
    .await;
    let failed = failed_writes(&pool, FailedWrites::All, 50).await.unwrap();
    assert_eq!(failed.len(), 1);
    assert_eq!(
        failed[0].last_error.as_deref(),
        Some("422 Validation Failed")
    );

    let outcome = retry_write(&pool, relay_core::ids::OutboxId(1), "carol")
        .await
        .unwrap();
    let ActionOutcome::Done {
        job_id: Some(drain),
    } = outcome
    else {
        panic!("{outcome:?}")
    };
    let (status, attempts): (String, i32) =
        sqlx::query_as("SELECT status, attempts FROM outbox WHERE id = 1")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!((status.as_str(), attempts), ("pending", 0));
    let (kind, payload): (String, serde_json::Value) =
        sqlx::query_as("SELECT kind, payload FROM jobs WHERE id = $1")
            .bind(drain)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(kind, "process_issue");
    assert_eq!(payload["issue_id"], 7);
    // Twice: nothing more (it is pending now), no second drain job.
    assert_eq!(
        retry_write(&pool, relay_core::ids::OutboxId(1), "carol")
            .await
            .unwrap(),
        ActionOutcome::NotApplicable {
            status: "pending".into()
        }
    );
    assert_eq!(
        retry_write(&pool, relay_core::ids::OutboxId(2), "carol")
            .await
            .unwrap(),
        ActionOutcome::NotApplicable {
            status: "sent".into()
        }
    );
    let queued: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs WHERE status = 'queued'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(queued, 1);
    // Traced in the trace of the job that wrote it.
    let traced = operator_events(&pool, 1001).await;
    assert_eq!(traced[0]["action"], "write_retry");
    assert_eq!(traced[0]["target_id"], 1);
    let _ = operator::OPERATOR_WORKER;
}

/// Each summary write replaces the comment's whole text: an older revision refused for good is
/// not sent again once a newer one was recorded (it would put older text over newer); the newest
/// can be. A retried write keeps `maybe_sent`, so the drain looks for its marker first.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn an_older_summary_revision_is_not_sent_over_a_newer_one(pool: PgPool) {
    exec(
        &pool,
        "INSERT INTO issues (id, tracker, project_id, project_path, number, title, state, author, url, updated_at)
         OVERRIDING SYSTEM VALUE VALUES (8, 'github', '1', 'o/r', 2, 't', 'open', 'a', 'u', now())",
    )
    .await;
    exec(
        &pool,
        "INSERT INTO outbox (id, idempotency_key, issue_id, kind, body, status, attempts, maybe_sent, last_error, target_note_id)
         OVERRIDING SYSTEM VALUE VALUES
         (11, 'summary-i8', 8, 'comment', 'r1', 'sent', 1, true, NULL, NULL),
         (12, 'summary-i8-r2', 8, 'edit', 'r2', 'failed', 1, true, '422', 'n1'),
         (13, 'summary-i8-r3', 8, 'edit', 'r3', 'failed', 1, true, '422', 'n1')",
    )
    .await;
    assert_eq!(
        retry_write(&pool, relay_core::ids::OutboxId(12), "carol")
            .await
            .unwrap(),
        ActionOutcome::Replaced {
            by_write: "summary-i8-r3".into()
        }
    );
    let (status, maybe_sent): (String, bool) =
        sqlx::query_as("SELECT status, maybe_sent FROM outbox WHERE id = 12")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!((status.as_str(), maybe_sent), ("failed", true));
    assert!(matches!(
        retry_write(&pool, relay_core::ids::OutboxId(13), "carol")
            .await
            .unwrap(),
        ActionOutcome::Done { .. }
    ));
    let (status, maybe_sent): (String, bool) =
        sqlx::query_as("SELECT status, maybe_sent FROM outbox WHERE id = 13")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!((status.as_str(), maybe_sent), ("pending", true));
}
