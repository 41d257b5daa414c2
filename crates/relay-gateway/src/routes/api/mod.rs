//! The read API (`/api/...`): what Relay knows about issues and jobs, for people and
//! dashboards. Read-only. Every route requires `Authorization: Bearer <[api] token>`; without a
//! configured token the whole API answers 404 (it does not exist), a wrong token gets 401.
//! A `GET` with a status-page session cookie passes too, so the page's live trace can use
//! `EventSource` (which cannot send headers).

pub mod events;
pub mod issue;
pub mod issues;
pub mod job;
pub mod projects;

use std::future::Future;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use secrecy::ExposeSecret;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::AppState;
use crate::error::ApiError;

/// The `/api` routes, behind the token check.
pub fn router(state: &AppState) -> Router<AppState> {
    Router::new()
        .route("/api/issues", get(issues::list))
        .route("/api/issues/{id}", get(issue::show))
        .route("/api/jobs/{id}", get(job::show))
        .route("/api/projects", get(projects::list))
        .route("/api/projects/{tracker}/{project_id}", get(projects::show))
        .route("/api/jobs/{id}/events", get(events::stream))
        .route_layer(middleware::from_fn_with_state(state.clone(), require_token))
}

async fn require_token(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let Some(expected) = &state.api.token else {
        return (
            StatusCode::NOT_FOUND,
            axum::Json(serde_json::json!({"error": "not found"})),
        )
            .into_response();
    };
    if request.method() == axum::http::Method::GET
        && crate::ui::session::signed_in(&state, request.headers())
    {
        return next.run(request).await;
    }
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if !token_matches(given, expected.expose_secret()) {
        return ApiError::Unauthorized("missing or wrong api token".into()).into_response();
    }
    next.run(request).await
}

/// Constant-time comparison of digests: neither the content nor the length of the configured
/// token leaks through timing.
pub(crate) fn token_matches(given: &str, expected: &str) -> bool {
    let given = Sha256::digest(given.as_bytes());
    let expected = Sha256::digest(expected.as_bytes());
    given.ct_eq(&expected).into()
}

/// Runs a handler's database work under the request's database timeout.
pub(crate) async fn with_timeout<T>(
    state: &AppState,
    work: impl Future<Output = Result<T, ApiError>>,
) -> Result<T, ApiError> {
    tokio::time::timeout(state.db_timeout(), work)
        .await
        .unwrap_or(Err(ApiError::Unavailable(None)))
}

/// 404 with a JSON body.
pub(crate) fn not_found(what: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(serde_json::json!({ "error": format!("{what} not found") })),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    #[test]
    fn tokens_compare_exactly() {
        assert!(super::token_matches("s3cret", "s3cret"));
        assert!(!super::token_matches("s3cre", "s3cret"));
        assert!(!super::token_matches("", "s3cret"));
    }
}
