//! LLM usage rows: the worker's `StoreUsageSink` writes one row per call (through the agent's
//! `UsageSink` seam) against the scripted LLM server over real HTTP.

use relay_core::{IssueId, JobId};
use std::sync::Arc;

use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply, ScriptedUsage};
use relay_agent::llm::{ChatRequest, LlmClient, LlmSettings, Message, Role, UsageContext};
use relay_worker::llm_usage::StoreUsageSink;
use sqlx::PgPool;

fn usage_reply(text: &str) -> ScriptedReply {
    ScriptedReply::Text {
        text: text.into(),
        usage: ScriptedUsage {
            prompt_tokens: 1200,
            completion_tokens: 80,
            cached_tokens: 1000,
        },
    }
}

/// A planner client for the scripted server with a fast, jitter-free retry policy.
fn client(base_url: &str) -> LlmClient {
    let settings: LlmSettings = toml::from_str(&format!(
        r#"
        [default]
        provider = "openai"
        base_url = "{base_url}"
        model = "gpt-4o"
        api_key = "sk-test-secret"
        max_output_tokens = 1024
        timeout_secs = 10
        "#
    ))
    .expect("test settings parse");
    LlmClient::from_settings(&settings, Role::Planner)
        .expect("client builds")
        .with_retry_policy(relay_agent::llm::RetryPolicy {
            initial_backoff: std::time::Duration::from_millis(1),
            max_backoff: std::time::Duration::from_millis(5),
            jitter: false,
            ..Default::default()
        })
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn every_call_is_recorded_in_postgres(pool: PgPool) {
    let server = ScriptedLlm::start(vec![
        ScriptedReply::rate_limited(1),
        usage_reply("a"),
        ScriptedReply::error(401),
    ])
    .await;
    let client = client(&server.base_url())
        .with_usage_sink(Arc::new(StoreUsageSink::new(pool.clone())))
        .with_context(UsageContext {
            job_id: Some(JobId(41)),
            issue_id: Some(IssueId(9)),
        });
    let request = ChatRequest::new(vec![Message::user("hi")]);
    client.complete(&request).await.unwrap();
    client.complete(&request).await.unwrap_err();

    let rows = relay_store::llm_usage::for_job(&pool, JobId(41))
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
    let ok = &rows[0];
    assert_eq!(
        (ok.role.as_str(), ok.provider.as_str(), ok.model.as_str()),
        ("planner", "openai", "gpt-4o")
    );
    assert_eq!(
        (ok.prompt_tokens, ok.completion_tokens, ok.cached_tokens),
        (1200, 80, 1000)
    );
    assert_eq!(ok.attempts, 2);
    assert_eq!(ok.outcome, "ok");
    assert_eq!(ok.issue_id, Some(relay_core::IssueId(9)));
    let failed = &rows[1];
    assert_eq!(failed.outcome, "error");
    assert_eq!(failed.error_kind.as_deref(), Some("authentication"));
    assert_eq!(failed.prompt_tokens, 0);
}

/// A response without `usage` (some compatible servers, a stream that lost its last chunk) is
/// counted from the bytes exchanged and marked estimated: never a free call.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_response_without_usage_is_estimated_not_zero(pool: PgPool) {
    let no_usage = serde_json::json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-4o",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": "an answer of some length"},
            "finish_reason": "stop"
        }]
    });
    let server =
        ScriptedLlm::start(vec![ScriptedReply::raw(200, no_usage), usage_reply("b")]).await;
    let client = client(&server.base_url())
        .with_usage_sink(Arc::new(StoreUsageSink::new(pool.clone())))
        .with_context(UsageContext {
            job_id: Some(JobId(1)),
            issue_id: Some(IssueId(2)),
        });
    let prompt = "x".repeat(4000);
    let request = ChatRequest::new(vec![Message::user(prompt)]);
    let reply = client.complete(&request).await.unwrap();
    assert!(reply.usage.estimated);
    // At least the 4,000 bytes of the prompt, four per token.
    assert!(reply.usage.prompt_tokens >= 1000, "{:?}", reply.usage);
    assert!(reply.usage.completion_tokens > 0, "{:?}", reply.usage);
    let reported = client.complete(&request).await.unwrap();
    assert!(!reported.usage.estimated);

    let rows = relay_store::llm_usage::for_job(&pool, JobId(1))
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows[0].estimated);
    assert_eq!(rows[0].prompt_tokens, reply.usage.prompt_tokens as i64);
    assert_eq!(
        rows[0].completion_tokens,
        reply.usage.completion_tokens as i64
    );
    assert!(!rows[1].estimated);
    assert_eq!(rows[1].prompt_tokens, 1200);
}
