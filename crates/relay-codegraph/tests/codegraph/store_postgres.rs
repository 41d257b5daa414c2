//! The conformance suite on the Postgres store (real database per test via `#[sqlx::test]`).

use relay_codegraph::model::Graph;
use relay_codegraph::store::postgres::PostgresStore;
use relay_codegraph::store::{GraphStore, Snapshot, SymbolQuery, canonicalize, conformance};
use sqlx::PgPool;

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn postgres_store_conforms(pool: PgPool) {
    conformance::run(|| {
        let pool = pool.clone();
        async move { PostgresStore::new(pool) }
    })
    .await;
}

/// More rows than one UNNEST chunk (10 000), so chunking and totals are exercised.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn postgres_store_bulk_loads_in_chunks(pool: PgPool) {
    let store = PostgresStore::new(pool);
    let base = conformance::fixture_graph();
    let mut graph = Graph::default();
    for i in 0..2_600 {
        for s in &base.symbols {
            let mut s = s.clone();
            s.qname = format!("{}#{i}", s.qname);
            s.file = format!("{i}/{}", s.file);
            graph.symbols.push(s);
        }
        for e in &base.edges {
            let mut e = e.clone();
            e.from = format!("{}#{i}", e.from);
            e.to = e.to.map(|t| format!("{t}#{i}"));
            e.file = format!("{i}/{}", e.file);
            graph.edges.push(e);
        }
    }
    assert!(graph.symbols.len() > 50_000 && graph.edges.len() > 50_000);
    store
        .replace_graph("bulk", "c1", &graph)
        .await
        .expect("bulk replace");
    let snap = Snapshot::new("bulk", "c1");
    let page = store
        .search(&snap, &SymbolQuery::name("plan", 10))
        .await
        .expect("search");
    assert_eq!(page.total, 3 * 2_600);
    assert_eq!(page.symbols.len(), 10);
    canonicalize(&mut graph);
    assert_eq!(store.export(&snap).await.expect("export"), graph);
}

/// Every operation answers the same on Postgres as on the in-memory store.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn operations_match_the_memory_store(pool: PgPool) {
    use relay_codegraph::ops::{GraphScope, execute_json};
    use relay_codegraph::store::memory::MemoryStore;
    use serde_json::json;

    let postgres = PostgresStore::new(pool);
    let memory = MemoryStore::new();
    for store in [&postgres as &dyn GraphStore, &memory] {
        store
            .replace_graph("app", "c1", &conformance::fixture_graph())
            .await
            .expect("load fixture");
    }
    let calls = [
        json!({"operation": "search", "name": "plan", "kind": "method"}),
        json!({"operation": "search", "name": "*"}),
        json!({"operation": "search", "name": "Planner.Plan", "file": "brain"}),
        json!({"operation": "search", "name": "helper_*"}),
        json!({"operation": "callers", "qname": "example.com/app/brain.helper", "depth": 3}),
        json!({"operation": "callees", "qname": "example.com/app/cmd.main", "depth": 3}),
        json!({"operation": "callers", "qname": "fmt.Println"}),
        json!({"operation": "callers", "qname": "example.com/app/brain.Planer.Plan"}),
        json!({"operation": "usages", "qname": "EXAMPLE.com/app/brain.llmplanner"}),
        json!({"operation": "implementations", "qname": "example.com/app/brain.Planner"}),
        json!({"operation": "implementations", "qname": "example.com/app/brain.Planner.Plan"}),
        json!({"operation": "implementations", "qname": "pkg.mod.Child"}),
        json!({"operation": "usages", "qname": "example.com/app/brain"}),
        json!({"operation": "resolve", "name": "run"}),
    ];
    let scope = GraphScope::latest("app");
    for args in calls {
        let expected = execute_json(Some(&memory), &scope, &args).await;
        let got = execute_json(Some(&postgres), &scope, &args).await;
        assert_eq!(got, expected, "{args}");
    }
}

/// A database that cannot be reached is told apart from a failing query, and the cause is kept.
#[tokio::test]
async fn an_unreachable_database_is_unavailable_with_its_cause() {
    // Port 1 on loopback: nothing listens there, the connection is refused at once.
    let pool = sqlx::postgres::PgPoolOptions::new()
        .acquire_timeout(std::time::Duration::from_secs(1))
        .connect_lazy("postgres://postgres@127.0.0.1:1/postgres")
        .unwrap();
    let error = PostgresStore::new(pool)
        .latest_commit("acme/app")
        .await
        .unwrap_err();
    assert!(error.is_unavailable(), "{error:?}");
    assert!(
        std::error::Error::source(&error).is_some(),
        "the database error is kept as the source: {error:?}"
    );
    let chain = relay_core::error::cause_chain(&error);
    assert!(
        chain.starts_with("code graph postgres query failed: database unavailable"),
        "{chain}"
    );
}

/// A stored enum spelling the model does not know reads back as corrupt data (naming the column and
/// value), not as a failed query. The symbol columns have no CHECK constraint, so this is reachable.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn an_unknown_stored_spelling_is_corrupt_data(pool: PgPool) {
    use relay_codegraph::store::StoreError;

    let store = PostgresStore::new(pool.clone());
    store
        .replace_graph("app", "c1", &conformance::fixture_graph())
        .await
        .expect("load fixture");
    let snap = Snapshot::new("app", "c1");
    for (update, expected) in [
        (
            "UPDATE codegraph_symbols SET kind = 'gadget' WHERE name = 'Plan'",
            "corrupt code graph data: unknown symbol kind \"gadget\"",
        ),
        (
            "UPDATE codegraph_symbols SET kind = 'method', language = 'cobol' WHERE name = 'Plan'",
            "corrupt code graph data: unknown language \"cobol\"",
        ),
    ] {
        sqlx::query(update).execute(&pool).await.expect("update");
        for result in [
            store.export(&snap).await.map(drop),
            store
                .search(&snap, &SymbolQuery::name("plan", 10))
                .await
                .map(drop),
        ] {
            let error = result.expect_err(update);
            assert!(matches!(error, StoreError::Corrupt(_)), "{error:?}");
            assert_eq!(error.to_string(), expected);
        }
    }
}
