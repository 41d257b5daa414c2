//! `/metrics` of a server that handled webhooks, jobs, LLM calls and tracker writes: every family
//! Relay exports in that work is there with its `# HELP` and `# TYPE`, and the scrape is written
//! to `target/tmp/metrics/scrape.prom`, where CI runs `promtool check metrics` on it
//! (`.ci/run`).

use axum::body::Body;
use axum::http::Request;
use sqlx::PgPool;

use crate::orchestrator_gitlab::{GitLabHarness, ISSUE, PROJECT, REPORTER, ask_script};

const MENTION: &str = "@relay can retries be configured?";

/// Families the scenario below must produce (the others need rarer events: a reconcile pass, a
/// sweep, a lost trace event, a graph store outage, a daily budget reached).
const PRODUCED: &[&str] = &[
    "relay_webhook_deliveries_total",
    "relay_webhook_request_duration_seconds",
    "relay_jobs_total",
    "relay_job_duration_seconds",
    "relay_queue_depth",
    "relay_queue_oldest_due_seconds",
    "relay_jobs_running",
    "relay_llm_tokens_total",
    "relay_llm_requests_total",
    "relay_llm_request_duration_seconds",
    "relay_trace_events_written_total",
    "relay_tracker_writes_total",
];

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn metrics_of_a_server_that_did_the_work_are_complete_and_described(pool: PgPool) {
    relay_telemetry::metrics::install();
    let h = GitLabHarness::start(pool, Vec::new()).await;
    // A webhook (accepted), a job with LLM calls and tracker writes, and a refused webhook.
    let (discussion, note) = h.gitlab.seed_note(PROJECT, ISSUE, REPORTER, MENTION, false);
    h.llm.push(ask_script(&discussion));
    let answer = h
        .deliver(REPORTER, MENTION, note, &discussion, "gl-m1")
        .await;
    assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
    assert_eq!(h.drain().await.len(), 1);
    let refused = Request::post("/webhooks/gitlab")
        .header("content-type", "application/json")
        .header("x-gitlab-event", "Note Hook")
        .header("x-gitlab-token", "wrong")
        .body(Body::from("{}"))
        .unwrap();
    let _ = crate::helpers::call(&h.app, refused).await;

    let response = tower::ServiceExt::oneshot(
        h.app.clone(),
        Request::get("/metrics").body(Body::empty()).unwrap(),
    )
    .await
    .unwrap();
    let text = String::from_utf8(
        axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap()
            .to_vec(),
    )
    .unwrap();
    for family in PRODUCED {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("# TYPE {family} "))),
            "{family} missing from /metrics:\n{text}"
        );
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("# HELP {family} "))),
            "{family} has no help text"
        );
    }
    // Every exported family is one Relay documents.
    for line in text.lines().filter(|l| l.starts_with("# TYPE ")) {
        let name = line.split_whitespace().nth(2).unwrap();
        assert!(
            relay_telemetry::metrics::FAMILIES
                .iter()
                .any(|f| f.name == name),
            "{name} is exported but not in relay_telemetry::metrics::FAMILIES"
        );
    }
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("metrics");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("scrape.prom"), &text).unwrap();
}
