-- Retention of trace runs left unfinished (issue #33 §5): a run whose worker died keeps
-- `finished_at` NULL for good; the pruning pass takes those that started before the trace window
-- (and whose job is not running that attempt), oldest first. Partial: it holds only such runs.
CREATE INDEX trace_runs_unfinished_idx ON trace_runs (started_at) WHERE finished_at IS NULL;
