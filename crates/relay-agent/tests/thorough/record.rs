//! What the design asks thorough mode to record, and the behaviour that lives in prompts, tested
//! wherever the code can see it: the report's time, goal success, files and summary; the trace's
//! `log` notes; thorough runs in the learning record; the Navigator's codegraph preference and
//! goals in dependency order; the Critic's three clarify triggers and the contradictions it is
//! shown; the explorer's codegraph-before-grep guidance in its request.

use std::sync::{Arc, Mutex};

use relay_agent::explore::observe::QueryClass;
use relay_agent::explore::{
    ExploreAgent, ExploreConfig, ExploreObserver, ExploreRequest, ObservedRun, Thoroughness,
};
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::trace::{MemoryTraceSink, TraceKind, Tracer};
use serde_json::json;

use crate::support::*;

fn satisfied_queue_stage() -> Vec<ScriptedReply> {
    let mut script = vec![intent(&[("g1", "where jobs are queued")])];
    script.extend(queue_stage("g1"));
    script.push(critic(
        "APPROVED",
        &[("g1", "satisfied")],
        json!({"feedback": "the queue answers it"}),
    ));
    script
}

#[tokio::test]
async fn the_report_carries_time_goal_success_files_and_a_summary_and_the_trace_logs_notes() {
    let dir = checkout();
    let server = ScriptedLlm::start(satisfied_queue_stage()).await;
    let sink = MemoryTraceSink::new();
    let report = run_traced(
        &server,
        dir.path(),
        "where are jobs queued?",
        &Tracer::new(sink.clone()),
    )
    .await;
    assert!(report.all_goals_succeeded);
    assert_eq!(report.files_examined, ["queue/queue.go"]);
    assert_eq!(
        report.context_summary,
        "Intent: trace a webhook to its comment. Verified: 1 claim over 1 file read (queue/queue.go)."
    );
    let json = serde_json::to_value(&report).unwrap();
    assert!(json["total_time_ms"].is_u64(), "{json}");
    let notes: Vec<(String, String)> = sink
        .events()
        .iter()
        .filter(|e| e.kind == TraceKind::Log)
        .map(|e| {
            (
                e.payload["about"].as_str().unwrap().to_owned(),
                e.payload["note"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        notes,
        [
            ("rationale".to_owned(), "follow the call chain".to_owned()),
            ("feedback".to_owned(), "the queue answers it".to_owned()),
        ]
    );
}

#[tokio::test]
async fn a_goal_left_open_is_no_success() {
    let dir = checkout();
    let mut script = vec![intent(&[
        ("g1", "where jobs are queued"),
        ("g2", "who posts the comment"),
    ])];
    script.extend(queue_stage("g1"));
    script.push(critic(
        "APPROVED",
        &[("g1", "satisfied"), ("g2", "unmet")],
        json!({"goal_updates": [{"kind": "blocked", "id": "g2", "reason": "not here"}]}),
    ));
    let server = ScriptedLlm::start(script).await;
    let report = run(&server, dir.path(), "where are jobs queued?").await;
    assert!(!report.all_goals_succeeded);
    assert!(
        report
            .context_summary
            .contains("Open: who posts the comment."),
        "{}",
        report.context_summary
    );
}

#[tokio::test]
async fn the_navigator_prefers_codegraph_and_sees_goals_dependencies_first() {
    let dir = checkout();
    let server = ScriptedLlm::start(vec![
        reply(json!({
            "primary_intent": "trace", "constraints": [], "ambiguities": [], "confidence": 0.8,
            "goals": [
                {"id": "g1", "description": "who posts the comment", "priority": 1, "depends_on": ["g2"]},
                {"id": "g2", "description": "where jobs are queued", "priority": 2, "depends_on": []}
            ]
        })),
        plan(&["g2"], json!([])),
    ])
    .await;
    run(&server, dir.path(), QUESTION).await;
    let navigator = &server.requests()[1];
    assert_eq!(stage_of(navigator), "thorough_navigator");
    assert!(
        system_text(navigator).contains("Prefer `codegraph`"),
        "the codegraph preference reaches the Navigator"
    );
    let user = user_text(navigator);
    let g2 = user.find("- g2 ").expect("g2 listed");
    let g1 = user.find("- g1 ").expect("g1 listed");
    assert!(g2 < g1, "the dependency comes first:\n{user}");
    assert!(user.contains("(after g2)"));
}

#[tokio::test]
async fn the_critic_knows_its_three_clarify_triggers_and_sees_the_contradictions() {
    let dir = checkout();
    let server = ScriptedLlm::start(vec![
        intent(&[("g1", "where jobs are queued")]),
        plan(
            &["g1"],
            json!([step("read", json!({"path": "queue/queue.go"}))]),
        ),
        reply(
            json!({"entities": [], "flows": [], "open_questions": [], "evidence": [],
            "contradictions": ["the issue says jobs are retried, insertJob never retries"]}),
        ),
        critic(
            "CLARIFY",
            &[("g1", "partial")],
            json!({"clarification": "Which retry do you mean?"}),
        ),
    ])
    .await;
    let report = run(&server, dir.path(), "where are jobs queued?").await;
    let critic = &server.requests()[3];
    assert_eq!(stage_of(critic), "thorough_critic");
    let system = system_text(critic);
    for trigger in ["several matches", "missing code", "contradictions"] {
        assert!(system.contains(trigger), "{trigger} is not in the prompt");
    }
    assert!(
        user_text(critic).contains("- the issue says jobs are retried, insertJob never retries"),
        "the Critic sees the contradiction it may clarify"
    );
    assert_eq!(
        report.answer.clarification.as_deref(),
        Some("Which retry do you mean?")
    );
}

/// An observer that keeps what it is told.
#[derive(Debug, Default)]
struct Recording(Mutex<Vec<ObservedRun>>);

#[async_trait::async_trait]
impl ExploreObserver for Recording {
    async fn observe(&self, run: &ObservedRun) {
        self.0.lock().unwrap().push(run.clone());
    }
}

#[tokio::test]
async fn a_thorough_explore_feeds_the_learning_record_with_its_run_row() {
    let dir = checkout();
    let server = ScriptedLlm::start(satisfied_queue_stage()).await;
    let observer = Arc::new(Recording::default());
    let agent = ExploreAgent::new(
        client(&server),
        Arc::new(toolbox(dir.path()).await),
        ExploreConfig::default(),
    )
    .with_observer(observer.clone());
    agent
        .explore(ExploreRequest::new(
            "How does a webhook become a queued job?",
            Thoroughness::Thorough,
        ))
        .await
        .unwrap();
    let runs = observer.0.lock().unwrap().clone();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.mode, "thorough");
    assert_eq!(run.query_class, QueryClass::Flow);
    assert_eq!(
        run.calls
            .iter()
            .map(|c| c.tool.as_str())
            .collect::<Vec<_>>(),
        ["read"]
    );
    assert!(run.grounded);
    assert!(!run.run_id.is_empty());
}

#[tokio::test]
async fn the_explorers_codegraph_before_grep_guidance_reaches_its_request() {
    let dir = checkout();
    let server = ScriptedLlm::start(vec![ScriptedReply::tool_calls(vec![(
        "submit_report",
        json!({"answer": "Enqueue queues jobs.", "evidence": [], "confidence": "low",
               "unanswered": []}),
    )])])
    .await;
    let agent = ExploreAgent::new(
        client(&server),
        Arc::new(toolbox(dir.path()).await),
        ExploreConfig::default(),
    );
    let _ = agent
        .explore(ExploreRequest::new(
            "who calls Enqueue?",
            Thoroughness::Quick,
        ))
        .await;
    let first = &server.requests()[0].body;
    let system = first["messages"][0]["content"].as_str().unwrap();
    let codegraph = system.find("`codegraph` for relationships").unwrap();
    let grep = system.find("`grep` for text").unwrap();
    assert!(codegraph < grep, "codegraph is named before grep");
    assert!(system.contains("with `search` to get the qname"));
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"codegraph"), "{tools:?}");
}
