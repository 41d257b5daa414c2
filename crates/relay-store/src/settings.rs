//! Database settings (`[database]`) and pool construction.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use relay_core::secrets::redact_url;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::PgPool;

/// `[database]`: where Postgres is and how to pool connections to it.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseSettings {
    /// Connection URL, e.g. `postgres://relay:secret@db:5432/relay`. `DATABASE_URL` overrides it.
    /// Treated as a secret because it may carry a password.
    pub url: SecretString,
    /// Maximum pooled connections per process (the worker adds one for LISTEN).
    #[serde(default = "default_max_connections")]
    pub max_connections: u32,
    /// How long a request waits for a connection before the database counts as unavailable
    /// (the gateway then answers 503 so the sender retries).
    #[serde(default = "default_acquire_timeout_ms")]
    pub acquire_timeout_ms: u64,
    /// Server-side statement timeout applied to every connection, in milliseconds (0 = none).
    #[serde(default = "default_statement_timeout_ms")]
    pub statement_timeout_ms: u64,
    /// Apply pending migrations when `serve`, `gateway` or `worker` start.
    #[serde(default = "default_true")]
    pub migrate_on_start: bool,
}

fn default_max_connections() -> u32 {
    16
}
fn default_acquire_timeout_ms() -> u64 {
    1500
}
fn default_statement_timeout_ms() -> u64 {
    30_000
}
fn default_true() -> bool {
    true
}

impl fmt::Debug for DatabaseSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DatabaseSettings")
            .field("url", &redact_url(self.url.expose_secret()))
            .field("max_connections", &self.max_connections)
            .field("acquire_timeout_ms", &self.acquire_timeout_ms)
            .field("statement_timeout_ms", &self.statement_timeout_ms)
            .field("migrate_on_start", &self.migrate_on_start)
            .finish()
    }
}

impl DatabaseSettings {
    /// Settings for a URL with every other field at its default.
    pub fn from_url(url: &str) -> DatabaseSettings {
        DatabaseSettings {
            url: SecretString::from(url.to_owned()),
            max_connections: default_max_connections(),
            acquire_timeout_ms: default_acquire_timeout_ms(),
            statement_timeout_ms: default_statement_timeout_ms(),
            migrate_on_start: true,
        }
    }

    /// Parses the URL into connect options (the error never contains the URL).
    pub fn connect_options(&self) -> Result<PgConnectOptions, String> {
        let url = self.url.expose_secret();
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(format!(
                "must be a postgres:// or postgresql:// URL ({})",
                redact_url(url)
            ));
        }
        let mut options = PgConnectOptions::from_str(self.url.expose_secret()).map_err(|e| {
            // sqlx's message may echo the URL; keep only the kind of problem.
            let kind = match e {
                sqlx::Error::Configuration(_) => "malformed database URL",
                _ => "invalid database URL",
            };
            format!("{kind} ({})", redact_url(self.url.expose_secret()))
        })?;
        options = options.application_name("relay");
        if self.statement_timeout_ms > 0 {
            options =
                options.options([("statement_timeout", self.statement_timeout_ms.to_string())]);
        }
        Ok(options)
    }

    /// A lazily connecting pool: the process starts even when the database is down, and
    /// requests fail fast with [`crate::Error::Unavailable`] until it is back.
    pub fn pool(&self) -> Result<PgPool, String> {
        Ok(self
            .pool_options()
            .connect_lazy_with(self.connect_options()?))
    }

    pub fn pool_options(&self) -> PgPoolOptions {
        PgPoolOptions::new()
            .max_connections(self.max_connections)
            .acquire_timeout(Duration::from_millis(self.acquire_timeout_ms))
            // A connection that sat idle is pinged before use, so the pool heals after an outage
            // without paying a round trip on every request of a busy pool (a broken busy
            // connection fails one request and is dropped).
            .test_before_acquire(false)
            .before_acquire(|connection, meta| {
                Box::pin(async move {
                    if meta.idle_for > Duration::from_secs(5) {
                        use sqlx::Connection;
                        connection.ping().await?;
                    }
                    Ok(true)
                })
            })
    }
}

impl DatabaseSettings {
    /// Creates the configured database if it does not exist yet (needs CREATEDB), so a fresh
    /// machine runs with nothing but a Postgres server.
    pub async fn ensure_database(&self) -> crate::Result<()> {
        use sqlx::{ConnectOptions, Connection};
        let options = self.connect_options().map_err(crate::Error::Decode)?;
        match options.connect().await {
            Ok(connection) => {
                let _ = connection.close().await;
                Ok(())
            }
            Err(sqlx::Error::Database(db)) if db.code().as_deref() == Some("3D000") => {
                let name = options.get_database().unwrap_or("relay").to_owned();
                let mut admin = options.clone().database("postgres").connect().await?;
                let statement = format!("CREATE DATABASE \"{}\"", name.replace('"', "\"\""));
                match sqlx::query(sqlx::AssertSqlSafe(statement))
                    .execute(&mut admin)
                    .await
                {
                    Ok(_) => {
                        tracing::info!(database = %name, "created database");
                        Ok(())
                    }
                    // Another process created it first.
                    Err(sqlx::Error::Database(db)) if db.code().as_deref() == Some("42P04") => {
                        Ok(())
                    }
                    Err(e) => Err(e.into()),
                }
            }
            Err(e) => Err(e.into()),
        }
    }
}
