#!/usr/bin/env python3
"""Scores Relay's Python call graph beside PyCG and Jarvis on small benchmark programs.

    scripts/bench-py-flow.py --relay BENCH_INDEX [--relay-before OLD_BENCH_INDEX]
        [--pycg PYTHON] [--jarvis JARVISCG] SUITE=DIR[:KIND] ...

A suite is a directory of categories. KIND says where each program and its truth are:
  relay   DIR/<category>/ is one program with expected.txt (`caller -> callee`, `!` = absent);
  pycg    DIR/<group>/<name>/ holds main.py and callgraph.json (PyCG's micro-benchmark);
  jarvis  DIR/dataset/micro_benchmark/<group>/<name>/ holds the program and
          DIR/ground_truth/micro_benchmark/<group>/<name>/callgraph.json its truth (Jarvis's).

How edges are compared (the same for every tool and for the truth):
  - an edge is (caller, callee), qnames as Relay writes them: dotted module path from the
    program's root, then the nested names (PyCG and Jarvis write the same form);
  - calls of builtins (`<builtin>.…`) are dropped: Relay does not make them edges;
  - edges to a class are dropped (Relay adds `C` beside `C.__init__` for `C()`; the others do
    not): the classes are the program's class symbols (Relay's index of it) and the callees
    the truth or a tool names as `<module>.<Class>` without an `__init__`;
  - lambdas are renamed to PyCG's form, `<parent>.<lambdaN>` numbered per parent in source
    order (Relay writes `<parent>.<lambda@LINE:COL>`);
  - only resolved edges count (Relay's `to: null` edges are not edges).
Precision = |found ∩ truth| / |found|, recall = |found ∩ truth| / |truth|, micro-averaged per
category (the first path component) and over the suite. A tool that fails on a program (exit
status, time-out, bad output) scores no edges there, and the failure is counted.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

TIMEOUT = 120


def relay_graph(binary, program):
    out = subprocess.run([binary, program, "--json"], capture_output=True, text=True,
                         check=True, timeout=TIMEOUT).stdout
    return json.loads(out[out.index("{"):])


def lambda_names(graph):
    """Relay's lambda qnames → PyCG's `<parent>.<lambdaN>` (per parent, in source order)."""
    by_parent = {}
    for s in graph["symbols"]:
        m = re.fullmatch(r"<lambda@(\d+):(\d+)>", s["name"])
        if m:
            by_parent.setdefault(s.get("parent", ""), []).append(
                ((int(m.group(1)), int(m.group(2))), s["qname"]))
    rename = {}
    for parent, items in by_parent.items():
        for i, (_, q) in enumerate(sorted(items), 1):
            rename[q] = f"{parent}.<lambda{i}>"
    return rename


class Program:
    def __init__(self, binary, root):
        self.root = root
        self.graph = relay_graph(binary, root)
        self.classes = {s["qname"] for s in self.graph["symbols"] if s["kind"] == "class"}
        self.rename = lambda_names(self.graph)

    def norm(self, q):
        for old, new in self.rename.items():
            if q == old or q.startswith(old + "."):
                q = new + q[len(old):]
        return q

    def keep(self, caller, callee):
        if callee.startswith("<builtin>") or caller.startswith("<builtin>"):
            return False
        return callee not in self.classes

    def edges(self, pairs):
        out = set()
        for a, b in pairs:
            a, b = self.norm(a), self.norm(b)
            if self.keep(a, b):
                out.add((a, b))
        return out

    def relay_edges(self, graph=None):
        graph = graph or self.graph
        return self.edges((e["from"], e["to"]) for e in graph["edges"]
                          if e["kind"] == "calls" and e["to"])


def from_callgraph_json(path):
    with open(path) as f:
        cg = json.load(f)
    return [(a, b) for a, bs in cg.items() for b in bs]


def run_pycg(python, root, entries):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([python, "-m", "pycg", "--package", root, *entries, "-o", out.name],
                       capture_output=True, check=True, timeout=TIMEOUT, cwd=root)
        return from_callgraph_json(out.name)


def run_jarvis(jarvis, root, entries):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([jarvis, *entries, "--precision", "--package", root, "-o", out.name],
                       capture_output=True, check=True, timeout=TIMEOUT, cwd=root)
        return from_callgraph_json(out.name)


def programs(kind, base):
    """(category, program dir, entry files, truth pairs or expected.txt path)."""
    if kind == "relay":
        for cat in sorted(os.listdir(base)):
            d = os.path.join(base, cat)
            if os.path.isdir(d):
                files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".py"))
                yield cat, d, files, ("expected", os.path.join(d, "expected.txt"))
    elif kind == "pycg":
        for group in sorted(os.listdir(base)):
            for name in sorted(os.listdir(os.path.join(base, group))):
                d = os.path.join(base, group, name)
                if os.path.isfile(os.path.join(d, "callgraph.json")):
                    yield group, d, [os.path.join(d, "main.py")], (
                        "json", os.path.join(d, "callgraph.json"))
    elif kind == "jarvis":
        data = os.path.join(base, "dataset", "micro_benchmark")
        truth = os.path.join(base, "ground_truth", "micro_benchmark")
        for group in sorted(os.listdir(data)):
            for name in sorted(os.listdir(os.path.join(data, group))):
                d = os.path.join(data, group, name)
                t = os.path.join(truth, group, name, "callgraph.json")
                if os.path.isfile(t) and os.path.isfile(os.path.join(d, "main.py")):
                    yield group, d, [os.path.join(d, "main.py")], ("json", t)


def truth_edges(program, truth):
    kind, path = truth
    if kind == "json":
        return program.edges(from_callgraph_json(path))
    pairs = []
    for line in open(path):
        line = line.strip()
        if line and not line.endswith("!"):
            a, b = [x.strip() for x in line.split("->")]
            pairs.append((a, b))
    return program.edges(pairs)


def score(tp, fp, fn):
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return p, r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relay", required=True)
    ap.add_argument("--relay-before")
    ap.add_argument("--pycg")
    ap.add_argument("--jarvis")
    ap.add_argument("--flow-sensitive", default="",
                    help="comma-separated categories that also make the flow-sensitive row")
    ap.add_argument("--only-prefix", default="",
                    help="score only categories with this prefix (relay suites)")
    ap.add_argument("suites", nargs="+")
    args = ap.parse_args()
    flow_cats = {c for c in args.flow_sensitive.split(",") if c}
    tools = [("Relay", "relay")]
    if args.relay_before:
        tools.insert(0, ("Relay before", "before"))
    if args.pycg:
        tools.append(("PyCG", "pycg"))
    if args.jarvis:
        tools.append(("Jarvis", "jarvis"))
    for spec in args.suites:
        name, _, rest = spec.partition("=")
        base, _, kind = rest.partition(":")
        base = os.path.abspath(base)
        kind = kind or "relay"
        totals = {t: [0, 0, 0] for _, t in tools}
        flow = {t: [0, 0, 0] for _, t in tools}
        failures = {t: 0 for _, t in tools}
        cats = {}
        for cat, d, entries, truth in programs(kind, base):
            if args.only_prefix and not cat.startswith(args.only_prefix):
                continue
            prog = Program(args.relay, d)
            expected = truth_edges(prog, truth)
            for _, t in tools:
                try:
                    if t == "relay":
                        found = prog.relay_edges()
                    elif t == "before":
                        found = prog.relay_edges(relay_graph(args.relay_before, d))
                    elif t == "pycg":
                        found = prog.edges(run_pycg(args.pycg, d, entries))
                    else:
                        found = prog.edges(run_jarvis(args.jarvis, d, entries))
                except (subprocess.SubprocessError, ValueError, OSError):
                    failures[t] += 1
                    found = set()
                c = [len(found & expected), len(found - expected), len(expected - found)]
                acc = cats.setdefault(cat, {tt: [0, 0, 0] for _, tt in tools})
                for i in range(3):
                    acc[t][i] += c[i]
                    totals[t][i] += c[i]
                    if cat in flow_cats or any(cat.startswith(f) for f in flow_cats):
                        flow[t][i] += c[i]
        header = "| category | " + " | ".join(f"{n} P / R" for n, _ in tools) + " |"
        print(f"\n### {name} ({base})\n")
        print(header)
        print("|" + "---|" * (len(tools) + 1))
        rows = list(cats.items()) + [("**all**", totals)]
        if flow_cats:
            rows.append(("**flow-sensitive**", flow))
        for cat, acc in rows:
            cells = []
            for _, t in tools:
                p, r = score(*acc[t])
                cells.append(f"{p:.3f} / {r:.3f}")
            print(f"| {cat} | " + " | ".join(cells) + " |")
        edges = sum(totals["relay"][i] for i in (0, 2))
        fails = ", ".join(f"{n} {failures[t]}" for n, t in tools if failures[t])
        print(f"\n{len(cats)} categories, {edges} true edges"
              + (f"; programs a tool failed on: {fails}" if fails else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
