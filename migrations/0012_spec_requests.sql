-- A "go ahead" is not lost (issue #22 §1): an accepted `ready_for_spec_generation` is recorded in
-- the batch's transaction (with the watermark raise that consumes the go-ahead). The spec step
-- marks it `written` in the transaction that stores the spec; while it is `pending` every job on
-- the issue retries the spec writer first. On the job's last attempt it becomes `failed` and one
-- status comment says so.
CREATE TABLE spec_requests (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    issue_id    BIGINT      NOT NULL,
    -- The accepted `ready_for_spec_generation` action (relay_core::action::ReadyForSpecGeneration).
    handover    JSONB       NOT NULL,
    job_id      BIGINT,
    status      TEXT        NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'written', 'failed')),
    last_error  TEXT,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- At most one pending request per issue: a newer go-ahead replaces the pending one.
CREATE UNIQUE INDEX spec_requests_pending_idx ON spec_requests (issue_id) WHERE status = 'pending';
