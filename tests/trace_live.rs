//! The run trace of a real job, live: a signed mention → gateway → job; an SSE client on
//! `GET /api/jobs/{id}/events` (real HTTP, the API token) sees the job's events while it runs —
//! the scripted LLM holds the planner's second call, so the run is provably in flight — then the
//! rest in order, then `end`.

use std::time::Duration;

use relay_agent::llm::scripted::ScriptedLlm;
use relay_gateway::ApiSettings;
use relay_tracker::fake::FakeGitHub;
use serde_json::Value;
use sqlx::PgPool;

use crate::helpers::state;
use crate::orchestrator::{accept_mention, happy_script};

const API_TOKEN: &str = "trace-live-api-token";
/// A guard against a hung stream, never a timing assertion.
const HANG: Duration = Duration::from_secs(60);

/// `(event, data)` of each SSE event in `text`, keep-alive comments skipped.
fn parse(text: &str) -> Vec<(String, Value)> {
    text.split("\n\n")
        .filter_map(|block| {
            let mut event = "message".to_owned();
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    event = v.trim().to_owned();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
            (!data.is_empty()).then(|| (event, serde_json::from_str(&data).unwrap()))
        })
        .collect()
}

/// What an event is, in one word: its phase, decision, action or tool.
fn what(data: &Value) -> String {
    let p = &data["payload"];
    let key = ["tool", "decision", "action"]
        .into_iter()
        .find_map(|k| p[k].as_str());
    match (p["stage"].as_str(), p["phase"].as_str(), key) {
        (Some(stage), Some(phase), _) => format!("{stage}:{phase}"),
        (_, _, Some(key)) => key.to_owned(),
        _ => p["role"].as_str().unwrap_or_default().to_owned(),
    }
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_running_jobs_trace_streams_live_then_ends(pool: PgPool) {
    let github = FakeGitHub::start().await;
    github.seed_issue(
        "Codertocat/Hello-World",
        1,
        "Retries",
        "Can retries be configured?",
    );
    github.set_permission("Codertocat/Hello-World", "Codertocat", "admin");
    let llm = ScriptedLlm::start(happy_script()).await;
    // Request 4 is the planner's decision, after the explore: held until we saw the explore live.
    llm.hold_from(4);
    let mention = accept_mention(&pool, &github, &llm).await;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = relay_gateway::app(state(pool.clone()).with_api(ApiSettings {
        token: Some(API_TOKEN.to_owned().into()),
    }));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let mut response = reqwest::Client::new()
        .get(format!("{base}/api/jobs/{}/events", mention.job))
        .bearer_auth(API_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::OK);

    let job = mention.job;
    let running = tokio::spawn(async move {
        mention.run().await;
    });

    // Live: the explore's end arrives while the planner's next call is held, so the job runs.
    let mut text = String::new();
    while !parse(&text).iter().any(|(_, d)| what(d) == "explore:end") {
        let chunk = tokio::time::timeout(HANG, response.chunk())
            .await
            .expect("the stream hung")
            .unwrap()
            .expect("the stream ended early");
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    let status: String = sqlx::query_scalar("SELECT status FROM jobs WHERE id = $1")
        .bind(job)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(status, "running", "the events came while the job ran");
    assert_eq!(llm.requests().len(), 4, "the decision is still held");

    llm.release();
    while let Some(chunk) = tokio::time::timeout(HANG, response.chunk())
        .await
        .expect("the stream hung")
        .unwrap()
    {
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    running.await.unwrap();

    let events = parse(&text);
    let (last, _) = events.last().unwrap();
    assert_eq!(
        last, "end",
        "the stream ends with `end` once the job finished"
    );
    let trace: Vec<(String, String, String)> = events[..events.len() - 1]
        .iter()
        .map(|(event, data)| {
            (
                data["agent"].as_str().unwrap().to_owned(),
                event.clone(),
                what(data),
            )
        })
        .collect();
    let expected: Vec<(String, String, String)> = [
        ("worker", "stage", "job:begin"),
        ("orchestrator", "stage", "cycle:begin"),
        ("planner", "stage", "planner:begin"),
        ("planner", "llm_call", "planner"),
        ("explore#1", "stage", "explore:begin"),
        ("explore#1", "llm_call", "explore"),
        ("explore#1", "tool_start", "grep"),
        ("explore#1", "tool_call", "grep"),
        ("explore#1", "llm_call", "explore"),
        ("explore#1", "stage", "explore:end"),
        ("planner", "llm_call", "planner"),
        ("planner", "decision", "submit_actions"),
        ("planner", "stage", "planner:end"),
        ("executor", "action", "post_comment"),
        ("executor", "action", "update_gaps"),
        ("orchestrator", "stage", "cycle:end"),
        // The acknowledgement reaction and the comment.
        ("orchestrator", "action", "tracker_write"),
        ("orchestrator", "action", "tracker_write"),
        // The next cycle finds nothing pending.
        ("orchestrator", "stage", "cycle:begin"),
        ("orchestrator", "stage", "cycle:end"),
        ("worker", "stage", "job:end"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(trace, expected);
    let cursors: Vec<i64> = events[..events.len() - 1]
        .iter()
        .map(|(_, d)| d["cursor"].as_i64().unwrap())
        .collect();
    assert!(cursors.windows(2).all(|w| w[0] < w[1]), "{cursors:?}");
    assert_eq!(events.last().unwrap().1["runs"][0]["outcome"], "succeeded");
}
