-- `jobs.runs`: how many times the queue claimed the job, never reset. `attempts` is not a run's
-- identity: the operator's `relay jobs retry` starts it from 0 again and a release at shutdown
-- gives one back, so two runs of one job could have the same attempt number. A run's tracker
-- writes are keyed by this number (`relay_actions::keys`), so what a later run decides never
-- takes the key of what an earlier run queued (issue #45: a retried dead job's reply was dropped
-- as a duplicate of the notice its last attempt had posted).
-- A constant default: no table rewrite. Jobs claimed before this migration count from 0.
ALTER TABLE jobs ADD COLUMN runs INT NOT NULL DEFAULT 0;
