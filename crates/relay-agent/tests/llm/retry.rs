//! Retries, deadline and fallback models under paused time (fake providers), plus one real HTTP
//! 429-then-200 through the scripted server.

use std::sync::Arc;
use std::time::Duration;

use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::llm::{
    ChatRequest, ErrorKind, LlmClient, LlmError, Message, RetryPolicy, Role, TokenBudget,
};
use tokio::time::Instant;

use crate::support::{CollectingSink, FakeProvider, client_for, ok};

fn request() -> ChatRequest {
    ChatRequest::new(vec![Message::user("hi")])
}

fn policy() -> RetryPolicy {
    RetryPolicy {
        jitter: false,
        ..RetryPolicy::default()
    }
}

fn rate_limited(retry_after: Option<Duration>) -> Result<relay_agent::llm::ChatResponse, LlmError> {
    Err(LlmError::RateLimited {
        retry_after,
        message: "slow down".into(),
    })
}

fn server_error() -> Result<relay_agent::llm::ChatResponse, LlmError> {
    Err(LlmError::Server {
        status: 500,
        message: "boom".into(),
    })
}

fn client(provider: &Arc<FakeProvider>) -> LlmClient {
    LlmClient::new(provider.clone(), Role::Explore, "primary").with_retry_policy(policy())
}

#[tokio::test(start_paused = true)]
async fn honours_retry_after() {
    let provider = FakeProvider::new(vec![rate_limited(Some(Duration::from_secs(7))), ok("done")]);
    let started = Instant::now();
    let response = client(&provider).complete(&request()).await.unwrap();
    assert_eq!(response.text(), "done");
    assert_eq!(started.elapsed(), Duration::from_secs(7));
    assert_eq!(provider.calls(), ["primary", "primary"]);
}

#[tokio::test(start_paused = true)]
async fn backs_off_exponentially_without_retry_after() {
    let provider = FakeProvider::new(vec![
        server_error(),
        server_error(),
        server_error(),
        ok("done"),
    ]);
    let started = Instant::now();
    client(&provider).complete(&request()).await.unwrap();
    // 0.5 s + 1 s + 2 s.
    assert_eq!(started.elapsed(), Duration::from_millis(3500));
    assert_eq!(provider.calls().len(), 4);
}

#[tokio::test(start_paused = true)]
async fn jitter_stays_between_75_and_100_percent() {
    let retry = RetryPolicy::default();
    let error = LlmError::Timeout(Duration::from_secs(1));
    for attempt in 1..=6 {
        let full = Duration::from_millis(500)
            .saturating_mul(1 << (attempt - 1))
            .min(Duration::from_secs(8));
        let delay = retry.delay(attempt, &error);
        assert!(
            delay <= full && delay >= full.mul_f64(0.75),
            "attempt {attempt}: {delay:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn client_errors_are_not_retried() {
    let provider = FakeProvider::new(vec![
        Err(LlmError::InvalidRequest {
            status: 400,
            message: "bad".into(),
        }),
        Err(LlmError::Authentication("bad key".into())),
        Err(LlmError::ContextLengthExceeded("too long".into())),
    ]);
    let client = client(&provider).with_fallback_models(vec!["fallback".into()]);
    for expected in [
        ErrorKind::InvalidRequest,
        ErrorKind::Authentication,
        ErrorKind::ContextLength,
    ] {
        let started = Instant::now();
        assert_eq!(
            client.complete(&request()).await.unwrap_err().kind(),
            expected
        );
        assert_eq!(started.elapsed(), Duration::ZERO);
    }
    assert_eq!(
        provider.calls(),
        ["primary", "primary", "primary"],
        "no retry and no fallback"
    );
}

#[tokio::test(start_paused = true)]
async fn falls_back_after_retries_are_exhausted_and_records_each_model() {
    let mut results: Vec<_> = (0..4).map(|_| rate_limited(None)).collect();
    results.push(Err(LlmError::Overloaded {
        retry_after: None,
        message: "overloaded".into(),
    }));
    results.push(ok("from the fallback"));
    let provider = FakeProvider::new(results);
    let sink = Arc::new(CollectingSink::default());
    let client = LlmClient::new(provider.clone(), Role::Planner, "primary")
        .with_retry_policy(RetryPolicy {
            max_retries: 3,
            ..policy()
        })
        .with_fallback_models(vec!["fallback-1".into(), "fallback-2".into()])
        .with_usage_sink(sink.clone());
    let response = client.complete(&request()).await;
    // The primary stays rate-limited through its retries; fallback-1 is retried after its
    // overloaded error and then answers, so fallback-2 is never asked.
    assert_eq!(response.unwrap().text(), "from the fallback");
    assert_eq!(
        provider.calls(),
        [
            "primary",
            "primary",
            "primary",
            "primary",
            "fallback-1",
            "fallback-1"
        ]
    );

    let records = sink.records();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0].model, "primary");
    assert_eq!(records[0].attempts, 4);
    assert_eq!(records[0].error, Some(ErrorKind::RateLimited));
    assert_eq!(records[0].usage.total(), 0);
    assert_eq!(records[1].model, "fallback-1");
    assert_eq!(records[1].attempts, 2);
    assert_eq!(records[1].error, None);
    assert_eq!(records[1].usage.prompt_tokens, 100);
    // Backoff 0.5 + 1 + 2 on the primary, 0.5 on the fallback.
    assert_eq!(records[0].latency, Duration::from_millis(3500));
    assert_eq!(records[1].latency, Duration::from_millis(500));
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_beyond_the_deadline_moves_on_at_once() {
    let provider = FakeProvider::new(vec![
        rate_limited(Some(Duration::from_secs(3600))),
        ok("fallback answer"),
    ]);
    let client = client(&provider)
        .with_retry_policy(RetryPolicy {
            deadline: Duration::from_secs(60),
            ..policy()
        })
        .with_fallback_models(vec!["fallback".into()]);
    let started = Instant::now();
    let response = client.complete(&request()).await.unwrap();
    assert_eq!(response.text(), "fallback answer");
    assert_eq!(started.elapsed(), Duration::ZERO);
    assert_eq!(provider.calls(), ["primary", "fallback"]);
}

#[tokio::test(start_paused = true)]
async fn deadline_exceeded_reports_the_last_error() {
    let provider = FakeProvider::new(vec![
        rate_limited(Some(Duration::from_secs(40))),
        rate_limited(Some(Duration::from_secs(40))),
    ]);
    let client = client(&provider).with_retry_policy(RetryPolicy {
        deadline: Duration::from_secs(60),
        ..policy()
    });
    let error = client.complete(&request()).await.unwrap_err();
    match error {
        LlmError::DeadlineExceeded { attempts, last, .. } => {
            assert_eq!(attempts, 2);
            assert_eq!(last.kind(), ErrorKind::RateLimited);
        }
        other => panic!("expected a deadline error, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_hung_provider_is_cut_off_at_the_deadline() {
    #[derive(Debug)]
    struct Hung;
    #[async_trait::async_trait]
    impl relay_agent::llm::Provider for Hung {
        fn kind(&self) -> relay_agent::llm::ProviderKind {
            relay_agent::llm::ProviderKind::Anthropic
        }
        async fn send(
            &self,
            _: &str,
            _: &ChatRequest,
        ) -> Result<relay_agent::llm::ChatResponse, LlmError> {
            std::future::pending().await
        }
    }
    let client =
        LlmClient::new(Arc::new(Hung), Role::Spec, "model").with_retry_policy(RetryPolicy {
            deadline: Duration::from_secs(30),
            max_retries: 0,
            ..policy()
        });
    let started = Instant::now();
    let error = client.complete(&request()).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Timeout);
    assert_eq!(started.elapsed(), Duration::from_secs(30));
}

#[tokio::test(start_paused = true)]
async fn budget_stops_the_caller_once_spent() {
    let provider = FakeProvider::new(vec![ok("one"), ok("two")]);
    let budget = Arc::new(TokenBudget::new(150).with_soft_limit(100));
    let client = client(&provider).with_budget(budget.clone());
    client.complete(&request()).await.unwrap();
    assert_eq!(budget.used(), 110);
    assert_eq!(budget.state(), relay_agent::llm::budget::BudgetState::Low);
    client.complete(&request()).await.unwrap();
    assert_eq!(
        budget.state(),
        relay_agent::llm::budget::BudgetState::Exhausted
    );
    let error = client.complete(&request()).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "token budget exhausted: 220 of 150 tokens used"
    );
    assert_eq!(provider.calls().len(), 2, "the third call was never sent");
}

#[tokio::test]
async fn http_429_with_retry_after_ms_then_200() {
    let server = ScriptedLlm::start(vec![
        ScriptedReply::rate_limited(20),
        ScriptedReply::error(503),
        ScriptedReply::error(529),
        ScriptedReply::text("pong"),
    ])
    .await;
    let sink = Arc::new(CollectingSink::default());
    let client = client_for("openai", &server.base_url(), "gpt-4o").with_usage_sink(sink.clone());
    let response = client.complete(&request()).await.unwrap();
    assert_eq!(response.text(), "pong");
    assert_eq!(server.requests().len(), 4);
    assert_eq!(sink.records()[0].attempts, 4);
}

#[tokio::test]
async fn anthropic_529_overloaded_is_retried() {
    let server =
        ScriptedLlm::start(vec![ScriptedReply::error(529), ScriptedReply::text("ok")]).await;
    let client = client_for("anthropic", &server.base_url(), "claude-sonnet-4-5");
    assert_eq!(client.complete(&request()).await.unwrap().text(), "ok");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn connection_refused_is_a_network_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let client = client_for("openai", &format!("http://{address}/v1"), "gpt-4o").with_retry_policy(
        RetryPolicy {
            max_retries: 1,
            initial_backoff: Duration::from_millis(1),
            jitter: false,
            ..RetryPolicy::default()
        },
    );
    let error = client.complete(&request()).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Network, "{error}");
}

#[tokio::test]
async fn a_huge_retry_after_header_is_clamped_to_the_deadline_not_a_panic() {
    for (header, value) in [("retry-after", "1e20"), ("retry-after-ms", "1e300")] {
        let mut reply = ScriptedReply::error(429);
        if let ScriptedReply::Error { headers, .. } = &mut reply {
            headers.insert(header.to_owned(), value.to_owned());
        }
        let server = ScriptedLlm::start(vec![reply, ScriptedReply::text("never")]).await;
        let client = client_for("openai", &server.base_url(), "gpt-4o");
        let error = client.complete(&request()).await.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Deadline, "{header}: {error}");
        assert_eq!(server.requests().len(), 1, "{header}: no wait, no retry");
    }
}
