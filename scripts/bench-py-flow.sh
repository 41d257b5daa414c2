#!/usr/bin/env bash
# Python call-graph benchmark (not a timed test): Relay beside PyCG and Jarvis, precision and
# recall per category, on
#   1. Relay's own feature programs (crates/relay-codegraph/tests/fixtures/pyflow), the held-out
#      categories (`held2_*`, issue #34; `held_*`, issue #28) and the whole suite;
#   2. PyCG's micro-benchmark (in the pycg 0.0.8 sdist);
#   3. Jarvis's micro-benchmark and ground truth (in the jarviscg sdist, evaluation/).
#
#   scripts/bench-py-flow.sh                                  # builds Relay's bench_index
#   RELAY_BENCH_INDEX=path BASELINE_BENCH_INDEX=old scripts/bench-py-flow.sh   # a "before" column
#
# PyCG and Jarvis are installed on first use into virtual environments under
# ${BENCH_PY_FLOW_DIR:-target/bench-py-flow} (PyPI: pycg 0.0.7 with setuptools < 70, which it
# imports pkg_resources from; pycg 0.0.8's wheel installs its package as `PyCG` and does not
# import on Linux; jarviscg 0.1.0rc7, a pre-release, run with `--precision`, its flow-sensitive
# mode). How edges are compared: scripts/bench-py-flow.py.
set -euo pipefail
cd "$(dirname "$0")/.."
work="${BENCH_PY_FLOW_DIR:-target/bench-py-flow}"
mkdir -p "$work"
python="${PYTHON:-python3}"

if [[ -z "${RELAY_BENCH_INDEX:-}" ]]; then
    cargo build --release -p relay-codegraph --example bench_index
    RELAY_BENCH_INDEX="${CARGO_TARGET_DIR:-target}/release/examples/bench_index"
fi

pycg_env="$work/pycg-venv"
if [[ ! -x "$pycg_env/bin/python" ]] || ! "$pycg_env/bin/python" -c "import pycg" 2>/dev/null; then
    "$python" -m venv "$pycg_env"
    "$pycg_env/bin/pip" install --quiet "pycg==0.0.7" "setuptools<70"
fi
jarvis_env="$work/jarvis-venv"
if [[ ! -x "$jarvis_env/bin/jarviscg" ]]; then
    "$python" -m venv "$jarvis_env"
    "$jarvis_env/bin/pip" install --quiet --pre "jarviscg==0.1.0rc7"
fi
# PyCG's micro-benchmark: in its source distribution (the 0.0.8 sdist; the wheels ship only the
# test drivers).
pycg_src="$work/pycg-0.0.8"
if [[ ! -d "$pycg_src/micro-benchmark/snippets" ]]; then
    "$pycg_env/bin/pip" download --quiet --no-deps --no-binary :all: "pycg==0.0.8" -d "$work"
    tar -xzf "$work/pycg-0.0.8.tar.gz" -C "$work" pycg-0.0.8/micro-benchmark/snippets
fi
pycg_bench="$pycg_src/micro-benchmark/snippets"
# Jarvis's micro-benchmark: in its source distribution.
jarvis_src="$work/jarviscg-0.1.0rc7"
if [[ ! -d "$jarvis_src/evaluation" ]]; then
    "$jarvis_env/bin/pip" download --quiet --no-deps --no-binary :all: --pre "jarviscg==0.1.0rc7" -d "$work"
    tar -xzf "$work/jarviscg-0.1.0rc7.tar.gz" -C "$work" jarviscg-0.1.0rc7/evaluation/dataset/micro_benchmark jarviscg-0.1.0rc7/evaluation/ground_truth/micro_benchmark
fi

fixtures=crates/relay-codegraph/tests/fixtures/pyflow
before=()
if [[ -n "${BASELINE_BENCH_INDEX:-}" ]]; then
    before=(--relay-before "$BASELINE_BENCH_INDEX")
fi
tools=(--relay "$RELAY_BENCH_INDEX" "${before[@]}" --pycg "$pycg_env/bin/python" --jarvis "$jarvis_env/bin/jarviscg")
flow_sensitive=held2_reassign,held2_object_attrs,held2_dict_overwrite,held2_default_args
"$python" scripts/bench-py-flow.py "${tools[@]}" --only-prefix held2_ --flow-sensitive "$flow_sensitive" \
    "held-out (issue #34)=$fixtures:relay"
"$python" scripts/bench-py-flow.py "${tools[@]}" --flow-sensitive held2_reassign,held2_object_attrs,held2_dict_overwrite,held2_default_args \
    "all feature programs=$fixtures:relay"
"$python" scripts/bench-py-flow.py "${tools[@]}" \
    "PyCG micro-benchmark=$pycg_bench:pycg"
"$python" scripts/bench-py-flow.py "${tools[@]}" --flow-sensitive new_ \
    "Jarvis micro-benchmark=$jarvis_src/evaluation:jarvis"
