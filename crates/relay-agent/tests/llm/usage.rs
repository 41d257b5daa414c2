//! Usage accounting: metrics. (Rows in Postgres: `StoreUsageSink` in relay-worker, tested in
//! `tests/llm_usage.rs` at the workspace root.)

use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply, ScriptedUsage};
use relay_agent::llm::{ChatRequest, Message};

use crate::support::client_for;

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

#[tokio::test(flavor = "current_thread")]
async fn metrics_count_tokens_and_requests() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let _guard = metrics::set_default_local_recorder(&recorder);

    let server = ScriptedLlm::start(vec![usage_reply("a"), ScriptedReply::error(400)]).await;
    let client = client_for("anthropic", &server.base_url(), "claude-haiku-4-5");
    let request = ChatRequest::new(vec![Message::user("hi")]);
    client.complete(&request).await.unwrap();
    client.complete(&request).await.unwrap_err();

    let mut counters = Vec::new();
    let mut histograms = 0;
    for (key, _, _, value) in snapshotter.snapshot().into_vec() {
        let key = key.key();
        let mut labels: Vec<String> = key
            .labels()
            .map(|l| format!("{}={}", l.key(), l.value()))
            .collect();
        labels.sort();
        match value {
            DebugValue::Counter(count) if count > 0 => {
                counters.push(format!("{}{{{}}} {count}", key.name(), labels.join(",")))
            }
            DebugValue::Histogram(values) => histograms += values.len(),
            _ => {}
        }
    }
    counters.sort();
    assert_eq!(
        counters,
        [
            "relay_llm_requests_total{model=claude-haiku-4-5,outcome=invalid_request,role=planner} 1",
            "relay_llm_requests_total{model=claude-haiku-4-5,outcome=ok,role=planner} 1",
            "relay_llm_tokens_total{kind=cached,model=claude-haiku-4-5,role=planner} 1000",
            "relay_llm_tokens_total{kind=completion,model=claude-haiku-4-5,role=planner} 80",
            "relay_llm_tokens_total{kind=prompt,model=claude-haiku-4-5,role=planner} 1200",
        ]
    );
    assert_eq!(histograms, 2);
}

/// One `llm_call` trace event per call, named after the role, with tokens and the outcome.
#[tokio::test(flavor = "current_thread")]
async fn each_call_is_one_trace_event() {
    use relay_agent::trace::{MemoryTraceSink, TraceKind, Tracer};

    let server = ScriptedLlm::start(vec![usage_reply("a"), ScriptedReply::error(400)]).await;
    let sink = MemoryTraceSink::new();
    let client = client_for("anthropic", &server.base_url(), "claude-haiku-4-5")
        .with_tracer(&Tracer::new(sink.clone()));
    let request = ChatRequest::new(vec![Message::user("hi")]);
    client.complete(&request).await.unwrap();
    client.complete(&request).await.unwrap_err();

    let events = sink.events();
    assert_eq!(events.len(), 2);
    assert!(
        events
            .iter()
            .all(|e| e.kind == TraceKind::LlmCall && e.agent == "planner")
    );
    let first = &events[0].payload;
    assert_eq!(
        (
            &first["model"],
            &first["tokens_in"],
            &first["tokens_out"],
            &first["tokens_cached"],
            &first["outcome"]
        ),
        (
            &serde_json::json!("claude-haiku-4-5"),
            &serde_json::json!(1200),
            &serde_json::json!(80),
            &serde_json::json!(1000),
            &serde_json::json!("ok")
        )
    );
    assert_eq!(events[1].payload["outcome"], "invalid_request");
    assert_eq!(events[1].payload["tokens_in"], 0);
}

/// Usage arithmetic saturates: absurd counts from a provider neither wrap nor panic, and a budget
/// charged past `u64::MAX` stays exhausted.
#[test]
fn usage_arithmetic_saturates() {
    use relay_agent::llm::{TokenBudget, Usage, anthropic};

    let body = serde_json::json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
        "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": u64::MAX, "output_tokens": u64::MAX,
                  "cache_read_input_tokens": 5, "cache_creation_input_tokens": 7}
    });
    let response = anthropic::parse_response(body, None).unwrap();
    assert_eq!(response.usage.prompt_tokens, u64::MAX);
    assert_eq!(response.usage.total(), u64::MAX);
    let mut sum = response.usage;
    sum.add(&response.usage);
    assert_eq!(
        (sum.prompt_tokens, sum.completion_tokens, sum.cached_tokens),
        (u64::MAX, u64::MAX, 10)
    );
    let budget = TokenBudget::new(1_000);
    budget.charge(&response.usage);
    budget.charge(&Usage {
        prompt_tokens: 10,
        ..Usage::default()
    });
    assert_eq!(
        budget.used(),
        u64::MAX,
        "never wrapped back under the limit"
    );
    assert!(budget.check().is_err());
}
