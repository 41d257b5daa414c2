//! Every recorded Anthropic exchange, replayed by the scripted server: the responses must parse,
//! and the follow-up requests we build must match what the official SDK sent.

use relay_agent::llm::http::retry_after;
use relay_agent::llm::scripted::ScriptedLlm;
use relay_agent::llm::{ChatRequest, FinishReason, LlmError, Message, ToolDefinition, ToolResult};
use reqwest::header::{HeaderMap, HeaderValue};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::support::{client_for, client_with, recorded_replies, recorded_requests};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Units {
    C,
    F,
}

/// Lookup the weather for a given city in either celsius or fahrenheit
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "fields exist for the schema")]
struct GetWeather {
    /// The city and state, e.g. San Francisco, CA
    location: String,
    /// Unit for the output, either 'c' for celsius or 'f' for fahrenheit
    units: Units,
}

fn weather_tool() -> ToolDefinition {
    ToolDefinition::from_schema::<GetWeather>(
        "get_weather",
        "Lookup the weather for a given city in either celsius or fahrenheit",
    )
}

/// The recorded request's messages without the `caller` field the SDK echoes back (an
/// informational field of newer responses that we drop).
fn recorded_messages(body: &Value) -> Value {
    let mut messages = body["messages"].clone();
    for message in messages.as_array_mut().unwrap() {
        if let Some(blocks) = message["content"].as_array_mut() {
            for block in blocks {
                block.as_object_mut().unwrap().remove("caller");
            }
        }
    }
    messages
}

/// Replays a two-turn tool conversation and checks both requests against the recording.
async fn replay_tool_conversation(path: &str, result: impl Fn(&str) -> ToolResult) -> String {
    let server = ScriptedLlm::start(recorded_replies(path)).await;
    let recorded = recorded_requests(path);
    let client = client_for("anthropic", &server.base_url(), "claude-haiku-4-5");
    let question = recorded[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();

    let mut messages = vec![Message::user(question)];
    let request = ChatRequest::new(messages.clone()).with_tools(vec![weather_tool()]);
    let first = client.complete(&request).await.unwrap();
    assert_eq!(first.finish_reason, FinishReason::ToolCalls);
    let call = first.message.tool_calls[0].clone();
    assert!(call.id.starts_with("toolu_"));
    weather_tool()
        .check_call(&call)
        .expect("recorded tool input matches the schema");

    messages.push(Message::Assistant(first.message.clone()));
    messages.push(Message::Tool(result(&call.id)));
    let second = client
        .complete(&ChatRequest::new(messages).with_tools(vec![weather_tool()]))
        .await
        .unwrap();
    assert_eq!(second.finish_reason, FinishReason::Stop);

    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    for (ours, theirs) in sent.iter().zip(&recorded) {
        assert_eq!(ours.body["messages"], recorded_messages(theirs));
        assert_eq!(ours.body["max_tokens"], theirs["max_tokens"]);
        assert_eq!(ours.body["model"], theirs["model"]);
        assert_eq!(ours.body["tools"][0]["name"], "get_weather");
        assert_eq!(
            ours.body["tools"][0]["input_schema"]["required"],
            serde_json::json!(["location", "units"])
        );
        assert_eq!(ours.headers["x-api-key"], "sk-test-secret");
        assert_eq!(ours.headers["anthropic-version"], "2023-06-01");
    }
    second.text().to_owned()
}

#[tokio::test]
async fn tool_use_then_tool_result_matches_the_recorded_conversation() {
    let path = "anthropic/messages.tool_use-then-tool_result.recorded.json";
    let text = replay_tool_conversation(path, |id| {
        ToolResult::ok(id, r#"{"location": "San Francisco, CA", "temperature": "68\u00b0F", "condition": "Sunny"}"#)
    })
    .await;
    assert!(text.contains("Sunny"));
}

#[tokio::test]
async fn tool_errors_are_sent_as_is_error_results() {
    let path = "anthropic/messages.tool_use-then-tool_result-is_error.recorded.json";
    let text = replay_tool_conversation(path, |id| {
        ToolResult::error(id, "RuntimeError('Unexpected error, try again')")
    })
    .await;
    assert!(text.starts_with("I apologize"));
}

#[tokio::test]
async fn text_before_tool_use_is_echoed_in_the_assistant_turn() {
    let path = "anthropic/messages.text-and-tool_use.recorded.json";
    let server = ScriptedLlm::start(recorded_replies(path)).await;
    let recorded = recorded_requests(path);
    let client = client_for("anthropic", &server.base_url(), "claude-haiku-4-5");
    let question = recorded[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();

    let first = client
        .complete(
            &ChatRequest::new(vec![Message::user(question.clone())])
                .with_tools(vec![weather_tool()]),
        )
        .await
        .unwrap();
    assert_eq!(
        first.text(),
        "I'll get the weather for each of those cities. Let me start by checking San Francisco."
    );
    let call = &first.message.tool_calls[0];
    let result = ToolResult::ok(
        &call.id,
        r#"{"location": "San Francisco, CA", "temperature": "68\u00b0F", "condition": "Sunny"}"#,
    );
    let messages = vec![
        Message::user(question),
        Message::Assistant(first.message.clone()),
        Message::Tool(result),
    ];
    let second = client
        .complete(&ChatRequest::new(messages).with_tools(vec![weather_tool()]))
        .await
        .unwrap();
    assert_eq!(second.text(), "Now let me check New York.");
    assert_eq!(second.usage.prompt_tokens, 834);
    assert_eq!(
        server.requests()[1].body["messages"],
        recorded_messages(&recorded[1])
    );
}

#[tokio::test]
async fn invalid_request_400_is_classified_and_not_retried() {
    let path = "anthropic/messages.invalid_request_error-400.recorded.json";
    let server = ScriptedLlm::start(recorded_replies(path)).await;
    let client = client_for("anthropic", &server.base_url(), "claude-haiku-4-5");
    let first = client
        .complete(
            &ChatRequest::new(vec![Message::user("What's the weather in SF in Celsius?")])
                .with_tools(vec![weather_tool()]),
        )
        .await
        .unwrap();
    let orphan = ToolResult::ok(&first.message.tool_calls[0].id, "sunny");
    let error = client
        .complete(&ChatRequest::new(vec![
            Message::user("What's the weather in SF in Celsius?"),
            Message::Tool(orphan),
        ]))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, LlmError::InvalidRequest { status: 400, message } if message.contains("unexpected `tool_use_id`")),
        "{error:?}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct OrderItem {
    product_name: String,
    price: f64,
    quantity: i64,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct OrderDetails {
    items: Vec<OrderItem>,
    total: f64,
}

/// Removes `title`s (pydantic adds them to every property) and sorts `required` lists.
fn normalize_schema(value: &mut Value) {
    match value {
        Value::Object(object) => {
            object.remove("title");
            if let Some(Value::Array(required)) = object.get_mut("required") {
                required.sort_by_key(|name| name.as_str().unwrap_or_default().to_owned());
            }
            object.values_mut().for_each(normalize_schema);
        }
        Value::Array(items) => items.iter_mut().for_each(normalize_schema),
        _ => {}
    }
}

#[tokio::test]
async fn rate_limit_429_twice_then_200_with_output_config() {
    let path = "anthropic/messages.rate_limit_error-429-then-200.output_config.recorded.json";
    let server = ScriptedLlm::start(recorded_replies(path)).await;
    let recorded = recorded_requests(path);
    let client = client_with(
        "anthropic",
        &server.base_url(),
        "claude-sonnet-4-5",
        r#"structured_output = "output_config""#,
    );
    let prompt = recorded[0]["messages"][0]["content"].as_str().unwrap();
    let structured = client
        .complete_structured::<OrderDetails>(ChatRequest::new(vec![Message::user(prompt)]))
        .await
        .unwrap();

    assert_eq!(structured.value.items.len(), 2);
    assert_eq!(
        structured.value.items[1],
        OrderItem {
            product_name: "Coffee".into(),
            price: 3.0,
            quantity: 1
        }
    );
    assert_eq!(structured.value.total, 14.0);
    let sent = server.requests();
    assert_eq!(sent.len(), 3, "two 429s retried, then the 200");
    let mut ours = sent[2].body["output_config"].clone();
    let mut theirs = recorded[2]["output_config"].clone();
    normalize_schema(&mut ours);
    normalize_schema(&mut theirs);
    assert_eq!(ours, theirs);
    assert!(sent[2].body.get("tools").is_none());
}

#[tokio::test]
async fn output_config_structured_result() {
    let path = "anthropic/messages.output_config.json_schema.recorded.json";
    let server = ScriptedLlm::start(recorded_replies(path)).await;
    let client = client_with(
        "anthropic",
        &server.base_url(),
        "claude-sonnet-4-5",
        r#"structured_output = "output_config""#,
    );
    let structured = client
        .complete_structured::<OrderItem>(ChatRequest::new(vec![Message::user(
            "Extract: I want to order 2 Green Tea at $5.50 each",
        )]))
        .await
        .unwrap();
    assert_eq!(
        structured.value,
        OrderItem {
            product_name: "Green Tea".into(),
            price: 5.5,
            quantity: 2
        }
    );
    assert_eq!(structured.usage.prompt_tokens, 249);
}

#[tokio::test]
async fn server_tool_blocks_are_ignored_and_client_tool_calls_kept() {
    let path = "anthropic/messages.ratelimit-headers.server_tool_use.recorded.json";
    let server = ScriptedLlm::start(recorded_replies(path)).await;
    let client = client_for("anthropic", &server.base_url(), "claude-opus-4-5");
    let response = client
        .complete(&ChatRequest::new(vec![Message::user("weather?")]))
        .await
        .unwrap();
    assert_eq!(
        response.text(),
        "I'll check the weather for all three cities in Celsius simultaneously."
    );
    assert_eq!(response.message.tool_calls.len(), 1);
    assert_eq!(
        response.message.tool_calls[0].id,
        "toolu_011MDRpaZRMRRjtFkJizD6nS"
    );
    assert_eq!(response.usage.prompt_tokens, 3182);
}

#[test]
fn rate_limit_headers_give_a_delay_only_when_exhausted() {
    let exchanges = crate::support::fixture(
        "anthropic/messages.ratelimit-headers.server_tool_use.recorded.json",
    );
    let mut headers = HeaderMap::new();
    for (name, value) in exchanges[0]["response"]["headers"].as_object().unwrap() {
        headers.insert(
            reqwest::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value.as_str().unwrap()).unwrap(),
        );
    }
    assert_eq!(
        retry_after(&headers),
        None,
        "nothing is exhausted in the recording"
    );

    let reset = (chrono::Utc::now() + chrono::Duration::seconds(30)).to_rfc3339();
    headers.insert(
        "anthropic-ratelimit-input-tokens-remaining",
        HeaderValue::from_static("0"),
    );
    headers.insert(
        "anthropic-ratelimit-input-tokens-reset",
        HeaderValue::from_str(&reset).unwrap(),
    );
    let delay = retry_after(&headers).unwrap();
    assert!(delay.as_secs() >= 28 && delay.as_secs() <= 30, "{delay:?}");

    headers.insert("retry-after", HeaderValue::from_static("7"));
    assert_eq!(
        retry_after(&headers),
        Some(std::time::Duration::from_secs(7))
    );
    headers.insert("retry-after-ms", HeaderValue::from_static("1500"));
    assert_eq!(
        retry_after(&headers),
        Some(std::time::Duration::from_millis(1500))
    );
}
