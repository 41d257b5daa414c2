-- A simulated month of Relay traffic, for the retention figures (scripts/bench-retention.sh).
--   psql "$DB" -v run=NAME -v age_days=D -f scripts/simulate-month.sql
-- Everything happens over the 30 days that end `age_days` days ago (0: ending now):
-- 10,000 issues; 50,000 deliveries (40,000 accepted and handled, 10,000 ignored) with ~8 KiB
-- payloads of random text; 5,000 finished jobs, each with one attempt, a trace run of 60 events and 10 LLM calls;
-- 10,000 sent outbox writes; 10 repositories with 30 code-graph snapshots each (500 symbols and
-- 500 edges per snapshot). `run` keeps the keys of several seedings apart.
\set ON_ERROR_STOP on
BEGIN;
CREATE TEMP TABLE sim_clock AS
SELECT now() - make_interval(days => :age_days) AS month_end;

INSERT INTO issues (tracker, project_id, project_path, number, title, body, state, author, url,
                    updated_at, handled_delivery_id)
SELECT 'github', 'sim-' || :'run', 'sim/' || :'run', n, 'Issue ' || n, repeat('body ', 100), 'open',
       'alice', 'https://example.invalid/' || n, now(), 0
FROM generate_series(1, 10000) n;

CREATE TEMP TABLE sim_issues AS
SELECT id, number FROM issues WHERE project_id = 'sim-' || :'run';

INSERT INTO deliveries (tracker, event_type, action, delivery_key, received_at, outcome, reason,
                        issue_id, payload, actor, note_id)
SELECT 'github', 'issue_comment', 'created', 'sim-' || :'run' || '-' || n,
       (SELECT month_end FROM sim_clock) - make_interval(secs => (50000 - n) * 30 * 86400.0 / 50000),
       CASE WHEN n % 5 = 0 THEN 'ignored' ELSE 'accepted' END,
       CASE WHEN n % 5 = 0 THEN 'not_mentioned' ELSE 'mention' END,
       CASE WHEN n % 5 = 0 THEN NULL ELSE (SELECT id FROM sim_issues WHERE number = 1 + n % 10000) END,
       -- Random text: a real payload does not compress to nothing the way a repeated one does.
       jsonb_build_object('action', 'created', 'n', n,
                          'comment', jsonb_build_object('body',
                              (SELECT string_agg(md5(random()::text || n || g), ' ')
                               FROM generate_series(1, 240) g))),
       'alice', n::text
FROM generate_series(1, 50000) n;

-- Every accepted delivery was seen by a job.
UPDATE issues i SET handled_delivery_id = d.max_id
FROM (SELECT issue_id, max(id) AS max_id FROM deliveries
      WHERE delivery_key LIKE 'sim-' || :'run' || '-%' AND outcome = 'accepted' GROUP BY issue_id) d
WHERE i.id = d.issue_id;

CREATE TEMP TABLE sim_jobs AS
WITH inserted AS (
    INSERT INTO jobs (kind, payload, concurrency_key, status, attempts, max_attempts, created_at,
                      started_at, finished_at, updated_at)
    SELECT 'process_issue', jsonb_build_object('issue_id', s.id), NULL, 'succeeded', 1, 5, t, t, t, t
    FROM (SELECT n, (SELECT id FROM sim_issues WHERE number = n) AS id,
                 (SELECT month_end FROM sim_clock) - make_interval(secs => (5000 - n) * 30 * 86400.0 / 5000) AS t
          FROM generate_series(1, 5000) n) s
    RETURNING id, finished_at, (payload->>'issue_id')::bigint AS issue_id
)
SELECT * FROM inserted;

INSERT INTO job_runs (job_id, attempt, worker, outcome, detail, started_at, finished_at)
SELECT id, 1, 'sim', 'succeeded', '{}', finished_at, finished_at FROM sim_jobs;

CREATE TEMP TABLE sim_runs AS
WITH inserted AS (
    INSERT INTO trace_runs (job_id, issue_id, attempt, worker, started_at, finished_at, outcome)
    SELECT id, issue_id, 1, 'sim', finished_at, finished_at, 'succeeded' FROM sim_jobs
    RETURNING id, job_id, finished_at
)
SELECT * FROM inserted;

INSERT INTO trace_events (run_id, job_id, seq, at, type, agent, payload)
SELECT r.id, r.job_id, s, r.finished_at, 'tool_call', 'explore',
       jsonb_build_object('tool', 'grep', 'args', jsonb_build_object('pattern', 'Retries'),
                          'output', repeat('config.go:4: Retries int ', 10))
FROM sim_runs r, generate_series(0, 59) s;

INSERT INTO llm_usage (job_id, issue_id, role, provider, model, prompt_tokens, completion_tokens,
                       latency_ms, attempts, outcome, created_at)
SELECT j.id, j.issue_id, 'planner', 'openai', 'gpt-4o', 3000, 200, 900, 1, 'ok', j.finished_at
FROM sim_jobs j, generate_series(1, 10);

INSERT INTO outbox (idempotency_key, issue_id, job_id, kind, body, status, attempts, created_at,
                    updated_at, sent_at, note_id)
SELECT 'sim-' || :'run' || '-' || j.id || '-' || k, j.issue_id, j.id, 'comment',
       repeat('An answer with findings. ', 40), 'sent', 1, j.finished_at, j.finished_at,
       j.finished_at, j.id || '-' || k
FROM sim_jobs j, generate_series(1, 2) k;

CREATE TEMP TABLE sim_snapshots AS
WITH inserted AS (
    INSERT INTO codegraph_snapshots (repository, commit_sha, created_at, updated_at)
    SELECT 'sim-' || :'run' || '/repo' || r, md5(:'run' || r || '-' || c),
           (SELECT month_end FROM sim_clock) - make_interval(days => 30 - c),
           (SELECT month_end FROM sim_clock) - make_interval(days => 30 - c)
    FROM generate_series(1, 10) r, generate_series(1, 30) c
    RETURNING id
)
SELECT * FROM inserted;

INSERT INTO codegraph_symbols (snapshot_id, qname, name, kind, language, file, line, end_line,
                               signature)
SELECT s.id, 'pkg.mod.Function' || n, 'Function' || n, 'function', 'go', 'pkg/file' || n % 50 || '.go',
       n, n + 20, 'func Function' || n || '(ctx context.Context) error'
FROM sim_snapshots s, generate_series(1, 500) n;

INSERT INTO codegraph_edges (snapshot_id, kind, from_qname, to_qname, to_name, file, line, confidence)
SELECT s.id, 'calls', 'pkg.mod.Function' || n, 'pkg.mod.Function' || (n % 500 + 1),
       'Function' || (n % 500 + 1), 'pkg/file' || n % 50 || '.go', n, 'exact'
FROM sim_snapshots s, generate_series(1, 500) n;
COMMIT;
ANALYZE;
