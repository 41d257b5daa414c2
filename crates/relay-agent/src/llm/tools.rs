//! Tool definitions, tool calls and tool results.
//!
//! A tool's JSON schema comes from the Rust type its arguments deserialize into (schemars), so the
//! schema the model sees and the type the caller parses can never drift apart. Malformed or
//! schema-violating arguments become an error [`ToolResult`] the model can read and correct,
//! never an exception that aborts the agent loop.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::schema;
use super::validate;

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    /// Name, `[A-Za-z0-9_-]{1,64}` for both providers.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// The object schema of the arguments as schemars produced it.
    pub parameters: Value,
}

impl ToolDefinition {
    /// A tool whose arguments are `T`.
    ///
    /// # Panics
    /// When `name` is not a valid tool name or `T` is not an object type; both are fixed at
    /// compile time, so this is a programming error.
    pub fn from_schema<T: JsonSchema>(name: &str, description: &str) -> Self {
        assert!(
            valid_name(name),
            "invalid tool name {name:?}: must match [A-Za-z0-9_-]{{1,64}}"
        );
        let parameters = schema::schema_for::<T>();
        assert!(
            parameters.get("type").and_then(Value::as_str) == Some("object"),
            "tool {name:?}: arguments must be a struct (an object schema)"
        );
        Self {
            name: name.to_owned(),
            description: description.to_owned(),
            parameters,
        }
    }

    /// The arguments schema adapted to OpenAI strict mode, or `None` when it cannot qualify
    /// (e.g. maps with arbitrary keys).
    pub fn strict_parameters(&self) -> Option<Value> {
        schema::to_strict(&self.parameters).ok()
    }

    /// The arguments schema as a self-contained object schema (for Anthropic `input_schema`).
    pub fn input_schema(&self) -> Value {
        schema::cleaned(&self.parameters)
    }

    /// Parses and validates a call's arguments against this tool's schema.
    ///
    /// Optional properties the model sent as `null` (strict mode makes every property required) are
    /// dropped first. On failure the error is a [`ToolResult`] to send back to the model.
    pub fn check_call(&self, call: &ToolCall) -> Result<Value, ToolResult> {
        let mut value = call.arguments_json()?;
        schema::strip_optional_nulls(&mut value, &self.parameters);
        let errors = validate::validate(&value, &self.parameters);
        if errors.is_empty() {
            Ok(value)
        } else {
            Err(ToolResult::error(
                &call.id,
                format!(
                    "invalid arguments for tool `{}`:\n{}\nCall the tool again with corrected arguments.",
                    self.name,
                    validate::render_errors(&errors)
                ),
            ))
        }
    }

    /// [`check_call`](Self::check_call), then deserializes into `T`.
    pub fn parse_call<T: DeserializeOwned>(&self, call: &ToolCall) -> Result<T, ToolResult> {
        let value = self.check_call(call)?;
        serde_path_to_error::deserialize(value).map_err(|error| {
            ToolResult::error(
                &call.id,
                format!("invalid arguments for tool `{}`: {error}", self.name),
            )
        })
    }
}

/// One tool call requested by the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The provider's call id (`call_…`, `toolu_…`); the result must carry it back.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments as JSON text, exactly as the model produced them (OpenAI sends a string that
    /// may be invalid JSON; Anthropic's parsed object is re-serialized).
    pub arguments: String,
}

impl ToolCall {
    /// The arguments parsed as JSON, or an error result telling the model what was wrong.
    pub fn arguments_json(&self) -> Result<Value, ToolResult> {
        let value: Value = serde_json::from_str(&self.arguments).map_err(|error| {
            ToolResult::error(
                &self.id,
                format!(
                    "the arguments of tool `{}` are not valid JSON ({error}); send a JSON object",
                    self.name
                ),
            )
        })?;
        if value.is_object() {
            Ok(value)
        } else {
            Err(ToolResult::error(
                &self.id,
                format!(
                    "the arguments of tool `{}` must be a JSON object",
                    self.name
                ),
            ))
        }
    }
}

/// The result of one tool call, sent back in the next request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub call_id: String,
    /// Result text (often JSON).
    pub content: String,
    /// True when the tool failed; the model sees the error and may retry.
    pub is_error: bool,
}

impl ToolResult {
    /// A successful result.
    pub fn ok(call_id: &str, content: impl Into<String>) -> Self {
        Self {
            call_id: call_id.to_owned(),
            content: content.into(),
            is_error: false,
        }
    }

    /// A failed result; the content explains the failure to the model.
    pub fn error(call_id: &str, content: impl Into<String>) -> Self {
        Self {
            call_id: call_id.to_owned(),
            content: content.into(),
            is_error: true,
        }
    }
}

/// Whether `name` is a valid tool or schema name for both providers.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
