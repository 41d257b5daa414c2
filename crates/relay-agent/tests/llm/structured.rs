//! Structured output with corrective retries, against the scripted server.

use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::llm::{ChatRequest, LlmError, Message, StructuredOptions};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::support::{client_for, client_with};

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Verdict {
    Clear,
    NeedsInfo,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Triage {
    verdict: Verdict,
    questions: Vec<String>,
    estimate_hours: Option<u32>,
}

fn request() -> ChatRequest {
    ChatRequest::new(vec![
        Message::system("Triage the issue."),
        Message::user("It crashes."),
    ])
}

fn last_user_message(body: &serde_json::Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    match &last["content"] {
        serde_json::Value::String(text) => text.clone(),
        blocks => blocks[0]["text"].as_str().unwrap().to_owned(),
    }
}

#[tokio::test]
async fn invalid_replies_are_retried_with_feedback() {
    let server = ScriptedLlm::start(vec![
        ScriptedReply::text("{\"verdict\": \"clear\", "),
        ScriptedReply::json(json!({"verdict": "maybe", "questions": "why?", "ignored": 1})),
        ScriptedReply::json(json!({"verdict": "needs_info", "questions": ["Which version?"], "estimate_hours": null})),
    ])
    .await;
    let client = client_for("openai", &server.base_url(), "gpt-4o");
    let structured = client
        .complete_structured::<Triage>(request())
        .await
        .unwrap();
    assert_eq!(
        structured.value,
        Triage {
            verdict: Verdict::NeedsInfo,
            questions: vec!["Which version?".into()],
            estimate_hours: None
        }
    );
    assert_eq!(structured.attempts, 3);
    assert_eq!(structured.usage.prompt_tokens, 30);

    let sent = server.requests();
    assert_eq!(
        sent[0].body["response_format"]["json_schema"]["name"],
        "Triage"
    );
    assert_eq!(
        sent[0].body["response_format"]["json_schema"]["strict"],
        true
    );
    let feedback = last_user_message(&sent[1].body);
    assert!(
        feedback.starts_with(
            "Your reply does not match the required JSON schema:\n- the reply is not valid JSON"
        ),
        "{feedback}"
    );
    // The invalid reply is echoed back as the assistant turn before the feedback.
    let messages = sent[1].body["messages"].as_array().unwrap();
    assert_eq!(
        messages[messages.len() - 2]["content"],
        "{\"verdict\": \"clear\", "
    );

    let feedback = last_user_message(&sent[2].body);
    insta::assert_snapshot!(feedback, @r#"
    Your reply does not match the required JSON schema:
    - $.questions: expected array, got string "why?"
    - $.verdict: expected one of ["clear", "needs_info"], got "maybe"
    Reply again with only the corrected JSON.
    "#);
}

#[tokio::test]
async fn gives_up_after_the_configured_retries() {
    let server = ScriptedLlm::start(vec![
        ScriptedReply::json(json!({"verdict": "clear"})),
        ScriptedReply::json(json!({"verdict": "clear"})),
    ])
    .await;
    let client = client_for("openai", &server.base_url(), "gpt-4o");
    let error = client
        .complete_structured_with::<Triage>(
            request(),
            StructuredOptions {
                retries: Some(1),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    match error {
        LlmError::InvalidOutput { errors, attempts } => {
            assert_eq!(attempts, 2);
            assert_eq!(errors, ["$: missing required property `questions`"]);
        }
        other => panic!("expected invalid output, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn compatible_servers_get_the_plain_schema_and_fenced_json_is_accepted() {
    let server = ScriptedLlm::start(vec![ScriptedReply::text(
        "```json\n{\"verdict\": \"clear\", \"questions\": []}\n```",
    )])
    .await;
    let client = client_with(
        "openai",
        &server.base_url(),
        "llama3",
        r#"dialect = "compatible""#,
    );
    let structured = client
        .complete_structured::<Triage>(request())
        .await
        .unwrap();
    assert_eq!(structured.value.verdict, Verdict::Clear);
    let body = &server.requests()[0].body;
    assert_eq!(body["response_format"]["json_schema"]["strict"], false);
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.starts_with("Triage the issue.\n\nRespond with only a JSON value"),
        "{system}"
    );
    assert!(
        system.contains("\"needs_info\""),
        "the schema is in the prompt: {system}"
    );
    assert_eq!(body["max_tokens"], 1024);
    assert!(body.get("max_completion_tokens").is_none());
}

#[tokio::test]
async fn anthropic_structured_output_through_a_forced_tool() {
    let server = ScriptedLlm::start(vec![
        ScriptedReply::json(json!({"verdict": "clear"})),
        ScriptedReply::json(json!({"verdict": "clear", "questions": [], "estimate_hours": 3})),
    ])
    .await;
    let client = client_for("anthropic", &server.base_url(), "claude-sonnet-4-5");
    let structured = client
        .complete_structured::<Triage>(request())
        .await
        .unwrap();
    assert_eq!(structured.value.estimate_hours, Some(3));

    let sent = server.requests();
    assert_eq!(
        sent[0].body["tool_choice"],
        json!({"type": "tool", "name": "Triage"})
    );
    assert_eq!(sent[0].body["tools"][0]["name"], "Triage");
    assert_eq!(sent[0].body["system"], "Triage the issue.");
    assert!(last_user_message(&sent[1].body).contains("missing required property `questions`"));
}

#[tokio::test]
async fn anthropic_refusal_and_truncation_are_distinct() {
    let server = ScriptedLlm::start(vec![
        ScriptedReply::Refusal {
            message: "I can't help with that.".into(),
        },
        ScriptedReply::Truncated {
            text: "{\"verdict\": \"cl".into(),
        },
    ])
    .await;
    let client = client_for("anthropic", &server.base_url(), "claude-sonnet-4-5");
    let refusal = client
        .complete_structured::<Triage>(request())
        .await
        .unwrap_err();
    assert!(
        matches!(&refusal, LlmError::Refusal(message) if message == "I can't help with that."),
        "{refusal:?}"
    );
    let truncated = client
        .complete_structured::<Triage>(request())
        .await
        .unwrap_err();
    assert!(
        matches!(truncated, LlmError::Truncated { .. }),
        "{truncated:?}"
    );
}

#[tokio::test]
async fn non_object_output_types_are_rejected_before_sending() {
    let server = ScriptedLlm::start(vec![]).await;
    let client = client_for("openai", &server.base_url(), "gpt-4o");
    let error = client
        .complete_structured::<Vec<String>>(request())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("must be a struct"), "{error}");
    assert!(server.requests().is_empty());
}
