//! `[retention]` for snapshots kept in ArangoDB: the rule of the Postgres pass (the newest K per
//! repository, plus any a live finding quotes or a running job uses), read from the real
//! Postgres and applied to the ArangoDB double, in the worker's pass and dry.

use relay_codegraph::store::arangodb::aql;
use relay_codegraph::store::arangodb::double::FakeArango;
use relay_store::PgPool;
use relay_store::retention::PruneMode;
use relay_worker::graph_retention::{GraphPruneReport, prune_graph_store};
use serde_json::{Value, json};

async fn exec(pool: &PgPool, sql: &'static str) {
    sqlx::query(sql).execute(pool).await.unwrap();
}

/// a1 is quoted by a live finding, a2 named by a running job, a3 by nothing; a4 and a5 are the
/// two newest. b1 is another repository's only snapshot.
async fn seed(pool: &PgPool) {
    exec(
        pool,
        "INSERT INTO issues (id, tracker, project_id, project_path, number, title, state, author, url, updated_at)
         OVERRIDING SYSTEM VALUE VALUES (1, 'github', '1', 'o/r', 1, 't', 'open', 'a', 'u', now())",
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
         VALUES (1, 0, 'f.go', 1, 2, 'a1'), (2, 0, 'f.go', 1, 2, 'a3')",
    )
    .await;
    exec(
        pool,
        "INSERT INTO jobs (kind, payload, max_attempts, status, concurrency_key, started_at)
         VALUES ('update_checkout', '{\"commit\": \"a2\"}', 3, 'running', 'repo:a', now())",
    )
    .await;
}

/// `ALL_SNAPSHOTS` rows: `seq` is the microsecond clock of each write (minutes apart, long ago).
fn listing() -> Vec<Value> {
    let minute = 60_000_000_u64;
    let base = 1_700_000_000_000_000_u64;
    ["a1", "a2", "a3", "a4", "a5"]
        .iter()
        .enumerate()
        .map(|(i, commit)| json!({"repo": "github/o/r", "commit": commit, "seq": base + i as u64 * minute}))
        .chain(std::iter::once(
            json!({"repo": "github/p/q", "commit": "b1", "seq": base}),
        ))
        .collect()
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn arangodb_snapshots_follow_the_retention_rule(pool: PgPool) {
    seed(&pool).await;
    let arango = FakeArango::start().await;
    let store = arango.store().await;

    // Dry: counts, deletes nothing (only the listing is asked).
    arango.expect(aql::ALL_SNAPSHOTS, listing());
    let dry = prune_graph_store(&pool, &store, 2, PruneMode::DryRun)
        .await
        .unwrap();
    assert_eq!(
        dry,
        GraphPruneReport {
            pruned: 1,
            kept_in_use: 2
        }
    );
    arango.finish();

    // Delete: only a3 goes (its snapshot document, then its data in every collection).
    arango.expect(aql::ALL_SNAPSHOTS, listing());
    arango.expect(aql::FIND_SNAPSHOT, vec![json!("k3")]);
    arango.expect(aql::REMOVE_SNAPSHOT, vec![json!("k3")]);
    for _ in 0..4 {
        arango.expect(aql::REMOVE_SNAPSHOT_DATA, vec![]);
    }
    let report = prune_graph_store(&pool, &store, 2, PruneMode::Delete)
        .await
        .unwrap();
    assert_eq!(report.pruned, 1);
    // The double keeps every cursor request: the dry listing, the listing, then the lookup.
    let requests = arango.finish();
    assert_eq!(
        requests[2]["bindVars"],
        json!({"repo": "github/o/r", "commit": "a3"})
    );
}
