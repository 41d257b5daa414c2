-- One living summary comment per issue (issue #25): the body last enqueued, so an update that
-- would not change it is never sent, and how many times it was (re)written.
CREATE TABLE issue_summaries (
    -- issues.id (no foreign key, as for the other per-issue tables: issues are never deleted).
    issue_id    BIGINT      PRIMARY KEY,
    -- The body as last enqueued (marker included).
    body        TEXT        NOT NULL,
    -- 1 for the first post, +1 per edit; part of each edit's idempotency key.
    revision    INT         NOT NULL CHECK (revision > 0),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
