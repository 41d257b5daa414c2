#!/usr/bin/env bash
# Intake benchmark: a release `relay serve` on a scratch database, signed GitHub issue_comment
# deliveries over K connections, against the ceiling of single-row INSERT; COMMIT into the same
# Postgres at the same concurrency (alternating rounds; the ratio is the median of the rounds).
#
#   scripts/bench-intake.sh [--count N] [--rounds R] [--concurrency K] [--issues I]
#   SWEEP_INTERVAL_SECS=1 scripts/bench-intake.sh …   # the workers' outbox sweeper every second
set -euo pipefail
cd "$(dirname "$0")/.."
BASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
DB_URL="${BASE_URL%/*}/relay_bench_intake"
PORT="${PORT:-18181}"
SECRET="bench-secret-$$"

# BIN=path/to/relay benchmarks another build (e.g. to compare two versions in one session).
if [ -z "${BIN:-}" ]; then
  cargo build --release -p relay >&2
  BIN="${CARGO_TARGET_DIR:-target}/release/relay"
fi
psql "$BASE_URL" -qc "DROP DATABASE IF EXISTS relay_bench_intake WITH (FORCE)" >/dev/null

CONFIG="$(mktemp)"
cat >"$CONFIG" <<TOML
[server]
listen = "127.0.0.1:$PORT"
[database]
url = "$DB_URL"
max_connections = 20
[log]
filter = "warn"
format = "json"
[repo]
data_dir = "$(mktemp -d)"
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

env -u DATABASE_URL "$BIN" --config "$CONFIG" "${ROLE:-serve}" 2>/tmp/relay-bench-serve.log &
PID=$!
trap 'kill $PID 2>/dev/null || true; rm -f "$CONFIG"' EXIT
for _ in $(seq 1 50); do curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.2; done

# A gateway without workers never drains the queue: do not wait for it.
drain=()
[ "${ROLE:-serve}" = gateway ] && drain=(--drain-timeout-secs 0)
"$BIN" bench-intake "${drain[@]}" --url "http://127.0.0.1:$PORT/webhooks/github" --secret "$SECRET" \
  --database-url "$DB_URL" --gateway-pid "$PID" "$@"
