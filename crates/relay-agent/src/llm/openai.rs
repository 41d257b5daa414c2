//! OpenAI Chat Completions (`POST {base_url}/chat/completions`) and compatible servers.
//!
//! Dialects (see [`OpenAiDialect`]) cover what compatible servers do differently; whatever a
//! server ignores (`strict`, a forced `tool_choice`) is made up for by validating every reply.

use async_trait::async_trait;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::error::LlmError;
use super::provider::Provider;
use super::schema;
use super::settings::{OpenAiDialect, ProviderConfig, ProviderKind};
use super::stream;
use super::tools::{ToolCall, ToolDefinition};
use super::types::{
    AssistantMessage, ChatRequest, ChatResponse, FinishReason, Message, OutputMode, ToolChoice,
    Usage, temperature_json,
};
use super::{estimate, http};

/// The OpenAI-compatible provider.
pub struct OpenAiProvider {
    client: reqwest::Client,
    url: String,
    api_key: Option<SecretString>,
    options: OpenAiOptions,
    timeout: std::time::Duration,
    stream: bool,
    log_payloads: bool,
}

/// What shapes the request body besides the request itself.
#[derive(Debug, Clone)]
pub struct OpenAiOptions {
    /// Server flavour.
    pub dialect: OpenAiDialect,
    /// Default output token limit.
    pub max_output_tokens: u32,
    /// Default temperature.
    pub temperature: Option<f32>,
}

impl std::fmt::Debug for OpenAiProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiProvider")
            .field("url", &relay_core::secrets::redact_url(&self.url))
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl OpenAiProvider {
    /// A provider for a resolved configuration.
    pub fn new(config: &ProviderConfig) -> Result<Self, LlmError> {
        let mut url = format!("{}/chat/completions", config.base_url);
        if config.dialect == OpenAiDialect::Azure
            && let Some(version) = &config.api_version
        {
            url.push_str("?api-version=");
            url.push_str(version);
        }
        Ok(Self {
            client: http::client(config.timeout)?,
            url,
            api_key: config.api_key.clone(),
            options: OpenAiOptions {
                dialect: config.dialect,
                max_output_tokens: config.max_output_tokens,
                temperature: config.temperature,
            },
            timeout: config.timeout,
            stream: config.stream,
            log_payloads: config.log_payloads,
        })
    }
}

#[async_trait]
impl Provider for OpenAiProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Openai
    }

    fn endpoint(&self) -> Option<&str> {
        Some(&self.url)
    }

    async fn send(&self, model: &str, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let mut body = request_body(&self.options, model, request);
        if self.stream {
            enable_streaming(&mut body);
        }
        if self.log_payloads {
            tracing::debug!(llm.model = model, llm.request = %body, "openai request");
        }
        let mut builder = self.client.post(&self.url).json(&body);
        if let Some(key) = &self.api_key {
            builder = match self.options.dialect {
                OpenAiDialect::Azure => builder.header("api-key", key.expose_secret()),
                _ => builder.bearer_auth(key.expose_secret()),
            };
        }
        let (response, streamed_bytes) = if self.stream {
            let text = http::send_text(builder, self.timeout).await?;
            (stream::fold_openai(&text)?, Some(text.len()))
        } else {
            (http::send(builder, self.timeout).await?, None)
        };
        // No usage in the response: estimated from what was exchanged, never zero.
        let estimated = estimate::usage_missing(&response).then(|| {
            let received = streamed_bytes.unwrap_or_else(|| response.to_string().len());
            estimate::from_bytes(body.to_string().len(), received)
        });
        if self.log_payloads {
            tracing::debug!(llm.model = model, llm.response = %response, "openai response");
        }
        let mut parsed = parse_response(response)?;
        if let Some(usage) = estimated {
            parsed.usage = usage;
        }
        Ok(parsed)
    }
}

/// Turns a request body into a streaming one; `include_usage` makes the last chunk carry usage.
pub fn enable_streaming(body: &mut Value) {
    body["stream"] = json!(true);
    body["stream_options"] = json!({"include_usage": true});
}

/// The JSON body of a chat completion request.
pub fn request_body(options: &OpenAiOptions, model: &str, request: &ChatRequest) -> Value {
    let full_openai = options.dialect != OpenAiDialect::Compatible;
    let mut body = Map::new();
    body.insert("model".to_owned(), json!(model));
    let mut messages: Vec<Value> = request.messages.iter().map(message_json).collect();
    let mode = request.response_format.as_ref().map(|f| f.mode);
    if let Some(format) = &request.response_format
        && (mode == Some(OutputMode::JsonObject)
            || (mode == Some(OutputMode::JsonSchema) && !full_openai))
    {
        // Local servers may ignore `response_format`, and `json_object` carries no schema; the
        // schema in the prompt still tells the model what to produce, and the reply is validated
        // either way.
        add_schema_instruction(&mut messages, &schema::cleaned(&format.schema));
    }
    body.insert("messages".to_owned(), Value::Array(messages));
    let max_tokens = request
        .max_output_tokens
        .unwrap_or(options.max_output_tokens);
    // `max_tokens` is deprecated on api.openai.com (and rejected by o-series models), while local
    // servers only know `max_tokens`.
    let max_key = if full_openai {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body.insert(max_key.to_owned(), json!(max_tokens));
    if let Some(temperature) = request.temperature.or(options.temperature) {
        body.insert("temperature".to_owned(), temperature_json(temperature));
    }
    let structured_tool = request
        .response_format
        .as_ref()
        .filter(|f| f.mode == OutputMode::ToolCall);
    if !request.tools.is_empty() || structured_tool.is_some() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| tool_json(tool, full_openai))
            .collect();
        if let Some(format) = structured_tool {
            tools.push(json!({"type": "function", "function": {
                "name": format.name,
                "description": STRUCTURED_TOOL_DESCRIPTION,
                "parameters": schema::cleaned(&format.schema),
            }}));
        }
        body.insert("tools".to_owned(), Value::Array(tools));
        let choice = match &request.tool_choice {
            _ if structured_tool.is_some() => {
                structured_tool.map(|f| json!({"type": "function", "function": {"name": f.name}}))
            }
            ToolChoice::Auto if full_openai => Some(json!("auto")),
            ToolChoice::Auto => None,
            ToolChoice::None => Some(json!("none")),
            ToolChoice::Required => Some(json!("required")),
            ToolChoice::Tool(name) => Some(json!({"type": "function", "function": {"name": name}})),
        };
        if let Some(choice) = choice {
            body.insert("tool_choice".to_owned(), choice);
        }
        // Ollama and vLLM do not know the flag; llama.cpp defaults it to off, so send it whenever
        // the caller has an opinion and the server is OpenAI itself.
        if let Some(parallel) = request.parallel_tool_calls.filter(|_| full_openai) {
            body.insert("parallel_tool_calls".to_owned(), json!(parallel));
        }
    }
    if let Some(format) = &request.response_format
        && format.mode == OutputMode::JsonObject
    {
        body.insert("response_format".to_owned(), json!({"type": "json_object"}));
    }
    if let Some(format) = &request.response_format
        && format.mode == OutputMode::JsonSchema
    {
        let (schema, strict) = match full_openai.then(|| schema::to_strict(&format.schema)) {
            Some(Ok(strict)) => (strict, true),
            _ => (schema::cleaned(&format.schema), false),
        };
        body.insert(
            "response_format".to_owned(),
            json!({
                "type": "json_schema",
                "json_schema": {"name": format.name, "schema": schema, "strict": strict},
            }),
        );
    }
    Value::Object(body)
}

/// Description of the tool that carries structured output in [`OutputMode::ToolCall`].
pub const STRUCTURED_TOOL_DESCRIPTION: &str =
    "Give your answer by calling this tool once; its arguments are the answer.";

/// Appends "reply with JSON matching this schema" to the first system message (local chat
/// templates often accept only one, at the start), or adds one.
fn add_schema_instruction(messages: &mut Vec<Value>, schema: &Value) {
    let instruction = format!(
        "Respond with only a JSON value that matches this JSON schema, without any other text:\n{schema}"
    );
    match messages.first_mut() {
        Some(first) if first["role"] == "system" => {
            let text = first["content"].as_str().unwrap_or_default();
            first["content"] = json!(format!("{text}\n\n{instruction}"));
        }
        _ => messages.insert(0, json!({"role": "system", "content": instruction})),
    }
}

fn tool_json(tool: &ToolDefinition, full_openai: bool) -> Value {
    let (parameters, strict) = match full_openai.then(|| tool.strict_parameters()).flatten() {
        Some(strict) => (strict, true),
        None => (tool.input_schema(), false),
    };
    let mut function = json!({
        "name": tool.name,
        "description": tool.description,
        "parameters": parameters,
    });
    if full_openai {
        function["strict"] = json!(strict);
    }
    json!({"type": "function", "function": function})
}

fn message_json(message: &Message) -> Value {
    match message {
        Message::System(text) => json!({"role": "system", "content": text}),
        Message::User(text) => json!({"role": "user", "content": text}),
        Message::Assistant(assistant) => {
            // `content` may only be null when the turn has tool calls.
            let content = match &assistant.text {
                None if assistant.tool_calls.is_empty() => Some(""),
                text => text.as_deref(),
            };
            let mut value = json!({"role": "assistant", "content": content});
            if !assistant.tool_calls.is_empty() {
                value["tool_calls"] = assistant
                    .tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments},
                        })
                    })
                    .collect();
            }
            value
        }
        Message::Tool(result) => {
            // Chat Completions has no error flag on tool messages; say it in the content.
            let content = if result.is_error {
                format!("Error: {}", result.content)
            } else {
                result.content.clone()
            };
            json!({"role": "tool", "tool_call_id": result.call_id, "content": content})
        }
    }
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    id: String,
    #[serde(default)]
    model: String,
    #[serde(default)]
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireChoice {
    message: WireMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Vec<WireToolCall>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: String,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: Value,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<WirePromptDetails>,
}

#[derive(Deserialize)]
struct WirePromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

/// Parses a 200 response body.
pub fn parse_response(body: Value) -> Result<ChatResponse, LlmError> {
    if let Some(error) = body.get("error").filter(|_| body.get("choices").is_none()) {
        // Some proxies report upstream failures inside a 200.
        let status = error.get("code").and_then(Value::as_u64).unwrap_or(500);
        let status = u16::try_from(status).unwrap_or(500);
        return Err(http::classify(
            status,
            &Default::default(),
            &body.to_string(),
        ));
    }
    let wire: WireResponse = serde_path_to_error::deserialize(body).map_err(|error| {
        LlmError::InvalidResponse(format!("malformed chat completion: {error}"))
    })?;
    let choice =
        wire.choices.into_iter().next().ok_or_else(|| {
            LlmError::InvalidResponse("chat completion has no choices".to_owned())
        })?;
    let tool_calls: Vec<ToolCall> = choice
        .message
        .tool_calls
        .into_iter()
        .map(|call| ToolCall {
            id: call.id,
            name: call.function.name,
            arguments: match call.function.arguments {
                Value::String(text) => text,
                Value::Null => "{}".to_owned(),
                // Some compatible servers send the arguments as an object.
                other => other.to_string(),
            },
        })
        .collect();
    let finish_reason = match choice.finish_reason.as_deref() {
        Some("stop") | None => FinishReason::Stop,
        Some("length") => FinishReason::Length,
        Some("tool_calls" | "function_call") => FinishReason::ToolCalls,
        Some("content_filter") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_owned()),
    };
    let usage = wire.usage.map_or_else(Usage::default, |usage| Usage {
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        cached_tokens: usage
            .prompt_tokens_details
            .and_then(|details| details.cached_tokens)
            .unwrap_or(0),
        estimated: false,
    });
    Ok(ChatResponse {
        id: wire.id,
        model: wire.model,
        message: AssistantMessage {
            text: choice.message.content,
            tool_calls,
        },
        refusal: choice.message.refusal,
        finish_reason,
        usage,
    })
}
