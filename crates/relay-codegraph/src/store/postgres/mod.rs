//! The Postgres graph store: maps the model onto the rows of [`sql`], where its SQL lives.

pub mod sql;
pub mod text_enum;

use async_trait::async_trait;
use relay_store::PgPool;
use sql::{EdgeDirection, EdgeRow, SearchColumn, SymbolRow, SymbolSearch};
use text_enum::UnknownSpelling;

use super::pattern::Glob;
use super::{
    CallStep, Direction, GraphDelta, GraphStore, MatchField, SearchPage, Snapshot, SnapshotInfo,
    StoreError, StoreResult, SymbolQuery, canonicalize, clamp_depth, sort_edges_by_site,
    sort_search_hits, sort_snapshot_infos, sort_steps,
};
use crate::model::{Edge, EdgeKind, Graph, Symbol};

/// A [`GraphStore`] on the service's Postgres database (migration `0003_codegraph.sql`).
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: PgPool,
}

impl PostgresStore {
    pub fn new(pool: PgPool) -> Self {
        PostgresStore { pool }
    }

    async fn snapshot_id(&self, snapshot: &Snapshot) -> StoreResult<i64> {
        sql::find_snapshot(&self.pool, &snapshot.repo, &snapshot.commit)
            .await
            .map_err(pg)?
            .ok_or_else(|| StoreError::SnapshotNotFound {
                repo: snapshot.repo.clone(),
                commit: snapshot.commit.clone(),
            })
    }
}

/// A stored enum spelling the model does not know is corrupt data, not a failed query.
fn pg(error: relay_store::Error) -> StoreError {
    if let relay_store::Error::Database(sqlx::Error::ColumnDecode { source, .. }) = &error
        && let Some(unknown) = source.downcast_ref::<UnknownSpelling>()
    {
        return StoreError::Corrupt(unknown.to_string());
    }
    StoreError::Postgres(error)
}

fn line_to_i32(line: u32) -> i32 {
    i32::try_from(line).unwrap_or(i32::MAX)
}

fn line_from_i32(line: i32) -> u32 {
    u32::try_from(line).unwrap_or(0)
}

pub(crate) fn symbol_row(s: &Symbol) -> SymbolRow {
    SymbolRow {
        qname: s.qname.clone(),
        name: s.name.clone(),
        kind: s.kind,
        language: s.language,
        file: s.file.clone(),
        line: line_to_i32(s.line),
        end_line: line_to_i32(s.end_line),
        signature: s.signature.clone(),
        doc: s.doc.clone(),
        parent: s.parent.clone(),
    }
}

fn symbol_from_row(r: SymbolRow) -> Symbol {
    Symbol {
        kind: r.kind,
        language: r.language,
        qname: r.qname,
        name: r.name,
        file: r.file,
        line: line_from_i32(r.line),
        end_line: line_from_i32(r.end_line),
        signature: r.signature,
        doc: r.doc,
        parent: r.parent,
    }
}

pub(crate) fn edge_row(e: &Edge) -> EdgeRow {
    EdgeRow {
        kind: e.kind,
        from_qname: e.from.clone(),
        to_qname: e.to.clone(),
        to_name: e.to_name.clone(),
        file: e.file.clone(),
        line: line_to_i32(e.line),
        confidence: e.confidence,
        external: e.external,
    }
}

fn edge_from_row(r: EdgeRow) -> Edge {
    Edge {
        kind: r.kind,
        confidence: r.confidence,
        from: r.from_qname,
        to: r.to_qname,
        to_name: r.to_name,
        file: r.file,
        line: line_from_i32(r.line),
        external: r.external,
    }
}

fn symbols_from_rows(rows: Vec<SymbolRow>) -> Vec<Symbol> {
    rows.into_iter().map(symbol_from_row).collect()
}

fn direction(d: Direction) -> EdgeDirection {
    match d {
        Direction::Incoming => EdgeDirection::Incoming,
        Direction::Outgoing => EdgeDirection::Outgoing,
    }
}

#[async_trait]
impl GraphStore for PostgresStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    async fn replace_graph(&self, repo: &str, commit: &str, graph: &Graph) -> StoreResult<()> {
        let symbols: Vec<SymbolRow> = graph.symbols.iter().map(symbol_row).collect();
        let edges: Vec<EdgeRow> = graph.edges.iter().map(edge_row).collect();
        sql::replace_snapshot(&self.pool, repo, commit, &symbols, &edges)
            .await
            .map_err(pg)?;
        Ok(())
    }

    async fn apply_delta(
        &self,
        repo: &str,
        from_commit: &str,
        to_commit: &str,
        delta: &GraphDelta,
    ) -> StoreResult<()> {
        let symbols: Vec<SymbolRow> = delta.symbols.iter().map(symbol_row).collect();
        let edges: Vec<EdgeRow> = delta.edges.iter().map(edge_row).collect();
        let applied = sql::apply_delta(
            &self.pool,
            repo,
            from_commit,
            to_commit,
            &delta.files,
            &symbols,
            &edges,
        )
        .await
        .map_err(pg)?;
        if applied {
            Ok(())
        } else {
            Err(StoreError::SnapshotNotFound {
                repo: repo.to_owned(),
                commit: from_commit.to_owned(),
            })
        }
    }

    async fn latest_commit(&self, repo: &str) -> StoreResult<Option<String>> {
        Ok(sql::latest_snapshot(&self.pool, repo)
            .await
            .map_err(pg)?
            .map(|s| s.commit_sha))
    }

    async fn ping(&self) -> StoreResult<()> {
        sql::ping(&self.pool).await.map_err(pg)
    }

    async fn snapshots(&self) -> StoreResult<Vec<SnapshotInfo>> {
        let rows = sql::all_snapshots(&self.pool).await.map_err(pg)?;
        let mut infos: Vec<SnapshotInfo> = rows
            .into_iter()
            .map(|row| SnapshotInfo {
                snapshot: Snapshot::new(row.repository, row.commit_sha),
                updated_at: row.updated_at,
            })
            .collect();
        sort_snapshot_infos(&mut infos);
        Ok(infos)
    }

    async fn delete_snapshot(&self, snapshot: &Snapshot) -> StoreResult<bool> {
        sql::delete_snapshot(&self.pool, &snapshot.repo, &snapshot.commit)
            .await
            .map_err(pg)
    }

    async fn export(&self, snapshot: &Snapshot) -> StoreResult<Graph> {
        let id = self.snapshot_id(snapshot).await?;
        let (symbols, edges) = sql::export(&self.pool, id).await.map_err(pg)?;
        let mut graph = Graph {
            symbols: symbols_from_rows(symbols),
            edges: edges.into_iter().map(edge_from_row).collect(),
        };
        canonicalize(&mut graph);
        Ok(graph)
    }

    async fn search(&self, snapshot: &Snapshot, query: &SymbolQuery) -> StoreResult<SearchPage> {
        let id = self.snapshot_id(snapshot).await?;
        let glob = Glob::new(&query.pattern);
        let search = SymbolSearch {
            column: match query.field {
                MatchField::Name => SearchColumn::Name,
                MatchField::Qname => SearchColumn::Qname,
            },
            equals: glob.exact_text().map(str::to_owned),
            like: (!glob.is_exact()).then(|| glob.to_like()),
            raw: query.pattern.clone(),
            kinds: query.kinds.clone(),
            file_contains: query.file.clone(),
            limit: i64::try_from(query.limit).unwrap_or(i64::MAX),
        };
        let (total, rows) = sql::search_symbols(&self.pool, id, &search)
            .await
            .map_err(pg)?;
        let mut symbols = symbols_from_rows(rows);
        sort_search_hits(&mut symbols, query.field, &query.pattern);
        Ok(SearchPage {
            total: usize::try_from(total).unwrap_or(0),
            symbols,
        })
    }

    async fn symbols(&self, snapshot: &Snapshot, qnames: &[String]) -> StoreResult<Vec<Symbol>> {
        let id = self.snapshot_id(snapshot).await?;
        let rows = sql::symbols_by_qname(&self.pool, id, qnames)
            .await
            .map_err(pg)?;
        let mut symbols = symbols_from_rows(rows);
        symbols.sort_by(|a, b| (&a.qname, &a.file, a.line).cmp(&(&b.qname, &b.file, b.line)));
        Ok(symbols)
    }

    async fn children(&self, snapshot: &Snapshot, parent: &str) -> StoreResult<Vec<Symbol>> {
        let id = self.snapshot_id(snapshot).await?;
        let rows = sql::children(&self.pool, id, parent).await.map_err(pg)?;
        let mut symbols = symbols_from_rows(rows);
        symbols.sort_by(|a, b| (&a.file, a.line, &a.qname).cmp(&(&b.file, b.line, &b.qname)));
        Ok(symbols)
    }

    async fn edges(
        &self,
        snapshot: &Snapshot,
        qname: &str,
        dir: Direction,
        kinds: &[EdgeKind],
    ) -> StoreResult<Vec<Edge>> {
        let id = self.snapshot_id(snapshot).await?;
        let rows = sql::edges_of(&self.pool, id, qname, direction(dir), kinds)
            .await
            .map_err(pg)?;
        let mut edges: Vec<Edge> = rows.into_iter().map(edge_from_row).collect();
        sort_edges_by_site(&mut edges);
        Ok(edges)
    }

    async fn traverse_calls(
        &self,
        snapshot: &Snapshot,
        qname: &str,
        dir: Direction,
        depth: u8,
    ) -> StoreResult<Vec<CallStep>> {
        let id = self.snapshot_id(snapshot).await?;
        let depth = clamp_depth(i64::from(depth));
        let rows = sql::traverse_calls(&self.pool, id, qname, direction(dir), i32::from(depth))
            .await
            .map_err(pg)?;
        let mut steps = rows
            .into_iter()
            .map(|r| {
                Ok(CallStep {
                    depth: u8::try_from(r.depth)
                        .map_err(|_| StoreError::Corrupt(format!("traversal depth {}", r.depth)))?,
                    node: r.node,
                    via: r.via,
                    to_name: r.to_name,
                    file: r.file,
                    line: line_from_i32(r.line),
                    confidence: r.confidence,
                })
            })
            .collect::<StoreResult<Vec<_>>>()?;
        sort_steps(&mut steps);
        Ok(steps)
    }
}
