//! Queries on a snapshot that is not stored.

use crate::store::{Direction, GraphDelta, GraphStore, Snapshot, StoreError, SymbolQuery};

/// Every query on a snapshot that is not stored fails with SnapshotNotFound.
pub async fn missing_snapshots(store: &dyn GraphStore) {
    let backend = store.backend();
    let snap = Snapshot::new("conformance/missing", "c1");
    let not_found = |r: Result<(), StoreError>, what: &str| {
        assert!(
            matches!(r, Err(StoreError::SnapshotNotFound { .. })),
            "[{backend}] {what} on a missing snapshot: {r:?}"
        );
    };
    not_found(
        store
            .search(&snap, &SymbolQuery::name("x", 1))
            .await
            .map(drop),
        "search",
    );
    not_found(
        store.symbols(&snap, &["x".into()]).await.map(drop),
        "symbols",
    );
    not_found(store.children(&snap, "x").await.map(drop), "children");
    not_found(
        store
            .edges(&snap, "x", Direction::Incoming, &[])
            .await
            .map(drop),
        "edges",
    );
    not_found(
        store
            .traverse_calls(&snap, "x", Direction::Outgoing, 1)
            .await
            .map(drop),
        "traverse",
    );
    not_found(store.export(&snap).await.map(drop), "export");
    not_found(
        store
            .apply_delta("conformance/missing", "c1", "c2", &GraphDelta::default())
            .await,
        "apply_delta",
    );
}
