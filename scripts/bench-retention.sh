#!/usr/bin/env bash
# Retention figures: table sizes after a simulated month (scripts/simulate-month.sql) with
# retention off, with the defaults, and with every period at 7 days; then webhook intake
# throughput of a release gateway while `relay prune` works through a month of old rows, against
# rounds without pruning, alternating in the same run.
#
#   scripts/bench-retention.sh [sizes|intake|all] [--count N] [--rounds R]
set -euo pipefail
cd "$(dirname "$0")/.."
WHAT="${1:-all}"
[ $# -gt 0 ] && shift
COUNT=3000
ROUNDS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --count) COUNT="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
BASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
SERVER="${BASE_URL%/*}"
if [ -z "${BIN:-}" ]; then
  cargo build --release -p relay >&2
  BIN="${CARGO_TARGET_DIR:-target}/release/relay"
fi

config() { # database-name [retention days]
  local file
  file="$(mktemp)"
  {
    printf '[server]\nlisten = "127.0.0.1:%s"\nadmin_listen = "off"\n' "${PORT:-18282}"
    printf '[database]\nurl = "%s/%s"\nmax_connections = 20\n' "$SERVER" "$1"
    printf '[log]\nfilter = "warn"\nformat = "json"\n'
    printf '[repo]\ndata_dir = "%s"\n' "$(mktemp -d)"
    if [ -n "${2:-}" ]; then
      printf '[retention]\ndelivery_payload_days = %s\ntrace_days = %s\nfinished_job_days = %s\noutbox_days = %s\n' "$2" "$2" "$2" "$2"
    fi
    printf '[[trackers]]\nname = "github"\nprovider = "github"\nbase_url = "https://api.github.com"\n'
    printf 'token = "unused"\nwebhook_secret = "bench-retention-secret"\nbot_username = "relay-bot"\n'
  } >"$file"
  echo "$file"
}

fresh_db() {
  psql "$BASE_URL" -qc "DROP DATABASE IF EXISTS $1 WITH (FORCE)" >/dev/null
  env -u DATABASE_URL "$BIN" --config "$(config "$1")" migrate >/dev/null
}

sizes() {
  fresh_db relay_month_off
  psql "$SERVER/relay_month_off" -q -v run=m -v age_days=0 -f scripts/simulate-month.sql >/dev/null
  for variant in defaults d7; do
    psql "$BASE_URL" -qc "DROP DATABASE IF EXISTS relay_month_$variant WITH (FORCE)" >/dev/null
    psql "$BASE_URL" -qc "CREATE DATABASE relay_month_$variant TEMPLATE relay_month_off" >/dev/null
  done
  echo "== relay prune (defaults)"
  env -u DATABASE_URL "$BIN" --config "$(config relay_month_defaults)" prune
  echo "== relay prune (every period 7 days)"
  env -u DATABASE_URL "$BIN" --config "$(config relay_month_d7 7)" prune
  printf '%-22s %12s %12s %12s\n' table off defaults 7-days
  for variant in off defaults d7; do
    psql "$SERVER/relay_month_$variant" -qc "VACUUM FULL" >/dev/null
  done
  for table in deliveries jobs job_runs trace_runs trace_events outbox llm_usage codegraph_snapshots codegraph_symbols codegraph_edges TOTAL; do
    row=()
    for variant in off defaults d7; do
      if [ "$table" = TOTAL ]; then
        q="SELECT pg_database_size(current_database())"
      else
        q="SELECT pg_total_relation_size('$table')"
      fi
      row+=("$(psql "$SERVER/relay_month_$variant" -Atc "SELECT pg_size_pretty(($q)::bigint)")")
    done
    printf '%-22s %12s %12s %12s\n' "$table" "${row[@]}"
  done
}

intake() {
  local db=relay_bench_prune
  fresh_db $db
  local cfg
  cfg="$(config $db 14)"
  env -u DATABASE_URL "$BIN" --config "$cfg" gateway 2>/tmp/relay-bench-prune-gateway.log &
  GATEWAY_PID=$!
  trap 'kill $GATEWAY_PID 2>/dev/null || true' EXIT
  for _ in $(seq 1 50); do curl -fs "http://127.0.0.1:${PORT:-18282}/readyz" >/dev/null && break; sleep 0.2; done
  for round in $(seq 1 "$ROUNDS"); do
    # A month of rows old enough to prune, in both conditions (same database state).
    psql "$SERVER/$db" -q -v run="r$round" -v age_days=40 -f scripts/simulate-month.sql >/dev/null
    echo "== round $round: intake without pruning"
    "$BIN" bench-intake --drain-timeout-secs 0 --rounds 1 --count "$COUNT" \
      --url "http://127.0.0.1:${PORT:-18282}/webhooks/github" --secret bench-retention-secret \
      --database-url "$SERVER/$db" | grep -E '^round'
    echo "== round $round: intake while relay prune runs"
    local started=$SECONDS
    env -u DATABASE_URL "$BIN" --config "$cfg" prune >/tmp/relay-bench-prune.out 2>&1 &
    local prune=$!
    "$BIN" bench-intake --drain-timeout-secs 0 --rounds 1 --count "$COUNT" \
      --url "http://127.0.0.1:${PORT:-18282}/webhooks/github" --secret bench-retention-secret \
      --database-url "$SERVER/$db" | grep -E '^round'
    local bench_done=$((SECONDS - started))
    if kill -0 $prune 2>/dev/null; then
      echo "   (prune still running when the intake round ended after ${bench_done}s)"
    else
      echo "   (prune ended before the intake round did: partial overlap)"
    fi
    wait $prune
    echo "   prune took $((SECONDS - started))s:"; sed 's/^/   /' /tmp/relay-bench-prune.out
  done
}

case "$WHAT" in
  sizes) sizes ;;
  intake) intake ;;
  all) sizes; intake ;;
  *) echo "usage: $0 [sizes|intake|all]" >&2; exit 2 ;;
esac
