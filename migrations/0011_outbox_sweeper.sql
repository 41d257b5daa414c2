-- The outbox sweeper (issue #22 §1): every worker looks, once per tick and in one statement, for
-- issues with a pending write that is due and no queued or running job, and queues a drain job for
-- them. This index makes that look a scan of the due pending writes only (sent and failed rows,
-- the vast majority, are not in it).
CREATE INDEX outbox_due_idx ON outbox (next_attempt_at, issue_id) WHERE status = 'pending';

-- A write refused for good (a 4xx): whether the planner has been told about it yet. The next
-- cycle's context lists the issue's refused writes not yet shown, then marks them shown.
ALTER TABLE outbox ADD COLUMN failure_shown_at TIMESTAMPTZ;
