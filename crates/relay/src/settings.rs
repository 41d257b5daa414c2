//! The composed configuration: embedded defaults, then the TOML file, then `DATABASE_URL`, then
//! `RELAY__SECTION__KEY` environment variables. Each crate owns its section's type.

use std::collections::BTreeSet;
use std::path::Path;

use relay_core::TrackerSettings;
use relay_gateway::ServerSettings;
use relay_store::DatabaseSettings;
use relay_telemetry::LogSettings;
use relay_worker::WorkerSettings;
use secrecy::ExposeSecret as _;
use serde::Deserialize;
use toml::Value;

/// The commented example configuration with every default; also the base layer.
pub const DEFAULT_CONFIG: &str = include_str!("../../../config/relay.toml");

/// Relay's whole configuration.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    pub server: ServerSettings,
    /// `[api]`: the read API (no token: `/api` answers 404).
    #[serde(default)]
    pub api: relay_gateway::ApiSettings,
    /// `[ui]`: the status page (served with the read API, under `/ui`).
    #[serde(default)]
    pub ui: relay_gateway::UiSettings,
    pub database: DatabaseSettings,
    #[serde(default)]
    pub trackers: Vec<TrackerSettings>,
    pub worker: WorkerSettings,
    /// `[retention]`: what is pruned after how long.
    #[serde(default)]
    pub retention: relay_worker::RetentionSettings,
    /// `[reconcile]`: polling the trackers for events whose webhook never arrived.
    #[serde(default)]
    pub reconcile: relay_worker::reconcile::ReconcileSettings,
    #[serde(default)]
    pub log: LogSettings,
    /// `[trace]`: what the run trace records (tool-argument values only when asked).
    #[serde(default)]
    pub trace: relay_agent::trace::TraceSettings,
    /// `[repo]`: repository checkouts.
    #[serde(default)]
    pub repo: relay_repo::RepoSettings,
    /// `[tools]`: caps of the code tools.
    #[serde(default)]
    pub tools: relay_tools::ToolLimits,
    /// `[codegraph]`: where the code graph is stored.
    #[serde(default)]
    pub codegraph: relay_codegraph::store::CodegraphSettings,
    /// `[llm]`: providers and models per role.
    #[serde(default)]
    pub llm: relay_agent::llm::LlmSettings,
    /// `[agent]`: planner, spec writer and orchestrator limits; who may engage Relay.
    #[serde(default)]
    pub agent: relay_agent::agent_settings::AgentSettings,
    /// `[prices.<model>]`: USD per million tokens, for `relay trace`'s and the status page's cost.
    #[serde(default)]
    pub prices: crate::cmd::trace_render::Prices,
}

/// A configuration problem, naming the key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read configuration file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("configuration file {path} is not valid TOML: {message}")]
    Syntax { path: String, message: String },
    #[error("invalid configuration at `{key}`: {message}")]
    Invalid { key: String, message: String },
}

/// The merged configuration document, and the settings deserialized from it.
pub struct Loaded {
    pub settings: Settings,
    pub document: Value,
}

/// Loads the configuration. `path` is the `--config` file; without one, `RELAY_CONFIG` names it,
/// and with neither only the defaults and the environment apply.
pub fn load(path: Option<&Path>) -> Result<Loaded, ConfigError> {
    let env: Vec<(String, String)> = std::env::vars().collect();
    load_with(path, &env)
}

pub fn load_with(path: Option<&Path>, env: &[(String, String)]) -> Result<Loaded, ConfigError> {
    let mut document: Value =
        toml::from_str(DEFAULT_CONFIG).expect("the embedded default configuration is valid TOML");
    let path = path.map(Path::to_path_buf).or_else(|| {
        env.iter()
            .find(|(k, _)| k == "RELAY_CONFIG")
            .map(|(_, v)| v.into())
    });
    if let Some(path) = path {
        let display = path.display().to_string();
        let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
            path: display.clone(),
            source,
        })?;
        let file: Value = toml::from_str(&text).map_err(|e| ConfigError::Syntax {
            path: display,
            message: e.message().to_owned(),
        })?;
        merge(&mut document, file);
    }
    if let Value::Table(table) = &mut document {
        table
            .entry("trackers")
            .or_insert_with(|| Value::Array(Vec::new()));
    }
    if let Some((_, url)) = env.iter().find(|(k, _)| k == "DATABASE_URL") {
        set_path(
            &mut document,
            &["database".into(), "url".into()],
            Value::String(url.clone()),
        )?;
    }
    // Environment values are typed by their look (numbers, booleans, arrays); a value that then
    // fails to deserialize is retried as a plain string (a numeric token, say).
    let mut coerced: Vec<(Vec<String>, String)> = Vec::new();
    let mut env_keys: Vec<&(String, String)> = env
        .iter()
        .filter(|(k, _)| k.starts_with("RELAY__"))
        .collect();
    env_keys.sort();
    for (key, raw) in env_keys {
        let path: Vec<String> = key["RELAY__".len()..]
            .split("__")
            .map(str::to_ascii_lowercase)
            .collect();
        if path.iter().any(String::is_empty) {
            return Err(ConfigError::Invalid {
                key: key.clone(),
                message: "empty segment in environment variable name".into(),
            });
        }
        let value = typed(raw);
        if !matches!(value, Value::String(_)) {
            coerced.push((path.clone(), raw.clone()));
        }
        set_path(&mut document, &path, value)?;
    }

    let mut as_string: BTreeSet<Vec<String>> = BTreeSet::new();
    loop {
        let result: Result<Settings, _> = serde_path_to_error::deserialize(document.clone());
        match result {
            Ok(settings) => {
                validate(&settings)?;
                return Ok(Loaded { settings, document });
            }
            Err(error) => {
                let key = error.path().to_string();
                // Find a coerced env value at the failing key that we have not retried yet.
                let retry = coerced.iter().find(|(path, _)| {
                    !as_string.contains(path) && resolved_key(&document, path) == Some(key.clone())
                });
                match retry {
                    Some((path, raw)) => {
                        as_string.insert(path.clone());
                        set_path(&mut document, path, Value::String(raw.clone()))?;
                    }
                    None => {
                        return Err(ConfigError::Invalid {
                            key,
                            message: error.into_inner().to_string(),
                        });
                    }
                }
            }
        }
    }
}

fn typed(raw: &str) -> Value {
    let trimmed = raw.trim();
    let looks_typed = trimmed == "true"
        || trimmed == "false"
        || trimmed.starts_with('[')
        || trimmed.parse::<i64>().is_ok()
        || trimmed.parse::<f64>().is_ok();
    if looks_typed
        && let Ok(Value::Table(mut table)) = toml::from_str::<Value>(&format!("v = {trimmed}"))
        && let Some(value) = table.remove("v")
    {
        return value;
    }
    Value::String(raw.to_owned())
}

/// Deep-merges `overlay` into `base`: tables merge key by key, everything else is replaced.
fn merge(base: &mut Value, overlay: Value) {
    match (base, overlay) {
        (Value::Table(base), Value::Table(overlay)) => {
            for (key, value) in overlay {
                match base.get_mut(&key) {
                    Some(existing) => merge(existing, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, overlay) => *base = overlay,
    }
}

/// Sets `path` in the document, creating tables as needed. In arrays (`trackers`), a segment is an
/// index or the `name` of an element: `RELAY__TRACKERS__GITHUB__TOKEN`.
fn set_path(document: &mut Value, path: &[String], value: Value) -> Result<(), ConfigError> {
    let key = path.join(".");
    let mut node = document;
    for (i, segment) in path.iter().enumerate() {
        let last = i + 1 == path.len();
        node = match node {
            Value::Table(table) => {
                if last {
                    table.insert(segment.clone(), value);
                    return Ok(());
                }
                table
                    .entry(segment.clone())
                    .or_insert_with(|| Value::Table(Default::default()))
            }
            Value::Array(items) => {
                let index = match segment.parse::<usize>() {
                    Ok(index) if index < items.len() => index,
                    // The next index appends an element, so whole entries can come from the environment.
                    Ok(index) if index == items.len() && !last => {
                        items.push(Value::Table(Default::default()));
                        index
                    }
                    _ => items
                        .iter()
                        .position(|item| {
                            item.get("name")
                                .and_then(Value::as_str)
                                .is_some_and(|n| n.eq_ignore_ascii_case(segment))
                        })
                        .ok_or_else(|| ConfigError::Invalid {
                            key: key.clone(),
                            message: format!("no element with index or name {segment:?}"),
                        })?,
                };
                if last {
                    items[index] = value;
                    return Ok(());
                }
                &mut items[index]
            }
            _ => {
                return Err(ConfigError::Invalid {
                    key,
                    message: format!("{segment:?} is inside a value that is not a table"),
                });
            }
        };
    }
    Ok(())
}

/// The serde path string (`trackers[0].token`) an env path resolves to.
fn resolved_key(document: &Value, path: &[String]) -> Option<String> {
    let mut out = String::new();
    let mut node = document;
    for segment in path {
        match node {
            Value::Table(table) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(segment);
                node = table.get(segment)?;
            }
            Value::Array(items) => {
                let index = segment
                    .parse::<usize>()
                    .ok()
                    .filter(|i| *i < items.len())
                    .or_else(|| {
                        items.iter().position(|item| {
                            item.get("name")
                                .and_then(Value::as_str)
                                .is_some_and(|n| n.eq_ignore_ascii_case(segment))
                        })
                    })?;
                out.push_str(&format!("[{index}]"));
                node = &items[index];
            }
            _ => return None,
        }
    }
    Some(out)
}

fn validate(settings: &Settings) -> Result<(), ConfigError> {
    let mut names = BTreeSet::new();
    for (i, tracker) in settings.trackers.iter().enumerate() {
        if !names.insert(tracker.name.as_str()) {
            return Err(ConfigError::Invalid {
                key: format!("trackers[{i}].name"),
                message: format!("duplicate tracker name {:?}", tracker.name.as_str()),
            });
        }
        if let Err((field, message)) = tracker.validate() {
            return Err(ConfigError::Invalid {
                key: format!("trackers[{i}].{field}"),
                message,
            });
        }
    }
    if let Err(message) = settings.api.validate() {
        return Err(ConfigError::Invalid {
            key: "api.token".into(),
            message,
        });
    }
    if settings.server.admin_listen == Some(settings.server.listen) {
        return Err(ConfigError::Invalid {
            key: "server.admin_listen".into(),
            message: "must differ from server.listen (leave it unset to serve everything there)"
                .into(),
        });
    }
    if let Err(message) = settings.codegraph.arangodb.validate() {
        return Err(ConfigError::Invalid {
            key: "codegraph.arangodb.url".into(),
            message,
        });
    }
    if settings.worker.concurrency == 0 {
        return Err(ConfigError::Invalid {
            key: "worker.concurrency".into(),
            message: "must be at least 1".into(),
        });
    }
    if settings.worker.max_attempts < 1 {
        return Err(ConfigError::Invalid {
            key: "worker.max_attempts".into(),
            message: "must be at least 1".into(),
        });
    }
    settings
        .database
        .connect_options()
        .map_err(|message| ConfigError::Invalid {
            key: "database.url".into(),
            message,
        })?;
    Ok(())
}

/// The document with every secret replaced by `[REDACTED]` and passwords removed from URLs.
pub fn redacted(document: &Value) -> Value {
    fn walk(key: Option<&str>, value: &Value) -> Value {
        match value {
            Value::Table(table) => Value::Table(
                table
                    .iter()
                    .map(|(k, v)| (k.clone(), walk(Some(k), v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|v| walk(key, v)).collect()),
            Value::String(s) => {
                let key = key.unwrap_or_default();
                if relay_core::secrets::is_secret_setting(key) {
                    Value::String("[REDACTED]".into())
                } else if key == "url" || key.ends_with("_url") {
                    Value::String(relay_core::secrets::redact_url(s))
                } else {
                    value.clone()
                }
            }
            other => other.clone(),
        }
    }
    walk(None, document)
}

impl Settings {
    /// Every secret of the configuration, labelled by its key: tracker tokens, webhook secrets
    /// and App keys, the API token, each role's LLM key, the database password (userinfo or
    /// `?password=`) and the ArangoDB password. Registered at start-up for the outbox's
    /// outgoing scan, so no tracker write can carry one.
    pub fn secrets(&self) -> Vec<(String, secrecy::SecretString)> {
        let mut secrets = relay_core::secrets::tracker_secrets(&self.trackers);
        if let Some(token) = &self.api.token {
            secrets.push(("api.token".to_owned(), token.clone()));
        }
        secrets.extend(self.llm.secrets());
        for password in relay_core::secrets::url_secrets(self.database.url.expose_secret()) {
            secrets.push(("database.url".to_owned(), password));
        }
        secrets.push((
            "codegraph.arangodb.password".to_owned(),
            self.codegraph.arangodb.password.clone(),
        ));
        secrets
    }
}

#[cfg(test)]
mod deploy_tests;
#[cfg(test)]
mod tests;
