use relay_agent::explore::{Confidence, ExploreConfig, ReportOrigin, StopReason};
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::toolbox::CallStatus;
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn three_tools_then_the_report() {
    let repo = checkout();
    let server = ScriptedLlm::start(vec![
        call("grep", json!({"pattern": "Plan\\(\\)"})),
        call("codegraph", json!({"operation": "search", "name": "Plan"})),
        call("read", json!({"path": "pkg/planner/plan.go"})),
        submit(
            "Planner.Plan (pkg/planner/plan.go:7) is called from main in cmd/relay/main.go.",
            json!([good_citation(), {"path": "cmd/relay/main.go", "start_line": 7, "end_line": 7}]),
            "high",
        ),
    ])
    .await;
    let agent = agent(&server, repo.path(), ExploreConfig::default()).await;
    let report = explore(&agent).await;

    assert_eq!(report.stop, StopReason::Submitted);
    assert_eq!(report.origin, ReportOrigin::Submitted);
    assert_eq!(report.confidence, Confidence::High);
    assert_eq!(report.evidence.len(), 2);
    assert_eq!(report.dropped_citations, 0);
    assert_eq!(report.iterations, 4);
    assert_eq!((report.tokens_in, report.tokens_out), (40, 20));
    let tools: Vec<&str> = report.tool_calls.iter().map(|r| r.tool.as_str()).collect();
    assert_eq!(tools, ["grep", "codegraph", "read"]);
    assert!(
        report.tool_calls.iter().all(|r| r.status == CallStatus::Ok),
        "{:?}",
        report.tool_calls
    );
    assert_eq!(report.tool_calls[2].argument_keys, ["path"]);

    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let names = tool_names(&requests[0]);
    for name in ["grep", "read", "glob", "tree", "codegraph", "submit_report"] {
        assert!(names.iter().any(|n| n == name), "{name} offered: {names:?}");
    }
    let system = messages(&requests[0])[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        system.contains("15 turns") && system.contains("25000"),
        "{system}"
    );
    assert!(!system.contains("{max_iterations}"));
    let results = tool_results(&requests[3]);
    assert!(results[0].contains("pkg/planner/plan.go"), "{}", results[0]);
    assert!(
        results[1].contains("planner.Planner.Plan"),
        "{}",
        results[1]
    );
    assert!(
        results[2].contains("func (p *Planner) Plan() error"),
        "{}",
        results[2]
    );
}

#[tokio::test]
async fn parallel_tool_calls_of_one_turn_all_answer_in_order() {
    let repo = checkout();
    let server = ScriptedLlm::start(vec![
        ScriptedReply::tool_calls(vec![
            ("glob", json!({"pattern": "**/*.go"})),
            ("read", json!({"path": "cmd/relay/main.go"})),
            ("grep", json!({"pattern": "helper"})),
            ("tree", json!({})),
        ]),
        submit("main calls Plan.", json!([good_citation()]), "medium"),
    ])
    .await;
    let agent = agent(&server, repo.path(), ExploreConfig::default()).await;
    let report = explore(&agent).await;
    assert_eq!(report.stop, StopReason::Submitted);
    assert_eq!(report.tool_calls.len(), 4);

    let requests = server.requests();
    let assistant = &messages(&requests[1])[2];
    let ids: Vec<&str> = assistant["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let answered: Vec<String> = messages(&requests[1])
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(answered, ids, "one result per call, in call order");
    let results = tool_results(&requests[1]);
    assert!(results[0].contains("cmd/relay/main.go"));
    assert!(results[1].contains("p.Plan()"));
    assert!(results[2].contains("func helper() error"));
    assert!(results[3].contains("pkg"));
}

#[tokio::test]
async fn parallel_explores_share_the_job_tool_budget() {
    let repo = checkout();
    let turn = ScriptedReply::tool_calls(vec![
        ("grep", json!({"pattern": "Planner"})),
        (
            "submit_report",
            json!({"answer": "Plan is defined in plan.go.", "evidence": [good_citation()], "confidence": "medium"}),
        ),
    ]);
    let server = ScriptedLlm::start(vec![turn.clone(), turn.clone(), turn]).await;
    let agent = agent(&server, repo.path(), ExploreConfig::default()).await;
    let requests = (0..3)
        .map(|i| {
            relay_agent::explore::ExploreRequest::new(
                format!("question {i}"),
                relay_agent::explore::Thoroughness::Quick,
            )
        })
        .collect();
    let reports = agent.explore_all(requests).await;
    assert_eq!(reports.len(), 3);
    for report in reports {
        let report = report.unwrap();
        assert_eq!(report.stop, StopReason::Submitted);
        assert_eq!(
            report.tool_calls.len(),
            1,
            "each explore has its own records"
        );
    }
    assert_eq!(
        agent.toolbox().job_usage().calls,
        3,
        "all charge the job's budget"
    );
}
