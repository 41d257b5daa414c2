//! Incoming and outgoing edges by kind.

use super::load;
use crate::model::EdgeKind;
use crate::store::{Direction, GraphStore};

/// Incoming and outgoing edges filtered by kind.
pub async fn edges(store: &dyn GraphStore) {
    let backend = store.backend();
    let snap = load(store, "conformance/edges", "c1").await;
    let planner = "example.com/app/brain.Planner";
    let implementors = store
        .edges(&snap, planner, Direction::Incoming, &[EdgeKind::Implements])
        .await
        .expect("edges");
    assert_eq!(
        implementors
            .iter()
            .map(|e| e.from.as_str())
            .collect::<Vec<_>>(),
        vec![
            "example.com/app/brain.LLMPlanner",
            "example.com/app/brain.StubPlanner"
        ],
        "[{backend}] implements edges by site"
    );
    let all_in = store
        .edges(&snap, planner, Direction::Incoming, &[])
        .await
        .expect("edges");
    assert_eq!(
        all_in
            .iter()
            .map(|e| (e.kind, e.file.as_str(), e.line))
            .collect::<Vec<_>>(),
        vec![
            (EdgeKind::Implements, "brain/planner.go", 20),
            (EdgeKind::Implements, "brain/stub.go", 5),
            (EdgeKind::Uses, "cmd/main.go", 20),
        ],
        "[{backend}] all incoming kinds"
    );
    let out = store
        .edges(
            &snap,
            "example.com/app/cmd.main",
            Direction::Outgoing,
            &[EdgeKind::Calls, EdgeKind::Uses],
        )
        .await
        .expect("edges");
    assert_eq!(out.len(), 4, "[{backend}] outgoing calls");
    assert_eq!(
        out[3].to, None,
        "[{backend}] unresolved edge keeps to = None"
    );
    assert_eq!(
        out[3].to_name, "Exit",
        "[{backend}] unresolved edge keeps its name"
    );
    let parents = store
        .edges(
            &snap,
            "pkg.mod.Child",
            Direction::Outgoing,
            &[EdgeKind::Inherits],
        )
        .await
        .expect("edges");
    assert_eq!(parents.len(), 1, "[{backend}] inherits");
    assert_eq!(parents[0].to.as_deref(), Some("pkg.mod.Base"));
}
