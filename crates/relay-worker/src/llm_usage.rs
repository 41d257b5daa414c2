//! The LLM usage sink that writes to Postgres. It lives here, not in `relay-agent`, so the agent
//! depends on neither the store nor the tracker: the agent owns the `UsageSink` seam, the worker
//! (which has the pool) plugs the table in.

use async_trait::async_trait;
use relay_agent::llm::{ErrorKind, UsageRecord, UsageSink};
use relay_store::PgPool;

/// Writes records to the `llm_usage` table.
#[derive(Debug, Clone)]
pub struct StoreUsageSink {
    pool: PgPool,
}

impl StoreUsageSink {
    /// A sink writing through `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[async_trait]
impl UsageSink for StoreUsageSink {
    async fn record(&self, record: &UsageRecord) {
        let clamp = |tokens: u64| i64::try_from(tokens).unwrap_or(i64::MAX);
        let row = relay_store::llm_usage::NewLlmUsage {
            job_id: record.context.job_id,
            issue_id: record.context.issue_id,
            role: record.role.as_str(),
            provider: record.provider.as_str(),
            model: &record.model,
            prompt_tokens: clamp(record.usage.prompt_tokens),
            completion_tokens: clamp(record.usage.completion_tokens),
            cached_tokens: clamp(record.usage.cached_tokens),
            latency_ms: i64::try_from(record.latency.as_millis()).unwrap_or(i64::MAX),
            attempts: i32::try_from(record.attempts).unwrap_or(i32::MAX),
            outcome: record.outcome(),
            error_kind: record.error.map(ErrorKind::as_str),
            estimated: record.usage.estimated,
        };
        // Recording must not fail the call (see `UsageSink`): log and go on.
        if let Err(error) = relay_store::llm_usage::insert(&self.pool, &row).await {
            tracing::warn!(
                error.message = %error,
                error.cause_chain = %relay_core::error::cause_chain(&error),
                llm.model = %record.model,
                "failed to record llm usage"
            );
        }
    }
}
