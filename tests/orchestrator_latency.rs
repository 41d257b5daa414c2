//! A figure, not a check: Relay's own latency from a GitLab webhook accepted by the gateway to
//! the first LLM request of its job (scripted LLM, warm checkout), p50/p99 over
//! `MENTIONS` mentions. Run it with
//! `cargo test -p relay-tests --test integration orchestrator_latency -- --ignored --nocapture`.
//! The job starts when the test drains the queue right after the webhook is accepted, so the
//! queue's poll interval is not in the figure; the GitLab harness has no code graph.

use relay_core::JobId;
use std::time::Duration;

use relay_agent::llm::scripted::ScriptedReply;
use relay_worker::Outcome;
use serde_json::json;
use sqlx::PgPool;

use crate::orchestrator_gitlab::{GitLabHarness, ISSUE, PROJECT, REPORTER, mention};

/// How many timed mentions (after one warm-up that clones the checkout).
const MENTIONS: usize = 50;

/// The `q` quantile (0..=1) of sorted `values`, nearest rank.
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
#[ignore = "a latency figure; run with --ignored --nocapture"]
async fn webhook_to_first_llm_request_latency(pool: PgPool) {
    let h = GitLabHarness::start(pool, Vec::new()).await;
    // Warm-up: clones the checkout, opens the issue.
    mention(&h).await;

    let mut latencies = Vec::with_capacity(MENTIONS);
    for i in 0..MENTIONS {
        let body = format!("@relay question {i}: can retries be configured?");
        let (discussion, note) = h.gitlab.seed_note(PROJECT, ISSUE, REPORTER, &body, false);
        h.llm.push([ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [
                {"type": "post_comment", "reply_to": discussion, "content": format!("Answer {i}.")}
            ]}),
        )])]);
        let before = h.llm.requests().len();
        let answer = h
            .deliver(REPORTER, &body, note, &discussion, &format!("gl-lat-{i}"))
            .await;
        // The webhook is accepted when the gateway answers.
        let accepted = std::time::Instant::now();
        assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
        let job = answer.body["job"].as_i64().unwrap();
        assert_eq!(
            h.drain().await,
            vec![Outcome::Succeeded { job_id: JobId(job) }]
        );
        let first = h.llm.requests()[before].received_at;
        latencies.push(first.saturating_duration_since(accepted));
    }
    latencies.sort();
    let mean = latencies.iter().sum::<Duration>() / u32::try_from(MENTIONS).unwrap();
    println!(
        "webhook accepted -> first LLM request over {MENTIONS} mentions: p50 {:?}, p99 {:?}, \
         mean {mean:?}, min {:?}, max {:?}",
        quantile(&latencies, 0.50),
        quantile(&latencies, 0.99),
        latencies[0],
        latencies[MENTIONS - 1],
    );
}
