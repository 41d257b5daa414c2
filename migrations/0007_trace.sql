-- The run trace (issue #11 §1): what Relay did during each run of a job, as an append-only list of
-- events. Written in batches by the worker's trace sink; read by the SSE endpoint, `relay trace`
-- and the read API. job_id / issue_id link without foreign keys, like llm_usage: a trace is a
-- ledger that must survive the deletion of what it describes.

-- One row per attempt of a job (a retried job has several runs).
CREATE TABLE trace_runs (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id       BIGINT      NOT NULL,
    issue_id     BIGINT,
    -- jobs.attempts when this run started (1 for the first run).
    attempt      INT         NOT NULL CHECK (attempt > 0),
    -- The worker that ran it (the lease owner).
    worker       TEXT        NOT NULL,
    started_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- NULL while running, and forever for a run whose worker died (its events up to the last
    -- flushed batch remain).
    finished_at  TIMESTAMPTZ,
    -- 'succeeded', 'retrying', 'failed' (permanently) when finished.
    outcome      TEXT        CHECK (outcome IN ('succeeded', 'retrying', 'failed')),
    -- Events the sink could not keep (buffer full or a failed write), counted so that a gap in
    -- the trace is visible rather than silent.
    dropped      BIGINT      NOT NULL DEFAULT 0 CHECK (dropped >= 0),
    CHECK ((finished_at IS NULL) = (outcome IS NULL))
);
CREATE INDEX trace_runs_job_idx ON trace_runs (job_id, id);

-- `cursor` orders all events and is the SSE event id. Within one job, events are written by one
-- run at a time through one sequential flusher, so commit order equals cursor order per job and a
-- client resuming "after cursor N" misses nothing. `seq` numbers a run's events from 0, so a gap
-- left by a lost batch shows.
CREATE TABLE trace_events (
    cursor   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id   BIGINT      NOT NULL REFERENCES trace_runs (id) ON DELETE CASCADE,
    job_id   BIGINT      NOT NULL,
    seq      INT         NOT NULL CHECK (seq >= 0),
    at       TIMESTAMPTZ NOT NULL,
    type     TEXT        NOT NULL CHECK (type IN ('llm_call', 'tool_call', 'stage',
                                  'validation_failure', 'action', 'decision', 'error')),
    agent    TEXT        NOT NULL,
    payload  JSONB       NOT NULL,
    UNIQUE (run_id, seq)
);
CREATE INDEX trace_events_job_cursor_idx ON trace_events (job_id, cursor);
