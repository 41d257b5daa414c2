#!/usr/bin/env bash
# Both code-graph edge benchmarks of issue #34 from one command, each with its same-run anchors:
#   1. Go dispatch: Relay beside golang.org/x/tools' callgraph (-algo=cha, -algo=vta, -algo=static),
#      scripts/bench-go-dispatch.sh (installs golang-go and golang-golang-x-tools when missing);
#   2. Python: Relay beside PyCG and Jarvis, scripts/bench-py-flow.sh (installs pycg and jarviscg
#      into virtual environments under target/ on first use).
# Environment variables are passed through (PACKAGES, BASELINE_BENCH_INDEX, ROUNDS,
# RELAY_BENCH_INDEX, BENCH_PY_FLOW_DIR); see each script's header.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "### Go dispatch (scripts/bench-go-dispatch.sh)"
scripts/bench-go-dispatch.sh
echo
echo "### Python value flow (scripts/bench-py-flow.sh)"
scripts/bench-py-flow.sh
