//! Provider-neutral chat types. The providers translate these to and from their wire formats;
//! callers never see OpenAI or Anthropic JSON.

use serde_json::Value;

use super::tools::{ToolCall, ToolDefinition, ToolResult};

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// Instructions. OpenAI sends them as a `system` message, Anthropic as the top-level `system`.
    System(String),
    /// A user turn.
    User(String),
    /// A previous assistant turn, echoed back verbatim (text and tool calls).
    Assistant(AssistantMessage),
    /// The result of one tool call. Consecutive results form one Anthropic user turn.
    Tool(ToolResult),
}

impl Message {
    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Self::System(text.into())
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::User(text.into())
    }
}

/// What the assistant said in one turn.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AssistantMessage {
    /// Text content, if any (absent when the turn only calls tools).
    pub text: Option<String>,
    /// Tool calls requested in this turn, in order; several means parallel calls.
    pub tool_calls: Vec<ToolCall>,
}

/// Which tools the model may or must call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolChoice {
    /// The model decides (the default when tools are present).
    #[default]
    Auto,
    /// The model must not call tools.
    None,
    /// The model must call at least one tool.
    Required,
    /// The model must call this tool.
    Tool(String),
}

/// A request for JSON output matching a schema.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseFormat {
    /// Schema name (`[A-Za-z0-9_-]{1,64}`), e.g. the Rust type name.
    pub name: String,
    /// The schema as schemars produced it; providers adapt it to their rules.
    pub schema: Value,
    /// How the schema is asked for (OpenAI-compatible servers; Anthropic has its own setting).
    pub mode: OutputMode,
}

/// How structured output is asked of an OpenAI-compatible server, in the order tried when a
/// server refuses one (see [`super::structured_mode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum OutputMode {
    /// `response_format: {type: json_schema}` (with the schema in the prompt too on
    /// `compatible` servers).
    #[default]
    JsonSchema,
    /// `response_format: {type: json_object}` with the schema in the system prompt.
    JsonObject,
    /// One tool whose parameters are the schema, forced with `tool_choice`; its arguments are
    /// the reply.
    ToolCall,
}

impl OutputMode {
    /// The fallback order.
    pub const ORDER: [OutputMode; 3] = [
        OutputMode::JsonSchema,
        OutputMode::JsonObject,
        OutputMode::ToolCall,
    ];

    /// Stable name (trace events, logs).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::JsonSchema => "json_schema",
            Self::JsonObject => "json_object",
            Self::ToolCall => "tool_call",
        }
    }

    /// The next mode to try after this one was refused.
    pub fn next(self) -> Option<OutputMode> {
        match self {
            Self::JsonSchema => Some(Self::JsonObject),
            Self::JsonObject => Some(Self::ToolCall),
            Self::ToolCall => None,
        }
    }
}

/// A provider-neutral chat request. The model comes from the provider configuration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatRequest {
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// Tools the model may call.
    pub tools: Vec<ToolDefinition>,
    /// Tool choice; only sent when `tools` is not empty.
    pub tool_choice: ToolChoice,
    /// `Some(false)` asks for at most one tool call per turn (OpenAI `parallel_tool_calls`,
    /// Anthropic `disable_parallel_tool_use`); `None` keeps the provider default (parallel).
    pub parallel_tool_calls: Option<bool>,
    /// Ask for JSON matching a schema instead of free text.
    pub response_format: Option<ResponseFormat>,
    /// Overrides the configured `max_output_tokens`.
    pub max_output_tokens: Option<u32>,
    /// Sampling temperature; omitted when `None`.
    pub temperature: Option<f32>,
}

impl ChatRequest {
    /// A request made of these messages.
    pub fn new(messages: Vec<Message>) -> Self {
        Self {
            messages,
            ..Self::default()
        }
    }

    /// Adds tools.
    #[must_use]
    pub fn with_tools(mut self, tools: Vec<ToolDefinition>) -> Self {
        self.tools = tools;
        self
    }

    /// Sets the tool choice.
    #[must_use]
    pub fn with_tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = choice;
        self
    }

    /// Sets the output token limit for this request.
    #[must_use]
    pub fn with_max_output_tokens(mut self, tokens: u32) -> Self {
        self.max_output_tokens = Some(tokens);
        self
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    /// Natural end of the turn (`stop`, `end_turn`, `stop_sequence`).
    Stop,
    /// The output token limit was hit (`length`, `max_tokens`); output may be truncated.
    Length,
    /// The model wants tool results (`tool_calls`, `tool_use`).
    ToolCalls,
    /// Output was withheld by a content filter or the model refused (`content_filter`, `refusal`).
    ContentFilter,
    /// The prompt did not fit the context window (`model_context_window_exceeded`).
    ContextWindowExceeded,
    /// Anything else, verbatim.
    Other(String),
}

/// A temperature as JSON without `f32` noise (`0.2`, not `0.20000000298023224`).
pub(crate) fn temperature_json(temperature: f32) -> Value {
    let value: f64 = temperature
        .to_string()
        .parse()
        .unwrap_or(f64::from(temperature));
    Value::from(value)
}

/// Token usage of one response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// All input tokens, including cached ones.
    pub prompt_tokens: u64,
    /// Output tokens.
    pub completion_tokens: u64,
    /// Input tokens served from the provider's prompt cache (a subset of `prompt_tokens`).
    pub cached_tokens: u64,
    /// The provider sent no usage: the counts are estimated from the bytes sent and received
    /// (see [`super::estimate`]), never taken as zero.
    pub estimated: bool,
}

impl Usage {
    /// Prompt plus completion tokens (saturating: the counts are the provider's numbers).
    pub fn total(&self) -> u64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }

    /// Adds another usage to this one (saturating).
    pub fn add(&mut self, other: &Usage) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self
            .completion_tokens
            .saturating_add(other.completion_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(other.cached_tokens);
        self.estimated |= other.estimated;
    }
}

/// A provider-neutral chat response.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    /// The provider's response id (`chatcmpl-…`, `msg_…`).
    pub id: String,
    /// The model that answered, as the provider reports it (may carry a date suffix).
    pub model: String,
    /// The assistant turn.
    pub message: AssistantMessage,
    /// A refusal message (OpenAI `message.refusal`, Anthropic `stop_reason: refusal`).
    pub refusal: Option<String>,
    /// Why the model stopped.
    pub finish_reason: FinishReason,
    /// Token usage.
    pub usage: Usage,
}

impl ChatResponse {
    /// The text of the reply, or an empty string.
    pub fn text(&self) -> &str {
        self.message.text.as_deref().unwrap_or("")
    }

    /// Whether the model asked for tool results. Check this rather than `finish_reason`: some
    /// compatible servers report `stop` on a turn with tool calls.
    pub fn wants_tools(&self) -> bool {
        !self.message.tool_calls.is_empty()
    }
}
