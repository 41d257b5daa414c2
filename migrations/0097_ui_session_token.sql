-- A status-page session is bound to the `[api] token` that created it (issue #44 §6): each
-- session keeps a fingerprint of that token (a SHA-256 of it under a fixed label, never the token)
-- and is live only while the gateway's token has the same fingerprint, so rotating the token ends
-- every session. Sessions created before this column have none: they end at the upgrade (one
-- sign-in again).
ALTER TABLE ui_sessions ADD COLUMN token_fingerprint BYTEA
    CHECK (token_fingerprint IS NULL OR octet_length(token_fingerprint) = 32);
