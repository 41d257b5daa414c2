//! The classified LLM error. Every failure is classified once, where it happens (HTTP status and
//! body in [`super::http`], reply checks in [`super::structured`]), into a variant callers can
//! match on; retry and fallback decisions are made from the variant alone.

use std::time::Duration;

use super::budget::BudgetExceeded;

/// An LLM call failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// 429 rate limit (requests or tokens per minute); retried after `retry_after` or backoff.
    #[error("rate limited: {message}")]
    RateLimited {
        /// Delay the provider asked for (`retry-after`, `retry-after-ms` or rate-limit reset headers).
        retry_after: Option<Duration>,
        /// Provider message.
        message: String,
    },
    /// Anthropic 529 `overloaded_error` or OpenAI 503 "slow down"; retried.
    #[error("provider overloaded: {message}")]
    Overloaded {
        /// Delay the provider asked for.
        retry_after: Option<Duration>,
        /// Provider message.
        message: String,
    },
    /// Other 5xx (and 408/409): a transient server failure; retried.
    #[error("server error {status}: {message}")]
    Server {
        /// HTTP status.
        status: u16,
        /// Provider message.
        message: String,
    },
    /// The request timed out; retried.
    #[error("request timed out after {0:?}")]
    Timeout(Duration),
    /// Connection failure (refused, reset, DNS); retried.
    #[error("network error")]
    Network(#[source] reqwest::Error),
    /// 400: the request is malformed; not retried.
    #[error("invalid request (status {status}): {message}")]
    InvalidRequest {
        /// HTTP status.
        status: u16,
        /// Provider message.
        message: String,
    },
    /// 400/422/500/501 naming `response_format`, `json_schema`, tools or a grammar: the server
    /// does not support how structured output was asked; not retried (structured output falls
    /// back to the next mode, see [`super::structured_mode`]).
    #[error("the server does not support this output mode (status {status}): {message}")]
    UnsupportedOutput {
        /// HTTP status.
        status: u16,
        /// Provider message.
        message: String,
    },
    /// The prompt does not fit the model's context window; not retried (trim and call again).
    #[error("context length exceeded: {0}")]
    ContextLengthExceeded(String),
    /// 401: the API key is missing or wrong.
    #[error("authentication failed: {0}")]
    Authentication(String),
    /// 403: the key may not use this model or feature.
    #[error("permission denied: {0}")]
    PermissionDenied(String),
    /// 404: unknown model or endpoint (check `base_url` and `model`).
    #[error("not found: {0}")]
    NotFound(String),
    /// 429 `insufficient_quota` / spend limit reached: retrying cannot help.
    #[error("quota exceeded: {0}")]
    QuotaExceeded(String),
    /// The model refused to answer.
    #[error("the model refused: {0}")]
    Refusal(String),
    /// The reply hit the output token limit and is incomplete.
    #[error("the reply was truncated at the output token limit")]
    Truncated {
        /// What the model produced before it was cut off.
        partial: String,
    },
    /// The reply did not match the requested schema, even after corrective retries.
    #[error("invalid structured output after {attempts} attempts: {}", errors.join("; "))]
    InvalidOutput {
        /// What was wrong with the last reply.
        errors: Vec<String>,
        /// Replies received.
        attempts: u32,
    },
    /// The provider answered with something we cannot parse.
    #[error("unexpected response from provider: {0}")]
    InvalidResponse(String),
    /// The overall per-call deadline passed before a retry could succeed.
    #[error(
        "deadline of {deadline:?} exceeded after {attempts} attempts; last error: {}",
        relay_core::error::cause_chain(last.as_ref())
    )]
    DeadlineExceeded {
        /// The configured deadline.
        deadline: Duration,
        /// HTTP attempts made.
        attempts: u32,
        /// The last error seen.
        last: Box<LlmError>,
    },
    /// The job's token budget is spent.
    #[error(transparent)]
    BudgetExceeded(#[from] BudgetExceeded),
    /// Missing or invalid `[llm]` configuration.
    #[error("invalid llm configuration: {0}")]
    Config(String),
    /// Any other HTTP status.
    #[error("unexpected http status {status}: {message}")]
    Http {
        /// HTTP status.
        status: u16,
        /// Provider message.
        message: String,
    },
}

/// A label for each [`LlmError`] variant, used in metrics and usage rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// [`LlmError::RateLimited`].
    RateLimited,
    /// [`LlmError::Overloaded`].
    Overloaded,
    /// [`LlmError::Server`].
    Server,
    /// [`LlmError::Timeout`].
    Timeout,
    /// [`LlmError::Network`].
    Network,
    /// [`LlmError::InvalidRequest`].
    InvalidRequest,
    /// [`LlmError::UnsupportedOutput`].
    UnsupportedOutput,
    /// [`LlmError::ContextLengthExceeded`].
    ContextLength,
    /// [`LlmError::Authentication`].
    Authentication,
    /// [`LlmError::PermissionDenied`].
    PermissionDenied,
    /// [`LlmError::NotFound`].
    NotFound,
    /// [`LlmError::QuotaExceeded`].
    Quota,
    /// [`LlmError::Refusal`].
    Refusal,
    /// [`LlmError::Truncated`].
    Truncated,
    /// [`LlmError::InvalidOutput`].
    InvalidOutput,
    /// [`LlmError::InvalidResponse`].
    InvalidResponse,
    /// [`LlmError::DeadlineExceeded`].
    Deadline,
    /// [`LlmError::BudgetExceeded`].
    Budget,
    /// [`LlmError::Config`].
    Config,
    /// [`LlmError::Http`].
    Http,
}

impl ErrorKind {
    /// Stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RateLimited => "rate_limited",
            Self::Overloaded => "overloaded",
            Self::Server => "server_error",
            Self::Timeout => "timeout",
            Self::Network => "network",
            Self::InvalidRequest => "invalid_request",
            Self::UnsupportedOutput => "unsupported_output",
            Self::ContextLength => "context_length",
            Self::Authentication => "authentication",
            Self::PermissionDenied => "permission_denied",
            Self::NotFound => "not_found",
            Self::Quota => "quota",
            Self::Refusal => "refusal",
            Self::Truncated => "truncated",
            Self::InvalidOutput => "invalid_output",
            Self::InvalidResponse => "invalid_response",
            Self::Deadline => "deadline",
            Self::Budget => "budget",
            Self::Config => "config",
            Self::Http => "http",
        }
    }
}

impl LlmError {
    /// The variant's label.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::RateLimited { .. } => ErrorKind::RateLimited,
            Self::Overloaded { .. } => ErrorKind::Overloaded,
            Self::Server { .. } => ErrorKind::Server,
            Self::Timeout(_) => ErrorKind::Timeout,
            Self::Network(_) => ErrorKind::Network,
            Self::InvalidRequest { .. } => ErrorKind::InvalidRequest,
            Self::UnsupportedOutput { .. } => ErrorKind::UnsupportedOutput,
            Self::ContextLengthExceeded(_) => ErrorKind::ContextLength,
            Self::Authentication(_) => ErrorKind::Authentication,
            Self::PermissionDenied(_) => ErrorKind::PermissionDenied,
            Self::NotFound(_) => ErrorKind::NotFound,
            Self::QuotaExceeded(_) => ErrorKind::Quota,
            Self::Refusal(_) => ErrorKind::Refusal,
            Self::Truncated { .. } => ErrorKind::Truncated,
            Self::InvalidOutput { .. } => ErrorKind::InvalidOutput,
            Self::InvalidResponse(_) => ErrorKind::InvalidResponse,
            Self::DeadlineExceeded { .. } => ErrorKind::Deadline,
            Self::BudgetExceeded(_) => ErrorKind::Budget,
            Self::Config(_) => ErrorKind::Config,
            Self::Http { .. } => ErrorKind::Http,
        }
    }

    /// Whether the same request may succeed if sent again later.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::RateLimited { .. }
                | Self::Overloaded { .. }
                | Self::Server { .. }
                | Self::Timeout(_)
                | Self::Network(_)
        )
    }

    /// Whether a fallback model should be tried once retries on this model are exhausted.
    pub fn allows_fallback(&self) -> bool {
        match self {
            Self::DeadlineExceeded { last, .. } => last.allows_fallback(),
            other => other.is_retryable(),
        }
    }

    /// The delay the provider asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } | Self::Overloaded { retry_after, .. } => {
                *retry_after
            }
            _ => None,
        }
    }
}
