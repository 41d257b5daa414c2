//! The one place where errors become HTTP responses.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// Errors a handler can answer with. 4xx carry a useful message; 5xx are generic and the cause is
/// logged once, here.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("unknown tracker")]
    UnknownTracker,
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    BadRequest(String),
    /// The database is down or too slow; the sender should retry.
    #[error("temporarily unavailable")]
    Unavailable(#[source] Option<relay_store::Error>),
    #[error("internal error")]
    Internal(#[source] relay_store::Error),
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::UnknownTracker => StatusCode::NOT_FOUND,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl From<relay_store::Error> for ApiError {
    fn from(error: relay_store::Error) -> Self {
        if error.is_unavailable() {
            ApiError::Unavailable(Some(error))
        } else {
            ApiError::Internal(error)
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match &self {
            ApiError::Unavailable(cause) => {
                let cause = cause
                    .as_ref()
                    .map(|e| error_chain(e))
                    .unwrap_or_else(|| "timed out".into());
                tracing::warn!(error.message = %self, error.cause_chain = %cause, "answering 503");
            }
            ApiError::Internal(cause) => {
                tracing::error!(error.message = %self, error.cause_chain = %error_chain(cause), "request failed");
            }
            _ => {}
        }
        let status = self.status();
        let mut response = (status, Json(json!({ "error": self.to_string() }))).into_response();
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        }
        response
    }
}

/// `error: cause: cause` on one line.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        source = cause.source();
    }
    out
}
