//! Run-trace and tool-graph figures ("Figures for the closing note"), all as ratios to
//! baselines measured in the same run:
//!
//! 1. per event: `Tracer::event` into a job's `TraceRun` (buffer only) against a no-op tracer; and
//!    emit + batch + commit per event (N events emitted, `finish` waited for, divided by N);
//! 2. per job: the same job — a worker claims it and runs a scripted explore (3 LLM calls over
//!    local HTTP, a grep and a read on a temporary checkout) — with `[worker] trace` on and off,
//!    alternating, p50 of each and their ratio;
//! 3. the tool graph's update per explore (8 calls, one statement) against a single-row
//!    autocommit INSERT.
//!
//! `DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres cargo run --release -p relay-worker --example bench_trace [-- JOBS]`
//! Runs in a throwaway database it creates and drops.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use relay_agent::explore::{ExploreAgent, ExploreConfig, ExploreRequest, Thoroughness};
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::llm::{LlmClient, LlmSettings, Role};
use relay_agent::toolbox::Toolbox;
use relay_agent::trace::{TraceKind, Tracer};

use relay_store::bench::p50_p99;
use relay_store::queue::{NewJob, enqueue};
use relay_store::tool_graph::{Call, Source, record_run};
use relay_store::trace::{NewRun, RunOutcome};
use relay_worker::trace_sink::TraceRun;
use relay_worker::{JobContext, JobError, JobHandler, Outcome, Registry, Worker, WorkerSettings};
use serde_json::{Value, json};
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;

const EVENTS: usize = 20_000;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let jobs: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(200);
    let admin_url = std::env::var("DATABASE_URL").context("DATABASE_URL must be set")?;
    let scratch =
        relay_store::bench::ScratchDatabase::create(&admin_url, "relay_bench_trace").await?;
    let result = run(&scratch.url, jobs).await;
    scratch.drop_database().await?;
    result
}

async fn run(url: &str, jobs: usize) -> anyhow::Result<()> {
    let pool = PgPoolOptions::new().max_connections(8).connect(url).await?;
    relay_store::migrate(&pool).await?;
    per_event(&pool).await?;
    per_job(&pool, jobs).await?;
    graph_update(&pool).await?;
    Ok(())
}

fn payload(n: usize) -> Value {
    json!({"tool": "grep", "args": "{\"pattern\":\"Retry\"}", "result_tokens": n, "duration_ms": 3, "ok": true})
}

async fn per_event(pool: &PgPool) -> anyhow::Result<()> {
    let noop = Tracer::noop();
    let started = Instant::now();
    for n in 0..EVENTS {
        noop.event(TraceKind::ToolCall, payload(n));
    }
    let noop_ns = started.elapsed().as_nanos() as f64 / EVENTS as f64;

    // Job ids far from the queue's, which the per-job figure counts events of.
    let run = TraceRun::start(
        pool,
        &NewRun {
            job_id: relay_core::JobId(-1),
            issue_id: None,
            attempt: 1,
            worker: "bench",
        },
    );
    let tracer = run.tracer();
    // Below the buffer's capacity, so nothing is dropped: emit only.
    let emitted = EVENTS.min(relay_worker::trace_sink::TRACE_BUFFER_EVENTS / 2);
    let started = Instant::now();
    for n in 0..emitted {
        tracer.event(TraceKind::ToolCall, payload(n));
    }
    let emit_ns = started.elapsed().as_nanos() as f64 / emitted as f64;
    run.finish(RunOutcome::Succeeded).await;

    let run = TraceRun::start(
        pool,
        &NewRun {
            job_id: relay_core::JobId(-2),
            issue_id: None,
            attempt: 1,
            worker: "bench",
        },
    );
    let tracer = run.tracer();
    // As many as the buffer holds, emitted at once, then written by the flusher in batches of
    // FLUSH_EVENTS: the whole cost of getting an event into Postgres, per event.
    let written = relay_worker::trace_sink::TRACE_BUFFER_EVENTS;
    let started = Instant::now();
    for n in 0..written {
        tracer.event(TraceKind::ToolCall, payload(n));
    }
    run.finish(RunOutcome::Succeeded).await;
    let written_us = started.elapsed().as_secs_f64() * 1e6 / written as f64;
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM trace_events WHERE job_id = -2")
        .fetch_one(pool)
        .await?;
    let dropped: i64 = sqlx::query_scalar("SELECT dropped FROM trace_runs WHERE job_id = -2")
        .fetch_one(pool)
        .await?;
    println!("## per event ({EVENTS} emitted; {written} written)");
    println!("emit, no-op tracer:              {noop_ns:8.0} ns  (baseline: builds the payload)");
    println!(
        "emit into a TraceRun (buffered): {emit_ns:8.0} ns  ({:.2}x)",
        emit_ns / noop_ns
    );
    println!(
        "emit + batch + commit:           {written_us:8.2} us per event ({stored} stored, {dropped} dropped)"
    );
    Ok(())
}

/// A job that runs one scripted explore on a temporary checkout, traced to the job's tracer.
struct ExploreJob {
    llm: LlmClient,
    toolbox: Arc<Toolbox>,
}

#[async_trait::async_trait]
impl JobHandler for ExploreJob {
    async fn run(&self, context: JobContext) -> Result<Value, JobError> {
        let agent = ExploreAgent::new(
            self.llm.clone().with_tracer(&context.tracer),
            self.toolbox.clone(),
            ExploreConfig::default(),
        )
        .with_tracer(&context.tracer);
        let report = agent
            .explore(ExploreRequest::new(
                "Where is Retries?",
                Thoroughness::Quick,
            ))
            .await
            .map_err(|e| JobError::Permanent(e.into()))?;
        Ok(json!({ "calls": report.tool_calls.len() }))
    }
}

fn script() -> Vec<ScriptedReply> {
    vec![
        ScriptedReply::tool_calls(vec![("grep", json!({"pattern": "Retries"}))]),
        ScriptedReply::tool_calls(vec![("read", json!({"path": "config.go"}))]),
        ScriptedReply::tool_calls(vec![(
            "submit_report",
            json!({"answer": "Config.Retries (config.go:4)", "confidence": "high", "unanswered": [],
                   "evidence": [{"path": "config.go", "start_line": 4, "end_line": 4, "quote": "Retries int"}]}),
        )]),
    ]
}

async fn per_job(pool: &PgPool, jobs: usize) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    std::fs::write(
        dir.path().join("config.go"),
        "package main\n\ntype Config struct {\n\tRetries int\n}\n",
    )?;
    let server = ScriptedLlm::start(Vec::new()).await;
    let settings: LlmSettings = toml::from_str(&format!(
        "[default]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\napi_key = \"k\"\n",
        server.base_url()
    ))?;
    let handler = || ExploreJob {
        llm: LlmClient::from_settings(&settings, Role::Explore).expect("client"),
        toolbox: Arc::new(Toolbox::new(dir.path(), None, Default::default()).expect("toolbox")),
    };
    let worker = |trace: bool| {
        Worker::new(
            pool.clone(),
            Registry::new().register("explore", handler()),
            WorkerSettings {
                trace,
                ..WorkerSettings::default()
            },
        )
    };
    let (on, off) = (worker(true), worker(false));
    let mut times = [Vec::with_capacity(jobs), Vec::with_capacity(jobs)];
    // Warm-up, then alternate so drift hits both sides alike.
    for i in 0..jobs + 10 {
        for (side, worker) in [&on, &off].into_iter().enumerate() {
            server.push(script());
            let mut conn = pool.acquire().await?;
            let payload = json!({});
            enqueue(
                &mut conn,
                &NewJob {
                    kind: "explore",
                    payload: &payload,
                    concurrency_key: None,
                    max_attempts: 1,
                },
            )
            .await?;
            drop(conn);
            let started = Instant::now();
            let outcome = worker.run_next_job().await?;
            let elapsed = started.elapsed();
            anyhow::ensure!(
                matches!(outcome, Outcome::Succeeded { .. }),
                "job failed: {outcome:?}"
            );
            if i >= 10 {
                times[side].push(elapsed);
            }
        }
    }
    let [mut traced, mut untraced] = times;
    let events: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM trace_events e JOIN jobs j ON j.id = e.job_id WHERE j.kind = 'explore'",
    )
    .fetch_one(pool)
    .await?;
    let (t50, t99) = p50_p99(&mut traced);
    let (u50, u99) = p50_p99(&mut untraced);
    println!("\n## per job ({jobs} jobs each: claim, scripted explore with 3 LLM calls, complete)");
    println!("trace off: p50 {:7.2} ms  p99 {:7.2} ms", ms(u50), ms(u99));
    println!(
        "trace on:  p50 {:7.2} ms  p99 {:7.2} ms  ({:.3}x at p50; {} events per job)",
        ms(t50),
        ms(t99),
        t50.as_secs_f64() / u50.as_secs_f64(),
        // The warm-up jobs were traced too.
        events / (jobs + 10) as i64
    );
    Ok(())
}

async fn graph_update(pool: &PgPool) -> anyhow::Result<()> {
    const RUNS: usize = 1000;
    let calls: Vec<Call> = [
        "codegraph search",
        "codegraph callers",
        "read",
        "grep",
        "read",
        "codegraph callees",
        "read",
        "glob",
    ]
    .iter()
    .map(|t| Call {
        tool: (*t).to_owned(),
        result_tokens: 300,
    })
    .collect();
    sqlx::query("CREATE TABLE bench_single (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v TEXT NOT NULL)")
        .execute(pool)
        .await?;
    let mut update = Vec::with_capacity(RUNS);
    let mut single = Vec::with_capacity(RUNS);
    for i in 0..RUNS {
        let repo = format!("github:bench/{}", i % 20);
        let started = Instant::now();
        record_run(pool, &repo, Source::Observed, &calls, i % 3 != 0).await?;
        update.push(started.elapsed());
        let started = Instant::now();
        sqlx::query("INSERT INTO bench_single (v) VALUES ($1)")
            .bind(&repo)
            .execute(pool)
            .await?;
        single.push(started.elapsed());
    }
    let (g50, g99) = p50_p99(&mut update);
    let (s50, s99) = p50_p99(&mut single);
    println!("\n## tool graph update per explore ({RUNS} runs of 8 calls, 20 repositories)");
    println!(
        "single-row INSERT: p50 {:6.0} us  p99 {:6.0} us",
        us(s50),
        us(s99)
    );
    println!(
        "record_run:        p50 {:6.0} us  p99 {:6.0} us  ({:.2}x at p50)",
        us(g50),
        us(g99),
        g50.as_secs_f64() / s50.as_secs_f64()
    );
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
