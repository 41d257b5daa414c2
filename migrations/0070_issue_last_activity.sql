-- The status page's issue list pages on last activity (the latest of the tracker's update and
-- Relay's last LLM call on the issue) through an index in that order, instead of aggregating
-- every issue's LLM usage and sorting every issue on each request (issue #38).
--
-- `last_usage_at` is kept by a trigger on `llm_usage` (an append-only ledger: rows are never
-- updated or deleted); `last_activity` is derived from it and `updated_at`. Intake rewrites an
-- issue row on every event; when the tracker's `updated_at` does not move, neither does
-- `last_activity`, so that rewrite stays a HOT update.
ALTER TABLE issues ADD COLUMN last_usage_at TIMESTAMPTZ;

UPDATE issues i SET last_usage_at = u.last
FROM (SELECT issue_id, max(created_at) AS last FROM llm_usage
      WHERE issue_id IS NOT NULL GROUP BY issue_id) u
WHERE u.issue_id = i.id;

ALTER TABLE issues ADD COLUMN last_activity TIMESTAMPTZ
    GENERATED ALWAYS AS (greatest(updated_at, last_usage_at)) STORED;

CREATE INDEX issues_last_activity_idx ON issues (last_activity DESC, id DESC);

CREATE FUNCTION llm_usage_touch_issue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE issues SET last_usage_at = NEW.created_at
    WHERE id = NEW.issue_id AND (last_usage_at IS NULL OR last_usage_at < NEW.created_at);
    RETURN NULL;
END
$$;

CREATE TRIGGER llm_usage_touch_issue AFTER INSERT ON llm_usage
    FOR EACH ROW WHEN (NEW.issue_id IS NOT NULL) EXECUTE FUNCTION llm_usage_touch_issue();
