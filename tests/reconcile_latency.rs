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

use crate::reconcile_harness::GitHubHarness;

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
        crate::reconcile_harness::REPO,
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
            crate::reconcile_harness::REPO,
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
            .seed_comment(crate::reconcile_harness::REPO, 1, "Codertocat", &body);
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

/// Transactions committed and rolled back in the current database, as the statistics say (each
/// of the reconciler's statements is its own transaction).
async fn transactions(pool: &PgPool) -> i64 {
    // Let every pooled session flush its pending statistics (Postgres does so after ~1 s idle).
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let mut conn = pool.acquire().await.unwrap();
    sqlx::query("SELECT pg_stat_clear_snapshot()")
        .execute(&mut *conn)
        .await
        .unwrap();
    sqlx::query_scalar(
        "SELECT (xact_commit + xact_rollback)::bigint FROM pg_stat_database
         WHERE datname = current_database()",
    )
    .fetch_one(&mut *conn)
    .await
    .unwrap()
}

/// A figure, not a check: the reconciler's database statements per idle pass over `projects`
/// listed projects (measured as transactions in `pg_stat_database`, less the measurement's own).
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
#[ignore = "a cost figure; run with --ignored --nocapture"]
async fn statements_per_idle_pass(pool: PgPool) {
    use relay_worker::reconcile::{PassOptions, ReconcileSettings, Reconciler};
    let github = relay_tracker::fake::FakeGitHub::start().await;
    for projects in [1usize, 500] {
        let mut tracker = github.settings("ghs_cost", "relay-bot");
        tracker.projects = Some((0..projects).map(|i| format!("cost/repo-{i}")).collect());
        let mut clients = relay_tracker::Trackers::default();
        clients.insert(
            tracker.name.clone(),
            relay_tracker::build(&tracker).unwrap(),
        );
        let reconciler = Reconciler::new(
            pool.clone(),
            clients,
            vec![tracker],
            ReconcileSettings::default(),
            3,
        );
        // The first pass registers the projects; measure the idle passes after it.
        reconciler.pass(PassOptions::default()).await.unwrap();
        let empty_before = transactions(&pool).await;
        let empty_after = transactions(&pool).await;
        let measuring = empty_after - empty_before;
        let requests_before = github.requests().len();
        let before = transactions(&pool).await;
        reconciler.pass(PassOptions::default()).await.unwrap();
        let after = transactions(&pool).await;
        let calls = github.requests().len() - requests_before;
        println!(
            "idle pass over {projects} project(s): {} database statements, {calls} tracker calls \
             ({:.2} per project)",
            after - before - measuring,
            calls as f64 / projects as f64
        );
    }
}
