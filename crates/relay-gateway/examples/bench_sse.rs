//! SSE delivery latency of the run trace: a writer on its own pool — a worker in
//! another process — writes single-event batches through `relay_store::trace::insert_events`;
//! a client on `GET /api/jobs/{id}/events` (real HTTP) receives them. Latency = the client's
//! receipt minus the moment the writer's statement returned (the commit). p50/p99, with the bare
//! `insert_events` round trip measured in the same run as the baseline.
//!
//! `DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres cargo run --release -p relay-gateway --example bench_sse [-- EVENTS]`
//! Runs in a throwaway database it creates and drops.

use relay_core::JobId;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::Context;
use relay_gateway::{ApiSettings, AppState, ServerSettings};
use relay_store::bench::p50_p99;
use relay_store::trace::{self, NewEvent, NewRun};
use sqlx::postgres::PgPoolOptions;

const TOKEN: &str = "bench-token";
/// Pause between events, so each is delivered on its own (not caught up in a page).
const GAP: Duration = Duration::from_millis(5);

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let events: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(500);
    let admin_url = std::env::var("DATABASE_URL").context("DATABASE_URL must be set")?;
    let scratch =
        relay_store::bench::ScratchDatabase::create(&admin_url, "relay_bench_sse").await?;
    let result = run(&scratch.url, events).await;
    scratch.drop_database().await?;
    result
}

async fn run(url: &str, count: usize) -> anyhow::Result<()> {
    let gateway_pool = PgPoolOptions::new().max_connections(4).connect(url).await?;
    relay_store::migrate(&gateway_pool).await?;
    let writer = PgPoolOptions::new().max_connections(2).connect(url).await?;
    let job: i64 = sqlx::query_scalar(
        "INSERT INTO jobs (kind, payload, max_attempts, status) VALUES ('bench', '{}', 1, 'running') RETURNING id",
    )
    .fetch_one(&writer)
    .await?;
    let run = trace::start_run(
        &writer,
        &NewRun {
            job_id: JobId(job),
            issue_id: None,
            attempt: 1,
            worker: "bench",
        },
    )
    .await?;

    let state = AppState::new(gateway_pool, Vec::new(), ServerSettings::default(), 1).with_api(
        ApiSettings {
            token: Some(TOKEN.to_owned().into()),
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, relay_gateway::app(state)).await });

    let mut response = reqwest::Client::new()
        .get(format!("{base}/api/jobs/{job}/events"))
        .bearer_auth(TOKEN)
        .send()
        .await?;
    anyhow::ensure!(response.status().is_success(), "{}", response.status());
    // The client: the receipt instant of each event, by its `seq`.
    let reader = tokio::spawn(async move {
        let mut received: HashMap<i64, Instant> = HashMap::new();
        let mut buffer = String::new();
        while received.len() < count {
            let Ok(Some(chunk)) = response.chunk().await else {
                break;
            };
            let now = Instant::now();
            buffer.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buffer.find("\n\n") {
                let block: String = buffer.drain(..end + 2).collect();
                if let Some(data) = block.lines().find_map(|l| l.strip_prefix("data:")) {
                    let value: serde_json::Value = serde_json::from_str(data.trim())?;
                    if let Some(seq) = value["seq"].as_i64() {
                        received.insert(seq, now);
                    }
                }
            }
        }
        Ok::<_, anyhow::Error>(received)
    });
    // Let the stream subscribe before the first write.
    tokio::time::sleep(Duration::from_millis(200)).await;

    let payload = serde_json::json!({"tool": "grep", "ok": true});
    let mut committed = Vec::with_capacity(count);
    let mut round_trips = Vec::with_capacity(count);
    for seq in 0..count {
        let event = NewEvent {
            seq: seq as i32,
            at: chrono::Utc::now(),
            kind: "tool_call",
            agent: "bench",
            payload: &payload,
        };
        let started = Instant::now();
        trace::insert_events(&writer, run, JobId(job), &[event]).await?;
        let done = Instant::now();
        round_trips.push(done - started);
        committed.push(done);
        tokio::time::sleep(GAP).await;
    }
    let received = tokio::time::timeout(Duration::from_secs(60), reader).await???;
    let mut latencies: Vec<Duration> = committed
        .iter()
        .enumerate()
        .filter_map(|(seq, at)| {
            received
                .get(&(seq as i64))
                .map(|got| got.saturating_duration_since(*at))
        })
        .collect();
    anyhow::ensure!(
        latencies.len() == count,
        "{} of {count} events arrived",
        latencies.len()
    );
    let (l50, l99) = p50_p99(&mut latencies);
    let (r50, r99) = p50_p99(&mut round_trips);
    println!("## SSE delivery ({count} single-event batches from another pool, {GAP:?} apart)");
    println!(
        "write round trip (baseline): p50 {:7.3} ms  p99 {:7.3} ms",
        ms(r50),
        ms(r99)
    );
    println!(
        "commit -> client received:   p50 {:7.3} ms  p99 {:7.3} ms  ({:.2}x the write at p50)",
        ms(l50),
        ms(l99),
        l50.as_secs_f64() / r50.as_secs_f64()
    );
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
