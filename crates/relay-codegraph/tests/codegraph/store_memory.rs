//! The conformance suite on the in-memory store.

use relay_codegraph::store::conformance;
use relay_codegraph::store::memory::MemoryStore;

#[tokio::test]
async fn memory_store_conforms() {
    conformance::run(|| async { MemoryStore::new() }).await;
}

#[tokio::test]
async fn memory_store_conforms_when_shared() {
    // One store for every check: namespaces must keep them apart.
    let shared = MemoryStore::new();
    conformance::run(|| {
        let store = shared.clone();
        async move { store }
    })
    .await;
}
