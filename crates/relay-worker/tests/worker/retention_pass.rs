//! The worker's periodic retention pass against real Postgres.

use std::time::Duration;

use relay_store::PgPool;
use relay_worker::RetentionSettings;
use tokio_util::sync::CancellationToken;

/// A guard against a hung test (never a timing assertion).
const HANG: Duration = Duration::from_secs(30);

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_pruner_deletes_old_finished_jobs_and_stops_on_shutdown(pool: PgPool) {
    sqlx::query(
        "INSERT INTO jobs (kind, payload, max_attempts, status, finished_at) VALUES
         ('process_issue', '{}', 3, 'succeeded', now() - interval '40 days'),
         ('process_issue', '{}', 3, 'succeeded', now())",
    )
    .execute(&pool)
    .await
    .unwrap();
    let shutdown = CancellationToken::new();
    let pruner = tokio::spawn(relay_worker::retention::run_pruner(
        pool.clone(),
        RetentionSettings {
            interval_secs: 1,
            ..RetentionSettings::default()
        },
        None,
        shutdown.clone(),
    ));
    tokio::time::timeout(HANG, async {
        loop {
            let left: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs")
                .fetch_one(&pool)
                .await
                .unwrap();
            if left == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the old job was never pruned");
    shutdown.cancel();
    tokio::time::timeout(HANG, pruner).await.unwrap().unwrap();
}

#[test]
fn zero_keeps_a_kind_forever() {
    let settings = RetentionSettings {
        trace_days: 0,
        ..RetentionSettings::default()
    };
    let policy = settings.policy();
    assert_eq!(policy.trace_days, None);
    assert_eq!(policy.finished_job_days, Some(30));
}
