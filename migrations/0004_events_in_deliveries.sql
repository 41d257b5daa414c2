-- Pending issue events are the accepted deliveries themselves.
--
-- Before: every engaging delivery also wrote an `issue_events` row (heap + two index entries) on
-- the intake hot path, and every job rewrote those rows to mark them processed.
-- Now: an accepted delivery carries its event (`reason` is the event kind, plus `actor` and
-- `note_id`), and each issue keeps a watermark, `handled_delivery_id`: the accepted deliveries of
-- an issue with a larger id are its pending events. A job that completes raises the watermark to
-- the largest delivery id it saw.
--
-- Why a watermark is exact: every accepted delivery of an issue upserts that issue row in the same
-- statement before its own id is drawn, so the row lock orders them: per issue, delivery ids are
-- drawn and committed in the same order. A job that sees delivery N has seen every earlier one.

ALTER TABLE deliveries
    ADD COLUMN actor   TEXT,
    ADD COLUMN note_id TEXT;

ALTER TABLE issues
    ADD COLUMN handled_delivery_id BIGINT NOT NULL DEFAULT 0;

-- The pending-event lookup: an issue's accepted deliveries after its watermark, in order. Rows are
-- never updated, so this index is written once per accepted delivery and never again.
CREATE INDEX deliveries_issue_accepted_idx ON deliveries (issue_id, id) WHERE outcome = 'accepted';

-- Carry the recorded events over.
UPDATE deliveries d
SET actor = e.actor, note_id = e.note_id
FROM issue_events e
WHERE e.delivery_id = d.id;

-- Watermarks: just below an issue's oldest pending event, or at its newest accepted delivery when
-- nothing is pending.
UPDATE issues i
SET handled_delivery_id = COALESCE(
        (SELECT min(e.delivery_id) - 1 FROM issue_events e
         WHERE e.issue_id = i.id AND e.processed_at IS NULL),
        (SELECT max(d.id) FROM deliveries d
         WHERE d.issue_id = i.id AND d.outcome = 'accepted'),
        0);

-- `issue_events` is no longer written or read. It stays (read-only) through one release so that a
-- rolling deploy with binaries from before this migration keeps working; a later migration drops it.
COMMENT ON TABLE issue_events IS 'deprecated by 0004: events are accepted deliveries; to be dropped';

-- Fewer index entries per write on the hot paths.
--
-- Deliveries are identified by (tracker, delivery_key); nothing looks a delivery up by `id` alone
-- (the per-issue lookups use the index above), so the natural key becomes the primary key and the
-- surrogate key's index goes. The key keeps its constraint name, which the gateway matches to tell
-- a redelivery from other errors. (This rebuilds the index under the migration's table lock.)
ALTER TABLE deliveries
    DROP CONSTRAINT deliveries_pkey,
    DROP CONSTRAINT deliveries_tracker_delivery_key_key,
    ADD CONSTRAINT deliveries_tracker_delivery_key_key PRIMARY KEY (tracker, delivery_key);

-- Running jobs are few (at most the workers' total concurrency), so expired leases are found
-- through `jobs_one_running_per_key` (same predicate). Without an index on `lease_expires_at`, a
-- heartbeat changes no indexed column and stays a HOT update.
DROP INDEX jobs_lease_idx;
