//! Measures the LLM layer's own overhead (no model involved):
//! - a full `LlmClient::complete` round trip against the scripted server on loopback
//!   (request building, HTTP, parsing, usage accounting), sequentially;
//! - validating and deserializing a structured reply (`parse_reply`);
//! - adapting a schema to strict mode.
//!
//! Run: `cargo run --release -p relay-agent --features test-support --example llm_bench [calls]`

use std::time::{Duration, Instant};

use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::llm::structured::parse_reply;
use relay_agent::llm::{ChatRequest, LlmClient, LlmSettings, Message, Role, schema};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, Deserialize, JsonSchema)]
#[expect(dead_code, reason = "fields exist for the schema")]
struct Step {
    title: String,
    files: Vec<String>,
    estimate_hours: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[expect(dead_code, reason = "fields exist for the schema")]
struct Plan {
    summary: String,
    steps: Vec<Step>,
    open_questions: Vec<String>,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let calls: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(500);

    let server = ScriptedLlm::start(
        (0..calls + 10)
            .map(|_| ScriptedReply::text("pong"))
            .collect(),
    )
    .await;
    let settings: LlmSettings = toml::from_str(&format!(
        "[default]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"bench\"\napi_key = \"k\"\n",
        server.base_url()
    ))
    .unwrap();
    let client = LlmClient::from_settings(&settings, Role::Explore).unwrap();
    let request = ChatRequest::new(vec![
        Message::system("You are terse."),
        Message::user("ping"),
    ]);
    for _ in 0..10 {
        client.complete(&request).await.unwrap();
    }
    let mut latencies = Vec::with_capacity(calls);
    let started = Instant::now();
    for _ in 0..calls {
        let call = Instant::now();
        client.complete(&request).await.unwrap();
        latencies.push(call.elapsed());
    }
    let total = started.elapsed();
    latencies.sort();
    println!(
        "complete() round trip on loopback, {calls} sequential calls: p50 {:?}, p95 {:?}, p99 {:?}, {:.0} calls/s",
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.95),
        percentile(&latencies, 0.99),
        calls as f64 / total.as_secs_f64()
    );

    let plan_schema = schema::schema_for::<Plan>();
    let steps: Vec<_> = (0..20)
        .map(|i| json!({"title": format!("step {i}"), "files": ["src/a.rs", "src/b.rs"], "estimate_hours": null}))
        .collect();
    let reply =
        json!({"summary": "x".repeat(200), "steps": steps, "open_questions": ["why?"]}).to_string();
    let iterations = 2_000;
    let started = Instant::now();
    for _ in 0..iterations {
        let plan: Plan = parse_reply(&reply, &plan_schema).unwrap();
        std::hint::black_box(plan);
    }
    println!(
        "parse_reply (validate + deserialize) of a {}-byte plan with 20 steps: {:?} per reply",
        reply.len(),
        started.elapsed() / iterations
    );

    let started = Instant::now();
    for _ in 0..iterations {
        std::hint::black_box(schema::to_strict(&plan_schema).unwrap());
    }
    println!(
        "to_strict of the plan schema: {:?} per schema",
        started.elapsed() / iterations
    );
}
