//! `[codegraph]` settings: which store backend to use and how to reach ArangoDB.
//!
//! ```toml
//! [codegraph]
//! backend = "postgres"            # "memory" | "postgres" | "arangodb" | "auto"
//!
//! [codegraph.arangodb]
//! url = "http://127.0.0.1:8529"
//! database = "relay"
//! username = "root"
//! password = "..."                # or RELAY__CODEGRAPH__ARANGODB__PASSWORD
//! ```

use std::fmt;

use secrecy::SecretString;
use serde::{Deserialize, Serialize};

/// The `[codegraph]` section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodegraphSettings {
    /// Where graphs are stored. Default: `memory` (nothing persists across processes; the service
    /// normally sets `postgres`).
    #[serde(default)]
    pub backend: StoreBackend,
    /// Connection settings for `backend = "arangodb"` (ignored otherwise).
    #[serde(default)]
    pub arangodb: ArangoSettings,
    /// How a service process keeps its store connected ([`super::supervised`]).
    #[serde(default)]
    pub reconnect: ReconnectSettings,
    /// What one index may read and hold while parsing.
    #[serde(default)]
    pub index: IndexLimits,
}

/// `[codegraph.index]`: the limits of parsing a repository. A file over `max_file_bytes` is not
/// parsed (counted as skipped `too_large`); the parses in flight share a budget of
/// `parse_memory_mb`, whatever the number of cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexLimits {
    /// Largest source file parsed, in bytes. Default: 4 MiB.
    #[serde(default = "default_max_file_bytes")]
    pub max_file_bytes: u64,
    /// Memory budget of the parses in flight, in MiB (`0`: none). Default: 512.
    #[serde(default = "default_parse_memory_mb")]
    pub parse_memory_mb: u64,
}

fn default_max_file_bytes() -> u64 {
    crate::index::DEFAULT_MAX_FILE_BYTES
}
fn default_parse_memory_mb() -> u64 {
    crate::index::DEFAULT_PARSE_MEMORY_BYTES / (1024 * 1024)
}

impl Default for IndexLimits {
    fn default() -> Self {
        IndexLimits {
            max_file_bytes: default_max_file_bytes(),
            parse_memory_mb: default_parse_memory_mb(),
        }
    }
}

impl IndexLimits {
    /// Index options with these limits (the rest default).
    pub fn options(&self) -> crate::index::IndexOptions {
        crate::index::IndexOptions {
            max_file_bytes: self.max_file_bytes,
            parse_memory_bytes: self.parse_memory_mb.saturating_mul(1024 * 1024),
            ..crate::index::IndexOptions::default()
        }
    }
}

/// `[codegraph.reconnect]`: a service process never gives up on its graph store. It connects
/// with exponential backoff (from `initial_ms`, doubling, capped at `max_secs`), probes the store
/// every `probe_secs` while connected, and reconnects the same way once a probe or a query finds
/// it gone.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReconnectSettings {
    /// First wait after a failed connection attempt, in milliseconds. Default: 500.
    #[serde(default = "default_initial_ms")]
    pub initial_ms: u64,
    /// Longest wait between two attempts, in seconds. Default: 30.
    #[serde(default = "default_max_secs")]
    pub max_secs: u64,
    /// Seconds between two probes of a connected store. Default: 15.
    #[serde(default = "default_probe_secs")]
    pub probe_secs: u64,
}

fn default_initial_ms() -> u64 {
    500
}
fn default_max_secs() -> u64 {
    30
}
fn default_probe_secs() -> u64 {
    15
}

impl Default for ReconnectSettings {
    fn default() -> Self {
        ReconnectSettings {
            initial_ms: default_initial_ms(),
            max_secs: default_max_secs(),
            probe_secs: default_probe_secs(),
        }
    }
}

/// A graph store backend.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreBackend {
    /// In-process memory ([`super::memory::MemoryStore`]).
    #[default]
    Memory,
    /// The service's Postgres database ([`super::postgres::PostgresStore`], migration `0003_codegraph.sql`).
    Postgres,
    /// An ArangoDB server ([`super::arangodb::ArangoStore`]).
    Arangodb,
    /// ArangoDB when the host of `[codegraph.arangodb] url` resolves, else PostgreSQL
    /// ([`StoreBackend::resolve`]): one configuration for hosts with and without an ArangoDB
    /// server. Relay's compose file does not use it: it runs ArangoDB with Relay and sets
    /// `arangodb`.
    Auto,
}

impl StoreBackend {
    /// The backend to open: `Auto` becomes `Arangodb` when `arangodb`'s host name resolves (a
    /// resolvable but unreachable server then degrades like any unreachable store: no silent
    /// switch back to PostgreSQL), `Postgres` otherwise; the others are themselves.
    pub async fn resolve(self, arangodb: &ArangoSettings) -> StoreBackend {
        if self != StoreBackend::Auto {
            return self;
        }
        match host_and_port(&arangodb.url) {
            Some(address) if tokio::net::lookup_host(address.as_str()).await.is_ok() => {
                StoreBackend::Arangodb
            }
            _ => StoreBackend::Postgres,
        }
    }
}

/// `host:port` of an `http(s)://[user:pass@]host[:port][/path]` URL (port defaulted by scheme).
fn host_and_port(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split('/').next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    if authority.is_empty() {
        return None;
    }
    let has_port = authority
        .rsplit_once(':')
        .is_some_and(|(_, port)| port.parse::<u16>().is_ok());
    Some(if has_port {
        authority.to_owned()
    } else {
        let port = if scheme == "https" { 443 } else { 80 };
        format!("{authority}:{port}")
    })
}

/// The `[codegraph.arangodb]` section.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArangoSettings {
    /// Base URL of the server, without a path (arangors joins API paths at the root).
    /// Default: `http://127.0.0.1:8529`.
    #[serde(default = "default_url")]
    pub url: String,
    /// Database holding the codegraph collections; it must exist. Default: `relay`.
    #[serde(default = "default_database")]
    pub database: String,
    /// User for HTTP basic authentication. Default: `root`.
    #[serde(default = "default_username")]
    pub username: String,
    /// Password for HTTP basic authentication. Default: empty. Never logged.
    #[serde(default = "empty_secret")]
    pub password: SecretString,
}

fn default_url() -> String {
    "http://127.0.0.1:8529".to_owned()
}

fn default_database() -> String {
    "relay".to_owned()
}

fn default_username() -> String {
    "root".to_owned()
}

fn empty_secret() -> SecretString {
    SecretString::from(String::new())
}

impl Default for ArangoSettings {
    fn default() -> Self {
        ArangoSettings {
            url: default_url(),
            database: default_database(),
            username: default_username(),
            password: empty_secret(),
        }
    }
}

impl ArangoSettings {
    /// Refuses a URL that carries credentials (`http://user:password@host`): they belong in
    /// `username` and `password`, which only the `Authorization` header carries. A password in
    /// the URL would reach every error the HTTP client prints (the request's URL is part of its
    /// text), and from there the log and `/readyz`.
    pub fn validate(&self) -> Result<(), String> {
        if url_userinfo(&self.url).is_some() {
            return Err(format!(
                "must not carry credentials ({}): set [codegraph.arangodb] username and password instead",
                relay_core::secrets::redact_url(&self.url)
            ));
        }
        Ok(())
    }
}

/// The `user[:password]` part of an `scheme://user:password@host/...` URL, if any.
pub(crate) fn url_userinfo(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    rest[..authority_end]
        .rsplit_once('@')
        .map(|(userinfo, _)| userinfo)
}

impl fmt::Debug for ArangoSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArangoSettings")
            .field("url", &relay_core::secrets::redact_url(&self.url))
            .field("database", &self.database)
            .field("username", &self.username)
            .field("password", &"[REDACTED]")
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::ExposeSecret;

    #[test]
    fn defaults_and_parsing() {
        let s: CodegraphSettings = toml_like(
            r#"{"backend":"arangodb","arangodb":{"password":"hunter2","url":"http://u:p@db:8529"}}"#,
        );
        assert_eq!(s.backend, StoreBackend::Arangodb);
        assert_eq!(s.arangodb.database, "relay");
        assert_eq!(s.arangodb.username, "root");
        assert_eq!(s.arangodb.password.expose_secret(), "hunter2");
        let debug = format!("{s:?}");
        assert!(!debug.contains("hunter2"), "{debug}");
        assert!(!debug.contains("u:p"), "{debug}");
        assert!(debug.contains("http://u:[REDACTED]@db:8529"), "{debug}");

        // The one redaction of a URL: credential query parameters are hidden too.
        let s: CodegraphSettings =
            toml_like(r#"{"arangodb":{"url":"http://db:8529/?token=t0ken-in-query&x=1"}}"#);
        let debug = format!("{s:?}");
        assert!(!debug.contains("t0ken-in-query"), "{debug}");
        assert!(
            debug.contains("http://db:8529/?token=[REDACTED]&x=1"),
            "{debug}"
        );

        let s: CodegraphSettings = toml_like("{}");
        assert_eq!(s.backend, StoreBackend::Memory);
        assert_eq!(s.index, IndexLimits::default());
        assert_eq!(s.index.options().max_file_bytes, 4 * 1024 * 1024);
        assert_eq!(s.index.options().parse_memory_bytes, 512 * 1024 * 1024);
        let s: CodegraphSettings =
            toml_like(r#"{"index":{"max_file_bytes":1000,"parse_memory_mb":64}}"#);
        assert_eq!(s.index.options().max_file_bytes, 1000);
        assert_eq!(s.index.options().parse_memory_bytes, 64 * 1024 * 1024);
        assert!(serde_json::from_str::<CodegraphSettings>(r#"{"index":{"max":1}}"#).is_err());
        assert_eq!(s.arangodb.url, "http://127.0.0.1:8529");
        assert!(serde_json::from_str::<CodegraphSettings>(r#"{"backend":"neo4j"}"#).is_err());
    }

    #[tokio::test]
    async fn auto_is_arangodb_only_when_its_host_resolves() {
        let at = |url: &str| ArangoSettings {
            url: url.to_owned(),
            ..ArangoSettings::default()
        };
        assert_eq!(
            StoreBackend::Auto
                .resolve(&at("http://127.0.0.1:8529"))
                .await,
            StoreBackend::Arangodb
        );
        assert_eq!(
            StoreBackend::Auto
                .resolve(&at("http://u:p@localhost"))
                .await,
            StoreBackend::Arangodb
        );
        // `.invalid` never resolves (RFC 6761): the compose profile is off.
        assert_eq!(
            StoreBackend::Auto
                .resolve(&at("http://arangodb.invalid:8529"))
                .await,
            StoreBackend::Postgres
        );
        assert_eq!(
            StoreBackend::Auto.resolve(&at("not a url")).await,
            StoreBackend::Postgres
        );
        // Explicit backends are never second-guessed.
        assert_eq!(
            StoreBackend::Memory
                .resolve(&at("http://127.0.0.1:8529"))
                .await,
            StoreBackend::Memory
        );
        assert_eq!(host_and_port("https://db/x").as_deref(), Some("db:443"));
    }

    #[test]
    fn a_url_with_credentials_is_refused_without_echoing_them() {
        let at = |url: &str| ArangoSettings {
            url: url.to_owned(),
            ..ArangoSettings::default()
        };
        let error = at("http://root:Arango-Pw-7731@127.0.0.1:1")
            .validate()
            .unwrap_err();
        assert!(!error.contains("Arango-Pw-7731"), "{error}");
        assert!(error.contains("username and password"), "{error}");
        assert!(at("http://root@db:8529").validate().is_err());
        assert!(at("http://db:8529").validate().is_ok());
        // An `@` after the authority is not userinfo.
        assert!(at("http://db:8529/x@y").validate().is_ok());
    }

    fn toml_like(json: &str) -> CodegraphSettings {
        serde_json::from_str(json).expect("settings parse")
    }
}
