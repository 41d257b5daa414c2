-- Operator commands (`relay jobs retry|discard`, `relay writes retry`): what an operator did, to
-- what, and what came of it. Each action is also written to the affected job's run trace.
CREATE TABLE operator_actions (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- Who ran the command (the OS user, as the CLI saw it).
    actor       TEXT        NOT NULL,
    -- 'job_retry', 'job_discard', 'write_retry'.
    action      TEXT        NOT NULL,
    -- The job id or outbox row id acted on.
    target_id   BIGINT      NOT NULL,
    -- What happened: 'done', or why nothing was done ('not_dead', 'not_failed', 'superseded', 'not_found').
    outcome     TEXT        NOT NULL,
    detail      JSONB       NOT NULL DEFAULT '{}'
);
CREATE INDEX operator_actions_target_idx ON operator_actions (action, target_id);

-- A dead job an operator has looked at and let go: it stays for the record (retention deletes it
-- with the other finished jobs) but no longer counts as dead.
ALTER TABLE jobs DROP CONSTRAINT jobs_status_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_status_check
    CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'dead', 'discarded'));
-- Retention deletes discarded jobs with the other finished ones, through the same index.
DROP INDEX jobs_finished_idx;
CREATE INDEX jobs_finished_idx ON jobs (finished_at)
    WHERE status IN ('succeeded', 'failed', 'dead', 'discarded');
