#!/usr/bin/env bash
# Intake benchmark: a release `relay serve` on a scratch database, signed GitHub issue_comment
# deliveries over K connections, against the ceiling of single-row INSERT; COMMIT into the same
# Postgres at the same concurrency (alternating rounds; the ratio is the median of the rounds).
#
#   scripts/bench-intake.sh [--count N] [--rounds R] [--concurrency K] [--issues I]
#   SWEEP_INTERVAL_SECS=1 scripts/bench-intake.sh …   # the workers' outbox sweeper every second
#   ROLE=gateway scripts/bench-intake.sh …            # the gateway alone (no workers)
#   HOLD_SNAPSHOT_SECS=60 scripts/bench-intake.sh …   # measured twice: as is, then while a
#                                                     # reader of `jobs` holds a snapshot open
#                                                     # (REPEATABLE READ) for that long
set -euo pipefail
cd "$(dirname "$0")/.."
BASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
DB_URL="${BASE_URL%/*}/relay_bench_intake"
PORT="${PORT:-18181}"
SECRET="bench-intake-secret-$$"
HOLD="${HOLD_SNAPSHOT_SECS:-0}"

# BIN=path/to/relay benchmarks another build (e.g. to compare two versions in one session).
if [ -z "${BIN:-}" ]; then
  cargo build --release -p relay >&2
  BIN="${CARGO_TARGET_DIR:-target}/release/relay"
fi

CONFIG="$(mktemp)"
DATA="$(mktemp -d)"
PID=""
READER=""
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null || true
  [ -n "$READER" ] && kill "$READER" 2>/dev/null || true
  rm -rf "$CONFIG" "$DATA"
}
trap cleanup EXIT

# One measured run: a fresh database, a gateway, the load.
# $1: "snapshot" to hold a reader's snapshot open during the run.
run() {
  local mode="${1:-plain}"
  psql "$BASE_URL" -qc "DROP DATABASE IF EXISTS relay_bench_intake WITH (FORCE)" >/dev/null
  cat >"$CONFIG" <<TOML
[server]
listen = "127.0.0.1:$PORT"
admin_listen = "off"
[database]
url = "$DB_URL"
max_connections = 20
[log]
filter = "warn"
format = "json"
[repo]
data_dir = "$DATA"
[worker]
# SWEEP_INTERVAL_SECS=0 measures intake without the outbox sweeper (default: its default).
sweep_interval_secs = ${SWEEP_INTERVAL_SECS:-15}
[[trackers]]
name = "github"
provider = "github"
base_url = "https://api.github.com"
token = "unused"
webhook_secret = "$SECRET"
bot_username = "relay-bot"
TOML
  env -u DATABASE_URL "$BIN" --config "$CONFIG" "${ROLE:-serve}" 2>>/tmp/relay-bench-serve.log &
  PID=$!
  for _ in $(seq 1 50); do curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.2; done
  if [ "$mode" = snapshot ]; then
    # A long reader of `jobs`: its snapshot holds back every table's cleanup while it runs.
    psql "$DB_URL" -qc "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM jobs; SELECT pg_sleep($HOLD); COMMIT;" >/dev/null &
    READER=$!
    sleep 0.5
  fi
  # A gateway without workers never drains the queue: do not wait for it.
  local drain=()
  [ "${ROLE:-serve}" = gateway ] && drain=(--drain-timeout-secs 0)
  echo "== ${mode}"
  "$BIN" bench-intake "${drain[@]}" --url "http://127.0.0.1:$PORT/webhooks/github" --secret "$SECRET" \
    --database-url "$DB_URL" --gateway-pid "$PID" "${ARGS[@]}" | tee "$DATA/out"
  RATE="$(sed -n 's/^gateway: \([0-9]*\) accepted.*/\1/p' "$DATA/out")"
  if [ -n "$READER" ]; then
    if ! kill -0 "$READER" 2>/dev/null; then
      echo "warning: the reader's snapshot ended before the run did (raise HOLD_SNAPSHOT_SECS)"
    fi
    kill "$READER" 2>/dev/null || true
    wait "$READER" 2>/dev/null || true
    READER=""
  fi
  kill "$PID" 2>/dev/null || true
  wait "$PID" 2>/dev/null || true
  PID=""
}

ARGS=("$@")
run
if [ "$HOLD" -gt 0 ]; then
  plain="$RATE"
  run snapshot
  awk -v a="$plain" -v b="$RATE" 'BEGIN {
    printf "with a snapshot held open %d/s vs %d/s without: drop %.1f%%\n", b, a, (1 - b / a) * 100 }'
fi
