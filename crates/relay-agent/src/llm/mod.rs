//! The LLM layer: one provider-neutral chat API over the OpenAI-compatible Chat Completions
//! protocol and the Anthropic Messages protocol.
//!
//! Layout:
//! - [`types`]: provider-neutral requests and responses ([`ChatRequest`], [`ChatResponse`], [`Message`]);
//! - [`tools`]: tool definitions built from Rust types, tool calls and tool results;
//! - [`schema`]: adaptation of schemars output to OpenAI strict mode;
//! - [`validate`]: a validator for the JSON-schema subset schemars emits;
//! - [`provider`]: the [`Provider`] trait every caller goes through;
//! - [`openai`] / [`anthropic`]: the two wire protocols;
//! - [`http`]: HTTP error classification and rate-limit headers shared by both;
//! - [`error`]: the classified [`LlmError`];
//! - [`retry`]: backoff policy and the per-call deadline;
//! - [`stream`]: server-sent-event responses folded into one reply;
//! - [`client`]: [`LlmClient`] = provider + retry + fallback models + usage + budget + metrics;
//! - [`structured`]: schema-validated structured output with corrective retries;
//! - [`structured_mode`]: which structured-output mode an endpoint takes, learned from refusals;
//! - [`estimate`]: usage estimated from the bytes exchanged when a response has none;
//! - [`usage`]: usage records, the [`UsageSink`] seam and metrics;
//! - [`budget`]: the per-job [`TokenBudget`];
//! - [`settings`]: the `[llm]` configuration section;
//! - [`mod@ping`]: the `relay llm ping` check;
//! - `scripted` (feature `test-support`): a scripted LLM HTTP server for tests.

pub mod anthropic;
pub mod budget;
pub mod client;
pub mod error;
pub mod estimate;
pub mod http;
pub mod openai;
pub mod ping;
pub mod provider;
pub mod retry;
pub mod schema;
#[cfg(any(test, feature = "test-support"))]
pub mod scripted;
pub mod settings;
pub mod stream;
pub mod structured;
pub mod structured_mode;
pub mod tools;
pub mod types;
pub mod usage;
pub mod validate;

pub use budget::{BudgetExceeded, TokenBudget};
pub use client::LlmClient;
pub use error::{ErrorKind, LlmError};
pub use ping::{PingReport, ping};
pub use provider::{Provider, build_provider};
pub use retry::RetryPolicy;
pub use settings::{
    AnthropicStructuredMode, LlmSettings, OpenAiDialect, ProviderConfig, ProviderKind,
    ProviderSettings, Role,
};
pub use structured::{Structured, StructuredOptions};
pub use tools::{ToolCall, ToolDefinition, ToolResult};
pub use types::{
    AssistantMessage, ChatRequest, ChatResponse, FinishReason, Message, OutputMode, ResponseFormat,
    ToolChoice, Usage,
};
pub use usage::{NoopUsageSink, UsageContext, UsageRecord, UsageSink};

/// Result alias for the LLM layer.
pub type Result<T, E = LlmError> = std::result::Result<T, E>;
