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

use super::client::LlmClient;
use super::error::LlmError;
use super::schema;
use super::types::{
    AssistantMessage, ChatRequest, ChatResponse, FinishReason, Message, ResponseFormat, Usage,
};
use super::validate;

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
        request.response_format = Some(ResponseFormat {
            name,
            schema: schema.clone(),
        });
        let retries = options.retries.unwrap_or(self.structured_retries);
        let mut usage = Usage::default();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let response = self.complete(&request).await?;
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
            let errors = match parse_reply::<T>(response.text(), &schema) {
                Ok(value) => {
                    return Ok(Structured {
                        value,
                        response,
                        attempts,
                        usage,
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
                text: Some(response.text().to_owned()),
                tool_calls: Vec::new(),
            }));
            request.messages.push(Message::User(feedback(&errors)));
        }
    }
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
