//! Anthropic Messages (`POST {base_url}/v1/messages`).
//!
//! Differences from Chat Completions that matter here: the system prompt is a top-level field,
//! tool results are `tool_result` blocks (with `is_error`) in the next *user* turn, tool inputs
//! are parsed objects, and `input_schema` is the whole object schema including `required`.

use async_trait::async_trait;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::error::LlmError;
use super::provider::Provider;
use super::schema;
use super::settings::{AnthropicStructuredMode, ProviderConfig, ProviderKind};
use super::stream;
use super::tools::ToolCall;
use super::types::{
    AssistantMessage, ChatRequest, ChatResponse, FinishReason, Message, ToolChoice, Usage,
    temperature_json,
};
use super::{estimate, http};

/// The Anthropic provider.
pub struct AnthropicProvider {
    client: reqwest::Client,
    url: String,
    api_key: Option<SecretString>,
    version: String,
    options: AnthropicOptions,
    timeout: std::time::Duration,
    stream: bool,
    log_payloads: bool,
}

/// What shapes the request body besides the request itself.
#[derive(Debug, Clone)]
pub struct AnthropicOptions {
    /// Default output token limit (`max_tokens` is required by the API).
    pub max_output_tokens: u32,
    /// Default temperature.
    pub temperature: Option<f32>,
    /// How structured output is requested.
    pub structured_output: AnthropicStructuredMode,
}

/// Description of the tool that carries structured output in [`AnthropicStructuredMode::Tool`].
const STRUCTURED_TOOL_DESCRIPTION: &str =
    "Return your final answer by calling this tool; its input is the answer.";

impl std::fmt::Debug for AnthropicProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicProvider")
            .field("url", &relay_core::secrets::redact_url(&self.url))
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("version", &self.version)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl AnthropicProvider {
    /// A provider for a resolved configuration.
    pub fn new(config: &ProviderConfig) -> Result<Self, LlmError> {
        let url = if config.base_url.ends_with("/v1") {
            format!("{}/messages", config.base_url)
        } else {
            format!("{}/v1/messages", config.base_url)
        };
        Ok(Self {
            client: http::client(config.timeout)?,
            url,
            api_key: config.api_key.clone(),
            version: config.anthropic_version.clone(),
            options: AnthropicOptions {
                max_output_tokens: config.max_output_tokens,
                temperature: config.temperature,
                structured_output: config.structured_output,
            },
            timeout: config.timeout,
            stream: config.stream,
            log_payloads: config.log_payloads,
        })
    }
}

#[async_trait]
impl Provider for AnthropicProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Anthropic
    }

    async fn send(&self, model: &str, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let mut body = request_body(&self.options, model, request);
        if self.stream {
            enable_streaming(&mut body);
        }
        if self.log_payloads {
            tracing::debug!(llm.model = model, llm.request = %body, "anthropic request");
        }
        let mut builder = self
            .client
            .post(&self.url)
            .header("anthropic-version", &self.version)
            .json(&body);
        if let Some(key) = &self.api_key {
            builder = builder.header("x-api-key", key.expose_secret());
        }
        let (response, streamed_bytes) = if self.stream {
            let text = http::send_text(builder, self.timeout).await?;
            (stream::fold_anthropic(&text)?, Some(text.len()))
        } else {
            (http::send(builder, self.timeout).await?, None)
        };
        // No usage in the response: estimated from what was exchanged, never zero.
        let estimated = estimate::usage_missing(&response).then(|| {
            let received = streamed_bytes.unwrap_or_else(|| response.to_string().len());
            estimate::from_bytes(body.to_string().len(), received)
        });
        if self.log_payloads {
            tracing::debug!(llm.model = model, llm.response = %response, "anthropic response");
        }
        let mut parsed = parse_response(response, structured_tool(&self.options, request))?;
        if let Some(usage) = estimated {
            parsed.usage = usage;
        }
        Ok(parsed)
    }
}

fn structured_tool<'a>(options: &AnthropicOptions, request: &'a ChatRequest) -> Option<&'a str> {
    match (&request.response_format, options.structured_output) {
        (Some(format), AnthropicStructuredMode::Tool) => Some(&format.name),
        _ => None,
    }
}

/// Turns a request body into a streaming one.
pub fn enable_streaming(body: &mut Value) {
    body["stream"] = json!(true);
}

/// The JSON body of a Messages request.
pub fn request_body(options: &AnthropicOptions, model: &str, request: &ChatRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".to_owned(), json!(model));
    let max_tokens = request
        .max_output_tokens
        .unwrap_or(options.max_output_tokens);
    body.insert("max_tokens".to_owned(), json!(max_tokens));
    let system: Vec<&str> = request
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::System(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    if !system.is_empty() {
        body.insert("system".to_owned(), json!(system.join("\n\n")));
    }
    body.insert(
        "messages".to_owned(),
        Value::Array(messages_json(&request.messages)),
    );
    if let Some(temperature) = request.temperature.or(options.temperature) {
        body.insert("temperature".to_owned(), temperature_json(temperature));
    }

    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(|tool| {
            json!({
                "name": tool.name,
                "description": tool.description,
                "input_schema": tool.input_schema(),
            })
        })
        .collect();
    let mut tool_choice = match &request.tool_choice {
        _ if request.tools.is_empty() => None,
        ToolChoice::Auto => None,
        ToolChoice::None => Some(json!({"type": "none"})),
        ToolChoice::Required => Some(json!({"type": "any"})),
        ToolChoice::Tool(name) => Some(json!({"type": "tool", "name": name})),
    };
    if let Some(format) = &request.response_format {
        match options.structured_output {
            AnthropicStructuredMode::Tool => {
                tools.push(json!({
                    "name": format.name,
                    "description": STRUCTURED_TOOL_DESCRIPTION,
                    "input_schema": schema::cleaned(&format.schema),
                }));
                tool_choice = Some(json!({"type": "tool", "name": format.name}));
            }
            AnthropicStructuredMode::OutputConfig => {
                let schema = schema::to_strict(&format.schema)
                    .unwrap_or_else(|_| schema::cleaned(&format.schema));
                body.insert(
                    "output_config".to_owned(),
                    json!({"format": {"type": "json_schema", "schema": schema}}),
                );
            }
        }
    }
    if !tools.is_empty() {
        body.insert("tools".to_owned(), Value::Array(tools));
    }
    if request.parallel_tool_calls == Some(false) && body.contains_key("tools") {
        let choice = tool_choice.get_or_insert_with(|| json!({"type": "auto"}));
        if choice["type"] != "none" {
            choice["disable_parallel_tool_use"] = json!(true);
        }
    }
    if let Some(choice) = tool_choice {
        body.insert("tool_choice".to_owned(), choice);
    }
    Value::Object(body)
}

/// Converts the conversation into alternating user/assistant turns; consecutive tool results
/// (and a user message right after them) share one user turn.
fn messages_json(messages: &[Message]) -> Vec<Value> {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, blocks) = match message {
            Message::System(_) => continue,
            Message::User(text) => ("user", vec![json!({"type": "text", "text": text})]),
            Message::Assistant(assistant) => {
                let mut blocks = Vec::new();
                if let Some(text) = assistant.text.as_deref().filter(|text| !text.is_empty()) {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in &assistant.tool_calls {
                    let input = serde_json::from_str::<Value>(&call.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    blocks.push(json!({
                        "type": "tool_use", "id": call.id, "name": call.name, "input": input,
                    }));
                }
                if blocks.is_empty() {
                    // An empty assistant turn is rejected by the API and says nothing.
                    continue;
                }
                ("assistant", blocks)
            }
            Message::Tool(result) => {
                let mut block = json!({
                    "type": "tool_result",
                    "tool_use_id": result.call_id,
                    "content": result.content,
                });
                if result.is_error {
                    block["is_error"] = json!(true);
                }
                ("user", vec![block])
            }
        };
        match turns.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, blocks)| {
            // A lone text block is sent as a plain string, as the official SDKs do.
            let content = match blocks.as_slice() {
                [block] if block["type"] == "text" => block["text"].clone(),
                _ => Value::Array(blocks),
            };
            json!({"role": role, "content": content})
        })
        .collect()
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    id: String,
    #[serde(default)]
    model: String,
    #[serde(default)]
    content: Vec<Value>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

/// Parses a 200 response body. `structured_tool` names the tool that carries structured output:
/// its input becomes the reply text.
pub fn parse_response(
    body: Value,
    structured_tool: Option<&str>,
) -> Result<ChatResponse, LlmError> {
    if body.get("type").and_then(Value::as_str) == Some("error") {
        return Err(http::classify(500, &Default::default(), &body.to_string()));
    }
    let wire: WireResponse = serde_path_to_error::deserialize(body)
        .map_err(|error| LlmError::InvalidResponse(format!("malformed message: {error}")))?;
    let mut texts = Vec::new();
    let mut tool_calls = Vec::new();
    let mut structured = None;
    for block in &wire.content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                texts.push(
                    block
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                );
            }
            Some("tool_use") => {
                let name = block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let input = block.get("input").cloned().unwrap_or_else(|| json!({}));
                if structured_tool == Some(name) {
                    structured = Some(input.to_string());
                    continue;
                }
                tool_calls.push(ToolCall {
                    id: block
                        .get("id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    name: name.to_owned(),
                    arguments: input.to_string(),
                });
            }
            // Server tools, thinking and future block types are not ours to handle.
            _ => {}
        }
    }
    let text = texts.concat();
    let mut refusal = None;
    let mut finish_reason = match wire.stop_reason.as_deref() {
        Some("end_turn" | "stop_sequence") | None => FinishReason::Stop,
        Some("max_tokens") => FinishReason::Length,
        Some("tool_use") => FinishReason::ToolCalls,
        Some("refusal") => {
            refusal = Some(if text.is_empty() {
                "refused".to_owned()
            } else {
                text.clone()
            });
            FinishReason::ContentFilter
        }
        Some("model_context_window_exceeded") => FinishReason::ContextWindowExceeded,
        Some(other) => FinishReason::Other(other.to_owned()),
    };
    let text = match structured {
        Some(json) => {
            if finish_reason == FinishReason::ToolCalls && tool_calls.is_empty() {
                finish_reason = FinishReason::Stop;
            }
            Some(json)
        }
        None => (!text.is_empty()).then_some(text),
    };
    let usage = wire.usage.map_or_else(Usage::default, |usage| {
        let cache_read = usage.cache_read_input_tokens.unwrap_or(0);
        Usage {
            // The provider's numbers: saturating, never wrapping (or panicking) on absurd ones.
            prompt_tokens: usage
                .input_tokens
                .saturating_add(cache_read)
                .saturating_add(usage.cache_creation_input_tokens.unwrap_or(0)),
            completion_tokens: usage.output_tokens,
            cached_tokens: cache_read,
            estimated: false,
        }
    });
    Ok(ChatResponse {
        id: wire.id,
        model: wire.model,
        message: AssistantMessage { text, tool_calls },
        refusal,
        finish_reason,
        usage,
    })
}
