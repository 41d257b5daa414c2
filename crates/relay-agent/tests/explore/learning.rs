//! Tool-sequence learning at the agent: which explores are observed and with which calls, and
//! where the hint goes.

use std::sync::{Arc, Mutex};

use relay_agent::explore::{
    ExploreConfig, ExploreObserver, ObservedCall, ObservedRun, ReportOrigin, ToolHint,
};
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use serde_json::json;

use crate::support::*;

#[derive(Debug, Default)]
struct Recorder(Mutex<Vec<ObservedRun>>);

#[async_trait::async_trait]
impl ExploreObserver for Recorder {
    async fn observe(&self, run: &ObservedRun) {
        self.0.lock().unwrap().push(run.clone());
    }
}

fn tools(run: &ObservedRun) -> Vec<&str> {
    run.calls.iter().map(|c| c.tool.as_str()).collect()
}

#[tokio::test]
async fn a_reported_explore_is_observed_with_its_successful_calls_in_order() {
    let repo = checkout();
    let server = ScriptedLlm::start(vec![
        call("codegraph", json!({"operation": "search", "name": "Plan"})),
        call("read", json!({"path": "no/such/file.go"})),
        call("grep", json!({"pattern": "Plan\\(\\)"})),
        submit(
            "Plan is at pkg/planner/plan.go:7.",
            json!([good_citation()]),
            "high",
        ),
    ])
    .await;
    let recorder = Arc::new(Recorder::default());
    let agent = agent(&server, repo.path(), ExploreConfig::default())
        .await
        .with_observer(recorder.clone());
    let report = explore(&agent).await;
    assert_eq!(report.tool_calls.len(), 3, "{report:?}");
    assert_eq!(report.origin, ReportOrigin::Submitted, "{report:?}");

    let runs = recorder.0.lock().unwrap().clone();
    assert_eq!(runs.len(), 1);
    // The failed read is left out; codegraph is labelled by its operation.
    assert_eq!(tools(&runs[0]), ["codegraph search", "grep"]);
    assert!(runs[0].grounded);
    assert_eq!(
        runs[0].calls[1],
        ObservedCall {
            tool: "grep".into(),
            result_tokens: report.tool_calls[2].result_tokens,
        }
    );
}

#[tokio::test]
async fn explores_without_a_report_or_a_successful_call_are_not_observed() {
    let repo = checkout();
    // Only a failed call, then a report: nothing successful to learn from.
    let server = ScriptedLlm::start(vec![
        call("read", json!({"path": "missing.go"})),
        submit(
            "Plan is at pkg/planner/plan.go:7.",
            json!([good_citation()]),
            "high",
        ),
        // A successful call, then the LLM fails for good: Relay's fallback report.
        call("grep", json!({"pattern": "Plan"})),
        ScriptedReply::error(400),
    ])
    .await;
    let recorder = Arc::new(Recorder::default());
    let agent = agent(&server, repo.path(), ExploreConfig::default())
        .await
        .with_observer(recorder.clone());
    explore(&agent).await;
    let fallback = explore(&agent).await;
    assert_eq!(fallback.origin, ReportOrigin::InsufficientEvidence);
    assert!(recorder.0.lock().unwrap().is_empty());
}

#[tokio::test]
async fn the_hint_is_appended_to_the_system_prompt() {
    let repo = checkout();
    let server = ScriptedLlm::start(vec![submit(
        "Plan is at pkg/planner/plan.go:7.",
        json!([good_citation()]),
        "high",
    )])
    .await;
    let hint =
        ToolHint::new(["codegraph search → codegraph callers → read: 12 of 14 runs".to_owned()]);
    let agent = agent(&server, repo.path(), ExploreConfig::default())
        .await
        .with_hint(hint);
    explore(&agent).await;
    let system = messages(&server.requests()[0])[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        system.ends_with("- codegraph search → codegraph callers → read: 12 of 14 runs\n"),
        "{system}"
    );
    assert!(system.contains("What worked in this repository before"));
}
