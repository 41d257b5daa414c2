//! [`LlmClient`]: what callers hold. It wraps a [`Provider`] with retries, the per-call deadline,
//! fallback models, the token budget, usage records and metrics.

use std::sync::Arc;

use serde_json::json;
use tokio::time::Instant;

use crate::trace::{TraceKind, Tracer};

use super::budget::TokenBudget;
use super::error::LlmError;
use super::provider::{Provider, build_provider};
use super::retry::RetryPolicy;
use super::settings::{LlmSettings, ProviderConfig, ProviderKind, Role};
use super::types::{ChatRequest, ChatResponse, Usage};
use super::usage::{NoopUsageSink, UsageContext, UsageRecord, UsageSink};

/// A role's handle on the LLM. Cheap to clone; clones share the provider, sink and budget.
#[derive(Clone)]
pub struct LlmClient {
    provider: Arc<dyn Provider>,
    role: Role,
    model: String,
    fallback_models: Vec<String>,
    retry: RetryPolicy,
    pub(super) structured_retries: u32,
    sink: Arc<dyn UsageSink>,
    context: UsageContext,
    budget: Option<Arc<TokenBudget>>,
    tracer: Tracer,
}

impl std::fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmClient")
            .field("provider", &self.provider)
            .field("role", &self.role)
            .field("model", &self.model)
            .field("fallback_models", &self.fallback_models)
            .field("retry", &self.retry)
            .field("context", &self.context)
            .finish_non_exhaustive()
    }
}

impl LlmClient {
    /// The client for `role` as configured (no usage sink; add one with
    /// [`with_usage_sink`](Self::with_usage_sink)).
    pub fn from_settings(settings: &LlmSettings, role: Role) -> Result<Self, LlmError> {
        Self::from_config(&settings.resolve(role)?)
    }

    /// The client for a resolved configuration.
    pub fn from_config(config: &ProviderConfig) -> Result<Self, LlmError> {
        let retry = RetryPolicy {
            max_retries: config.max_retries,
            deadline: config.deadline,
            ..RetryPolicy::default()
        };
        Ok(
            Self::new(build_provider(config)?, config.role, config.model.clone())
                .with_fallback_models(config.fallback_models.clone())
                .with_retry_policy(retry)
                .with_structured_retries(config.structured_retries),
        )
    }

    /// A client over any provider (tests use fakes).
    pub fn new(provider: Arc<dyn Provider>, role: Role, model: impl Into<String>) -> Self {
        Self {
            provider,
            role,
            model: model.into(),
            fallback_models: Vec::new(),
            retry: RetryPolicy::default(),
            structured_retries: 2,
            sink: Arc::new(NoopUsageSink),
            context: UsageContext::default(),
            budget: None,
            tracer: Tracer::noop(),
        }
    }

    /// Models tried in order when the primary stays unavailable.
    #[must_use]
    pub fn with_fallback_models(mut self, models: Vec<String>) -> Self {
        self.fallback_models = models;
        self
    }

    /// Replaces the retry policy.
    #[must_use]
    pub fn with_retry_policy(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Corrective retries for structured output that fails validation.
    #[must_use]
    pub fn with_structured_retries(mut self, retries: u32) -> Self {
        self.structured_retries = retries;
        self
    }

    /// Where usage records go.
    #[must_use]
    pub fn with_usage_sink(mut self, sink: Arc<dyn UsageSink>) -> Self {
        self.sink = sink;
        self
    }

    /// The job and issue the calls serve.
    #[must_use]
    pub fn with_context(mut self, context: UsageContext) -> Self {
        self.context = context;
        self
    }

    /// The job's token budget, charged by every successful call.
    #[must_use]
    pub fn with_budget(mut self, budget: Arc<TokenBudget>) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Where each call's `llm_call` trace event goes, emitted as the tracer's agent (an explore
    /// names its own client `explore#N`) or, when it has none, as the role.
    #[must_use]
    pub fn with_tracer(mut self, tracer: &Tracer) -> Self {
        self.tracer = match tracer.agent() {
            Some(_) => tracer.clone(),
            None => tracer.for_agent(self.role.as_str()),
        };
        self
    }

    /// The calling role.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The primary model.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The provider protocol.
    pub fn provider_kind(&self) -> ProviderKind {
        self.provider.kind()
    }

    /// Where the provider sends requests, when it remembers what the endpoint supports.
    pub(super) fn endpoint(&self) -> Option<&str> {
        self.provider.endpoint()
    }

    /// Emits a trace event as this client's agent.
    pub(super) fn trace(&self, kind: TraceKind, payload: serde_json::Value) {
        if self.tracer.is_enabled() {
            self.tracer.event(kind, payload);
        }
    }

    /// The job's budget, if any.
    pub fn budget(&self) -> Option<&Arc<TokenBudget>> {
        self.budget.as_ref()
    }

    /// Sends a chat request: retries retryable failures with backoff until the deadline, then
    /// moves on to the fallback models. Errors are classified ([`LlmError`]).
    pub async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        if let Some(budget) = &self.budget {
            budget.check()?;
        }
        let deadline = Instant::now() + self.retry.deadline;
        let models: Vec<&str> = std::iter::once(self.model.as_str())
            .chain(self.fallback_models.iter().map(String::as_str))
            .collect();
        let mut models = models.into_iter().peekable();
        while let Some(model) = models.next() {
            match self.complete_on(model, request, deadline).await {
                Ok(response) => return Ok(response),
                Err(error) if error.allows_fallback() && Instant::now() < deadline => {
                    if let Some(next) = models.peek() {
                        tracing::warn!(
                            llm.role = %self.role,
                            llm.model = model,
                            llm.fallback_model = next,
                            error.kind = error.kind().as_str(),
                            error.message = %error,
                            "llm model unavailable, trying fallback model"
                        );
                        continue;
                    }
                    return Err(error);
                }
                Err(error) => return Err(error),
            }
        }
        unreachable!("the model list always holds the primary model")
    }

    /// Calls one model with retries and records the outcome.
    async fn complete_on(
        &self,
        model: &str,
        request: &ChatRequest,
        deadline: Instant,
    ) -> Result<ChatResponse, LlmError> {
        let started = Instant::now();
        let mut attempts = 0_u32;
        let result = loop {
            attempts += 1;
            let remaining = deadline.saturating_duration_since(Instant::now());
            let outcome =
                match tokio::time::timeout(remaining, self.provider.send(model, request)).await {
                    Ok(outcome) => outcome,
                    Err(_) => Err(LlmError::Timeout(remaining)),
                };
            let error = match outcome {
                Ok(response) => break Ok(response),
                Err(error) => error,
            };
            if !error.is_retryable() || attempts > self.retry.max_retries {
                break Err(error);
            }
            let delay = self.retry.delay(attempts, &error);
            // Compare against what is left rather than computing `now + delay`: the delay comes
            // from a response header and must not be able to overflow `Instant`.
            if delay >= deadline.saturating_duration_since(Instant::now()) {
                break Err(LlmError::DeadlineExceeded {
                    deadline: self.retry.deadline,
                    attempts,
                    last: Box::new(error),
                });
            }
            tracing::warn!(
                llm.role = %self.role,
                llm.model = model,
                llm.attempt = attempts,
                retry.delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                error.kind = error.kind().as_str(),
                error.message = %error,
                error.cause_chain = %relay_core::error::cause_chain(&error),
                "llm request failed, retrying"
            );
            tokio::time::sleep(delay).await;
        };

        let usage = result
            .as_ref()
            .map(|response| response.usage)
            .unwrap_or_default();
        let mode = request.response_format.as_ref().map(|f| f.mode);
        self.record(model, usage, started, attempts, result.as_ref().err(), mode)
            .await;
        if let (Ok(response), Some(budget)) = (&result, &self.budget) {
            budget.charge(&response.usage);
        }
        if let Ok(response) = &result {
            tracing::debug!(
                llm.role = %self.role,
                llm.model = model,
                llm.attempts = attempts,
                tokens.prompt = response.usage.prompt_tokens,
                tokens.completion = response.usage.completion_tokens,
                "llm request completed"
            );
        }
        result
    }

    async fn record(
        &self,
        model: &str,
        usage: Usage,
        started: Instant,
        attempts: u32,
        error: Option<&LlmError>,
        mode: Option<super::types::OutputMode>,
    ) {
        let record = UsageRecord {
            context: self.context,
            role: self.role,
            provider: self.provider.kind(),
            model: model.to_owned(),
            usage,
            latency: started.elapsed(),
            attempts,
            error: error.map(LlmError::kind),
        };
        record.emit_metrics();
        if self.tracer.is_enabled() {
            self.tracer.event(
                TraceKind::LlmCall,
                json!({
                    "role": self.role.as_str(),
                    "model": record.model,
                    "tokens_in": usage.prompt_tokens,
                    "tokens_out": usage.completion_tokens,
                    "tokens_cached": usage.cached_tokens,
                    "tokens_estimated": usage.estimated,
                    "latency_ms": u64::try_from(record.latency.as_millis()).unwrap_or(u64::MAX),
                    "attempts": attempts,
                    // `ok`, or the classified error (`rate_limited`, `timeout`, …).
                    "outcome": record.error.map_or("ok", |kind| kind.as_str()),
                    // How structured output was asked (`json_schema`, `json_object`,
                    // `tool_call`); absent on a plain call.
                    "structured_mode": mode.map(|m| m.as_str()),
                }),
            );
        }
        self.sink.record(&record).await;
    }
}
