//! Golden request bodies: exactly what we send each provider (insta snapshots in `snapshots/`).

use relay_agent::llm::anthropic::{self, AnthropicOptions};
use relay_agent::llm::openai::{self, OpenAiOptions};
use relay_agent::llm::{
    AnthropicStructuredMode, AssistantMessage, ChatRequest, Message, OpenAiDialect, ResponseFormat,
    ToolCall, ToolChoice, ToolDefinition, ToolResult,
};
use schemars::JsonSchema;
use serde::Deserialize;

/// Search the repository for a regular expression.
#[derive(Debug, Deserialize, JsonSchema)]
#[expect(dead_code, reason = "fields exist for the schema")]
struct GrepArgs {
    /// The regular expression.
    pattern: String,
    /// Only files matching this glob.
    glob: Option<String>,
    /// Maximum number of matches.
    #[serde(default)]
    max_results: Option<u32>,
}

/// Read a file.
#[derive(Debug, Deserialize, JsonSchema)]
#[expect(dead_code, reason = "fields exist for the schema")]
struct ReadArgs {
    /// Repository-relative path.
    path: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Severity {
    Low,
    High,
}

/// A plan step.
#[derive(Debug, Deserialize, JsonSchema)]
#[expect(dead_code, reason = "fields exist for the schema")]
struct Step {
    title: String,
    files: Vec<String>,
    severity: Option<Severity>,
}

/// The planner's result.
#[derive(Debug, Deserialize, JsonSchema)]
#[expect(dead_code, reason = "fields exist for the schema")]
struct Plan {
    summary: String,
    steps: Vec<Step>,
    notes: Option<String>,
}

fn tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::from_schema::<GrepArgs>("grep", "Search the repository."),
        ToolDefinition::from_schema::<ReadArgs>("read", "Read a file."),
    ]
}

/// A conversation with a system prompt, parallel tool calls and their results (one failed).
fn tool_conversation() -> ChatRequest {
    ChatRequest::new(vec![
        Message::system("You explore code."),
        Message::user("Where is the webhook signature checked?"),
        Message::Assistant(AssistantMessage {
            text: Some("Let me search.".into()),
            tool_calls: vec![
                ToolCall {
                    id: "call_1".into(),
                    name: "grep".into(),
                    arguments: r#"{"pattern":"hmac"}"#.into(),
                },
                ToolCall {
                    id: "call_2".into(),
                    name: "read".into(),
                    arguments: r#"{"path":"src/lib.rs"}"#.into(),
                },
            ],
        }),
        Message::Tool(ToolResult::ok(
            "call_1",
            "src/signature.rs:12: let mac = Hmac::new(..)",
        )),
        Message::Tool(ToolResult::error("call_2", "file not found: src/lib.rs")),
    ])
    .with_tools(tools())
}

fn structured_request() -> ChatRequest {
    let mut request = ChatRequest::new(vec![
        Message::system("Plan the work."),
        Message::user("Issue #7"),
    ]);
    request.response_format = Some(ResponseFormat {
        name: "Plan".into(),
        schema: relay_agent::llm::schema::schema_for::<Plan>(),
        mode: Default::default(),
    });
    request
}

fn openai_options(dialect: OpenAiDialect) -> OpenAiOptions {
    OpenAiOptions {
        dialect,
        max_output_tokens: 4096,
        temperature: None,
    }
}

fn anthropic_options(structured_output: AnthropicStructuredMode) -> AnthropicOptions {
    AnthropicOptions {
        max_output_tokens: 4096,
        temperature: Some(0.2),
        structured_output,
    }
}

#[test]
fn openai_tool_conversation() {
    let body = openai::request_body(
        &openai_options(OpenAiDialect::Openai),
        "gpt-4o",
        &tool_conversation(),
    );
    insta::assert_json_snapshot!(body);
}

#[test]
fn openai_forced_tool() {
    let request = tool_conversation().with_tool_choice(ToolChoice::Tool("grep".into()));
    let body = openai::request_body(&openai_options(OpenAiDialect::Openai), "gpt-4o", &request);
    assert_eq!(
        body["tool_choice"],
        serde_json::json!({"type": "function", "function": {"name": "grep"}})
    );
}

#[test]
fn openai_compatible_tool_conversation() {
    let body = openai::request_body(
        &openai_options(OpenAiDialect::Compatible),
        "qwen2.5-coder",
        &tool_conversation(),
    );
    insta::assert_json_snapshot!(body);
}

#[test]
fn openai_structured_output() {
    let body = openai::request_body(
        &openai_options(OpenAiDialect::Openai),
        "gpt-4o",
        &structured_request(),
    );
    insta::assert_json_snapshot!(body);
}

#[test]
fn anthropic_tool_conversation() {
    let body = anthropic::request_body(
        &anthropic_options(AnthropicStructuredMode::Tool),
        "claude-sonnet-4-5",
        &tool_conversation().with_tool_choice(ToolChoice::Required),
    );
    insta::assert_json_snapshot!(body);
}

#[test]
fn anthropic_structured_output_as_forced_tool() {
    let body = anthropic::request_body(
        &anthropic_options(AnthropicStructuredMode::Tool),
        "claude-sonnet-4-5",
        &structured_request(),
    );
    insta::assert_json_snapshot!(body);
}

#[test]
fn anthropic_structured_output_as_output_config() {
    let body = anthropic::request_body(
        &anthropic_options(AnthropicStructuredMode::OutputConfig),
        "claude-sonnet-4-5",
        &structured_request(),
    );
    insta::assert_json_snapshot!(body);
}

#[test]
fn parallel_tool_calls_can_be_turned_off() {
    let mut request = tool_conversation();
    request.parallel_tool_calls = Some(false);
    let openai = openai::request_body(&openai_options(OpenAiDialect::Openai), "gpt-4o", &request);
    assert_eq!(openai["parallel_tool_calls"], false);
    let compatible = openai::request_body(
        &openai_options(OpenAiDialect::Compatible),
        "llama3",
        &request,
    );
    assert!(compatible.get("parallel_tool_calls").is_none());
    assert!(
        compatible.get("tool_choice").is_none(),
        "auto is not sent to compatible servers"
    );
    let anthropic = anthropic::request_body(
        &anthropic_options(AnthropicStructuredMode::Tool),
        "claude-sonnet-4-5",
        &request,
    );
    assert_eq!(
        anthropic["tool_choice"],
        serde_json::json!({"type": "auto", "disable_parallel_tool_use": true})
    );
    let default = anthropic::request_body(
        &anthropic_options(AnthropicStructuredMode::Tool),
        "claude-sonnet-4-5",
        &tool_conversation(),
    );
    assert!(default.get("tool_choice").is_none());
}
