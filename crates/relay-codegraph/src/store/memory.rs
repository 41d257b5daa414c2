//! The in-memory graph store: the default for the CLI and tests.
//!
//! Each snapshot keeps its symbols and edges in slabs (removed entries leave a hole that compaction
//! reclaims) with indexes by qname, lowercase name, parent, file, and incoming/outgoing adjacency lists,
//! so an incremental update touches only the changed files' entries.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, RwLock};

use async_trait::async_trait;

use super::pattern::Glob;
use super::{
    CallStep, Direction, GraphDelta, GraphStore, MatchField, SearchPage, Snapshot, SnapshotInfo,
    StoreError, StoreResult, SymbolQuery, canonicalize, clamp_depth, sort_edges_by_site,
    sort_search_hits, sort_snapshot_infos, sort_steps,
};
use crate::model::{Edge, EdgeKind, Graph, Symbol};

/// An in-process [`GraphStore`]. Cloning shares the same data.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    inner: Arc<RwLock<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    snapshots: HashMap<Snapshot, Arc<RwLock<IndexedGraph>>>,
    /// Latest commit per repository, with a sequence number to order updates.
    latest: HashMap<String, (u64, String)>,
    sequence: u64,
    /// When each snapshot was last stored or moved forward ([`GraphStore::snapshots`]).
    updated: HashMap<Snapshot, chrono::DateTime<chrono::Utc>>,
}

impl MemoryStore {
    pub fn new() -> Self {
        MemoryStore::default()
    }

    fn snapshot(&self, snapshot: &Snapshot) -> StoreResult<Arc<RwLock<IndexedGraph>>> {
        let inner = self.inner.read().expect("memory store lock poisoned");
        inner
            .snapshots
            .get(snapshot)
            .cloned()
            .ok_or_else(|| StoreError::SnapshotNotFound {
                repo: snapshot.repo.clone(),
                commit: snapshot.commit.clone(),
            })
    }

    fn with_graph<T>(
        &self,
        snapshot: &Snapshot,
        f: impl FnOnce(&IndexedGraph) -> T,
    ) -> StoreResult<T> {
        let graph = self.snapshot(snapshot)?;
        let graph = graph.read().expect("memory graph lock poisoned");
        Ok(f(&graph))
    }
}

impl Inner {
    fn touch(&mut self, repo: &str, commit: &str) {
        self.sequence += 1;
        self.latest
            .insert(repo.to_owned(), (self.sequence, commit.to_owned()));
        self.updated
            .insert(Snapshot::new(repo, commit), chrono::Utc::now());
    }
}

/// One snapshot with its indexes.
#[derive(Debug, Default)]
struct IndexedGraph {
    symbols: Vec<Option<Symbol>>,
    edges: Vec<Option<Edge>>,
    live_symbols: usize,
    live_edges: usize,
    by_qname: HashMap<String, Vec<usize>>,
    by_qname_lower: HashMap<String, Vec<usize>>,
    by_name: HashMap<String, Vec<usize>>,
    by_parent: HashMap<String, Vec<usize>>,
    symbols_by_file: HashMap<String, Vec<usize>>,
    edges_by_file: HashMap<String, Vec<usize>>,
    outgoing: HashMap<String, Vec<usize>>,
    incoming: HashMap<String, Vec<usize>>,
}

fn remove_ids(
    index: &mut HashMap<String, Vec<usize>>,
    keys: &HashSet<String>,
    ids: &HashSet<usize>,
) {
    for key in keys {
        if let Some(list) = index.get_mut(key) {
            list.retain(|i| !ids.contains(i));
            if list.is_empty() {
                index.remove(key);
            }
        }
    }
}

impl IndexedGraph {
    fn from_graph(graph: &Graph) -> Self {
        let mut g = IndexedGraph::default();
        for s in &graph.symbols {
            g.add_symbol(s.clone());
        }
        for e in &graph.edges {
            g.add_edge(e.clone());
        }
        g
    }

    fn add_symbol(&mut self, s: Symbol) {
        let id = self.symbols.len();
        self.by_qname.entry(s.qname.clone()).or_default().push(id);
        self.by_qname_lower
            .entry(s.qname.to_lowercase())
            .or_default()
            .push(id);
        self.by_name
            .entry(s.name.to_lowercase())
            .or_default()
            .push(id);
        if let Some(parent) = &s.parent {
            self.by_parent.entry(parent.clone()).or_default().push(id);
        }
        self.symbols_by_file
            .entry(s.file.clone())
            .or_default()
            .push(id);
        self.symbols.push(Some(s));
        self.live_symbols += 1;
    }

    fn add_edge(&mut self, e: Edge) {
        let id = self.edges.len();
        self.outgoing.entry(e.from.clone()).or_default().push(id);
        if let Some(to) = &e.to {
            self.incoming.entry(to.clone()).or_default().push(id);
        }
        self.edges_by_file
            .entry(e.file.clone())
            .or_default()
            .push(id);
        self.edges.push(Some(e));
        self.live_edges += 1;
    }

    /// Removes every symbol and edge of `files`. Index lists are filtered once per affected key, so a
    /// file with thousands of edges from one symbol costs linear, not quadratic, time.
    fn remove_files(&mut self, files: &BTreeSet<&String>) {
        let mut symbol_ids = HashSet::new();
        let mut edge_ids = HashSet::new();
        for file in files {
            symbol_ids.extend(
                self.symbols_by_file
                    .remove(file.as_str())
                    .unwrap_or_default(),
            );
            edge_ids.extend(self.edges_by_file.remove(file.as_str()).unwrap_or_default());
        }
        let mut qnames = HashSet::new();
        let mut qnames_lower = HashSet::new();
        let mut names = HashSet::new();
        let mut parents = HashSet::new();
        for &id in &symbol_ids {
            if let Some(s) = self.symbols[id].take() {
                qnames_lower.insert(s.qname.to_lowercase());
                names.insert(s.name.to_lowercase());
                qnames.insert(s.qname);
                parents.extend(s.parent);
                self.live_symbols -= 1;
            }
        }
        let mut froms = HashSet::new();
        let mut tos = HashSet::new();
        for &id in &edge_ids {
            if let Some(e) = self.edges[id].take() {
                froms.insert(e.from);
                tos.extend(e.to);
                self.live_edges -= 1;
            }
        }
        remove_ids(&mut self.by_qname, &qnames, &symbol_ids);
        remove_ids(&mut self.by_qname_lower, &qnames_lower, &symbol_ids);
        remove_ids(&mut self.by_name, &names, &symbol_ids);
        remove_ids(&mut self.by_parent, &parents, &symbol_ids);
        remove_ids(&mut self.outgoing, &froms, &edge_ids);
        remove_ids(&mut self.incoming, &tos, &edge_ids);
    }

    fn apply(&mut self, delta: &GraphDelta) {
        self.remove_files(&delta.files.iter().collect());
        for s in &delta.symbols {
            self.add_symbol(s.clone());
        }
        for e in &delta.edges {
            self.add_edge(e.clone());
        }
        // Rebuild once holes outnumber live entries, so memory stays proportional to the graph.
        if self.symbols.len() > 2 * self.live_symbols.max(64)
            || self.edges.len() > 2 * self.live_edges.max(64)
        {
            *self = IndexedGraph::from_graph(&self.to_graph());
        }
    }

    fn to_graph(&self) -> Graph {
        Graph {
            symbols: self.symbols.iter().flatten().cloned().collect(),
            edges: self.edges.iter().flatten().cloned().collect(),
        }
    }

    fn symbol_ids<'a>(&'a self, ids: &'a [usize]) -> impl Iterator<Item = &'a Symbol> + 'a {
        ids.iter().filter_map(|&i| self.symbols[i].as_ref())
    }

    fn edge_ids<'a>(&'a self, ids: &'a [usize]) -> impl Iterator<Item = &'a Edge> + 'a {
        ids.iter().filter_map(|&i| self.edges[i].as_ref())
    }

    fn search(&self, query: &SymbolQuery) -> SearchPage {
        let glob = Glob::new(&query.pattern);
        let accept = |s: &Symbol| {
            (query.kinds.is_empty() || query.kinds.contains(&s.kind))
                && query.file.as_deref().is_none_or(|f| s.file.contains(f))
        };
        let index = match query.field {
            MatchField::Name => &self.by_name,
            MatchField::Qname => &self.by_qname_lower,
        };
        let mut hits: Vec<Symbol> = match glob.exact_text() {
            Some(exact) => index
                .get(exact)
                .map(|ids| {
                    self.symbol_ids(ids)
                        .filter(|s| accept(s))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default(),
            None => index
                .iter()
                .filter(|(key, _)| glob.matches_lower(key))
                .flat_map(|(_, ids)| self.symbol_ids(ids))
                .filter(|s| accept(s))
                .cloned()
                .collect(),
        };
        sort_search_hits(&mut hits, query.field, &query.pattern);
        let total = hits.len();
        hits.truncate(query.limit);
        SearchPage {
            total,
            symbols: hits,
        }
    }

    fn calls(&self, qname: &str, direction: Direction) -> impl Iterator<Item = &Edge> + '_ {
        let index = match direction {
            Direction::Incoming => &self.incoming,
            Direction::Outgoing => &self.outgoing,
        };
        index
            .get(qname)
            .map(|ids| ids.as_slice())
            .unwrap_or_default()
            .iter()
            .filter_map(|&i| self.edges[i].as_ref())
            .filter(|e| e.kind == EdgeKind::Calls)
    }

    fn traverse(&self, start: &str, direction: Direction, depth: u8) -> Vec<CallStep> {
        let mut seen: HashSet<&str> = HashSet::from([start]);
        let mut frontier: BTreeSet<&str> = BTreeSet::from([start]);
        let mut steps = Vec::new();
        for level in 1..=depth {
            let mut next: BTreeSet<&str> = BTreeSet::new();
            for &via in &frontier {
                for e in self.calls(via, direction) {
                    let node = match direction {
                        Direction::Incoming => Some(e.from.as_str()),
                        Direction::Outgoing => e.to.as_deref(),
                    };
                    if let Some(n) = node {
                        if seen.contains(n) && !next.contains(n) {
                            continue;
                        }
                        next.insert(n);
                    }
                    steps.push(CallStep {
                        depth: level,
                        node: node.map(str::to_owned),
                        via: via.to_owned(),
                        to_name: e.to_name.clone(),
                        file: e.file.clone(),
                        line: e.line,
                        confidence: e.confidence,
                    });
                }
            }
            seen.extend(next.iter().copied());
            frontier = next;
            if frontier.is_empty() {
                break;
            }
        }
        sort_steps(&mut steps);
        steps
    }
}

#[async_trait]
impl GraphStore for MemoryStore {
    fn backend(&self) -> &'static str {
        "memory"
    }

    async fn replace_graph(&self, repo: &str, commit: &str, graph: &Graph) -> StoreResult<()> {
        let indexed = IndexedGraph::from_graph(graph);
        let mut inner = self.inner.write().expect("memory store lock poisoned");
        inner
            .snapshots
            .insert(Snapshot::new(repo, commit), Arc::new(RwLock::new(indexed)));
        inner.touch(repo, commit);
        Ok(())
    }

    async fn apply_delta(
        &self,
        repo: &str,
        from_commit: &str,
        to_commit: &str,
        delta: &GraphDelta,
    ) -> StoreResult<()> {
        let from = Snapshot::new(repo, from_commit);
        let mut inner = self.inner.write().expect("memory store lock poisoned");
        let graph = inner
            .snapshots
            .remove(&from)
            .ok_or_else(|| StoreError::SnapshotNotFound {
                repo: repo.to_owned(),
                commit: from_commit.to_owned(),
            })?;
        graph
            .write()
            .expect("memory graph lock poisoned")
            .apply(delta);
        inner
            .snapshots
            .insert(Snapshot::new(repo, to_commit), graph);
        inner.touch(repo, to_commit);
        Ok(())
    }

    async fn latest_commit(&self, repo: &str) -> StoreResult<Option<String>> {
        let inner = self.inner.read().expect("memory store lock poisoned");
        Ok(inner.latest.get(repo).and_then(|(_, commit)| {
            inner
                .snapshots
                .contains_key(&Snapshot::new(repo, commit.as_str()))
                .then(|| commit.clone())
        }))
    }

    async fn delete_snapshot(&self, snapshot: &Snapshot) -> StoreResult<bool> {
        let mut inner = self.inner.write().expect("memory store lock poisoned");
        inner.updated.remove(snapshot);
        Ok(inner.snapshots.remove(snapshot).is_some())
    }

    async fn snapshots(&self) -> StoreResult<Vec<SnapshotInfo>> {
        let inner = self.inner.read().expect("memory store lock poisoned");
        let mut infos: Vec<SnapshotInfo> = inner
            .snapshots
            .keys()
            .map(|snapshot| SnapshotInfo {
                snapshot: snapshot.clone(),
                updated_at: inner
                    .updated
                    .get(snapshot)
                    .copied()
                    .unwrap_or(chrono::DateTime::UNIX_EPOCH),
            })
            .collect();
        sort_snapshot_infos(&mut infos);
        Ok(infos)
    }

    async fn export(&self, snapshot: &Snapshot) -> StoreResult<Graph> {
        let mut graph = self.with_graph(snapshot, IndexedGraph::to_graph)?;
        canonicalize(&mut graph);
        Ok(graph)
    }

    async fn search(&self, snapshot: &Snapshot, query: &SymbolQuery) -> StoreResult<SearchPage> {
        self.with_graph(snapshot, |g| g.search(query))
    }

    async fn symbols(&self, snapshot: &Snapshot, qnames: &[String]) -> StoreResult<Vec<Symbol>> {
        self.with_graph(snapshot, |g| {
            let wanted: BTreeSet<&str> = qnames.iter().map(String::as_str).collect();
            let mut out: Vec<Symbol> = wanted
                .into_iter()
                .filter_map(|q| g.by_qname.get(q))
                .flat_map(|ids| g.symbol_ids(ids).cloned())
                .collect();
            out.sort_by(|a, b| (&a.qname, &a.file, a.line).cmp(&(&b.qname, &b.file, b.line)));
            out
        })
    }

    async fn children(&self, snapshot: &Snapshot, parent: &str) -> StoreResult<Vec<Symbol>> {
        self.with_graph(snapshot, |g| {
            let mut out: Vec<Symbol> = g
                .by_parent
                .get(parent)
                .map(|ids| g.symbol_ids(ids).cloned().collect())
                .unwrap_or_default();
            out.sort_by(|a, b| (&a.file, a.line, &a.qname).cmp(&(&b.file, b.line, &b.qname)));
            out
        })
    }

    async fn edges(
        &self,
        snapshot: &Snapshot,
        qname: &str,
        direction: Direction,
        kinds: &[EdgeKind],
    ) -> StoreResult<Vec<Edge>> {
        self.with_graph(snapshot, |g| {
            let index = match direction {
                Direction::Incoming => &g.incoming,
                Direction::Outgoing => &g.outgoing,
            };
            let mut out: Vec<Edge> = index
                .get(qname)
                .map(|ids| {
                    g.edge_ids(ids)
                        .filter(|e| kinds.is_empty() || kinds.contains(&e.kind))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            sort_edges_by_site(&mut out);
            out
        })
    }

    async fn traverse_calls(
        &self,
        snapshot: &Snapshot,
        qname: &str,
        direction: Direction,
        depth: u8,
    ) -> StoreResult<Vec<CallStep>> {
        let depth = clamp_depth(i64::from(depth));
        self.with_graph(snapshot, |g| g.traverse(qname, direction, depth))
    }
}
