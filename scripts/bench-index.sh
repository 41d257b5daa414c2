#!/usr/bin/env bash
# Indexer benchmark (not a timed test): the Go standard library and the Python standard library,
# with universal-ctags on the same trees in the same run.
#
#   apt-get install -y golang-1.19-src universal-ctags time rsync
#   CARGO_TARGET_DIR=... scripts/bench-index.sh
#   BASELINE_BENCH_INDEX=/path/to/old/bench_index ROUNDS=6 scripts/bench-index.sh   # ratios to a baseline
#
# Reports files, lines, symbols, edges, wall time, lines/s and peak RSS of a full index (release
# build, all cores), the incremental re-index time of one changed file, the parse-only floor
# (`examples/bench_parse.rs`) and `ctags -R` wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
cargo build --release -p relay-codegraph --example bench_index --example bench_parse
bin="$target/release/examples/bench_index"
parse_bin="$target/release/examples/bench_parse"

go_root="${GO_ROOT:-/usr/share/go-1.19/src}"
py_root="${PY_ROOT:-$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')}"

run() {
    local name="$1" root="$2" changed="$3" lang="$4"
    shift 4
    echo "== $name: $root"
    # Warm the page cache first, so that no tool pays for reading the tree from disk.
    ctags -R --languages="$lang" -f /dev/null "$@" "$root"
    /usr/bin/time -v "$bin" "$root" "$changed" 2> >(grep -E "Maximum resident|Elapsed|User time|System time" >&2)
    # The floor: tree-sitter parsing alone of the same files, all cores.
    echo "parse only:  $("$parse_bin" "$root" | grep "wall time" | sed 's/wall time: *//')"
    local start end
    start=$(date +%s.%N)
    ctags -R --languages="$lang" -f /dev/null "$@" "$root"
    end=$(date +%s.%N)
    echo "ctags -R:    $(echo "$end - $start" | bc) s"
}

# Against a baseline build (BASELINE_BENCH_INDEX=path/to/an older bench_index): ROUNDS (default 5)
# alternating rounds of the baseline, this build and the parse-only floor on the Python standard
# library, each one's CPU time (user + sys) and peak RSS from `time`, and the ratios per round and
# of the means. CPU time rather than wall time: it does not depend on how many cores are free.
if [[ -n "${BASELINE_BENCH_INDEX:-}" ]]; then
    echo "== Python standard library against $BASELINE_BENCH_INDEX (${ROUNDS:-5} rounds)"
    ctags -R --languages=Python --exclude=site-packages --exclude=__pycache__ -f /dev/null "$py_root"
    cpu() { /usr/bin/time -f "%U %S %M" "$@" 2>&1 >/dev/null | tail -1; }
    for round in $(seq 1 "${ROUNDS:-5}"); do
        read -r bu bs brss < <(cpu "$BASELINE_BENCH_INDEX" "$py_root")
        read -r nu ns nrss < <(cpu "$bin" "$py_root")
        read -r pu ps prss < <(cpu "$parse_bin" "$py_root")
        echo "$round $bu $bs $brss $nu $ns $nrss $pu $ps $prss"
    done | awk '{
        b = $2 + $3; n = $5 + $6; p = $8 + $9; sb += b; sn += n; sp += p
        if ($4 > rb) rb = $4; if ($7 > rn) rn = $7
        printf "round %d: baseline %.2f s, new %.2f s, parse %.2f s CPU; new/baseline %.3f, new/parse %.3f\n", $1, b, n, p, n / b, n / p
    } END {
        printf "mean: new/baseline %.3f, new/parse %.3f, baseline/parse %.3f; peak RSS baseline %d MiB, new %d MiB\n", sn / sb, sn / sp, sb / sp, rb / 1024, rn / 1024
    }'
fi

run "Go standard library" "$go_root" "net/http/server.go" Go --exclude=testdata
run "Python standard library" "$py_root" "json/decoder.py" Python \
    --exclude=site-packages --exclude=__pycache__ --exclude=node_modules

# Incremental updates after real edits (median of 2N updates: N edit/restore pairs). The edits are
# written, so they run on scratch copies of the trees.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cp -r "$go_root" "$scratch/go"
rsync -a --exclude site-packages --exclude __pycache__ "$py_root/" "$scratch/py/"
edit() {
    local name="$1" root="$2" file="$3" replace="$4" repeat="$5"
    echo "== $name"
    "$bin" "$root" "$file" "--replace=$replace" "--repeat=$repeat" | grep incremental
}
edit "Go body edit (a call added in conn.serve; later lines shift)" "$scratch/go" net/http/server.go \
    'func (c *conn) serve(ctx context.Context) {\n=>func (c *conn) serve(ctx context.Context) {\n\tc.setState(c.rwc, StateActive, runHooks)\n' 5
edit "Go signature edit (Server.Serve gains a parameter)" "$scratch/go" net/http/server.go \
    'func (srv *Server) Serve(l net.Listener) error {=>func (srv *Server) Serve(l net.Listener, bench int) error {' 3
edit "Go method added (Server gains String(), so it implements fmt.Stringer)" "$scratch/go" net/http/server.go \
    'func (srv *Server) Serve(l net.Listener) error {=>func (srv *Server) String() string { return "" }\n\nfunc (srv *Server) Serve(l net.Listener) error {' 3
edit "Python body edit (a call added in JSONDecoder.decode)" "$scratch/py" json/decoder.py \
    '        obj, end = self.raw_decode(s, idx=_w(s, 0).end())\n=>        obj, end = self.raw_decode(s, idx=_w(s, 0).end())\n        self.scan_once(s, 0)\n' 5
edit "Python signature edit (a parameter of JSONDecoder.decode renamed)" "$scratch/py" json/decoder.py \
    '    def decode(self, s, _w=WHITESPACE.match):=>    def decode(self, s, w=WHITESPACE.match):' 3
edit "Python function added (a new module-level function in json/decoder.py)" "$scratch/py" json/decoder.py \
    'class JSONDecoder(object):=>def scan_helper(s):\n    return s\n\n\nclass JSONDecoder(object):' 3
