//! The job-handler seam and the registry of handlers by kind.

use std::collections::HashMap;
use std::sync::Arc;

use relay_agent::trace::Tracer;
use relay_store::PgPool;
use relay_store::queue::ClaimedJob;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// What a handler gets for one attempt.
#[derive(Clone)]
pub struct JobContext {
    pub job: ClaimedJob,
    pub pool: PgPool,
    /// Cancelled when the attempt must stop early (the lease was lost, or shutdown ran out of
    /// grace). Long handlers should check it between steps.
    pub cancel: CancellationToken,
    /// The attempt's run trace (a no-op tracer when tracing is off or could not start).
    pub tracer: Tracer,
}

/// How an attempt failed.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// Worth trying again later (network, rate limits, the database blinked).
    #[error("{0:#}")]
    Retryable(anyhow::Error),
    /// Retrying cannot help (bad payload, the issue no longer exists).
    #[error("{0:#}")]
    Permanent(anyhow::Error),
}

impl From<anyhow::Error> for JobError {
    /// Unclassified errors are retried: the safe default for a transient world.
    fn from(error: anyhow::Error) -> Self {
        JobError::Retryable(error)
    }
}

/// Runs one kind of job. Handlers must be idempotent: an attempt can be repeated after a crash.
#[async_trait::async_trait]
pub trait JobHandler: Send + Sync + 'static {
    /// Runs one attempt; the returned value is stored with the successful run.
    async fn run(&self, context: JobContext) -> Result<Value, JobError>;
}

/// Handlers by job kind.
#[derive(Clone, Default)]
pub struct Registry {
    handlers: HashMap<String, Arc<dyn JobHandler>>,
}

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Registers `handler` for `kind`, replacing any previous one.
    pub fn register(mut self, kind: &str, handler: impl JobHandler) -> Registry {
        self.handlers.insert(kind.to_owned(), Arc::new(handler));
        self
    }

    pub fn get(&self, kind: &str) -> Option<Arc<dyn JobHandler>> {
        self.handlers.get(kind).cloned()
    }
}
