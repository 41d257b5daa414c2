-- Findings that stay true (issue #25): every push re-checks each source of each live finding at
-- the new default-branch commit. A source is `verified` at `commit_sha` (the text still stands
-- there, possibly re-anchored) or `stale` (the text is gone or changed; `commit_sha` stays the
-- last commit it was verified at). Expand-only: existing rows become `verified`, as they were.
ALTER TABLE finding_sources
    ADD COLUMN status TEXT NOT NULL DEFAULT 'verified' CHECK (status IN ('verified', 'stale')),
    -- The cited lines' text at `commit_sha`, kept for sources without a quote so a later push
    -- compares against what was cited (filled the first time a push re-checks the source).
    ADD COLUMN anchor_text TEXT,
    -- Where the source was before its last re-anchoring (NULL: never moved).
    ADD COLUMN moved_from_path TEXT,
    ADD COLUMN moved_from_start INT,
    ADD COLUMN moved_from_end INT,
    ADD CONSTRAINT finding_sources_moved_from_whole
        CHECK ((moved_from_path IS NULL) = (moved_from_start IS NULL)
               AND (moved_from_path IS NULL) = (moved_from_end IS NULL));

-- A push finds the live findings of one project through their issues: the issues' unique
-- (tracker, project_id, number) index and findings_live_idx serve that lookup.
