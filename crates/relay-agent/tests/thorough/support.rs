//! Shared helpers: a small Go checkout whose flow spans four files, clients pointed at the
//! scripted server, and the stage replies.

use std::path::Path;
use std::sync::Arc;

use relay_agent::llm::scripted::{RecordedRequest, ScriptedLlm, ScriptedReply, ScriptedUsage};
use relay_agent::llm::{LlmClient, Role, TokenBudget};
use relay_agent::thorough::state::TraversalState;
use relay_agent::thorough::{ThoroughReport, analyze};
use relay_agent::toolbox::{Toolbox, index_in_memory};
use relay_agent::trace::Tracer;
use relay_tools::ToolLimits;
use serde_json::{Value, json};

pub const WEBHOOK_GO: &str = "package gateway

import \"example.com/relay/queue\"

// HandleWebhook verifies a delivery and queues it.
func HandleWebhook(body []byte) error {
\tif !Verify(body) {
\t\treturn ErrSignature
\t}
\treturn queue.Enqueue(body)
}

// Verify checks the signature.
func Verify(body []byte) bool { return len(body) > 0 }

var ErrSignature = error(nil)
";

pub const QUEUE_GO: &str = "package queue

// Enqueue stores the delivery as a job.
func Enqueue(body []byte) error {
\treturn insertJob(body)
}

func insertJob(body []byte) error { return nil }
";

pub const WORKER_GO: &str = "package worker

import \"example.com/relay/tracker\"

// Run claims a job and posts its comment.
func Run() error {
\treturn tracker.PostComment(\"done\")
}
";

pub const COMMENT_GO: &str = "package tracker

// PostComment writes one comment to the issue.
func PostComment(text string) error { return nil }
";

/// The wall-clock limit of the tests' queries: far beyond what a scripted run takes.
pub const TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

pub const QUESTION: &str = "How does a webhook become a comment, and where can it be lost?";

/// A checkout: gateway/webhook.go, queue/queue.go, worker/worker.go, tracker/comment.go, and
/// `extra/fN.go` files for the bound tests.
pub fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("go.mod"), "module example.com/relay\n\ngo 1.22\n").unwrap();
    for (path, text) in [
        ("gateway/webhook.go", WEBHOOK_GO),
        ("queue/queue.go", QUEUE_GO),
        ("worker/worker.go", WORKER_GO),
        ("tracker/comment.go", COMMENT_GO),
    ] {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::create_dir_all(root.join("extra")).unwrap();
    for i in 0..14 {
        std::fs::write(
            root.join(format!("extra/f{i}.go")),
            format!("package extra\n\n// F{i} is filler.\nfunc F{i}() {{}}\n"),
        )
        .unwrap();
    }
    dir
}

/// A client for the scripted server with fast retries.
pub fn client(server: &ScriptedLlm) -> LlmClient {
    server.client(Role::Explore)
}

/// The client with a job token budget of `limit`.
pub fn client_with_budget(server: &ScriptedLlm, limit: u64) -> LlmClient {
    client(server).with_budget(Arc::new(TokenBudget::new(limit)))
}

/// A toolbox over `root` with the in-memory code graph.
pub async fn toolbox(root: &Path) -> Toolbox {
    let graph = index_in_memory(root, None).await.unwrap();
    Toolbox::new(root, Some(graph), ToolLimits::default()).unwrap()
}

/// Runs one thorough query with a fresh traversal state.
pub async fn run(server: &ScriptedLlm, root: &Path, question: &str) -> ThoroughReport {
    run_traced(server, root, question, &Tracer::noop()).await
}

/// [`run`] with its events going to `tracer`.
pub async fn run_traced(
    server: &ScriptedLlm,
    root: &Path,
    question: &str,
    tracer: &Tracer,
) -> ThoroughReport {
    let toolbox = toolbox(root).await;
    let mut state = TraversalState::default();
    analyze(
        &client(server),
        &toolbox,
        question,
        &mut state,
        tracer,
        TIME_LIMIT,
    )
    .await
    .expect("the query ends in a report")
}

/// A structured reply.
pub fn reply(value: Value) -> ScriptedReply {
    ScriptedReply::json(value)
}

/// A structured reply with the given usage.
pub fn reply_costing(value: Value, prompt_tokens: u64) -> ScriptedReply {
    ScriptedReply::Json {
        value,
        usage: ScriptedUsage {
            prompt_tokens,
            completion_tokens: 10,
            cached_tokens: 0,
        },
    }
}

pub fn intent(goals: &[(&str, &str)]) -> ScriptedReply {
    reply(json!({
        "primary_intent": "trace a webhook to its comment",
        "goals": goals.iter().enumerate().map(|(i, (id, description))| json!({
            "id": id, "description": description, "priority": i + 1, "depends_on": []
        })).collect::<Vec<_>>(),
        "constraints": [],
        "ambiguities": [],
        "confidence": 0.8
    }))
}

pub fn plan(goals: &[&str], steps: Value) -> ScriptedReply {
    reply(json!({
        "target_goals": goals, "steps": steps, "rationale": "follow the call chain",
        "feasibility": 0.7
    }))
}

pub fn step(tool: &str, arguments: Value) -> Value {
    json!({"tool": tool, "arguments": arguments})
}

pub fn synthesis(evidence: Value) -> ScriptedReply {
    reply(
        json!({"entities": [], "flows": [], "open_questions": [], "contradictions": [],
                 "evidence": evidence}),
    )
}

pub fn claim(text: &str, goals: &[&str], citations: Value) -> Value {
    json!({"claim": text, "goals": goals, "citations": citations})
}

pub fn cite(path: &str, start: u32, end: u32, quote: &str) -> Value {
    json!({"path": path, "start_line": start, "end_line": end, "quote": quote})
}

pub fn critic(verdict: &str, statuses: &[(&str, &str)], extra: Value) -> ScriptedReply {
    let mut value = json!({
        "verdict": verdict,
        "goal_status": statuses.iter().map(|(id, status)| json!({"id": id, "status": status})).collect::<Vec<_>>(),
        "blocking_issues": [],
        "goal_updates": []
    });
    if let Value::Object(extra) = extra {
        for (key, item) in extra {
            value[key] = item;
        }
    }
    reply(value)
}

/// The user message of a recorded request.
pub fn user_text(request: &RecordedRequest) -> String {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The system message of a recorded request.
pub fn system_text(request: &RecordedRequest) -> String {
    request.body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The structured-output schema name of a recorded request (which stage it was).
pub fn stage_of(request: &RecordedRequest) -> String {
    request.body["response_format"]["json_schema"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The stages of every recorded request, in order.
pub fn stages(server: &ScriptedLlm) -> Vec<String> {
    server.requests().iter().map(stage_of).collect()
}

/// A stage's Navigator and Synthesizer replies: read `queue/queue.go`, claim (with a citation that
/// verifies) that Enqueue queues jobs, answering `goal`.
pub fn queue_stage(goal: &str) -> Vec<ScriptedReply> {
    vec![
        plan(
            &[goal],
            json!([step("read", json!({"path": "queue/queue.go"}))]),
        ),
        synthesis(json!([claim(
            "Enqueue queues jobs.",
            &[goal],
            json!([cite(
                "queue/queue.go",
                4,
                4,
                "func Enqueue(body []byte) error {"
            )])
        )])),
    ]
}
