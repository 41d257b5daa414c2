#!/usr/bin/env python3
"""Scores Go call edges against golang.org/x/tools' `callgraph` (see scripts/bench-go-dispatch.sh).

    go-dispatch-score.py --files FILES --cha CHA --vta VTA --static STATIC \
        --relay NAME=GRAPH.json [--relay NAME=GRAPH.json ...]

FILES: `go list` lines `<import path> <file> <file>...` (the analysed set's files as built for this
platform, relative to the root that Relay indexed). CHA/VTA/STATIC: `callgraph -format` lines
`caller<TAB>static|dynamic<TAB>file<TAB>callee` (callee through `Callee.Object` when it has one, so a
wrapper or a bound method is named after the method it calls). GRAPH: a Relay `--json` graph.

An edge is a (caller, callee) pair of functions or methods, both declared in the analysed set, callee
not an interface method nor a function literal; a function literal's calls are its enclosing
function's (as Relay attributes them). Dispatch edges: `callgraph`'s dynamic call sites (through an
interface or a function value) and Relay's `dynamic` edges. Static edges: `callgraph -algo=static`
(go/types resolution through SSA) against Relay's `exact`/`inferred` call edges to concrete functions.
Prints precision and recall of every tool against VTA (dispatch) and of each Relay graph against the
static anchor.
"""

import argparse
import json
import re
import sys

BRACKETS = re.compile(r"\[[^\[\]]*\]")


def ssa_name(name):
    """`(*net/http.Server).Serve` -> `net/http.Server.Serve`; `pkg.F$1` -> (`pkg.F`, True)."""
    name = name.strip()
    closure = False
    for suffix in ("$bound", "$thunk"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    if "$" in name:
        name = name.split("$", 1)[0]
        closure = True
    while True:
        stripped = BRACKETS.sub("", name)
        if stripped == name:
            break
        name = stripped
    m = re.match(r"^\(\*?([^()]+)\)\.(.+)$", name)
    if m:
        name = f"{m.group(1)}.{m.group(2)}"
    return name, closure


def package_of(qname):
    slash = qname.rfind("/")
    dot = qname.find(".", slash + 1)
    return qname if dot < 0 else qname[:dot]


def load_files(path):
    packages, files = set(), set()
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            packages.add(parts[0])
            files.update(parts[1:])
    return packages, files


def load_callgraph(path, packages, interface_methods):
    """(dynamic pairs, static pairs) inside the analysed set."""
    dynamic, static = set(), set()
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 4:
                continue
            caller, kind, _file, callee = parts
            caller, _ = ssa_name(caller)
            callee, closure = ssa_name(callee)
            if closure or callee in interface_methods:
                continue
            if package_of(caller) not in packages or package_of(callee) not in packages:
                continue
            if caller.endswith(".init") or re.search(r"\.init#\d+$", caller):
                continue
            (dynamic if kind == "dynamic" else static).add((caller, callee))
    return dynamic, static


def load_relay(path, packages, files):
    with open(path) as f:
        graph = json.load(f)
    kinds = {s["qname"]: s["kind"] for s in graph["symbols"]}
    parents = {s["qname"]: s.get("parent") for s in graph["symbols"]}
    declared_in = {s["qname"]: s["file"] for s in graph["symbols"]}
    interface_methods = {
        q for q, k in kinds.items() if k == "method" and kinds.get(parents.get(q)) == "interface"
    }
    dynamic, static = set(), set()
    for e in graph["edges"]:
        if e["kind"] != "calls" or not e.get("to") or e["file"] not in files:
            continue
        caller, callee = e["from"], e["to"]
        if kinds.get(callee) not in ("function", "method") or callee in interface_methods:
            continue
        if declared_in.get(callee) not in files:
            continue
        if package_of(caller) not in packages or package_of(callee) not in packages:
            continue
        if caller.endswith(".init"):
            continue
        (dynamic if e["confidence"] == "dynamic" else static).add((caller, callee))
    return dynamic, static, interface_methods


def score(found, truth):
    hit = len(found & truth)
    p = hit / len(found) if found else 0.0
    r = hit / len(truth) if truth else 0.0
    return p, r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", required=True)
    ap.add_argument("--cha", required=True)
    ap.add_argument("--vta", required=True)
    ap.add_argument("--static", required=True)
    ap.add_argument("--relay", action="append", required=True, help="NAME=graph.json")
    ap.add_argument("--show", type=int, default=0, help="print N misses and extras per Relay graph")
    args = ap.parse_args()
    packages, files = load_files(args.files)
    relays = []
    interface_methods = set()
    for spec in args.relay:
        name, path = spec.split("=", 1)
        dyn, sta, ifm = load_relay(path, packages, files)
        interface_methods |= ifm
        relays.append((name, dyn, sta))
    cha, _ = load_callgraph(args.cha, packages, interface_methods)
    vta, _ = load_callgraph(args.vta, packages, interface_methods)
    _, static = load_callgraph(args.static, packages, interface_methods)

    print(f"analysed set: {len(packages)} packages, {len(files)} files")
    print(f"dispatch edges (caller -> concrete callee) against VTA ({len(vta)} pairs):")
    print(f"  {'tool':<22} {'pairs':>7} {'precision':>10} {'recall':>8}")
    rows = [("callgraph -algo=cha", cha), ("callgraph -algo=vta", vta)]
    rows += [(f"relay {n}", d) for n, d, _ in relays]
    for name, pairs in rows:
        p, r = score(pairs, vta)
        print(f"  {name:<22} {len(pairs):>7} {p:>10.3f} {r:>8.3f}")
    cha_p, _ = score(cha, vta)
    print(f"static edges against callgraph -algo=static ({len(static)} pairs):")
    for name, _, sta in relays:
        p, r = score(sta, static)
        print(f"  {'relay ' + name:<22} {len(sta):>7} {p:>10.3f} {r:>8.3f}")
    for name, dyn, _ in relays:
        p, r = score(dyn, vta)
        print(
            f"goals, relay {name}: recall vs VTA {r:.3f} (>= .97), precision vs VTA {p:.3f} "
            f"(>= CHA's {cha_p:.3f} + .25 = {cha_p + 0.25:.3f})"
        )
    for name, dyn, sta in relays[-1:] if args.show else []:
        print(f"-- relay {name}: missed VTA pairs")
        for pair in sorted(vta - dyn)[: args.show]:
            print("   ", *pair)
        print(f"-- relay {name}: pairs VTA does not have")
        for pair in sorted(dyn - vta)[: args.show]:
            print("   ", *pair)
        print(f"-- relay {name}: static pairs missed")
        for pair in sorted(static - sta)[: args.show]:
            print("   ", *pair)
        print(f"-- relay {name}: static pairs not in the anchor")
        for pair in sorted(sta - static)[: args.show]:
            print("   ", *pair)
    return 0


if __name__ == "__main__":
    sys.exit(main())
