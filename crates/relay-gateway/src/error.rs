//! The one place where errors become HTTP responses.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use relay_core::error::cause_chain;
use serde_json::json;

use crate::intake::IntakeError;

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
    Internal(#[source] IntakeError),
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
        ApiError::from(IntakeError::Store(error))
    }
}

impl From<IntakeError> for ApiError {
    fn from(error: IntakeError) -> Self {
        match error {
            IntakeError::Store(error) if error.is_unavailable() => {
                ApiError::Unavailable(Some(error))
            }
            other => ApiError::Internal(other),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match &self {
            ApiError::Unavailable(cause) => {
                let cause = cause
                    .as_ref()
                    .map(|e| cause_chain(e))
                    .unwrap_or_else(|| "timed out".into());
                tracing::warn!(error.message = %self, error.cause_chain = %cause, "answering 503");
            }
            ApiError::Internal(cause) => {
                tracing::error!(error.message = %self, error.cause_chain = %cause_chain(cause), "request failed");
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
