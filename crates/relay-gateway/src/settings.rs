//! `[server]` settings.

use std::net::SocketAddr;

use serde::Deserialize;

/// `[server]`: the HTTP listener.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    /// Address to listen on for webhooks and ops endpoints.
    #[serde(default = "default_listen")]
    pub listen: SocketAddr,
    /// Largest accepted webhook body in bytes; larger requests get 413.
    #[serde(default = "default_body_limit")]
    pub body_limit_bytes: usize,
    /// How long a webhook may wait on the database before answering 503 (the sender retries).
    #[serde(default = "default_db_timeout_ms")]
    pub db_timeout_ms: u64,
    /// How long a client may take to send a request's head (request line and headers), and how
    /// long an idle keep-alive connection stays open; then the connection is closed (slowloris).
    #[serde(default = "default_header_read_timeout_ms")]
    pub header_read_timeout_ms: u64,
    /// Longest pause between two chunks of a request body before the request fails.
    #[serde(default = "default_body_read_timeout_ms")]
    pub body_read_timeout_ms: u64,
    /// Connections served at once; past it new connections wait in the kernel's backlog.
    #[serde(default = "default_max_connections")]
    pub max_connections: usize,
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            listen: default_listen(),
            body_limit_bytes: default_body_limit(),
            db_timeout_ms: default_db_timeout_ms(),
            header_read_timeout_ms: default_header_read_timeout_ms(),
            body_read_timeout_ms: default_body_read_timeout_ms(),
            max_connections: default_max_connections(),
        }
    }
}

fn default_listen() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8080))
}
fn default_body_limit() -> usize {
    10 * 1024 * 1024
}
fn default_db_timeout_ms() -> u64 {
    2000
}
fn default_header_read_timeout_ms() -> u64 {
    10_000
}
fn default_body_read_timeout_ms() -> u64 {
    30_000
}
fn default_max_connections() -> usize {
    1024
}

impl ServerSettings {
    pub(crate) fn listener_limits(&self) -> crate::listener::ListenerLimits {
        crate::listener::ListenerLimits {
            header_read_timeout: std::time::Duration::from_millis(self.header_read_timeout_ms),
            max_connections: self.max_connections,
        }
    }
}

/// `[api]`: the read API (`/api/...`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiSettings {
    /// Bearer token the read API requires. Without one the whole `/api` answers 404, so an
    /// unconfigured deployment exposes nothing.
    #[serde(default)]
    pub token: Option<secrecy::SecretString>,
}

/// `[ui]`: the status page (`/ui`), served when `[api] token` is set.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UiSettings {
    /// How long a sign-in lasts, in seconds, from the moment of signing in (server-side: the
    /// cookie carries only a random id).
    #[serde(default = "default_session_ttl_secs")]
    pub session_ttl_secs: u64,
    /// Always mark the session cookie `Secure`. Without it the cookie is `Secure` when the request
    /// came through a proxy that says `X-Forwarded-Proto: https`.
    #[serde(default)]
    pub secure_cookie: bool,
    /// Most sessions kept at once; signing in past it ends the oldest one.
    #[serde(default = "default_max_sessions")]
    pub max_sessions: usize,
}

impl Default for UiSettings {
    fn default() -> Self {
        UiSettings {
            session_ttl_secs: default_session_ttl_secs(),
            secure_cookie: false,
            max_sessions: default_max_sessions(),
        }
    }
}

fn default_session_ttl_secs() -> u64 {
    8 * 60 * 60
}
fn default_max_sessions() -> usize {
    10_000
}
