use relay_agent::explore::{Confidence, ExploreConfig, ReportOrigin, StopReason};
use relay_agent::llm::scripted::ScriptedLlm;
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn invalid_citations_are_reported_once_then_dropped() {
    let repo = checkout();
    let evidence = json!([
        good_citation(),
        {"path": "pkg/planner/plan.go", "start_line": 40, "end_line": 42},
        {"path": "pkg/planner/missing.go", "start_line": 1, "end_line": 2},
        {"path": "pkg/planner/plan.go", "start_line": 7, "end_line": 9, "quote": "func Plan(ctx context.Context)"},
        {"path": "../../../etc/passwd", "start_line": 1, "end_line": 1}
    ]);
    let server = ScriptedLlm::start(vec![
        call("read", json!({"path": "pkg/planner/plan.go"})),
        submit("Plan is at plan.go:7.", evidence.clone(), "high"),
        submit("Plan is at plan.go:7.", evidence, "high"),
    ])
    .await;
    let agent = agent(&server, repo.path(), ExploreConfig::default()).await;
    let report = explore(&agent).await;

    assert_eq!(report.stop, StopReason::Submitted);
    assert_eq!(report.origin, ReportOrigin::Submitted);
    assert_eq!(report.dropped_citations, 4);
    assert_eq!(report.evidence.len(), 1);
    assert_eq!(report.evidence[0].path, "pkg/planner/plan.go");
    assert_eq!(
        (report.evidence[0].start_line, report.evidence[0].end_line),
        (7, 9)
    );
    assert_eq!(
        report.confidence,
        Confidence::High,
        "a verified citation keeps it"
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let feedback = tool_results(&requests[2]).pop().unwrap();
    assert!(
        feedback.contains("4 of your citations failed"),
        "{feedback}"
    );
    assert!(
        feedback.contains("the file has only 13 lines"),
        "{feedback}"
    );
    assert!(feedback.contains("missing.go: no such file"), "{feedback}");
    assert!(feedback.contains("the quote does not match"), "{feedback}");
    assert!(feedback.contains("etc/passwd: no such file"), "{feedback}");
    let warnings = requests
        .iter()
        .flat_map(tool_results)
        .filter(|r| r.contains("failed verification"))
        .count();
    assert_eq!(warnings, 1, "told once");
}

#[tokio::test]
async fn an_answer_without_surviving_evidence_is_low_confidence() {
    let repo = checkout();
    let wrong = json!([{"path": "pkg/planner/plan.go", "start_line": 1, "end_line": 2, "quote": "func Plan"}]);
    let server = ScriptedLlm::start(vec![
        submit("Plan is in plan.go.", wrong.clone(), "high"),
        submit("Plan is in plan.go.", wrong, "high"),
    ])
    .await;
    let agent = agent(&server, repo.path(), ExploreConfig::default()).await;
    let report = explore(&agent).await;
    assert_eq!(report.evidence, []);
    assert_eq!(report.dropped_citations, 1);
    assert_eq!(report.confidence, Confidence::Low);

    let server = ScriptedLlm::start(vec![submit("No idea, maybe main.", json!([]), "high")]).await;
    let agent = crate::support::agent(&server, repo.path(), ExploreConfig::default()).await;
    let report = explore(&agent).await;
    assert_eq!(
        report.confidence,
        Confidence::Low,
        "no citation, no confidence"
    );
    assert_eq!(report.dropped_citations, 0);
}
