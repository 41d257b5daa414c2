-- Tool-sequence learning (issue #11 §3): per repository, how explores moved from one tool to the
-- next. An edge row is one transition A -> B from one source; `^` as from_tool is the start of a
-- run. A run counts at most once per edge (count = runs in which A -> B happened; successes = of
-- those, runs whose report was grounded by at least one verified citation).
CREATE TABLE tool_graph_edges (
    -- '<tracker>:<project path>', e.g. 'github:acme/app'.
    repo                TEXT             NOT NULL,
    from_tool           TEXT             NOT NULL,
    to_tool             TEXT             NOT NULL,
    -- 'observed' (Relay's own explores) or 'imported' (sequences from less structured sources).
    source              TEXT             NOT NULL CHECK (source IN ('observed', 'imported')),
    -- How much this source's evidence counts when ranking (observed 1.0; imported lower).
    weight              DOUBLE PRECISION NOT NULL CHECK (weight > 0 AND weight <= 1),
    count               BIGINT           NOT NULL CHECK (count > 0),
    successes           BIGINT           NOT NULL CHECK (successes >= 0 AND successes <= count),
    -- Mean estimated tokens of B's result after A.
    mean_result_tokens  DOUBLE PRECISION NOT NULL CHECK (mean_result_tokens >= 0),
    last_seen           TIMESTAMPTZ      NOT NULL,
    PRIMARY KEY (repo, from_tool, to_tool, source)
);

-- Runs recorded per repository and source (the denominator of "12 of 14 runs").
CREATE TABLE tool_graph_runs (
    repo       TEXT        NOT NULL,
    source     TEXT        NOT NULL CHECK (source IN ('observed', 'imported')),
    runs       BIGINT      NOT NULL CHECK (runs > 0),
    successes  BIGINT      NOT NULL CHECK (successes >= 0 AND successes <= runs),
    last_seen  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (repo, source)
);
