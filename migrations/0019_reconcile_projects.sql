-- The reconciler's state per project: what changed on the tracker since `watermark` is asked for
-- on each pass (minus an overlap margin); the watermark moves only after a pass over the project
-- succeeds. Projects come from `issues` (every project Relay received an issue webhook from) and
-- from `[[trackers]] projects`; they are keyed by the lowercased path because a configured
-- project may have no known id until the tracker is asked.

CREATE TABLE reconcile_projects (
    tracker       TEXT        NOT NULL,
    project_key   TEXT        NOT NULL,  -- lower(project_path)
    project_path  TEXT        NOT NULL,
    project_id    TEXT,                  -- the tracker's id, once known
    -- When Relay first saw the project: the first pass looks back `lookback_secs` from here.
    first_seen_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- Everything updated before this (tracker time, by our clock when the pass began) was seen.
    watermark     TIMESTAMPTZ,
    last_pass_at  TIMESTAMPTZ,
    last_error    TEXT,
    -- Events recorded by the last pass.
    last_found    INTEGER     NOT NULL DEFAULT 0,
    PRIMARY KEY (tracker, project_key)
);
