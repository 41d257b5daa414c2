-- The configuration in effect per repository (issue #35): the repository's `.relay.toml` read at
-- the checkout's commit, narrowed by the server's settings, as the last job or push applied it.
-- The status page and `/api/projects` show it; the errors are logged once per commit.
CREATE TABLE repo_configs (
    tracker         TEXT        NOT NULL,
    project_id      TEXT        NOT NULL,
    project_path    TEXT        NOT NULL,
    -- The commit the file (and the guidance files) were read at.
    commit_sha      TEXT        NOT NULL,
    -- relay_core::repo_config::EffectiveConfig: every key with its origin, the refused widenings,
    -- the errors that made the file fall back to the server's settings.
    effective       JSONB       NOT NULL,
    -- The guidance shown to the planner: [{origin, commit, chars, truncated}] (not the texts).
    guidance        JSONB       NOT NULL DEFAULT '[]',
    -- sha256 of the guidance texts; a learning made under another digest is marked for review.
    guidance_digest TEXT,
    has_errors      BOOLEAN     NOT NULL DEFAULT false,
    read_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (tracker, project_id)
);
