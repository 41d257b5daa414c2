//! The read API (`/api/...`): what Relay knows about issues and jobs, for people and
//! dashboards. Read-only. Every route requires `Authorization: Bearer <[api] token>`; without a
//! configured token the whole API answers 404 (it does not exist), a wrong token gets 401.
//! A `GET` with a status-page session cookie passes too, so the page's live trace can use
//! `EventSource` (which cannot send headers). Wrong bearer tokens count against the client like
//! wrong sign-ins ([`crate::limits::throttle`]).

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
use crate::limits::client::ClientAddr;
use crate::limits::{Refusal, refuse};

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

/// How a request to `/api` was let in (in the request's extensions): an event stream opened with
/// a session ends when the session does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Authenticated {
    Token,
    Session(relay_store::ui_sessions::SessionDigest),
}

async fn require_token(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let Some(expected) = &state.api.token else {
        return (
            StatusCode::NOT_FOUND,
            axum::Json(serde_json::json!({"error": "not found"})),
        )
            .into_response();
    };
    if request.method() == axum::http::Method::GET {
        match crate::ui::session::signed_in(&state, request.headers()).await {
            Ok(Some(session)) => {
                request
                    .extensions_mut()
                    .insert(Authenticated::Session(session));
                return next.run(request).await;
            }
            Ok(None) => {}
            Err(error) => return error.into_response(),
        }
    }
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let Some(given) = given else {
        return ApiError::Unauthorized("missing or wrong api token".into()).into_response();
    };
    // A wrong bearer token is a guess at the sign-in token: the same throttle.
    let client = request.extensions().get::<ClientAddr>().copied();
    let ip = client.map(|c| c.ip);
    let shown = client.map_or_else(|| "unknown".to_owned(), |c| c.to_string());
    if !state.throttle.allows(ip) {
        tracing::warn!(client = %shown, "api token refused: too many failed attempts");
        return refuse(Refusal::SigninThrottled);
    }
    if !token_matches(given, expected.expose_secret()) {
        state.throttle.failed(ip);
        tracing::warn!(client = %shown, "api token refused: wrong token");
        return ApiError::Unauthorized("missing or wrong api token".into()).into_response();
    }
    state.throttle.succeeded(ip);
    request.extensions_mut().insert(Authenticated::Token);
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
