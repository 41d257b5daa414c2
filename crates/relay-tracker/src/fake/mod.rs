//! Local GitHub and GitLab servers for tests (feature `test-support`): real axum servers on
//! 127.0.0.1 that speak the real paths, headers, pagination and error bodies, with response
//! shapes taken from the recorded responses in `tests/fixtures/api`. They keep issues, comments/discussions and reactions
//! in memory, record every request, and fail on script.
//!
//! ```text
//! let gh = FakeGitHub::start().await;
//! gh.add_token("ghp_test", "relay-bot");
//! gh.seed_issue("octo/hello", 1, "Title", "Body");
//! let human = gh.seed_comment("octo/hello", 1, "alice", "hi");
//! gh.fail_next("POST", "/repos/octo/hello/issues/1/comments", 1, Failure::Status(502));
//! // … point a GitHubClient at gh.base_url() …
//! assert_eq!(gh.comments("octo/hello", 1).len(), 2);
//! assert!(gh.requests().iter().any(|r| r.method == "POST"));
//! ```

mod github;
mod github_git;
mod github_json;
mod github_routes;
mod gitlab;
mod gitlab_issues;
pub mod gitlab_quick;
mod gitlab_routes;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

pub use github::{FakeComment, FakeGitHub, FakeIssue, FakeReaction};
pub use gitlab::{
    FakeAward, FakeDiscussion, FakeGitLab, FakeIssueState, FakeNote, FakeQuickAction,
};

/// The test-only GitHub App private key (PEM) the fake's App flow is usually set up with.
pub const TEST_APP_PRIVATE_KEY_PEM: &str =
    include_str!("../../test-keys/TEST-ONLY-github-app.private.pem");
/// Its public key, which the fake verifies App JWTs with.
pub const TEST_APP_PUBLIC_KEY_PEM: &str =
    include_str!("../../test-keys/TEST-ONLY-github-app.public.pem");

/// A scripted failure for the next N requests matching a method and path.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// GitHub: 422 `{"message":"Validation Failed","errors":[{…"message": text}]}`;
    /// GitLab: 400 `{"message":{"base":[text]}}`.
    Validation(String),
    /// GitHub secondary rate limit: 403 with the documented message, `retry-after` if given.
    /// (GitLab: a 429.)
    SecondaryRateLimit { retry_after: Option<u64> },
    /// GitHub primary rate limit: 403, `x-ratelimit-remaining: 0`, reset this many seconds ahead.
    PrimaryRateLimit { reset_in_secs: u64 },
    /// 429 with `Retry-After` if given (GitLab body `Retry later`).
    TooManyRequests { retry_after: Option<u64> },
    /// Any status with the provider's usual error body (401, 404, 500, 502, 503…).
    Status(u16),
    /// Answer normally, but only after this long (longer than the client timeout → timeout).
    Delay(Duration),
}

/// One request as the fake received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    /// Path without the query (as sent, percent-encoding kept).
    pub path: String,
    pub query: Option<String>,
    /// Header names lowercase.
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// What the fake answered (status and body), once it did: the contract tests check it
    /// against the tracker's published response schemas.
    pub response: Option<RecordedResponse>,
}

/// A fake's answer to a [`RecordedRequest`].
#[derive(Debug, Clone)]
pub struct RecordedResponse {
    pub status: u16,
    pub body: String,
}

/// Answers bigger than this are recorded without their body (no fake answer comes close).
const MAX_RECORDED_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

/// Records a fake's answer on the latest request still without one (the contract tests send one
/// request at a time), passing the answer on unchanged.
pub(crate) async fn record_response(
    recorder: impl FnOnce(RecordedResponse),
    response: Response,
) -> Response {
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_RECORDED_RESPONSE_BYTES)
        .await
        .unwrap_or_default();
    recorder(RecordedResponse {
        status: parts.status.as_u16(),
        body: String::from_utf8_lossy(&bytes).into_owned(),
    });
    Response::from_parts(parts, axum::body::Body::from(bytes))
}

impl RecordedRequest {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` if it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }

    pub fn is_write(&self) -> bool {
        matches!(self.method.as_str(), "POST" | "PUT" | "PATCH")
    }
}

#[derive(Debug)]
struct Script {
    method: String,
    path: String,
    remaining: usize,
    /// A time-boxed fault: matches until then (whatever `remaining` says).
    until: Option<std::time::Instant>,
    failure: Failure,
}

/// Recording and scripting, shared by both fakes.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    requests: Vec<RecordedRequest>,
    scripts: Vec<Script>,
}

impl Recorder {
    fn record(&mut self, method: &Method, uri: &Uri, headers: &HeaderMap, body: &Bytes) {
        self.requests.push(RecordedRequest {
            method: method.to_string(),
            path: uri.path().to_owned(),
            query: uri.query().map(str::to_owned),
            headers: headers
                .iter()
                .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
                .collect(),
            body: String::from_utf8_lossy(body).into_owned(),
            response: None,
        });
    }

    /// Attaches `response` to the latest request that has none.
    pub(crate) fn answer(&mut self, response: RecordedResponse) {
        if let Some(request) = self
            .requests
            .iter_mut()
            .rev()
            .find(|r| r.response.is_none())
        {
            request.response = Some(response);
        }
    }

    /// The failure scripted for this request, if any (consumes one).
    fn take_failure(&mut self, method: &Method, path: &str) -> Option<Failure> {
        let now = std::time::Instant::now();
        let script = self.scripts.iter_mut().find(|s| {
            let live = match s.until {
                Some(until) => now < until,
                None => s.remaining > 0,
            };
            live && s.method == method.as_str() && s.path == path
        })?;
        script.remaining = script.remaining.saturating_sub(1);
        Some(script.failure.clone())
    }

    fn script(&mut self, method: &str, path: &str, times: usize, failure: Failure) {
        self.scripts.push(Script {
            method: method.to_ascii_uppercase(),
            path: path.to_owned(),
            remaining: times,
            until: None,
            failure,
        });
    }

    fn script_for(&mut self, method: &str, path: &str, lasting: Duration, failure: Failure) {
        self.scripts.push(Script {
            method: method.to_ascii_uppercase(),
            path: path.to_owned(),
            remaining: 0,
            until: Some(std::time::Instant::now() + lasting),
            failure,
        });
    }
}

/// A running server; stops when dropped.
struct Server {
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    async fn start(router: axum::Router) -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a local port for the fake tracker");
        let addr = listener.local_addr().expect("local address");
        let task = tokio::spawn(async move {
            axum::serve(listener, router)
                .await
                .expect("fake tracker server");
        });
        Server { addr, task }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A JSON answer.
pub(crate) fn json_response(status: StatusCode, body: serde_json::Value) -> Response {
    (status, axum::Json(body)).into_response()
}

/// Locks a fake's state; a panicking test thread must not hide the original failure.
pub(crate) fn lock<T>(m: &Arc<Mutex<T>>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `page` and `per_page` of a query string (GitHub default 30, GitLab 20; max 100 on both).
pub(crate) fn page_params(query: Option<&str>, default_per_page: usize) -> (usize, usize) {
    let mut page = 1;
    let mut per_page = default_per_page;
    for pair in query.unwrap_or("").split('&') {
        let mut kv = pair.splitn(2, '=');
        match (kv.next(), kv.next().and_then(|v| v.parse::<usize>().ok())) {
            (Some("page"), Some(v)) if v >= 1 => page = v,
            (Some("per_page"), Some(v)) if v >= 1 => per_page = v.min(100),
            _ => {}
        }
    }
    (page, per_page)
}

/// A query parameter's value (not decoded beyond `%2F`/`+`, enough for usernames).
pub(crate) fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    query?.split('&').find_map(|pair| {
        let mut kv = pair.splitn(2, '=');
        (kv.next() == Some(name)).then(|| kv.next().unwrap_or("").replace('+', " "))
    })
}

/// Settings of a tracker pointing at a fake: pacing off, 30 s timeout; adjust the public fields
/// as a test needs.
pub fn tracker_settings(
    provider: relay_core::Provider,
    base_url: String,
    token: &str,
    bot_username: &str,
) -> relay_core::TrackerSettings {
    relay_core::TrackerSettings {
        name: relay_core::TrackerName::parse(provider.as_str()).expect("valid name"),
        provider,
        base_url,
        token: secrecy::SecretString::from(token),
        webhook_secret: secrecy::SecretString::from("fake-webhook-secret"),
        bot_username: bot_username.into(),
        trigger_labels: Vec::new(),
        app_id: None,
        private_key_path: None,
        private_key: None,
        auth: relay_core::TokenAuth::Token,
        write_rate_per_sec: 0.0,
        write_burst: relay_core::tracker::DEFAULT_WRITE_BURST,
        request_timeout_secs: relay_core::tracker::DEFAULT_TRACKER_REQUEST_TIMEOUT_SECS,
        projects: None,
        related: Default::default(),
    }
}
