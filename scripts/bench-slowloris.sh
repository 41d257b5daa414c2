#!/usr/bin/env bash
# Benchmark: slow-client attacks against a real `relay gateway` on 127.0.0.1, with the gateway's
# RSS sampled every second (from /proc) and probes from another address (`/healthz` and a signed
# webhook) once per second. Prints one block per attack: the RSS before (baseline, same run), the
# peak during the attack, the growth, and the attack tool's summary (bytes per second it sent,
# probes answered and unanswered).
#
# Attacks (crates/relay-gateway/examples/slowloris.rs):
#   slow-body  SOCKETS sockets over SOURCES loopback addresses, one body byte per second each
#   big-body   SOCKETS sockets over SOURCES addresses, each an unfinished ~9 MiB body
#   big-chunked  the same with chunked bodies of 960 KiB (under the 1 MiB limit), then nothing
#
# Not a timed test: run it by hand, e.g. to compare two builds of the binary:
#   scripts/bench-slowloris.sh                                 # target/debug/relay
#   RELAY_BIN=/tmp/relay-before scripts/bench-slowloris.sh     # another build
# Knobs: ATTACKS ("slow-body big-body big-chunked"), SECONDS_PER_ATTACK (30), SOCKETS (1100), SOURCES (4),
# MAX_CONNECTIONS (1024),
# EXTRA_CONFIG (TOML lines appended to [server]), DATABASE_URL (admin URL of the test Postgres).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
target_dir=${CARGO_TARGET_DIR:-$root/target}
relay_bin=${RELAY_BIN:-$target_dir/debug/relay}
seconds=${SECONDS_PER_ATTACK:-30}
sockets=${SOCKETS:-1100}
sources=${SOURCES:-4}
max_connections=${MAX_CONNECTIONS:-1024}
admin_url=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}
secret=bench-slowloris-secret

(cd "$root" && cargo build --quiet -p relay-gateway --example slowloris)
attack_bin=$target_dir/debug/examples/slowloris
[[ -x $relay_bin ]] || { echo "no relay binary at $relay_bin (cargo build -p relay)" >&2; exit 1; }

database=relay_bench_slowloris_$$
psql "$admin_url" -qc "CREATE DATABASE $database" >/dev/null
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/relay.toml" <<EOF
[server]
listen = "127.0.0.1:$port"
admin_listen = "off"
max_connections = $max_connections
${EXTRA_CONFIG:-}
[repo]
data_dir = "$work/data"
[[trackers]]
name = "github"
provider = "github"
base_url = "http://127.0.0.1:9"
token = "t"
webhook_secret = "$secret"
bot_username = "relay-bot"
EOF

DATABASE_URL=${admin_url%/*}/$database RUST_LOG=error "$relay_bin" --config "$work/relay.toml" gateway \
  >"$work/gateway.log" 2>&1 &
gateway=$!
cleanup() {
  kill "$gateway" 2>/dev/null || true
  wait "$gateway" 2>/dev/null || true
  psql "$admin_url" -qc "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

for _ in $(seq 1 300); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 0.2
done

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$gateway/status"; }

attack() {
  local mode=$1
  local baseline peak=0 sample
  # Warm up the paths the probes take, then take the baseline.
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null
  sleep 1
  baseline=$(rss_kib)
  "$attack_bin" --target "127.0.0.1:$port" --mode "$mode" --sockets "$sockets" \
    --sources "$sources" --seconds "$seconds" --secret "$secret" >"$work/$mode.out" &
  local attacker=$!
  while kill -0 "$attacker" 2>/dev/null; do
    sample=$(rss_kib)
    ((sample > peak)) && peak=$sample
    sleep 1
  done
  wait "$attacker"
  echo "== $mode: $sockets sockets over $sources addresses for ${seconds}s (max_connections=$max_connections)"
  echo "gateway RSS: baseline $((baseline / 1024)) MiB, peak $((peak / 1024)) MiB, growth $(((peak - baseline) / 1024)) MiB"
  cat "$work/$mode.out"
  # Let the gateway shed the attack before the next one.
  sleep 3
}

for mode in ${ATTACKS:-slow-body big-body big-chunked}; do
  attack "$mode"
done
