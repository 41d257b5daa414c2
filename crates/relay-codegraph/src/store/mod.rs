//! Graph stores: where an indexed [`Graph`] lives and how it is queried.
//!
//! One async trait, [`GraphStore`], three backends:
//! - [`memory::MemoryStore`]: in-process, indexed by qname, lowercase name, file and adjacency lists
//!   (the default for the CLI and tests);
//! - [`postgres::PostgresStore`]: rows in Postgres (its SQL in `postgres::sql`), traversals with
//!   recursive CTEs (the default for the service);
//! - [`arangodb::ArangoStore`]: document and edge collections in ArangoDB, AQL traversals with bind variables.
//!
//! Every backend passes the same conformance suite (`store::conformance`, behind the `test-support`
//! feature), so the `codegraph` operations in [`crate::ops`] behave the same on each.
//!
//! Graphs are namespaced by repository and commit (a [`Snapshot`]). [`GraphStore::replace_graph`] stores a
//! whole graph; [`GraphStore::apply_delta`] moves a stored snapshot forward to a new commit by replacing the
//! symbols and edges of the files an incremental re-index touched.

pub mod arangodb;
#[cfg(any(test, feature = "test-support"))]
pub mod conformance;
pub mod memory;
pub mod pattern;
pub mod postgres;
pub mod settings;
pub mod supervised;

use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::model::{Confidence, Edge, EdgeKind, Graph, Symbol, SymbolKind};

pub use settings::{
    ArangoSettings, CodegraphSettings, IndexLimits, ReconnectSettings, StoreBackend,
};

/// Errors from a graph store. Backend errors keep their source: "the database is down" and "the
/// query is wrong" are different failures ([`StoreError::is_unavailable`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No graph is stored for this repository at this commit.
    #[error("no code graph stored for repository {repo} at commit {commit}")]
    SnapshotNotFound { repo: String, commit: String },
    /// A value read back from a backend could not be mapped onto the model.
    #[error("corrupt code graph data: {0}")]
    Corrupt(String),
    /// The store is misconfigured (e.g. the Postgres backend without a pool).
    #[error("code graph store misconfigured: {0}")]
    Config(String),
    /// Postgres failed.
    #[error("code graph postgres query failed")]
    Postgres(#[source] relay_store::Error),
    /// The store is configured but not connected right now (its supervisor is reconnecting;
    /// see [`supervised::SupervisedStore`]). The text says why it was lost.
    #[error("code graph store unavailable: {0}")]
    Unavailable(String),
    /// ArangoDB failed (connection, HTTP, or an error document from the server).
    #[error("code graph arangodb request failed{context}")]
    Arango {
        /// What was being done, with a leading `: ` (empty for a plain query).
        context: String,
        #[source]
        source: arangors::ClientError,
    },
}

impl StoreError {
    /// Whether the backend could not be reached, rather than the request being wrong.
    pub fn is_unavailable(&self) -> bool {
        match self {
            StoreError::Postgres(error) => error.is_unavailable(),
            StoreError::Unavailable(_) => true,
            // A connection that failed, or a server still starting or shutting down (503).
            StoreError::Arango { source, .. } => match source {
                arangors::ClientError::HttpClient(_) => true,
                arangors::ClientError::Arango(error) => error.code() == 503,
                _ => false,
            },
            _ => false,
        }
    }
}

/// Result alias for store operations.
pub type StoreResult<T, E = StoreError> = std::result::Result<T, E>;

/// A stored graph: one repository at one commit.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Snapshot {
    /// Repository identifier as the caller names it (e.g. `github.com/acme/app` or a checkout path).
    pub repo: String,
    /// Commit the graph was indexed at.
    pub commit: String,
}

impl Snapshot {
    pub fn new(repo: impl Into<String>, commit: impl Into<String>) -> Self {
        Snapshot {
            repo: repo.into(),
            commit: commit.into(),
        }
    }
}

/// A stored snapshot and when it was last stored or moved forward (what "newest" means).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotInfo {
    pub snapshot: Snapshot,
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

/// Orders snapshot listings the way [`GraphStore::snapshots`] promises: by repository, newest
/// first, then by commit for a stable order.
pub(crate) fn sort_snapshot_infos(infos: &mut [SnapshotInfo]) {
    infos.sort_by(|a, b| {
        (
            &a.snapshot.repo,
            std::cmp::Reverse(a.updated_at),
            &a.snapshot.commit,
        )
            .cmp(&(
                &b.snapshot.repo,
                std::cmp::Reverse(b.updated_at),
                &b.snapshot.commit,
            ))
    });
}

/// The result of an incremental re-index ([`crate::index::Indexer::update`]): every file in `files`
/// (changed or deleted) loses all its symbols (by [`Symbol::file`]) and all its edges (by [`Edge::file`],
/// the site where the relation occurs); then `symbols` and `edges` (the new content of those files) are
/// added. A deleted file is listed in `files` and contributes nothing.
pub use crate::index::GraphDelta;

/// Which attribute a search pattern is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MatchField {
    /// The short name (`Plan`).
    Name,
    /// The fully qualified name (`example.com/app/internal/brain.Planner.Plan`).
    Qname,
}

/// A symbol search. Matching is case-insensitive; `*` in `pattern` matches any run of characters and every
/// other character is literal (see [`pattern::Glob`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolQuery {
    pub field: MatchField,
    pub pattern: String,
    /// Only symbols of these kinds (empty: any kind).
    pub kinds: Vec<SymbolKind>,
    /// Only symbols whose file path contains this substring (case-sensitive).
    pub file: Option<String>,
    /// At most this many symbols are returned; [`SearchPage::total`] counts all matches.
    pub limit: usize,
}

impl SymbolQuery {
    /// A name search with no filters.
    pub fn name(pattern: impl Into<String>, limit: usize) -> Self {
        SymbolQuery {
            field: MatchField::Name,
            pattern: pattern.into(),
            kinds: Vec::new(),
            file: None,
            limit,
        }
    }

    /// A qname search with no filters.
    pub fn qname(pattern: impl Into<String>, limit: usize) -> Self {
        SymbolQuery {
            field: MatchField::Qname,
            ..SymbolQuery::name(pattern, limit)
        }
    }
}

/// One page of search results. Symbols are ordered: exact-case name (or qname) equality first, then
/// shorter qnames, then qname.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SearchPage {
    /// All matches, not just the ones returned.
    pub total: usize,
    pub symbols: Vec<Symbol>,
}

/// Direction of an edge relative to the symbol asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Edges pointing at the symbol (`to == qname`): callers, users, implementors.
    Incoming,
    /// Edges leaving the symbol (`from == qname`): callees, used types, implemented interfaces.
    Outgoing,
}

/// One call edge found by a [`GraphStore::traverse_calls`] walk.
///
/// The walk is breadth-first over `calls` edges: level 0 is the start symbol, level `d` holds the symbols
/// first reached at distance `d`. A step is every call edge between a level `d - 1` symbol and a level `d`
/// symbol, so a symbol reached from several symbols (or through several call sites) yields several steps.
/// The start symbol never appears as a result (a recursive call is not reported as its own caller).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CallStep {
    /// Distance from the start symbol (1..=depth).
    pub depth: u8,
    /// The symbol reached: the caller (incoming walk) or the callee (outgoing walk).
    /// `None` for an unresolved callee, which is never walked further.
    pub node: Option<String>,
    /// The symbol at level `depth - 1` this step connects to.
    pub via: String,
    /// The name written at the call site.
    pub to_name: String,
    /// Call site.
    pub file: String,
    pub line: u32,
    pub confidence: Confidence,
}

/// The interface every graph backend implements. Query methods take a [`Snapshot`] and fail with
/// [`StoreError::SnapshotNotFound`] when it is not stored.
#[async_trait]
pub trait GraphStore: Send + Sync {
    /// Short backend name (`memory`, `postgres`, `arangodb`) for logs.
    fn backend(&self) -> &'static str;

    /// A cheap round trip that fails with an unavailable error ([`StoreError::is_unavailable`])
    /// when the backend cannot be reached. In-process stores are always there.
    async fn ping(&self) -> StoreResult<()> {
        Ok(())
    }

    /// Every stored snapshot, each repository's newest first (see [`SnapshotInfo`]): what a
    /// retention pass chooses from.
    async fn snapshots(&self) -> StoreResult<Vec<SnapshotInfo>>;

    /// Stores `graph` as the snapshot of `repo` at `commit`, replacing any graph stored under that key, and
    /// makes it the latest snapshot of `repo`.
    async fn replace_graph(&self, repo: &str, commit: &str, graph: &Graph) -> StoreResult<()>;

    /// Moves the snapshot of `repo` at `from_commit` to `to_commit`, applying `delta` (see [`GraphDelta`]).
    /// The graph at `from_commit` no longer exists afterwards (a graph already stored at `to_commit` is
    /// replaced); the result becomes the latest snapshot of `repo`. `from_commit == to_commit` edits in place.
    async fn apply_delta(
        &self,
        repo: &str,
        from_commit: &str,
        to_commit: &str,
        delta: &GraphDelta,
    ) -> StoreResult<()>;

    /// The commit of the most recently stored or updated snapshot of `repo`.
    async fn latest_commit(&self, repo: &str) -> StoreResult<Option<String>>;

    /// Deletes a snapshot; returns whether it existed.
    async fn delete_snapshot(&self, snapshot: &Snapshot) -> StoreResult<bool>;

    /// The whole stored graph, in canonical order (see [`canonicalize`]).
    async fn export(&self, snapshot: &Snapshot) -> StoreResult<Graph>;

    /// Symbols matching `query` (see [`SymbolQuery`], [`SearchPage`]).
    async fn search(&self, snapshot: &Snapshot, query: &SymbolQuery) -> StoreResult<SearchPage>;

    /// The symbols with these exact qnames, ordered by qname (a qname the store does not know is skipped).
    async fn symbols(&self, snapshot: &Snapshot, qnames: &[String]) -> StoreResult<Vec<Symbol>>;

    /// Symbols whose `parent` is `parent` (methods of a type, fields of a struct, members of a module),
    /// ordered by file, line, qname.
    async fn children(&self, snapshot: &Snapshot, parent: &str) -> StoreResult<Vec<Symbol>>;

    /// Edges of the given kinds (all kinds if empty) into or out of `qname`, ordered by file, line, from, to.
    async fn edges(
        &self,
        snapshot: &Snapshot,
        qname: &str,
        direction: Direction,
        kinds: &[EdgeKind],
    ) -> StoreResult<Vec<Edge>>;

    /// Breadth-first walk over `calls` edges from `qname` up to `depth` levels (callers for
    /// [`Direction::Incoming`], callees for [`Direction::Outgoing`]); see [`CallStep`]. `depth` is clamped to
    /// 1..=3. Steps are ordered by depth, file, line, node, via.
    async fn traverse_calls(
        &self,
        snapshot: &Snapshot,
        qname: &str,
        direction: Direction,
        depth: u8,
    ) -> StoreResult<Vec<CallStep>>;
}

/// Opens the configured backend (`auto` first resolved, see [`StoreBackend::resolve`]). `pool` is
/// required for `backend = "postgres"`; `arangodb` connects and creates its collections and
/// indexes if missing.
pub async fn open_store(
    settings: &CodegraphSettings,
    pool: Option<relay_store::PgPool>,
) -> StoreResult<Arc<dyn GraphStore>> {
    let backend = settings.backend.resolve(&settings.arangodb).await;
    if settings.backend == StoreBackend::Auto {
        tracing::info!(codegraph.backend = ?backend, "codegraph backend \"auto\" resolved");
    }
    match backend {
        // `resolve` never answers `Auto`.
        StoreBackend::Memory | StoreBackend::Auto => Ok(Arc::new(memory::MemoryStore::new())),
        StoreBackend::Postgres => pool
            .map(|pool| Arc::new(postgres::PostgresStore::new(pool)) as Arc<dyn GraphStore>)
            .ok_or_else(|| {
                StoreError::Config("backend \"postgres\" needs a database connection pool".into())
            }),
        StoreBackend::Arangodb => {
            let store = arangodb::ArangoStore::connect(&settings.arangodb).await?;
            store.ensure_schema().await?;
            Ok(Arc::new(store))
        }
    }
}

/// Depth limits for call traversals.
pub const MIN_DEPTH: u8 = 1;
/// See [`MIN_DEPTH`].
pub const MAX_DEPTH: u8 = 3;

/// Clamps a requested traversal depth into `MIN_DEPTH..=MAX_DEPTH`.
pub fn clamp_depth(depth: i64) -> u8 {
    depth.clamp(i64::from(MIN_DEPTH), i64::from(MAX_DEPTH)) as u8
}

/// Sorts a graph into the canonical order every store's [`GraphStore::export`] returns: symbols by
/// (qname, file, line), edges by (from, kind, to, to_name, file, line, confidence); exact duplicates are kept.
pub fn canonicalize(graph: &mut Graph) {
    graph.symbols.sort_by(|a, b| {
        (&a.qname, &a.file, a.line, a.kind, a.end_line)
            .cmp(&(&b.qname, &b.file, b.line, b.kind, b.end_line))
    });
    graph
        .edges
        .sort_by(|a, b| edge_sort_key(a).cmp(&edge_sort_key(b)));
}

fn edge_sort_key(e: &Edge) -> (&str, EdgeKind, Option<&str>, &str, &str, u32, Confidence) {
    (
        e.from.as_str(),
        e.kind,
        e.to.as_deref(),
        e.to_name.as_str(),
        e.file.as_str(),
        e.line,
        e.confidence,
    )
}

/// Applies `delta` to an in-memory graph with the semantics of [`GraphStore::apply_delta`]. Stores use it
/// where a full rewrite is simplest, and the conformance suite uses it as the reference.
pub fn apply_delta_to_graph(graph: &mut Graph, delta: &GraphDelta) {
    let files: BTreeSet<&str> = delta.files.iter().map(String::as_str).collect();
    graph.symbols.retain(|s| !files.contains(s.file.as_str()));
    graph.edges.retain(|e| !files.contains(e.file.as_str()));
    graph.symbols.extend(delta.symbols.iter().cloned());
    graph.edges.extend(delta.edges.iter().cloned());
}

/// Orders call steps the way [`GraphStore::traverse_calls`] promises.
pub(crate) fn sort_steps(steps: &mut [CallStep]) {
    steps.sort_by(|a, b| {
        (
            a.depth,
            &a.file,
            a.line,
            &a.node,
            &a.via,
            &a.to_name,
            a.confidence,
        )
            .cmp(&(
                b.depth,
                &b.file,
                b.line,
                &b.node,
                &b.via,
                &b.to_name,
                b.confidence,
            ))
    });
}

/// Orders edges the way [`GraphStore::edges`] promises.
pub(crate) fn sort_edges_by_site(edges: &mut [Edge]) {
    edges.sort_by(|a, b| {
        (
            &a.file,
            a.line,
            &a.from,
            &a.to,
            a.kind,
            &a.to_name,
            a.confidence,
        )
            .cmp(&(
                &b.file,
                b.line,
                &b.from,
                &b.to,
                b.kind,
                &b.to_name,
                b.confidence,
            ))
    });
}

/// Orders search hits the way [`SearchPage`] promises: an exact (case-sensitive) match of the raw pattern
/// first, then shorter qnames, then qname, file, line.
pub(crate) fn sort_search_hits(symbols: &mut [Symbol], field: MatchField, raw_pattern: &str) {
    symbols.sort_by(|a, b| {
        let exact = |s: &Symbol| match field {
            MatchField::Name => s.name != raw_pattern,
            MatchField::Qname => s.qname != raw_pattern,
        };
        (exact(a), a.qname.chars().count(), &a.qname, &a.file, a.line).cmp(&(
            exact(b),
            b.qname.chars().count(),
            &b.qname,
            &b.file,
            b.line,
        ))
    });
}
