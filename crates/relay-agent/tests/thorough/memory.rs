//! What thorough mode carries across stages and queries: a later query on the same issue starts
//! from what earlier ones established (their summaries, in every stage's prompt), the traversal
//! state keeps calls as structure, and the goals' order is enforced, not only shown.

use relay_agent::llm::scripted::ScriptedLlm;
use relay_agent::thorough::analyze;
use relay_agent::thorough::state::TraversalState;
use relay_agent::trace::Tracer;
use serde_json::json;

use crate::support::*;

fn two_goals_in_order() -> relay_agent::llm::scripted::ScriptedReply {
    reply(json!({
        "primary_intent": "trace a webhook to its comment",
        "goals": [
            {"id": "g1", "description": "where a webhook is queued", "priority": 2, "depends_on": []},
            {"id": "g2", "description": "how a queued job becomes a comment", "priority": 1, "depends_on": ["g1"]}
        ],
        "constraints": [], "ambiguities": [], "confidence": 0.8
    }))
}

/// The Navigator asks for g2 first; g2 depends on g1, still open: the stage takes g1 (what g2
/// waits for), records g2 as deferred, and the next Navigator is told why.
#[tokio::test]
async fn a_target_whose_dependency_is_open_is_deferred_and_the_navigator_told_why() {
    let dir = checkout();
    let server = ScriptedLlm::start(vec![
        two_goals_in_order(),
        plan(
            &["g2"],
            json!([step("read", json!({"path": "queue/queue.go"}))]),
        ),
        synthesis(json!([claim(
            "Enqueue stores the delivery as a job through insertJob.",
            &[],
            json!([cite("queue/queue.go", 4, 6, "return insertJob(body)")])
        )])),
        critic(
            "APPROVED",
            &[("g1", "satisfied"), ("g2", "unmet")],
            json!({}),
        ),
        plan(
            &["g2"],
            json!([step("read", json!({"path": "worker/worker.go"}))]),
        ),
        synthesis(json!([claim(
            "Run posts the job's comment through tracker.PostComment.",
            &[],
            json!([cite(
                "worker/worker.go",
                7,
                7,
                "return tracker.PostComment(\"done\")"
            )])
        )])),
        critic(
            "APPROVED",
            &[("g1", "satisfied"), ("g2", "satisfied")],
            json!({}),
        ),
    ])
    .await;
    let report = run(&server, dir.path(), QUESTION).await;
    let first = &report.stages[0];
    assert_eq!(first.target_goals, ["g1"], "what g2 waits for is taken");
    assert_eq!(first.deferred_goals.len(), 1);
    assert_eq!(first.deferred_goals[0].id, "g2");
    // The claim without goal ids answers the stage's (enforced) target.
    assert_eq!(report.answer.claims[0].goals, ["g1"]);
    let navigators: Vec<usize> = stages(&server)
        .iter()
        .enumerate()
        .filter(|(_, s)| *s == "thorough_navigator")
        .map(|(at, _)| at)
        .collect();
    assert_eq!(navigators.len(), 2, "{:?}", stages(&server));
    let second_navigator = user_text(&server.requests()[navigators[1]]);
    assert!(
        second_navigator.contains(
            "Goal order: g2 was deferred: it depends on g1, still open; take that first."
        ),
        "{second_navigator}"
    );
    // Once g1 is satisfied, g2 is taken.
    assert_eq!(report.stages[1].target_goals, ["g2"]);
    assert!(report.stages[1].deferred_goals.is_empty());
}

/// A second query on the same issue (the same traversal state) starts from what the first
/// established: its context summary is kept in the state (and so persisted with it), and every
/// stage's prompt of the next query carries it; the calls the first one saw are structure
/// (caller → callee), shown as chains.
#[tokio::test]
async fn a_later_query_on_the_issue_starts_from_what_earlier_ones_established() {
    let dir = checkout();
    let mut state = TraversalState::default();
    let first = ScriptedLlm::start(vec![
        intent(&[("g1", "where a webhook is verified and queued")]),
        plan(
            &["g1"],
            json!([step("read", json!({"path": "gateway/webhook.go"}))]),
        ),
        synthesis(json!([claim(
            "HandleWebhook verifies the body before it queues it.",
            &["g1"],
            json!([cite(
                "gateway/webhook.go",
                6,
                10,
                "func HandleWebhook(body []byte) error {"
            )])
        )])),
        critic("APPROVED", &[("g1", "satisfied")], json!({})),
    ])
    .await;
    let tracer = Tracer::noop();
    let toolbox = toolbox(dir.path()).await;
    let report = analyze(
        &client(&first),
        &toolbox,
        QUESTION,
        &mut state,
        &tracer,
        TIME_LIMIT,
    )
    .await
    .unwrap();
    assert!(!report.context_summary.is_empty());
    assert_eq!(
        state.summaries.iter().collect::<Vec<_>>(),
        [&report.context_summary]
    );
    let stored: TraversalState =
        serde_json::from_value(serde_json::to_value(&state).unwrap()).unwrap();
    assert_eq!(stored, state, "the summary is persisted with the state");

    let second = ScriptedLlm::start(vec![
        intent(&[("g1", "how a queued job becomes a comment")]),
        plan(
            &["g1"],
            json!([
                step("read", json!({"path": "queue/queue.go"})),
                step(
                    "codegraph",
                    json!({"operation": "callers", "qname": "example.com/relay/queue.Enqueue"})
                )
            ]),
        ),
        synthesis(json!([claim(
            "Enqueue stores the delivery as a job through insertJob.",
            &["g1"],
            json!([cite("queue/queue.go", 4, 6, "return insertJob(body)")])
        )])),
        critic("APPROVED", &[("g1", "satisfied")], json!({})),
    ])
    .await;
    analyze(
        &client(&second),
        &toolbox,
        "Where is a queued job turned into a comment?",
        &mut state,
        &tracer,
        TIME_LIMIT,
    )
    .await
    .unwrap();
    let requests = second.requests();
    assert_eq!(
        stages(&second),
        [
            "thorough_intent",
            "thorough_navigator",
            "thorough_synthesizer",
            "thorough_critic"
        ]
    );
    for (at, request) in requests.iter().enumerate() {
        let text = user_text(request);
        assert!(
            text.contains("Established by earlier queries on this issue:")
                && text.contains(&report.context_summary),
            "stage request {at} lacks the first query's summary: {text}"
        );
    }
    assert_eq!(state.summaries.len(), 2);
    // The callers answer became edges: who calls Enqueue.
    assert!(
        state
            .edges
            .iter()
            .any(|e| e.to == "example.com/relay/queue.Enqueue" && e.from.ends_with("HandleWebhook")),
        "{:?}",
        state.edges
    );
    let critic_text = user_text(&requests[3]);
    assert!(
        critic_text.contains("- calls seen (caller → callee):")
            && critic_text.contains("HandleWebhook → example.com/relay/queue.Enqueue"),
        "{critic_text}"
    );
}
