//! The AQL the ArangoDB store runs. Every value is a bind variable; collection names are fixed.
//!
//! Collections: `codegraph_snapshots` (one document per repository + commit), `codegraph_symbols`
//! (symbol documents), `codegraph_nodes` (one vertex per qname that is a symbol or an edge endpoint),
//! `codegraph_calls` (edge collection: resolved `calls` edges, the traversal graph) and `codegraph_edges`
//! (edge collection: every other edge, including unresolved calls, whose `_to` is a per-snapshot
//! "unresolved" vertex). Every document carries its `snapshot` key.

pub const SNAPSHOTS: &str = "codegraph_snapshots";
pub const SYMBOLS: &str = "codegraph_symbols";
pub const NODES: &str = "codegraph_nodes";
pub const CALLS: &str = "codegraph_calls";
pub const EDGES: &str = "codegraph_edges";

pub const FIND_SNAPSHOT: &str = "FOR s IN codegraph_snapshots \
FILTER s.repo == @repo AND s.commit == @commit SORT s.seq DESC LIMIT 1 RETURN s._key";

pub const LATEST_COMMIT: &str = "FOR s IN codegraph_snapshots \
FILTER s.repo == @repo SORT s.seq DESC LIMIT 1 RETURN s.commit";

/// Every snapshot document (retention chooses among them); `seq` is microseconds since the epoch.
pub const ALL_SNAPSHOTS: &str = "FOR s IN codegraph_snapshots \
SORT s.repo, s.seq DESC RETURN { repo: s.repo, commit: s.commit, seq: s.seq }";

pub const INSERT_SNAPSHOT: &str = "INSERT { _key: @snapshot, repo: @repo, commit: @commit, seq: @seq } \
INTO codegraph_snapshots RETURN NEW._key";

pub const MOVE_SNAPSHOT: &str = "UPDATE @snapshot WITH { commit: @commit, seq: @seq } \
IN codegraph_snapshots RETURN NEW._key";

pub const REMOVE_SNAPSHOT: &str = "REMOVE @snapshot IN codegraph_snapshots RETURN OLD._key";

pub const INSERT_DOCS: &str = "FOR d IN @docs \
INSERT d INTO @@collection OPTIONS { overwriteMode: \"ignore\" } RETURN 1";

pub const REMOVE_SNAPSHOT_DATA: &str = "FOR d IN @@collection \
FILTER d.snapshot == @snapshot REMOVE d IN @@collection RETURN 1";

pub const REMOVE_FILES: &str = "FOR d IN @@collection \
FILTER d.snapshot == @snapshot AND d.file IN @files REMOVE d IN @@collection RETURN 1";

pub const EXPORT: &str = "FOR d IN @@collection FILTER d.snapshot == @snapshot RETURN d";

pub const SYMBOLS_BY_QNAME: &str = "FOR s IN codegraph_symbols \
FILTER s.snapshot == @snapshot AND s.qname IN @qnames RETURN s";

pub const CHILDREN: &str = "FOR s IN codegraph_symbols \
FILTER s.snapshot == @snapshot AND s.parent == @parent RETURN s";

pub const EDGES_IN: &str = "FOR e IN UNION(
    (FOR e IN codegraph_calls FILTER e.snapshot == @snapshot AND e.to_qname == @qname RETURN e),
    (FOR e IN codegraph_edges FILTER e.snapshot == @snapshot AND e.to_qname == @qname RETURN e))
  FILTER LENGTH(@kinds) == 0 OR e.kind IN @kinds
  RETURN e";

pub const EDGES_OUT: &str = "FOR e IN UNION(
    (FOR e IN codegraph_calls FILTER e.snapshot == @snapshot AND e.from_qname == @qname RETURN e),
    (FOR e IN codegraph_edges FILTER e.snapshot == @snapshot AND e.from_qname == @qname RETURN e))
  FILTER LENGTH(@kinds) == 0 OR e.kind IN @kinds
  RETURN e";

/// Breadth-first traversal with global vertex uniqueness gives each caller its level (minimum distance);
/// then every call edge from a level `d` symbol to a level `d - 1` symbol is returned.
pub const CALLERS: &str = "WITH codegraph_nodes
LET reached = (
  FOR v, e, p IN 1..@depth INBOUND @start codegraph_calls
    OPTIONS { order: \"bfs\", uniqueVertices: \"global\" }
    RETURN { qname: e.from_qname, depth: LENGTH(p.edges) })
LET levels = APPEND([{ qname: @qname, depth: 0 }], reached)
LET depth_of = ZIP(levels[*].qname, levels[*].depth)
FOR l IN reached
  FOR e IN codegraph_calls
    FILTER e.snapshot == @snapshot AND e.from_qname == l.qname
    LET d = depth_of[e.to_qname]
    FILTER d != null AND d == l.depth - 1
    RETURN { depth: l.depth, node: e.from_qname, via: e.to_qname, to_name: e.to_name,
             file: e.file, line: e.line, confidence: e.confidence }";

/// Like [`CALLERS`] outbound, plus the unresolved calls made by every level below `@depth`.
pub const CALLEES: &str = "WITH codegraph_nodes
LET reached = (
  FOR v, e, p IN 1..@depth OUTBOUND @start codegraph_calls
    OPTIONS { order: \"bfs\", uniqueVertices: \"global\" }
    RETURN { qname: e.to_qname, depth: LENGTH(p.edges) })
LET levels = APPEND([{ qname: @qname, depth: 0 }], reached)
LET depth_of = ZIP(levels[*].qname, levels[*].depth)
LET resolved = (
  FOR l IN reached
    FOR e IN codegraph_calls
      FILTER e.snapshot == @snapshot AND e.to_qname == l.qname
      LET d = depth_of[e.from_qname]
      FILTER d != null AND d == l.depth - 1
      RETURN { depth: l.depth, node: e.to_qname, via: e.from_qname, to_name: e.to_name,
               file: e.file, line: e.line, confidence: e.confidence })
LET unresolved = (
  FOR p IN levels
    FILTER p.depth < @depth
    FOR e IN codegraph_edges
      FILTER e.snapshot == @snapshot AND e.from_qname == p.qname AND e.kind == \"calls\"
        AND e.to_qname == null
      RETURN { depth: p.depth + 1, node: null, via: e.from_qname, to_name: e.to_name,
               file: e.file, line: e.line, confidence: e.confidence })
FOR r IN APPEND(resolved, unresolved) RETURN r";

/// Builds the search query for one combination of filters (fixed fragments only).
pub fn search(qname: bool, exact: bool, kinds: bool, file: bool) -> String {
    let field = if qname { "qname" } else { "name" };
    let mut q = format!(
        "LET matches = (\n  FOR s IN codegraph_symbols\n    FILTER s.snapshot == @snapshot\n    FILTER {}",
        if exact {
            format!("s.{field}_lower == @pattern")
        } else {
            format!("LIKE(s.{field}_lower, @pattern)")
        }
    );
    if kinds {
        q.push_str("\n    FILTER s.kind IN @kinds");
    }
    if file {
        q.push_str("\n    FILTER CONTAINS(s.file, @file)");
    }
    q.push_str(&format!(
        "\n    RETURN s)\nRETURN {{ total: LENGTH(matches), symbols: (\n  FOR s IN matches\n    \
         SORT s.{field} != @raw, LENGTH(s.qname), s.qname, s.file, s.line\n    LIMIT @limit\n    RETURN s) }}"
    ));
    q
}

/// Persistent indexes created by `ArangoStore::ensure_schema`: (collection, fields).
pub const INDEXES: &[(&str, &[&str])] = &[
    (SNAPSHOTS, &["repo", "commit", "seq"]),
    (SNAPSHOTS, &["repo", "seq"]),
    (SYMBOLS, &["snapshot", "qname"]),
    (SYMBOLS, &["snapshot", "name_lower"]),
    (SYMBOLS, &["snapshot", "qname_lower"]),
    (SYMBOLS, &["snapshot", "parent"]),
    (SYMBOLS, &["snapshot", "file"]),
    (NODES, &["snapshot"]),
    (CALLS, &["snapshot", "from_qname"]),
    (CALLS, &["snapshot", "to_qname"]),
    (CALLS, &["snapshot", "file"]),
    (EDGES, &["snapshot", "from_qname", "kind"]),
    (EDGES, &["snapshot", "to_qname", "kind"]),
    (EDGES, &["snapshot", "file"]),
];
