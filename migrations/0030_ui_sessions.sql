-- Status-page sign-ins live in the database, not in one gateway's memory (issue #36): a restart
-- or a second gateway behind a load balancer signs no one out, and a sign-out ends the session on
-- every gateway. The cookie carries a random 256-bit id; only its SHA-256 digest is stored, so a
-- read of this table cannot be turned into a cookie.
CREATE TABLE ui_sessions (
    id_digest  BYTEA       PRIMARY KEY CHECK (octet_length(id_digest) = 32),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at TIMESTAMPTZ NOT NULL,
    -- Who signed in, as the gateway saw the client (for the operator; never used to authorize).
    client     TEXT        NOT NULL DEFAULT ''
);

-- Expired sessions are deleted at each sign-in; the oldest ones past `[ui] max_sessions` too.
CREATE INDEX ui_sessions_expires_at ON ui_sessions (expires_at);
CREATE INDEX ui_sessions_created_at ON ui_sessions (created_at);
