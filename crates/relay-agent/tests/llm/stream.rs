//! Streaming (SSE) responses: the recorded transcripts fold into complete replies, and the
//! scripted server streams when asked.

use relay_agent::llm::anthropic;
use relay_agent::llm::openai;
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::llm::stream::{fold_anthropic, fold_openai, parse_sse};
use relay_agent::llm::{ChatRequest, ErrorKind, FinishReason, Message, ToolDefinition};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::support::{client_with, fixtures_dir};

fn transcript(path: &str) -> String {
    std::fs::read_to_string(fixtures_dir().join(path)).unwrap()
}

#[test]
fn openai_transcript_folds_into_one_tool_call() {
    let body = fold_openai(&transcript("openai/chat_completion.tool_calls.stream.sse")).unwrap();
    let response = openai::parse_response(body).unwrap();
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    let call = &response.message.tool_calls[0];
    assert_eq!(call.id, "call_4XzlGBLtUe9dy3GVNV4jhq7h");
    assert_eq!(call.name, "get_weather");
    let arguments: Value = serde_json::from_str(&call.arguments).unwrap();
    assert_eq!(arguments["city"], "New York City");
    assert_eq!(
        (
            response.usage.prompt_tokens,
            response.usage.completion_tokens
        ),
        (44, 16)
    );
}

#[test]
fn anthropic_transcript_folds_text_and_tool_use() {
    let body = fold_anthropic(&transcript("anthropic/messages.tool_use.stream.sse")).unwrap();
    let response = anthropic::parse_response(body, None).unwrap();
    assert_eq!(
        response.text(),
        "I'll check the current weather in Paris for you."
    );
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    let call = &response.message.tool_calls[0];
    assert_eq!(call.id, "toolu_01NRLabsLyVHZPKxbKvkfSMn");
    let input: Value = serde_json::from_str(&call.arguments).unwrap();
    assert_eq!(input["location"], "Paris");
    assert_eq!(response.usage.prompt_tokens, 377);
    assert_eq!(response.usage.completion_tokens, 65);
}

#[test]
fn incomplete_streams_and_error_events_are_errors() {
    let full = transcript("anthropic/messages.tool_use.stream.sse");
    let cut = &full[..full.find("event: message_delta").unwrap()];
    assert_eq!(
        fold_anthropic(cut).unwrap_err().kind(),
        ErrorKind::InvalidResponse
    );

    let overloaded = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"x\",\"content\":[],\"usage\":{}}}\n\n\
        event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    assert_eq!(
        fold_anthropic(overloaded).unwrap_err().kind(),
        ErrorKind::Overloaded
    );

    let openai = transcript("openai/chat_completion.tool_calls.stream.sse");
    let cut = &openai[..openai.find("\"finish_reason\":\"tool_calls\"").unwrap()];
    let cut = &cut[..cut.rfind("data:").unwrap()];
    assert_eq!(
        fold_openai(cut).unwrap_err().kind(),
        ErrorKind::InvalidResponse
    );
}

#[test]
fn sse_parsing_handles_crlf_comments_and_multiline_data() {
    let events = parse_sse(": comment\r\nevent: a\r\ndata: 1\r\ndata: 2\r\n\r\ndata:3\n\n");
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].event.as_deref(), Some("a"));
    assert_eq!(events[0].data, "1\n2");
    assert_eq!(events[1].data, "3");
}

#[tokio::test]
async fn recorded_transcripts_served_over_http() {
    let server = ScriptedLlm::start(vec![ScriptedReply::raw(
        200,
        Value::String(transcript("openai/chat_completion.tool_calls.stream.sse")),
    )])
    .await;
    let client = client_with("openai", &server.base_url(), "gpt-4o", "stream = true");
    let response = client
        .complete(&ChatRequest::new(vec![Message::user("weather?")]))
        .await
        .unwrap();
    assert_eq!(response.message.tool_calls[0].name, "get_weather");
    let body = &server.requests()[0].body;
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Answer {
    answer: String,
    confidence: f64,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct ReadArgs {
    path: String,
}

#[tokio::test]
async fn scripted_replies_stream_in_both_protocols() {
    for provider in ["openai", "anthropic"] {
        let server = ScriptedLlm::start(vec![
            ScriptedReply::text("héllo wörld"),
            ScriptedReply::tool_calls(vec![("read", json!({"path": "src/main.rs"}))]),
            ScriptedReply::json(json!({"answer": "42", "confidence": 0.5})),
        ])
        .await;
        let client = client_with(provider, &server.base_url(), "model", "stream = true");
        let request = ChatRequest::new(vec![Message::user("go")]);
        assert_eq!(
            client.complete(&request).await.unwrap().text(),
            "héllo wörld",
            "{provider}"
        );

        let tool = ToolDefinition::from_schema::<ReadArgs>("read", "Read a file.");
        let response = client
            .complete(&request.clone().with_tools(vec![tool.clone()]))
            .await
            .unwrap();
        let args: ReadArgs = tool.parse_call(&response.message.tool_calls[0]).unwrap();
        assert_eq!(args.path, "src/main.rs", "{provider}");
        assert_eq!(response.usage.completion_tokens, 5, "{provider}");

        let structured = client.complete_structured::<Answer>(request).await.unwrap();
        assert_eq!(
            structured.value,
            Answer {
                answer: "42".into(),
                confidence: 0.5
            },
            "{provider}"
        );
        assert!(server.requests().iter().all(|r| r.body["stream"] == true));
    }
}
