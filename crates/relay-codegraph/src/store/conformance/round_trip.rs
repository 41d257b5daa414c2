//! Storing and exporting a whole graph.

use super::{fixture::fixture_graph, load};
use crate::model::{EdgeKind, Graph};
use crate::store::{Direction, GraphStore, canonicalize};

/// replace_graph then export returns the same graph, in canonical order; replacing again overwrites.
pub async fn round_trip(store: &dyn GraphStore) {
    let backend = store.backend();
    let snap = load(store, "conformance/round-trip", "c1").await;
    let mut expected = fixture_graph();
    canonicalize(&mut expected);
    let exported = store.export(&snap).await.expect("export");
    assert_eq!(exported, expected, "[{backend}] export after replace_graph");
    // "Who calls fmt.Println": the external target's callers, marked external; an unresolved
    // edge (`to: None`) is not.
    let callers = store
        .edges(
            &snap,
            "fmt.Println",
            Direction::Incoming,
            &[EdgeKind::Calls],
        )
        .await
        .expect("edges");
    assert!(
        !callers.is_empty() && callers.iter().all(|e| e.external),
        "[{backend}] calls of an external target are external: {callers:?}"
    );
    assert!(
        exported
            .edges
            .iter()
            .filter(|e| e.to.is_none())
            .all(|e| !e.external),
        "[{backend}] unresolved edges are not external"
    );
    assert_eq!(
        store.latest_commit(&snap.repo).await.expect("latest"),
        Some("c1".to_owned()),
        "[{backend}] latest commit"
    );

    let mut small = Graph {
        symbols: expected.symbols[..3].to_vec(),
        edges: expected.edges[..2].to_vec(),
    };
    // Graphs keep the invariant of `Edge::external` (a target that names no symbol), which the
    // Postgres backend derives when it reads edges back.
    small.mark_external();
    store
        .replace_graph(&snap.repo, "c1", &small)
        .await
        .expect("replace again");
    let mut small_sorted = small.clone();
    canonicalize(&mut small_sorted);
    assert_eq!(
        store.export(&snap).await.expect("export"),
        small_sorted,
        "[{backend}] replace_graph must overwrite the previous graph"
    );
}
