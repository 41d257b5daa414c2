use std::sync::Arc;

use relay_agent::explore::{ExploreConfig, StopReason};
use relay_agent::llm::ToolCall;
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::toolbox::{GraphAccess, Toolbox};
use relay_codegraph::index::{IndexOptions, index_repository};
use relay_codegraph::ops::GraphScope;
use relay_codegraph::store::GraphStore;
use relay_codegraph::store::postgres::PostgresStore;
use serde_json::json;

use crate::support::*;

fn codegraph_call(arguments: serde_json::Value) -> ToolCall {
    ToolCall {
        id: "call_1".to_owned(),
        name: "codegraph".to_owned(),
        arguments: arguments.to_string(),
    }
}

#[tokio::test]
async fn codegraph_answers_from_the_in_memory_graph() {
    let repo = checkout();
    let graph = relay_agent::toolbox::index_in_memory(repo.path(), None)
        .await
        .unwrap();
    let toolbox = Toolbox::new(repo.path(), Some(graph), Default::default()).unwrap();
    let search = toolbox
        .call(&codegraph_call(
            json!({"operation": "search", "name": "Plan", "kind": "method"}),
        ))
        .await;
    assert!(search.record.is_ok(), "{}", search.result.content);
    let qname = search
        .result
        .content
        .lines()
        .find_map(|line| {
            line.split_whitespace()
                .next()
                .filter(|q| q.ends_with("Planner.Plan"))
        })
        .unwrap_or_else(|| panic!("no qname in {}", search.result.content))
        .to_owned();
    let callers = toolbox
        .call(&codegraph_call(
            json!({"operation": "callers", "qname": qname}),
        ))
        .await;
    assert!(
        callers.result.content.contains("cmd/relay/main.go"),
        "{}",
        callers.result.content
    );
    assert!(
        toolbox.job_usage().tokens_returned > 0,
        "codegraph output charges the job budget"
    );
}

#[tokio::test]
async fn without_a_graph_the_codegraph_tool_is_not_offered() {
    let repo = checkout();
    let toolbox = Toolbox::new(repo.path(), None, Default::default()).unwrap();
    assert_eq!(toolbox.names(), ["grep", "read", "glob", "tree"]);
    let outcome = toolbox
        .call(&codegraph_call(
            json!({"operation": "search", "name": "Plan"}),
        ))
        .await;
    assert!(outcome.result.is_error);
    assert!(outcome.result.content.contains("unknown tool `codegraph`"));
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn codegraph_answers_from_the_postgres_store_in_an_explore(pool: sqlx::PgPool) {
    let repo = checkout();
    let graph = index_repository(repo.path(), &IndexOptions::default())
        .unwrap()
        .graph;
    let store = PostgresStore::new(pool);
    store
        .replace_graph("acme/relay", "c0ffee", &graph)
        .await
        .unwrap();
    let access = GraphAccess::single(Arc::new(store), GraphScope::at("acme/relay", "c0ffee"));
    let server = ScriptedLlm::start(vec![
        call(
            "codegraph",
            json!({"operation": "search", "name": "helper"}),
        ),
        submit("helper is in plan.go.", json!([good_citation()]), "medium"),
    ])
    .await;
    let agent = agent_with_graph(&server, repo.path(), Some(access), ExploreConfig::default());
    let report = explore(&agent).await;
    assert_eq!(report.stop, StopReason::Submitted);
    let result = tool_results(&server.requests()[1]).pop().unwrap();
    assert!(result.contains("pkg/planner/plan.go:11"), "{result}");
}

/// The seed clamps an out-of-range depth to 1-3 instead of refusing it: through the agent's tool
/// call path (schema check included) `5`, `0` and `"2"` all answer, with the clamped depth.
#[tokio::test]
async fn an_out_of_range_depth_is_clamped_on_the_agent_path() {
    let repo = checkout();
    let qname = "example.com/relay/pkg/planner.Planner.Plan";
    let server = ScriptedLlm::start(vec![
        ScriptedReply::tool_calls(vec![
            (
                "codegraph",
                json!({"operation": "callees", "qname": qname, "depth": 5}),
            ),
            (
                "codegraph",
                json!({"operation": "callees", "qname": qname, "depth": 0}),
            ),
            (
                "codegraph",
                json!({"operation": "callees", "qname": qname, "depth": "2"}),
            ),
        ]),
        submit("Plan calls helper.", json!([good_citation()]), "medium"),
    ])
    .await;
    let agent = agent(&server, repo.path(), ExploreConfig::default()).await;
    let report = explore(&agent).await;
    assert_eq!(report.stop, StopReason::Submitted);
    let results = tool_results(&server.requests()[1]);
    assert_eq!(results.len(), 3, "{results:?}");
    for (result, depth) in results.iter().zip([3, 1, 2]) {
        assert!(
            !result.contains("invalid arguments"),
            "the depth is clamped, not refused: {result}"
        );
        assert!(
            result.contains(&format!("(depth {depth})")),
            "depth {depth} expected in {result}"
        );
    }
}

/// The job-time fallback: the store goes away in the middle of a job. The call that finds it gone
/// and every later one answer the seed's "not available, use grep and read" at once, and the
/// explore goes on with the code tools to a submitted report.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_store_that_goes_away_mid_job_leaves_grep_and_read(pool: sqlx::PgPool) {
    let repo = checkout();
    let graph = index_repository(repo.path(), &IndexOptions::default())
        .unwrap()
        .graph;
    let store = PostgresStore::new(pool.clone());
    store
        .replace_graph("acme/relay", "c0ffee", &graph)
        .await
        .unwrap();
    let access = GraphAccess::single(Arc::new(store), GraphScope::at("acme/relay", "c0ffee"));
    let toolbox = Arc::new(Toolbox::new(repo.path(), Some(access), Default::default()).unwrap());
    let before = toolbox
        .call(&codegraph_call(
            json!({"operation": "search", "name": "helper"}),
        ))
        .await;
    assert!(before.record.is_ok(), "{}", before.result.content);

    pool.close().await;
    let server = ScriptedLlm::start(vec![
        call(
            "codegraph",
            json!({"operation": "search", "name": "helper"}),
        ),
        call("codegraph", json!({"operation": "callers", "qname": "x"})),
        call("grep", json!({"pattern": "func helper"})),
        submit("helper is in plan.go.", json!([good_citation()]), "medium"),
    ])
    .await;
    let agent =
        relay_agent::explore::ExploreAgent::new(client(&server), toolbox, ExploreConfig::default());
    let report = explore(&agent).await;
    assert_eq!(report.stop, StopReason::Submitted);
    let results = tool_results(&server.requests()[3]);
    assert_eq!(results.len(), 3, "{results:?}");
    for result in &results[..2] {
        assert!(
            result.contains("not available") && result.contains("Use grep and read"),
            "{result}"
        );
    }
    assert!(results[2].contains("pkg/planner/plan.go"), "{}", results[2]);
}
