//! A figure, not a check: the time from a mention whose webhook never arrives to the bot's reply,
//! with the reconciler and the worker running on their own (`[reconcile] interval_secs = 5`, the
//! worker woken by the reconciler's NOTIFY), p50 over `MENTIONS` mentions made at random moments
//! of the interval, against the same mentions with their webhook delivered (same run). Run it with
//! `cargo test -p relay-tests --test integration reconcile_latency -- --ignored --nocapture`.

use std::time::{Duration, Instant};

use relay_agent::llm::scripted::ScriptedReply;
use serde_json::json;
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

use crate::reconcile::GitHubHarness;

/// How many timed mentions (after one warm-up that clones the checkout).
const MENTIONS: usize = 20;
/// Longest wait for one reply before the run is declared broken.
const REPLY_DEADLINE: Duration = Duration::from_secs(60);

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

async fn wait_for_replies(h: &GitHubHarness, count: usize) {
    let start = Instant::now();
    while h.bot_comments().len() < count {
        assert!(
            start.elapsed() < REPLY_DEADLINE,
            "no reply {count} within {REPLY_DEADLINE:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
#[ignore = "a latency figure; run with --ignored --nocapture"]
async fn lost_mention_to_reply_latency(pool: PgPool) {
    let h = GitHubHarness::start(pool).await;
    h.see_issue_opened().await;
    let shutdown = CancellationToken::new();
    let worker_task = tokio::spawn(h.worker.clone().run(shutdown.clone()));
    let reconciler_task = tokio::spawn(h.reconciler.clone().run(shutdown.clone()));

    // Warm-up: the first mention clones the checkout (the planner's four-step script).
    h.github.seed_comment(
        crate::reconcile::REPO,
        1,
        "Codertocat",
        "@relay-bot warm up?",
    );
    wait_for_replies(&h, 1).await;

    let mut latencies = Vec::with_capacity(MENTIONS);
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    for i in 0..MENTIONS {
        // A random moment of the 5 s interval.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        tokio::time::sleep(Duration::from_millis(seed % 5000)).await;
        h.llm.push([ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [{"type": "post_comment", "content": format!("Answer {i}.")}]}),
        )])]);
        let made = Instant::now();
        h.github.seed_comment(
            crate::reconcile::REPO,
            1,
            "Codertocat",
            &format!("@relay-bot question {i}?"),
        );
        wait_for_replies(&h, i + 2).await;
        latencies.push(made.elapsed());
    }
    // The baseline, same run: the same mentions with their webhook delivered at once.
    let mut baseline = Vec::with_capacity(MENTIONS);
    for i in 0..MENTIONS {
        h.llm.push([ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [{"type": "post_comment", "content": format!("Webhook answer {i}.")}]}),
        )])]);
        let body = format!("@relay-bot webhook question {i}?");
        let made = Instant::now();
        let comment = h
            .github
            .seed_comment(crate::reconcile::REPO, 1, "Codertocat", &body);
        let answer = h
            .deliver_comment(comment, "Codertocat", &body, &format!("lat-{i}"))
            .await;
        assert!(answer.status.is_success(), "{:?}", answer.body);
        wait_for_replies(&h, MENTIONS + i + 2).await;
        baseline.push(made.elapsed());
    }
    shutdown.cancel();
    let _ = worker_task.await;
    let _ = reconciler_task.await;
    latencies.sort();
    let mean = latencies.iter().sum::<Duration>() / u32::try_from(MENTIONS).unwrap();
    println!(
        "lost mention -> reply with interval_secs = 5 over {MENTIONS} mentions: p50 {:?}, \
         p90 {:?}, mean {mean:?}, min {:?}, max {:?}",
        quantile(&latencies, 0.50),
        quantile(&latencies, 0.90),
        latencies[0],
        latencies[MENTIONS - 1],
    );
    baseline.sort();
    println!(
        "baseline, webhook delivered at once, same run: p50 {:?}, p90 {:?}; lost/baseline p50 ratio {:.1}",
        quantile(&baseline, 0.50),
        quantile(&baseline, 0.90),
        quantile(&latencies, 0.50).as_secs_f64() / quantile(&baseline, 0.50).as_secs_f64(),
    );
}
