//! The query bounds through the scripted pipeline: agent hops, files read, the job's tokens. (The
//! LLM-call cap is in `routing`; code tokens, depth and the per-step caps are unit-tested in the
//! traverser and `step_caps`.)

use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::thorough::analyze;
use relay_agent::thorough::bounds::{BoundHit, QUERY_AGENT_HOPS, QUERY_FILES};
use relay_agent::thorough::routing::IntegrateReason;
use relay_agent::thorough::state::TraversalState;
use relay_agent::thorough::traverser::StepStatus;
use relay_agent::trace::Tracer;
use serde_json::{Value, json};

use crate::support::*;

fn refined(i: usize) -> Value {
    json!({"goal_updates": [{"kind": "refined", "id": "g1", "description": format!("the filler functions ({i})")}]})
}

#[tokio::test]
async fn the_agent_hop_bound_refuses_steps_then_stages() {
    let dir = checkout();
    let greps = |from: usize| {
        plan(
            &["g1"],
            Value::Array(
                (from..from + 6)
                    .map(|i| step("grep", json!({"pattern": format!("func F{i}\\(")})))
                    .collect(),
            ),
        )
    };
    let server = ScriptedLlm::start(vec![
        intent(&[("g1", "the filler functions")]),
        greps(0),
        synthesis(json!([])),
        critic("APPROVED", &[("g1", "partial")], refined(1)),
        greps(6),
        synthesis(json!([])),
        critic("APPROVED", &[("g1", "partial")], refined(2)),
        greps(8),
        synthesis(json!([])),
    ])
    .await;
    let report = run(&server, dir.path(), "what do the filler functions do?").await;
    // intent 1 + (navigator, 6 steps, synthesizer, critic) × 2 + navigator + one step = 21 hops.
    assert_eq!(report.agent_hops, QUERY_AGENT_HOPS);
    assert_eq!(
        report.answer.reason,
        IntegrateReason::Bound(BoundHit::AgentHops)
    );
    assert_eq!(
        server.requests().len(),
        8,
        "the third Synthesizer is never asked"
    );
    let third = &report.stages[2];
    assert_eq!(third.steps[0].status, StepStatus::Ok);
    for refused in &third.steps[1..] {
        assert_eq!(
            refused.status,
            StepStatus::Refused {
                bound: BoundHit::AgentHops.to_string()
            }
        );
    }
}

#[tokio::test]
async fn the_file_bound_refuses_reads_past_ten_files_and_the_critic_sees_it() {
    let dir = checkout();
    let reads = |from: usize| {
        plan(
            &["g1"],
            Value::Array(
                (from..from + 6)
                    .map(|i| step("read", json!({"path": format!("extra/f{i}.go")})))
                    .collect(),
            ),
        )
    };
    let server = ScriptedLlm::start(vec![
        intent(&[("g1", "the filler functions")]),
        reads(0),
        synthesis(json!([claim(
            "F0 is filler.",
            &["g1"],
            json!([cite("extra/f0.go", 3, 4, "func F0() {}")])
        )])),
        critic("APPROVED", &[("g1", "partial")], json!({})),
        reads(6),
        synthesis(json!([])),
        critic("APPROVED", &[("g1", "satisfied")], json!({})),
    ])
    .await;
    let report = run(&server, dir.path(), "what do the filler functions do?").await;
    assert_eq!(report.files_read, QUERY_FILES);
    let second: Vec<&StepStatus> = report.stages[1].steps.iter().map(|s| &s.status).collect();
    let refused = StepStatus::Refused {
        bound: BoundHit::Files.to_string(),
    };
    assert_eq!(second[..4], [&StepStatus::Ok; 4]);
    assert_eq!(second[4..], [&refused, &refused]);
    let critic_text = user_text(&server.requests()[6]);
    assert!(
        critic_text
            .contains("5. read {\"path\":\"extra/f10.go\"} → not run: the query read its 10 files"),
        "{critic_text}"
    );
    assert_eq!(report.answer.reason, IntegrateReason::GoalsDone);
}

#[tokio::test]
async fn the_jobs_token_budget_ends_the_query_after_the_call_that_spent_it() {
    let dir = checkout();
    let server = ScriptedLlm::start(vec![
        reply_costing(
            json!({"primary_intent": "q", "confidence": 0.5,
                   "goals": [{"id": "g1", "description": "where jobs are queued", "priority": 1}]}),
            600,
        ),
        reply_costing(
            json!({"target_goals": ["g1"], "rationale": "r", "feasibility": 0.5,
                   "steps": [{"tool": "read", "arguments": {"path": "queue/queue.go"}}]}),
            600,
        ),
        synthesis(json!([])),
    ])
    .await;
    let toolbox = toolbox(dir.path()).await;
    let report = analyze(
        &client_with_budget(&server, 1_000),
        &toolbox,
        "where are jobs queued?",
        &mut TraversalState::default(),
        &Tracer::noop(),
        TIME_LIMIT,
    )
    .await
    .unwrap();
    assert_eq!(
        report.answer.reason,
        IntegrateReason::Bound(BoundHit::JobTokens)
    );
    assert_eq!(server.requests().len(), 2);
    assert_eq!(report.tokens_in, 1_200);
    // The planned step ran (no LLM needed); its output was never synthesized, so nothing is stated.
    assert_eq!(report.stages[0].steps[0].status, StepStatus::Ok);
    assert!(report.answer.text.starts_with("Nothing could be verified"));
}

#[tokio::test]
async fn the_wall_clock_limit_abandons_a_stage_and_integrates_what_is_done() {
    let dir = checkout();
    let server = ScriptedLlm::start(vec![
        intent(&[("g1", "where jobs are queued")]),
        // The Navigator answers long after the query's limit (the limit is the test's, not a
        // timing assertion: the reply is never awaited).
        ScriptedReply::Delayed {
            delay_ms: 30_000,
            reply: Box::new(plan(&["g1"], json!([]))),
        },
    ])
    .await;
    let toolbox = toolbox(dir.path()).await;
    let report = analyze(
        &client(&server),
        &toolbox,
        "where are jobs queued?",
        &mut TraversalState::default(),
        &Tracer::noop(),
        std::time::Duration::from_millis(300),
    )
    .await
    .unwrap();
    assert_eq!(
        report.answer.reason,
        IntegrateReason::Bound(BoundHit::WallTime)
    );
    assert_eq!(server.requests().len(), 2);
    assert!(
        report
            .answer
            .text
            .contains("- where jobs are queued (not explored)")
    );
}
