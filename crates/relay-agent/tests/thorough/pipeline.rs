//! The whole pipeline on one stage: what each LLM stage is sent, how claims become evidence, and
//! the contract of the final answer.

use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::thorough::integration::StepRef;
use relay_agent::thorough::routing::IntegrateReason;
use relay_agent::thorough::state::TraversalState;
use relay_agent::thorough::{ThoroughReport, analyze};
use relay_agent::trace::Tracer;
use relay_tools::citation::verify;
use relay_tools::sandbox::Sandbox;
use serde_json::json;

use crate::support::*;

/// The contract: every line the answer states before its first section names at least one
/// citation, every citation it names verifies against the checkout, and each such line is one of
/// the report's claims.
pub fn assert_answer_is_grounded(report: &ThoroughReport, root: &std::path::Path) {
    let sandbox = Sandbox::new(root).unwrap();
    let findings = report.answer.text.split("\n\n").next().unwrap();
    let mut stated = 0;
    for line in findings.lines().filter(|l| l.starts_with("- ")) {
        stated += 1;
        let claim = report
            .answer
            .claims
            .iter()
            .find(|c| line.starts_with(&format!("- {}", c.text)))
            .unwrap_or_else(|| panic!("a stated line that is no claim: {line}"));
        assert!(!claim.citations.is_empty(), "{line}");
        assert_eq!(claim.citations.len(), claim.seen_in.len(), "{line}");
        for citation in &claim.citations {
            assert!(line.contains(&format!("[{citation}]")), "{line}");
            verify(&sandbox, citation)
                .unwrap_or_else(|problem| panic!("{line}: unverifiable citation: {problem}"));
        }
    }
    assert_eq!(stated, report.answer.claims.len());
}

#[tokio::test]
async fn one_stage_answers_with_verified_claims_and_their_evidence_chain() {
    let dir = checkout();
    let server = ScriptedLlm::start(vec![
        intent(&[
            ("g1", "where a webhook is verified and queued"),
            ("g2", "how a queued job becomes a comment"),
        ]),
        plan(
            &["g1", "g2"],
            json!([
                step("read", json!({"path": "gateway/webhook.go"})),
                step("read", json!({"path": "queue/queue.go"})),
                step("grep", json!({"pattern": "PostComment\\("})),
            ]),
        ),
        synthesis(json!([
            claim(
                "HandleWebhook verifies the body before it queues it.",
                &["g1"],
                json!([cite(
                    "gateway/webhook.go",
                    6,
                    10,
                    "func HandleWebhook(body []byte) error {"
                )])
            ),
            claim(
                "Enqueue stores the delivery as a job through insertJob.",
                &["g1"],
                json!([cite("queue/queue.go", 4, 6, "return insertJob(body)")])
            ),
            // A real file nobody looked at: a guess, dropped.
            claim(
                "F3 retries lost deliveries.",
                &["g2"],
                json!([cite("extra/f3.go", 4, 4, "func F3() {}")])
            ),
            // A quote that is not there: dropped.
            claim(
                "Verify compares HMACs.",
                &["g1"],
                json!([cite("gateway/webhook.go", 14, 14, "hmac.Equal")])
            ),
            // No citation at all: dropped.
            claim("Deliveries are never lost.", &["g2"], json!([])),
            claim(
                "Run posts the job's comment through tracker.PostComment.",
                &[],
                json!([cite(
                    "worker/worker.go",
                    7,
                    7,
                    "return tracker.PostComment(\"done\")"
                )])
            ),
        ])),
        critic(
            "APPROVED",
            &[("g1", "satisfied"), ("g2", "satisfied")],
            json!({}),
        ),
    ])
    .await;

    let report = run(&server, dir.path(), QUESTION).await;

    assert_eq!(report.answer.reason, IntegrateReason::GoalsDone);
    assert_eq!(report.llm_calls, 4);
    assert_eq!(
        stages(&server),
        [
            "thorough_intent",
            "thorough_navigator",
            "thorough_synthesizer",
            "thorough_critic"
        ]
    );
    let texts: Vec<&str> = report
        .answer
        .claims
        .iter()
        .map(|c| c.text.as_str())
        .collect();
    assert_eq!(
        texts,
        [
            "HandleWebhook verifies the body before it queues it.",
            "Enqueue stores the delivery as a job through insertJob.",
            "Run posts the job's comment through tracker.PostComment.",
        ]
    );
    // The evidence chain: each citation names the step whose output showed its file.
    let chain: Vec<Vec<StepRef>> = report
        .answer
        .claims
        .iter()
        .map(|c| c.seen_in.clone())
        .collect();
    let at = |step| StepRef {
        stage: 1,
        attempt: 0,
        step,
    };
    assert_eq!(chain, [vec![at(0)], vec![at(1)], vec![at(2)]]);
    // A claim without goal ids answers the stage's targets.
    assert_eq!(report.answer.claims[2].goals, ["g1", "g2"]);
    let stage = &report.stages[0];
    assert_eq!((stage.verified_claims, stage.dropped_claims), (3, 3));
    assert_eq!(
        stage.rejected_citations.len(),
        2,
        "{:?}",
        stage.rejected_citations
    );
    assert!(stage.rejected_citations[0].contains("no step of this query showed this file"));
    assert!(report.answer.open_goals.is_empty());
    for dropped in ["F3 retries", "HMAC", "never lost"] {
        assert!(
            !report.answer.text.contains(dropped),
            "{}",
            report.answer.text
        );
    }
    assert_answer_is_grounded(&report, dir.path());

    // What each stage was sent.
    let requests = server.requests();
    let intent_text = user_text(&requests[0]);
    assert!(
        intent_text.contains(&format!("<<<\n{QUESTION}\n>>>")),
        "{intent_text}"
    );
    assert!(system_text(&requests[0]).contains("Intent stage"));
    let navigator_text = user_text(&requests[1]);
    assert!(navigator_text.contains("- g1 [pending, priority 1] where a webhook is verified"));
    assert!(
        navigator_text.contains("- codegraph: "),
        "the tools and their arguments are listed"
    );
    assert!(navigator_text.contains("Verified so far: nothing."));
    assert!(system_text(&requests[1]).contains("at most 6 steps"));
    let synth_text = user_text(&requests[2]);
    assert!(synth_text.contains("### Step 1: read"));
    assert!(synth_text.contains("gateway/webhook.go (lines 1-"));
    assert!(synth_text.contains("### Step 3: grep"));
    assert!(synth_text.contains("worker/worker.go:7:"));
    let critic_text = user_text(&requests[3]);
    assert!(critic_text.contains("Verified so far:\n- (g1) HandleWebhook verifies"));
    assert!(
        !critic_text.contains("F3 retries"),
        "unverified claims never reach the Critic"
    );
    assert!(critic_text.contains("3. grep"));
}

#[tokio::test]
async fn an_empty_question_asks_for_clarification_without_an_llm_call() {
    let dir = checkout();
    let server = ScriptedLlm::start(vec![]).await;
    let report = run(&server, dir.path(), " \u{0}\n\t?! ").await;
    assert_eq!(report.answer.reason, IntegrateReason::NeedsClarification);
    assert!(server.requests().is_empty());
    assert_eq!(report.llm_calls, 0);
    assert!(
        report
            .answer
            .text
            .contains("Needs clarification: The question is empty")
    );
}

#[tokio::test]
async fn an_incomprehensible_question_is_clarified_an_ambiguous_one_explored() {
    let dir = checkout();
    let server = ScriptedLlm::start(vec![reply(json!({
        "primary_intent": "unclear", "goals": [], "confidence": 0.1,
        "clarification": "Which component do you mean by 'the thing'?"
    }))])
    .await;
    let report = run(&server, dir.path(), "the thing broke?").await;
    assert_eq!(report.answer.reason, IntegrateReason::NeedsClarification);
    assert_eq!(report.llm_calls, 1);
    assert_eq!(
        report.answer.clarification.as_deref(),
        Some("Which component do you mean by 'the thing'?")
    );

    // With goals, a clarification is not asked: the code is explored first.
    let server = ScriptedLlm::start(
        [
            vec![reply(json!({
                "primary_intent": "find the queue", "confidence": 0.5,
                "goals": [{"id": "g1", "description": "where jobs are queued", "priority": 1}],
                "ambiguities": ["GitHub or GitLab webhooks"],
                "clarification": "GitHub or GitLab?"
            }))],
            queue_stage("g1"),
            vec![critic("APPROVED", &[("g1", "satisfied")], json!({}))],
        ]
        .concat(),
    )
    .await;
    let report = run(&server, dir.path(), "where are jobs queued?").await;
    assert_eq!(report.answer.reason, IntegrateReason::GoalsDone);
    assert_eq!(report.answer.clarification, None);
    assert_eq!(report.ambiguities, ["GitHub or GitLab webhooks"]);
}

#[tokio::test]
async fn an_unusable_llm_is_an_error_and_a_failing_stage_ends_with_what_is_known() {
    let dir = checkout();
    let toolbox = toolbox(dir.path()).await;
    let server = ScriptedLlm::start(vec![ScriptedReply::error(401)]).await;
    let result = analyze(
        &client(&server),
        &toolbox,
        QUESTION,
        &mut TraversalState::default(),
        &Tracer::noop(),
        TIME_LIMIT,
    )
    .await;
    assert!(result.is_err(), "a refused key is an error, not an answer");

    // The Synthesizer's reply stays invalid (one corrective retry, both counted).
    let server = ScriptedLlm::start(vec![
        intent(&[("g1", "where jobs are queued")]),
        plan(
            &["g1"],
            json!([step("read", json!({"path": "queue/queue.go"}))]),
        ),
        reply(json!({"evidence": "not a list"})),
        reply(json!({"evidence": [{"claim": 3}]})),
    ])
    .await;
    let report = run(&server, dir.path(), "where are jobs queued?").await;
    assert_eq!(report.answer.reason, IntegrateReason::LlmFailed);
    assert_eq!(report.llm_calls, 4);
    assert!(
        report
            .llm_error
            .as_deref()
            .unwrap()
            .starts_with("invalid_output")
    );
    assert!(report.answer.text.starts_with("Nothing could be verified"));
    assert!(
        report
            .answer
            .text
            .contains("- where jobs are queued (not explored)")
    );
    // The corrective retry said what was wrong.
    let retry = user_text(&server.requests()[3]);
    assert!(
        retry.contains("does not match the required JSON schema"),
        "{retry}"
    );
}
