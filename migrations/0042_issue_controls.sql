-- Commands in a mention (issue #35): `stop`/`resume` keep Relay silent on an issue, and a
-- maintainer's `budget <amount>` raises one issue's cap. Both are keyed by the delivery of the
-- command, so a retried job applies each once.
CREATE TABLE issue_controls (
    -- issues.id (no foreign key, as for the other per-issue tables: issues are never deleted).
    issue_id         BIGINT      PRIMARY KEY,
    -- Set while Relay is stopped on the issue; NULL once resumed.
    stopped_at       TIMESTAMPTZ,
    stopped_by       TEXT,
    -- The delivery of the last stop or resume applied (a replay of an older one changes nothing).
    last_delivery_id BIGINT      NOT NULL
);

CREATE TABLE issue_budget_raises (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    issue_id    BIGINT           NOT NULL,
    -- The command's delivery: one raise per command, whatever retries happen.
    delivery_id BIGINT           NOT NULL UNIQUE,
    raised_by   TEXT             NOT NULL,
    tokens      BIGINT           NOT NULL DEFAULT 0 CHECK (tokens >= 0),
    usd         DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (usd >= 0),
    created_at  TIMESTAMPTZ      NOT NULL DEFAULT now()
);
CREATE INDEX issue_budget_raises_issue ON issue_budget_raises (issue_id);
