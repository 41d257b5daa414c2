//! `/metrics` reads the queue depth on every scrape: it must cost the live jobs, not the table.

use relay_store::PgPool;
use relay_store::queue::{self, DEPTH_SQL};
use serde_json::Value;

/// Every scan node of a plan: (node type, relation, actual rows).
fn scans(plan: &Value, into: &mut Vec<(String, String, f64)>) {
    let node = plan["Node Type"].as_str().unwrap_or_default();
    if node.contains("Scan") {
        into.push((
            node.to_owned(),
            plan["Relation Name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            plan["Actual Rows"].as_f64().unwrap_or_default()
                * plan["Actual Loops"].as_f64().unwrap_or(1.0),
        ));
    }
    for child in plan["Plans"].as_array().into_iter().flatten() {
        scans(child, into);
    }
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn depth_reads_only_live_jobs(pool: PgPool) {
    // A month of history and a small live queue.
    sqlx::query(
        "INSERT INTO jobs (kind, payload, max_attempts, status, finished_at)
         SELECT 'process_issue', '{}', 3, 'succeeded', now() FROM generate_series(1, 20000)",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO jobs (kind, payload, max_attempts, status, concurrency_key)
         VALUES ('process_issue', '{}', 3, 'queued', 'issue:1'), ('process_issue', '{}', 3, 'queued', NULL),
                ('process_issue', '{}', 3, 'running', 'issue:2')",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query("ANALYZE jobs").execute(&pool).await.unwrap();

    let depth = queue::depth(&pool).await.unwrap();
    assert_eq!(
        depth,
        vec![("queued".to_owned(), 2), ("running".to_owned(), 1)]
    );

    let explain: Value = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "EXPLAIN (ANALYZE, FORMAT JSON) {DEPTH_SQL}"
    )))
    .fetch_one(&pool)
    .await
    .unwrap();
    let mut found = Vec::new();
    scans(&explain[0]["Plan"], &mut found);
    let on_jobs: Vec<_> = found
        .iter()
        .filter(|(_, relation, _)| relation == "jobs")
        .collect();
    assert!(!on_jobs.is_empty(), "{explain:#}");
    assert!(
        on_jobs.iter().all(|(node, _, _)| node.starts_with("Index")),
        "a scrape scans the jobs table: {on_jobs:?}"
    );
    let rows: f64 = on_jobs.iter().map(|(_, _, rows)| rows).sum();
    assert!(rows <= 3.0, "a scrape read {rows} job rows: {on_jobs:?}");
}
