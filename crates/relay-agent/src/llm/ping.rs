//! `relay llm ping`: one tiny request with a role's configuration, so operators can check the
//! provider, model, key and network path before running jobs. No database is involved.

use std::fmt;
use std::time::Duration;

use tokio::time::Instant;

use super::client::LlmClient;
use super::error::LlmError;
use super::retry::RetryPolicy;
use super::settings::{LlmSettings, ProviderKind, Role};
use super::types::{ChatRequest, Message, Usage};

/// Output token limit of the ping request; small, but enough for reasoning models to answer.
const PING_MAX_TOKENS: u32 = 64;

/// What a successful ping observed.
#[derive(Debug, Clone, PartialEq)]
pub struct PingReport {
    /// The role whose configuration was used.
    pub role: Role,
    /// Provider protocol.
    pub provider: ProviderKind,
    /// The configured model.
    pub model: String,
    /// The model the provider says answered (often a dated variant).
    pub served_by: String,
    /// Wall time of the request.
    pub latency: Duration,
    /// Tokens used.
    pub usage: Usage,
    /// The reply text, shortened.
    pub reply: String,
}

impl fmt::Display for PingReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "role:     {}", self.role)?;
        writeln!(f, "provider: {}", self.provider.as_str())?;
        if self.served_by.is_empty() || self.served_by == self.model {
            writeln!(f, "model:    {}", self.model)?;
        } else {
            writeln!(f, "model:    {} (served by {})", self.model, self.served_by)?;
        }
        writeln!(f, "latency:  {} ms", self.latency.as_millis())?;
        writeln!(
            f,
            "tokens:   prompt={} completion={} cached={}",
            self.usage.prompt_tokens, self.usage.completion_tokens, self.usage.cached_tokens
        )?;
        write!(f, "reply:    {:?}", self.reply)
    }
}

/// Sends one request with `role`'s configuration. The primary model is asked once, without
/// retries or fallbacks, so the classified error of a misconfiguration shows immediately.
pub async fn ping(settings: &LlmSettings, role: Role) -> Result<PingReport, LlmError> {
    let config = settings.resolve(role)?;
    let retry = RetryPolicy {
        max_retries: 0,
        deadline: config.timeout,
        ..RetryPolicy::default()
    };
    let client = LlmClient::from_config(&config)?
        .with_fallback_models(Vec::new())
        .with_retry_policy(retry);
    let request = ChatRequest::new(vec![Message::user("Reply with the single word: pong")])
        .with_max_output_tokens(PING_MAX_TOKENS);
    let started = Instant::now();
    let response = client.complete(&request).await?;
    let reply: String = response.text().chars().take(80).collect();
    Ok(PingReport {
        role,
        provider: config.provider,
        model: config.model,
        served_by: response.model,
        latency: started.elapsed(),
        usage: response.usage,
        reply,
    })
}
