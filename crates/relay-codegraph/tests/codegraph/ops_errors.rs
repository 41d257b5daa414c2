//! Error and edge cases of the `codegraph` operations, the JSON rendering and the tool definition.

use relay_codegraph::ops::{
    CodegraphArgs, GraphScope, OpError, Outcome, execute, execute_json, run, tool_definition,
};
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

async fn text(value: serde_json::Value) -> String {
    let store = store().await;
    execute_json(Some(&store), &GraphScope::latest("app"), &value).await
}

#[tokio::test]
async fn no_store_configured() {
    let args = CodegraphArgs {
        operation: "search".into(),
        name: Some("x".into()),
        ..Default::default()
    };
    assert_eq!(
        execute(None, &GraphScope::latest("app"), &args).await,
        "Codegraph is not available. Use grep and read tools instead."
    );
}

#[tokio::test]
async fn unknown_operation_lists_the_valid_ones() {
    assert_eq!(
        text(json!({"operation": "frobnicate"})).await,
        "Unknown operation \"frobnicate\". Valid operations: search, callers, callees, \
         implementations, usages, resolve."
    );
    // Operation names are case-insensitive.
    assert!(
        text(json!({"operation": "Search", "name": "plan"}))
            .await
            .starts_with("Found 3 symbols")
    );
}

#[tokio::test]
async fn missing_parameters() {
    assert_eq!(
        text(json!({"operation": "search"})).await,
        "name parameter required for search"
    );
    assert_eq!(
        text(json!({"operation": "search", "name": "  "})).await,
        "name parameter required for search"
    );
    for op in ["callers", "callees", "implementations", "usages"] {
        assert_eq!(
            text(json!({"operation": op, "name": "Plan"})).await,
            format!("qname parameter required for {op}\nUse search to find the qname first.")
        );
    }
    assert_eq!(
        text(json!({"operation": "resolve"})).await,
        "name parameter required for resolve"
    );
}

#[tokio::test]
async fn invalid_kind() {
    assert_eq!(
        text(json!({"operation": "search", "name": "x", "kind": "banana"})).await,
        "Invalid kind \"banana\". Valid kinds: function, method, struct, interface, class, type, \
         const, var, field, module, package."
    );
    // `module` also finds Go packages.
    let modules = text(json!({"operation": "search", "name": "*", "kind": "module"})).await;
    assert!(
        modules.starts_with("Found 3 symbols matching \"*\" (kind=module):"),
        "{modules}"
    );
}

#[tokio::test]
async fn unknown_qname_suggests_the_closest() {
    assert_eq!(
        text(json!({"operation": "callers", "qname": "example.com/app/brain.Planer.Plan"})).await,
        "Symbol \"example.com/app/brain.Planer.Plan\" not found in the code graph. Closest qnames:\n\
         \n  example.com/app/brain.Planner.Plan\
         \n  example.com/app/brain.LLMPlanner.Plan\
         \n  example.com/app/brain.StubPlanner.Plan\n\
         \nUse search to find the exact qname."
    );
    // Wrong case: the exact qname comes first.
    let out =
        text(json!({"operation": "usages", "qname": "EXAMPLE.com/app/brain.llmplanner"})).await;
    assert!(
        out.contains("Closest qnames:\n\n  example.com/app/brain.LLMPlanner\n"),
        "{out}"
    );
    let out = text(json!({"operation": "implementations", "qname": "zzz"})).await;
    assert_eq!(
        out,
        "Symbol \"zzz\" not found in the code graph. No similar qnames found.\nUse search to find the exact qname."
    );
}

#[tokio::test]
async fn repository_not_indexed() {
    let store = store().await;
    let args = CodegraphArgs {
        operation: "search".into(),
        name: Some("plan".into()),
        ..Default::default()
    };
    assert_eq!(
        execute(Some(&store), &GraphScope::latest("other"), &args).await,
        "No code graph has been indexed for repository other. Use grep and read tools instead."
    );
    assert_eq!(
        execute(Some(&store), &GraphScope::at("app", "c9"), &args).await,
        "No code graph has been indexed for repository app at commit c9. Use grep and read tools instead."
    );
    // Argument mistakes are reported before the missing graph.
    let bad = CodegraphArgs {
        operation: "callers".into(),
        ..Default::default()
    };
    assert!(
        execute(Some(&store), &GraphScope::latest("other"), &bad)
            .await
            .starts_with("qname parameter required")
    );
}

#[tokio::test]
async fn malformed_arguments() {
    let out = text(json!({"name": "x"})).await;
    assert!(
        out.starts_with("Invalid arguments for codegraph: missing field `operation`"),
        "{out}"
    );
    let out = text(json!({"operation": "callers", "qname": "x", "depth": "deep"})).await;
    assert!(out.contains("depth must be an integer"), "{out}");
}

#[tokio::test]
async fn json_rendering() {
    let store = store().await;
    let args: CodegraphArgs = serde_json::from_value(json!({
        "operation": "callers", "qname": "example.com/app/brain.helper", "depth": 2
    }))
    .unwrap();
    let outcome = run(Some(&store), &GraphScope::latest("app"), &args).await;
    let value: serde_json::Value = serde_json::from_str(&outcome.to_json()).unwrap();
    assert_eq!(value["result"], "calls");
    assert_eq!(value["operation"], "callers");
    assert_eq!(value["depth"], 2);
    assert_eq!(value["total"], 2);
    assert_eq!(
        value["results"][0]["qname"],
        "example.com/app/brain.LLMPlanner.Plan"
    );
    assert_eq!(
        value["results"][0]["sites"],
        json!([
            {"file": "brain/planner.go", "line": 32},
            {"file": "brain/planner.go", "line": 35}
        ])
    );
    assert_eq!(value["results"][1]["confidence"], "dynamic");
    assert_eq!(value["results"][1]["dispatch"], "interface");
    assert!(value["results"][0].get("dispatch").is_none());
    assert_eq!(
        value["results"][1]["via"],
        json!(["example.com/app/brain.LLMPlanner.Plan"])
    );

    let outcome = run(None, &GraphScope::latest("app"), &args).await;
    assert_eq!(outcome, Outcome::Error(OpError::Unavailable));
    assert!(outcome.is_error());
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&outcome.to_json()).unwrap(),
        json!({"result": "error", "error": "unavailable"})
    );
}

#[test]
fn tool_definition_for_agents() {
    let (name, description, schema) = tool_definition();
    assert_eq!(name, "codegraph");
    assert!(description.contains("search` first"), "{description}");
    assert!(
        description.contains("then call a relationship operation"),
        "{description}"
    );
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["operation"]));
    let props = &schema["properties"];
    for key in ["operation", "name", "kind", "file", "qname", "depth"] {
        assert!(props.get(key).is_some(), "schema lacks {key}: {schema:#}");
    }
    assert_eq!(
        props["operation"]["enum"],
        json!([
            "search",
            "callers",
            "callees",
            "implementations",
            "usages",
            "resolve"
        ])
    );
    assert_eq!(props["depth"]["minimum"], 1);
    assert_eq!(props["depth"]["maximum"], 3);
    assert!(
        props["kind"]["enum"]
            .as_array()
            .unwrap()
            .contains(&json!("interface"))
    );
}
