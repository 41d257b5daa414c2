//! The code graph tables (`codegraph_snapshots`, `codegraph_symbols`, `codegraph_edges`, migration
//! `0003_codegraph.sql` at the workspace root): the SQL of the Postgres backend, its one home.
//!
//! Typed row structs: enum columns decode straight into the model's enums (stored as their lowercase
//! spelling, see [`super::text_enum`]); the parent module maps rows onto the graph model. Graphs are namespaced by a
//! snapshot (repository + commit); bulk loads use multi-row `UNNEST` inserts in chunks; caller and callee
//! traversals are recursive CTEs over the edge indexes.

use chrono::{DateTime, Utc};
use sqlx::{AssertSqlSafe, PgConnection, PgPool};

use relay_store::Result;

use crate::model::{Confidence, EdgeKind, Language, SymbolKind};

/// Rows per `UNNEST` insert statement.
const CHUNK: usize = 10_000;

/// A symbol row.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SymbolRow {
    pub qname: String,
    pub name: String,
    pub kind: SymbolKind,
    pub language: Language,
    pub file: String,
    pub line: i32,
    pub end_line: i32,
    pub signature: Option<String>,
    pub doc: Option<String>,
    pub parent: Option<String>,
}

/// An edge row; `to_qname` is `None` for an unresolved edge.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct EdgeRow {
    pub kind: EdgeKind,
    pub from_qname: String,
    pub to_qname: Option<String>,
    pub to_name: String,
    pub file: String,
    pub line: i32,
    pub confidence: Confidence,
    /// [`crate::model::Edge::external`]: not a column (the table predates it, and its migrations
    /// belong to `relay-store`) but derived when edges are read (`EDGE_COLUMNS`): an edge
    /// whose `to_qname` names no symbol of its snapshot. Ignored on insert; `false` where a query
    /// does not select it.
    #[sqlx(default)]
    pub external: bool,
}

/// A stored snapshot.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SnapshotRow {
    pub id: i64,
    pub repository: String,
    pub commit_sha: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Which column a symbol search matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchColumn {
    Name,
    Qname,
}

/// A symbol search. Patterns are applied to the lowercased column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolSearch {
    pub column: SearchColumn,
    /// Lowercased value for an equality match; takes precedence over `like`.
    pub equals: Option<String>,
    /// A `LIKE` pattern (escape character `\`) over the lowercased column.
    pub like: Option<String>,
    /// The pattern as typed, for ranking exact-case matches first.
    pub raw: String,
    /// Only these kinds (empty: all).
    pub kinds: Vec<SymbolKind>,
    /// Only files containing this substring.
    pub file_contains: Option<String>,
    pub limit: i64,
}

/// One edge of a caller/callee walk (see `traverse_calls`).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct TraversalRow {
    pub depth: i32,
    /// The caller (incoming) or callee (outgoing); `None` for an unresolved callee.
    pub node: Option<String>,
    /// The symbol one level closer to the start.
    pub via: String,
    pub to_name: String,
    pub file: String,
    pub line: i32,
    pub confidence: Confidence,
}

/// Direction of edges relative to a symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeDirection {
    /// `to_qname = symbol`.
    Incoming,
    /// `from_qname = symbol`.
    Outgoing,
}

const SYMBOL_COLUMNS: &str =
    "qname, name, kind, language, file, line, end_line, signature, doc, parent";
/// The edge columns, plus `external` derived from the snapshot's symbols (see
/// [`EdgeRow::external`]); edges are read as `codegraph_edges e`.
const EDGE_COLUMNS: &str = "kind, from_qname, to_qname, to_name, file, line, confidence, \
     (e.to_qname IS NOT NULL AND NOT EXISTS (SELECT 1 FROM codegraph_symbols s \
     WHERE s.snapshot_id = e.snapshot_id AND s.qname = e.to_qname)) AS external";

/// The snapshot id of `repository` at `commit`.
pub async fn find_snapshot(pool: &PgPool, repository: &str, commit: &str) -> Result<Option<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM codegraph_snapshots WHERE repository = $1 AND commit_sha = $2",
    )
    .bind(repository)
    .bind(commit)
    .fetch_optional(pool)
    .await?)
}

/// The most recently stored or updated snapshot of `repository`.
pub async fn latest_snapshot(pool: &PgPool, repository: &str) -> Result<Option<SnapshotRow>> {
    Ok(sqlx::query_as(
        "SELECT id, repository, commit_sha, created_at, updated_at FROM codegraph_snapshots \
         WHERE repository = $1 ORDER BY updated_at DESC, id DESC LIMIT 1",
    )
    .bind(repository)
    .fetch_optional(pool)
    .await?)
}

/// Every snapshot (without its graph), each repository's newest first.
pub async fn all_snapshots(pool: &PgPool) -> Result<Vec<SnapshotRow>> {
    Ok(sqlx::query_as(
        "SELECT id, repository, commit_sha, created_at, updated_at FROM codegraph_snapshots \
         ORDER BY repository, updated_at DESC, id DESC",
    )
    .fetch_all(pool)
    .await?)
}

/// Answers when the database does (the store's [`crate::store::GraphStore::ping`]).
pub async fn ping(pool: &PgPool) -> Result<()> {
    sqlx::query("SELECT 1").execute(pool).await?;
    Ok(())
}

/// Deletes a snapshot with its symbols and edges; returns whether it existed.
pub async fn delete_snapshot(pool: &PgPool, repository: &str, commit: &str) -> Result<bool> {
    let result =
        sqlx::query("DELETE FROM codegraph_snapshots WHERE repository = $1 AND commit_sha = $2")
            .bind(repository)
            .bind(commit)
            .execute(pool)
            .await?;
    Ok(result.rows_affected() > 0)
}

/// Stores a whole graph as the snapshot of `repository` at `commit` (replacing one stored under the same
/// key) in one transaction; returns the new snapshot id.
pub async fn replace_snapshot(
    pool: &PgPool,
    repository: &str,
    commit: &str,
    symbols: &[SymbolRow],
    edges: &[EdgeRow],
) -> Result<i64> {
    let mut tx = pool.begin().await?;
    sqlx::query("DELETE FROM codegraph_snapshots WHERE repository = $1 AND commit_sha = $2")
        .bind(repository)
        .bind(commit)
        .execute(&mut *tx)
        .await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO codegraph_snapshots (repository, commit_sha) VALUES ($1, $2) RETURNING id",
    )
    .bind(repository)
    .bind(commit)
    .fetch_one(&mut *tx)
    .await?;
    insert_symbols(&mut tx, id, symbols).await?;
    insert_edges(&mut tx, id, edges).await?;
    tx.commit().await?;
    Ok(id)
}

/// Moves the snapshot of `repository` at `from_commit` to `to_commit` (dropping a snapshot already stored
/// at `to_commit`), deletes the symbols and edges of `files` and inserts the new rows, in one
/// transaction. Returns `false` (and changes nothing) when there is no snapshot at `from_commit`.
pub async fn apply_delta(
    pool: &PgPool,
    repository: &str,
    from_commit: &str,
    to_commit: &str,
    files: &[String],
    symbols: &[SymbolRow],
    edges: &[EdgeRow],
) -> Result<bool> {
    let mut tx = pool.begin().await?;
    let id: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM codegraph_snapshots WHERE repository = $1 AND commit_sha = $2 FOR UPDATE",
    )
    .bind(repository)
    .bind(from_commit)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(id) = id else {
        return Ok(false);
    };
    if from_commit != to_commit {
        sqlx::query("DELETE FROM codegraph_snapshots WHERE repository = $1 AND commit_sha = $2")
            .bind(repository)
            .bind(to_commit)
            .execute(&mut *tx)
            .await?;
    }
    sqlx::query(
        "UPDATE codegraph_snapshots SET commit_sha = $2, updated_at = clock_timestamp() WHERE id = $1",
    )
    .bind(id)
    .bind(to_commit)
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM codegraph_symbols WHERE snapshot_id = $1 AND file = ANY($2)")
        .bind(id)
        .bind(files)
        .execute(&mut *tx)
        .await?;
    sqlx::query("DELETE FROM codegraph_edges WHERE snapshot_id = $1 AND file = ANY($2)")
        .bind(id)
        .bind(files)
        .execute(&mut *tx)
        .await?;
    insert_symbols(&mut tx, id, symbols).await?;
    insert_edges(&mut tx, id, edges).await?;
    tx.commit().await?;
    Ok(true)
}

async fn insert_symbols(
    conn: &mut PgConnection,
    snapshot_id: i64,
    rows: &[SymbolRow],
) -> Result<()> {
    for chunk in rows.chunks(CHUNK) {
        let col = |f: fn(&SymbolRow) -> String| chunk.iter().map(f).collect::<Vec<String>>();
        let opt = |f: fn(&SymbolRow) -> Option<String>| chunk.iter().map(f).collect::<Vec<_>>();
        sqlx::query(
            "INSERT INTO codegraph_symbols \
             (snapshot_id, qname, name, kind, language, file, line, end_line, signature, doc, parent) \
             SELECT $1, * FROM UNNEST($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], \
             $7::int4[], $8::int4[], $9::text[], $10::text[], $11::text[])",
        )
        .bind(snapshot_id)
        .bind(col(|r| r.qname.clone()))
        .bind(col(|r| r.name.clone()))
        .bind(chunk.iter().map(|r| r.kind).collect::<Vec<SymbolKind>>())
        .bind(chunk.iter().map(|r| r.language).collect::<Vec<Language>>())
        .bind(col(|r| r.file.clone()))
        .bind(chunk.iter().map(|r| r.line).collect::<Vec<i32>>())
        .bind(chunk.iter().map(|r| r.end_line).collect::<Vec<i32>>())
        .bind(opt(|r| r.signature.clone()))
        .bind(opt(|r| r.doc.clone()))
        .bind(opt(|r| r.parent.clone()))
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

async fn insert_edges(conn: &mut PgConnection, snapshot_id: i64, rows: &[EdgeRow]) -> Result<()> {
    for chunk in rows.chunks(CHUNK) {
        let col = |f: fn(&EdgeRow) -> String| chunk.iter().map(f).collect::<Vec<String>>();
        sqlx::query(
            "INSERT INTO codegraph_edges \
             (snapshot_id, kind, from_qname, to_qname, to_name, file, line, confidence) \
             SELECT $1, * FROM UNNEST($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], \
             $7::int4[], $8::text[])",
        )
        .bind(snapshot_id)
        .bind(chunk.iter().map(|r| r.kind).collect::<Vec<EdgeKind>>())
        .bind(col(|r| r.from_qname.clone()))
        .bind(
            chunk
                .iter()
                .map(|r| r.to_qname.clone())
                .collect::<Vec<Option<String>>>(),
        )
        .bind(col(|r| r.to_name.clone()))
        .bind(col(|r| r.file.clone()))
        .bind(chunk.iter().map(|r| r.line).collect::<Vec<i32>>())
        .bind(
            chunk
                .iter()
                .map(|r| r.confidence)
                .collect::<Vec<Confidence>>(),
        )
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Every symbol and edge of a snapshot (unordered).
pub async fn export(pool: &PgPool, snapshot_id: i64) -> Result<(Vec<SymbolRow>, Vec<EdgeRow>)> {
    let symbols = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT {SYMBOL_COLUMNS} FROM codegraph_symbols WHERE snapshot_id = $1"
    )))
    .bind(snapshot_id)
    .fetch_all(pool)
    .await?;
    let edges = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT {EDGE_COLUMNS} FROM codegraph_edges e WHERE snapshot_id = $1"
    )))
    .bind(snapshot_id)
    .fetch_all(pool)
    .await?;
    Ok((symbols, edges))
}

/// Symbols matching `search`, ranked (exact-case match of `raw` first, then shorter qnames, then qname,
/// file, line, in byte order), with the total number of matches (0 when nothing matches).
pub async fn search_symbols(
    pool: &PgPool,
    snapshot_id: i64,
    search: &SymbolSearch,
) -> Result<(i64, Vec<SymbolRow>)> {
    let column = match search.column {
        SearchColumn::Name => "name",
        SearchColumn::Qname => "qname",
    };
    // Only fixed fragments are interpolated; every value is a bind parameter.
    let mut sql = format!(
        "SELECT {SYMBOL_COLUMNS}, count(*) OVER () AS total FROM codegraph_symbols \
         WHERE snapshot_id = $1"
    );
    let mut n = 2;
    let mut next = || {
        let p = format!("${n}");
        n += 1;
        p
    };
    if search.equals.is_some() {
        sql.push_str(&format!(" AND lower({column}) = {}", next()));
    } else if search.like.is_some() {
        sql.push_str(&format!(" AND lower({column}) LIKE {} ESCAPE '\\'", next()));
    }
    if !search.kinds.is_empty() {
        sql.push_str(&format!(" AND kind = ANY({})", next()));
    }
    if search.file_contains.is_some() {
        sql.push_str(&format!(" AND strpos(file, {}) > 0", next()));
    }
    let raw = next();
    let limit = next();
    sql.push_str(&format!(
        " ORDER BY ({column} <> {raw}), char_length(qname), qname COLLATE \"C\", \
         file COLLATE \"C\", line LIMIT {limit}"
    ));

    let mut query = sqlx::query_as::<_, SearchRow>(AssertSqlSafe(sql)).bind(snapshot_id);
    if let Some(equals) = &search.equals {
        query = query.bind(equals);
    } else if let Some(like) = &search.like {
        query = query.bind(like);
    }
    if !search.kinds.is_empty() {
        query = query.bind(&search.kinds);
    }
    if let Some(file) = &search.file_contains {
        query = query.bind(file);
    }
    let rows = query
        .bind(&search.raw)
        .bind(search.limit)
        .fetch_all(pool)
        .await?;
    let total = rows.first().map_or(0, |r| r.total);
    Ok((total, rows.into_iter().map(|r| r.symbol).collect()))
}

#[derive(sqlx::FromRow)]
struct SearchRow {
    #[sqlx(flatten)]
    symbol: SymbolRow,
    total: i64,
}

/// Symbols with these qnames (unordered).
pub async fn symbols_by_qname(
    pool: &PgPool,
    snapshot_id: i64,
    qnames: &[String],
) -> Result<Vec<SymbolRow>> {
    Ok(sqlx::query_as(AssertSqlSafe(format!(
        "SELECT {SYMBOL_COLUMNS} FROM codegraph_symbols WHERE snapshot_id = $1 AND qname = ANY($2)"
    )))
    .bind(snapshot_id)
    .bind(qnames)
    .fetch_all(pool)
    .await?)
}

/// Symbols whose parent is `parent` (unordered).
pub async fn children(pool: &PgPool, snapshot_id: i64, parent: &str) -> Result<Vec<SymbolRow>> {
    Ok(sqlx::query_as(AssertSqlSafe(format!(
        "SELECT {SYMBOL_COLUMNS} FROM codegraph_symbols WHERE snapshot_id = $1 AND parent = $2"
    )))
    .bind(snapshot_id)
    .bind(parent)
    .fetch_all(pool)
    .await?)
}

/// Edges into or out of `qname`, of the given kinds (all kinds if empty; unordered).
pub async fn edges_of(
    pool: &PgPool,
    snapshot_id: i64,
    qname: &str,
    direction: EdgeDirection,
    kinds: &[EdgeKind],
) -> Result<Vec<EdgeRow>> {
    let column = match direction {
        EdgeDirection::Incoming => "to_qname",
        EdgeDirection::Outgoing => "from_qname",
    };
    let kind_filter = if kinds.is_empty() {
        ""
    } else {
        " AND kind = ANY($3)"
    };
    let query = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT {EDGE_COLUMNS} FROM codegraph_edges e \
         WHERE snapshot_id = $1 AND {column} = $2{kind_filter}"
    )))
    .bind(snapshot_id)
    .bind(qname);
    let query = if kinds.is_empty() {
        query
    } else {
        query.bind(kinds)
    };
    Ok(query.fetch_all(pool).await?)
}

/// Breadth-first walk over `calls` edges from `qname`, `depth` levels deep (callers for
/// [`EdgeDirection::Incoming`], callees for [`EdgeDirection::Outgoing`]).
///
/// Two statements: a recursive CTE collects `(symbol, distance)` pairs and keeps each symbol's minimum
/// (its level; the start is level 0); then the call edges touching levels `0..depth - 1` are read
/// through the edge index and those joining a level `d - 1` symbol to a level `d` symbol are kept,
/// plus, for callees, the unresolved calls made by those levels. (Doing the second step as a join
/// against the CTE in one statement lets the planner, which cannot estimate CTE sizes, pick a
/// quadratic plan on large fan-ins.) Unordered.
pub async fn traverse_calls(
    pool: &PgPool,
    snapshot_id: i64,
    qname: &str,
    direction: EdgeDirection,
    depth: i32,
) -> Result<Vec<TraversalRow>> {
    let levels_sql = match direction {
        EdgeDirection::Incoming => CALLER_LEVELS_SQL,
        EdgeDirection::Outgoing => CALLEE_LEVELS_SQL,
    };
    let levels: Vec<(String, i32)> = sqlx::query_as(levels_sql)
        .bind(snapshot_id)
        .bind(qname)
        .bind(depth)
        .fetch_all(pool)
        .await?;
    let level_of: std::collections::HashMap<&str, i32> =
        levels.iter().map(|(q, d)| (q.as_str(), *d)).collect();
    let inner: Vec<String> = levels
        .iter()
        .filter(|(_, d)| *d < depth)
        .map(|(q, _)| q.clone())
        .collect();
    let edges_sql = match direction {
        EdgeDirection::Incoming => CALLS_INTO_SQL,
        EdgeDirection::Outgoing => CALLS_FROM_SQL,
    };
    let edges: Vec<EdgeRow> = sqlx::query_as(edges_sql)
        .bind(snapshot_id)
        .bind(&inner)
        .fetch_all(pool)
        .await?;
    let mut rows = Vec::new();
    for e in edges {
        // `near` is the end closer to the start, `far` the end one level further.
        let (near, far) = match direction {
            EdgeDirection::Incoming => (e.to_qname.as_deref(), Some(e.from_qname.as_str())),
            EdgeDirection::Outgoing => (Some(e.from_qname.as_str()), e.to_qname.as_deref()),
        };
        let Some(near_level) = near.and_then(|q| level_of.get(q)) else {
            continue;
        };
        let keep = match far {
            Some(far) => level_of.get(far) == Some(&(near_level + 1)),
            // An unresolved callee is a leaf one level further.
            None => true,
        };
        if keep {
            rows.push(TraversalRow {
                depth: near_level + 1,
                node: far.map(str::to_owned),
                via: near.unwrap_or_default().to_owned(),
                to_name: e.to_name,
                file: e.file,
                line: e.line,
                confidence: e.confidence,
            });
        }
    }
    Ok(rows)
}

const CALLER_LEVELS_SQL: &str = "\
WITH RECURSIVE walk(qname, depth) AS (
    SELECT $2::text, 0
  UNION
    SELECT e.from_qname, w.depth + 1
    FROM walk w
    JOIN codegraph_edges e
      ON e.snapshot_id = $1 AND e.to_qname = w.qname AND e.kind = 'calls'
    WHERE w.depth < $3
)
SELECT qname, min(depth) AS depth FROM walk GROUP BY qname";

const CALLEE_LEVELS_SQL: &str = "\
WITH RECURSIVE walk(qname, depth) AS (
    SELECT $2::text, 0
  UNION
    SELECT e.to_qname, w.depth + 1
    FROM walk w
    JOIN codegraph_edges e
      ON e.snapshot_id = $1 AND e.from_qname = w.qname AND e.kind = 'calls'
    WHERE w.depth < $3 AND e.to_qname IS NOT NULL
)
SELECT qname, min(depth) AS depth FROM walk GROUP BY qname";

const CALLS_INTO_SQL: &str = "SELECT kind, from_qname, to_qname, to_name, file, line, confidence \
FROM codegraph_edges WHERE snapshot_id = $1 AND to_qname = ANY($2) AND kind = 'calls'";

const CALLS_FROM_SQL: &str = "SELECT kind, from_qname, to_qname, to_name, file, line, confidence \
FROM codegraph_edges WHERE snapshot_id = $1 AND from_qname = ANY($2) AND kind = 'calls'";
