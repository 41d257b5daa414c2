//! Repositories and commits kept apart.

use super::{builders::edge, builders::sym, load};
use crate::model::{Confidence, EdgeKind, Graph, SymbolKind};
use crate::store::{Direction, GraphStore, SymbolQuery};

/// Repositories and commits never see each other's symbols.
pub async fn namespaces(store: &dyn GraphStore) {
    let backend = store.backend();
    let a = load(store, "conformance/ns-a", "c1").await;
    let other = Graph {
        symbols: vec![sym(
            "other.Plan",
            "Plan",
            SymbolKind::Function,
            "other.py",
            1,
            2,
            None,
            None,
        )],
        edges: vec![edge(
            EdgeKind::Calls,
            "other.Plan",
            Some("example.com/app/brain.helper"),
            "helper",
            "other.py",
            2,
            Confidence::Exact,
        )],
    };
    store
        .replace_graph("conformance/ns-b", "c1", &other)
        .await
        .expect("replace");
    store
        .replace_graph("conformance/ns-a", "c0", &other)
        .await
        .expect("replace");
    let page = store
        .search(&a, &SymbolQuery::name("plan", 10))
        .await
        .expect("search");
    assert_eq!(
        page.total, 3,
        "[{backend}] other repositories and commits are invisible"
    );
    let callers = store
        .traverse_calls(&a, "example.com/app/brain.helper", Direction::Incoming, 1)
        .await
        .expect("callers");
    assert_eq!(callers.len(), 2, "[{backend}] edges are namespaced");
    assert_eq!(
        store
            .latest_commit("conformance/ns-a")
            .await
            .expect("latest"),
        Some("c0".to_owned()),
        "[{backend}] the most recent replace wins"
    );
    assert_eq!(
        store
            .latest_commit("conformance/none")
            .await
            .expect("latest"),
        None
    );
}
