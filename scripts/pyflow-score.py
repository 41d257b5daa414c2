#!/usr/bin/env python3
"""Scores the Python call graph on the value-flow feature programs.

    scripts/pyflow-score.py BENCH_INDEX_BINARY [FIXTURES_DIR]

Each directory under FIXTURES_DIR (default crates/relay-codegraph/tests/fixtures/pyflow) is a
small program with `expected.txt`: one `caller -> callee` per line, the complete set of resolved
call edges (lines ending in `!` are edges that must be absent). The binary (`examples/bench_index`)
indexes each program with `--json`; precision and recall are computed over resolved `calls`
edges (`to` not null), per feature and in total (micro-averaged).
"""
import json
import os
import subprocess
import sys

binary = sys.argv[1]
root = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.path.dirname(__file__), "..", "crates", "relay-codegraph", "tests", "fixtures", "pyflow")
tp_all = fp_all = fn_all = 0
for feature in sorted(os.listdir(root)):
    d = os.path.join(root, feature)
    if not os.path.isdir(d):
        continue
    expected = set()
    for line in open(os.path.join(d, "expected.txt")):
        line = line.strip()
        if not line or line.endswith("!"):
            continue
        a, b = [x.strip() for x in line.split("->")]
        expected.add((a, b))
    out = subprocess.run([binary, d, "--json"], capture_output=True, text=True, check=True).stdout
    graph = json.loads(out[out.index("{"):])
    found = {(e["from"], e["to"]) for e in graph["edges"] if e["kind"] == "calls" and e["to"]}
    tp, fp, fn = len(found & expected), len(found - expected), len(expected - found)
    tp_all, fp_all, fn_all = tp_all + tp, fp_all + fp, fn_all + fn
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    print(f"{feature:16} precision {p:.2f} recall {r:.2f}  missing {sorted(expected - found)} extra {sorted(found - expected)}")
p = tp_all / (tp_all + fp_all) if tp_all + fp_all else 1.0
r = tp_all / (tp_all + fn_all) if tp_all + fn_all else 1.0
print(f"TOTAL            precision {p:.3f} recall {r:.3f}  (tp {tp_all}, fp {fp_all}, fn {fn_all})")
