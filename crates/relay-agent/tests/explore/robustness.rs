//! Real small models: empty replies, malformed or empty arguments, unknown tools, JSON in the
//! text, never calling submit_report. Each ends in a bounded, clean report.

use relay_agent::Error;
use relay_agent::explore::{ExploreConfig, ReportOrigin, StopReason};
use relay_agent::llm::ErrorKind;
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply, ScriptedToolCall, ScriptedUsage};
use relay_agent::toolbox::CallStatus;
use serde_json::{Value, json};

use crate::support::*;

fn raw_call(name: &str, arguments: Value) -> ScriptedReply {
    ScriptedReply::ToolCalls {
        calls: vec![ScriptedToolCall {
            id: None,
            name: name.to_owned(),
            arguments,
        }],
        text: None,
        usage: ScriptedUsage::default(),
    }
}

#[tokio::test]
async fn empty_replies_end_in_insufficient_evidence() {
    let repo = checkout();
    let server = ScriptedLlm::start(vec![
        ScriptedReply::text(""),
        ScriptedReply::text(""),
        ScriptedReply::text(""),
        ScriptedReply::text(""),
    ])
    .await;
    let agent = agent(&server, repo.path(), ExploreConfig::default()).await;
    let report = explore(&agent).await;
    assert_eq!(report.stop, StopReason::NoProgress);
    assert_eq!(report.origin, ReportOrigin::InsufficientEvidence);
    assert!(
        report.answer.contains("No tool call was made"),
        "{}",
        report.answer
    );
    assert_eq!(
        server.requests().len(),
        4,
        "three idle turns and the synthesis"
    );
}

#[tokio::test]
async fn malformed_and_empty_arguments_and_unknown_tools_become_error_results() {
    let repo = checkout();
    let server = ScriptedLlm::start(vec![
        raw_call("grep", Value::String("{\"pattern\": \"Plan".to_owned())),
        raw_call("read", Value::String(String::new())),
        raw_call("search_code", json!({"query": "Plan"})),
        submit("Plan is in plan.go.", json!([good_citation()]), "medium"),
    ])
    .await;
    let agent = agent(&server, repo.path(), ExploreConfig::default()).await;
    let report = explore(&agent).await;
    assert_eq!(report.stop, StopReason::NoProgress);
    assert_eq!(report.origin, ReportOrigin::ForcedSynthesis);
    assert_eq!(report.tool_calls.len(), 3);
    assert!(
        report
            .tool_calls
            .iter()
            .all(|r| matches!(r.status, CallStatus::Error { .. }))
    );

    let results = tool_results(&server.requests()[3]);
    assert!(results[0].contains("not valid JSON"), "{}", results[0]);
    assert!(
        results[1].contains("path"),
        "empty arguments name the missing argument: {}",
        results[1]
    );
    assert!(
        results[2].contains("unknown tool `search_code`"),
        "{}",
        results[2]
    );
    assert!(
        results[2].contains("grep, read, glob, tree, codegraph"),
        "{}",
        results[2]
    );
}

#[tokio::test]
async fn a_report_written_as_json_text_is_accepted() {
    let repo = checkout();
    let text = format!(
        "Here is my report:\n```json\n{}\n```",
        json!({"name": "submit_report", "arguments": {"answer": "Plan is in plan.go.", "evidence": [good_citation()], "confidence": "high", "unanswered": []}})
    );
    let server = ScriptedLlm::start(vec![ScriptedReply::text(text)]).await;
    let agent = agent(&server, repo.path(), ExploreConfig::default()).await;
    let report = explore(&agent).await;
    assert_eq!(report.stop, StopReason::Submitted);
    assert_eq!(report.origin, ReportOrigin::Submitted);
    assert_eq!(report.evidence.len(), 1);
}

#[tokio::test]
async fn a_model_that_never_submits_gets_a_bounded_report() {
    let repo = checkout();
    let server = ScriptedLlm::start(vec![
        call("read", json!({"path": "pkg/planner/plan.go"})),
        ScriptedReply::text("Plan is called by main."),
        ScriptedReply::text("As I said, main."),
        ScriptedReply::text("main."),
        ScriptedReply::text("main calls it."),
    ])
    .await;
    let agent = agent(&server, repo.path(), ExploreConfig::default()).await;
    let report = explore(&agent).await;
    assert_eq!(report.stop, StopReason::NoProgress);
    assert_eq!(report.origin, ReportOrigin::InsufficientEvidence);
    assert!(
        report.answer.contains("Tried 1 tool calls"),
        "{}",
        report.answer
    );
    assert_eq!(server.requests().len(), 5);
    assert_eq!(server.remaining(), 0);
}

#[tokio::test]
async fn an_invalid_submit_report_is_corrected() {
    let repo = checkout();
    let server = ScriptedLlm::start(vec![
        raw_call(
            "submit_report",
            json!({"answer": "Plan", "confidence": "certain"}),
        ),
        submit("Plan is in plan.go.", json!([good_citation()]), "high"),
    ])
    .await;
    let agent = agent(&server, repo.path(), ExploreConfig::default()).await;
    let report = explore(&agent).await;
    assert_eq!(report.stop, StopReason::Submitted);
    let feedback = tool_results(&server.requests()[1]).pop().unwrap();
    assert!(
        feedback.contains("invalid arguments for tool `submit_report`"),
        "{feedback}"
    );
}

#[tokio::test]
async fn an_unreachable_model_or_a_refused_key_is_an_error() {
    let repo = checkout();
    let server = ScriptedLlm::start(vec![ScriptedReply::error(401)]).await;
    let agent = agent(&server, repo.path(), ExploreConfig::default()).await;
    let error = agent
        .explore(relay_agent::explore::ExploreRequest::new(
            "q",
            relay_agent::explore::Thoroughness::Quick,
        ))
        .await
        .unwrap_err();
    let Error::Llm { source } = &error else {
        panic!("{error}");
    };
    assert_eq!(source.kind(), ErrorKind::Authentication);

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let dead = ScriptedLlm::start(vec![]).await;
    let _ = dead;
    let text = format!(
        "[default]\nprovider = \"openai\"\nbase_url = \"http://{address}/v1\"\nmodel = \"m\"\napi_key = \"k\"\ntimeout_secs = 5\n"
    );
    let settings: relay_agent::llm::LlmSettings = toml::from_str(&text).unwrap();
    let client =
        relay_agent::llm::LlmClient::from_settings(&settings, relay_agent::llm::Role::Explore)
            .unwrap()
            .with_retry_policy(relay_agent::llm::RetryPolicy {
                max_retries: 0,
                ..Default::default()
            });
    let toolbox =
        relay_agent::toolbox::Toolbox::new(repo.path(), None, Default::default()).unwrap();
    let agent = relay_agent::explore::ExploreAgent::new(
        client,
        std::sync::Arc::new(toolbox),
        ExploreConfig::default(),
    );
    let error = agent
        .explore(relay_agent::explore::ExploreRequest::new(
            "q",
            relay_agent::explore::Thoroughness::Quick,
        ))
        .await
        .unwrap_err();
    let Error::Llm { source } = &error else {
        panic!("{error}");
    };
    assert_eq!(source.kind(), ErrorKind::Network);
}

#[tokio::test]
async fn a_huge_retry_after_mid_run_ends_cleanly() {
    let repo = checkout();
    let mut limited = ScriptedReply::error(429);
    if let ScriptedReply::Error { headers, .. } = &mut limited {
        headers.insert("retry-after".to_owned(), "1e20".to_owned());
    }
    let server = ScriptedLlm::start(vec![
        call("read", json!({"path": "pkg/planner/plan.go"})),
        limited,
    ])
    .await;
    let agent = agent(&server, repo.path(), ExploreConfig::default()).await;
    let report = explore(&agent).await;
    assert_eq!(report.stop, StopReason::LlmError);
    assert_eq!(report.origin, ReportOrigin::InsufficientEvidence);
    assert!(
        report.llm_error.as_deref().unwrap().starts_with("deadline"),
        "{:?}",
        report.llm_error
    );
}

#[tokio::test]
async fn tool_calls_written_as_text_are_run() {
    let repo = checkout();
    let server = ScriptedLlm::start(vec![
        ScriptedReply::text(r#"Let me look: {"name": "read", "arguments": {"path": "pkg/planner/plan.go"}}"#),
        ScriptedReply::text(format!(
            "Done. {}",
            json!({"answer": "Plan is in plan.go.", "evidence": [good_citation()], "confidence": "high"})
        )),
    ])
    .await;
    let agent = agent(&server, repo.path(), ExploreConfig::default()).await;
    let report = explore(&agent).await;
    assert_eq!(report.stop, StopReason::Submitted);
    assert_eq!(report.tool_calls.len(), 1);
    assert!(report.tool_calls[0].is_ok());
    let request = &server.requests()[1];
    let assistant = &messages(request)[2];
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "read");
    assert!(tool_results(request)[0].contains("func (p *Planner) Plan() error"));
}
