-- The evidence of an open gap stays true too (issue #25): the code places a gap's evidence cites
-- (`path:line` in its text) that were verified against the run's checkout are kept here, at the
-- batch's commit, and every push re-checks them like a finding's sources: `verified` at
-- `commit_sha`, re-anchored (with `moved_from_*`), or `stale` with its last good commit.
CREATE TABLE gap_sources (
    gap_id           BIGINT NOT NULL REFERENCES gaps (id) ON DELETE CASCADE,
    position         INT    NOT NULL,
    path             TEXT   NOT NULL,
    start_line       INT    NOT NULL CHECK (start_line > 0),
    end_line         INT    NOT NULL CHECK (end_line >= start_line),
    commit_sha       TEXT   NOT NULL,
    status           TEXT   NOT NULL DEFAULT 'verified' CHECK (status IN ('verified', 'stale')),
    -- The cited lines' text at `commit_sha` (evidence has no quote), filled the first time a
    -- push re-checks the source.
    anchor_text      TEXT,
    moved_from_path  TEXT,
    moved_from_start INT,
    moved_from_end   INT,
    CONSTRAINT gap_sources_moved_from_whole
        CHECK ((moved_from_path IS NULL) = (moved_from_start IS NULL)
               AND (moved_from_path IS NULL) = (moved_from_end IS NULL)),
    PRIMARY KEY (gap_id, position)
);
