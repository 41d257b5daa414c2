//! Tool calling round trips: parallel calls, results with the right ids, malformed arguments as
//! tool errors the model can correct.

use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply, ScriptedToolCall};
use relay_agent::llm::{ChatRequest, Message, ToolDefinition, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::support::client_for;

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct ReadArgs {
    path: String,
    #[serde(default)]
    start_line: Option<u32>,
}

fn read_tool() -> ToolDefinition {
    ToolDefinition::from_schema::<ReadArgs>("read", "Read a file.")
}

fn scripted_calls() -> ScriptedReply {
    ScriptedReply::ToolCalls {
        calls: vec![
            ScriptedToolCall {
                id: Some("call_a".into()),
                name: "read".into(),
                arguments: json!({"path": "a.rs", "start_line": null}),
            },
            ScriptedToolCall {
                id: Some("call_b".into()),
                name: "read".into(),
                arguments: json!("{\"path\": \"b.rs\""),
            },
            ScriptedToolCall {
                id: Some("call_c".into()),
                name: "read".into(),
                arguments: json!({"path": 7}),
            },
        ],
        text: None,
        usage: Default::default(),
    }
}

/// Runs one tool turn and returns the recorded follow-up request body.
async fn round_trip(provider: &str) -> serde_json::Value {
    let server = ScriptedLlm::start(vec![scripted_calls(), ScriptedReply::text("done")]).await;
    let client = client_for(provider, &server.base_url(), "model");
    let mut messages = vec![Message::user("read a.rs and b.rs")];
    let request = ChatRequest::new(messages.clone()).with_tools(vec![read_tool()]);
    let response = client.complete(&request).await.unwrap();
    assert_eq!(response.message.tool_calls.len(), 3);

    let tool = read_tool();
    let results: Vec<ToolResult> = response
        .message
        .tool_calls
        .iter()
        .map(|call| match tool.parse_call::<ReadArgs>(call) {
            Ok(args) => ToolResult::ok(&call.id, format!("contents of {}", args.path)),
            Err(error_result) => error_result,
        })
        .collect();
    assert!(!results[0].is_error, "{:?}", results[0]);
    messages.push(Message::Assistant(response.message.clone()));
    messages.extend(results.into_iter().map(Message::Tool));
    let done = client
        .complete(&ChatRequest::new(messages).with_tools(vec![read_tool()]))
        .await
        .unwrap();
    assert_eq!(done.text(), "done");
    server.requests()[1].body.clone()
}

#[tokio::test]
async fn openai_tool_results_follow_the_assistant_turn_with_matching_ids() {
    let body = round_trip("openai").await;
    let messages = body["messages"].as_array().unwrap();
    let assistant = &messages[1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["tool_calls"][1]["function"]["arguments"], "{\"path\": \"b.rs\"",
        "echoed verbatim"
    );
    let tools: Vec<_> = messages[2..].iter().collect();
    assert_eq!(tools.len(), 3);
    assert_eq!(tools[0]["tool_call_id"], "call_a");
    assert_eq!(tools[0]["content"], "contents of a.rs");
    assert_eq!(tools[1]["tool_call_id"], "call_b");
    let malformed = tools[1]["content"].as_str().unwrap();
    assert!(
        malformed.starts_with("Error: the arguments of tool `read` are not valid JSON"),
        "{malformed}"
    );
    let invalid = tools[2]["content"].as_str().unwrap();
    assert_eq!(
        invalid,
        "Error: invalid arguments for tool `read`:\n- $.path: expected string, got number 7\nCall the tool again with corrected arguments."
    );
}

#[tokio::test]
async fn anthropic_tool_results_share_one_user_turn_with_is_error() {
    let body = round_trip("anthropic").await;
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages.len(),
        3,
        "user, assistant, one user turn of results"
    );
    let assistant = &messages[1]["content"];
    assert_eq!(assistant[0]["type"], "tool_use");
    assert_eq!(
        assistant[0]["input"],
        json!({"path": "a.rs", "start_line": null})
    );
    let results = messages[2]["content"].as_array().unwrap();
    assert_eq!(messages[2]["role"], "user");
    let ids: Vec<_> = results
        .iter()
        .map(|block| block["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 3);
    assert_eq!(ids[0], "call_a");
    assert!(results[0].get("is_error").is_none());
    assert_eq!(results[2]["is_error"], true);
}

#[test]
#[should_panic(expected = "invalid tool name")]
fn tool_names_are_checked() {
    let _ = ToolDefinition::from_schema::<ReadArgs>("read file", "bad name");
}
