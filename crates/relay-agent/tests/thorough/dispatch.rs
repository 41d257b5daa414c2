//! `explore(thoroughness: thorough)` runs thorough mode: its report in the explore's shape, its
//! events in the run trace, and the traversal state carried into the agent's next thorough query.

use std::sync::Arc;

use relay_agent::explore::{
    Confidence, ExploreAgent, ExploreConfig, ExploreRequest, ReportOrigin, StopReason, Thoroughness,
};
use relay_agent::llm::scripted::ScriptedLlm;
use relay_agent::trace::{MemoryTraceSink, TraceKind, Tracer};
use serde_json::json;

use crate::support::*;

fn one_stage(
    goal: &str,
    path: &str,
    line: u32,
    quote: &str,
) -> Vec<relay_agent::llm::scripted::ScriptedReply> {
    vec![
        intent(&[("g1", goal)]),
        plan(&["g1"], json!([step("read", json!({"path": path}))])),
        synthesis(json!([claim(
            goal,
            &["g1"],
            json!([cite(path, line, line, quote)])
        )])),
        critic("APPROVED", &[("g1", "satisfied")], json!({})),
    ]
}

#[tokio::test]
async fn a_thorough_explore_is_the_multi_stage_mode_traced_as_its_explore() {
    let dir = checkout();
    let mut script = one_stage(
        "Enqueue queues jobs",
        "queue/queue.go",
        4,
        "func Enqueue(body []byte) error {",
    );
    script.extend(one_stage(
        "Run posts the comment",
        "worker/worker.go",
        7,
        "return tracker.PostComment(\"done\")",
    ));
    let server = ScriptedLlm::start(script).await;
    let sink = MemoryTraceSink::new();
    let agent = ExploreAgent::new(
        client(&server),
        Arc::new(toolbox(dir.path()).await),
        ExploreConfig::default(),
    )
    .with_tracer(&Tracer::new(sink.clone()));

    let report = agent
        .explore(ExploreRequest::new(
            "where are jobs queued?",
            Thoroughness::Thorough,
        ))
        .await
        .unwrap();
    assert_eq!(report.origin, ReportOrigin::Integrated);
    assert_eq!(report.stop, StopReason::GoalsDone);
    assert_eq!(report.confidence, Confidence::High);
    assert_eq!(report.iterations, 4);
    assert_eq!(report.evidence.len(), 1);
    assert_eq!(report.evidence[0].to_string(), "queue/queue.go:4");
    assert!(
        report
            .answer
            .starts_with("- Enqueue queues jobs [queue/queue.go:4]")
    );
    assert_eq!(report.tool_calls.len(), 1);
    assert!(report.unanswered.is_empty());

    // Everything is in the trace as this explore's: stage transitions, LLM calls, the tool call,
    // goals and the route.
    let events = sink.events();
    assert!(events.iter().all(|e| e.agent == "explore#1"), "{events:?}");
    let stage_phases: Vec<String> = events
        .iter()
        .filter(|e| e.kind == TraceKind::Stage)
        .map(|e| {
            format!(
                "{}:{}",
                e.payload["stage"].as_str().unwrap(),
                e.payload["phase"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        stage_phases,
        [
            "explore:begin",
            "thorough:perception",
            "thorough:intent",
            "intent:begin",
            "intent:end",
            "thorough:stage",
            "navigator:begin",
            "navigator:end",
            "thorough:traverser",
            "synthesizer:begin",
            "synthesizer:end",
            "critic:begin",
            "critic:end",
            "thorough:end",
            "explore:end"
        ]
    );
    let count = |kind: TraceKind| events.iter().filter(|e| e.kind == kind).count();
    assert_eq!(count(TraceKind::LlmCall), 4);
    assert_eq!(count(TraceKind::ToolCall), 1);
    assert!(events.iter().any(|e| e.payload["decision"] == "route"
        && e.payload["route"] == json!({"integrate": "goals_done"})));

    // The next thorough query of this agent (same job, same issue) starts from what was explored.
    let second = agent
        .explore(ExploreRequest::new(
            "who posts the comment?",
            Thoroughness::Thorough,
        ))
        .await
        .unwrap();
    assert_eq!(second.stop, StopReason::GoalsDone);
    let navigator = user_text(&server.requests()[5]);
    assert!(
        navigator.contains("- files: queue/queue.go\n"),
        "{navigator}"
    );
    let state = agent.traversal_state();
    let files: Vec<&String> = state.files.iter().collect();
    assert_eq!(files, ["queue/queue.go", "worker/worker.go"]);
}

#[tokio::test]
async fn quick_and_medium_explores_still_run_the_single_loop() {
    let dir = checkout();
    let server = ScriptedLlm::start(vec![relay_agent::llm::scripted::ScriptedReply::tool_calls(vec![(
        "submit_report",
        json!({"answer": "Enqueue", "evidence": [{"path": "queue/queue.go", "start_line": 4, "end_line": 4}],
               "confidence": "high", "unanswered": []}),
    )])])
    .await;
    let agent = ExploreAgent::new(
        client(&server),
        Arc::new(toolbox(dir.path()).await),
        ExploreConfig::default(),
    );
    let report = agent
        .explore(ExploreRequest::new(
            "where are jobs queued?",
            Thoroughness::Medium,
        ))
        .await
        .unwrap();
    assert_eq!(report.origin, ReportOrigin::Submitted);
    assert!(server.requests()[0].body["tools"].is_array());
}
