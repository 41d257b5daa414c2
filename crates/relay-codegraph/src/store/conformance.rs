//! The conformance suite every [`GraphStore`] backend must pass (behind `cfg(test)` or the
//! `test-support` feature).
//!
//! Call [`run`] from a backend's tests with a factory that returns a store; each check asks the factory
//! for a store and works in its own repository namespace, so a factory may hand out the same database
//! every time. The suite uses the hand-made [`fixture_graph`], which covers every kind of symbol and edge
//! the operations care about: interfaces with implementations, dynamic dispatch edges, unresolved and
//! external call targets, a call cycle, Python inheritance, duplicate qnames and `LIKE` metacharacters.

use std::future::Future;

use super::{
    CallStep, Direction, GraphDelta, GraphStore, MatchField, Snapshot, StoreError, SymbolQuery,
    apply_delta_to_graph, canonicalize,
};
use crate::model::{Confidence, Edge, EdgeKind, Graph, Language, Symbol, SymbolKind};

/// Builds a symbol for fixtures.
#[allow(clippy::too_many_arguments)]
pub fn sym(
    qname: &str,
    name: &str,
    kind: SymbolKind,
    file: &str,
    line: u32,
    end_line: u32,
    signature: Option<&str>,
    parent: Option<&str>,
) -> Symbol {
    Symbol {
        qname: qname.to_owned(),
        name: name.to_owned(),
        kind,
        language: if file.ends_with(".py") {
            Language::Python
        } else {
            Language::Go
        },
        file: file.to_owned(),
        line,
        end_line,
        signature: signature.map(str::to_owned),
        doc: None,
        parent: parent.map(str::to_owned),
    }
}

/// Builds an edge for fixtures; `to` of `None` is an unresolved edge.
pub fn edge(
    kind: EdgeKind,
    from: &str,
    to: Option<&str>,
    to_name: &str,
    file: &str,
    line: u32,
    confidence: Confidence,
) -> Edge {
    Edge {
        kind,
        from: from.to_owned(),
        to: to.map(str::to_owned),
        to_name: to_name.to_owned(),
        file: file.to_owned(),
        line,
        confidence,
        external: false,
    }
}

/// Go package path used by the fixture.
pub const BRAIN: &str = "example.com/app/brain";
/// Go package path used by the fixture.
pub const CMD: &str = "example.com/app/cmd";

fn q(pkg: &str, rest: &str) -> String {
    format!("{pkg}.{rest}")
}

/// A small Go + Python graph exercising every relation the operations read.
pub fn fixture_graph() -> Graph {
    use Confidence::*;
    use EdgeKind::*;
    use SymbolKind::*;
    let b = |r: &str| q(BRAIN, r);
    let c = |r: &str| q(CMD, r);
    let planner_go = "brain/planner.go";
    let stub_go = "brain/stub.go";
    let main_go = "cmd/main.go";
    let mod_py = "pkg/mod.py";
    let symbols = vec![
        sym(BRAIN, "brain", Package, planner_go, 1, 1, None, None),
        sym(
            &b("MaxSteps"),
            "MaxSteps",
            Const,
            planner_go,
            7,
            7,
            Some("const MaxSteps = 8"),
            Some(BRAIN),
        ),
        sym(
            &b("Planner"),
            "Planner",
            Interface,
            planner_go,
            10,
            13,
            Some("type Planner interface"),
            Some(BRAIN),
        ),
        sym(
            &b("Planner.Plan"),
            "Plan",
            Method,
            planner_go,
            12,
            12,
            Some("Plan(ctx context.Context) error"),
            Some(&b("Planner")),
        ),
        sym(
            &b("LLMPlanner"),
            "LLMPlanner",
            Struct,
            planner_go,
            20,
            23,
            Some("type LLMPlanner struct"),
            Some(BRAIN),
        ),
        sym(
            &b("LLMPlanner.client"),
            "client",
            Field,
            planner_go,
            21,
            21,
            Some("client *http.Client"),
            Some(&b("LLMPlanner")),
        ),
        sym(
            &b("NewLLMPlanner"),
            "NewLLMPlanner",
            Function,
            planner_go,
            25,
            27,
            Some("func NewLLMPlanner() *LLMPlanner"),
            Some(BRAIN),
        ),
        sym(
            &b("LLMPlanner.Plan"),
            "Plan",
            Method,
            planner_go,
            30,
            40,
            Some("func (p *LLMPlanner) Plan(ctx context.Context) error"),
            Some(&b("LLMPlanner")),
        ),
        sym(
            &b("helper"),
            "helper",
            Function,
            planner_go,
            50,
            55,
            Some("func helper(p *LLMPlanner) error"),
            Some(BRAIN),
        ),
        sym(
            &b("StubPlanner"),
            "StubPlanner",
            Struct,
            stub_go,
            5,
            6,
            Some("type StubPlanner struct{}"),
            Some(BRAIN),
        ),
        sym(
            &b("StubPlanner.Plan"),
            "Plan",
            Method,
            stub_go,
            9,
            11,
            Some("func (StubPlanner) Plan(ctx context.Context) error"),
            Some(&b("StubPlanner")),
        ),
        sym(CMD, "cmd", Package, main_go, 1, 1, None, None),
        sym(
            &c("init"),
            "init",
            Function,
            main_go,
            5,
            7,
            Some("func init()"),
            Some(CMD),
        ),
        sym(
            &c("init"),
            "init",
            Function,
            "cmd/flags.go",
            3,
            4,
            Some("func init()"),
            Some(CMD),
        ),
        sym(
            &c("main"),
            "main",
            Function,
            main_go,
            10,
            15,
            Some("func main()"),
            Some(CMD),
        ),
        sym(
            &c("run"),
            "run",
            Function,
            main_go,
            20,
            24,
            Some("func run(p brain.Planner) error"),
            Some(CMD),
        ),
        sym("pkg.mod", "mod", Module, mod_py, 1, 30, None, None),
        sym(
            "pkg.mod.MAX_RETRIES",
            "MAX_RETRIES",
            Var,
            mod_py,
            2,
            2,
            Some("MAX_RETRIES = 3"),
            Some("pkg.mod"),
        ),
        sym(
            "pkg.mod.Base",
            "Base",
            Class,
            mod_py,
            4,
            6,
            Some("class Base:"),
            Some("pkg.mod"),
        ),
        sym(
            "pkg.mod.Child",
            "Child",
            Class,
            mod_py,
            8,
            13,
            Some("class Child(Base):"),
            Some("pkg.mod"),
        ),
        sym(
            "pkg.mod.Child.run",
            "run",
            Method,
            mod_py,
            10,
            13,
            Some("def run(self):"),
            Some("pkg.mod.Child"),
        ),
        sym(
            "pkg.mod.helper_fn",
            "helper_fn",
            Function,
            mod_py,
            15,
            16,
            Some("def helper_fn():"),
            Some("pkg.mod"),
        ),
        sym(
            "pkg.mod.helperXfn",
            "helperXfn",
            Function,
            mod_py,
            17,
            18,
            Some("def helperXfn():"),
            Some("pkg.mod"),
        ),
    ];
    let edges = vec![
        edge(
            Calls,
            &c("main"),
            Some(&b("NewLLMPlanner")),
            "NewLLMPlanner",
            main_go,
            11,
            Exact,
        ),
        edge(
            Calls,
            &c("main"),
            Some(&c("run")),
            "run",
            main_go,
            12,
            Exact,
        ),
        edge(
            Calls,
            &c("main"),
            Some("fmt.Println"),
            "Println",
            main_go,
            13,
            Exact,
        ),
        edge(Calls, &c("main"), None, "Exit", main_go, 14, Exact),
        edge(
            Calls,
            &c("run"),
            Some(&b("Planner.Plan")),
            "Plan",
            main_go,
            22,
            Exact,
        ),
        edge(
            Calls,
            &c("run"),
            Some(&b("LLMPlanner.Plan")),
            "Plan",
            main_go,
            22,
            Dynamic,
        ),
        edge(
            Calls,
            &c("run"),
            Some(&b("StubPlanner.Plan")),
            "Plan",
            main_go,
            22,
            Dynamic,
        ),
        edge(
            Calls,
            &b("LLMPlanner.Plan"),
            Some(&b("helper")),
            "helper",
            planner_go,
            32,
            Exact,
        ),
        edge(
            Calls,
            &b("LLMPlanner.Plan"),
            Some(&b("helper")),
            "helper",
            planner_go,
            35,
            Exact,
        ),
        edge(
            Calls,
            &b("helper"),
            Some(&b("LLMPlanner.Plan")),
            "Plan",
            planner_go,
            52,
            Inferred,
        ),
        edge(
            Calls,
            "pkg.mod.Child.run",
            Some("pkg.mod.helper_fn"),
            "helper_fn",
            mod_py,
            12,
            Exact,
        ),
        edge(
            Calls,
            "pkg.mod",
            Some("pkg.mod.helper_fn"),
            "helper_fn",
            mod_py,
            20,
            Exact,
        ),
        edge(
            Implements,
            &b("LLMPlanner"),
            Some(&b("Planner")),
            "Planner",
            planner_go,
            20,
            Exact,
        ),
        edge(
            Implements,
            &b("StubPlanner"),
            Some(&b("Planner")),
            "Planner",
            stub_go,
            5,
            Exact,
        ),
        edge(
            Inherits,
            "pkg.mod.Child",
            Some("pkg.mod.Base"),
            "Base",
            mod_py,
            8,
            Exact,
        ),
        edge(
            Uses,
            &b("LLMPlanner.Plan"),
            Some(&b("MaxSteps")),
            "MaxSteps",
            planner_go,
            33,
            Exact,
        ),
        edge(
            Uses,
            &c("run"),
            Some(&b("Planner")),
            "brain.Planner",
            main_go,
            20,
            Exact,
        ),
        edge(
            Uses,
            &b("NewLLMPlanner"),
            Some(&b("LLMPlanner")),
            "LLMPlanner",
            planner_go,
            25,
            Exact,
        ),
        edge(
            Uses,
            &b("helper"),
            Some(&b("LLMPlanner")),
            "LLMPlanner",
            planner_go,
            50,
            Exact,
        ),
        edge(Imports, CMD, Some(BRAIN), BRAIN, main_go, 3, Exact),
    ];
    let mut graph = Graph { symbols, edges };
    // `fmt.Println` names no symbol: an external target, as every backend reads it back.
    graph.mark_external();
    graph
}

/// A delta on top of [`fixture_graph`]: `brain/stub.go` is rewritten (StubPlanner becomes MockPlanner),
/// `pkg/mod.py` is deleted and `cmd/main.go` is re-indexed: the same symbols and edges as in
/// [`fixture_graph`] (taken from it, not written twice), except that `run`'s dynamic `Plan` call now
/// dispatches to the new type.
pub fn fixture_delta() -> GraphDelta {
    use Confidence::*;
    use EdgeKind::*;
    use SymbolKind::*;
    let b = |r: &str| q(BRAIN, r);
    let main_go = "cmd/main.go";
    let stub_go = "brain/stub.go";
    let mut symbols = vec![
        sym(
            &b("MockPlanner"),
            "MockPlanner",
            Struct,
            stub_go,
            5,
            7,
            Some("type MockPlanner struct{}"),
            Some(BRAIN),
        ),
        sym(
            &b("MockPlanner.Plan"),
            "Plan",
            Method,
            stub_go,
            9,
            12,
            Some("func (m *MockPlanner) Plan(ctx context.Context) error"),
            Some(&b("MockPlanner")),
        ),
    ];
    let mut edges = vec![edge(
        Implements,
        &b("MockPlanner"),
        Some(&b("Planner")),
        "Planner",
        stub_go,
        5,
        Exact,
    )];
    let before = fixture_graph();
    let (stub_plan, mock_plan) = (b("StubPlanner.Plan"), b("MockPlanner.Plan"));
    symbols.extend(before.symbols.into_iter().filter(|s| s.file == main_go));
    edges.extend(
        before
            .edges
            .into_iter()
            .filter(|e| e.file == main_go)
            .map(|mut e| {
                if e.to.as_deref() == Some(stub_plan.as_str()) {
                    e.to = Some(mock_plan.clone());
                }
                e
            }),
    );
    GraphDelta {
        files: vec![stub_go.into(), "pkg/mod.py".into(), main_go.into()],
        symbols,
        edges,
        ..GraphDelta::default()
    }
}

fn step(
    depth: u8,
    node: Option<&str>,
    via: &str,
    to_name: &str,
    file: &str,
    line: u32,
    confidence: Confidence,
) -> CallStep {
    CallStep {
        depth,
        node: node.map(str::to_owned),
        via: via.to_owned(),
        to_name: to_name.to_owned(),
        file: file.to_owned(),
        line,
        confidence,
    }
}

/// Runs every conformance check. `factory` is called once per check.
pub async fn run<F, Fut, S>(mut factory: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
    S: GraphStore,
{
    round_trip(&factory().await).await;
    search(&factory().await).await;
    lookups(&factory().await).await;
    edges(&factory().await).await;
    traversals(&factory().await).await;
    deltas(&factory().await).await;
    namespaces(&factory().await).await;
    missing_snapshots(&factory().await).await;
}

async fn load(store: &dyn GraphStore, repo: &str, commit: &str) -> Snapshot {
    store
        .replace_graph(repo, commit, &fixture_graph())
        .await
        .unwrap_or_else(|e| panic!("[{}] replace_graph failed: {e}", store.backend()));
    Snapshot::new(repo, commit)
}

fn qnames(symbols: &[Symbol]) -> Vec<&str> {
    symbols.iter().map(|s| s.qname.as_str()).collect()
}

/// replace_graph then export returns the same graph, in canonical order; replacing again overwrites.
pub async fn round_trip(store: &dyn GraphStore) {
    let backend = store.backend();
    let snap = load(store, "conformance/round-trip", "c1").await;
    let mut expected = fixture_graph();
    canonicalize(&mut expected);
    let exported = store.export(&snap).await.expect("export");
    assert_eq!(exported, expected, "[{backend}] export after replace_graph");
    // "Who calls fmt.Println": the external target's callers, marked external; an unresolved
    // edge (`to: None`) is not.
    let callers = store
        .edges(
            &snap,
            "fmt.Println",
            Direction::Incoming,
            &[EdgeKind::Calls],
        )
        .await
        .expect("edges");
    assert!(
        !callers.is_empty() && callers.iter().all(|e| e.external),
        "[{backend}] calls of an external target are external: {callers:?}"
    );
    assert!(
        exported
            .edges
            .iter()
            .filter(|e| e.to.is_none())
            .all(|e| !e.external),
        "[{backend}] unresolved edges are not external"
    );
    assert_eq!(
        store.latest_commit(&snap.repo).await.expect("latest"),
        Some("c1".to_owned()),
        "[{backend}] latest commit"
    );

    let mut small = Graph {
        symbols: expected.symbols[..3].to_vec(),
        edges: expected.edges[..2].to_vec(),
    };
    // Graphs keep the invariant of `Edge::external` (a target that names no symbol), which the
    // Postgres backend derives when it reads edges back.
    small.mark_external();
    store
        .replace_graph(&snap.repo, "c1", &small)
        .await
        .expect("replace again");
    let mut small_sorted = small.clone();
    canonicalize(&mut small_sorted);
    assert_eq!(
        store.export(&snap).await.expect("export"),
        small_sorted,
        "[{backend}] replace_graph must overwrite the previous graph"
    );
}

/// Name and qname search: case-insensitivity, wildcards, filters, ordering, limits, literal metacharacters.
pub async fn search(store: &dyn GraphStore) {
    let backend = store.backend();
    let snap = load(store, "conformance/search", "c1").await;
    let run = |query: SymbolQuery| {
        let snap = snap.clone();
        async move {
            store
                .search(&snap, &query)
                .await
                .unwrap_or_else(|e| panic!("[{backend}] search {query:?}: {e}"))
        }
    };

    let page = run(SymbolQuery::name("plan", 10)).await;
    assert_eq!(page.total, 3, "[{backend}] case-insensitive exact name");
    assert_eq!(
        qnames(&page.symbols),
        vec![
            "example.com/app/brain.Planner.Plan",
            "example.com/app/brain.LLMPlanner.Plan",
            "example.com/app/brain.StubPlanner.Plan",
        ],
        "[{backend}] ordered by qname length, then qname"
    );

    let page = run(SymbolQuery::name("Plan*", 10)).await;
    assert_eq!(
        qnames(&page.symbols),
        vec![
            "example.com/app/brain.Planner",
            "example.com/app/brain.Planner.Plan",
            "example.com/app/brain.LLMPlanner.Plan",
            "example.com/app/brain.StubPlanner.Plan",
        ],
        "[{backend}] wildcard; names equal to the raw pattern would come first"
    );

    let page = run(SymbolQuery::name("*planner", 2)).await;
    assert_eq!(page.total, 4, "[{backend}] total counts every match");
    assert_eq!(
        qnames(&page.symbols),
        vec![
            "example.com/app/brain.Planner",
            "example.com/app/brain.LLMPlanner"
        ],
        "[{backend}] limit"
    );

    let page = run(SymbolQuery::name("Plan", 10)).await;
    let methods_only = run(SymbolQuery {
        kinds: vec![SymbolKind::Method],
        file: Some("brain/stub".into()),
        ..SymbolQuery::name("plan", 10)
    })
    .await;
    assert_eq!(page.total, 3, "[{backend}] exact-case pattern");
    assert_eq!(
        qnames(&methods_only.symbols),
        vec!["example.com/app/brain.StubPlanner.Plan"],
        "[{backend}] kind and file filters"
    );

    let page = run(SymbolQuery {
        kinds: vec![SymbolKind::Struct, SymbolKind::Interface],
        ..SymbolQuery::name("*", 50)
    })
    .await;
    assert_eq!(page.total, 3, "[{backend}] several kinds");

    let page = run(SymbolQuery::name("helper_fn", 10)).await;
    assert_eq!(
        qnames(&page.symbols),
        vec!["pkg.mod.helper_fn"],
        "[{backend}] `_` is literal"
    );
    let page = run(SymbolQuery::name("helper%", 10)).await;
    assert_eq!(page.total, 0, "[{backend}] `%` is literal");

    let page = run(SymbolQuery::name("MAX_RETRIES", 10)).await;
    assert_eq!(
        qnames(&page.symbols),
        vec!["pkg.mod.MAX_RETRIES"],
        "[{backend}] upper case names"
    );

    let page = run(SymbolQuery::qname("*brain.planner.plan", 10)).await;
    assert_eq!(
        qnames(&page.symbols),
        vec!["example.com/app/brain.Planner.Plan"],
        "[{backend}] qname suffix"
    );
    let page = run(SymbolQuery {
        field: MatchField::Qname,
        ..SymbolQuery::qname("example.com/app/brain.LLMPlanner.*", 10)
    })
    .await;
    assert_eq!(
        qnames(&page.symbols),
        vec![
            "example.com/app/brain.LLMPlanner.Plan",
            "example.com/app/brain.LLMPlanner.client",
        ],
        "[{backend}] qname prefix"
    );
    let page = run(SymbolQuery::qname("example.com/app/brain.Planner", 10)).await;
    assert_eq!(page.total, 1, "[{backend}] exact qname");

    let page = run(SymbolQuery::name("nothing-like-this", 10)).await;
    assert_eq!(
        (page.total, page.symbols.len()),
        (0, 0),
        "[{backend}] no match"
    );
}

/// `symbols` and `children`.
pub async fn lookups(store: &dyn GraphStore) {
    let backend = store.backend();
    let snap = load(store, "conformance/lookups", "c1").await;
    let found = store
        .symbols(
            &snap,
            &[
                "pkg.mod.Child".to_owned(),
                "example.com/app/cmd.init".to_owned(),
                "does.not.exist".to_owned(),
                "example.com/app/brain.helper".to_owned(),
            ],
        )
        .await
        .expect("symbols");
    assert_eq!(
        found
            .iter()
            .map(|s| (s.qname.as_str(), s.file.as_str()))
            .collect::<Vec<_>>(),
        vec![
            ("example.com/app/brain.helper", "brain/planner.go"),
            ("example.com/app/cmd.init", "cmd/flags.go"),
            ("example.com/app/cmd.init", "cmd/main.go"),
            ("pkg.mod.Child", "pkg/mod.py"),
        ],
        "[{backend}] symbols by qname: ordered, duplicates kept, unknown skipped"
    );
    let helper = &found[0];
    assert_eq!(
        helper.signature.as_deref(),
        Some("func helper(p *LLMPlanner) error"),
        "[{backend}] signature round trip"
    );
    assert_eq!(helper.end_line, 55, "[{backend}] end line round trip");

    let children = store
        .children(&snap, "example.com/app/brain.LLMPlanner")
        .await
        .expect("children");
    assert_eq!(
        qnames(&children),
        vec![
            "example.com/app/brain.LLMPlanner.client",
            "example.com/app/brain.LLMPlanner.Plan",
        ],
        "[{backend}] children ordered by file and line"
    );
    assert!(
        store
            .children(&snap, "nope")
            .await
            .expect("children")
            .is_empty(),
        "[{backend}] no children"
    );
}

/// Incoming and outgoing edges filtered by kind.
pub async fn edges(store: &dyn GraphStore) {
    let backend = store.backend();
    let snap = load(store, "conformance/edges", "c1").await;
    let planner = "example.com/app/brain.Planner";
    let implementors = store
        .edges(&snap, planner, Direction::Incoming, &[EdgeKind::Implements])
        .await
        .expect("edges");
    assert_eq!(
        implementors
            .iter()
            .map(|e| e.from.as_str())
            .collect::<Vec<_>>(),
        vec![
            "example.com/app/brain.LLMPlanner",
            "example.com/app/brain.StubPlanner"
        ],
        "[{backend}] implements edges by site"
    );
    let all_in = store
        .edges(&snap, planner, Direction::Incoming, &[])
        .await
        .expect("edges");
    assert_eq!(
        all_in
            .iter()
            .map(|e| (e.kind, e.file.as_str(), e.line))
            .collect::<Vec<_>>(),
        vec![
            (EdgeKind::Implements, "brain/planner.go", 20),
            (EdgeKind::Implements, "brain/stub.go", 5),
            (EdgeKind::Uses, "cmd/main.go", 20),
        ],
        "[{backend}] all incoming kinds"
    );
    let out = store
        .edges(
            &snap,
            "example.com/app/cmd.main",
            Direction::Outgoing,
            &[EdgeKind::Calls, EdgeKind::Uses],
        )
        .await
        .expect("edges");
    assert_eq!(out.len(), 4, "[{backend}] outgoing calls");
    assert_eq!(
        out[3].to, None,
        "[{backend}] unresolved edge keeps to = None"
    );
    assert_eq!(
        out[3].to_name, "Exit",
        "[{backend}] unresolved edge keeps its name"
    );
    let parents = store
        .edges(
            &snap,
            "pkg.mod.Child",
            Direction::Outgoing,
            &[EdgeKind::Inherits],
        )
        .await
        .expect("edges");
    assert_eq!(parents.len(), 1, "[{backend}] inherits");
    assert_eq!(parents[0].to.as_deref(), Some("pkg.mod.Base"));
}

/// Callers and callees, depth 1 to 3, with cycles, dynamic, external and unresolved edges.
pub async fn traversals(store: &dyn GraphStore) {
    use Confidence::*;
    let backend = store.backend();
    let snap = load(store, "conformance/traversals", "c1").await;
    let helper = "example.com/app/brain.helper";
    let llm_plan = "example.com/app/brain.LLMPlanner.Plan";
    let run = "example.com/app/cmd.run";
    let main = "example.com/app/cmd.main";
    let walk = |qname: &'static str, direction: Direction, depth: u8| {
        let snap = snap.clone();
        async move {
            store
                .traverse_calls(&snap, qname, direction, depth)
                .await
                .unwrap_or_else(|e| panic!("[{backend}] traverse {qname}: {e}"))
        }
    };

    let depth1 = vec![
        step(
            1,
            Some(llm_plan),
            helper,
            "helper",
            "brain/planner.go",
            32,
            Exact,
        ),
        step(
            1,
            Some(llm_plan),
            helper,
            "helper",
            "brain/planner.go",
            35,
            Exact,
        ),
    ];
    assert_eq!(
        walk(helper, Direction::Incoming, 1).await,
        depth1,
        "[{backend}] callers depth 1"
    );
    assert_eq!(
        walk(helper, Direction::Incoming, 0).await,
        depth1,
        "[{backend}] depth 0 clamps to 1"
    );
    let mut depth3 = depth1.clone();
    depth3.push(step(
        2,
        Some(run),
        llm_plan,
        "Plan",
        "cmd/main.go",
        22,
        Dynamic,
    ));
    depth3.push(step(3, Some(main), run, "run", "cmd/main.go", 12, Exact));
    assert_eq!(
        walk(helper, Direction::Incoming, 3).await,
        depth3,
        "[{backend}] callers depth 3 (the cycle back to the start is not a result)"
    );
    assert_eq!(
        walk(helper, Direction::Incoming, 9).await,
        depth3,
        "[{backend}] depth 9 clamps to 3"
    );

    let callees1 = vec![
        step(
            1,
            Some("example.com/app/brain.NewLLMPlanner"),
            main,
            "NewLLMPlanner",
            "cmd/main.go",
            11,
            Exact,
        ),
        step(1, Some(run), main, "run", "cmd/main.go", 12, Exact),
        step(
            1,
            Some("fmt.Println"),
            main,
            "Println",
            "cmd/main.go",
            13,
            Exact,
        ),
        step(1, None, main, "Exit", "cmd/main.go", 14, Exact),
    ];
    assert_eq!(
        walk(main, Direction::Outgoing, 1).await,
        callees1,
        "[{backend}] callees depth 1"
    );
    let mut callees3 = callees1.clone();
    callees3.extend([
        step(
            2,
            Some("example.com/app/brain.LLMPlanner.Plan"),
            run,
            "Plan",
            "cmd/main.go",
            22,
            Dynamic,
        ),
        step(
            2,
            Some("example.com/app/brain.Planner.Plan"),
            run,
            "Plan",
            "cmd/main.go",
            22,
            Exact,
        ),
        step(
            2,
            Some("example.com/app/brain.StubPlanner.Plan"),
            run,
            "Plan",
            "cmd/main.go",
            22,
            Dynamic,
        ),
        step(
            3,
            Some(helper),
            llm_plan,
            "helper",
            "brain/planner.go",
            32,
            Exact,
        ),
        step(
            3,
            Some(helper),
            llm_plan,
            "helper",
            "brain/planner.go",
            35,
            Exact,
        ),
    ]);
    assert_eq!(
        walk(main, Direction::Outgoing, 3).await,
        callees3,
        "[{backend}] callees depth 3"
    );

    assert_eq!(
        walk(llm_plan, Direction::Outgoing, 3).await,
        vec![
            step(
                1,
                Some(helper),
                llm_plan,
                "helper",
                "brain/planner.go",
                32,
                Exact
            ),
            step(
                1,
                Some(helper),
                llm_plan,
                "helper",
                "brain/planner.go",
                35,
                Exact
            ),
        ],
        "[{backend}] a cycle stops at the start symbol"
    );
    assert_eq!(
        walk("pkg.mod.helper_fn", Direction::Incoming, 2).await,
        vec![
            step(
                1,
                Some("pkg.mod.Child.run"),
                "pkg.mod.helper_fn",
                "helper_fn",
                "pkg/mod.py",
                12,
                Exact
            ),
            step(
                1,
                Some("pkg.mod"),
                "pkg.mod.helper_fn",
                "helper_fn",
                "pkg/mod.py",
                20,
                Exact
            ),
        ],
        "[{backend}] module-level callers"
    );
    assert!(
        walk("fmt.Println", Direction::Outgoing, 3).await.is_empty(),
        "[{backend}] an external symbol has no callees"
    );
    assert!(
        walk(main, Direction::Incoming, 3).await.is_empty(),
        "[{backend}] main has no callers"
    );
}

/// apply_delta equals a full replace with the reference result, moves the snapshot and the latest commit.
pub async fn deltas(store: &dyn GraphStore) {
    let backend = store.backend();
    let repo = "conformance/deltas";
    load(store, repo, "c1").await;
    let delta = fixture_delta();
    store
        .apply_delta(repo, "c1", "c2", &delta)
        .await
        .unwrap_or_else(|e| panic!("[{backend}] apply_delta: {e}"));
    let mut expected = fixture_graph();
    apply_delta_to_graph(&mut expected, &delta);
    canonicalize(&mut expected);
    let c2 = Snapshot::new(repo, "c2");
    assert_eq!(
        store.export(&c2).await.expect("export"),
        expected,
        "[{backend}] delta result"
    );
    assert_eq!(
        store.latest_commit(repo).await.expect("latest"),
        Some("c2".to_owned()),
        "[{backend}] latest commit moves"
    );
    assert!(
        matches!(
            store.export(&Snapshot::new(repo, "c1")).await,
            Err(StoreError::SnapshotNotFound { .. })
        ),
        "[{backend}] the old snapshot is gone"
    );

    // Queries see the new graph.
    let callers = store
        .traverse_calls(
            &c2,
            "example.com/app/brain.MockPlanner.Plan",
            Direction::Incoming,
            1,
        )
        .await
        .expect("callers");
    assert_eq!(callers.len(), 1, "[{backend}] new dynamic edge");
    assert_eq!(callers[0].line, 22);
    let gone = store
        .search(&c2, &SymbolQuery::name("StubPlanner", 10))
        .await
        .expect("search");
    assert_eq!(gone.total, 0, "[{backend}] removed symbol");
    let gone = store
        .search(&c2, &SymbolQuery::name("helper_fn", 10))
        .await
        .expect("search");
    assert_eq!(gone.total, 0, "[{backend}] deleted file");
    let init = store
        .symbols(&c2, &["example.com/app/cmd.init".to_owned()])
        .await
        .expect("symbols");
    assert_eq!(
        init.len(),
        2,
        "[{backend}] unchanged files keep their symbols"
    );

    // In place, and a second delta on top: `brain/stub.go` is deleted, and `cmd/main.go`, whose
    // dynamic call reached a method of it, is re-indexed without that edge (as the indexer lists
    // the files with edges into a changed file, so that no edge is left pointing at nothing).
    let deleted: Vec<String> = expected
        .symbols
        .iter()
        .filter(|s| s.file == "brain/stub.go")
        .map(|s| s.qname.clone())
        .collect();
    let second = GraphDelta {
        files: vec!["brain/stub.go".into(), "cmd/main.go".into()],
        symbols: expected
            .symbols
            .iter()
            .filter(|s| s.file == "cmd/main.go")
            .cloned()
            .collect(),
        edges: expected
            .edges
            .iter()
            .filter(|e| e.file == "cmd/main.go")
            .filter(|e| e.to.as_ref().is_none_or(|to| !deleted.contains(to)))
            .cloned()
            .collect(),
        ..GraphDelta::default()
    };
    store
        .apply_delta(repo, "c2", "c2", &second)
        .await
        .expect("in-place delta");
    apply_delta_to_graph(&mut expected, &second);
    canonicalize(&mut expected);
    assert_eq!(
        store.export(&c2).await.expect("export"),
        expected,
        "[{backend}] in-place delta"
    );

    // Re-indexing from scratch gives the same graph as the deltas.
    store
        .replace_graph(repo, "c3", &expected)
        .await
        .expect("replace");
    assert_eq!(
        store
            .export(&Snapshot::new(repo, "c3"))
            .await
            .expect("export"),
        expected,
        "[{backend}] full replace equals incremental"
    );
    assert_eq!(
        store.latest_commit(repo).await.expect("latest"),
        Some("c3".to_owned()),
        "[{backend}] latest after replace"
    );
    // Applying onto an existing target commit replaces it.
    store
        .apply_delta(repo, "c2", "c3", &GraphDelta::default())
        .await
        .expect("delta onto existing commit");
    assert_eq!(
        store
            .export(&Snapshot::new(repo, "c3"))
            .await
            .expect("export"),
        expected
    );
    assert!(
        store
            .delete_snapshot(&Snapshot::new(repo, "c3"))
            .await
            .expect("delete"),
        "[{backend}] delete existing"
    );
    assert!(
        !store
            .delete_snapshot(&Snapshot::new(repo, "c3"))
            .await
            .expect("delete"),
        "[{backend}] delete missing"
    );
    assert_eq!(
        store.latest_commit(repo).await.expect("latest"),
        None,
        "[{backend}] no snapshot left"
    );
}

/// Repositories and commits never see each other's symbols.
pub async fn namespaces(store: &dyn GraphStore) {
    let backend = store.backend();
    let a = load(store, "conformance/ns-a", "c1").await;
    let other = Graph {
        symbols: vec![sym(
            "other.Plan",
            "Plan",
            SymbolKind::Function,
            "other.py",
            1,
            2,
            None,
            None,
        )],
        edges: vec![edge(
            EdgeKind::Calls,
            "other.Plan",
            Some("example.com/app/brain.helper"),
            "helper",
            "other.py",
            2,
            Confidence::Exact,
        )],
    };
    store
        .replace_graph("conformance/ns-b", "c1", &other)
        .await
        .expect("replace");
    store
        .replace_graph("conformance/ns-a", "c0", &other)
        .await
        .expect("replace");
    let page = store
        .search(&a, &SymbolQuery::name("plan", 10))
        .await
        .expect("search");
    assert_eq!(
        page.total, 3,
        "[{backend}] other repositories and commits are invisible"
    );
    let callers = store
        .traverse_calls(&a, "example.com/app/brain.helper", Direction::Incoming, 1)
        .await
        .expect("callers");
    assert_eq!(callers.len(), 2, "[{backend}] edges are namespaced");
    assert_eq!(
        store
            .latest_commit("conformance/ns-a")
            .await
            .expect("latest"),
        Some("c0".to_owned()),
        "[{backend}] the most recent replace wins"
    );
    assert_eq!(
        store
            .latest_commit("conformance/none")
            .await
            .expect("latest"),
        None
    );
}

/// Every query on a snapshot that is not stored fails with SnapshotNotFound.
pub async fn missing_snapshots(store: &dyn GraphStore) {
    let backend = store.backend();
    let snap = Snapshot::new("conformance/missing", "c1");
    let not_found = |r: Result<(), StoreError>, what: &str| {
        assert!(
            matches!(r, Err(StoreError::SnapshotNotFound { .. })),
            "[{backend}] {what} on a missing snapshot: {r:?}"
        );
    };
    not_found(
        store
            .search(&snap, &SymbolQuery::name("x", 1))
            .await
            .map(drop),
        "search",
    );
    not_found(
        store.symbols(&snap, &["x".into()]).await.map(drop),
        "symbols",
    );
    not_found(store.children(&snap, "x").await.map(drop), "children");
    not_found(
        store
            .edges(&snap, "x", Direction::Incoming, &[])
            .await
            .map(drop),
        "edges",
    );
    not_found(
        store
            .traverse_calls(&snap, "x", Direction::Outgoing, 1)
            .await
            .map(drop),
        "traverse",
    );
    not_found(store.export(&snap).await.map(drop), "export");
    not_found(
        store
            .apply_delta("conformance/missing", "c1", "c2", &GraphDelta::default())
            .await,
        "apply_delta",
    );
}
