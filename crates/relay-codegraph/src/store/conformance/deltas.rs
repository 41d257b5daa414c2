//! Moving a snapshot with a delta, and the delta the check applies.

use super::{
    builders::edge, builders::q, builders::sym, fixture::BRAIN, fixture::fixture_graph, load,
};
use crate::model::{Confidence, EdgeKind, SymbolKind};
use crate::store::{
    Direction, GraphDelta, GraphStore, Snapshot, StoreError, SymbolQuery, apply_delta_to_graph,
    canonicalize,
};

/// A delta on top of [`fixture_graph`]: `brain/stub.go` is rewritten (StubPlanner becomes MockPlanner),
/// `pkg/mod.py` is deleted and `cmd/main.go` is re-indexed: the same symbols and edges as in
/// [`fixture_graph`] (taken from it, not written twice), except that `run`'s dynamic `Plan` call now
/// dispatches to the new type.
pub fn fixture_delta() -> GraphDelta {
    use Confidence::*;
    use EdgeKind::*;
    use SymbolKind::*;
    let b = |r: &str| q(BRAIN, r);
    let main_go = "cmd/main.go";
    let stub_go = "brain/stub.go";
    let mut symbols = vec![
        sym(
            &b("MockPlanner"),
            "MockPlanner",
            Struct,
            stub_go,
            5,
            7,
            Some("type MockPlanner struct{}"),
            Some(BRAIN),
        ),
        sym(
            &b("MockPlanner.Plan"),
            "Plan",
            Method,
            stub_go,
            9,
            12,
            Some("func (m *MockPlanner) Plan(ctx context.Context) error"),
            Some(&b("MockPlanner")),
        ),
    ];
    let mut edges = vec![edge(
        Implements,
        &b("MockPlanner"),
        Some(&b("Planner")),
        "Planner",
        stub_go,
        5,
        Exact,
    )];
    let before = fixture_graph();
    let (stub_plan, mock_plan) = (b("StubPlanner.Plan"), b("MockPlanner.Plan"));
    symbols.extend(before.symbols.into_iter().filter(|s| s.file == main_go));
    edges.extend(
        before
            .edges
            .into_iter()
            .filter(|e| e.file == main_go)
            .map(|mut e| {
                if e.to.as_deref() == Some(stub_plan.as_str()) {
                    e.to = Some(mock_plan.clone());
                }
                e
            }),
    );
    GraphDelta {
        files: vec![stub_go.into(), "pkg/mod.py".into(), main_go.into()],
        symbols,
        edges,
        ..GraphDelta::default()
    }
}

/// apply_delta equals a full replace with the reference result, moves the snapshot and the latest commit.
pub async fn deltas(store: &dyn GraphStore) {
    let backend = store.backend();
    let repo = "conformance/deltas";
    load(store, repo, "c1").await;
    let delta = fixture_delta();
    store
        .apply_delta(repo, "c1", "c2", &delta)
        .await
        .unwrap_or_else(|e| panic!("[{backend}] apply_delta: {e}"));
    let mut expected = fixture_graph();
    apply_delta_to_graph(&mut expected, &delta);
    canonicalize(&mut expected);
    let c2 = Snapshot::new(repo, "c2");
    assert_eq!(
        store.export(&c2).await.expect("export"),
        expected,
        "[{backend}] delta result"
    );
    assert_eq!(
        store.latest_commit(repo).await.expect("latest"),
        Some("c2".to_owned()),
        "[{backend}] latest commit moves"
    );
    assert!(
        matches!(
            store.export(&Snapshot::new(repo, "c1")).await,
            Err(StoreError::SnapshotNotFound { .. })
        ),
        "[{backend}] the old snapshot is gone"
    );

    // Queries see the new graph.
    let callers = store
        .traverse_calls(
            &c2,
            "example.com/app/brain.MockPlanner.Plan",
            Direction::Incoming,
            1,
        )
        .await
        .expect("callers");
    assert_eq!(callers.len(), 1, "[{backend}] new dynamic edge");
    assert_eq!(callers[0].line, 22);
    let gone = store
        .search(&c2, &SymbolQuery::name("StubPlanner", 10))
        .await
        .expect("search");
    assert_eq!(gone.total, 0, "[{backend}] removed symbol");
    let gone = store
        .search(&c2, &SymbolQuery::name("helper_fn", 10))
        .await
        .expect("search");
    assert_eq!(gone.total, 0, "[{backend}] deleted file");
    let init = store
        .symbols(&c2, &["example.com/app/cmd.init".to_owned()])
        .await
        .expect("symbols");
    assert_eq!(
        init.len(),
        2,
        "[{backend}] unchanged files keep their symbols"
    );

    // In place, and a second delta on top: `brain/stub.go` is deleted, and `cmd/main.go`, whose
    // dynamic call reached a method of it, is re-indexed without that edge (as the indexer lists
    // the files with edges into a changed file, so that no edge is left pointing at nothing).
    let deleted: Vec<String> = expected
        .symbols
        .iter()
        .filter(|s| s.file == "brain/stub.go")
        .map(|s| s.qname.clone())
        .collect();
    let second = GraphDelta {
        files: vec!["brain/stub.go".into(), "cmd/main.go".into()],
        symbols: expected
            .symbols
            .iter()
            .filter(|s| s.file == "cmd/main.go")
            .cloned()
            .collect(),
        edges: expected
            .edges
            .iter()
            .filter(|e| e.file == "cmd/main.go")
            .filter(|e| e.to.as_ref().is_none_or(|to| !deleted.contains(to)))
            .cloned()
            .collect(),
        ..GraphDelta::default()
    };
    store
        .apply_delta(repo, "c2", "c2", &second)
        .await
        .expect("in-place delta");
    apply_delta_to_graph(&mut expected, &second);
    canonicalize(&mut expected);
    assert_eq!(
        store.export(&c2).await.expect("export"),
        expected,
        "[{backend}] in-place delta"
    );

    // Re-indexing from scratch gives the same graph as the deltas.
    store
        .replace_graph(repo, "c3", &expected)
        .await
        .expect("replace");
    assert_eq!(
        store
            .export(&Snapshot::new(repo, "c3"))
            .await
            .expect("export"),
        expected,
        "[{backend}] full replace equals incremental"
    );
    assert_eq!(
        store.latest_commit(repo).await.expect("latest"),
        Some("c3".to_owned()),
        "[{backend}] latest after replace"
    );
    // Applying onto an existing target commit replaces it.
    store
        .apply_delta(repo, "c2", "c3", &GraphDelta::default())
        .await
        .expect("delta onto existing commit");
    assert_eq!(
        store
            .export(&Snapshot::new(repo, "c3"))
            .await
            .expect("export"),
        expected
    );
    assert!(
        store
            .delete_snapshot(&Snapshot::new(repo, "c3"))
            .await
            .expect("delete"),
        "[{backend}] delete existing"
    );
    assert!(
        !store
            .delete_snapshot(&Snapshot::new(repo, "c3"))
            .await
            .expect("delete"),
        "[{backend}] delete missing"
    );
    assert_eq!(
        store.latest_commit(repo).await.expect("latest"),
        None,
        "[{backend}] no snapshot left"
    );
}
