//! `[codegraph]` settings: which store backend to use and how to reach ArangoDB.
//!
//! ```toml
//! [codegraph]
//! backend = "postgres"            # "memory" | "postgres" | "arangodb"
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

/// Replaces `user:password@` in a URL with `[REDACTED]@`.
pub(crate) fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            format!("{}[REDACTED]{}", &url[..scheme_end + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

impl fmt::Debug for ArangoSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArangoSettings")
            .field("url", &redact_url(&self.url))
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
        assert!(debug.contains("http://[REDACTED]@db:8529"), "{debug}");

        let s: CodegraphSettings = toml_like("{}");
        assert_eq!(s.backend, StoreBackend::Memory);
        assert_eq!(s.arangodb.url, "http://127.0.0.1:8529");
        assert!(serde_json::from_str::<CodegraphSettings>(r#"{"backend":"neo4j"}"#).is_err());
    }

    fn toml_like(json: &str) -> CodegraphSettings {
        serde_json::from_str(json).expect("settings parse")
    }
}
