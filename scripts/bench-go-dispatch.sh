#!/usr/bin/env bash
# Go dynamic dispatch benchmark (not a timed test): Relay's call edges through interfaces and function
# values against golang.org/x/tools' `callgraph` (-algo=cha and -algo=vta) in the same run, on a set of
# standard-library packages with heavy interface use; Relay's static call edges against
# `callgraph -algo=static` (go/types resolution); and the Go standard library's index time against a
# baseline build.
#
#   scripts/bench-go-dispatch.sh
#   PACKAGES="go/ast go/types" scripts/bench-go-dispatch.sh            # another (held-out) set
#   BASELINE_BENCH_INDEX=/path/to/old/bench_index ROUNDS=5 scripts/bench-go-dispatch.sh
#
# Installs golang-go and golang-golang-x-tools (Debian) when `go` or `callgraph` is missing. Scoring
# is scripts/go-dispatch-score.py (its docstring says what an edge is). With BASELINE_BENCH_INDEX the
# baseline's graph is scored in the same table, and ROUNDS alternating rounds of the baseline and this
# build index the Go standard library: CPU time (user + sys) per round and the ratio of the means.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
target="${CARGO_TARGET_DIR:-target}"

if ! command -v go >/dev/null || ! command -v callgraph >/dev/null; then
    sudo_cmd=""
    [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
    $sudo_cmd apt-get install -y --no-install-recommends golang-go golang-golang-x-tools
fi

cargo build --release -p relay-codegraph --example bench_index
bin="$repo/$target/release/examples/bench_index"
go_root="${GO_ROOT:-$(go env GOROOT)/src}"
packages="${PACKAGES:-go/ast go/types go/parser go/printer net/http io encoding/json encoding/xml text/template html/template fmt bufio compress/flate archive/zip image/png}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "== packages: $packages"
echo "== Go: $(go version), root $go_root"

# The analysed set's files as built on this platform, relative to the indexed root.
# shellcheck disable=SC2086
(cd "$go_root" && go list -f '{{.ImportPath}} {{range .GoFiles}}{{$.Dir}}/{{.}} {{end}}{{range .CgoFiles}}{{$.Dir}}/{{.}} {{end}}' $packages) \
    | sed "s#$(readlink -f "$go_root")/##g; s#$go_root/##g" >"$work/files.txt"

format='{{.Caller}}	{{.Dynamic}}	{{.Filename}}	{{with .Callee.Object}}{{.FullName}}{{else}}{{.Callee}}{{end}}'
for algo in static cha vta; do
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    (cd "$go_root" && callgraph -algo=$algo -format "$format" $packages) >"$work/$algo.txt"
    end=$(date +%s.%N)
    printf "callgraph -algo=%-6s %8d edges, %.1f s\n" "$algo" "$(wc -l <"$work/$algo.txt")" "$(echo "$end - $start" | bc)"
done

# Relay indexes the program `callgraph` analyses: the packages and their dependencies, the files
# built on this platform (no tests, no other platforms' files), so values flow from the same code.
mkdir -p "$work/program"
printf 'module std\n\ngo 1.19\n' >"$work/program/go.mod"
# shellcheck disable=SC2086
(cd "$go_root" && go list -deps -f '{{.ImportPath}} {{.Dir}} {{range .GoFiles}}{{.}} {{end}}{{range .CgoFiles}}{{.}} {{end}}' $packages) |
    while read -r path dir files; do
        [[ -z "$files" || "$path" == *.* ]] && continue
        mkdir -p "$work/program/$path"
        for f in $files; do cp "$dir/$f" "$work/program/$path/"; done
    done
echo "== program: $(find "$work/program" -name '*.go' | wc -l) files"
relay_args=(--relay "new=$work/new.json")
"$bin" "$work/program" --json >"$work/new.json"
if [[ -n "${BASELINE_BENCH_INDEX:-}" ]]; then
    "$BASELINE_BENCH_INDEX" "$work/program" --json >"$work/base.json"
    relay_args=(--relay "baseline=$work/base.json" "${relay_args[@]}")
fi
python3 scripts/go-dispatch-score.py --files "$work/files.txt" --cha "$work/cha.txt" \
    --vta "$work/vta.txt" --static "$work/static.txt" "${relay_args[@]}" --show "${SHOW:-0}"

if [[ -n "${BASELINE_BENCH_INDEX:-}" ]]; then
    echo "== Go standard library index time against $BASELINE_BENCH_INDEX (${ROUNDS:-5} rounds, CPU time)"
    cpu() { /usr/bin/time -f "%U %S %M" "$@" 2>&1 >/dev/null | tail -1; }
    for round in $(seq 1 "${ROUNDS:-5}"); do
        read -r bu bs brss < <(cpu "$BASELINE_BENCH_INDEX" "$go_root")
        read -r nu ns nrss < <(cpu "$bin" "$go_root")
        echo "$round $bu $bs $brss $nu $ns $nrss"
    done | awk '{
        b = $2 + $3; n = $5 + $6; sb += b; sn += n
        if ($4 > rb) rb = $4; if ($7 > rn) rn = $7
        printf "round %d: baseline %.2f s, new %.2f s CPU; new/baseline %.3f\n", $1, b, n, n / b
    } END {
        printf "mean: new/baseline %.3f; peak RSS baseline %d MiB, new %d MiB\n", sn / sb, rb / 1024, rn / 1024
    }'
fi
