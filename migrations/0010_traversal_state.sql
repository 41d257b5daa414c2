-- Thorough mode's traversal state of one issue: what its thorough queries explored (files,
-- symbols, snippets, the call chain), FIFO-bounded by the agent (100 / 200 / 50 / 20 items), so
-- the next job on the issue starts from it instead of from nothing. Written whole (one upsert
-- per job that ran a thorough query); the JSON shape is relay_agent::thorough::state's.
CREATE TABLE traversal_states (
    issue_id    BIGINT      PRIMARY KEY REFERENCES issues (id) ON DELETE CASCADE,
    state       JSONB       NOT NULL,
    -- The commit the last query explored (line numbers in snippets are of this commit).
    commit_sha  TEXT        NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
