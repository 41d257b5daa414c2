-- The code graph (relay-codegraph's Postgres store): symbols and edges of one repository at one commit.
-- A snapshot row namespaces them; an incremental re-index moves a snapshot to the new commit in place
-- (commit_sha is updated and only the changed files' rows are replaced), so the latest graph of a
-- repository is the snapshot with the greatest updated_at.
CREATE TABLE codegraph_snapshots (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repository  TEXT        NOT NULL,
    commit_sha  TEXT        NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (repository, commit_sha)
);
CREATE INDEX codegraph_snapshots_latest_idx ON codegraph_snapshots (repository, updated_at DESC, id DESC);

-- qname is unique per graph by design, but the indexer may emit duplicates (Go allows several
-- `func init()` per package), so it is indexed, not constrained.
CREATE TABLE codegraph_symbols (
    snapshot_id BIGINT  NOT NULL REFERENCES codegraph_snapshots (id) ON DELETE CASCADE,
    qname       TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    language    TEXT    NOT NULL,
    file        TEXT    NOT NULL,
    line        INTEGER NOT NULL,
    end_line    INTEGER NOT NULL,
    signature   TEXT,
    doc         TEXT,
    parent      TEXT
);
-- Exact qname lookups.
CREATE INDEX codegraph_symbols_qname_idx ON codegraph_symbols (snapshot_id, qname);
-- Case-insensitive name search: equality and prefix LIKE ('plan%').
CREATE INDEX codegraph_symbols_name_idx ON codegraph_symbols (snapshot_id, lower(name) text_pattern_ops);
-- Case-insensitive qname search by prefix (suggestions, `pkg.Type.*`).
CREATE INDEX codegraph_symbols_lower_qname_idx ON codegraph_symbols (snapshot_id, lower(qname) text_pattern_ops);
-- Members of a type or module.
CREATE INDEX codegraph_symbols_parent_idx ON codegraph_symbols (snapshot_id, parent) WHERE parent IS NOT NULL;
-- Incremental re-indexing replaces whole files.
CREATE INDEX codegraph_symbols_file_idx ON codegraph_symbols (snapshot_id, file);

-- to_qname is NULL for an unresolved edge (to_name keeps the name as written).
CREATE TABLE codegraph_edges (
    snapshot_id BIGINT  NOT NULL REFERENCES codegraph_snapshots (id) ON DELETE CASCADE,
    kind        TEXT    NOT NULL CHECK (kind IN ('calls', 'implements', 'inherits', 'uses', 'imports')),
    from_qname  TEXT    NOT NULL,
    to_qname    TEXT,
    to_name     TEXT    NOT NULL,
    file        TEXT    NOT NULL,
    line        INTEGER NOT NULL,
    confidence  TEXT    NOT NULL CHECK (confidence IN ('exact', 'inferred', 'dynamic'))
);
-- Outgoing edges (callees, implemented interfaces) and incoming edges (callers, usages, implementors);
-- the recursive traversals walk these.
CREATE INDEX codegraph_edges_from_idx ON codegraph_edges (snapshot_id, from_qname, kind);
CREATE INDEX codegraph_edges_to_idx ON codegraph_edges (snapshot_id, to_qname, kind) WHERE to_qname IS NOT NULL;
CREATE INDEX codegraph_edges_file_idx ON codegraph_edges (snapshot_id, file);
