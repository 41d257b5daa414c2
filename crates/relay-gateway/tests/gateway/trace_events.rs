//! `GET /api/jobs/{id}/events` over real HTTP against real Postgres: the trace is written by a
//! separate pool (as a worker in another process would), and the SSE client parses the raw stream.

use relay_core::JobId;
use std::time::Duration;

use relay_gateway::{ApiSettings, AppState, ServerSettings};
use relay_store::PgPool;
use relay_store::trace::{self, NewEvent, NewRun, RunOutcome};
use reqwest::StatusCode;
use serde_json::{Value, json};

const TOKEN: &str = "trace-test-token";
/// A guard against a hung stream (never a timing assertion: events arrive well within it).
const HANG: Duration = Duration::from_secs(30);

async fn serve(pool: PgPool) -> String {
    relay_telemetry::init_for_test();
    let state =
        AppState::new(pool, Vec::new(), ServerSettings::default(), 3).with_api(ApiSettings {
            token: Some(TOKEN.to_string().into()),
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        axum::serve(listener, relay_gateway::app(state))
            .await
            .unwrap();
    });
    base
}

/// A second pool on the same database: the "worker process".
async fn worker_pool(pool: &PgPool) -> PgPool {
    let options = pool.connect_options().as_ref().clone();
    sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect_with(options)
        .await
        .unwrap()
}

async fn job(pool: &PgPool, status: &str) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO jobs (kind, payload, max_attempts, status) VALUES ('process_issue', '{}', 3, $1)
         RETURNING id",
    )
    .bind(status)
    .fetch_one(pool)
    .await
    .unwrap()
}

async fn finish_job(pool: &PgPool, job_id: i64) {
    sqlx::query("UPDATE jobs SET status = 'succeeded' WHERE id = $1")
        .bind(job_id)
        .execute(pool)
        .await
        .unwrap();
}

async fn write(pool: &PgPool, run: i64, job_id: i64, seqs: std::ops::Range<i32>) {
    let payloads: Vec<Value> = seqs.clone().map(|n| json!({ "n": n })).collect();
    let events: Vec<NewEvent<'_>> = seqs
        .zip(&payloads)
        .map(|(seq, payload)| NewEvent {
            seq,
            at: chrono::Utc::now(),
            kind: "tool_call",
            agent: "explore",
            payload,
        })
        .collect();
    trace::insert_events(pool, run, JobId(job_id), &events)
        .await
        .unwrap();
}

async fn start_run(pool: &PgPool, job_id: i64) -> i64 {
    trace::start_run(
        pool,
        &NewRun {
            job_id: JobId(job_id),
            issue_id: None,
            attempt: 1,
            worker: "w",
        },
    )
    .await
    .unwrap()
}

/// One parsed SSE event.
#[derive(Debug, Clone, PartialEq)]
struct SseEvent {
    id: Option<i64>,
    event: String,
    data: Value,
}

/// Reads a `text/event-stream` response event by event (comments are keep-alives).
struct SseClient {
    response: reqwest::Response,
    buffer: String,
}

impl SseClient {
    async fn open(url: &str, last_event_id: Option<i64>) -> SseClient {
        let mut request = reqwest::Client::new().get(url).bearer_auth(TOKEN);
        if let Some(id) = last_event_id {
            request = request.header("Last-Event-ID", id.to_string());
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        SseClient {
            response,
            buffer: String::new(),
        }
    }

    /// The next event, or `None` when the server closed the stream.
    async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = SseEvent {
                    id: None,
                    event: "message".into(),
                    data: Value::Null,
                };
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        event.id = v.trim().parse().ok();
                    } else if let Some(v) = line.strip_prefix("event:") {
                        event.event = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim_start());
                    }
                }
                if data.is_empty() {
                    continue; // a keep-alive comment
                }
                event.data = serde_json::from_str(&data).unwrap();
                return Some(event);
            }
            let chunk = tokio::time::timeout(HANG, self.response.chunk())
                .await
                .expect("the stream hung")
                .unwrap()?;
            self.buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }

    async fn take(&mut self, n: usize) -> Vec<SseEvent> {
        let mut events = Vec::new();
        while events.len() < n {
            events.push(self.next().await.expect("stream ended early"));
        }
        events
    }
}

fn ns(events: &[SseEvent]) -> Vec<i64> {
    events
        .iter()
        .map(|e| e.data["payload"]["n"].as_i64().unwrap())
        .collect()
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn live_events_arrive_in_order_then_end(pool: PgPool) {
    let job_id = job(&pool, "running").await;
    let worker = worker_pool(&pool).await;
    let run = start_run(&worker, job_id).await;
    write(&worker, run, job_id, 0..2).await;
    let base = serve(pool.clone()).await;
    let mut client = SseClient::open(&format!("{base}/api/jobs/{job_id}/events"), None).await;

    // What was there before the client came, then each batch as it is written.
    let first = client.take(2).await;
    assert_eq!(ns(&first), [0, 1]);
    write(&worker, run, job_id, 2..5).await;
    let second = client.take(3).await;
    assert_eq!(ns(&second), [2, 3, 4]);
    let all: Vec<&SseEvent> = first.iter().chain(&second).collect();
    assert!(all.windows(2).all(|w| w[0].id < w[1].id), "{all:?}");
    assert!(all.iter().all(|e| e.event == "tool_call"));
    assert_eq!(all[0].data["agent"], "explore");
    assert_eq!(all[0].data["run_id"], run);

    trace::finish_run(&worker, run, JobId(job_id), RunOutcome::Succeeded, 0)
        .await
        .unwrap();
    finish_job(&worker, job_id).await;
    let end = client.next().await.unwrap();
    assert_eq!(end.event, "end");
    assert_eq!(end.data["runs"][0]["outcome"], "succeeded");
    assert_eq!(client.next().await, None, "the stream closes after end");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn resuming_with_last_event_id_skips_what_was_seen(pool: PgPool) {
    let job_id = job(&pool, "running").await;
    let run = start_run(&pool, job_id).await;
    write(&pool, run, job_id, 0..4).await;
    let base = serve(pool.clone()).await;
    let url = format!("{base}/api/jobs/{job_id}/events");
    let mut client = SseClient::open(&url, None).await;
    let seen = client.take(2).await;
    drop(client);

    let mut resumed = SseClient::open(&url, seen[1].id).await;
    write(&pool, run, job_id, 4..5).await;
    let rest = resumed.take(3).await;
    assert_eq!(ns(&rest), [2, 3, 4]);

    // `?after=` does the same for clients that cannot set the header.
    finish_job(&pool, job_id).await;
    let response = reqwest::Client::new()
        .get(format!("{url}?after={}", rest[1].id.unwrap()))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    let body = tokio::time::timeout(HANG, response.text())
        .await
        .unwrap()
        .unwrap();
    assert!(body.contains("\"n\":4"), "{body}");
    assert!(!body.contains("\"n\":3"), "{body}");
    assert!(body.contains("event: end"), "{body}");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_finished_job_gets_its_whole_trace_then_end(pool: PgPool) {
    let job_id = job(&pool, "running").await;
    let first = start_run(&pool, job_id).await;
    write(&pool, first, job_id, 0..3).await;
    trace::finish_run(&pool, first, JobId(job_id), RunOutcome::Retrying, 0)
        .await
        .unwrap();
    let second = start_run(&pool, job_id).await;
    write(&pool, second, job_id, 0..2).await;
    trace::finish_run(&pool, second, JobId(job_id), RunOutcome::Succeeded, 1)
        .await
        .unwrap();
    finish_job(&pool, job_id).await;
    let base = serve(pool.clone()).await;
    let mut client = SseClient::open(&format!("{base}/api/jobs/{job_id}/events"), None).await;
    let events = client.take(6).await;
    let runs: Vec<i64> = events[..5]
        .iter()
        .map(|e| e.data["run_id"].as_i64().unwrap())
        .collect();
    assert_eq!(runs, [first, first, first, second, second]);
    assert_eq!(events[5].event, "end");
    let outcomes: Vec<&str> = events[5].data["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["retrying", "succeeded"]);
    assert_eq!(events[5].data["runs"][1]["dropped"], 1);
    assert_eq!(client.next().await, None);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_stream_needs_the_token_and_a_known_job(pool: PgPool) {
    let job_id = job(&pool, "succeeded").await;
    let base = serve(pool).await;
    let url = format!("{base}/api/jobs/{job_id}/events");
    let client = reqwest::Client::new();
    let status = |r: reqwest::Response| r.status();
    assert_eq!(
        status(client.get(&url).send().await.unwrap()),
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        status(client.get(&url).bearer_auth("wrong").send().await.unwrap()),
        StatusCode::UNAUTHORIZED
    );
    let unknown = client
        .get(format!("{base}/api/jobs/{}/events", job_id + 1000))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        unknown.json::<Value>().await.unwrap()["error"],
        "job not found"
    );
    // A finished job without a trace: just `end`.
    let body = client
        .get(&url)
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(body.contains("event: end"), "{body}");
}
