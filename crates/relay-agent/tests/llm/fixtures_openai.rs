//! Every recorded OpenAI response, served over HTTP by the scripted server and parsed by the
//! real client.

use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::llm::{ChatRequest, FinishReason, LlmError, Message, ToolDefinition};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::support::{client_for, fixture};

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Units {
    C,
    F,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Location {
    city: String,
    temperature: f64,
    units: Units,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
struct GetWeatherArgs {
    city: String,
    country: String,
    units: Units,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct GetStockPrice {
    ticker: String,
    exchange: String,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Table {
    Orders,
    Customers,
    Products,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
enum Operator {
    #[serde(rename = "=")]
    Eq,
    #[serde(rename = ">")]
    Gt,
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = "<=")]
    Le,
    #[serde(rename = ">=")]
    Ge,
    #[serde(rename = "!=")]
    Ne,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct DynamicValue {
    column_name: String,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged)]
enum ConditionValue {
    Text(String),
    Number(f64),
    Column(DynamicValue),
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Condition {
    column: String,
    operator: Operator,
    value: ConditionValue,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
enum OrderBy {
    Asc,
    Desc,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Query {
    name: Option<String>,
    table_name: Table,
    columns: Vec<String>,
    conditions: Vec<Condition>,
    order_by: OrderBy,
}

async fn serve(path: &str) -> ScriptedLlm {
    ScriptedLlm::start(vec![ScriptedReply::raw(200, fixture(path))]).await
}

fn ask() -> ChatRequest {
    ChatRequest::new(vec![Message::user("question")])
}

#[tokio::test]
async fn parallel_tool_calls_keep_ids_and_parse_into_their_types() {
    let server = serve("openai/chat_completion.tool_calls.parallel.response.json").await;
    let client = client_for("openai", &server.base_url(), "gpt-4o");
    let weather = ToolDefinition::from_schema::<GetWeatherArgs>("GetWeatherArgs", "weather");
    let stock = ToolDefinition::from_schema::<GetStockPrice>("get_stock_price", "stock price");

    let response = client
        .complete(&ask().with_tools(vec![weather.clone(), stock.clone()]))
        .await
        .unwrap();

    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.message.text, None);
    let calls = &response.message.tool_calls;
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].id, "call_fdNz3vOBKYgOIpMdWotB9MjY");
    assert_eq!(calls[1].id, "call_h1DWI1POMJLb0KwIyQHWXD4p");
    assert!(weather.parse_call::<GetWeatherArgs>(&calls[0]).is_ok());
    assert_eq!(
        stock.parse_call::<GetStockPrice>(&calls[1]).unwrap(),
        GetStockPrice {
            ticker: "AAPL".into(),
            exchange: "NASDAQ".into()
        }
    );
    assert_eq!(response.usage.prompt_tokens, 149);
    assert_eq!(response.usage.completion_tokens, 60);
    assert_eq!(response.model, "gpt-4o-2024-08-06");
}

#[tokio::test]
async fn strict_tool_call_is_parsed() {
    let server = serve("openai/chat_completion.tool_calls.strict.response.json").await;
    let client = client_for("openai", &server.base_url(), "gpt-4o");
    let response = client.complete(&ask()).await.unwrap();
    let call = &response.message.tool_calls[0];
    assert_eq!(call.name, "get_weather");
    assert_eq!(call.arguments, r#"{"city":"San Francisco","state":"CA"}"#);
}

#[tokio::test]
async fn nested_arguments_validate_against_an_any_of_schema() {
    let server = serve("openai/chat_completion.tool_calls.nested-args.response.json").await;
    let client = client_for("openai", &server.base_url(), "gpt-4o");
    let tool = ToolDefinition::from_schema::<Query>("Query", "run a query");
    let response = client
        .complete(&ask().with_tools(vec![tool.clone()]))
        .await
        .unwrap();

    let query: Query = tool.parse_call(&response.message.tool_calls[0]).unwrap();
    assert_eq!(query.table_name, Table::Orders);
    assert_eq!(query.conditions.len(), 4);
    assert_eq!(
        query.conditions[3].value,
        ConditionValue::Column(DynamicValue {
            column_name: "expected_delivery_date".into()
        })
    );
    assert_eq!(query.order_by, OrderBy::Asc);
}

#[tokio::test]
async fn json_schema_result_is_validated_and_deserialized() {
    let server = serve("openai/chat_completion.json_schema.response.json").await;
    let client = client_for("openai", &server.base_url(), "gpt-4o");
    let structured = client.complete_structured::<Location>(ask()).await.unwrap();
    assert_eq!(
        structured.value,
        Location {
            city: "San Francisco".into(),
            temperature: 65.0,
            units: Units::F
        }
    );
    assert_eq!(structured.attempts, 1);
    assert_eq!(structured.usage.total(), 93);
}

#[tokio::test]
async fn refusal_is_its_own_error_and_is_not_retried() {
    let server = serve("openai/chat_completion.json_schema.refusal.response.json").await;
    let client = client_for("openai", &server.base_url(), "gpt-4o");
    let error = client
        .complete_structured::<Location>(ask())
        .await
        .unwrap_err();
    assert!(
        matches!(&error, LlmError::Refusal(message) if message == "I'm very sorry, but I can't assist with that."),
        "{error:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn length_finish_is_truncation_not_invalid_output() {
    let server = serve("openai/chat_completion.json_schema.finish_length.response.json").await;
    let client = client_for("openai", &server.base_url(), "gpt-4o");
    let error = client
        .complete_structured::<Location>(ask())
        .await
        .unwrap_err();
    assert!(
        matches!(&error, LlmError::Truncated { partial } if partial == "{\""),
        "{error:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn error_bodies_are_classified() {
    let context = ScriptedReply::Error {
        status: 400,
        message: Some("This model's maximum context length is 128000 tokens.".into()),
        error_type: Some("invalid_request_error".into()),
        code: Some("context_length_exceeded".into()),
        retry_after_secs: None,
        retry_after_ms: None,
        headers: Default::default(),
    };
    let quota = ScriptedReply::Error {
        status: 429,
        message: Some("You exceeded your current quota".into()),
        error_type: Some("insufficient_quota".into()),
        code: Some("insufficient_quota".into()),
        retry_after_secs: None,
        retry_after_ms: None,
        headers: Default::default(),
    };
    let server = ScriptedLlm::start(vec![
        context,
        quota,
        ScriptedReply::error(401),
        ScriptedReply::error(403),
        ScriptedReply::error(404),
    ])
    .await;
    let client = client_for("openai", &server.base_url(), "gpt-4o");
    let kinds: Vec<&str> = futures_kinds(&client, 5).await;
    assert_eq!(
        kinds,
        [
            "context_length",
            "quota",
            "authentication",
            "permission_denied",
            "not_found"
        ]
    );
    // None of them is retried: one request each.
    assert_eq!(server.requests().len(), 5);
}

async fn futures_kinds(client: &relay_agent::llm::LlmClient, count: usize) -> Vec<&'static str> {
    let mut kinds = Vec::new();
    for _ in 0..count {
        kinds.push(client.complete(&ask()).await.unwrap_err().kind().as_str());
    }
    kinds
}
