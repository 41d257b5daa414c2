//! The spec writer: explores, submits a complete spec, which renders and splits into parts.

use std::sync::Arc;

use relay_agent::context::ContextBuilder;
use relay_agent::llm::Role;
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::spec::{SpecError, SpecWriter};
use relay_core::action::ReadyForSpecGeneration;
use serde_json::json;

use crate::context::sample_issue;
use crate::support::{FakeExplorer, client};

fn handover() -> ReadyForSpecGeneration {
    ReadyForSpecGeneration {
        proceed_signal: "go ahead".into(),
        proceed_note_id: Some("n1".into()),
        context_summary: "exponential backoff for server retries".into(),
        closed_gaps: vec!["1".into()],
        finding_ids: vec![1],
    }
}

fn spec_args(changes: usize) -> serde_json::Value {
    json!({
        "title": "Exponential backoff for upstream retries",
        "goal": "Stop hammering a failing upstream.",
        "context": "Retries sleep a fixed 100 ms (client.go:40-52).",
        "decisions": ["Server only (gap 1, answered).", "Assumption: cap at 30 s."],
        "changes": (0..changes).map(|i| json!({"path": format!("pkg/file{i}.go"), "change": "Replace the fixed sleep with a capped exponential backoff. ".repeat(20)})).collect::<Vec<_>>(),
        "test_plan": ["retry delays double up to the cap"],
        "risks": ["slower recovery when the upstream comes back"]
    })
}

#[tokio::test]
async fn spec_writer_explores_then_submits_a_complete_spec() {
    let server = ScriptedLlm::start(vec![
        ScriptedReply::tool_calls(vec![(
            "explore",
            json!({"query": "where are retries slept?", "thoroughness": "quick"}),
        )]),
        ScriptedReply::tool_calls(vec![("submit_spec", spec_args(2))]),
    ])
    .await;
    let explorer = Arc::new(FakeExplorer::default());
    let writer = SpecWriter::new(
        client(&server.base_url(), Role::Spec),
        explorer.clone(),
        6,
        4,
    );
    let context = ContextBuilder::default().build(&sample_issue());
    let draft = writer.write(&context, &handover()).await.unwrap();
    assert_eq!(draft.iterations, 2);
    assert_eq!(draft.explore_tokens, 1_000);
    for heading in [
        "## Exponential backoff for upstream retries",
        "### Goal",
        "### Context",
        "### Decisions and assumptions",
        "### Changes",
        "#### `pkg/file1.go`",
        "### Test plan",
        "### Risks",
    ] {
        assert!(
            draft.markdown.contains(heading),
            "{heading}\n{}",
            draft.markdown
        );
    }
    let requests = server.requests();
    let first = requests[0].body.to_string();
    assert!(first.contains("Proceed signal (a human's words, verbatim): \\\"go ahead\\\""));
    assert!(requests[1].body.to_string().contains("config.go:10-12"));
}

#[tokio::test]
async fn spec_writer_forces_the_submission_on_its_last_turn_and_reports_the_cap() {
    let explore = || {
        ScriptedReply::tool_calls(vec![(
            "explore",
            json!({"query": "more?", "thoroughness": "quick"}),
        )])
    };
    let server =
        ScriptedLlm::start(vec![explore(), ScriptedReply::text("I think I am done")]).await;
    let writer = SpecWriter::new(
        client(&server.base_url(), Role::Spec),
        Arc::new(FakeExplorer::default()),
        2,
        4,
    );
    let context = ContextBuilder::default().build(&sample_issue());
    let error = writer.write(&context, &handover()).await.unwrap_err();
    assert!(matches!(error, SpecError::IterationCap(2)), "{error}");
    let last = &server.requests()[1].body;
    assert_eq!(last["tool_choice"]["function"]["name"], "submit_spec");
    assert_eq!(last["tools"].as_array().unwrap().len(), 1);
}
