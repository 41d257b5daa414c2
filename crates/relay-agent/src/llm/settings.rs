//! The `[llm]` configuration section: a default provider configuration plus optional per-role
//! overrides. A role's effective configuration is the default overlaid with the role's keys.
//!
//! ```toml
//! [llm.default]
//! provider = "openai"
//! base_url = "https://api.openai.com/v1"
//! model = "gpt-4o"
//! api_key_env = "OPENAI_API_KEY"
//! [llm.explore]
//! model = "gpt-4o-mini"
//! ```

use std::fmt;
use std::time::Duration;

use relay_core::secrets::redact_url;
use secrecy::SecretString;
use serde::Deserialize;

use super::error::LlmError;

/// The `[llm]` section.
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmSettings {
    /// Configuration shared by every role.
    #[serde(default)]
    pub default: ProviderSettings,
    /// Overrides for the planner.
    #[serde(default)]
    pub planner: Option<ProviderSettings>,
    /// Overrides for the explore agents.
    #[serde(default)]
    pub explore: Option<ProviderSettings>,
    /// Overrides for the spec writer.
    #[serde(default)]
    pub spec: Option<ProviderSettings>,
    /// Log prompts and responses at debug level. Off by default: they may contain private code.
    #[serde(default)]
    pub log_payloads: bool,
}

/// Who is calling the LLM; each role may use its own provider and model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The planner agent.
    Planner,
    /// An explore agent.
    Explore,
    /// The spec writer.
    Spec,
}

impl Role {
    /// All roles.
    pub const ALL: [Role; 3] = [Role::Planner, Role::Explore, Role::Spec];

    /// The role's name in configuration, metrics and usage rows.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Planner => "planner",
            Self::Explore => "explore",
            Self::Spec => "spec",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Role {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|role| role.as_str() == text)
            .ok_or_else(|| format!("unknown role {text:?}: expected planner, explore or spec"))
    }
}

/// Which wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// OpenAI Chat Completions, and every server compatible with it.
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

impl ProviderKind {
    /// The provider's name in metrics and usage rows.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::Anthropic => "anthropic",
        }
    }

    fn default_base_url(self) -> &'static str {
        match self {
            Self::Openai => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com",
        }
    }
}

/// Which OpenAI-compatible server is on the other end; servers differ in what they accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpenAiDialect {
    /// api.openai.com: `max_completion_tokens`, `strict`, `parallel_tool_calls`, every
    /// `tool_choice`. Also right for OpenRouter.
    #[default]
    Openai,
    /// Azure OpenAI: like `openai`, authenticated with an `api-key` header and an `api-version`
    /// query parameter; `base_url` is the deployment URL.
    Azure,
    /// Local servers (Ollama, vLLM, llama.cpp, LM Studio): `max_tokens`, `tool_choice` only when a
    /// specific tool is forced (vLLM rejects `auto` without server flags; Ollama ignores it),
    /// `parallel_tool_calls` omitted. Replies are validated either way.
    Compatible,
}

/// How Anthropic is asked for structured output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnthropicStructuredMode {
    /// A single tool carrying the schema, forced with `tool_choice: {type: "tool"}`. Works on
    /// every tool-capable model.
    #[default]
    Tool,
    /// `output_config.format` with a JSON schema (newer models only).
    OutputConfig,
}

/// One provider configuration; every field is optional so a role can override only some keys.
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSettings {
    /// `openai` (any OpenAI-compatible server) or `anthropic`.
    pub provider: Option<ProviderKind>,
    /// API base URL, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`.
    pub base_url: Option<String>,
    /// Model name.
    pub model: Option<String>,
    /// API key (prefer `api_key_env`).
    pub api_key: Option<SecretString>,
    /// Name of an environment variable holding the API key, read at startup.
    pub api_key_env: Option<String>,
    /// Output token limit per request (default 4096).
    pub max_output_tokens: Option<u32>,
    /// Timeout of one HTTP request in seconds (default 120).
    pub timeout_secs: Option<u64>,
    /// Overall deadline of one call including retries, in seconds (default 600).
    pub deadline_secs: Option<u64>,
    /// Retries per model after the first attempt (default 3).
    pub max_retries: Option<u32>,
    /// Models tried in order when the primary stays rate-limited, overloaded or down.
    pub fallback_models: Option<Vec<String>>,
    /// OpenAI-compatible server flavour (default `openai`).
    pub dialect: Option<OpenAiDialect>,
    /// `api-version` query parameter for the `azure` dialect.
    pub api_version: Option<String>,
    /// `anthropic-version` header (default `2023-06-01`).
    pub anthropic_version: Option<String>,
    /// How Anthropic is asked for structured output (default `tool`).
    pub structured_output: Option<AnthropicStructuredMode>,
    /// Sampling temperature (provider default when unset).
    pub temperature: Option<f32>,
    /// Corrective retries of structured output that fails validation (default 2).
    pub structured_retries: Option<u32>,
    /// Request server-sent events and fold them into one reply (default false).
    pub stream: Option<bool>,
}

/// A role's effective, validated provider configuration.
#[derive(Clone)]
pub struct ProviderConfig {
    /// The role this configuration serves.
    pub role: Role,
    /// Wire protocol.
    pub provider: ProviderKind,
    /// API base URL without a trailing slash.
    pub base_url: String,
    /// Primary model.
    pub model: String,
    /// API key, if any (local servers often need none).
    pub api_key: Option<SecretString>,
    /// Default output token limit.
    pub max_output_tokens: u32,
    /// Timeout of one HTTP request.
    pub timeout: Duration,
    /// Overall deadline of one call.
    pub deadline: Duration,
    /// Retries per model.
    pub max_retries: u32,
    /// Fallback models, in order.
    pub fallback_models: Vec<String>,
    /// OpenAI-compatible server flavour.
    pub dialect: OpenAiDialect,
    /// Azure `api-version`.
    pub api_version: Option<String>,
    /// `anthropic-version` header.
    pub anthropic_version: String,
    /// Anthropic structured-output mode.
    pub structured_output: AnthropicStructuredMode,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Corrective retries of structured output.
    pub structured_retries: u32,
    /// Whether responses are streamed (SSE) and folded.
    pub stream: bool,
    /// Whether prompts and responses are logged at debug level.
    pub log_payloads: bool,
}

impl LlmSettings {
    /// Every role's API key, labelled by its key (`llm.planner.api_key`): the LLM's part of the
    /// configured secrets (see [`relay_core::secrets`]).
    pub fn secrets(&self) -> Vec<(String, SecretString)> {
        Role::ALL
            .into_iter()
            .filter_map(|role| {
                let key = self.resolve(role).ok()?.api_key?;
                Some((format!("llm.{}.api_key", role.as_str()), key))
            })
            .collect()
    }

    /// The role's overrides, if configured.
    pub fn role_settings(&self, role: Role) -> Option<&ProviderSettings> {
        match role {
            Role::Planner => self.planner.as_ref(),
            Role::Explore => self.explore.as_ref(),
            Role::Spec => self.spec.as_ref(),
        }
    }

    /// The role's effective configuration, reading `api_key_env` from the process environment.
    pub fn resolve(&self, role: Role) -> Result<ProviderConfig, LlmError> {
        self.resolve_with_env(role, |name| std::env::var(name).ok())
    }

    /// [`resolve`](Self::resolve) with an explicit environment lookup (for tests).
    pub fn resolve_with_env(
        &self,
        role: Role,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<ProviderConfig, LlmError> {
        let overrides = self.role_settings(role);
        // Picks the role's value if set, else the default's, remembering which table it came from
        // so errors name the key the operator must fix.
        macro_rules! pick {
            ($field:ident) => {
                match overrides.and_then(|o| o.$field.clone()) {
                    Some(value) => Some((value, role.as_str())),
                    None => self.default.$field.clone().map(|value| (value, "default")),
                }
            };
        }
        let missing = |key: &str| {
            LlmError::Config(format!(
                "llm.{role}.{key} is required (set it in [llm.{role}] or [llm.default])"
            ))
        };
        let (provider, _) = pick!(provider).ok_or_else(|| missing("provider"))?;
        let (model, model_table) = pick!(model).ok_or_else(|| missing("model"))?;
        if model.trim().is_empty() {
            return Err(LlmError::Config(format!(
                "llm.{model_table}.model must not be empty"
            )));
        }
        let base_url = match pick!(base_url) {
            Some((url, table)) => {
                let parsed = reqwest::Url::parse(&url).map_err(|error| {
                    LlmError::Config(format!(
                        "llm.{table}.base_url {url:?} is not a valid url: {error}"
                    ))
                })?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(LlmError::Config(format!(
                        "llm.{table}.base_url must be an http or https url"
                    )));
                }
                url.trim_end_matches('/').to_owned()
            }
            None => provider.default_base_url().to_owned(),
        };
        let api_key = resolve_key(pick!(api_key), pick!(api_key_env), &env)?;
        let dialect = pick!(dialect).map(|(value, _)| value).unwrap_or_default();
        let api_version = pick!(api_version).map(|(value, _)| value);
        if dialect == OpenAiDialect::Azure && api_version.is_none() {
            return Err(missing("api_version"));
        }
        if api_key.is_none() && provider == ProviderKind::Anthropic {
            return Err(missing("api_key"));
        }
        let positive = |value: Option<(u64, &str)>, key: &str, default: u64| match value {
            Some((0, table)) => Err(LlmError::Config(format!(
                "llm.{table}.{key} must be positive"
            ))),
            Some((value, _)) => Ok(value),
            None => Ok(default),
        };
        let max_output_tokens = positive(
            pick!(max_output_tokens).map(|(v, t)| (u64::from(v), t)),
            "max_output_tokens",
            4096,
        )?;
        Ok(ProviderConfig {
            role,
            provider,
            base_url,
            model,
            api_key,
            max_output_tokens: u32::try_from(max_output_tokens).unwrap_or(u32::MAX),
            timeout: Duration::from_secs(positive(pick!(timeout_secs), "timeout_secs", 120)?),
            deadline: Duration::from_secs(positive(pick!(deadline_secs), "deadline_secs", 600)?),
            max_retries: pick!(max_retries).map_or(3, |(value, _)| value),
            fallback_models: pick!(fallback_models)
                .map(|(value, _)| value)
                .unwrap_or_default(),
            dialect,
            api_version,
            anthropic_version: pick!(anthropic_version)
                .map_or_else(|| "2023-06-01".to_owned(), |(value, _)| value),
            structured_output: pick!(structured_output)
                .map(|(value, _)| value)
                .unwrap_or_default(),
            temperature: pick!(temperature).map(|(value, _)| value),
            structured_retries: pick!(structured_retries).map_or(2, |(value, _)| value),
            stream: pick!(stream).is_some_and(|(value, _)| value),
            log_payloads: self.log_payloads,
        })
    }
}

fn resolve_key(
    inline: Option<(SecretString, &str)>,
    from_env: Option<(String, &str)>,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Option<SecretString>, LlmError> {
    match (inline, from_env) {
        (Some(_), Some((_, table))) => Err(LlmError::Config(format!(
            "llm.{table}: set either api_key or api_key_env, not both"
        ))),
        (Some((key, _)), None) => Ok(Some(key)),
        (None, Some((name, table))) => match env(&name) {
            Some(value) if !value.trim().is_empty() => Ok(Some(SecretString::from(value))),
            _ => Err(LlmError::Config(format!(
                "environment variable {name} named by llm.{table}.api_key_env is not set"
            ))),
        },
        (None, None) => Ok(None),
    }
}

impl fmt::Debug for LlmSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmSettings")
            .field("default", &self.default)
            .field("planner", &self.planner)
            .field("explore", &self.explore)
            .field("spec", &self.spec)
            .field("log_payloads", &self.log_payloads)
            .finish()
    }
}

impl fmt::Debug for ProviderSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderSettings")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url.as_deref().map(redact_url))
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("api_key_env", &self.api_key_env)
            .field("max_output_tokens", &self.max_output_tokens)
            .field("timeout_secs", &self.timeout_secs)
            .field("fallback_models", &self.fallback_models)
            .field("dialect", &self.dialect)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("role", &self.role)
            .field("provider", &self.provider)
            .field("base_url", &redact_url(&self.base_url))
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("max_output_tokens", &self.max_output_tokens)
            .field("timeout", &self.timeout)
            .field("deadline", &self.deadline)
            .field("max_retries", &self.max_retries)
            .field("fallback_models", &self.fallback_models)
            .field("dialect", &self.dialect)
            .finish_non_exhaustive()
    }
}
