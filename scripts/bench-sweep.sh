#!/usr/bin/env bash
# The outbox sweeper's cost, against intake's unit of work, in the same run: pgbench runs the
# sweeper's one statement (`relay_store::outbox::sweep`, copied below; inside a transaction that is
# rolled back, so every run sees the same outbox) and a single-row INSERT; COMMIT, alternating.
# The outbox holds PENDING due writes over ISSUES issues and SENT delivered ones.
#
#   scripts/bench-sweep.sh [PENDING] [ISSUES] [SENT]     (defaults 10000 100 100000)
#   BIN=path/to/relay (default target/debug/relay; only `relay migrate` is used)
set -euo pipefail
cd "$(dirname "$0")/.."
PENDING="${1:-10000}"; ISSUES="${2:-100}"; SENT="${3:-100000}"
BASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
DB_URL="${BASE_URL%/*}/relay_bench_sweep"
BIN="${BIN:-target/debug/relay}"
PGBENCH="$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench | tail -1)"
ROUNDS=3; SECS=10

psql "$BASE_URL" -qc "DROP DATABASE IF EXISTS relay_bench_sweep WITH (FORCE)" >/dev/null 2>&1
psql "$BASE_URL" -qc "CREATE DATABASE relay_bench_sweep" >/dev/null
trap 'psql "$BASE_URL" -qc "DROP DATABASE IF EXISTS relay_bench_sweep WITH (FORCE)" >/dev/null' EXIT
RELAY__DATABASE__URL="$DB_URL" "$BIN" migrate >/dev/null
psql "$DB_URL" -v ON_ERROR_STOP=1 -q <<SQL
INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
SELECT 'github', '1', 'o/r', n, 't', 'open', 'a', 'u', now() FROM generate_series(1, $ISSUES) n;
INSERT INTO outbox (idempotency_key, issue_id, kind, body, status, sent_at)
SELECT 'sent-' || n, 1 + n % $ISSUES, 'comment', 'b', 'sent', now() FROM generate_series(1, $SENT) n;
INSERT INTO outbox (idempotency_key, issue_id, kind, body)
SELECT 'pending-' || n, 1 + n % $ISSUES, 'comment', 'b' FROM generate_series(1, $PENDING) n;
CREATE TABLE bench_insert (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body TEXT);
ANALYZE;
SQL
work="$(mktemp -d)"
cat >"$work/sweep.sql" <<'SQL'
BEGIN;
WITH due AS (
     SELECT DISTINCT o.issue_id FROM outbox o
     WHERE o.status = 'pending' AND o.next_attempt_at <= now()
       AND (ARRAY['github']::text[] IS NULL
            OR EXISTS (SELECT 1 FROM issues i WHERE i.id = o.issue_id AND i.tracker = ANY(ARRAY['github'])))
     LIMIT 100)
 INSERT INTO jobs (kind, payload, concurrency_key, max_attempts)
 SELECT 'process_issue', jsonb_build_object('issue_id', due.issue_id), 'issue:' || due.issue_id, 5
 FROM due
 WHERE NOT EXISTS (SELECT 1 FROM jobs q
                   WHERE q.concurrency_key = 'issue:' || due.issue_id AND q.status = 'queued')
   AND NOT EXISTS (SELECT 1 FROM jobs r
                   WHERE r.concurrency_key = 'issue:' || due.issue_id AND r.status = 'running')
 ON CONFLICT (concurrency_key) WHERE status = 'queued' DO NOTHING
 RETURNING (payload->>'issue_id')::bigint;
ROLLBACK;
SQL
echo "INSERT INTO bench_insert (body) VALUES ('delivery');" >"$work/insert.sql"
tps() { "$PGBENCH" -n -T "$SECS" -c 1 -f "$1" "$DB_URL" 2>/dev/null | awk '/^tps/ {print $3}'; }
for round in $(seq 1 "$ROUNDS"); do
  s="$(tps "$work/sweep.sql")"; i="$(tps "$work/insert.sql")"
  echo "round $round: sweep $s/s, insert $i/s, one sweep = $(awk -v s="$s" -v i="$i" 'BEGIN {printf "%.2f", i / s}') inserts"
done
rm -rf "$work"
echo "(the sweeper runs one statement per worker every [worker] sweep_interval_secs, default 15 s)"
