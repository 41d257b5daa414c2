//! Shared helpers: a small Go checkout, agents pointed at the scripted server, report replies.

use std::path::Path;
use std::sync::Arc;

use relay_agent::explore::{
    ExploreAgent, ExploreConfig, ExploreReport, ExploreRequest, Thoroughness,
};
use relay_agent::llm::scripted::{RecordedRequest, ScriptedLlm, ScriptedReply, ScriptedUsage};
use relay_agent::llm::{LlmClient, Role};
use relay_agent::toolbox::{GraphAccess, Toolbox, index_in_memory};
use relay_tools::ToolLimits;
use serde_json::{Value, json};

pub const PLAN_GO: &str = "package planner

// Planner decides what to do next.
type Planner struct{}

// Plan runs one planning step.
func (p *Planner) Plan() error {
\treturn helper()
}

func helper() error {
\treturn nil
}
";

pub const MAIN_GO: &str = "package main

import \"example.com/relay/pkg/planner\"

func main() {
\tp := &planner.Planner{}
\t_ = p.Plan()
}
";

/// A checkout with a Go module: `pkg/planner/plan.go` (Plan at lines 7-9) and `cmd/relay/main.go`.
pub fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("go.mod"), "module example.com/relay\n\ngo 1.22\n").unwrap();
    std::fs::create_dir_all(root.join("pkg/planner")).unwrap();
    std::fs::create_dir_all(root.join("cmd/relay")).unwrap();
    std::fs::write(root.join("pkg/planner/plan.go"), PLAN_GO).unwrap();
    std::fs::write(root.join("cmd/relay/main.go"), MAIN_GO).unwrap();
    dir
}

/// A client for the scripted server with fast retries.
pub fn client(server: &ScriptedLlm) -> LlmClient {
    server.client(Role::Explore)
}

/// An agent over `root` with the in-memory code graph.
pub async fn agent(server: &ScriptedLlm, root: &Path, config: ExploreConfig) -> ExploreAgent {
    let graph = index_in_memory(root, None).await.unwrap();
    agent_with_graph(server, root, Some(graph), config)
}

pub fn agent_with_graph(
    server: &ScriptedLlm,
    root: &Path,
    graph: Option<GraphAccess>,
    config: ExploreConfig,
) -> ExploreAgent {
    let toolbox = Toolbox::new(root, graph, ToolLimits::default()).unwrap();
    ExploreAgent::new(client(server), Arc::new(toolbox), config)
}

/// Runs one quick explore.
pub async fn explore(agent: &ExploreAgent) -> ExploreReport {
    agent
        .explore(ExploreRequest::new(
            "Who calls Planner.Plan?",
            Thoroughness::Quick,
        ))
        .await
        .expect("the explore returns a report")
}

/// A `submit_report` call.
pub fn submit(answer: &str, evidence: Value, confidence: &str) -> ScriptedReply {
    ScriptedReply::tool_calls(vec![(
        "submit_report",
        json!({"answer": answer, "evidence": evidence, "confidence": confidence, "unanswered": []}),
    )])
}

/// The citation of `Plan` in `pkg/planner/plan.go`.
pub fn good_citation() -> Value {
    json!({"path": "pkg/planner/plan.go", "start_line": 7, "end_line": 9, "quote": "func (p *Planner) Plan() error {"})
}

/// One tool call.
pub fn call(name: &str, arguments: Value) -> ScriptedReply {
    ScriptedReply::tool_calls(vec![(name, arguments)])
}

/// A reply with the given usage.
pub fn with_usage(reply: ScriptedReply, prompt_tokens: u64) -> ScriptedReply {
    let usage = ScriptedUsage {
        prompt_tokens,
        completion_tokens: 10,
        cached_tokens: 0,
    };
    match reply {
        ScriptedReply::ToolCalls { calls, text, .. } => {
            ScriptedReply::ToolCalls { calls, text, usage }
        }
        ScriptedReply::Text { text, .. } => ScriptedReply::Text { text, usage },
        other => other,
    }
}

/// The messages of a recorded OpenAI request.
pub fn messages(request: &RecordedRequest) -> Vec<Value> {
    request.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The tool names offered in a recorded request.
pub fn tool_names(request: &RecordedRequest) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The tool-result messages of a recorded request (content of `role: tool` messages).
pub fn tool_results(request: &RecordedRequest) -> Vec<String> {
    messages(request)
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Whether a recorded request is a forced synthesis (only `submit_report`, forced).
pub fn is_forced_synthesis(request: &RecordedRequest) -> bool {
    tool_names(request) == ["submit_report"]
        && request.body["tool_choice"]["function"]["name"] == "submit_report"
}
