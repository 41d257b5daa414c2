#!/usr/bin/env bash
# Benchmark: Relay's `grep` tool (all output caps off) against ripgrep on two large real corpora —
# the Python standard library of the machine's python3 and the Go 1.19 standard library from
# Debian's golang-1.19-src — for a literal, a regex and a case-insensitive pattern.
#
# Both sides run as one process per search with the full output sent to /dev/null, with the same
# filters: hidden files included, .gitignore honoured without a Git repository, the user's global
# excludes ignored, and vendor/, node_modules/ and .git/ skipped (Relay's rules). The script
# asserts equal match counts (matching lines) and prints the median wall time of $RUNS runs
# (default 5, after one warm-up run each) and the ratio relay/rg.
#
# Requirements: apt-get install ripgrep golang-1.19-src. Not a timed test: run it by hand.
#   scripts/bench-grep.sh            # uses $CARGO_TARGET_DIR or ./target
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-5}
target_dir=${CARGO_TARGET_DIR:-$root/target}

command -v rg >/dev/null || { echo "ripgrep not found: apt-get install ripgrep" >&2; exit 1; }
py_stdlib=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
go_src=${GO_SRC:-}
if [[ -z $go_src ]]; then
  for candidate in /usr/share/go-1.19/src /usr/lib/go-1.19/src; do
    [[ -d $candidate ]] && { go_src=$candidate; break; }
  done
fi
[[ -d ${go_src:-/nonexistent} ]] || { echo "Go sources not found: apt-get install golang-1.19-src" >&2; exit 1; }

(cd "$root" && cargo build --quiet --release -p relay-tools --example bench_grep)
relay_bin=$target_dir/release/examples/bench_grep

rg_flags=(--no-config --hidden --no-require-git --no-ignore-global
  -g '!vendor/' -g '!node_modules/' -g '!.git/'
  --line-number --with-filename --no-heading --color never)

now_ns() { date +%s%N; }

# median of the arguments (integers)
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }

# bench <label> <dir> <pattern> <relay flags...> -- <rg flags...>
bench() {
  local label=$1 dir=$2 pattern=$3; shift 3
  local relay_flags=() rg_extra=()
  while [[ $# -gt 0 && $1 != -- ]]; do relay_flags+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift
  rg_extra=("$@")

  local relay_count rg_count
  relay_count=$("$relay_bin" "$dir" "$pattern" "${relay_flags[@]}" 2>&1 >/dev/null | sed -n 's/^matches=\([0-9]*\).*/\1/p')
  rg_count=$(rg "${rg_flags[@]}" "${rg_extra[@]}" --count -e "$pattern" "$dir" | awk -F: '{s+=$NF} END {print s+0}')
  if [[ $relay_count != "$rg_count" ]]; then
    echo "MISMATCH $label: relay=$relay_count rg=$rg_count" >&2
    exit 1
  fi

  local relay_times=() rg_times=() start
  "$relay_bin" "$dir" "$pattern" "${relay_flags[@]}" >/dev/null 2>&1
  rg "${rg_flags[@]}" "${rg_extra[@]}" -e "$pattern" "$dir" >/dev/null || true
  for ((i = 0; i < runs; i++)); do
    start=$(now_ns); "$relay_bin" "$dir" "$pattern" "${relay_flags[@]}" >/dev/null 2>&1
    relay_times+=($(( ($(now_ns) - start) / 1000000 )))
    start=$(now_ns); rg "${rg_flags[@]}" "${rg_extra[@]}" -e "$pattern" "$dir" >/dev/null || true
    rg_times+=($(( ($(now_ns) - start) / 1000000 )))
  done
  local relay_ms rg_ms
  relay_ms=$(median "${relay_times[@]}")
  rg_ms=$(median "${rg_times[@]}")
  printf '%-22s %-28s %9s %9s %9s %7s\n' "$label" "$pattern" "$relay_count" "${relay_ms}ms" "${rg_ms}ms" \
    "$(awk -v a="$relay_ms" -v b="$rg_ms" 'BEGIN {printf "%.2fx", (b > 0) ? a / b : 0}')"
}

rg_version=$(rg --version)
echo "${rg_version%%$'\n'*}; cores: $(nproc); runs: $runs (median)"
echo "python stdlib: $py_stdlib"
echo "go stdlib:     $go_src"
printf '%-22s %-28s %9s %9s %9s %7s\n' corpus pattern matches relay rg ratio
bench "python literal" "$py_stdlib" "return None" --literal -- --fixed-strings
bench "python regex" "$py_stdlib" 'def \w+_\w+\(self' --
bench "python ignore-case" "$py_stdlib" "valueerror" --ignore-case -- --ignore-case
bench "go literal" "$go_src" "err != nil" --literal -- --fixed-strings
bench "go regex" "$go_src" 'func \(\w+ \*?\w+\) [A-Z]\w*\(' --
bench "go ignore-case" "$go_src" "buffer" --ignore-case -- --ignore-case
