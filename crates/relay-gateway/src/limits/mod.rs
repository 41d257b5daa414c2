//! What keeps slow or greedy clients from starving the gateway or its memory.
//!
//! - [`client`]: who the client is (the TCP peer, or a trusted proxy's `X-Forwarded-For`) and
//!   the per-client cap on connections (in the listener) and on proxied requests ([`admit`]).
//! - [`deadline`]: one total deadline per request, body included (`[server] request_deadline_ms`).
//! - [`budget`]: bodies are copied into one buffer per request, charged against a process-wide
//!   byte budget (`[server] body_budget_bytes`), within the route's body limit.
//! - [`throttle`]: failed sign-ins per client (and, in its own count, wrong `X-Gitlab-Token`s).
//!
//! Every refusal closes the connection, is counted in `relay_http_refused_total{reason}` and is
//! logged at debug with the client.

pub mod budget;
pub mod client;
pub mod deadline;
pub mod throttle;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use relay_telemetry::metrics::HTTP_REFUSED_TOTAL;

use crate::AppState;
use client::{ClientAddr, PeerAddr};

/// Why a request or connection was refused (the metric's `reason` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `[server] max_connections` connections are open.
    Connections,
    /// The client holds `[server] max_connections_per_client` connections or requests.
    ClientConnections,
    /// The request was not answered within `[server] request_deadline_ms`.
    Deadline,
    /// The body is larger than the route allows.
    BodyLimit,
    /// The body budget is spent by requests in flight.
    BodyBudget,
    /// The body could not be read (the client went away, or stalled between frames).
    BodyFailed,
    /// Too many failed sign-ins from this client.
    SigninThrottled,
    /// Too many wrong webhook secrets (`X-Gitlab-Token`) from this client.
    WebhookThrottled,
}

impl Refusal {
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::Connections => "connections",
            Refusal::ClientConnections => "client_connections",
            Refusal::Deadline => "deadline",
            Refusal::BodyLimit => "body_limit",
            Refusal::BodyBudget => "body_budget",
            Refusal::BodyFailed => "body_failed",
            Refusal::SigninThrottled => "signin_throttled",
            Refusal::WebhookThrottled => "webhook_throttled",
        }
    }

    fn status(self) -> StatusCode {
        match self {
            Refusal::Connections | Refusal::BodyBudget => StatusCode::SERVICE_UNAVAILABLE,
            Refusal::ClientConnections | Refusal::SigninThrottled | Refusal::WebhookThrottled => {
                StatusCode::TOO_MANY_REQUESTS
            }
            Refusal::Deadline => StatusCode::REQUEST_TIMEOUT,
            Refusal::BodyLimit => StatusCode::PAYLOAD_TOO_LARGE,
            Refusal::BodyFailed => StatusCode::BAD_REQUEST,
        }
    }

    fn message(self) -> &'static str {
        match self {
            Refusal::Connections => "too many connections; retry later",
            Refusal::ClientConnections => "too many connections from this client; retry later",
            Refusal::Deadline => "the request took too long",
            Refusal::BodyLimit => "the body is too large",
            Refusal::BodyBudget => "too many bodies in flight; retry later",
            Refusal::BodyFailed => "the body could not be read",
            Refusal::SigninThrottled => "too many failed sign-ins; retry later",
            Refusal::WebhookThrottled => "too many wrong webhook secrets; retry later",
        }
    }

    /// Counts the refusal.
    pub fn count(self) {
        metrics::counter!(HTTP_REFUSED_TOTAL, "reason" => self.as_str()).increment(1);
    }

    /// The raw HTTP/1.1 answer the listener writes before it drops a connection it does not serve.
    pub(crate) fn raw_response(self) -> Vec<u8> {
        let status = self.status();
        let message = self.message();
        format!(
            "HTTP/1.1 {} {}\r\nconnection: close\r\ncontent-type: text/plain\r\nretry-after: 1\r\ncontent-length: {}\r\n\r\n{message}",
            status.as_u16(),
            status.canonical_reason().unwrap_or(""),
            message.len()
        )
        .into_bytes()
    }
}

/// The refusal as a response that closes the connection (the rest of a body is never read).
pub fn refuse(refusal: Refusal) -> Response {
    refusal.count();
    let mut response = (
        refusal.status(),
        axum::Json(serde_json::json!({ "error": refusal.message() })),
    )
        .into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    if matches!(
        refusal.status(),
        StatusCode::SERVICE_UNAVAILABLE | StatusCode::TOO_MANY_REQUESTS
    ) {
        headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    response
}

/// Attributes the request to its client ([`ClientAddr`] in the extensions) and, for requests
/// that came through a trusted proxy, holds one of the client's slots while it is answered (the
/// listener caps connections per peer, and behind a proxy every client is the proxy's peer).
pub async fn admit(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let Some(PeerAddr(peer)) = request.extensions().get::<PeerAddr>().copied() else {
        // Not from a listener (a test calling the router): nothing to attribute.
        return next.run(request).await;
    };
    let client: ClientAddr = state
        .settings
        .trusted_proxies
        .client(peer.ip(), request.headers());
    if !client.forwarded
        && client::names_a_forwarded_client(request.headers())
        && !state.settings.trusted_proxies.contains(peer.ip())
    {
        warn_untrusted_proxy_once(peer.ip());
    }
    request.extensions_mut().insert(client);
    if !client.forwarded {
        return next.run(request).await;
    }
    let Some(_slot) = state.clients.admit(client.ip) else {
        tracing::debug!(client = %client, "request refused: the client holds its cap");
        return refuse(Refusal::ClientConnections);
    };
    next.run(request).await
}

/// Warns, once per process, that a peer not in `trusted_proxies` forwards requests for others:
/// all of its clients count as one (the start-up warning says what that costs).
fn warn_untrusted_proxy_once(peer: std::net::IpAddr) {
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        tracing::warn!(
            peer = %peer,
            "a request came with X-Forwarded-For or Forwarded from a peer that is not in [server] \
             trusted_proxies: its clients all count as that one address (per-client cap, sign-in \
             throttle, logs); if it is your reverse proxy, list it there"
        );
    }
}
