-- EXPLAIN of the queries that run per scrape, per cycle or per retention batch, with and without
-- the indexes of migration 0016 (dropped inside a rolled-back transaction for "before").
--   psql "$DB" -f scripts/explain-retention.sql     (on a database seeded by simulate-month.sql)
\set ON_ERROR_STOP on
\echo '== /metrics queue depth: before (GROUP BY over the whole jobs table)'
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT s.status, count(j.id)
FROM unnest(ARRAY['queued', 'running', 'succeeded', 'failed', 'dead']) AS s(status)
LEFT JOIN jobs j ON j.status = s.status
GROUP BY s.status ORDER BY s.status;
\echo '== /metrics queue depth: after (live rows over partial indexes)'
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT 'queued'::text, (SELECT count(*) FROM jobs WHERE status = 'queued')
UNION ALL
SELECT 'running'::text, (SELECT count(*) FROM jobs WHERE status = 'running');

\echo '== budget check, outbox::for_issue: before'
BEGIN;
DROP INDEX outbox_issue_idx;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT * FROM outbox WHERE issue_id = (SELECT max(issue_id) FROM outbox) ORDER BY id;
ROLLBACK;
\echo '== budget check, outbox::for_issue: after'
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT * FROM outbox WHERE issue_id = (SELECT max(issue_id) FROM outbox) ORDER BY id;

\echo '== retention batch, delivery payloads: before'
BEGIN;
DROP INDEX deliveries_payload_age_idx;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT c.tracker, c.delivery_key FROM deliveries c
WHERE c.payload_pruned_at IS NULL AND c.received_at < now() - make_interval(days => 14)
  AND c.received_at >= '1970-01-01'
  AND (c.outcome = 'ignored' OR c.issue_id IS NULL
       OR c.id <= (SELECT i.handled_delivery_id FROM issues i WHERE i.id = c.issue_id))
ORDER BY c.received_at LIMIT 1000;
ROLLBACK;
\echo '== retention batch, delivery payloads: after'
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT c.tracker, c.delivery_key FROM deliveries c
WHERE c.payload_pruned_at IS NULL AND c.received_at < now() - make_interval(days => 14)
  AND c.received_at >= '1970-01-01'
  AND (c.outcome = 'ignored' OR c.issue_id IS NULL
       OR c.id <= (SELECT i.handled_delivery_id FROM issues i WHERE i.id = c.issue_id))
ORDER BY c.received_at LIMIT 1000;

\echo '== retention batch, finished jobs: before'
BEGIN;
DROP INDEX jobs_finished_idx;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT c.id FROM jobs c WHERE c.status IN ('succeeded', 'failed', 'dead')
  AND c.finished_at < now() - make_interval(days => 14) ORDER BY c.finished_at LIMIT 1000;
ROLLBACK;
\echo '== retention batch, finished jobs: after'
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT c.id FROM jobs c WHERE c.status IN ('succeeded', 'failed', 'dead')
  AND c.finished_at < now() - make_interval(days => 14) ORDER BY c.finished_at LIMIT 1000;

\echo '== retention batch, trace runs: before'
BEGIN;
DROP INDEX trace_runs_finished_idx;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT c.id FROM trace_runs c WHERE c.finished_at < now() - make_interval(days => 14)
ORDER BY c.finished_at LIMIT 20;
ROLLBACK;
\echo '== retention batch, trace runs: after'
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT c.id FROM trace_runs c WHERE c.finished_at < now() - make_interval(days => 14)
ORDER BY c.finished_at LIMIT 20;

\echo '== retention batch, trace runs left unfinished: before'
BEGIN;
DROP INDEX trace_runs_unfinished_idx;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT c.id FROM trace_runs c
WHERE c.finished_at IS NULL AND c.started_at < now() - make_interval(days => 14)
  AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = c.job_id AND j.status = 'running'
                                         AND j.attempts = c.attempt)
ORDER BY c.started_at LIMIT 20;
ROLLBACK;
\echo '== retention batch, trace runs left unfinished: after'
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT c.id FROM trace_runs c
WHERE c.finished_at IS NULL AND c.started_at < now() - make_interval(days => 14)
  AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = c.job_id AND j.status = 'running'
                                         AND j.attempts = c.attempt)
ORDER BY c.started_at LIMIT 20;

\echo '== retention batch, outbox: before'
BEGIN;
DROP INDEX outbox_done_idx;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT c.id FROM outbox c WHERE c.status IN ('sent', 'failed')
  AND c.updated_at < now() - make_interval(days => 14) AND c.idempotency_key NOT LIKE 'budget:%'
  AND c.idempotency_key !~ '^summary-i[0-9]+$' AND c.idempotency_key NOT LIKE 'ack:%'
  AND NOT (c.status = 'failed' AND c.failure_shown_at IS NULL)
  AND NOT EXISTS (SELECT 1 FROM specs s WHERE s.issue_id = c.issue_id AND s.status = 'draft'
                  AND c.idempotency_key LIKE 'i' || s.issue_id || '-j%-spec' || s.version || '-p%')
ORDER BY c.updated_at LIMIT 1000;
ROLLBACK;
\echo '== retention batch, outbox: after'
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT c.id FROM outbox c WHERE c.status IN ('sent', 'failed')
  AND c.updated_at < now() - make_interval(days => 14) AND c.idempotency_key NOT LIKE 'budget:%'
  AND c.idempotency_key !~ '^summary-i[0-9]+$' AND c.idempotency_key NOT LIKE 'ack:%'
  AND NOT (c.status = 'failed' AND c.failure_shown_at IS NULL)
  AND NOT EXISTS (SELECT 1 FROM specs s WHERE s.issue_id = c.issue_id AND s.status = 'draft'
                  AND c.idempotency_key LIKE 'i' || s.issue_id || '-j%-spec' || s.version || '-p%')
ORDER BY c.updated_at LIMIT 1000;

\echo '== daily token budget, today''s spend of a tracker (llm_usage_created_at_idx, unchanged)'
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT COALESCE(sum(u.prompt_tokens + u.completion_tokens), 0)::int8
FROM llm_usage u
WHERE u.created_at >= date_trunc('day', now())
  AND (SELECT i.tracker FROM issues i WHERE i.id = u.issue_id) = 'github';
