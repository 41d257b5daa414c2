//! A supervised ArangoDB store never gives up: the double starts after the store, then goes away
//! mid-run and comes back, and the same store object reconnects each time (no restart).

use std::time::Duration;

use relay_codegraph::store::arangodb::aql;
use relay_codegraph::store::arangodb::double::FakeArango;
use relay_codegraph::store::supervised::{StoreHealth, SupervisedStore};
use relay_codegraph::store::{
    CodegraphSettings, GraphStore, ReconnectSettings, StoreBackend, StoreError,
};
use serde_json::json;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// How long a test waits for the supervisor before it fails (a bound, not a timing assertion).
const PATIENCE: Duration = Duration::from_secs(30);

fn settings(double: &FakeArango) -> CodegraphSettings {
    CodegraphSettings {
        backend: StoreBackend::Arangodb,
        arangodb: double.settings(),
        reconnect: ReconnectSettings {
            initial_ms: 20,
            max_secs: 1,
            probe_secs: 1,
        },
        ..CodegraphSettings::default()
    }
}

async fn wait_for(health: &mut watch::Receiver<StoreHealth>, up: bool) -> StoreHealth {
    tokio::time::timeout(
        PATIENCE,
        health.wait_for(|h| matches!(h, StoreHealth::Up) == up),
    )
    .await
    .expect("the supervisor changed the store's health in time")
    .expect("the supervisor is running")
    .clone()
}

#[tokio::test]
async fn a_store_that_starts_late_and_drops_mid_run_is_reconnected_without_a_restart() {
    // The server is not there yet: the store starts unavailable and says why.
    let addr = FakeArango::reserve();
    let placeholder = FakeArango::start_at(addr).await;
    let settings = settings(&placeholder);
    let addr = placeholder.stop().await;
    let store = SupervisedStore::start(settings, None).await;
    let mut health = store.health();
    match &*health.borrow() {
        StoreHealth::Unavailable { reason } => assert!(reason.contains("connect"), "{reason}"),
        StoreHealth::Up => panic!("nothing listens yet"),
    }
    let error = store.latest_commit("acme/app").await.unwrap_err();
    assert!(
        matches!(error, StoreError::Unavailable(_)) && error.is_unavailable(),
        "{error:?}"
    );
    let shutdown = CancellationToken::new();
    let supervisor = tokio::spawn(store.clone().supervise(shutdown.clone()));

    // The server starts late: the supervisor connects and creates the collections.
    let arango = FakeArango::start_at(addr).await;
    wait_for(&mut health, true).await;
    assert!(
        arango
            .schema_requests()
            .contains(&"collection codegraph_snapshots".to_owned()),
        "{:?}",
        arango.schema_requests()
    );
    arango.expect(aql::LATEST_COMMIT, vec![json!("c1")]);
    assert_eq!(
        store.latest_commit("acme/app").await.unwrap(),
        Some("c1".to_owned())
    );
    arango.finish();

    // It goes away mid-run: a query fails as unavailable and the health follows.
    let addr = arango.stop().await;
    let error = store.latest_commit("acme/app").await.unwrap_err();
    assert!(error.is_unavailable(), "{error:?}");
    let StoreHealth::Unavailable { reason } = wait_for(&mut health, false).await else {
        unreachable!()
    };
    assert!(!reason.is_empty());

    // It comes back on the same address: the same store object serves again.
    let arango = FakeArango::start_at(addr).await;
    wait_for(&mut health, true).await;
    arango.expect(aql::LATEST_COMMIT, vec![json!("c2")]);
    assert_eq!(
        store.latest_commit("acme/app").await.unwrap(),
        Some("c2".to_owned())
    );
    arango.finish();

    shutdown.cancel();
    supervisor.await.unwrap();
}

#[tokio::test]
async fn a_probe_notices_a_store_that_went_away_while_nothing_queried_it() {
    let arango = FakeArango::start().await;
    let store = SupervisedStore::start(settings(&arango), None).await;
    let mut health = store.health();
    arango.finish();
    assert_eq!(*health.borrow(), StoreHealth::Up);
    let shutdown = CancellationToken::new();
    let supervisor = tokio::spawn(store.clone().supervise(shutdown.clone()));
    let addr = arango.stop().await;
    // No query: the periodic probe finds it gone.
    wait_for(&mut health, false).await;
    let arango = FakeArango::start_at(addr).await;
    wait_for(&mut health, true).await;
    arango.finish();
    shutdown.cancel();
    supervisor.await.unwrap();
}
