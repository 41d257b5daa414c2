//! `relay llm ping` against the scripted server.

use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::llm::{ErrorKind, Role, ping};

use crate::support::settings_for;

#[tokio::test]
async fn ping_reports_provider_model_latency_and_usage() {
    let server = ScriptedLlm::start(vec![ScriptedReply::text("pong")]).await;
    let settings = settings_for("openai", &server.base_url(), "gpt-4o-mini");
    let report = ping(&settings, Role::Explore).await.unwrap();
    assert_eq!(report.reply, "pong");
    assert_eq!(report.usage.prompt_tokens, 10);
    let text = report.to_string();
    assert!(text.contains("provider: openai"), "{text}");
    assert!(text.contains("model:    gpt-4o-mini"), "{text}");
    assert!(
        text.contains("tokens:   prompt=10 completion=5 cached=0"),
        "{text}"
    );
    assert!(text.contains("latency:  "), "{text}");

    let request = &server.requests()[0];
    assert_eq!(request.headers["authorization"], "Bearer sk-test-secret");
    assert_eq!(request.body["max_completion_tokens"], 64);
}

#[tokio::test]
async fn ping_fails_fast_with_the_classified_error() {
    let server = ScriptedLlm::start(vec![
        ScriptedReply::error(429),
        ScriptedReply::text("unused"),
    ])
    .await;
    let settings = settings_for("anthropic", &server.base_url(), "claude-haiku-4-5");
    let error = ping(&settings, Role::Planner).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::RateLimited);
    assert_eq!(server.requests().len(), 1, "ping does not retry");

    let unauthorized = ScriptedLlm::start(vec![ScriptedReply::error(401)]).await;
    let settings = settings_for("anthropic", &unauthorized.base_url(), "claude-haiku-4-5");
    let error = ping(&settings, Role::Planner).await.unwrap_err();
    assert_eq!(error.to_string(), "authentication failed: scripted error");
}

#[tokio::test]
async fn azure_dialect_uses_api_key_header_and_api_version() {
    let server = ScriptedLlm::start(vec![ScriptedReply::text("pong")]).await;
    let settings = crate::support::settings_with(
        "openai",
        &server.base_url(),
        "gpt-4o",
        "dialect = \"azure\"\napi_version = \"2024-10-21\"",
    );
    ping(&settings, Role::Spec).await.unwrap();
    let request = &server.requests()[0];
    assert_eq!(request.headers["api-key"], "sk-test-secret");
    assert!(!request.headers.contains_key("authorization"));
    assert_eq!(
        request.path_and_query,
        "/v1/chat/completions?api-version=2024-10-21"
    );
}

/// A provider answering with a redirect to another origin: neither `x-api-key` (Anthropic) nor
/// `api-key` (Azure) follows it; the other server is never asked and the call fails.
#[tokio::test]
async fn api_keys_never_follow_a_redirect_to_another_origin() {
    for (provider, model, extra, path) in [
        ("anthropic", "claude-haiku-4-5", "", "/v1/messages"),
        (
            "openai",
            "gpt-4o",
            "dialect = \"azure\"\napi_version = \"2024-10-21\"",
            "/v1/chat/completions",
        ),
    ] {
        let elsewhere = ScriptedLlm::start(vec![ScriptedReply::text("pong")]).await;
        let location = elsewhere
            .base_url()
            .replace("127.0.0.1", "localhost")
            .trim_end_matches('/')
            .to_owned()
            + path;
        let redirect = ScriptedReply::Raw {
            status: 307,
            headers: [("location".to_owned(), location)].into_iter().collect(),
            body: serde_json::Value::Null,
        };
        let server = ScriptedLlm::start(vec![redirect.clone(), redirect]).await;
        let settings = crate::support::settings_with(
            provider,
            &server.base_url(),
            model,
            &format!("max_retries = 0\n{extra}"),
        );
        ping(&settings, Role::Planner).await.unwrap_err();
        assert!(!server.requests().is_empty(), "{provider}");
        assert!(
            elsewhere.requests().is_empty(),
            "{provider}: the key went to another origin"
        );
    }
}

/// An answer larger than the cap is refused without being held whole.
#[tokio::test]
async fn an_oversized_answer_is_refused() {
    let huge = ScriptedReply::Raw {
        status: 200,
        headers: Default::default(),
        body: serde_json::json!({ "padding": "x".repeat(17 * 1024 * 1024) }),
    };
    let server = ScriptedLlm::start(vec![huge]).await;
    let settings = crate::support::settings_with(
        "anthropic",
        &server.base_url(),
        "claude-haiku-4-5",
        "max_retries = 0",
    );
    let error = ping(&settings, Role::Planner).await.unwrap_err();
    assert!(error.to_string().contains("larger than 16 MiB"), "{error}");
}
