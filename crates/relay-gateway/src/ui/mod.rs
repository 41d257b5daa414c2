//! The status page (`/ui`): what Relay did on each issue, why, and what it cost, as
//! server-rendered HTML. Read-only: the only forms are sign-in and sign-out.
//!
//! Invariants:
//! - Every text that came from a tracker, a model or the database is escaped by the template
//!   engine (maud escapes every `(value)`); the only pre-escaped HTML is [`markdown::render`]'s,
//!   which turns raw HTML into text and drops unsafe link targets.
//! - Every `/ui` response carries [`CONTENT_SECURITY_POLICY`]: scripts and styles only from the
//!   embedded assets, no inline script, no frames, forms post only here.
//! - Without `[api] token` the whole `/ui` answers 404, like `/api`.

pub mod chart;
pub mod format;
pub mod issue;
pub mod issues;
pub mod job;
pub mod layout;
pub mod markdown;
pub mod ops;
pub mod projects;
pub mod session;
pub mod signin;

use axum::Router;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::AppState;
use crate::limits::budget::{BodyLimit, buffer_body};
use crate::settings::UiSettings;

/// The policy every `/ui` response carries.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; \
     frame-ancestors 'none'; base-uri 'none'";

const STYLE: &str = include_str!("assets/style.css");
const LIVE_SCRIPT: &str = include_str!("assets/live.js");

/// The status page's process-wide state.
pub struct UiState {
    pub settings: UiSettings,
    pub sessions: session::Sessions,
}

impl UiState {
    pub fn new(settings: UiSettings) -> UiState {
        let sessions = session::Sessions::new(
            std::time::Duration::from_secs(settings.session_ttl_secs),
            settings.max_sessions,
        );
        UiState { settings, sessions }
    }
}

/// The `/ui` routes.
pub fn router(state: &AppState) -> Router<AppState> {
    Router::new()
        .route("/ui", get(issues::index))
        .route(
            "/ui/login",
            post(signin::login).layer(middleware::from_fn_with_state(
                BodyLimit {
                    budget: state.budget.clone(),
                    limit: signin::FORM_BODY_LIMIT,
                },
                buffer_body,
            )),
        )
        .route("/ui/logout", post(signin::logout))
        .route("/ui/logout/everywhere", post(signin::logout_everywhere))
        .route("/ui/ops", get(ops::show))
        .route("/ui/projects", get(projects::index))
        .route("/ui/projects/{tracker}/{project_id}", get(projects::show))
        .route("/ui/issues/{id}", get(issue::show))
        .route("/ui/jobs/{id}", get(job::show))
        .route("/ui/assets/{name}", get(asset))
        .route_layer(middleware::from_fn_with_state(state.clone(), guard))
}

/// 404 without a token; the security headers on every answer.
async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let mut response = if state.api.token.is_none() {
        (StatusCode::NOT_FOUND, "not found").into_response()
    } else {
        next.run(request).await
    };
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "same-origin"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// The embedded stylesheet and script.
async fn asset(Path(name): Path<String>) -> Response {
    let (body, content_type) = match name.as_str() {
        "style.css" => (STYLE, "text/css; charset=utf-8"),
        "live.js" => (LIVE_SCRIPT, "text/javascript; charset=utf-8"),
        _ => return (StatusCode::NOT_FOUND, "not found").into_response(),
    };
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "private, max-age=300"),
        ],
        body,
    )
        .into_response()
}

/// A rendered page as a response.
pub(crate) fn html(status: StatusCode, markup: maud::Markup) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        )],
        markup.into_string(),
    )
        .into_response()
}

/// Where to send a visitor without a session.
pub(crate) fn to_sign_in() -> Response {
    (
        StatusCode::SEE_OTHER,
        [(header::LOCATION, HeaderValue::from_static("/ui"))],
    )
        .into_response()
}

/// A page saying what was not found.
pub(crate) fn not_found(message: &str) -> Response {
    let body = maud::html! {
        h1 { "Not found" }
        p { (message) " " a href="/ui" { "Back to the issues" } }
    };
    html(
        StatusCode::NOT_FOUND,
        layout::page("Not found", layout::Nav::Detail, body),
    )
}
