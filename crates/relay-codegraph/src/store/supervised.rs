//! A graph store a service process never gives up on.
//!
//! [`SupervisedStore`] is the [`GraphStore`] the worker uses. It holds the configured backend
//! while it is connected and answers [`StoreError::Unavailable`] while it is not; its supervisor
//! ([`SupervisedStore::supervise`]) connects with exponential backoff, probes the connected store
//! every `probe_secs`, and starts over when a probe or a query finds the store gone (a query that
//! fails as unavailable wakes it at once). Callers see the state through
//! [`SupervisedStore::health`]: the binary mirrors it into `/readyz` and the metrics; the agents
//! fall back to grep and read while it is unavailable, as they do for any store error.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use super::{
    CallStep, CodegraphSettings, Direction, GraphDelta, GraphStore, SearchPage, Snapshot,
    SnapshotInfo, StoreError, StoreResult, SymbolQuery, open_store,
};
use crate::model::{Edge, EdgeKind, Graph, Symbol};

/// Whether the store is connected, as the supervisor last saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreHealth {
    /// Connected: queries go to the backend.
    Up,
    /// Not connected (never yet, or lost): why, from the last failed attempt or probe.
    Unavailable { reason: String },
}

/// The configured graph store behind a supervisor that keeps it connected (module docs).
pub struct SupervisedStore {
    settings: CodegraphSettings,
    pool: Option<relay_store::PgPool>,
    current: RwLock<Option<Arc<dyn GraphStore>>>,
    health: watch::Sender<StoreHealth>,
    /// Wakes the supervisor when a query found the store unavailable.
    lost: Notify,
}

impl std::fmt::Debug for SupervisedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SupervisedStore")
            .field("backend", &self.settings.backend)
            .field("health", &*self.health.borrow())
            .finish_non_exhaustive()
    }
}

/// The text of an error with its causes (`a: b: c`), for the health reason.
fn reason(error: &StoreError) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

impl SupervisedStore {
    /// Makes one connection attempt now (so a store that is there serves the first job), and
    /// returns the store whatever its outcome; run [`SupervisedStore::supervise`] to keep trying.
    pub async fn start(
        settings: CodegraphSettings,
        pool: Option<relay_store::PgPool>,
    ) -> Arc<SupervisedStore> {
        let (health, _) = watch::channel(StoreHealth::Unavailable {
            reason: "not connected yet".into(),
        });
        let store = Arc::new(SupervisedStore {
            settings,
            pool,
            current: RwLock::new(None),
            health,
            lost: Notify::new(),
        });
        store.connect_once().await;
        store
    }

    /// The health as it changes (the current value first).
    pub fn health(&self) -> watch::Receiver<StoreHealth> {
        self.health.subscribe()
    }

    /// Keeps the store connected until `shutdown` (module docs).
    pub async fn supervise(self: Arc<Self>, shutdown: CancellationToken) {
        let reconnect = &self.settings.reconnect;
        let initial = Duration::from_millis(reconnect.initial_ms.max(1));
        let max = Duration::from_secs(reconnect.max_secs.max(1)).max(initial);
        let probe = Duration::from_secs(reconnect.probe_secs.max(1));
        let mut backoff = initial;
        loop {
            let connected = self.connected().is_some();
            let wait = if connected { probe } else { backoff };
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(wait) => {}
                () = self.lost.notified(), if connected => {}
            }
            match self.connected() {
                Some(store) => {
                    if let Err(error) = store.ping().await
                        && error.is_unavailable()
                    {
                        self.mark_lost(&error);
                        backoff = initial;
                    }
                }
                None => {
                    if self.connect_once().await {
                        backoff = initial;
                    } else {
                        backoff = (backoff * 2).min(max);
                    }
                }
            }
        }
    }

    fn connected(&self) -> Option<Arc<dyn GraphStore>> {
        self.current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// One attempt: opens the backend (creating its collections if missing) and checks it answers.
    async fn connect_once(&self) -> bool {
        let opened = match open_store(&self.settings, self.pool.clone()).await {
            Ok(store) => store.ping().await.map(|()| store),
            Err(error) => Err(error),
        };
        match opened {
            Ok(store) => {
                tracing::info!(
                    codegraph.backend = store.backend(),
                    "code-graph store connected"
                );
                *self
                    .current
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(store);
                self.health.send_replace(StoreHealth::Up);
                true
            }
            Err(error) => {
                let reason = reason(&error);
                let changed = self.health.send_if_modified(|health| {
                    let next = StoreHealth::Unavailable {
                        reason: reason.clone(),
                    };
                    let changed = *health != next;
                    *health = next;
                    changed
                });
                if changed {
                    tracing::warn!(
                        error.message = %error,
                        error.cause_chain = %reason,
                        codegraph.backend = ?self.settings.backend,
                        "code-graph store unavailable: retrying with backoff; explores use grep and read meanwhile"
                    );
                }
                false
            }
        }
    }

    fn mark_lost(&self, error: &StoreError) {
        let reason = reason(error);
        *self
            .current
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        tracing::warn!(
            error.message = %error,
            error.cause_chain = %reason,
            "code-graph store lost: reconnecting; explores use grep and read meanwhile"
        );
        self.health
            .send_replace(StoreHealth::Unavailable { reason });
    }

    /// The connected store, or why there is none.
    fn store(&self) -> StoreResult<Arc<dyn GraphStore>> {
        self.connected().ok_or_else(|| {
            StoreError::Unavailable(match &*self.health.borrow() {
                StoreHealth::Unavailable { reason } => reason.clone(),
                StoreHealth::Up => "reconnecting".into(),
            })
        })
    }

    /// Passes a backend's answer on; one that says the store is gone wakes the supervisor.
    fn watch<T>(&self, result: StoreResult<T>) -> StoreResult<T> {
        if let Err(error) = &result
            && error.is_unavailable()
        {
            self.lost.notify_one();
        }
        result
    }
}

#[async_trait]
impl GraphStore for SupervisedStore {
    fn backend(&self) -> &'static str {
        self.connected()
            .map_or("unavailable", |store| store.backend())
    }

    async fn ping(&self) -> StoreResult<()> {
        let result = self.store()?.ping().await;
        self.watch(result)
    }

    async fn snapshots(&self) -> StoreResult<Vec<SnapshotInfo>> {
        let result = self.store()?.snapshots().await;
        self.watch(result)
    }

    async fn replace_graph(&self, repo: &str, commit: &str, graph: &Graph) -> StoreResult<()> {
        let result = self.store()?.replace_graph(repo, commit, graph).await;
        self.watch(result)
    }

    async fn apply_delta(
        &self,
        repo: &str,
        from_commit: &str,
        to_commit: &str,
        delta: &GraphDelta,
    ) -> StoreResult<()> {
        let result = self
            .store()?
            .apply_delta(repo, from_commit, to_commit, delta)
            .await;
        self.watch(result)
    }

    async fn latest_commit(&self, repo: &str) -> StoreResult<Option<String>> {
        let result = self.store()?.latest_commit(repo).await;
        self.watch(result)
    }

    async fn delete_snapshot(&self, snapshot: &Snapshot) -> StoreResult<bool> {
        let result = self.store()?.delete_snapshot(snapshot).await;
        self.watch(result)
    }

    async fn export(&self, snapshot: &Snapshot) -> StoreResult<Graph> {
        let result = self.store()?.export(snapshot).await;
        self.watch(result)
    }

    async fn search(&self, snapshot: &Snapshot, query: &SymbolQuery) -> StoreResult<SearchPage> {
        let result = self.store()?.search(snapshot, query).await;
        self.watch(result)
    }

    async fn symbols(&self, snapshot: &Snapshot, qnames: &[String]) -> StoreResult<Vec<Symbol>> {
        let result = self.store()?.symbols(snapshot, qnames).await;
        self.watch(result)
    }

    async fn children(&self, snapshot: &Snapshot, parent: &str) -> StoreResult<Vec<Symbol>> {
        let result = self.store()?.children(snapshot, parent).await;
        self.watch(result)
    }

    async fn edges(
        &self,
        snapshot: &Snapshot,
        qname: &str,
        direction: Direction,
        kinds: &[EdgeKind],
    ) -> StoreResult<Vec<Edge>> {
        let result = self.store()?.edges(snapshot, qname, direction, kinds).await;
        self.watch(result)
    }

    async fn traverse_calls(
        &self,
        snapshot: &Snapshot,
        qname: &str,
        direction: Direction,
        depth: u8,
    ) -> StoreResult<Vec<CallStep>> {
        let result = self
            .store()?
            .traverse_calls(snapshot, qname, direction, depth)
            .await;
        self.watch(result)
    }
}
