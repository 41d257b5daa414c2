//! Structured output: ask for JSON matching a Rust type's schema, validate the reply against that
//! schema, deserialize it, and on invalid output ask again with a terse list of what was wrong.
//!
//! Providers that enforce the schema (OpenAI strict mode) rarely fail validation, but compatible
//! servers that ignore `response_format` do; the reply is validated either way. Refusals and
//! truncation are not retried: they are reported as [`LlmError::Refusal`] and
//! [`LlmError::Truncated`], distinct from [`LlmError::InvalidOutput`].

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use serde_json::json;

use super::client::LlmClient;
use super::error::LlmError;
use super::settings::ProviderKind;
use super::types::{
    AssistantMessage, ChatRequest, ChatResponse, FinishReason, Message, OutputMode, ResponseFormat,
    Usage,
};
use super::{schema, structured_mode, validate};
use crate::trace::TraceKind;

/// A validated structured reply.
#[derive(Debug, Clone)]
pub struct Structured<T> {
    /// The deserialized value.
    pub value: T,
    /// The last (valid) response.
    pub response: ChatResponse,
    /// Replies received, including invalid ones.
    pub attempts: u32,
    /// Usage summed over all replies.
    pub usage: Usage,
    /// How the output was asked for (after any fallback).
    pub mode: OutputMode,
}

/// Overrides for one structured call.
#[derive(Debug, Clone, Default)]
pub struct StructuredOptions {
    /// Schema name sent to the provider (default: the type's schema name).
    pub name: Option<String>,
    /// Corrective retries (default: the client's `structured_retries`).
    pub retries: Option<u32>,
}

impl LlmClient {
    /// Asks for a reply matching `T`'s schema and returns it validated and deserialized.
    pub async fn complete_structured<T: JsonSchema + DeserializeOwned>(
        &self,
        request: ChatRequest,
    ) -> Result<Structured<T>, LlmError> {
        self.complete_structured_with(request, StructuredOptions::default())
            .await
    }

    /// [`complete_structured`](Self::complete_structured) with overrides.
    pub async fn complete_structured_with<T: JsonSchema + DeserializeOwned>(
        &self,
        mut request: ChatRequest,
        options: StructuredOptions,
    ) -> Result<Structured<T>, LlmError> {
        let schema = schema::schema_for::<T>();
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            // Both providers require an object at the root of a response schema.
            return Err(LlmError::Config(format!(
                "structured output type {} must be a struct (an object schema)",
                T::schema_name()
            )));
        }
        let name = options
            .name
            .unwrap_or_else(|| schema_name(&T::schema_name()));
        let endpoint = self.endpoint().map(str::to_owned);
        let falls_back = self.provider_kind() == ProviderKind::Openai;
        let mut mode = structured_mode::starting_mode(endpoint.as_deref(), self.model());
        request.response_format = Some(ResponseFormat {
            name: name.clone(),
            schema: schema.clone(),
            mode,
        });
        let retries = options.retries.unwrap_or(self.structured_retries);
        let mut usage = Usage::default();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let response = match self.complete(&request).await {
                Ok(response) => response,
                // Bounded: each refusal moves one step along a three-mode order.
                Err(LlmError::UnsupportedOutput { status, message })
                    if falls_back && mode.next().is_some() =>
                {
                    let next = mode.next().unwrap_or(mode);
                    tracing::warn!(
                        llm.role = %self.role(),
                        llm.structured_mode = mode.as_str(),
                        llm.next_mode = next.as_str(),
                        http.status = status,
                        error.message = %message,
                        "the server refused a structured-output mode, falling back"
                    );
                    self.trace(
                        TraceKind::Decision,
                        json!({
                            "decision": "structured_mode_fallback",
                            "refused": mode.as_str(),
                            "next": next.as_str(),
                            "status": status,
                            "reason": capped(&message),
                        }),
                    );
                    mode = next;
                    structured_mode::remember(endpoint.as_deref(), self.model(), mode);
                    if let Some(format) = request.response_format.as_mut() {
                        format.mode = mode;
                    }
                    attempts -= 1;
                    continue;
                }
                Err(error) => return Err(error),
            };
            usage.add(&response.usage);
            if let Some(refusal) = &response.refusal {
                return Err(LlmError::Refusal(refusal.clone()));
            }
            match response.finish_reason {
                FinishReason::Length => {
                    return Err(LlmError::Truncated {
                        partial: response.text().to_owned(),
                    });
                }
                FinishReason::ContentFilter => {
                    return Err(LlmError::Refusal(
                        "the reply was withheld by a content filter".into(),
                    ));
                }
                _ => {}
            }
            let reply = reply_text(&response, mode, &name);
            let errors = match parse_reply::<T>(&reply, &schema) {
                Ok(value) => {
                    return Ok(Structured {
                        value,
                        response,
                        attempts,
                        usage,
                        mode,
                    });
                }
                Err(errors) => errors,
            };
            tracing::debug!(
                llm.role = %self.role(),
                llm.attempt = attempts,
                errors = ?errors,
                "structured reply failed validation"
            );
            if attempts > retries {
                return Err(LlmError::InvalidOutput { errors, attempts });
            }
            request.messages.push(Message::Assistant(AssistantMessage {
                text: Some(reply),
                tool_calls: Vec::new(),
            }));
            request.messages.push(Message::User(feedback(&errors)));
        }
    }
}

/// The reply to validate: in [`OutputMode::ToolCall`] the arguments of the structured tool's call
/// (a server that ignored the forced choice and wrote text is read from its text).
fn reply_text(response: &ChatResponse, mode: OutputMode, name: &str) -> String {
    if mode == OutputMode::ToolCall {
        let calls = &response.message.tool_calls;
        if let Some(call) = calls.iter().find(|c| c.name == name).or(calls.first()) {
            return call.arguments.clone();
        }
    }
    response.text().to_owned()
}

/// A provider message shortened for a trace payload.
fn capped(message: &str) -> String {
    const MAX: usize = 300;
    let mut short: String = message.chars().take(MAX).collect();
    if message.chars().count() > MAX {
        short.push('…');
    }
    short
}

/// The corrective message sent after an invalid reply.
pub fn feedback(errors: &[String]) -> String {
    let list: Vec<String> = errors.iter().map(|error| format!("- {error}")).collect();
    format!(
        "Your reply does not match the required JSON schema:\n{}\nReply again with only the corrected JSON.",
        list.join("\n")
    )
}

/// Parses, validates and deserializes a reply; errors are model-readable.
pub fn parse_reply<T: DeserializeOwned>(text: &str, schema: &Value) -> Result<T, Vec<String>> {
    let json = strip_code_fence(text);
    if json.is_empty() {
        return Err(vec!["the reply is empty; expected a JSON value".to_owned()]);
    }
    let mut value: Value = serde_json::from_str(json)
        .map_err(|error| vec![format!("the reply is not valid JSON: {error}")])?;
    schema::strip_optional_nulls(&mut value, schema);
    let errors = validate::validate(&value, schema);
    if !errors.is_empty() {
        let rendered = validate::render_errors(&errors);
        return Err(rendered
            .lines()
            .map(|line| line.trim_start_matches("- ").to_owned())
            .collect());
    }
    serde_path_to_error::deserialize(value).map_err(|error| vec![error.to_string()])
}

/// Local models often wrap JSON in a Markdown code fence even when asked not to.
fn strip_code_fence(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_alphanumeric());
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

/// A provider-safe schema name (`[A-Za-z0-9_-]{1,64}`) from a schemars name such as
/// `Vec<Finding>`.
pub fn schema_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if cleaned.is_empty() {
        "output".to_owned()
    } else {
        cleaned
    }
}
