-- Foundation schema: webhook deliveries, the issue mirror and its thread cache,
-- pending issue events, and the job queue.

-- Every webhook that passed authentication, exactly once per delivery identity.
CREATE TABLE deliveries (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tracker       TEXT        NOT NULL,
    event_type    TEXT        NOT NULL,
    action        TEXT,
    -- Provider delivery identity, scoped (GitHub: hook target + X-GitHub-Delivery; GitLab: Idempotency-Key / event UUID).
    delivery_key  TEXT        NOT NULL,
    received_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    outcome       TEXT        NOT NULL CHECK (outcome IN ('accepted', 'ignored')),
    -- Why the delivery was ignored or what it engaged on (e.g. 'mention', 'pull_request_comment').
    reason        TEXT        NOT NULL,
    issue_id      BIGINT,
    job_id        BIGINT,
    payload       JSONB       NOT NULL,
    UNIQUE (tracker, delivery_key)
);

-- Our mirror of tracker issues, upserted from webhooks.
CREATE TABLE issues (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tracker       TEXT        NOT NULL,
    project_id    TEXT        NOT NULL,
    project_path  TEXT        NOT NULL,
    number        BIGINT      NOT NULL,
    title         TEXT        NOT NULL,
    body          TEXT        NOT NULL DEFAULT '',
    state         TEXT        NOT NULL,
    labels        TEXT[]      NOT NULL DEFAULT '{}',
    author        TEXT        NOT NULL,
    assignees     TEXT[]      NOT NULL DEFAULT '{}',
    url           TEXT        NOT NULL,
    confidential  BOOLEAN     NOT NULL DEFAULT false,
    -- The tracker's own updated_at; an older snapshot never overwrites a newer one.
    updated_at    TIMESTAMPTZ NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    synced_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (tracker, project_id, number)
) WITH (fillfactor = 80);  -- room for HOT updates: every event rewrites its issue row

-- The issue's thread: comments (GitHub) and notes (GitLab), keyed by the tracker's note id.
-- Keyed by (issue, tracker note id): one index to maintain on the intake hot path, and thread
-- lookups ("has the bot posted in this discussion?") scan one issue's notes through its prefix.
CREATE TABLE issue_notes (
    -- issues.id. No foreign key: rows are only written together with their issue in one
    -- statement and issues are never deleted, so the check would only cost the hot path.
    issue_id       BIGINT      NOT NULL,
    note_id        TEXT        NOT NULL,
    -- GitLab discussion id; NULL on GitHub (one flat thread per issue).
    discussion_id  TEXT,
    author         TEXT        NOT NULL,
    body           TEXT        NOT NULL,
    internal       BOOLEAN     NOT NULL DEFAULT false,
    url            TEXT,
    created_at     TIMESTAMPTZ NOT NULL,
    updated_at     TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (issue_id, note_id)
);

-- Engaging events not yet handled by a job. A job marks the events it saw as processed
-- when it completes; events that arrive while it runs stay pending for the follow-up job.
CREATE TABLE issue_events (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- issues.id (no foreign key, as for issue_notes).
    issue_id      BIGINT      NOT NULL,
    -- The delivery that carried the event (no foreign key: deliveries may be pruned by age).
    delivery_id   BIGINT      NOT NULL,
    kind          TEXT        NOT NULL,
    actor         TEXT        NOT NULL,
    note_id       TEXT,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    processed_at  TIMESTAMPTZ,
    processed_by  BIGINT
);
CREATE INDEX issue_events_pending_idx ON issue_events (issue_id) WHERE processed_at IS NULL;

-- The job queue.
CREATE TABLE jobs (
    id                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind              TEXT        NOT NULL,
    payload           JSONB       NOT NULL,
    -- Jobs with the same key never run concurrently (e.g. 'issue:42', 'repo:github:7').
    concurrency_key   TEXT,
    status            TEXT        NOT NULL DEFAULT 'queued'
                      CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'dead')),
    attempts          INT         NOT NULL DEFAULT 0,
    max_attempts      INT         NOT NULL,
    run_after         TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- Lease: the claim token of the current holder and when the lease lapses.
    lease_owner       TEXT,
    lease_token       UUID,
    lease_expires_at  TIMESTAMPTZ,
    last_error        TEXT,
    created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    started_at        TIMESTAMPTZ,
    finished_at       TIMESTAMPTZ
) WITH (fillfactor = 70);  -- jobs are updated several times each; keep the updates HOT
-- At most one running and one queued job per concurrency key: the running one does the work,
-- the queued one is the follow-up that picks up whatever arrived meanwhile.
CREATE UNIQUE INDEX jobs_one_running_per_key ON jobs (concurrency_key) WHERE status = 'running';
CREATE UNIQUE INDEX jobs_one_queued_per_key ON jobs (concurrency_key) WHERE status = 'queued';
CREATE INDEX jobs_claimable_idx ON jobs (run_after, id) WHERE status = 'queued';
CREATE INDEX jobs_lease_idx ON jobs (lease_expires_at) WHERE status = 'running';

-- One row per job attempt outcome, for operators ("what happened to job 42?").
CREATE TABLE job_runs (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id       BIGINT      NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    attempt      INT         NOT NULL,
    worker       TEXT        NOT NULL,
    outcome      TEXT        NOT NULL,
    detail       JSONB       NOT NULL DEFAULT '{}',
    started_at   TIMESTAMPTZ NOT NULL,
    finished_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX job_runs_job_idx ON job_runs (job_id);
