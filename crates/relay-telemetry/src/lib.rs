#![doc = include_str!("../README.md")]
//!
//! Layout: [`LogSettings`] and [`init`] (tracing), [`metrics`] (metric names and the recorder).

pub mod metrics;

use std::io::IsTerminal;

use serde::Deserialize;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::FmtSpan;

/// `[log]`: how Relay logs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogSettings {
    /// `auto` (pretty on a terminal, JSON otherwise), `pretty` or `json`.
    #[serde(default)]
    pub format: LogFormat,
    /// An `EnvFilter` directive; `RUST_LOG` overrides it when set.
    #[serde(default = "default_filter")]
    pub filter: String,
}

impl Default for LogSettings {
    fn default() -> Self {
        LogSettings {
            format: LogFormat::default(),
            filter: default_filter(),
        }
    }
}

fn default_filter() -> String {
    "info,relay=debug,sqlx=warn,hyper=warn,tower_http=info".to_owned()
}

/// Log output format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Auto,
    Pretty,
    Json,
}

/// Installs the global tracing subscriber. Call once, at process start.
pub fn init(settings: &LogSettings) -> Result<(), String> {
    let filter = match std::env::var("RUST_LOG") {
        Ok(directive) if !directive.is_empty() => EnvFilter::try_new(directive),
        _ => EnvFilter::try_new(&settings.filter),
    }
    .map_err(|e| format!("invalid log.filter: {e}"))?;
    let json = match settings.format {
        LogFormat::Json => true,
        LogFormat::Pretty => false,
        LogFormat::Auto => !std::io::stderr().is_terminal(),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let result = if json {
        builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init()
    } else {
        builder.with_span_events(FmtSpan::NONE).try_init()
    };
    result.map_err(|e| format!("failed to install the log subscriber: {e}"))
}

/// Logs for tests: written through the test harness's capture, and only when `TEST_LOG` is set.
pub fn init_for_test() {
    if std::env::var_os("TEST_LOG").is_none() {
        return;
    }
    let filter = EnvFilter::try_from_env("TEST_LOG")
        .unwrap_or_else(|_| EnvFilter::new("info,relay=debug,sqlx=warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_test_writer()
        .try_init();
}
