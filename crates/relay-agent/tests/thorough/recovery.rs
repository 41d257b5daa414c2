//! The Traverser's retry contract through the scripted pipeline: a timed-out step is retried
//! once with a narrower scope, then skipped; a file the read cannot find is checked in the code
//! graph's index; a symbol the graph does not know is looked for in the scope and imports of
//! what the query already read. Each is one extra try, in the step's history and the trace.

use std::sync::Arc;
use std::time::Duration;

use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::thorough::bounds::QueryBudget;
use relay_agent::thorough::state::TraversalState;
use relay_agent::thorough::traverser::StepStatus;
use relay_agent::thorough::{ThoroughReport, analyze_within};
use relay_agent::trace::{ArgumentValues, MemoryTraceSink, TraceKind, Tracer};
use serde_json::{Value, json};

use crate::support::*;

fn dropped() -> Value {
    json!({"goal_updates": [{"kind": "dropped", "id": "g1", "reason": "not reachable"}]})
}

/// One stage: the plan, an empty synthesis, a Critic that drops the goal (the query ends).
fn one_stage(steps: Value) -> Vec<ScriptedReply> {
    vec![
        intent(&[("g1", "where jobs are queued")]),
        plan(&["g1"], steps),
        synthesis(json!([])),
        critic("APPROVED", &[("g1", "partial")], dropped()),
    ]
}

async fn run_with(
    server: &ScriptedLlm,
    root: &std::path::Path,
    budget: QueryBudget,
) -> (ThoroughReport, Vec<relay_agent::trace::TraceEvent>) {
    run_from(server, root, budget, TraversalState::default()).await
}

/// [`run_with`] from a traversal state an earlier query left.
async fn run_from(
    server: &ScriptedLlm,
    root: &std::path::Path,
    budget: QueryBudget,
    mut state: TraversalState,
) -> (ThoroughReport, Vec<relay_agent::trace::TraceEvent>) {
    let toolbox = toolbox(root).await;
    let sink = MemoryTraceSink::new();
    // The recoveries' details (paths, qnames) are what these tests read: record them.
    let tracer = Tracer::new(sink.clone() as Arc<_>).with_argument_values(ArgumentValues::Recorded);
    let report = analyze_within(
        &client(server),
        &toolbox,
        "where are jobs queued?",
        &mut state,
        &tracer,
        TIME_LIMIT,
        budget,
    )
    .await
    .expect("a report");
    (report, sink.events())
}

fn recoveries(events: &[relay_agent::trace::TraceEvent]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e.kind == TraceKind::Decision && e.payload["decision"] == "step_recovery")
        .map(|e| e.payload["kind"].as_str().unwrap_or_default().to_owned())
        .collect()
}

// A zero step time is a timeout before the call. The queue package was read by an earlier query
// (the state), so a grep can be narrowed to it.
fn queue_read() -> TraversalState {
    let mut state = TraversalState::default();
    state.files.push("queue/queue.go".to_owned());
    state
}

#[tokio::test]
async fn a_timed_out_step_is_retried_narrower_and_then_succeeds() {
    let dir = checkout();
    let server = ScriptedLlm::start(one_stage(json!([step(
        "grep",
        json!({"pattern": "insertJob"})
    )])))
    .await;
    // Every first try times out; the narrower retry has time.
    let budget = QueryBudget::new()
        .with_step_timeout(Duration::ZERO)
        .with_retry_timeout(Duration::from_secs(60));
    let (report, events) = run_from(&server, dir.path(), budget, queue_read()).await;
    let step = &report.stages[0].steps[0];
    assert_eq!(step.status, StepStatus::Ok, "{step:?}");
    assert_eq!(
        step.attempts[0],
        "timed out; retried with a narrower path queue"
    );
    assert!(step.output.contains("queue/queue.go"), "{}", step.output);
    assert!(
        step.arguments.contains("\"path\":\"queue\""),
        "the narrowed step is what ran: {}",
        step.arguments
    );
    assert_eq!(recoveries(&events), ["narrow"]);
    assert_eq!(
        report.tool_calls.len(),
        2,
        "the timed-out try is recorded too"
    );
    // The Synthesizer was shown the output of the narrowed step.
    assert!(user_text(&server.requests()[2]).contains("insertJob"));
}

#[tokio::test]
async fn a_step_that_times_out_twice_is_skipped_and_the_stage_goes_on() {
    let dir = checkout();
    let server = ScriptedLlm::start(one_stage(json!([
        step("grep", json!({"pattern": "insertJob"})),
        step(
            "grep",
            json!({"pattern": "insertJob", "path": "queue", "glob": "*.go"})
        ),
        step("grep", json!({"pattern": "PostComment"})),
    ])))
    .await;
    let budget = QueryBudget::new()
        .with_step_timeout(Duration::ZERO)
        .with_retry_timeout(Duration::ZERO);
    let (report, events) = run_from(&server, dir.path(), budget, queue_read()).await;
    let steps = &report.stages[0].steps;
    match &steps[0].status {
        StepStatus::Skipped { reason } => {
            assert_eq!(reason, "timed out again with path queue: skipped")
        }
        other => panic!("expected a skip, got {other:?}"),
    }
    // Already narrow: no retry, skipped at once.
    match &steps[1].status {
        StepStatus::Skipped { reason } => {
            assert!(reason.ends_with("no narrower scope: skipped"), "{reason}")
        }
        other => panic!("expected a skip, got {other:?}"),
    }
    // The stage goes on: the next step is tried (and narrowed) in turn.
    assert!(matches!(steps[2].status, StepStatus::Skipped { .. }));
    assert_eq!(
        recoveries(&events),
        ["narrow", "skip", "skip", "narrow", "skip"]
    );
    // The Critic reads why.
    let critic = user_text(&server.requests()[3]);
    assert!(critic.contains("skipped: timed out again"), "{critic}");
    assert_eq!(report.tool_calls.len(), 5, "one retry per step, never more");
}

#[tokio::test]
async fn a_missing_file_the_fuzzy_match_cannot_settle_is_found_in_the_index() {
    let dir = checkout();
    // A second queue.go the indexer skips (testdata): the fuzzy match is ambiguous, the index
    // knows one.
    std::fs::create_dir_all(dir.path().join("testdata")).unwrap();
    std::fs::write(dir.path().join("testdata/queue.go"), "not go\n").unwrap();
    let server = ScriptedLlm::start(one_stage(json!([step(
        "read",
        json!({"path": "jobs/queue.go"})
    )])))
    .await;
    let (report, events) = run_with(&server, dir.path(), QueryBudget::new()).await;
    let step = &report.stages[0].steps[0];
    assert_eq!(step.status, StepStatus::Ok, "{step:?}");
    assert!(
        step.attempts
            .contains(&"index check: tried indexed path queue/queue.go".to_owned()),
        "{:?}",
        step.attempts
    );
    assert!(step.output.contains("func Enqueue"));
    assert_eq!(recoveries(&events), ["index_check"]);
    let check = events
        .iter()
        .find(|e| e.payload["kind"] == "index_check")
        .unwrap();
    assert_eq!(
        check.payload["detail"]["indexed"],
        json!(["queue/queue.go"])
    );
}

#[tokio::test]
async fn a_missing_symbol_is_retried_with_the_one_in_scope_of_the_imports() {
    let dir = checkout();
    // Two functions named Enqueue: the gateway imports the queue package, not legacy.
    std::fs::create_dir_all(dir.path().join("legacy")).unwrap();
    std::fs::write(
        dir.path().join("legacy/legacy.go"),
        "package legacy\n\n// Enqueue is the old path.\nfunc Enqueue(body []byte) error { return nil }\n",
    )
    .unwrap();
    let server = ScriptedLlm::start(one_stage(json!([
        step("read", json!({"path": "gateway/webhook.go"})),
        step(
            "codegraph",
            json!({"operation": "callers", "qname": "relay.Enqueue"})
        ),
    ])))
    .await;
    let (report, events) = run_with(&server, dir.path(), QueryBudget::new()).await;
    let step = &report.stages[0].steps[1];
    assert_eq!(step.status, StepStatus::Ok, "{step:?}");
    assert!(
        step.attempts
            .iter()
            .any(|a| a.starts_with("symbol relay.Enqueue not found; tried ")
                && a.contains("queue")
                && a.ends_with("(imported by a file already read)")),
        "{:?}",
        step.attempts
    );
    assert!(step.output.contains("HandleWebhook"), "{}", step.output);
    assert_eq!(recoveries(&events), ["scope"]);
}

#[tokio::test]
async fn a_missing_symbol_with_no_single_match_in_scope_stays_failed_and_says_why() {
    let dir = checkout();
    std::fs::create_dir_all(dir.path().join("legacy")).unwrap();
    std::fs::write(
        dir.path().join("legacy/legacy.go"),
        "package legacy\n\nfunc Enqueue(body []byte) error { return nil }\n",
    )
    .unwrap();
    let server = ScriptedLlm::start(one_stage(json!([step(
        "codegraph",
        json!({"operation": "callers", "qname": "relay.Enqueue"})
    )])))
    .await;
    let (report, _) = run_with(&server, dir.path(), QueryBudget::new()).await;
    let step = &report.stages[0].steps[0];
    // The tool's own "not found" answer stands (with its closest qnames), with why no retry.
    assert!(
        step.output.contains("not found in the code graph"),
        "{step:?}"
    );
    assert!(
        step.attempts
            .iter()
            .any(|a| a.contains("no single match in scope or imports (candidates ")),
        "{:?}",
        step.attempts
    );
    assert_eq!(report.tool_calls.len(), 2, "one resolve, no guess");
}
