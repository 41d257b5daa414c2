//! The conformance suite every [`GraphStore`] backend must pass (behind `cfg(test)` or the
//! `test-support` feature).
//!
//! Call [`run`] from a backend's tests with a factory that returns a store; each check asks the factory
//! for a store and works in its own repository namespace, so a factory may hand out the same database
//! every time. The suite uses the hand-made [`fixture_graph`], which covers every kind of symbol and edge
//! the operations care about: interfaces with implementations, dynamic dispatch edges, unresolved and
//! external call targets, a call cycle, Python inheritance, duplicate qnames and `LIKE` metacharacters.
//!
//! One file per concern: `fixture` (the graph) and `builders`, then one file per group of
//! checks (`round_trip`, `search`, `lookups`, `edges`, `traversals`, `deltas`, `namespaces`,
//! `missing`).

mod builders;
mod deltas;
mod edges;
mod fixture;
mod lookups;
mod missing;
mod namespaces;
mod round_trip;
mod search;
mod traversals;

pub use builders::{edge, sym};
pub use deltas::{deltas, fixture_delta};
pub use edges::edges;
pub use fixture::{BRAIN, CMD, fixture_graph};
pub use lookups::lookups;
pub use missing::missing_snapshots;
pub use namespaces::namespaces;
pub use round_trip::round_trip;
pub use search::search;
pub use traversals::traversals;

use std::future::Future;

use crate::model::Symbol;
use crate::store::{GraphStore, Snapshot};

/// Runs every conformance check. `factory` is called once per check.
pub async fn run<F, Fut, S>(mut factory: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
    S: GraphStore,
{
    round_trip(&factory().await).await;
    search(&factory().await).await;
    lookups(&factory().await).await;
    edges(&factory().await).await;
    traversals(&factory().await).await;
    deltas(&factory().await).await;
    namespaces(&factory().await).await;
    missing_snapshots(&factory().await).await;
}

/// Stores [`fixture_graph`] under `repo` and `commit`.
async fn load(store: &dyn GraphStore, repo: &str, commit: &str) -> Snapshot {
    store
        .replace_graph(repo, commit, &fixture_graph())
        .await
        .unwrap_or_else(|e| panic!("[{}] replace_graph failed: {e}", store.backend()));
    Snapshot::new(repo, commit)
}

/// The qnames of `symbols`, in order.
fn qnames(symbols: &[Symbol]) -> Vec<&str> {
    symbols.iter().map(|s| s.qname.as_str()).collect()
}
