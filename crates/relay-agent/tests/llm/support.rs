//! Shared helpers: fixture loading, fake providers and a recording usage sink.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use relay_agent::llm::scripted::ScriptedReply;
use relay_agent::llm::{
    AssistantMessage, ChatRequest, ChatResponse, FinishReason, LlmClient, LlmError, LlmSettings,
    Provider, ProviderKind, Role, Usage, UsageRecord, UsageSink,
};
use serde_json::Value;

/// The shared fixtures directory.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/api"
    ))
}

/// A fixture parsed as JSON.
#[track_caller]
pub fn fixture(path: &str) -> Value {
    let full = fixtures_dir().join(path);
    let text = std::fs::read_to_string(&full)
        .unwrap_or_else(|error| panic!("cannot read fixture {}: {error}", full.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|error| panic!("fixture {path} is not JSON: {error}"))
}

/// The recorded exchanges of an Anthropic `.recorded.json` fixture as scripted raw replies
/// (status, headers and body verbatim).
#[track_caller]
pub fn recorded_replies(path: &str) -> Vec<ScriptedReply> {
    let exchanges = fixture(path);
    exchanges
        .as_array()
        .expect("recorded fixture is an array")
        .iter()
        .map(|exchange| {
            let response = &exchange["response"];
            let headers = response["headers"]
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(name, _)| {
                    !matches!(
                        name.as_str(),
                        "content-length" | "connection" | "content-type"
                    )
                })
                .map(|(name, value)| (name.clone(), value.as_str().unwrap_or_default().to_owned()))
                .collect();
            ScriptedReply::Raw {
                status: response["status_code"].as_u64().unwrap() as u16,
                headers,
                body: response["body"].clone(),
            }
        })
        .collect()
}

/// The recorded request bodies of an Anthropic `.recorded.json` fixture.
#[track_caller]
pub fn recorded_requests(path: &str) -> Vec<Value> {
    fixture(path)
        .as_array()
        .unwrap()
        .iter()
        .map(|exchange| exchange["request"]["body"].clone())
        .collect()
}

/// Settings pointing one provider at a base URL.
pub fn settings_for(provider: &str, base_url: &str, model: &str) -> LlmSettings {
    settings_with(provider, base_url, model, "")
}

/// Settings pointing one provider at a base URL, with extra `[default]` keys.
pub fn settings_with(provider: &str, base_url: &str, model: &str, extra: &str) -> LlmSettings {
    let text = format!(
        r#"
        [default]
        provider = "{provider}"
        base_url = "{base_url}"
        model = "{model}"
        api_key = "sk-test-secret"
        max_output_tokens = 1024
        timeout_secs = 10
        {extra}
        "#
    );
    toml::from_str(&text).expect("test settings parse")
}

/// A client for the scripted server with a fast, jitter-free retry policy.
pub fn client_for(provider: &str, base_url: &str, model: &str) -> LlmClient {
    client_with(provider, base_url, model, "")
}

/// [`client_for`] with extra `[default]` keys.
pub fn client_with(provider: &str, base_url: &str, model: &str, extra: &str) -> LlmClient {
    let settings = settings_with(provider, base_url, model, extra);
    let client = LlmClient::from_settings(&settings, Role::Planner).expect("client builds");
    client.with_retry_policy(relay_agent::llm::RetryPolicy {
        initial_backoff: std::time::Duration::from_millis(1),
        max_backoff: std::time::Duration::from_millis(5),
        jitter: false,
        ..Default::default()
    })
}

/// A provider that replays canned results and records which model each call asked for.
#[derive(Debug, Default)]
pub struct FakeProvider {
    results: Mutex<VecDeque<Result<ChatResponse, LlmError>>>,
    pub calls: Mutex<Vec<String>>,
}

impl FakeProvider {
    pub fn new(results: Vec<Result<ChatResponse, LlmError>>) -> Arc<Self> {
        Arc::new(Self {
            results: Mutex::new(results.into()),
            calls: Mutex::default(),
        })
    }

    pub fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }
}

#[async_trait]
impl Provider for FakeProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Openai
    }

    async fn send(&self, model: &str, _request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        self.calls.lock().unwrap().push(model.to_owned());
        self.results
            .lock()
            .unwrap()
            .pop_front()
            .expect("fake provider ran out of results")
    }
}

/// A successful response with `text` and some usage.
pub fn ok(text: &str) -> Result<ChatResponse, LlmError> {
    Ok(ChatResponse {
        id: "resp".into(),
        model: "model".into(),
        message: AssistantMessage {
            text: Some(text.into()),
            tool_calls: Vec::new(),
        },
        refusal: None,
        finish_reason: FinishReason::Stop,
        usage: Usage {
            prompt_tokens: 100,
            completion_tokens: 10,
            cached_tokens: 0,
            estimated: false,
        },
    })
}

/// A sink that keeps every record.
#[derive(Default)]
pub struct CollectingSink(pub Mutex<Vec<UsageRecord>>);

#[async_trait]
impl UsageSink for CollectingSink {
    async fn record(&self, record: &UsageRecord) {
        self.0.lock().unwrap().push(record.clone());
    }
}

impl CollectingSink {
    pub fn records(&self) -> Vec<UsageRecord> {
        self.0.lock().unwrap().clone()
    }
}
