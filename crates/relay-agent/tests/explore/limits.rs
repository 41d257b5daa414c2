use std::time::Duration;

use relay_agent::explore::{ExploreBudget, ExploreConfig, ReportOrigin, StopReason};
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn repeating_a_call_gets_a_nudge_then_forced_synthesis() {
    let repo = checkout();
    let same = || call("grep", json!({"pattern": "Plan"}));
    let server = ScriptedLlm::start(vec![
        same(),
        call("grep", json!({"pattern": " Plan ", "path": null})),
        same(),
        same(),
        submit("Plan is in plan.go.", json!([good_citation()]), "medium"),
    ])
    .await;
    let agent = agent(&server, repo.path(), ExploreConfig::default()).await;
    let report = explore(&agent).await;
    assert_eq!(report.stop, StopReason::LoopDetected);
    assert_eq!(report.origin, ReportOrigin::ForcedSynthesis);
    assert_eq!(report.evidence.len(), 1);

    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let nudges = |index: usize| {
        messages(&requests[index])
            .iter()
            .filter(|m| {
                m["role"] == "user"
                    && m["content"]
                        .as_str()
                        .unwrap()
                        .contains("repeating yourself")
            })
            .count()
    };
    assert_eq!(nudges(2), 0);
    assert_eq!(nudges(3), 1, "the nudge follows the third identical call");
    assert!(!is_forced_synthesis(&requests[3]));
    assert!(is_forced_synthesis(&requests[4]));
}

#[tokio::test]
async fn the_iteration_cap_forces_synthesis() {
    let repo = checkout();
    let mut config = ExploreConfig::default();
    config.quick = ExploreBudget {
        max_iterations: 3,
        ..config.quick
    };
    let server = ScriptedLlm::start(vec![
        call("read", json!({"path": "pkg/planner/plan.go"})),
        call("read", json!({"path": "cmd/relay/main.go"})),
        call("glob", json!({"pattern": "*.mod"})),
        submit("main calls Plan.", json!([good_citation()]), "high"),
    ])
    .await;
    let agent = agent(&server, repo.path(), config).await;
    let report = explore(&agent).await;
    assert_eq!(report.stop, StopReason::IterationCap);
    assert_eq!(report.origin, ReportOrigin::ForcedSynthesis);
    assert_eq!(report.iterations, 4, "three turns and the synthesis");
    assert!(is_forced_synthesis(&server.requests()[3]));
}

#[tokio::test]
async fn the_hard_token_limit_forces_synthesis_and_a_useless_reply_gives_insufficient_evidence() {
    let repo = checkout();
    let server = ScriptedLlm::start(vec![
        with_usage(call("read", json!({"path": "pkg/planner/plan.go"})), 16_000),
        with_usage(call("grep", json!({"pattern": "helper"})), 10_000),
        ScriptedReply::text("I believe it is somewhere in planner."),
    ])
    .await;
    let agent = agent(&server, repo.path(), ExploreConfig::default()).await;
    let report = explore(&agent).await;
    assert_eq!(report.stop, StopReason::TokenLimit);
    assert_eq!(report.origin, ReportOrigin::InsufficientEvidence);
    assert!(
        report.answer.starts_with("Insufficient evidence"),
        "{}",
        report.answer
    );
    assert!(
        report
            .answer
            .contains("read {\"path\":\"pkg/planner/plan.go\"}"),
        "{}",
        report.answer
    );
    assert_eq!(report.unanswered, ["Who calls Planner.Plan?"]);

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let wrap_up = |index: usize| {
        messages(&requests[index]).iter().any(|m| {
            m["role"] == "user"
                && m["content"]
                    .as_str()
                    .unwrap()
                    .contains("most of your token budget")
        })
    };
    assert!(!wrap_up(0));
    assert!(wrap_up(1), "the soft limit (15k) earns one wrap-up nudge");
    assert!(is_forced_synthesis(&requests[2]));
}

#[tokio::test]
async fn the_time_limit_forces_synthesis() {
    let repo = checkout();
    let config = ExploreConfig {
        time_limit: Duration::from_millis(200),
        ..ExploreConfig::default()
    };
    let server = ScriptedLlm::start(vec![
        ScriptedReply::Delayed {
            delay_ms: 5_000,
            reply: Box::new(call("grep", json!({"pattern": "Plan"}))),
        },
        submit("Plan is in plan.go.", json!([good_citation()]), "low"),
    ])
    .await;
    let agent = agent(&server, repo.path(), config).await;
    let report = explore(&agent).await;
    assert_eq!(report.stop, StopReason::TimeLimit);
    assert_eq!(report.origin, ReportOrigin::ForcedSynthesis);
    assert!(report.tool_calls.is_empty());
    assert!(is_forced_synthesis(&server.requests()[1]));
}
