//! `[server]` settings.

use std::net::SocketAddr;
use std::time::Duration;

use serde::Deserialize;

pub use crate::limits::client::TrustedProxies;

/// The shortest `[api] token` accepted: 32 characters (`openssl rand -hex 32` gives 64).
pub const MIN_TOKEN_CHARS: usize = 32;

/// `[server]`: the HTTP listeners and what bounds the clients they serve.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    /// Address to listen on for webhooks (and, without `admin_listen`, everything else).
    #[serde(default = "default_listen")]
    pub listen: SocketAddr,
    /// A second address for the status page (`/ui`), the read API (`/api`) and `/metrics` and
    /// `/readyz`; `listen` then serves only webhooks and `/healthz`. Keep it off the public
    /// network. The shipped configuration sets `127.0.0.1:9090`; `"off"` (or `""`) serves
    /// everything on `listen`.
    #[serde(default, deserialize_with = "admin_address")]
    pub admin_listen: Option<SocketAddr>,
    /// Largest accepted webhook body in bytes; larger requests get 413 (see README "Limits").
    #[serde(default = "default_body_limit")]
    pub body_limit_bytes: usize,
    /// Bytes of request bodies buffered at once across every request in flight (charged as the
    /// memory really held); past it a body is refused with 503.
    #[serde(default = "default_body_budget")]
    pub body_budget_bytes: usize,
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
    /// Total time a request may take from its head to its answer, body included; then 408.
    #[serde(default = "default_request_deadline_ms")]
    pub request_deadline_ms: u64,
    /// Connections served at once per listener; past it a new connection is answered 503 and
    /// closed (the accept loop never waits).
    #[serde(default = "default_max_connections")]
    pub max_connections: usize,
    /// Connections one client address may hold at once (and requests in flight, for clients
    /// behind a trusted proxy); past it 429. Never more than a quarter of `max_connections`.
    #[serde(default = "default_max_connections_per_client")]
    pub max_connections_per_client: usize,
    /// Reverse proxies (addresses or CIDR networks) whose `X-Forwarded-For` names the client.
    #[serde(default)]
    pub trusted_proxies: TrustedProxies,
    /// On SIGTERM: how long open requests and streams may take to finish before their
    /// connections are closed.
    #[serde(default = "default_shutdown_grace_secs")]
    pub shutdown_grace_secs: u64,
    /// Removed with intake's group commit (it measured slower than one transaction per
    /// delivery): still accepted so that an older configuration starts, and ignored; the binary
    /// warns once ([`ServerSettings::removed_keys`]).
    #[serde(default)]
    pub intake_batch_window_us: Option<Removed>,
    /// Removed with `intake_batch_window_us`.
    #[serde(default)]
    pub intake_batch_max: Option<Removed>,
}

/// `admin_listen`: an address, or `"off"` / `""` for none (a later configuration layer can
/// turn off what an earlier one set; TOML has no null).
fn admin_address<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<SocketAddr>, D::Error> {
    let text = Option::<String>::deserialize(deserializer)?.unwrap_or_default();
    let text = text.trim();
    if text.is_empty() || text.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    text.parse().map(Some).map_err(|_| {
        serde::de::Error::custom(format!("{text:?} is not an address (host:port) or \"off\""))
    })
}

/// A configuration key that was removed: any value is accepted and ignored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Removed;

impl<'de> Deserialize<'de> for Removed {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(deserializer).map(|_| Removed)
    }
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            listen: default_listen(),
            admin_listen: None,
            body_limit_bytes: default_body_limit(),
            body_budget_bytes: default_body_budget(),
            db_timeout_ms: default_db_timeout_ms(),
            header_read_timeout_ms: default_header_read_timeout_ms(),
            body_read_timeout_ms: default_body_read_timeout_ms(),
            request_deadline_ms: default_request_deadline_ms(),
            max_connections: default_max_connections(),
            max_connections_per_client: default_max_connections_per_client(),
            trusted_proxies: TrustedProxies::default(),
            shutdown_grace_secs: default_shutdown_grace_secs(),
            intake_batch_window_us: None,
            intake_batch_max: None,
        }
    }
}

fn default_listen() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8080))
}
/// 1 MiB: the largest recorded delivery is 16 KB, and a GitHub issue or comment delivery at
/// GitHub's own text limits (65,536 characters per body; an edit carries the old body too) stays
/// under 800 KiB even in 4-byte characters (README "Limits").
fn default_body_limit() -> usize {
    1024 * 1024
}
fn default_body_budget() -> usize {
    64 * 1024 * 1024
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
/// GitHub and GitLab.com give up on a delivery after 10 s: an answer later than that helps no one.
fn default_request_deadline_ms() -> u64 {
    10_000
}
fn default_max_connections() -> usize {
    1024
}
fn default_max_connections_per_client() -> usize {
    32
}
fn default_shutdown_grace_secs() -> u64 {
    10
}

/// One client never holds more than this share of `max_connections` (one part in this many),
/// whatever `max_connections_per_client` says: a single address must not fill the listener.
const CLIENT_SHARE_PARTS: usize = 4;

impl ServerSettings {
    /// The removed keys this configuration still sets (`[server] intake_batch_window_us` and
    /// `intake_batch_max`, group commit's): ignored, named so that the binary can warn.
    pub fn removed_keys(&self) -> Vec<&'static str> {
        [
            ("intake_batch_window_us", self.intake_batch_window_us),
            ("intake_batch_max", self.intake_batch_max),
        ]
        .into_iter()
        .filter_map(|(key, set)| set.map(|_| key))
        .collect()
    }

    pub(crate) fn request_deadline(&self) -> Duration {
        Duration::from_millis(self.request_deadline_ms)
    }

    /// The per-client cap in force: `max_connections_per_client`, but at most a quarter of
    /// `max_connections` (and at least one).
    pub fn client_cap(&self) -> usize {
        self.max_connections_per_client
            .min(self.max_connections / CLIENT_SHARE_PARTS)
            .max(1)
    }
}

/// `[api]`: the read API (`/api/...`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiSettings {
    /// Bearer token the read API requires. Without one the whole `/api` answers 404, so an
    /// unconfigured deployment exposes nothing. At least [`MIN_TOKEN_CHARS`] characters.
    #[serde(default)]
    pub token: Option<secrecy::SecretString>,
}

impl ApiSettings {
    /// Refuses a token too short to resist guessing (the message names the rule, never the
    /// token).
    pub fn validate(&self) -> Result<(), String> {
        use secrecy::ExposeSecret as _;
        match &self.token {
            Some(token) if token.expose_secret().chars().count() < MIN_TOKEN_CHARS => Err(format!(
                "the token must be at least {MIN_TOKEN_CHARS} characters (e.g. `openssl rand -hex 32`)"
            )),
            _ => Ok(()),
        }
    }
}

/// `[ui]`: the status page (`/ui`), served when `[api] token` is set.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UiSettings {
    /// How long a sign-in lasts, in seconds, from the moment of signing in (kept in the
    /// database: the cookie carries only a random id).
    #[serde(default = "default_session_ttl_secs")]
    pub session_ttl_secs: u64,
    /// Always mark the session cookie `Secure`. Without it the cookie is `Secure` when the page
    /// was served over https: the browser's `Origin` says so, or a proxy's `X-Forwarded-Proto` or
    /// `Forwarded: proto=https` does.
    #[serde(default)]
    pub secure_cookie: bool,
    /// Most sessions kept at once; signing in past it ends the oldest one.
    #[serde(default = "default_max_sessions")]
    pub max_sessions: usize,
    /// Wrong tokens one client may send (sign-in form or `/api` bearer) within
    /// `signin_failure_window_secs` before its attempts are refused with 429.
    #[serde(default = "default_signin_max_failures")]
    pub signin_max_failures: u32,
    /// The window of `signin_max_failures`, in seconds, from the client's first failure.
    #[serde(default = "default_signin_failure_window_secs")]
    pub signin_failure_window_secs: u64,
}

impl Default for UiSettings {
    fn default() -> Self {
        UiSettings {
            session_ttl_secs: default_session_ttl_secs(),
            secure_cookie: false,
            max_sessions: default_max_sessions(),
            signin_max_failures: default_signin_max_failures(),
            signin_failure_window_secs: default_signin_failure_window_secs(),
        }
    }
}

fn default_session_ttl_secs() -> u64 {
    8 * 60 * 60
}
fn default_max_sessions() -> usize {
    10_000
}
fn default_signin_max_failures() -> u32 {
    10
}
fn default_signin_failure_window_secs() -> u64 {
    300
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GitHub refuses an issue or comment body longer than this many characters.
    const GITHUB_BODY_CHARS: usize = 65_536;
    /// Bytes of the widest UTF-8 character.
    const UTF8_MAX_BYTES: usize = 4;

    /// The default webhook body limit is sized to real deliveries: every recorded one fits with
    /// room for GitHub's own text limits at their widest (an edited comment carries the issue's
    /// body, the comment's and its previous version).
    #[test]
    fn the_default_body_limit_fits_real_deliveries_at_the_trackers_text_limits() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/webhooks");
        let mut largest = 0;
        for provider in ["github", "gitlab"] {
            for entry in std::fs::read_dir(format!("{dir}/{provider}")).unwrap() {
                let size = entry.unwrap().metadata().unwrap().len() as usize;
                largest = largest.max(size);
            }
        }
        assert!(largest > 0, "no recorded deliveries found in {dir}");
        let widest_github = largest + 3 * GITHUB_BODY_CHARS * UTF8_MAX_BYTES;
        let limit = ServerSettings::default().body_limit_bytes;
        assert!(
            widest_github <= limit,
            "largest recorded delivery {largest} B, widest GitHub delivery {widest_github} B, limit {limit} B"
        );
        // And not far beyond it: the limit is what one slow client can make the gateway hold.
        assert!(limit <= 2 * widest_github);
    }

    #[test]
    fn one_client_never_holds_more_than_a_quarter_of_the_connections() {
        let cap = |max_connections, per_client| {
            ServerSettings {
                max_connections,
                max_connections_per_client: per_client,
                ..ServerSettings::default()
            }
            .client_cap()
        };
        assert_eq!(cap(1024, 32), 32);
        assert_eq!(cap(8, 32), 2);
        assert_eq!(cap(2, 32), 1);
        assert_eq!(cap(1024, 0), 1);
    }

    /// Group commit was removed; a configuration that still sets its keys starts, and they are
    /// named for the warning.
    #[test]
    fn the_removed_group_commit_keys_are_accepted_and_named() {
        let settings: ServerSettings = serde_json::from_value(serde_json::json!({
            "intake_batch_window_us": 1000,
            "intake_batch_max": 32,
        }))
        .unwrap();
        assert_eq!(
            settings.removed_keys(),
            ["intake_batch_window_us", "intake_batch_max"]
        );
        let settings: ServerSettings = serde_json::from_value(serde_json::json!({})).unwrap();
        assert!(settings.removed_keys().is_empty());
    }
}
