//! The `codegraph` operations' exact output texts, on the conformance fixture in the in-memory store.

use relay_codegraph::ops::{CodegraphArgs, GraphScope, execute};
use relay_codegraph::store::memory::MemoryStore;
use relay_codegraph::store::{GraphStore, conformance};
use serde_json::json;

async fn store() -> MemoryStore {
    let store = MemoryStore::new();
    store
        .replace_graph("app", "c1", &conformance::fixture_graph())
        .await
        .expect("load fixture");
    store
}

#[track_caller]
fn args(value: serde_json::Value) -> CodegraphArgs {
    serde_json::from_value(value).expect("valid tool arguments")
}

async fn run(value: serde_json::Value) -> String {
    let store = store().await;
    execute(Some(&store), &GraphScope::latest("app"), &args(value)).await
}

#[tokio::test]
async fn search_with_kind_filter() {
    let out = run(json!({"operation": "search", "name": "plan", "kind": "method"})).await;
    assert_eq!(
        out,
        r#"Found 3 symbols matching "plan" (kind=method):

  example.com/app/brain.Planner.Plan (brain/planner.go:12)
  example.com/app/brain.LLMPlanner.Plan (brain/planner.go:30)
  example.com/app/brain.StubPlanner.Plan (brain/stub.go:9)

Use qname with callers/callees/implementations/usages operations."#
    );
}

#[tokio::test]
async fn search_truncates_at_ten() {
    let out = run(json!({"operation": "search", "name": "*"})).await;
    assert!(
        out.starts_with("Found 23 symbols matching \"*\":\n\n"),
        "{out}"
    );
    assert_eq!(
        out.lines().filter(|l| l.starts_with("  ")).count(),
        10,
        "{out}"
    );
    assert!(
        out.ends_with(
            "\nShowing 10 of 23 symbols matching \"*\". Refine with kind or file filter.\n\
             Use qname with callers/callees/implementations/usages operations."
        ),
        "{out}"
    );
}

#[tokio::test]
async fn search_by_qname_suffix_and_file() {
    let out = run(json!({"operation": "search", "name": "Planner.Plan", "file": "stub"})).await;
    assert_eq!(
        out,
        r#"Found 1 symbol matching "Planner.Plan" (file=stub):

  example.com/app/brain.StubPlanner.Plan (brain/stub.go:9)

Use qname with callers/callees/implementations/usages operations."#
    );
}

#[tokio::test]
async fn search_without_results_explains_why() {
    let out = run(json!({"operation": "search", "name": "nope"})).await;
    assert_eq!(
        out,
        r#"No symbols found matching "nope".

Possible reasons:
  - it is not indexed: only Go and Python code is indexed, and locals are not symbols
  - the name is spelled differently: matching is case-insensitive and `*` is a wildcard (e.g. "Plan*", "*Handler")
  - the code changed since the last index: re-index the repository
Use grep to search the text instead."#
    );
    let filtered = run(json!({"operation": "search", "name": "plan", "kind": "class"})).await;
    assert!(
        filtered.contains("  - the kind or file filter excludes it (try again without filters)\n"),
        "{filtered}"
    );
}

#[tokio::test]
async fn callers_depth_three_labels_dynamic_edges() {
    let out =
        run(json!({"operation": "callers", "qname": "example.com/app/brain.helper", "depth": 3}))
            .await;
    assert_eq!(
        out,
        r#"Callers of example.com/app/brain.helper (depth 3) - 3 results:

  Plan (method)
    qname: example.com/app/brain.LLMPlanner.Plan
    file: brain/planner.go:30
    signature: func (p *LLMPlanner) Plan(ctx context.Context) error
    call site: brain/planner.go:32, brain/planner.go:35

  run (function) [depth 2] [dynamic: interface call, a type that flows to the receiver]
    qname: example.com/app/cmd.run
    file: cmd/main.go:20
    signature: func run(p brain.Planner) error
    call site: cmd/main.go:22 (calls example.com/app/brain.LLMPlanner.Plan)

  main (function) [depth 3]
    qname: example.com/app/cmd.main
    file: cmd/main.go:10
    signature: func main()
    call site: cmd/main.go:12 (calls example.com/app/cmd.run)

Use read(path, offset) to see the code."#
    );
}

#[tokio::test]
async fn depth_is_clamped() {
    let deep =
        run(json!({"operation": "callers", "qname": "example.com/app/brain.helper", "depth": 99}))
            .await;
    assert!(
        deep.starts_with("Callers of example.com/app/brain.helper (depth 3) - 3 results:"),
        "{deep}"
    );
    let shallow =
        run(json!({"operation": "callers", "qname": "example.com/app/brain.helper", "depth": -4}))
            .await;
    assert!(
        shallow.starts_with("Callers of example.com/app/brain.helper (depth 1) - 1 result:"),
        "{shallow}"
    );
    let default =
        run(json!({"operation": "callers", "qname": "example.com/app/brain.helper"})).await;
    assert_eq!(default, shallow);
    let string_depth =
        run(json!({"operation": "callers", "qname": "example.com/app/brain.helper", "depth": "2"}))
            .await;
    assert!(
        string_depth.starts_with("Callers of example.com/app/brain.helper (depth 2) - 2 results:"),
        "{string_depth}"
    );
}

#[tokio::test]
async fn callees_show_external_and_unresolved_targets() {
    let out = run(json!({"operation": "callees", "qname": "example.com/app/cmd.main"})).await;
    assert_eq!(
        out,
        r#"Callees of example.com/app/cmd.main (depth 1) - 4 results:

  NewLLMPlanner (function)
    qname: example.com/app/brain.NewLLMPlanner
    file: brain/planner.go:25
    signature: func NewLLMPlanner() *LLMPlanner
    call site: cmd/main.go:11

  run (function)
    qname: example.com/app/cmd.run
    file: cmd/main.go:20
    signature: func run(p brain.Planner) error
    call site: cmd/main.go:12

  Println (not indexed)
    qname: fmt.Println
    call site: cmd/main.go:13

  Exit (unresolved)
    call site: cmd/main.go:14

Use read(path, offset) to see the code."#
    );
    let deeper =
        run(json!({"operation": "callees", "qname": "example.com/app/cmd.main", "depth": 2})).await;
    assert!(
        deeper.starts_with("Callees of example.com/app/cmd.main (depth 2) - 7 results:"),
        "{deeper}"
    );
    assert!(
        deeper.contains(
            "  Plan (method) [depth 2] [dynamic: interface call, a type that flows to the receiver]\n    \
             qname: example.com/app/brain.StubPlanner.Plan\n"
        ),
        "{deeper}"
    );
    assert!(
        deeper.contains("call site: cmd/main.go:22 (called from example.com/app/cmd.run)"),
        "{deeper}"
    );
}

#[tokio::test]
async fn callers_of_an_external_symbol() {
    let out = run(json!({"operation": "callers", "qname": "fmt.Println"})).await;
    assert!(
        out.starts_with(
            "Callers of fmt.Println (depth 1) - 1 result:\n\
             (this qname is not a symbol of the index: an external or generated symbol)\n"
        ),
        "{out}"
    );
}

#[tokio::test]
async fn no_callers() {
    let out = run(json!({"operation": "callers", "qname": "example.com/app/cmd.main"})).await;
    assert_eq!(
        out,
        "No callers found for example.com/app/cmd.main (depth 1). It may be unused, an entry point, \
         or called only in ways the indexer could not resolve (reflection, function values, code \
         outside the index).\nUse grep to search the text instead."
    );
}

#[tokio::test]
async fn implementations_of_an_interface() {
    let out =
        run(json!({"operation": "implementations", "qname": "example.com/app/brain.Planner"}))
            .await;
    assert_eq!(
        out,
        r#"Implementations of example.com/app/brain.Planner (interface):

Implemented by - 2 results:

  LLMPlanner (struct)
    qname: example.com/app/brain.LLMPlanner
    file: brain/planner.go:20
    signature: type LLMPlanner struct
    method: example.com/app/brain.LLMPlanner.Plan (brain/planner.go:30)

  StubPlanner (struct)
    qname: example.com/app/brain.StubPlanner
    file: brain/stub.go:5
    signature: type StubPlanner struct{}
    method: example.com/app/brain.StubPlanner.Plan (brain/stub.go:9)

Use read(path, offset) to see the code."#
    );
}

#[tokio::test]
async fn implementations_of_a_type_a_method_and_a_class() {
    let out =
        run(json!({"operation": "implementations", "qname": "example.com/app/brain.LLMPlanner"}))
            .await;
    assert_eq!(
        out,
        r#"Implementations of example.com/app/brain.LLMPlanner (struct):

Implements - 1 result:

  Planner (interface)
    qname: example.com/app/brain.Planner
    file: brain/planner.go:10
    signature: type Planner interface

Use read(path, offset) to see the code."#
    );
    let method =
        run(json!({"operation": "implementations", "qname": "example.com/app/brain.Planner.Plan"}))
            .await;
    assert!(method.starts_with("Implementations of example.com/app/brain.Planner.Plan (method):\n\nImplemented by - 2 results:\n"), "{method}");
    assert!(
        method.contains("    qname: example.com/app/brain.StubPlanner.Plan\n"),
        "{method}"
    );
    let concrete = run(
        json!({"operation": "implementations", "qname": "example.com/app/brain.LLMPlanner.Plan"}),
    )
    .await;
    assert!(concrete.contains("Implements - 1 result:\n\n  Plan (method)\n    qname: example.com/app/brain.Planner.Plan\n"), "{concrete}");
    let class = run(json!({"operation": "implementations", "qname": "pkg.mod.Child"})).await;
    assert_eq!(
        class,
        r#"Implementations of pkg.mod.Child (class):

Subclasses - 0 results:
  (none)

Base classes - 1 result:

  Base (class)
    qname: pkg.mod.Base
    file: pkg/mod.py:4
    signature: class Base:

Use read(path, offset) to see the code."#
    );
    let function =
        run(json!({"operation": "implementations", "qname": "example.com/app/cmd.main"})).await;
    assert_eq!(
        function,
        "No implementations found for example.com/app/cmd.main (function). The implementations \
         operation applies to interfaces, concrete types, classes and methods.\n\
         Use grep to search the text instead."
    );
}

#[tokio::test]
async fn usages_of_a_type() {
    let out =
        run(json!({"operation": "usages", "qname": "example.com/app/brain.LLMPlanner"})).await;
    assert_eq!(
        out,
        r#"Usages of example.com/app/brain.LLMPlanner (struct) - 2 results:

  brain/planner.go:25  in example.com/app/brain.NewLLMPlanner (function) [uses]
  brain/planner.go:50  in example.com/app/brain.helper (function) [uses]

Use read(path, offset) to see the code."#
    );
    let constant =
        run(json!({"operation": "usages", "qname": "example.com/app/brain.MaxSteps"})).await;
    assert!(
        constant.contains(
            "  brain/planner.go:33  in example.com/app/brain.LLMPlanner.Plan (method) [uses]\n"
        ),
        "{constant}"
    );
    let package = run(json!({"operation": "usages", "qname": "example.com/app/brain"})).await;
    assert!(
        package.contains("  cmd/main.go:3  in example.com/app/cmd (package) [imports]\n"),
        "{package}"
    );
}

#[tokio::test]
async fn resolve_lists_candidates() {
    let out = run(json!({"operation": "resolve", "name": "plan"})).await;
    assert_eq!(
        out,
        r#""plan" may refer to 3 symbols:

  example.com/app/brain.Planner.Plan (method, brain/planner.go:12)
  example.com/app/brain.LLMPlanner.Plan (method, brain/planner.go:30)
  example.com/app/brain.StubPlanner.Plan (method, brain/stub.go:9)

Use qname with callers/callees/implementations/usages operations."#
    );
    let dotted = run(json!({"operation": "resolve", "name": "mod.Child"})).await;
    assert!(
        dotted.contains("  pkg.mod.Child (class, pkg/mod.py:8)\n"),
        "{dotted}"
    );
}
