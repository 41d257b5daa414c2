-- A push costs less than a planner cycle (issue #38): per project, the commit its cited sources
-- are verified through, so a push that touches no cited file reads this row and writes it, and
-- no source.
--
-- A source with `through_watermark` is verified at its project's `verified_through` commit: its
-- own `commit_sha` is where it was last read (the same text at the same place), and readers show
-- the watermark's commit for it. A source with `recheck` must be read by the next push whatever
-- it changed (new since the last push, stale, or verified at a commit the watermark does not
-- cover). A push diffs the watermark against the pushed commit once and reads only the sources
-- with `recheck` and those under the watermark whose file changed.
--
-- Existing rows start with `recheck` (as every new row does), so the first push after this
-- migration reads every source once, as before, and brings them under the watermark.
CREATE TABLE reverify_watermarks (
    tracker          TEXT        NOT NULL,
    project_id       TEXT        NOT NULL,
    verified_through TEXT        NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (tracker, project_id)
);

ALTER TABLE finding_sources
    ADD COLUMN through_watermark BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN recheck BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE gap_sources
    ADD COLUMN through_watermark BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN recheck BOOLEAN NOT NULL DEFAULT true;

-- Sources no push re-checks any more (removed findings, closed gaps) leave the pending set.
UPDATE finding_sources s SET recheck = false FROM findings f WHERE f.id = s.finding_id AND f.removed;
UPDATE gap_sources s SET recheck = false FROM gaps g WHERE g.id = s.gap_id AND g.status <> 'open';

-- What a push reads: the pending sources (few), and those in the files it changed.
CREATE INDEX finding_sources_recheck_idx ON finding_sources (finding_id) WHERE recheck;
CREATE INDEX gap_sources_recheck_idx ON gap_sources (gap_id) WHERE recheck;
CREATE INDEX finding_sources_path_idx ON finding_sources (path);
CREATE INDEX gap_sources_path_idx ON gap_sources (path);

-- A finding removed or a gap closed leaves re-verification: its sources keep the commit they
-- were verified at (the watermark's, written down) and leave the pending set.
CREATE FUNCTION finding_sources_settle() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE finding_sources s
    SET commit_sha = CASE WHEN s.through_watermark THEN coalesce(
            (SELECT w.verified_through FROM issues i
             JOIN reverify_watermarks w ON w.tracker = i.tracker AND w.project_id = i.project_id
             WHERE i.id = NEW.issue_id), s.commit_sha) ELSE s.commit_sha END,
        through_watermark = false, recheck = false
    WHERE s.finding_id = NEW.id AND (s.through_watermark OR s.recheck);
    RETURN NULL;
END
$$;
CREATE TRIGGER finding_sources_settle AFTER UPDATE OF removed ON findings
    FOR EACH ROW WHEN (NEW.removed AND NOT OLD.removed) EXECUTE FUNCTION finding_sources_settle();

CREATE FUNCTION gap_sources_settle() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE gap_sources s
    SET commit_sha = CASE WHEN s.through_watermark THEN coalesce(
            (SELECT w.verified_through FROM issues i
             JOIN reverify_watermarks w ON w.tracker = i.tracker AND w.project_id = i.project_id
             WHERE i.id = NEW.issue_id), s.commit_sha) ELSE s.commit_sha END,
        through_watermark = false, recheck = false
    WHERE s.gap_id = NEW.id AND (s.through_watermark OR s.recheck);
    RETURN NULL;
END
$$;
CREATE TRIGGER gap_sources_settle AFTER UPDATE OF status ON gaps
    FOR EACH ROW WHEN (OLD.status = 'open' AND NEW.status <> 'open') EXECUTE FUNCTION gap_sources_settle();
