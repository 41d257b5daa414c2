//! Go calls through interfaces and function values: the `codegraph` answers list the static
//! call first and then, marked dynamic, exactly the targets whose values flow to the call
//! (`tests/fixtures/godispatch`).

use std::path::Path;

use relay_codegraph::index::{IndexOptions, index_repository};
use relay_codegraph::ops::{CodegraphArgs, GraphScope, execute};
use relay_codegraph::store::GraphStore;
use relay_codegraph::store::memory::MemoryStore;
use serde_json::json;

const PKG: &str = "example.com/shapes/shapes";

async fn callees(function: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/godispatch");
    let graph = index_repository(&root, &IndexOptions::default())
        .expect("index")
        .graph;
    let store = MemoryStore::new();
    store
        .replace_graph("shapes", "c1", &graph)
        .await
        .expect("load");
    let args: CodegraphArgs = serde_json::from_value(
        json!({"operation": "callees", "qname": format!("{PKG}.{function}")}),
    )
    .expect("args");
    execute(Some(&store), &GraphScope::latest("shapes"), &args).await
}

/// `all[i].Area()` on an element of a named slice of `Shape`: the circle and the square put in
/// the slice by `Main`, not `Blob`, which implements `Shape` but never reaches the call.
#[tokio::test]
async fn an_interface_call_reaches_exactly_the_types_that_flow_there() {
    let out = callees("Total").await;
    assert_eq!(
        out,
        r#"Callees of example.com/shapes/shapes.Total (depth 1) - 3 results:

  Area (method)
    qname: example.com/shapes/shapes.Shape.Area
    file: shapes/shapes.go:6
    signature: Area() float64
    call site: shapes/shapes.go:40

  Area (method) [dynamic: interface call, a type that flows to the receiver]
    qname: example.com/shapes/shapes.Circle.Area
    file: shapes/shapes.go:18
    signature: func (c *Circle) Area() float64
    call site: shapes/shapes.go:40

  Area (method) [dynamic: interface call, a type that flows to the receiver]
    qname: example.com/shapes/shapes.Square.Area
    file: shapes/shapes.go:25
    signature: func (s Square) Area() float64
    call site: shapes/shapes.go:40

Use read(path, offset) to see the code."#
    );
}

/// `n.Name()` on a `Named` (which embeds `Shape`): only the `*Circle` passed by `Main`.
#[tokio::test]
async fn a_call_on_a_narrow_interface_reaches_what_flows_to_the_parameter() {
    let out = callees("Describe").await;
    assert!(
        out.contains("qname: example.com/shapes/shapes.Named.Name\n"),
        "{out}"
    );
    assert!(
        out.contains("qname: example.com/shapes/shapes.Circle.Name\n"),
        "{out}"
    );
    assert!(!out.contains("Square.Name"), "{out}");
    assert!(!out.contains("Area"), "{out}");
}

/// A function stored in a field and called through it; `err.Error()` on the predeclared
/// `error` holding the `failure` that `fail` returns.
#[tokio::test]
async fn function_values_and_errors_reach_what_flows_there() {
    let out = callees("Job.Do").await;
    assert!(
        out.contains("  step (function) [dynamic: function value that flows to the call]\n"),
        "{out}"
    );
    let out = callees("Check").await;
    assert!(
        out.contains(
            "  Error (method) [dynamic: interface call, a type that flows to the receiver]\n    \
             qname: example.com/shapes/shapes.failure.Error\n"
        ),
        "{out}"
    );
}
