//! The provider seam: one HTTP attempt against one model. Retries, fallback models, usage and
//! budgets live in [`super::LlmClient`] so every provider gets them the same way.

use std::sync::Arc;

use async_trait::async_trait;

use super::anthropic::AnthropicProvider;
use super::error::LlmError;
use super::openai::OpenAiProvider;
use super::settings::{ProviderConfig, ProviderKind};
use super::types::{ChatRequest, ChatResponse};

/// A chat-completion backend.
#[async_trait]
pub trait Provider: Send + Sync + std::fmt::Debug {
    /// Which protocol this provider speaks (for metrics and usage rows).
    fn kind(&self) -> ProviderKind;

    /// Where requests go (the chat URL), for remembering what the endpoint supports; `None`
    /// when nothing is remembered (Anthropic: its structured mode is configured).
    fn endpoint(&self) -> Option<&str> {
        None
    }

    /// Sends `request` to `model` once, without retrying.
    async fn send(&self, model: &str, request: &ChatRequest) -> Result<ChatResponse, LlmError>;
}

/// Builds the provider for a resolved configuration.
pub fn build_provider(config: &ProviderConfig) -> Result<Arc<dyn Provider>, LlmError> {
    Ok(match config.provider {
        ProviderKind::Openai => Arc::new(OpenAiProvider::new(config)?),
        ProviderKind::Anthropic => Arc::new(AnthropicProvider::new(config)?),
    })
}
