//! [`TrackerError`]: every failure classified once, from the HTTP status and headers, at the
//! client boundary, so callers decide on kinds (retry, reschedule, give up), never on strings.

use std::time::Duration;

/// `Result` with [`TrackerError`].
pub type Result<T, E = TrackerError> = std::result::Result<T, E>;

/// A classified tracker failure. Messages never contain a token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrackerError {
    /// 401: the token is missing, wrong or expired.
    #[error("unauthorized: {0}")]
    Unauthorized(String),
    /// 403 that is not a rate limit: the token lacks a permission.
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// 404 (or 410): the issue, comment or project does not exist or is not visible.
    #[error("not found: {0}")]
    NotFound(String),
    /// 422 (or a GitLab 400): the tracker refused the content, with its message.
    #[error("validation failed: {0}")]
    Validation(String),
    /// A primary or secondary rate limit; `retry_after` is how long to wait.
    #[error("rate limited: retry after {}s", retry_after.as_secs())]
    RateLimited { retry_after: Duration },
    /// 5xx, a timeout or a connection failure.
    #[error("transient: {0}")]
    Transient(String),
    /// The answer could not be understood (unexpected JSON).
    #[error("unexpected response: {0}")]
    Protocol(String),
    /// Misconfiguration found when building the client (bad base URL, bad private key).
    #[error("configuration: {0}")]
    Config(String),
}

impl TrackerError {
    /// Whether trying the same request again later may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            TrackerError::RateLimited { .. } | TrackerError::Transient(_)
        )
    }

    /// A stable name of the kind, for logs, outbox rows and CLI output.
    pub fn kind(&self) -> &'static str {
        match self {
            TrackerError::Unauthorized(_) => "unauthorized",
            TrackerError::Forbidden(_) => "forbidden",
            TrackerError::NotFound(_) => "not_found",
            TrackerError::Validation(_) => "validation",
            TrackerError::RateLimited { .. } => "rate_limited",
            TrackerError::Transient(_) => "transient",
            TrackerError::Protocol(_) => "protocol",
            TrackerError::Config(_) => "config",
        }
    }

    /// The wait the tracker asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            TrackerError::RateLimited { retry_after } => Some(*retry_after),
            _ => None,
        }
    }
}
