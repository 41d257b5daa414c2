//! The ArangoDB graph store: document and edge collections, AQL traversals with bind variables.
//!
//! Talks to the server through arangors (cursor API: create, then next batch) over our reqwest adapter
//! ([`client::ReqwestClient`]). Collection layout and every query are in [`aql`]. A write that fails
//! half-way never becomes visible: a full load writes a fresh snapshot's documents first and switches the
//! snapshot document last (the newest snapshot document of a repository and commit wins). (Deltas are applied query by query; ArangoDB single-server AQL queries are
//! each atomic, but a delta spans several.)

pub mod aql;
pub mod client;
#[cfg(any(test, feature = "test-support"))]
pub mod double;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use arangors::{AqlQuery, ClientError, Database, GenericConnection};
use async_trait::async_trait;
use secrecy::ExposeSecret;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use self::client::ReqwestClient;
use super::pattern::Glob;
use super::settings::ArangoSettings;
use super::{
    CallStep, Direction, GraphDelta, GraphStore, MatchField, SearchPage, Snapshot, SnapshotInfo,
    StoreError, StoreResult, SymbolQuery, canonicalize, clamp_depth, sort_edges_by_site,
    sort_search_hits, sort_snapshot_infos, sort_steps,
};
use crate::model::{Confidence, Edge, EdgeKind, Graph, Symbol};

/// Documents per insert query.
const INSERT_CHUNK: usize = 5_000;
/// Cursor batch size.
const BATCH_SIZE: u32 = 1_000;
/// ArangoDB error number for "duplicate name" (collection already exists).
const ERROR_DUPLICATE_NAME: u16 = 1207;

/// A [`GraphStore`] on ArangoDB.
#[derive(Debug, Clone)]
pub struct ArangoStore {
    db: Database<ReqwestClient>,
}

fn arango(error: ClientError) -> StoreError {
    StoreError::Arango {
        context: String::new(),
        source: error,
    }
}

/// Monotonic microsecond sequence for "latest snapshot" ordering and unique snapshot keys.
fn next_seq() -> u64 {
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0);
    let mut last = LAST.load(Ordering::Relaxed);
    loop {
        let next = now.max(last + 1);
        match LAST.compare_exchange(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}

/// FNV-1a, for short stable vertex keys (ArangoDB keys cannot hold `/`).
fn fnv1a(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    // Each part is followed by a 0xff byte (never part of UTF-8 text), so ("ab", "c") != ("a", "bc").
    for byte in parts
        .iter()
        .flat_map(|p| p.bytes().chain(std::iter::once(0xff)))
    {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The vertex key of `qname` in `snapshot` (`None`: the snapshot's "unresolved" vertex).
fn node_key(snapshot: &str, qname: Option<&str>) -> String {
    match qname {
        Some(q) => format!("n{:016x}", fnv1a(&[snapshot, q])),
        None => format!("u{:016x}", fnv1a(&[snapshot])),
    }
}

fn node_id(snapshot: &str, qname: Option<&str>) -> String {
    format!("{}/{}", aql::NODES, node_key(snapshot, qname))
}

/// A symbol document: the model's fields plus the snapshot and lowercase search keys.
#[derive(Serialize)]
struct SymbolDoc<'a> {
    snapshot: &'a str,
    name_lower: String,
    qname_lower: String,
    #[serde(flatten)]
    symbol: &'a Symbol,
}

/// An edge document as stored and read back.
#[derive(Debug, Serialize, Deserialize)]
struct EdgeDoc {
    #[serde(rename = "_from", default, skip_serializing_if = "String::is_empty")]
    from_id: String,
    #[serde(rename = "_to", default, skip_serializing_if = "String::is_empty")]
    to_id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    snapshot: String,
    kind: EdgeKind,
    from_qname: String,
    to_qname: Option<String>,
    to_name: String,
    file: String,
    line: u32,
    confidence: Confidence,
    /// [`Edge::external`]; absent (false) in documents stored before the field existed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    external: bool,
}

impl EdgeDoc {
    fn new(snapshot: &str, e: &Edge) -> Self {
        EdgeDoc {
            from_id: node_id(snapshot, Some(&e.from)),
            to_id: node_id(snapshot, e.to.as_deref()),
            snapshot: snapshot.to_owned(),
            kind: e.kind,
            from_qname: e.from.clone(),
            to_qname: e.to.clone(),
            to_name: e.to_name.clone(),
            file: e.file.clone(),
            line: e.line,
            confidence: e.confidence,
            external: e.external,
        }
    }

    fn into_edge(self) -> Edge {
        Edge {
            kind: self.kind,
            from: self.from_qname,
            to: self.to_qname,
            to_name: self.to_name,
            file: self.file,
            line: self.line,
            confidence: self.confidence,
            external: self.external,
        }
    }
}

/// A row of [`aql::ALL_SNAPSHOTS`].
#[derive(Deserialize)]
struct SnapshotDoc {
    repo: String,
    commit: String,
    seq: u64,
}

#[derive(Deserialize)]
struct SearchDoc {
    total: usize,
    symbols: Vec<Symbol>,
}

#[derive(Deserialize)]
struct StepDoc {
    depth: u8,
    node: Option<String>,
    via: String,
    to_name: String,
    file: String,
    line: u32,
    confidence: Confidence,
}

impl ArangoStore {
    /// Connects (arangors checks the `Server: ArangoDB` header of `GET <url>`) and opens the database.
    pub async fn connect(settings: &ArangoSettings) -> StoreResult<Self> {
        // The binary refuses such a URL at start-up; a library caller gets the same answer.
        settings
            .validate()
            .map_err(|why| StoreError::Config(format!("[codegraph.arangodb] url {why}")))?;
        let connection = GenericConnection::<ReqwestClient>::establish_basic_auth(
            &settings.url,
            &settings.username,
            settings.password.expose_secret(),
        )
        .await
        .map_err(|source| StoreError::Arango {
            context: format!(
                ": failed to connect to {}",
                relay_core::secrets::redact_url(&settings.url)
            ),
            source,
        })?;
        let db = connection
            .db(&settings.database)
            .await
            .map_err(|source| StoreError::Arango {
                context: format!(": failed to open database {}", settings.database),
                source,
            })?;
        Ok(ArangoStore { db })
    }

    /// Creates the collections and persistent indexes if they are missing (idempotent).
    pub async fn ensure_schema(&self) -> StoreResult<()> {
        for name in [aql::SNAPSHOTS, aql::SYMBOLS, aql::NODES] {
            ignore_duplicate(self.db.create_collection(name).await.map(drop))?;
        }
        for name in [aql::CALLS, aql::EDGES] {
            ignore_duplicate(self.db.create_edge_collection(name).await.map(drop))?;
        }
        for (collection, fields) in aql::INDEXES {
            let index = arangors::index::Index::builder()
                .name(format!("relay_{}", fields.join("_")))
                .fields(fields.iter().map(|f| (*f).to_owned()).collect())
                .settings(arangors::index::IndexSettings::Persistent {
                    unique: false,
                    sparse: false,
                    deduplicate: false,
                })
                .build();
            self.db
                .create_index(collection, &index)
                .await
                .map_err(arango)?;
        }
        Ok(())
    }

    /// Runs one AQL query with bind variables and collects every batch.
    async fn query<T: DeserializeOwned>(
        &self,
        query: &str,
        vars: Vec<(&str, Value)>,
    ) -> StoreResult<Vec<T>> {
        let bind_vars: HashMap<&str, Value> = vars.into_iter().collect();
        let aql = AqlQuery::builder()
            .query(query)
            .bind_vars(bind_vars)
            .batch_size(BATCH_SIZE)
            .build();
        self.db.aql_query(aql).await.map_err(arango)
    }

    async fn snapshot_key(&self, snapshot: &Snapshot) -> StoreResult<Option<String>> {
        let keys: Vec<String> = self
            .query(
                aql::FIND_SNAPSHOT,
                vec![
                    ("repo", json!(snapshot.repo)),
                    ("commit", json!(snapshot.commit)),
                ],
            )
            .await?;
        Ok(keys.into_iter().next())
    }

    async fn require(&self, snapshot: &Snapshot) -> StoreResult<String> {
        self.snapshot_key(snapshot)
            .await?
            .ok_or_else(|| StoreError::SnapshotNotFound {
                repo: snapshot.repo.clone(),
                commit: snapshot.commit.clone(),
            })
    }

    async fn insert_docs<T: Serialize>(&self, collection: &str, docs: &[T]) -> StoreResult<()> {
        for chunk in docs.chunks(INSERT_CHUNK) {
            let _: Vec<Value> = self
                .query(
                    aql::INSERT_DOCS,
                    vec![("docs", json!(chunk)), ("@collection", json!(collection))],
                )
                .await?;
        }
        Ok(())
    }

    /// Inserts symbols, vertices and edges of `graph` under snapshot `key`.
    async fn insert_graph(&self, key: &str, symbols: &[Symbol], edges: &[Edge]) -> StoreResult<()> {
        let symbol_docs: Vec<SymbolDoc<'_>> = symbols
            .iter()
            .map(|s| SymbolDoc {
                snapshot: key,
                name_lower: s.name.to_lowercase(),
                qname_lower: s.qname.to_lowercase(),
                symbol: s,
            })
            .collect();
        self.insert_docs(aql::SYMBOLS, &symbol_docs).await?;

        let mut qnames: BTreeSet<Option<&str>> =
            symbols.iter().map(|s| Some(s.qname.as_str())).collect();
        for e in edges {
            qnames.insert(Some(e.from.as_str()));
            qnames.insert(e.to.as_deref());
        }
        let nodes: Vec<Value> = qnames
            .into_iter()
            .map(|q| json!({ "_key": node_key(key, q), "snapshot": key, "qname": q }))
            .collect();
        self.insert_docs(aql::NODES, &nodes).await?;

        let (calls, others): (Vec<&Edge>, Vec<&Edge>) = edges
            .iter()
            .partition(|e| e.kind == EdgeKind::Calls && e.to.is_some());
        let calls: Vec<EdgeDoc> = calls.into_iter().map(|e| EdgeDoc::new(key, e)).collect();
        let others: Vec<EdgeDoc> = others.into_iter().map(|e| EdgeDoc::new(key, e)).collect();
        self.insert_docs(aql::CALLS, &calls).await?;
        self.insert_docs(aql::EDGES, &others).await
    }

    /// Removes a snapshot document and all its data.
    async fn remove_snapshot(&self, key: &str) -> StoreResult<()> {
        let _: Vec<Value> = self
            .query(aql::REMOVE_SNAPSHOT, vec![("snapshot", json!(key))])
            .await?;
        self.remove_snapshot_data(key).await
    }

    /// Removes the symbols, vertices and edges of a snapshot.
    async fn remove_snapshot_data(&self, key: &str) -> StoreResult<()> {
        for collection in [aql::SYMBOLS, aql::NODES, aql::CALLS, aql::EDGES] {
            let _: Vec<Value> = self
                .query(
                    aql::REMOVE_SNAPSHOT_DATA,
                    vec![("@collection", json!(collection)), ("snapshot", json!(key))],
                )
                .await?;
        }
        Ok(())
    }

    async fn edge_docs(&self, collection: &str, key: &str) -> StoreResult<Vec<Edge>> {
        let docs: Vec<EdgeDoc> = self
            .query(
                aql::EXPORT,
                vec![("@collection", json!(collection)), ("snapshot", json!(key))],
            )
            .await?;
        Ok(docs.into_iter().map(EdgeDoc::into_edge).collect())
    }
}

fn ignore_duplicate(result: Result<(), ClientError>) -> StoreResult<()> {
    match result {
        Err(ClientError::Arango(e)) if e.error_num() == ERROR_DUPLICATE_NAME => Ok(()),
        other => other.map_err(arango),
    }
}

#[async_trait]
impl GraphStore for ArangoStore {
    fn backend(&self) -> &'static str {
        "arangodb"
    }

    async fn replace_graph(&self, repo: &str, commit: &str, graph: &Graph) -> StoreResult<()> {
        let seq = next_seq();
        let key = format!("s{seq:x}");
        self.insert_graph(&key, &graph.symbols, &graph.edges)
            .await?;
        let old = self.snapshot_key(&Snapshot::new(repo, commit)).await?;
        // The new snapshot document is written before the old one is removed; lookups take the newest,
        // so readers switch from the old graph to the new one without a gap.
        let _: Vec<Value> = self
            .query(
                aql::INSERT_SNAPSHOT,
                vec![
                    ("snapshot", json!(key)),
                    ("repo", json!(repo)),
                    ("commit", json!(commit)),
                    ("seq", json!(seq)),
                ],
            )
            .await?;
        if let Some(old) = old {
            self.remove_snapshot(&old).await?;
        }
        Ok(())
    }

    async fn apply_delta(
        &self,
        repo: &str,
        from_commit: &str,
        to_commit: &str,
        delta: &GraphDelta,
    ) -> StoreResult<()> {
        let key = self.require(&Snapshot::new(repo, from_commit)).await?;
        if from_commit != to_commit
            && let Some(existing) = self.snapshot_key(&Snapshot::new(repo, to_commit)).await?
        {
            self.remove_snapshot(&existing).await?;
        }
        for collection in [aql::SYMBOLS, aql::CALLS, aql::EDGES] {
            let _: Vec<Value> = self
                .query(
                    aql::REMOVE_FILES,
                    vec![
                        ("@collection", json!(collection)),
                        ("snapshot", json!(key)),
                        ("files", json!(delta.files)),
                    ],
                )
                .await?;
        }
        self.insert_graph(&key, &delta.symbols, &delta.edges)
            .await?;
        let _: Vec<Value> = self
            .query(
                aql::MOVE_SNAPSHOT,
                vec![
                    ("snapshot", json!(key)),
                    ("commit", json!(to_commit)),
                    ("seq", json!(next_seq())),
                ],
            )
            .await?;
        Ok(())
    }

    async fn ping(&self) -> StoreResult<()> {
        // `GET /_api/database/current`: answered without touching a collection.
        self.db
            .info()
            .await
            .map(drop)
            .map_err(|source| StoreError::Arango {
                context: ": ping".into(),
                source,
            })
    }

    async fn snapshots(&self) -> StoreResult<Vec<SnapshotInfo>> {
        let docs: Vec<SnapshotDoc> = self.query(aql::ALL_SNAPSHOTS, Vec::new()).await?;
        let mut infos: Vec<SnapshotInfo> = docs
            .into_iter()
            .map(|doc| SnapshotInfo {
                snapshot: Snapshot::new(doc.repo, doc.commit),
                // `seq` is the microsecond clock of the write (see `next_seq`).
                updated_at: chrono::DateTime::from_timestamp_micros(
                    i64::try_from(doc.seq).unwrap_or(i64::MAX),
                )
                .unwrap_or(chrono::DateTime::UNIX_EPOCH),
            })
            .collect();
        sort_snapshot_infos(&mut infos);
        Ok(infos)
    }

    async fn latest_commit(&self, repo: &str) -> StoreResult<Option<String>> {
        let commits: Vec<String> = self
            .query(aql::LATEST_COMMIT, vec![("repo", json!(repo))])
            .await?;
        Ok(commits.into_iter().next())
    }

    async fn delete_snapshot(&self, snapshot: &Snapshot) -> StoreResult<bool> {
        match self.snapshot_key(snapshot).await? {
            Some(key) => {
                self.remove_snapshot(&key).await?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    async fn export(&self, snapshot: &Snapshot) -> StoreResult<Graph> {
        let key = self.require(snapshot).await?;
        let symbols: Vec<Symbol> = self
            .query(
                aql::EXPORT,
                vec![
                    ("@collection", json!(aql::SYMBOLS)),
                    ("snapshot", json!(key)),
                ],
            )
            .await?;
        let mut edges = self.edge_docs(aql::CALLS, &key).await?;
        edges.extend(self.edge_docs(aql::EDGES, &key).await?);
        let mut graph = Graph { symbols, edges };
        canonicalize(&mut graph);
        Ok(graph)
    }

    async fn search(&self, snapshot: &Snapshot, query: &SymbolQuery) -> StoreResult<SearchPage> {
        let key = self.require(snapshot).await?;
        let glob = Glob::new(&query.pattern);
        let text = aql::search(
            query.field == MatchField::Qname,
            glob.is_exact(),
            !query.kinds.is_empty(),
            query.file.is_some(),
        );
        let pattern = glob
            .exact_text()
            .map(str::to_owned)
            .unwrap_or_else(|| glob.to_like());
        let mut vars = vec![
            ("snapshot", json!(key)),
            ("pattern", json!(pattern)),
            ("raw", json!(query.pattern)),
            ("limit", json!(query.limit)),
        ];
        if !query.kinds.is_empty() {
            vars.push(("kinds", json!(query.kinds)));
        }
        if let Some(file) = &query.file {
            vars.push(("file", json!(file)));
        }
        let page: Vec<SearchDoc> = self.query(&text, vars).await?;
        let page = page
            .into_iter()
            .next()
            .ok_or_else(|| StoreError::Corrupt("search returned no document".into()))?;
        let mut symbols = page.symbols;
        sort_search_hits(&mut symbols, query.field, &query.pattern);
        Ok(SearchPage {
            total: page.total,
            symbols,
        })
    }

    async fn symbols(&self, snapshot: &Snapshot, qnames: &[String]) -> StoreResult<Vec<Symbol>> {
        let key = self.require(snapshot).await?;
        let mut symbols: Vec<Symbol> = self
            .query(
                aql::SYMBOLS_BY_QNAME,
                vec![("snapshot", json!(key)), ("qnames", json!(qnames))],
            )
            .await?;
        symbols.sort_by(|a, b| (&a.qname, &a.file, a.line).cmp(&(&b.qname, &b.file, b.line)));
        Ok(symbols)
    }

    async fn children(&self, snapshot: &Snapshot, parent: &str) -> StoreResult<Vec<Symbol>> {
        let key = self.require(snapshot).await?;
        let mut symbols: Vec<Symbol> = self
            .query(
                aql::CHILDREN,
                vec![("snapshot", json!(key)), ("parent", json!(parent))],
            )
            .await?;
        symbols.sort_by(|a, b| (&a.file, a.line, &a.qname).cmp(&(&b.file, b.line, &b.qname)));
        Ok(symbols)
    }

    async fn edges(
        &self,
        snapshot: &Snapshot,
        qname: &str,
        direction: Direction,
        kinds: &[EdgeKind],
    ) -> StoreResult<Vec<Edge>> {
        let key = self.require(snapshot).await?;
        let text = match direction {
            Direction::Incoming => aql::EDGES_IN,
            Direction::Outgoing => aql::EDGES_OUT,
        };
        let docs: Vec<EdgeDoc> = self
            .query(
                text,
                vec![
                    ("snapshot", json!(key)),
                    ("qname", json!(qname)),
                    ("kinds", json!(kinds)),
                ],
            )
            .await?;
        let mut edges: Vec<Edge> = docs.into_iter().map(EdgeDoc::into_edge).collect();
        sort_edges_by_site(&mut edges);
        Ok(edges)
    }

    async fn traverse_calls(
        &self,
        snapshot: &Snapshot,
        qname: &str,
        direction: Direction,
        depth: u8,
    ) -> StoreResult<Vec<CallStep>> {
        let key = self.require(snapshot).await?;
        let depth = clamp_depth(i64::from(depth));
        let text = match direction {
            Direction::Incoming => aql::CALLERS,
            Direction::Outgoing => aql::CALLEES,
        };
        let docs: Vec<StepDoc> = self
            .query(
                text,
                vec![
                    ("snapshot", json!(key)),
                    ("start", json!(node_id(&key, Some(qname)))),
                    ("qname", json!(qname)),
                    ("depth", json!(depth)),
                ],
            )
            .await?;
        let mut steps: Vec<CallStep> = docs
            .into_iter()
            .map(|d| CallStep {
                depth: d.depth,
                node: d.node,
                via: d.via,
                to_name: d.to_name,
                file: d.file,
                line: d.line,
                confidence: d.confidence,
            })
            .collect();
        sort_steps(&mut steps);
        Ok(steps)
    }
}
