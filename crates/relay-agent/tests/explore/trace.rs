//! The explore's run trace: a stage begin/end around each explore and one `tool_call` event per
//! tool call, in call order, failures included and marked, arguments capped; argument values only
//! with `[trace] record_argument_values`.

use relay_agent::explore::{ExploreConfig, ExploreRequest, Thoroughness};
use relay_agent::llm::scripted::ScriptedLlm;
use relay_agent::trace::{
    ArgumentValues, ERROR_NOT_RECORDED, MAX_TRACE_TEXT_CHARS, MemoryTraceSink, TraceKind, Tracer,
};
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn stages_and_tool_calls_are_traced_in_order() {
    let repo = checkout();
    let long_pattern = "x".repeat(500);
    let server = ScriptedLlm::start(vec![
        call("grep", json!({"pattern": "Plan\\(\\)"})),
        call("read", json!({"path": "no/such/file.go"})),
        call("grep", json!({"pattern": long_pattern})),
        submit(
            "Planner.Plan is at pkg/planner/plan.go:7.",
            json!([good_citation()]),
            "high",
        ),
    ])
    .await;
    let sink = MemoryTraceSink::new();
    let tracer = Tracer::new(sink.clone()).with_argument_values(ArgumentValues::Recorded);
    let agent = agent(&server, repo.path(), ExploreConfig::default())
        .await
        .with_tracer(&tracer);
    let report = explore(&agent).await;

    let events = sink.events();
    let kinds: Vec<(TraceKind, &str)> = events
        .iter()
        .map(|e| (e.kind, e.payload["tool"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(
        kinds,
        [
            (TraceKind::Stage, ""),
            (TraceKind::LlmCall, ""),
            (TraceKind::ToolStart, "grep"),
            (TraceKind::ToolCall, "grep"),
            (TraceKind::LlmCall, ""),
            (TraceKind::ToolStart, "read"),
            (TraceKind::ToolCall, "read"),
            (TraceKind::LlmCall, ""),
            (TraceKind::ToolStart, "grep"),
            (TraceKind::ToolCall, "grep"),
            (TraceKind::LlmCall, ""),
            (TraceKind::Stage, ""),
        ]
    );
    // The explore's own LLM calls carry its name, not just the role.
    assert!(events.iter().all(|e| e.agent == "explore#1"), "{events:?}");
    assert_eq!(events[1].payload["role"], "explore");
    assert_eq!(events[0].payload["phase"], "begin");
    assert_eq!(events[3].payload["ok"], true);
    assert_eq!(events[6].payload["ok"], false);
    assert!(events[6].payload["error"].as_str().is_some());
    // Each end event repeats its start's id; the ids are distinct.
    let mut ids = Vec::new();
    for pair in [2, 5, 8] {
        let id = events[pair].payload["call_id"].as_str().unwrap().to_owned();
        assert_eq!(events[pair + 1].payload["call_id"], id.as_str());
        ids.push(id);
    }
    ids.dedup();
    assert_eq!(ids.len(), 3, "{ids:?}");
    for at in [8, 9] {
        let args = events[at].payload["args"].as_str().unwrap();
        assert!(args.chars().count() <= MAX_TRACE_TEXT_CHARS, "{args}");
    }
    let end = &events[11].payload;
    assert_eq!(end["phase"], "end");
    assert_eq!(end["stop"], report.stop.as_str());
    assert_eq!(end["tool_calls"], 3);
    assert_eq!(end["iterations"], report.iterations);
    // The final event lists the tools called, in order, and the elapsed time.
    assert_eq!(end["tools"], json!(["grep", "read", "grep"]));
    assert!(end["elapsed_ms"].as_u64().is_some(), "{end}");
}

/// A turn of several tool calls is a long step: a `progress` event after each call (done/total).
#[tokio::test]
async fn a_turn_of_several_calls_reports_its_progress() {
    let repo = checkout();
    let server = ScriptedLlm::start(vec![
        relay_agent::llm::scripted::ScriptedReply::tool_calls(vec![
            ("grep", json!({"pattern": "Plan"})),
            ("read", json!({"path": "pkg/planner/plan.go"})),
            ("tree", json!({})),
        ]),
        submit("Plan is at plan.go:7.", json!([good_citation()]), "high"),
    ])
    .await;
    let sink = MemoryTraceSink::new();
    let agent = agent(&server, repo.path(), ExploreConfig::default())
        .await
        .with_tracer(&Tracer::new(sink.clone()));
    explore(&agent).await;
    let progress: Vec<(u64, u64)> = sink
        .events()
        .iter()
        .filter(|e| e.kind == TraceKind::Progress)
        .map(|e| {
            (
                e.payload["done"].as_u64().unwrap(),
                e.payload["total"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(progress, [(1, 3), (2, 3), (3, 3)]);
}

#[tokio::test]
async fn parallel_explores_are_named_by_position() {
    let repo = checkout();
    let server = ScriptedLlm::start(vec![
        submit(
            "a at pkg/planner/plan.go:7",
            json!([good_citation()]),
            "high",
        ),
        submit(
            "b at pkg/planner/plan.go:7",
            json!([good_citation()]),
            "high",
        ),
    ])
    .await;
    let sink = MemoryTraceSink::new();
    let config = ExploreConfig {
        max_parallel_explores: 1,
        ..ExploreConfig::default()
    };
    let agent = agent(&server, repo.path(), config)
        .await
        .with_tracer(&Tracer::new(sink.clone()));
    let requests = vec![
        ExploreRequest::new("first?", Thoroughness::Quick),
        ExploreRequest::new("second?", Thoroughness::Quick),
    ];
    let reports = agent.explore_all(requests).await;
    assert!(reports.iter().all(Result::is_ok));
    let names: Vec<String> = sink.events().iter().map(|e| e.agent.clone()).collect();
    assert_eq!(
        names,
        [
            "explore#1",
            "explore#1",
            "explore#1",
            "explore#2",
            "explore#2",
            "explore#2"
        ]
    );
}

/// By default the trace keeps a tool call's argument names, never their values (a private
/// repository's patterns and paths are its data), nor an error text that quotes them; with
/// `[trace] record_argument_values` it keeps both.
#[tokio::test]
async fn tool_arguments_are_traced_as_names_unless_values_are_recorded() {
    let repo = checkout();
    let events = traced(repo.path(), ArgumentValues::default()).await;
    assert_eq!(events.len(), 4);
    let all = serde_json::to_string(&events).unwrap();
    assert!(
        !all.contains("PrivatePattern") && !all.contains("private-file"),
        "{all}"
    );
    assert_eq!(events[1].payload["arg_keys"], json!(["pattern"]));
    assert_eq!(events[1].payload["args"], "{pattern}");
    assert_eq!(events[2].payload["args"], "{path}");
    assert_eq!(events[3].payload["ok"], false);
    assert_eq!(events[3].payload["error"], ERROR_NOT_RECORDED);

    let events = traced(repo.path(), ArgumentValues::Recorded).await;
    assert_eq!(events[1].payload["args"], r#"{"pattern":"PrivatePattern"}"#);
    assert_eq!(events[1].payload["arg_keys"], json!(["pattern"]));
    let error = events[3].payload["error"].as_str().unwrap();
    assert!(error.contains("internal/private-file.go"), "{error}");
}

/// The tool events of an explore that greps, reads a missing file and reports, traced with `values`.
async fn traced(
    root: &std::path::Path,
    values: ArgumentValues,
) -> Vec<relay_agent::trace::TraceEvent> {
    let server = ScriptedLlm::start(vec![
        call("grep", json!({"pattern": "PrivatePattern"})),
        call("read", json!({"path": "internal/private-file.go"})),
        submit("Plan is at plan.go:7.", json!([good_citation()]), "high"),
    ])
    .await;
    let sink = MemoryTraceSink::new();
    let tracer = Tracer::new(sink.clone()).with_argument_values(values);
    let agent = agent(&server, root, ExploreConfig::default())
        .await
        .with_tracer(&tracer);
    explore(&agent).await;
    sink.events()
        .into_iter()
        .filter(|e| matches!(e.kind, TraceKind::ToolStart | TraceKind::ToolCall))
        .collect()
}
