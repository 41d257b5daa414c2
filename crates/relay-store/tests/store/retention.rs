//! `[retention]` against real Postgres: what goes, what stays, dry runs, batches and the lock.

use relay_store::PgPool;
use relay_store::retention::{self, PruneMode, RetentionPolicy, Target, TargetCount};

fn policy() -> RetentionPolicy {
    RetentionPolicy {
        delivery_payload_days: Some(30),
        trace_days: Some(30),
        finished_job_days: Some(30),
        outbox_days: Some(30),
        snapshots_per_repository: Some(1),
        // Small batches: every kind takes several statements.
        batch_size: 2,
    }
}

async fn exec(pool: &PgPool, sql: &'static str) {
    sqlx::query(sql).execute(pool).await.unwrap();
}

async fn scalar(pool: &PgPool, sql: &'static str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

/// A database with old and recent rows of every kind retention touches.
async fn seed(pool: &PgPool) {
    exec(
        pool,
        "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url,
                             updated_at, handled_delivery_id)
         OVERRIDING SYSTEM VALUE
         VALUES ('github', '1', 'o/r', 1, 't', 'open', 'a', 'u', now(), 3)",
    )
    .await;
    // Deliveries 1-3 are handled (the watermark is 3), 4 is an old event no job saw yet,
    // 5 and 6 are old ignored ones, 7 is recent.
    exec(
        pool,
        "INSERT INTO deliveries (id, tracker, event_type, delivery_key, outcome, reason, payload,
                                 issue_id, received_at)
         OVERRIDING SYSTEM VALUE
         SELECT n, 'github', 'issue_comment', 'd' || n,
                CASE WHEN n IN (5, 6) THEN 'ignored' ELSE 'accepted' END, 'mention',
                '{\"big\": \"body\"}', CASE WHEN n IN (5, 6) THEN NULL ELSE 1 END,
                CASE WHEN n = 7 THEN now() ELSE now() - interval '40 days' END
         FROM generate_series(1, 7) n",
    )
    .await;
    // Jobs: 3 old finished (with runs), 1 recent finished, 1 old but still queued.
    exec(
        pool,
        "INSERT INTO jobs (id, kind, payload, max_attempts, status, finished_at, created_at)
         OVERRIDING SYSTEM VALUE VALUES
         (1, 'process_issue', '{}', 3, 'succeeded', now() - interval '40 days', now() - interval '41 days'),
         (2, 'process_issue', '{}', 3, 'dead', now() - interval '40 days', now() - interval '41 days'),
         (3, 'process_issue', '{}', 3, 'failed', now() - interval '31 days', now() - interval '41 days'),
         (4, 'process_issue', '{}', 3, 'succeeded', now(), now()),
         (5, 'process_issue', '{}', 3, 'queued', NULL, now() - interval '41 days')",
    )
    .await;
    exec(
        pool,
        "INSERT INTO job_runs (job_id, attempt, worker, outcome, started_at)
         SELECT j, a, 'w', 'failed', now() FROM generate_series(1, 4) j, generate_series(1, 2) a",
    )
    .await;
    // Trace runs: 3 old finished with 5 events each, 1 recent, 1 unfinished.
    exec(
        pool,
        "INSERT INTO trace_runs (id, job_id, attempt, worker, started_at, finished_at, outcome)
         OVERRIDING SYSTEM VALUE VALUES
         (1, 1, 1, 'w', now() - interval '40 days', now() - interval '40 days', 'succeeded'),
         (2, 2, 1, 'w', now() - interval '40 days', now() - interval '40 days', 'failed'),
         (3, 3, 1, 'w', now() - interval '40 days', now() - interval '35 days', 'retrying'),
         (4, 4, 1, 'w', now(), now(), 'succeeded'),
         (5, 5, 1, 'w', now() - interval '40 days', NULL, NULL)",
    )
    .await;
    exec(
        pool,
        "INSERT INTO trace_events (run_id, job_id, seq, at, type, agent, payload)
         SELECT r, r, s, now(), 'tool_call', 'explore', '{}'
         FROM generate_series(1, 5) r, generate_series(0, 4) s",
    )
    .await;
    // Outbox: 3 old sent or failed (the refusal shown to the planner), an old budget note, an old
    // pending write, a recent sent one; what live state points to, old: the summary's post (its
    // edit goes), the first-contact reaction, a refusal the planner was not shown yet, the part of
    // a draft spec (the posted spec's part goes).
    exec(
        pool,
        "INSERT INTO outbox (idempotency_key, issue_id, kind, body, status, updated_at,
                             failure_shown_at) VALUES
         ('w1', 1, 'comment', 'b', 'sent', now() - interval '40 days', NULL),
         ('w2', 1, 'comment', 'b', 'failed', now() - interval '40 days', now() - interval '40 days'),
         ('w3', 1, 'comment', 'b', 'sent', now() - interval '40 days', NULL),
         ('budget:1:1:3', 1, 'comment', 'b', 'sent', now() - interval '40 days', NULL),
         ('w4', 1, 'comment', 'b', 'pending', now() - interval '40 days', NULL),
         ('w5', 1, 'comment', 'b', 'sent', now(), NULL),
         ('summary-i1', 1, 'comment', 'b', 'sent', now() - interval '40 days', NULL),
         ('summary-i1-r2', 1, 'edit', 'b', 'sent', now() - interval '40 days', NULL),
         ('ack:1', 1, 'reaction', 'eyes', 'sent', now() - interval '40 days', NULL),
         ('w6', 1, 'comment', 'b', 'failed', now() - interval '40 days', NULL),
         ('i1-j1-c0-spec1-p0', 1, 'comment', 'b', 'sent', now() - interval '40 days', NULL),
         ('i1-j1-c0-spec2-p0', 1, 'comment', 'b', 'sent', now() - interval '40 days', NULL)",
    )
    .await;
    exec(
        pool,
        "INSERT INTO specs (issue_id, version, body, status) VALUES
         (1, 1, 'draft spec', 'draft'), (1, 2, 'posted spec', 'posted')",
    )
    .await;
    // Snapshots of repo a: a1 (oldest, quoted by a live finding), a2, a3 (read by a running job
    // that started when a3 was the newest), a4, a5 (newest); a6 named by a running job's payload.
    // Repo b: one snapshot.
    exec(
        pool,
        "INSERT INTO codegraph_snapshots (id, repository, commit_sha, updated_at)
         OVERRIDING SYSTEM VALUE VALUES
         (1, 'a', 'c1', now() - interval '10 days'),
         (2, 'a', 'c2', now() - interval '9 days'),
         (3, 'a', 'c3', now() - interval '8 days'),
         (4, 'a', 'c4', now() - interval '6 days'),
         (6, 'a', 'c6', now() - interval '5 days'),
         (5, 'a', 'c5', now() - interval '1 days'),
         (7, 'b', 'b1', now() - interval '10 days')",
    )
    .await;
    exec(
        pool,
        "INSERT INTO codegraph_symbols (snapshot_id, qname, name, kind, language, file, line, end_line)
         SELECT s, 'q' || n, 'n', 'function', 'go', 'f.go', 1, 2
         FROM generate_series(1, 7) s, generate_series(1, 3) n",
    )
    .await;
    exec(
        pool,
        "INSERT INTO findings (id, issue_id, number, synthesis) OVERRIDING SYSTEM VALUE
         VALUES (1, 1, 1, 's'), (2, 1, 2, 'removed')",
    )
    .await;
    exec(pool, "UPDATE findings SET removed = true WHERE id = 2").await;
    exec(
        pool,
        "INSERT INTO finding_sources (finding_id, position, path, start_line, end_line, commit_sha)
         VALUES (1, 0, 'f.go', 1, 2, 'c1'), (2, 0, 'f.go', 1, 2, 'c2')",
    )
    .await;
    exec(
        pool,
        "INSERT INTO jobs (id, kind, payload, max_attempts, status, concurrency_key, started_at)
         OVERRIDING SYSTEM VALUE VALUES
         (6, 'process_issue', '{}', 3, 'running', 'issue:6', now() - interval '7 days'),
         (7, 'reindex', '{\"commit\": \"c6\"}', 3, 'running', 'repo:a', now())",
    )
    .await;
    // Job 6 runs its first attempt (started long ago): that unfinished run is live.
    exec(pool, "UPDATE jobs SET attempts = 1 WHERE id = 6").await;
    exec(
        pool,
        "INSERT INTO trace_runs (id, job_id, attempt, worker, started_at)
         OVERRIDING SYSTEM VALUE VALUES (8, 6, 1, 'w', now() - interval '40 days')",
    )
    .await;
}

fn counts(report: &retention::PruneReport) -> Vec<(Target, u64, u64)> {
    report
        .targets
        .iter()
        .map(
            |TargetCount {
                 target,
                 rows,
                 dependent_rows,
             }| (*target, *rows, *dependent_rows),
        )
        .collect()
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn prune_keeps_what_matters_and_drops_the_rest(pool: PgPool) {
    seed(&pool).await;
    let expected = vec![
        // Deliveries 1, 2, 3 (handled), 5, 6 (ignored).
        (Target::DeliveryPayloads, 5, 0),
        // 1, 2, 3 (finished) and 5 (left unfinished by a dead worker; its job is not running).
        (Target::TraceRuns, 4, 20),
        (Target::FinishedJobs, 3, 6),
        // w1, w2, w3, the summary's edit, the posted spec's part.
        (Target::Outbox, 5, 0),
        // a2 (its finding is removed) and a4.
        (Target::Snapshots, 2, 6),
    ];

    let dry = retention::prune(&pool, &policy(), PruneMode::DryRun)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(counts(&dry), expected);
    assert_eq!(
        scalar(
            &pool,
            "SELECT count(*) FROM deliveries WHERE payload_pruned_at IS NOT NULL"
        )
        .await,
        0
    );
    assert_eq!(scalar(&pool, "SELECT count(*) FROM jobs").await, 7);

    let done = retention::prune(&pool, &policy(), PruneMode::Delete)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(counts(&done), expected);

    // Every delivery row and key stays; only handled old payloads are emptied.
    let emptied: Vec<i64> = sqlx::query_scalar(
        "SELECT id FROM deliveries WHERE payload_pruned_at IS NOT NULL AND payload = '{}' ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(emptied, [1, 2, 3, 5, 6]);
    assert_eq!(scalar(&pool, "SELECT count(*) FROM deliveries").await, 7);
    let jobs: Vec<i64> = sqlx::query_scalar("SELECT id FROM jobs ORDER BY id")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(jobs, [4, 5, 6, 7]);
    assert_eq!(scalar(&pool, "SELECT count(*) FROM job_runs").await, 2);
    let runs: Vec<i64> = sqlx::query_scalar("SELECT id FROM trace_runs ORDER BY id")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(runs, [4, 8]);
    assert_eq!(scalar(&pool, "SELECT count(*) FROM trace_events").await, 5);
    let outbox: Vec<String> = sqlx::query_scalar("SELECT idempotency_key FROM outbox ORDER BY id")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(
        outbox,
        [
            "budget:1:1:3",
            "w4",
            "w5",
            "summary-i1",
            "ack:1",
            "w6",
            "i1-j1-c0-spec1-p0"
        ]
    );
    let snapshots: Vec<String> =
        sqlx::query_scalar("SELECT commit_sha FROM codegraph_snapshots ORDER BY id")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(snapshots, ["c1", "c3", "c5", "c6", "b1"]);
    assert_eq!(
        scalar(&pool, "SELECT count(*) FROM codegraph_symbols").await,
        15
    );

    // A second pass finds nothing.
    let again = retention::prune(&pool, &policy(), PruneMode::Delete)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again.total_rows(), 0);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn retention_off_keeps_everything(pool: PgPool) {
    seed(&pool).await;
    let off = RetentionPolicy {
        delivery_payload_days: None,
        trace_days: None,
        finished_job_days: None,
        outbox_days: None,
        snapshots_per_repository: None,
        batch_size: 2,
    };
    let report = retention::prune(&pool, &off, PruneMode::Delete)
        .await
        .unwrap()
        .unwrap();
    assert!(report.targets.is_empty());
    assert_eq!(scalar(&pool, "SELECT count(*) FROM trace_events").await, 25);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn one_pass_per_database(pool: PgPool) {
    seed(&pool).await;
    // Another process's pass holds the lock.
    let mut other = pool.acquire().await.unwrap();
    let held: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
        .bind(retention::PRUNE_LOCK_KEY)
        .fetch_one(&mut *other)
        .await
        .unwrap();
    assert!(held);
    let skipped = retention::prune(&pool, &policy(), PruneMode::Delete)
        .await
        .unwrap();
    assert_eq!(skipped, None);
    assert_eq!(scalar(&pool, "SELECT count(*) FROM jobs").await, 7);

    sqlx::query("SELECT pg_advisory_unlock($1)")
        .bind(retention::PRUNE_LOCK_KEY)
        .execute(&mut *other)
        .await
        .unwrap();
    let ran = retention::prune(&pool, &policy(), PruneMode::Delete)
        .await
        .unwrap();
    assert!(ran.is_some_and(|report| report.total_rows() > 0));
}
