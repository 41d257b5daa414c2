//! Routing through the scripted pipeline: replan (and its bound), clarify once, stuck detection,
//! and goal updates applied in order by id.

use relay_agent::llm::scripted::ScriptedLlm;
use relay_agent::thorough::goals::GoalStatus;
use relay_agent::thorough::routing::{IntegrateReason, Route, Verdict};
use relay_agent::trace::{MemoryTraceSink, TraceKind, Tracer};
use serde_json::{Value, json};

use crate::support::*;

fn decisions(sink: &MemoryTraceSink, name: &str) -> Vec<Value> {
    sink.events()
        .into_iter()
        .filter(|e| e.kind == TraceKind::Decision && e.payload["decision"] == name)
        .map(|e| e.payload)
        .collect()
}

#[tokio::test]
async fn a_replan_sends_the_critics_feedback_and_the_previous_steps_to_the_navigator() {
    let dir = checkout();
    let server = ScriptedLlm::start(
        [
            vec![
                intent(&[("g1", "where jobs are queued")]),
                plan(&["g1"], json!([])),
                critic(
                    "REPLAN",
                    &[("g1", "unmet")],
                    json!({"feedback": "read queue/queue.go"}),
                ),
            ],
            queue_stage("g1"),
            vec![critic("APPROVED", &[("g1", "satisfied")], json!({}))],
        ]
        .concat(),
    )
    .await;
    let report = run(&server, dir.path(), "where are jobs queued?").await;
    assert_eq!(report.answer.reason, IntegrateReason::GoalsDone);
    assert_eq!(
        stages(&server),
        [
            "thorough_intent",
            "thorough_navigator",
            "thorough_critic",
            "thorough_navigator",
            "thorough_synthesizer",
            "thorough_critic"
        ],
        "no Synthesizer call for a stage without output"
    );
    let replan = user_text(&server.requests()[3]);
    assert!(
        replan.contains("The previous plan of this stage ran:\n(no steps)\n"),
        "{replan}"
    );
    assert!(replan.contains("The Critic asks for a new plan: read queue/queue.go"));
    let shape: Vec<(u32, u32, Option<Verdict>, Option<Route>)> = report
        .stages
        .iter()
        .map(|s| (s.stage, s.attempt, s.verdict, s.route))
        .collect();
    assert_eq!(
        shape,
        [
            (1, 0, Some(Verdict::Replan), Some(Route::Replan)),
            (
                1,
                1,
                Some(Verdict::Approved),
                Some(Route::Integrate(IntegrateReason::GoalsDone))
            ),
        ]
    );
}

#[tokio::test]
async fn replans_are_bounded_per_stage_then_the_query_finishes() {
    let dir = checkout();
    let mut script = vec![intent(&[("g1", "where jobs are queued")])];
    for i in 0..4 {
        script.push(plan(&["g1"], json!([])));
        // Each refinement is progress, so the query is not stuck while it replans.
        script.push(critic(
            "REPLAN",
            &[("g1", "unmet")],
            json!({"goal_updates": [{"kind": "refined", "id": "g1", "description": format!("where jobs are queued (take {i})")}]}),
        ));
    }
    script.push(plan(&["g1"], json!([])));
    script.push(critic("APPROVED", &[("g1", "unmet")], json!({})));
    let server = ScriptedLlm::start(script).await;
    let report = run(&server, dir.path(), "where are jobs queued?").await;

    // 1 intent + 4 attempts × 2 calls; the fourth REPLAN is past the limit: the query finishes
    // (seed 003), no second stage is planned.
    assert_eq!(server.requests().len(), 9);
    assert_eq!(server.remaining(), 2);
    assert_eq!(report.answer.reason, IntegrateReason::ReplanLimit);
    let routes: Vec<Option<Route>> = report.stages.iter().map(|s| s.route).collect();
    assert_eq!(
        routes,
        [
            Some(Route::Replan),
            Some(Route::Replan),
            Some(Route::Replan),
            Some(Route::Integrate(IntegrateReason::ReplanLimit)),
        ]
    );
    assert!(
        report
            .answer
            .text
            .contains("- where jobs are queued (take 3) (not found)")
    );
}

/// A CLARIFY with neither a question nor a blocking issue asks about the open goals (never an
/// empty "Needs clarification:"); a goal the Critic drops is listed in the answer with why.
#[tokio::test]
async fn a_blank_clarify_asks_about_the_open_goals_and_dropped_goals_are_listed() {
    let dir = checkout();
    let server = ScriptedLlm::start(
        [
            vec![intent(&[
                ("g1", "where jobs are queued"),
                ("g2", "who posts the comment"),
            ])],
            queue_stage("g1"),
            vec![
                critic(
                    "CLARIFY",
                    &[("g1", "satisfied"), ("g2", "unmet")],
                    json!({"clarification": "  ", "blocking_issues": [" "]}),
                ),
                plan(&["g2"], json!([])),
                critic(
                    "APPROVED",
                    &[],
                    json!({"goal_updates": [{"kind": "dropped", "id": "g2", "reason": "comments are posted by another service"}]}),
                ),
            ],
        ]
        .concat(),
    )
    .await;
    let report = run(&server, dir.path(), QUESTION).await;
    assert_eq!(report.answer.reason, IntegrateReason::GoalsDone);
    let text = &report.answer.text;
    assert!(!text.contains("Needs clarification: \n"), "{text}");
    assert!(
        text.contains(
            "\nNeeds clarification: The code explored so far does not answer: who posts the comment."
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "\nDropped:\n- who posts the comment (dropped: comments are posted by another service)\n"
        ),
        "{text}"
    );
    assert_eq!(report.answer.dropped_goals.len(), 1);
}

#[tokio::test]
async fn clarification_is_asked_once_and_the_query_goes_on() {
    let dir = checkout();
    let server = ScriptedLlm::start(
        [
            vec![intent(&[
                ("g1", "where jobs are queued"),
                ("g2", "who posts the comment"),
            ])],
            queue_stage("g1"),
            vec![
                critic(
                    "CLARIFY",
                    &[("g1", "satisfied"), ("g2", "unmet")],
                    json!({"clarification": "GitHub or GitLab comments?"}),
                ),
                plan(
                    &["g2"],
                    json!([step("read", json!({"path": "worker/worker.go"}))]),
                ),
                synthesis(json!([claim(
                    "Run posts the comment.",
                    &["g2"],
                    json!([cite(
                        "worker/worker.go",
                        7,
                        7,
                        "return tracker.PostComment(\"done\")"
                    )])
                )])),
                critic(
                    "CLARIFY",
                    &[("g2", "satisfied")],
                    json!({"clarification": "Which comment?", "blocking_issues": ["no spec"]}),
                ),
            ],
        ]
        .concat(),
    )
    .await;
    let sink = MemoryTraceSink::new();
    let report = run_traced(&server, dir.path(), QUESTION, &Tracer::new(sink.clone())).await;
    assert_eq!(report.answer.reason, IntegrateReason::GoalsDone);
    assert_eq!(
        report.answer.clarification.as_deref(),
        Some("GitHub or GitLab comments?")
    );
    assert!(
        report
            .answer
            .text
            .ends_with("\nNeeds clarification: GitHub or GitLab comments?\n")
    );
    let routes: Vec<Option<Route>> = report.stages.iter().map(|s| s.route).collect();
    assert_eq!(
        routes,
        [
            Some(Route::NextStage),
            Some(Route::Integrate(IntegrateReason::GoalsDone))
        ]
    );
    let asked = decisions(&sink, "clarify");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["question"], "GitHub or GitLab comments?");
    assert_eq!(report.answer.claims.len(), 2);
}

#[tokio::test]
async fn two_stages_without_progress_are_stuck_and_unearned_satisfaction_is_refused() {
    let dir = checkout();
    let grep = || {
        plan(
            &["g1"],
            json!([step("grep", json!({"pattern": "Enqueue"}))]),
        )
    };
    let server = ScriptedLlm::start(vec![
        intent(&[("g1", "where jobs are retried")]),
        grep(),
        synthesis(json!([])),
        critic("APPROVED", &[("g1", "unmet")], json!({})),
        grep(),
        synthesis(json!([])),
        // Satisfied, with no verified claim behind it: refused.
        critic("APPROVED", &[("g1", "satisfied")], json!({})),
    ])
    .await;
    let sink = MemoryTraceSink::new();
    let report = run_traced(
        &server,
        dir.path(),
        "where are jobs retried?",
        &Tracer::new(sink.clone()),
    )
    .await;
    assert_eq!(report.answer.reason, IntegrateReason::Stuck);
    // Stuck asks the humans first (seed 003): the clarify decision, then integration.
    let asked = decisions(&sink, "clarify");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["stuck"], true);
    assert!(
        report
            .answer
            .clarification
            .as_deref()
            .is_some_and(|q| q.contains("where jobs are retried")),
        "{:?}",
        report.answer.clarification
    );
    assert_eq!(report.llm_calls, 7);
    assert_eq!(report.goals[0].status, GoalStatus::Unmet);
    assert!(
        report
            .rejected_updates
            .contains(&"g1 satisfied: no verified claim answers it".to_owned()),
        "{:?}",
        report.rejected_updates
    );
    assert!(report.stages.iter().all(|s| !s.progress));
    assert!(report.answer.text.starts_with("Nothing could be verified"));
    assert!(
        report
            .answer
            .text
            .contains("- where jobs are retried (not found)")
    );
}

#[tokio::test]
async fn goal_updates_apply_in_order_by_id_and_reach_the_next_plan() {
    let dir = checkout();
    let server = ScriptedLlm::start(vec![
        intent(&[("g1", "where jobs are queued"), ("g2", "how retries work")]),
        plan(&["g1"], json!([])),
        critic(
            "APPROVED",
            &[("g7", "satisfied")],
            json!({"goal_updates": [
                {"kind": "new", "id": "g3", "description": "who drains the outbox", "priority": 2},
                {"kind": "refined", "id": "g3", "description": "who drains the outbox, and when"},
                {"kind": "dropped", "id": "g1"},
                {"kind": "blocked", "id": "g2", "reason": "the retry code is vendored"},
                {"kind": "dropped", "id": "g9"}
            ]}),
        ),
        plan(&["g3"], json!([])),
        critic(
            "APPROVED",
            &[],
            json!({"goal_updates": [
                {"kind": "blocked", "id": "g3", "reason": "no outbox in this repository"}
            ]}),
        ),
    ])
    .await;
    let sink = MemoryTraceSink::new();
    let report = run_traced(&server, dir.path(), QUESTION, &Tracer::new(sink.clone())).await;
    let ids: Vec<&str> = report.goals.iter().map(|g| g.id.as_str()).collect();
    assert_eq!(ids, ["g2", "g3"]);
    assert_eq!(
        report.goals[1].description,
        "who drains the outbox, and when"
    );
    assert_eq!(report.answer.reason, IntegrateReason::GoalsDone);
    let next_plan = user_text(&server.requests()[3]);
    assert!(next_plan.contains(
        "- g2 [blocked, priority 2] how retries work — blocked: the retry code is vendored"
    ));
    assert!(next_plan.contains("- g3 [pending, priority 2] who drains the outbox, and when"));
    assert!(!next_plan.contains("- g1 "), "{next_plan}");
    let applied: Vec<(String, bool)> = decisions(&sink, "goal_update")
        .iter()
        .map(|d| {
            (
                d["update"]["id"].as_str().unwrap().to_owned(),
                d["applied"].as_bool().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("g3", true),
        ("g3", true),
        ("g1", true),
        ("g2", true),
        ("g9", false),
        ("g3", true),
    ];
    assert_eq!(
        applied,
        expected.map(|(id, ok)| (id.to_owned(), ok)).to_vec()
    );
    assert!(
        report
            .rejected_updates
            .iter()
            .any(|r| r.contains("\"g9\"") && r.ends_with("no goal has this id"))
    );
    assert!(
        report
            .rejected_updates
            .contains(&"status of g7: no goal has this id".to_owned())
    );
    assert!(
        report
            .answer
            .text
            .contains("- how retries work (blocked: the retry code is vendored)")
    );
}
