-- The related repositories of each repository: what the last job's admission made of the names
-- its `.relay.toml` `related` and the server's `[[trackers]] related` table gave (#46). One row
-- per name, in the order named; a refused name keeps its reason, shown on the project page, in
-- `GET /api/projects/...` and by `relay config check`. Replaced whole by each job's admission.
CREATE TABLE related_repositories (
    tracker            TEXT        NOT NULL,
    project_id         TEXT        NOT NULL,
    position           INT         NOT NULL,
    related_path       TEXT        NOT NULL,
    -- `suggested`: not named, but the repository depends on it ("could be related"; never
    -- admitted, its reason says how to name it).
    source             TEXT        NOT NULL CHECK (source IN ('file', 'server', 'suggested')),
    admitted           BOOLEAN     NOT NULL,
    -- Why it was refused (`NULL` when admitted).
    reason             TEXT,
    related_project_id TEXT,
    visibility         TEXT        CHECK (visibility IN ('public', 'internal', 'private')),
    -- The commit explored and the code graph's snapshot of it, at the last job.
    head_commit        TEXT,
    graph_commit       TEXT,
    checked_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (tracker, project_id, position),
    CHECK (admitted = (reason IS NULL))
);

-- The related repositories a job explored beside the issue's own (their labels), for the issue
-- page's list of jobs. `NULL`: none (or a job from before this migration).
ALTER TABLE jobs ADD COLUMN explored_related TEXT[];
