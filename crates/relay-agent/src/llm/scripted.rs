//! A scripted LLM server for tests (feature `test-support`): a real HTTP server on 127.0.0.1
//! that speaks OpenAI Chat Completions (`POST /v1/chat/completions`) and Anthropic Messages
//! (`POST /v1/messages`), answers each request with the next reply of a script, and records every
//! request it received.
//!
//! ```no_run
//! # async fn demo() {
//! use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
//! let server = ScriptedLlm::start(vec![
//!     ScriptedReply::rate_limited(1),
//!     ScriptedReply::text("pong"),
//! ])
//! .await;
//! // point `base_url` at server.base_url(), run the code under test, then:
//! assert_eq!(server.requests().len(), 2);
//! # }
//! ```
//!
//! Scripts can also be JSON files: an array of replies tagged by `type`, e.g.
//! `[{"type": "error", "status": 429, "retry_after_ms": 5}, {"type": "text", "text": "pong"}]`.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use self::render::{Render, render_error, with_headers};
use axum::routing::post;
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod render;

/// One scripted reply. The server renders it in the protocol of the endpoint that was called.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ScriptedReply {
    /// A plain text answer (`finish_reason: stop` / `stop_reason: end_turn`).
    Text {
        /// The text.
        text: String,
        /// Reported usage.
        #[serde(default)]
        usage: ScriptedUsage,
    },
    /// One or more (parallel) tool calls.
    ToolCalls {
        /// The calls.
        calls: Vec<ScriptedToolCall>,
        /// Text before the calls (Anthropic allows it; OpenAI sends it as `content`).
        #[serde(default)]
        text: Option<String>,
        /// Reported usage.
        #[serde(default)]
        usage: ScriptedUsage,
    },
    /// A structured-output answer: JSON text, or for an Anthropic request that forces a tool, a
    /// `tool_use` of that tool with this input.
    Json {
        /// The JSON value.
        value: Value,
        /// Reported usage.
        #[serde(default)]
        usage: ScriptedUsage,
    },
    /// A refusal (OpenAI `message.refusal`, Anthropic `stop_reason: refusal`).
    Refusal {
        /// The refusal text.
        message: String,
    },
    /// Output cut off at the token limit (`length` / `max_tokens`).
    Truncated {
        /// The partial text.
        text: String,
    },
    /// An HTTP error with a protocol-shaped error body.
    Error {
        /// HTTP status, e.g. 429, 500, 529.
        status: u16,
        /// Error message.
        #[serde(default)]
        message: Option<String>,
        /// Error type (default derived from the status, e.g. `rate_limit_error`).
        #[serde(default)]
        error_type: Option<String>,
        /// OpenAI error code, e.g. `context_length_exceeded`, `insufficient_quota`.
        #[serde(default)]
        code: Option<String>,
        /// `retry-after` header in seconds.
        #[serde(default)]
        retry_after_secs: Option<u64>,
        /// `retry-after-ms` header.
        #[serde(default)]
        retry_after_ms: Option<u64>,
        /// Extra response headers.
        #[serde(default)]
        headers: BTreeMap<String, String>,
    },
    /// Another reply, sent after a delay (to exercise time limits; the test's time limit must be
    /// shorter than the delay, never a timing assertion).
    Delayed {
        /// Milliseconds to wait before answering.
        delay_ms: u64,
        /// The reply.
        reply: Box<ScriptedReply>,
    },
    /// A verbatim response, e.g. a recorded fixture body.
    Raw {
        /// HTTP status.
        #[serde(default = "ok_status")]
        status: u16,
        /// Response headers.
        #[serde(default)]
        headers: BTreeMap<String, String>,
        /// Response body.
        body: Value,
    },
}

fn ok_status() -> u16 {
    200
}

/// A scripted tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptedToolCall {
    /// Call id (generated when absent).
    #[serde(default)]
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// Arguments: an object, or a string sent verbatim as OpenAI `arguments` (to script
    /// malformed JSON).
    pub arguments: Value,
}

/// Usage reported by a scripted reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScriptedUsage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Cached prompt tokens.
    #[serde(default)]
    pub cached_tokens: u64,
}

impl Default for ScriptedUsage {
    fn default() -> Self {
        Self {
            prompt_tokens: 10,
            completion_tokens: 5,
            cached_tokens: 0,
        }
    }
}

impl ScriptedReply {
    /// A text reply.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text {
            text: text.into(),
            usage: ScriptedUsage::default(),
        }
    }

    /// A structured-output reply.
    pub fn json(value: Value) -> Self {
        Self::Json {
            value,
            usage: ScriptedUsage::default(),
        }
    }

    /// Tool calls given as `(name, arguments)`; ids are generated.
    pub fn tool_calls(calls: Vec<(&str, Value)>) -> Self {
        Self::ToolCalls {
            calls: calls
                .into_iter()
                .map(|(name, arguments)| ScriptedToolCall {
                    id: None,
                    name: name.to_owned(),
                    arguments,
                })
                .collect(),
            text: None,
            usage: ScriptedUsage::default(),
        }
    }

    /// An HTTP error with the default body for its status.
    pub fn error(status: u16) -> Self {
        Self::Error {
            status,
            message: None,
            error_type: None,
            code: None,
            retry_after_secs: None,
            retry_after_ms: None,
            headers: BTreeMap::new(),
        }
    }

    /// A 429 with `retry-after-ms`.
    pub fn rate_limited(retry_after_ms: u64) -> Self {
        match Self::error(429) {
            Self::Error {
                status,
                message,
                error_type,
                code,
                retry_after_secs,
                headers,
                ..
            } => Self::Error {
                status,
                message,
                error_type,
                code,
                retry_after_secs,
                retry_after_ms: Some(retry_after_ms),
                headers,
            },
            other => other,
        }
    }

    /// A verbatim response.
    pub fn raw(status: u16, body: Value) -> Self {
        Self::Raw {
            status,
            headers: BTreeMap::new(),
            body,
        }
    }
}

/// Which protocol a recorded request used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `POST /v1/chat/completions`.
    OpenAi,
    /// `POST /v1/messages`.
    Anthropic,
}

/// A request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// Which endpoint was called.
    pub protocol: Protocol,
    /// Path and query string, e.g. `/v1/chat/completions?api-version=2024-10-21`.
    pub path_and_query: String,
    /// Request headers (lowercase names).
    pub headers: BTreeMap<String, String>,
    /// The JSON body (`Null` if it was not JSON).
    pub body: Value,
    /// When the request arrived (latency figures measure up to it).
    pub received_at: std::time::Instant,
}

#[derive(Default)]
struct ScriptState {
    replies: VecDeque<ScriptedReply>,
    requests: Vec<RecordedRequest>,
    hold: Option<Hold>,
}

/// Requests from number `from_request` (1-based) on wait until `open` is closed.
struct Hold {
    from_request: usize,
    open: Arc<tokio::sync::Semaphore>,
}

type Shared = Arc<Mutex<ScriptState>>;

/// A running scripted server; stops when dropped.
pub struct ScriptedLlm {
    address: SocketAddr,
    state: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl ScriptedLlm {
    /// Starts a server on 127.0.0.1 with an ephemeral port.
    ///
    /// # Panics
    /// When no loopback port can be bound (a broken test environment).
    pub async fn start(script: Vec<ScriptedReply>) -> Self {
        let state: Shared = Arc::new(Mutex::new(ScriptState {
            replies: script.into(),
            requests: Vec::new(),
            hold: None,
        }));
        let app = Router::new()
            .route("/v1/chat/completions", post(openai))
            .route("/chat/completions", post(openai))
            .route("/v1/messages", post(anthropic))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("scripted llm: cannot bind 127.0.0.1:0");
        let address = listener
            .local_addr()
            .expect("scripted llm: no local address");
        let task = tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                tracing::error!(error.message = %error, "scripted llm server failed");
            }
        });
        Self {
            address,
            state,
            task,
        }
    }

    /// Starts a server with a script read from a JSON file (an array of replies).
    ///
    /// # Panics
    /// When the file cannot be read or parsed.
    pub async fn start_from_file(path: impl AsRef<Path>) -> Self {
        Self::start(load_script(path.as_ref())).await
    }

    /// The base URL for either provider's `base_url` setting (`http://127.0.0.1:PORT/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.address)
    }

    /// A client of `role` on this server (OpenAI protocol, model `scripted`), retrying once after
    /// 1 ms so error scripts stay short and fast.
    ///
    /// # Panics
    /// Never for these settings (they are complete).
    pub fn client(&self, role: crate::llm::Role) -> crate::llm::LlmClient {
        let settings = crate::llm::LlmSettings {
            default: crate::llm::ProviderSettings {
                provider: Some(crate::llm::ProviderKind::Openai),
                base_url: Some(self.base_url()),
                model: Some("scripted".to_owned()),
                api_key: Some(secrecy::SecretString::from("sk-scripted")),
                max_output_tokens: Some(1024),
                timeout_secs: Some(30),
                ..Default::default()
            },
            ..Default::default()
        };
        crate::llm::LlmClient::from_settings(&settings, role)
            .expect("complete scripted settings")
            .with_retry_policy(crate::llm::RetryPolicy {
                max_retries: 1,
                initial_backoff: std::time::Duration::from_millis(1),
                max_backoff: std::time::Duration::from_millis(2),
                jitter: false,
                ..crate::llm::RetryPolicy::default()
            })
    }

    /// The server's address.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// Replies not yet served.
    pub fn remaining(&self) -> usize {
        self.lock().replies.len()
    }

    /// Holds request number `n` (1-based) and every later one, recorded but unanswered, until
    /// [`release`](Self::release): lets a test look at a run in flight.
    pub fn hold_from(&self, n: usize) {
        self.lock().hold = Some(Hold {
            from_request: n,
            open: Arc::new(tokio::sync::Semaphore::new(0)),
        });
    }

    /// Answers the held requests, and later ones at once.
    pub fn release(&self) {
        if let Some(hold) = self.lock().hold.take() {
            // A closed semaphore fails every waiting and future `acquire` at once.
            hold.open.close();
        }
    }

    /// Appends replies to the script.
    pub fn push(&self, replies: impl IntoIterator<Item = ScriptedReply>) {
        self.lock().replies.extend(replies);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ScriptState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Drop for ScriptedLlm {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads a script file.
///
/// # Panics
/// When the file cannot be read or is not a list of replies; the message names the file.
pub fn load_script(path: &Path) -> Vec<ScriptedReply> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("cannot read script {}: {error}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|error| panic!("invalid script {}: {error}", path.display()))
}

async fn openai(
    State(state): State<Shared>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    respond(&state, Protocol::OpenAi, &uri, &headers, &body).await
}

async fn anthropic(
    State(state): State<Shared>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    respond(&state, Protocol::Anthropic, &uri, &headers, &body).await
}

async fn respond(
    state: &Shared,
    protocol: Protocol,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> Response {
    let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let headers: BTreeMap<String, String> = headers
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                value.to_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let (reply, index, held) = {
        let mut state = state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.requests.push(RecordedRequest {
            protocol,
            path_and_query: uri
                .path_and_query()
                .map_or_else(String::new, ToString::to_string),
            headers,
            body: body.clone(),
            received_at: std::time::Instant::now(),
        });
        let index = state.requests.len();
        let held = state
            .hold
            .as_ref()
            .filter(|hold| index >= hold.from_request)
            .map(|hold| hold.open.clone());
        (state.replies.pop_front(), index, held)
    };
    if let Some(open) = held {
        let _ = open.acquire().await;
    }
    let Some(mut reply) = reply else {
        let message = format!("scripted llm: no reply scripted for request #{index}");
        return render_error(protocol, 400, Some(&message), None, None, &BTreeMap::new());
    };
    while let ScriptedReply::Delayed {
        delay_ms,
        reply: inner,
    } = reply
    {
        tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
        reply = *inner;
    }
    let render = Render {
        protocol,
        index,
        request: &body,
    };
    match reply {
        ScriptedReply::Error {
            status,
            message,
            error_type,
            code,
            retry_after_secs,
            retry_after_ms,
            mut headers,
        } => {
            if let Some(seconds) = retry_after_secs {
                headers.insert("retry-after".to_owned(), seconds.to_string());
            }
            if let Some(ms) = retry_after_ms {
                headers.insert("retry-after-ms".to_owned(), ms.to_string());
            }
            render_error(
                protocol,
                status,
                message.as_deref(),
                error_type.as_deref(),
                code.as_deref(),
                &headers,
            )
        }
        ScriptedReply::Raw {
            status,
            headers,
            body,
        } => with_headers(status, &headers, body),
        other => {
            let rendered = render.success(other);
            if body.get("stream") == Some(&Value::Bool(true)) {
                let events = render::to_sse(protocol, &rendered);
                (
                    StatusCode::OK,
                    [("content-type", "text/event-stream")],
                    events,
                )
                    .into_response()
            } else {
                (StatusCode::OK, axum::Json(rendered)).into_response()
            }
        }
    }
}
