//! `/metrics` of a server that handled webhooks, jobs, LLM calls and tracker writes: every family
//! Relay exports in that work is there with its `# HELP` and `# TYPE`, and the scrape is written
//! to `target/tmp/metrics/scrape.prom`, where CI runs `promtool check metrics` on it
//! (`.ci/run`). And every counter series an alert rule reads exists at 0 from the start, so the
//! first event after a start is an increase.

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

/// The counter selectors of the alert rules' expressions: the name and the label matchers
/// (`relay_jobs_total{outcome="dead"}` → (`relay_jobs_total`, [(`outcome`, `dead`)])).
fn counter_selectors(rules: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut selectors = Vec::new();
    let mut rest = rules;
    while let Some(at) = rest.find("relay_") {
        rest = &rest[at..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let name = &rest[..end];
        rest = &rest[end..];
        if !name.ends_with("_total") {
            continue;
        }
        let mut labels = Vec::new();
        if let Some(inner) = rest.strip_prefix('{') {
            let close = inner.find('}').unwrap();
            for matcher in inner[..close].split(',') {
                let (key, value) = matcher.split_once('=').unwrap();
                labels.push((
                    key.trim().to_owned(),
                    value.trim().trim_matches('"').to_owned(),
                ));
            }
        }
        selectors.push((name.to_owned(), labels));
    }
    selectors
}

#[test]
fn every_counter_an_alert_reads_exists_at_zero_from_the_start() {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let trackers = ["github", "gitlab"];
    // What `relay serve` creates at its start: the gateway's (with its state), the worker's, and
    // the reconciler's when it runs.
    metrics::with_local_recorder(&recorder, || {
        relay_gateway::routes::webhook::zero_counters(trackers);
        relay_worker::zero_counters(&trackers);
        relay_worker::reconcile::zero_pass_counters();
    });
    let series: Vec<(String, Vec<(String, String)>)> = snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| {
            assert_eq!(value, DebugValue::Counter(0), "{key:?} starts at 0");
            let key = key.key();
            let labels = key
                .labels()
                .map(|l| (l.key().to_owned(), l.value().to_owned()))
                .collect();
            (key.name().to_owned(), labels)
        })
        .collect();
    let rules = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/prometheus/alerts.yml"
    ))
    .unwrap();
    let selectors = counter_selectors(&rules);
    assert!(
        selectors.len() >= 5,
        "the rules read counters: {selectors:?}"
    );
    for (name, matchers) in selectors {
        assert!(
            series
                .iter()
                .any(|(n, labels)| *n == name && matchers.iter().all(|m| labels.contains(m))),
            "no series of {name}{matchers:?} is created at start-up"
        );
    }
}
