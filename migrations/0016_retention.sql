-- Retention (`[retention]`, `relay prune`) and the indexes of the queries that run per cycle or per
-- scrape.
--
-- A delivery's payload is dropped once it is handled and old; the row and its key (the dedupe
-- identity) stay. `payload_pruned_at` says when, so nobody mistakes the emptied body for what the
-- tracker sent.
ALTER TABLE deliveries ADD COLUMN payload_pruned_at TIMESTAMPTZ;
-- The pruning candidates: deliveries whose payload is still there, oldest first. Partial, so it holds
-- only the retention window's rows; one append to its right edge per delivery on the intake path.
CREATE INDEX deliveries_payload_age_idx ON deliveries (received_at) WHERE payload_pruned_at IS NULL;

-- Finished jobs by age (job_runs go with them through their foreign key).
CREATE INDEX jobs_finished_idx ON jobs (finished_at) WHERE status IN ('succeeded', 'failed', 'dead');

-- Finished trace runs by age (their events go with them through their foreign key).
CREATE INDEX trace_runs_finished_idx ON trace_runs (finished_at) WHERE finished_at IS NOT NULL;

-- Sent or failed outbox rows by age.
CREATE INDEX outbox_done_idx ON outbox (updated_at) WHERE status IN ('sent', 'failed');
-- The budget check reads an issue's writes before every cycle (`outbox::for_issue`); without this it
-- scanned the whole outbox.
CREATE INDEX outbox_issue_idx ON outbox (issue_id, id);
