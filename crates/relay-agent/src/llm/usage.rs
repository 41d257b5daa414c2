//! Usage accounting: every call on every model becomes a [`UsageRecord`], emitted as metrics and
//! handed to a [`UsageSink`] (Postgres in the worker: `relay_worker::llm_usage::StoreUsageSink`;
//! nothing in `relay llm ping`). The agent knows the seam, not the store.
//!
//! Metrics (Prometheus names):
//! - `relay_llm_tokens_total{role,model,kind}` counter, `kind` ∈ `prompt`, `completion`, `cached`;
//! - `relay_llm_requests_total{role,model,outcome}` counter, `outcome` = `ok` or the error kind;
//! - `relay_llm_request_duration_seconds{role,model}` histogram of a call's wall time on one model;
//! - `relay_llm_estimated_usage_total{role,model}` counter of calls whose response carried no usage
//!   (their tokens are estimated from the bytes exchanged, see [`super::estimate`]).

use relay_core::{IssueId, JobId};
use std::time::Duration;

use async_trait::async_trait;

use super::error::ErrorKind;
use super::settings::{ProviderKind, Role};
use super::types::Usage;

/// Metric names, documented in one place.
pub mod metric_names {
    /// Tokens used, by `role`, `model` and `kind`.
    pub const TOKENS_TOTAL: &str = "relay_llm_tokens_total";
    /// Calls, by `role`, `model` and `outcome`.
    pub const REQUESTS_TOTAL: &str = "relay_llm_requests_total";
    /// Call duration in seconds, by `role` and `model`.
    pub const REQUEST_DURATION_SECONDS: &str = "relay_llm_request_duration_seconds";
    /// Calls whose usage was estimated (the provider sent none), by `role` and `model`.
    pub const ESTIMATED_USAGE_TOTAL: &str = "relay_llm_estimated_usage_total";
}

/// What a call served: linked into the usage rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UsageContext {
    /// `jobs.id`.
    pub job_id: Option<JobId>,
    /// `issues.id`.
    pub issue_id: Option<IssueId>,
}

/// One call on one model.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageRecord {
    /// What the call served.
    pub context: UsageContext,
    /// Calling role.
    pub role: Role,
    /// Provider protocol.
    pub provider: ProviderKind,
    /// The model asked (the configured name, not the provider's dated variant).
    pub model: String,
    /// Tokens used (zero when every attempt failed).
    pub usage: Usage,
    /// Wall time including retries and backoff.
    pub latency: Duration,
    /// HTTP attempts made.
    pub attempts: u32,
    /// `None` on success, else the classified error.
    pub error: Option<ErrorKind>,
}

impl UsageRecord {
    /// `ok` or `error`.
    pub fn outcome(&self) -> &'static str {
        if self.error.is_some() { "error" } else { "ok" }
    }

    /// Emits the record's metrics.
    pub fn emit_metrics(&self) {
        let role = self.role.as_str();
        let model = self.model.clone();
        for (kind, tokens) in [
            ("prompt", self.usage.prompt_tokens),
            ("completion", self.usage.completion_tokens),
            ("cached", self.usage.cached_tokens),
        ] {
            metrics::counter!(metric_names::TOKENS_TOTAL, "role" => role, "model" => model.clone(), "kind" => kind)
                .increment(tokens);
        }
        if self.usage.estimated {
            metrics::counter!(metric_names::ESTIMATED_USAGE_TOTAL, "role" => role, "model" => model.clone())
                .increment(1);
        }
        let outcome = self.error.map_or("ok", ErrorKind::as_str);
        metrics::counter!(metric_names::REQUESTS_TOTAL, "role" => role, "model" => model.clone(), "outcome" => outcome)
            .increment(1);
        metrics::histogram!(metric_names::REQUEST_DURATION_SECONDS, "role" => role, "model" => model)
            .record(self.latency.as_secs_f64());
    }
}

/// Where usage records go. Recording must not fail the call: implementations log their errors.
#[async_trait]
pub trait UsageSink: Send + Sync {
    /// Records one call.
    async fn record(&self, record: &UsageRecord);
}

/// Discards records (metrics are still emitted by the client).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopUsageSink;

#[async_trait]
impl UsageSink for NoopUsageSink {
    async fn record(&self, _record: &UsageRecord) {}
}
