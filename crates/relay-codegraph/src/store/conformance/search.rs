//! Name and qname search.

use super::{load, qnames};
use crate::model::SymbolKind;
use crate::store::{GraphStore, MatchField, SymbolQuery};

/// Name and qname search: case-insensitivity, wildcards, filters, ordering, limits, literal metacharacters.
pub async fn search(store: &dyn GraphStore) {
    let backend = store.backend();
    let snap = load(store, "conformance/search", "c1").await;
    let run = |query: SymbolQuery| {
        let snap = snap.clone();
        async move {
            store
                .search(&snap, &query)
                .await
                .unwrap_or_else(|e| panic!("[{backend}] search {query:?}: {e}"))
        }
    };

    let page = run(SymbolQuery::name("plan", 10)).await;
    assert_eq!(page.total, 3, "[{backend}] case-insensitive exact name");
    assert_eq!(
        qnames(&page.symbols),
        vec![
            "example.com/app/brain.Planner.Plan",
            "example.com/app/brain.LLMPlanner.Plan",
            "example.com/app/brain.StubPlanner.Plan",
        ],
        "[{backend}] ordered by qname length, then qname"
    );

    let page = run(SymbolQuery::name("Plan*", 10)).await;
    assert_eq!(
        qnames(&page.symbols),
        vec![
            "example.com/app/brain.Planner",
            "example.com/app/brain.Planner.Plan",
            "example.com/app/brain.LLMPlanner.Plan",
            "example.com/app/brain.StubPlanner.Plan",
        ],
        "[{backend}] wildcard; names equal to the raw pattern would come first"
    );

    let page = run(SymbolQuery::name("*planner", 2)).await;
    assert_eq!(page.total, 4, "[{backend}] total counts every match");
    assert_eq!(
        qnames(&page.symbols),
        vec![
            "example.com/app/brain.Planner",
            "example.com/app/brain.LLMPlanner"
        ],
        "[{backend}] limit"
    );

    let page = run(SymbolQuery::name("Plan", 10)).await;
    let methods_only = run(SymbolQuery {
        kinds: vec![SymbolKind::Method],
        file: Some("brain/stub".into()),
        ..SymbolQuery::name("plan", 10)
    })
    .await;
    assert_eq!(page.total, 3, "[{backend}] exact-case pattern");
    assert_eq!(
        qnames(&methods_only.symbols),
        vec!["example.com/app/brain.StubPlanner.Plan"],
        "[{backend}] kind and file filters"
    );

    let page = run(SymbolQuery {
        kinds: vec![SymbolKind::Struct, SymbolKind::Interface],
        ..SymbolQuery::name("*", 50)
    })
    .await;
    assert_eq!(page.total, 3, "[{backend}] several kinds");

    let page = run(SymbolQuery::name("helper_fn", 10)).await;
    assert_eq!(
        qnames(&page.symbols),
        vec!["pkg.mod.helper_fn"],
        "[{backend}] `_` is literal"
    );
    let page = run(SymbolQuery::name("helper%", 10)).await;
    assert_eq!(page.total, 0, "[{backend}] `%` is literal");

    let page = run(SymbolQuery::name("MAX_RETRIES", 10)).await;
    assert_eq!(
        qnames(&page.symbols),
        vec!["pkg.mod.MAX_RETRIES"],
        "[{backend}] upper case names"
    );

    let page = run(SymbolQuery::qname("*brain.planner.plan", 10)).await;
    assert_eq!(
        qnames(&page.symbols),
        vec!["example.com/app/brain.Planner.Plan"],
        "[{backend}] qname suffix"
    );
    let page = run(SymbolQuery {
        field: MatchField::Qname,
        ..SymbolQuery::qname("example.com/app/brain.LLMPlanner.*", 10)
    })
    .await;
    assert_eq!(
        qnames(&page.symbols),
        vec![
            "example.com/app/brain.LLMPlanner.Plan",
            "example.com/app/brain.LLMPlanner.client",
        ],
        "[{backend}] qname prefix"
    );
    let page = run(SymbolQuery::qname("example.com/app/brain.Planner", 10)).await;
    assert_eq!(page.total, 1, "[{backend}] exact qname");

    let page = run(SymbolQuery::name("nothing-like-this", 10)).await;
    assert_eq!(
        (page.total, page.symbols.len()),
        (0, 0),
        "[{backend}] no match"
    );
}
