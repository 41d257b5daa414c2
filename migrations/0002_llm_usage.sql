-- One row per model tried by one LLM call: what it cost and how it ended.
-- job_id / issue_id link to jobs.id / issues.id without foreign keys: usage is an append-only
-- ledger that must survive the deletion of the job or issue it served.
CREATE TABLE llm_usage (
    id                 BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id             BIGINT,
    issue_id           BIGINT,
    role               TEXT        NOT NULL,
    provider           TEXT        NOT NULL,
    model              TEXT        NOT NULL,
    prompt_tokens      BIGINT      NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
    completion_tokens  BIGINT      NOT NULL DEFAULT 0 CHECK (completion_tokens >= 0),
    cached_tokens      BIGINT      NOT NULL DEFAULT 0 CHECK (cached_tokens >= 0),
    latency_ms         BIGINT      NOT NULL CHECK (latency_ms >= 0),
    attempts           INTEGER     NOT NULL CHECK (attempts >= 0),
    outcome            TEXT        NOT NULL CHECK (outcome IN ('ok', 'error')),
    -- The classified error (e.g. 'rate_limited', 'invalid_output') when outcome = 'error'.
    error_kind         TEXT,
    created_at         TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX llm_usage_job_id_idx ON llm_usage (job_id) WHERE job_id IS NOT NULL;
CREATE INDEX llm_usage_issue_id_idx ON llm_usage (issue_id) WHERE issue_id IS NOT NULL;
CREATE INDEX llm_usage_created_at_idx ON llm_usage (created_at);
