#!/usr/bin/env bash
# Peak RSS of indexing large generated files (not a timed test): a repository of eight Go files
# just under the 4 MiB per-file cap, indexed at 2 and at 16 threads, with the parse memory budget
# (`[codegraph.index] parse_memory_mb`, default 512) and without it (`--parse-memory-mb=0`, how
# the indexer parsed before the budget: one file per thread).
#
#   CARGO_TARGET_DIR=... scripts/bench-parse-memory.sh
#   BASELINE_BENCH_INDEX=/path/to/old/bench_index scripts/bench-parse-memory.sh   # also an older build (all cores)
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
cargo build --release -p relay-codegraph --example bench_index
bin="$target/release/examples/bench_index"

repo="$(mktemp -d)"
trap 'rm -rf "$repo"' EXIT
echo "module example.com/gen" > "$repo/go.mod"
for n in 0 1 2 3 4 5 6 7; do
    mkdir -p "$repo/p$n"
    python3 - "$repo/p$n/gen.go" "$n" <<'PY'
import sys
path, n = sys.argv[1], sys.argv[2]
cap = 4 * 1024 * 1024 - 4096
out = [f"package p{n}\n\ntype T struct{{ A, B int }}\n\n"]
size, i = len(out[0]), 0
while True:
    prev = max(i - 1, 0)
    line = (f"func F{i}(x int) int {{ y := F{prev}(x) + {i}; t := T{{A: x, B: y}}; "
            f"s := []int{{t.A, t.B}}; return len(s) + y }}\n")
    if size + len(line) > cap:
        break
    out.append(line)
    size += len(line)
    i += 1
open(path, "w").write("".join(out))
PY
done
echo "repository: $(du -sh "$repo" | cut -f1), files of $(stat -c %s "$repo/p0/gen.go") bytes"

peak() { /usr/bin/time -f "%M" "$@" 2>&1 >/dev/null | tail -1; }
for threads in 2 16; do
    for budget in 512 0; do
        kib=$(peak "$bin" "$repo" "--threads=$threads" "--parse-memory-mb=$budget")
        echo "threads $threads, parse_memory_mb $budget: peak RSS $((kib / 1024)) MiB"
    done
done
if [[ -n "${BASELINE_BENCH_INDEX:-}" ]]; then
    kib=$(peak "$BASELINE_BENCH_INDEX" "$repo")
    echo "baseline $BASELINE_BENCH_INDEX (all cores): peak RSS $((kib / 1024)) MiB"
fi
