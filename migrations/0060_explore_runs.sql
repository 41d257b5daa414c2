-- Per-run learning rows (seed 003's learning record): one row per observed explore — quick,
-- medium or thorough — besides the per-repository aggregates of 0008, so a hint can be chosen by
-- the kind of question. Bounded: the store keeps the newest rows per repository
-- (`explore_runs::MAX_RUNS_PER_REPO`).
CREATE TABLE explore_runs (
    id           BIGSERIAL   PRIMARY KEY,
    -- '<tracker>:<project path>', as tool_graph_edges.repo.
    repo         TEXT        NOT NULL,
    -- The run's own id (unique per repository).
    run_id       TEXT        NOT NULL,
    -- The question's class (`callers`, `impact`, `flow`, `definition`, `bug`, `overview`, `other`).
    query_class  TEXT        NOT NULL,
    mode         TEXT        NOT NULL CHECK (mode IN ('quick', 'medium', 'thorough')),
    -- The successful tool calls in order (`codegraph callers`, `read`, …).
    tools        TEXT[]      NOT NULL,
    duration_ms  BIGINT      NOT NULL CHECK (duration_ms >= 0),
    -- `grounded`: the report kept at least one verified citation.
    outcome      TEXT        NOT NULL CHECK (outcome IN ('grounded', 'ungrounded')),
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (repo, run_id)
);
CREATE INDEX explore_runs_class_idx ON explore_runs (repo, query_class, id DESC);
