//! Golden tests of the indexer on the fixture projects in `tests/fixtures/`.
//!
//! The whole graph is compared with a committed insta snapshot (`tests/codegraph/snapshots/`),
//! and the important edges, plus known-wrong edges that must not exist, are asserted explicitly.

use std::path::{Path, PathBuf};

use relay_codegraph::index::{IndexOptions, index_repository};
use relay_codegraph::model::{Confidence, Edge, EdgeKind, Graph, SymbolKind};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn index(name: &str) -> Graph {
    index_repository(&fixture(name), &IndexOptions::default())
        .expect("index fixture")
        .graph
}

/// Compares the whole graph with its committed insta snapshot (`tests/codegraph/snapshots/`), which shows a
/// readable diff on failure. Review changes with `cargo insta review`, or accept them with
/// `INSTA_UPDATE=always cargo test -p relay-codegraph --test index_golden`; with `CI=true` a missing
/// snapshot fails.
fn check_golden(name: &str, graph: &Graph) {
    let actual = serde_json::to_string_pretty(graph).expect("serialize") + "\n";
    insta::assert_snapshot!(format!("{name}_graph"), actual);
}

fn has_edge(g: &Graph, kind: EdgeKind, from: &str, to: &str, conf: Confidence) -> bool {
    g.edges.iter().any(|e| {
        e.kind == kind && e.from == from && e.to.as_deref() == Some(to) && e.confidence == conf
    })
}

fn edges_to<'g>(g: &'g Graph, to: &str) -> Vec<&'g Edge> {
    g.edges
        .iter()
        .filter(|e| e.to.as_deref() == Some(to))
        .collect()
}

#[track_caller]
fn assert_edge(g: &Graph, kind: EdgeKind, from: &str, to: &str, conf: Confidence) {
    assert!(
        has_edge(g, kind, from, to, conf),
        "missing {kind:?} {from} -> {to} ({conf:?})"
    );
}

const APP: &str = "example.com/app";

#[test]
fn go_graph_matches_golden() {
    check_golden("go", &index("go"));
}

#[test]
fn python_graph_matches_golden() {
    check_golden("python", &index("python"));
}

#[test]
fn go_symbols_have_kinds_qnames_and_docs() {
    let g = index("go");
    let sym = |q: &str| {
        g.symbols
            .iter()
            .find(|s| s.qname == q)
            .unwrap_or_else(|| panic!("missing symbol {q}"))
    };
    let brain = format!("{APP}/internal/brain");
    assert_eq!(sym(&format!("{brain}.Planner")).kind, SymbolKind::Interface);
    assert_eq!(
        sym(&format!("{brain}.Planner.Plan")).kind,
        SymbolKind::Method
    );
    assert_eq!(sym(&format!("{brain}.Basic")).kind, SymbolKind::Struct);
    assert_eq!(sym(&format!("{brain}.Basic.store")).kind, SymbolKind::Field);
    assert_eq!(sym(&format!("{brain}.Mode")).kind, SymbolKind::Type);
    assert_eq!(sym(&format!("{brain}.Fast")).kind, SymbolKind::Const);
    assert_eq!(sym(&brain).kind, SymbolKind::Package);
    assert_eq!(
        sym(&brain).doc.as_deref(),
        Some("Package brain plans work.")
    );
    let plan = sym(&format!("{brain}.Basic.Plan"));
    assert_eq!(
        plan.signature.as_deref(),
        Some("func (b *Basic) Plan(ctx string) error")
    );
    assert_eq!(plan.doc.as_deref(), Some("Plan saves one step."));
    assert_eq!(
        plan.parent.as_deref(),
        Some(format!("{brain}.Basic").as_str())
    );
    assert_eq!((plan.line, plan.end_line), (36, 40));
    // Generic receiver.
    sym(&format!("{brain}.List.Push"));
    // A second go.mod is a second module.
    sym("example.com/tools/gen.Generate");
    // Locals never become symbols.
    assert!(
        !g.symbols
            .iter()
            .any(|s| s.name == "pl" || s.name == "setup" && s.kind != SymbolKind::Function)
    );
    // A `//go:build ignore` generator is its own program, not part of package store.
    sym(&format!("{APP}/internal/store/gen.main"));
    assert!(
        !g.symbols
            .iter()
            .any(|s| s.qname == format!("{APP}/internal/store.main"))
    );
    // A file with syntax errors is indexed as far as it parses.
    sym(&format!("{APP}/broken.Good"));
    sym(&format!("{APP}/broken.After"));
}

#[test]
fn go_edges_are_resolved_without_guessing() {
    let g = index("go");
    let main = format!("{APP}/cmd/app.main");
    let brain = format!("{APP}/internal/brain");
    let store = format!("{APP}/internal/store");
    use Confidence::{Dynamic, Exact, Inferred};
    use EdgeKind::{Calls, Implements, Imports, Uses};
    // Import alias.
    assert_edge(&g, Calls, &main, &format!("{brain}.NewBasic"), Exact);
    // Variable from a NewX constructor.
    assert_edge(&g, Calls, &main, &format!("{brain}.Basic.Plan"), Inferred);
    // Interface call: exact to the interface method, dynamic to each implementation whose
    // values reach the receiver (`var pl b.Planner = p` with `p` a `*Basic`): not to the other
    // implementations of `Planner` (`Value`, `Store`).
    assert_edge(&g, Calls, &main, &format!("{brain}.Planner.Plan"), Exact);
    assert_edge(&g, Calls, &main, &format!("{brain}.Basic.Plan"), Dynamic);
    let run = format!("{APP}/cmd/app.run");
    for (from, other) in [
        (&main, format!("{brain}.Value.Plan")),
        (&main, format!("{store}.Store.Plan")),
        (&run, format!("{brain}.Value.Plan")),
        (&run, format!("{store}.Store.Plan")),
    ] {
        assert!(
            !g.edges
                .iter()
                .any(|e| &e.from == from && e.to.as_deref() == Some(other.as_str())),
            "no value of {other}'s type flows to the receiver in {from}"
        );
    }
    // Through a parameter: `run(pl)`.
    assert_edge(&g, Calls, &run, &format!("{brain}.Planner.Plan"), Exact);
    assert_edge(&g, Calls, &run, &format!("{brain}.Basic.Plan"), Dynamic);
    // Closure calls belong to the enclosing function; package var through a package.
    assert_edge(&g, Calls, &main, &format!("{store}.Store.Save"), Exact);
    assert_edge(&g, Uses, &main, &format!("{store}.Default"), Exact);
    // Generic type and its method; promoted method through an embedded pointer.
    assert_edge(&g, Calls, &main, &format!("{brain}.List.Push"), Exact);
    assert!(g.edges.iter().any(|e| e.from == main
        && e.to.as_deref() == Some(&format!("{brain}.Basic.Plan"))
        && e.line == 28));
    // Struct field types and method calls through fields.
    assert_edge(
        &g,
        Calls,
        &format!("{brain}.Basic.Plan"),
        &format!("{store}.Store.Save"),
        Exact,
    );
    assert_edge(
        &g,
        Uses,
        &format!("{brain}.Basic.store"),
        &format!("{store}.Store"),
        Exact,
    );
    // Package-level initializer calls come from the package.
    assert_edge(
        &g,
        Calls,
        &format!("{APP}/cmd/app"),
        &format!("{APP}/cmd/app.setup"),
        Exact,
    );
    // Implements across packages, value and pointer receivers, and through embedding.
    assert_edge(
        &g,
        Implements,
        &format!("{brain}.Basic"),
        &format!("{brain}.Planner"),
        Exact,
    );
    assert_edge(
        &g,
        Implements,
        &format!("{brain}.Value"),
        &format!("{brain}.Planner"),
        Exact,
    );
    assert_edge(
        &g,
        Implements,
        &format!("{store}.Store"),
        &format!("{brain}.Planner"),
        Exact,
    );
    assert_edge(
        &g,
        Implements,
        &format!("{brain}.Wrapper"),
        &format!("{brain}.Named"),
        Exact,
    );
    assert_edge(&g, Imports, &format!("{APP}/cmd/app"), &store, Exact);
    // Cross-module import (second go.mod).
    assert_edge(
        &g,
        Calls,
        "example.com/tools/gen.Generate",
        &format!("{store}.Store.Save"),
        Exact,
    );
    assert_edge(
        &g,
        Calls,
        "example.com/tools/gen.Generate",
        "example.com/tools/gen.NewBasic",
        Exact,
    );

    // Known-wrong edges that must not exist.
    let not = |from: &str, to: &str| {
        assert!(
            !g.edges
                .iter()
                .any(|e| e.from == from && e.to.as_deref() == Some(to)),
            "wrong edge {from} -> {to}"
        );
    };
    // A local closure named like a package function.
    not(
        &format!("{APP}/cmd/app.shadow"),
        &format!("{APP}/cmd/app.setup"),
    );
    // Calls on receivers of unknown type are not attached to a same-named method.
    not(
        &format!("{APP}/cmd/app.shadow"),
        &format!("{brain}.Basic.Plan"),
    );
    not(
        &format!("{APP}/cmd/app.anon"),
        &format!("{brain}.Planner.Plan"),
    );
    not(
        &format!("{APP}/cmd/app.anon"),
        &format!("{brain}.Basic.Plan"),
    );
    // Same-named function in another module.
    not(
        "example.com/tools/gen.Generate",
        &format!("{brain}.NewBasic"),
    );
    // Struct literal keys are fields, not the import of the same name.
    assert!(!edges_to(&g, &store).iter().any(|e| e.kind != Imports));
    // A method with a different signature does not make Store implement Named.
    not(&format!("{store}.Store"), &format!("{brain}.Named"));
    // A call into a package outside the repository names its target by import path (what a
    // related repository providing that package calls it) and is marked external.
    assert!(
        g.edges
            .iter()
            .any(|e| e.to.as_deref() == Some("example.com/missing/dep.Do")
                && e.external
                && e.to_name == "dep.Do"
                && e.kind == Calls)
    );
    // Unresolved calls keep their name and have no target.
    assert!(
        g.edges
            .iter()
            .any(|e| e.to.is_none() && e.to_name == "x.Plan")
    );
}

#[test]
fn python_edges_are_resolved_without_guessing() {
    let g = index("python");
    use Confidence::{Exact, Inferred};
    use EdgeKind::{Calls, Imports, Inherits, Uses};
    let run = "pkg.sub.service.run";
    assert_edge(&g, Inherits, "pkg.models.Model", "pkg.models.Base", Exact);
    assert_edge(
        &g,
        Inherits,
        "pkg.sub.service.Special",
        "pkg.models.Model",
        Exact,
    );
    // self calls through the MRO, super(), constructors.
    assert_edge(
        &g,
        Calls,
        "pkg.models.Model.store",
        "pkg.models.Base.save",
        Exact,
    );
    // `self` in a base class's method is the class itself or the object it is called on:
    // `Model` (which overrides `validate`) calls `save`.
    assert_edge(
        &g,
        Calls,
        "pkg.models.Base.save",
        "pkg.models.Base.validate",
        Inferred,
    );
    assert_edge(
        &g,
        Calls,
        "pkg.models.Base.save",
        "pkg.models.Model.validate",
        Inferred,
    );
    assert_edge(
        &g,
        Calls,
        "pkg.models.Model.__init__",
        "pkg.models.Base.__init__",
        Exact,
    );
    assert_edge(
        &g,
        Calls,
        "pkg.models.Model.validate",
        "pkg.models.Base.validate",
        Exact,
    );
    assert_edge(
        &g,
        Calls,
        "pkg.sub.service.Special.store",
        "pkg.models.Model.store",
        Exact,
    );
    assert_edge(&g, Calls, run, "pkg.models.Model", Exact);
    assert_edge(&g, Calls, run, "pkg.models.Model.__init__", Exact);
    assert_edge(
        &g,
        Calls,
        "pkg.models.Model.create",
        "pkg.models.Model.__init__",
        Exact,
    );
    // Instances from constructors, instance attributes, annotations.
    assert_edge(&g, Calls, run, "pkg.models.Model.store", Inferred);
    assert_edge(
        &g,
        Calls,
        "pkg.models.Model.store",
        "pkg.models.Repo.put",
        Inferred,
    );
    assert_edge(
        &g,
        Calls,
        "pkg.sub.service.typed",
        "pkg.models.Base.save",
        Inferred,
    );
    // `from m import *`, `import a.b as c`, `from a import b`, local alias.
    assert_edge(&g, Calls, run, "pkg.util.helper", Exact);
    assert_edge(&g, Calls, run, "pkg.util.helper", Inferred);
    // A decorator is called by the enclosing scope at definition time, not by `run`.
    assert_edge(&g, Calls, "pkg.sub.service", "pkg.util.decorator", Exact);
    assert!(
        !g.edges
            .iter()
            .any(|e| e.from == run && e.to.as_deref() == Some("pkg.util.decorator"))
    );
    assert_eq!(
        g.edges
            .iter()
            .filter(|e| e.from == run && e.to.as_deref() == Some("pkg.util.helper"))
            .count(),
        4
    );
    // A lambda is a function symbol that owns the calls in its body.
    assert_edge(
        &g,
        Calls,
        "pkg.sub.service.run.<lambda@22:9>",
        "pkg.util.helper",
        Exact,
    );
    // Nested and async functions.
    assert_edge(
        &g,
        Calls,
        "pkg.sub.service.run.inner",
        "pkg.util.helper",
        Exact,
    );
    assert_edge(&g, Calls, "pkg.sub.service.go", "pkg.util.fetch", Exact);
    assert_edge(&g, Calls, "pkg.util.fetch", "pkg.util.helper", Exact);
    // Module-level code comes from the module.
    // `run` is what its decorator returned: `decorator` returns its argument.
    assert_edge(&g, Calls, "pkg.sub.service", run, Exact);
    assert_edge(&g, Uses, "pkg.sub.service.typed", "pkg.models.Model", Exact);
    // A module-level constant reached through `from ..util import *`.
    assert_edge(&g, Uses, run, "pkg.util.MAX", Exact);
    assert_edge(&g, Imports, "pkg.sub.service", "pkg.models", Exact);
    assert_edge(&g, Imports, "pkg.sub.service", "pkg.util", Exact);
    // Relative import in a package's __init__.
    assert_edge(&g, Imports, "pkg", "pkg.models", Exact);
    // Tolerant: the function after a syntax error is still indexed.
    assert_edge(&g, Calls, "pkg.broken.after", "pkg.broken.fine", Exact);

    // Known-wrong edges that must not exist.
    let not = |from: &str, to: &str| {
        assert!(
            !g.edges
                .iter()
                .any(|e| e.from == from && e.to.as_deref() == Some(to)),
            "wrong edge {from} -> {to}"
        );
    };
    not("pkg.sub.service.unknown", "pkg.models.Model.store");
    not("pkg.sub.service.shadow", "pkg.util.helper");
    assert!(g.edges.iter().any(|e| e.from == "pkg.sub.service.unknown"
        && e.to.is_none()
        && e.to_name == "obj.store"));
}

#[test]
fn stats_count_files_lines_and_parse_errors() {
    let progress_calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = progress_calls.clone();
    let opts = IndexOptions {
        progress: Some(std::sync::Arc::new(move |_p| {
            seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        })),
        ..IndexOptions::default()
    };
    let out = index_repository(&fixture("go"), &opts).expect("index");
    let s = &out.stats;
    assert_eq!((s.files, s.go_files, s.python_files), (6, 6, 0));
    assert_eq!(s.parse_errors, 1, "broken/broken.go has syntax errors");
    assert_eq!(s.symbols, out.graph.symbols.len());
    assert_eq!(s.edges, out.graph.edges.len());
    assert!(s.lines > 100);
    assert!(s.unresolved_calls >= 3);
    assert_eq!(
        s.edges_by_kind.values().sum::<usize>(),
        out.graph.edges.len()
    );
    assert!(s.edges_by_confidence.contains_key("dynamic"));
    assert!(progress_calls.load(std::sync::atomic::Ordering::Relaxed) >= 2);
    let py = index_repository(&fixture("python"), &IndexOptions::default()).expect("index");
    assert_eq!(py.stats.parse_errors, 1, "pkg/broken.py has syntax errors");
    assert_eq!(py.stats.python_files, 6);
}

#[test]
fn missing_root_is_an_error() {
    let err = index_repository(Path::new("/nonexistent/relay"), &IndexOptions::default())
        .expect_err("missing root");
    assert!(err.to_string().contains("is not a directory"), "{err}");
}
