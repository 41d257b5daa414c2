//! `relay bench-intake`: webhook intake throughput and latency against a running gateway, next to
//! the ceiling of plain single-row inserts into the same Postgres at the same concurrency.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Args;
use serde_json::{Value, json};

#[derive(Debug, Clone, Args)]
pub struct BenchIntakeArgs {
    /// Webhook URL of a GitHub tracker on a running `relay serve`.
    #[arg(long, default_value = "http://127.0.0.1:8080/webhooks/github")]
    url: String,
    /// The tracker's webhook secret.
    #[arg(long, env = "RELAY_BENCH_SECRET")]
    secret: String,
    /// The bot username to mention.
    #[arg(long, default_value = "relay-bot")]
    bot: String,
    /// Deliveries to send (and rows to insert for the ceiling).
    #[arg(long, default_value_t = 5000)]
    count: usize,
    /// Concurrent connections.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Distinct issues the deliveries are spread over.
    #[arg(long, default_value_t = 1000)]
    issues: usize,
    /// Postgres the gateway uses, for the ceiling run.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/relay"
    )]
    database_url: String,
    /// PID of the gateway process, to report its peak RSS.
    #[arg(long)]
    gateway_pid: Option<u32>,
    /// Alternating gateway/ceiling rounds; the ratio reported is the median of the rounds'
    /// ratios, so load that drifts during the run affects both sides alike.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Before each measured run, wait (up to this many seconds) until the workers have finished
    /// every queued and running job, so that neither side is measured while the other side's
    /// backlog is still being worked off. 0 disables it (a gateway without workers).
    #[arg(long, default_value_t = 300)]
    drain_timeout_secs: u64,
}

pub async fn run(args: BenchIntakeArgs) -> anyhow::Result<()> {
    let args = Arc::new(args);
    let run_id = uuid::Uuid::new_v4().simple().to_string();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(args.concurrency)
        .timeout(Duration::from_secs(30))
        .build()
        .context("failed to build the HTTP client")?;
    let database = relay_store::DatabaseSettings::from_url(&args.database_url);
    let pool = database
        .pool_options()
        .max_connections(args.concurrency.max(1) as u32)
        .connect_with(database.connect_options().map_err(anyhow::Error::msg)?)
        .await
        .context("failed to connect for the ceiling run")?;

    // Warm up connections on both sides.
    for i in 0..args.concurrency.min(args.count) {
        let body = payload(&args.bot, i % args.issues.max(1), i);
        post(&client, &args, &format!("warmup-{run_id}-{i}"), &body).await?;
    }
    let sample = payload(&args.bot, 0, 0);
    relay_store::bench::insert_ceiling(&pool, &sample, args.concurrency * 4, args.concurrency)
        .await
        .context("ceiling warm-up failed")?;

    let mut ratios = Vec::new();
    let (mut all_gateway, mut all_ceiling) = (Vec::new(), Vec::new());
    let (mut gateway_rates, mut ceiling_rates) = (Vec::new(), Vec::new());
    for round in 0..args.rounds.max(1) {
        drain(&pool, &args, "warm-up or previous round").await?;
        let (latencies, accepted, elapsed) = gateway_round(
            &client,
            &args,
            &format!("{run_id}-r{round}"),
            (round + 1) * args.count,
        )
        .await?;
        if accepted != args.count {
            anyhow::bail!("only {accepted} of {} deliveries were accepted", args.count);
        }
        drain(&pool, &args, "this round's deliveries").await?;
        let ceiling_started = Instant::now();
        let ceiling =
            relay_store::bench::insert_ceiling(&pool, &sample, args.count, args.concurrency)
                .await
                .context("ceiling run failed")?;
        let ceiling_elapsed = ceiling_started.elapsed();
        let gateway_rate = accepted as f64 / elapsed.as_secs_f64();
        let ceiling_rate = args.count as f64 / ceiling_elapsed.as_secs_f64();
        println!(
            "round {}: gateway {:.0}/s, ceiling {:.0}/s, ratio {:.2}",
            round + 1,
            gateway_rate,
            ceiling_rate,
            gateway_rate / ceiling_rate
        );
        ratios.push(gateway_rate / ceiling_rate);
        gateway_rates.push(gateway_rate);
        ceiling_rates.push(ceiling_rate);
        all_gateway.extend(latencies);
        all_ceiling.extend(ceiling);
    }

    println!(
        "deliveries: {} per round x {} rounds, concurrency {}, spread over {} issues",
        args.count, args.rounds, args.concurrency, args.issues
    );
    println!(
        "gateway: {:.0} accepted/s (median), p50 {:.2} ms, p99 {:.2} ms",
        median(&mut gateway_rates),
        percentile(&mut all_gateway, 0.50),
        percentile(&mut all_gateway, 0.99)
    );
    println!(
        "ceiling (INSERT; COMMIT): {:.0} rows/s (median), p50 {:.2} ms, p99 {:.2} ms",
        median(&mut ceiling_rates),
        percentile(&mut all_ceiling, 0.50),
        percentile(&mut all_ceiling, 0.99)
    );
    println!(
        "ratio: gateway / ceiling = {:.2} (median of rounds)",
        median(&mut ratios)
    );
    if let Some(pid) = args.gateway_pid {
        match peak_rss_kib(pid) {
            Some(kib) => println!("gateway peak RSS: {:.1} MiB", kib as f64 / 1024.0),
            None => println!("gateway peak RSS: unavailable for pid {pid}"),
        }
    }
    Ok(())
}

/// Sends `count` deliveries over `concurrency` connections; returns latencies, accepted count and
/// wall time. Bodies and signatures are prepared before the clock starts, so the load generator
/// (which shares the machine) spends as little CPU as possible during the measurement.
async fn gateway_round(
    client: &reqwest::Client,
    args: &Arc<BenchIntakeArgs>,
    run_id: &str,
    comment_offset: usize,
) -> anyhow::Result<(Vec<Duration>, usize, Duration)> {
    let requests: Arc<Vec<(String, bytes::Bytes, String)>> = Arc::new(
        (0..args.count)
            .map(|i| {
                let body = serde_json::to_vec(&payload(
                    &args.bot,
                    i % args.issues.max(1),
                    comment_offset + i,
                ))
                .expect("payloads serialize");
                let signature =
                    relay_gateway::providers::github::sign(&body, args.secret.as_bytes());
                (format!("{run_id}-{i}"), bytes::Bytes::from(body), signature)
            })
            .collect(),
    );
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..args.concurrency.max(1) {
        let client = client.clone();
        let next = next.clone();
        let url = args.url.clone();
        let requests = requests.clone();
        tasks.spawn(async move {
            let mut latencies = Vec::new();
            let mut accepted = 0usize;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((delivery, body, signature)) = requests.get(i) else {
                    return Ok::<_, anyhow::Error>((latencies, accepted));
                };
                let request_started = Instant::now();
                let response = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .header("x-github-event", "issue_comment")
                    .header("x-github-delivery", delivery.as_str())
                    .header("x-hub-signature-256", signature.as_str())
                    .body(body.clone())
                    .send()
                    .await
                    .with_context(|| format!("request to {url} failed"))?;
                latencies.push(request_started.elapsed());
                if response.status() == reqwest::StatusCode::ACCEPTED {
                    accepted += 1;
                }
            }
        });
    }
    let mut latencies = Vec::with_capacity(args.count);
    let mut accepted = 0;
    while let Some(joined) = tasks.join_next().await {
        let (l, a) = joined.context("bench task panicked")??;
        latencies.extend(l);
        accepted += a;
    }
    Ok((latencies, accepted, started.elapsed()))
}

/// Waits until no job is queued or running (see `--drain-timeout-secs`) and reports how long the
/// workers took.
async fn drain(
    pool: &relay_store::PgPool,
    args: &BenchIntakeArgs,
    what: &str,
) -> anyhow::Result<()> {
    if args.drain_timeout_secs == 0 {
        return Ok(());
    }
    let started = Instant::now();
    let mut jobs = 0;
    loop {
        let active: i64 = relay_store::queue::depth(pool)
            .await
            .context("failed to read the queue depth")?
            .iter()
            .filter(|(status, _)| status == "queued" || status == "running")
            .map(|(_, n)| n)
            .sum();
        if active == 0 {
            break;
        }
        jobs = jobs.max(active);
        if started.elapsed() > Duration::from_secs(args.drain_timeout_secs) {
            anyhow::bail!(
                "{active} jobs still queued or running after {}s: are workers running?",
                args.drain_timeout_secs
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if jobs > 0 {
        println!(
            "  workers finished {what}: {jobs} jobs in {:.2} s",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// A GitHub `issue_comment.created` delivery mentioning the bot, in the shape GitHub sends.
fn payload(bot: &str, issue: usize, i: usize) -> Value {
    json!({
        "action": "created",
        "issue": {
            "number": issue + 1, "title": format!("Bench issue {issue}"),
            "body": "Something is slow when the cache is cold.", "state": "open",
            "labels": [], "assignees": [], "user": { "login": "octocat", "type": "User" },
            "html_url": format!("https://github.com/bench/repo/issues/{}", issue + 1),
            "updated_at": "2026-11-23T10:00:00Z"
        },
        "comment": {
            "id": 10_000_000 + i, "body": format!("@{bot} can you take a look? ({i})"),
            "user": { "login": "octocat", "type": "User" },
            "html_url": format!("https://github.com/bench/repo/issues/{}#issuecomment-{i}", issue + 1),
            "created_at": "2026-11-23T10:00:00Z", "updated_at": "2026-11-23T10:00:00Z"
        },
        "repository": { "id": 4242, "full_name": "bench/repo" },
        "sender": { "login": "octocat", "type": "User" }
    })
}

async fn post(
    client: &reqwest::Client,
    args: &BenchIntakeArgs,
    delivery: &str,
    body: &Value,
) -> anyhow::Result<reqwest::StatusCode> {
    let body = serde_json::to_vec(body)?;
    let signature = relay_gateway::providers::github::sign(&body, args.secret.as_bytes());
    let response = client
        .post(&args.url)
        .header("content-type", "application/json")
        .header("x-github-event", "issue_comment")
        .header("x-github-delivery", delivery)
        .header("x-hub-signature-256", signature)
        .body(body)
        .send()
        .await
        .with_context(|| format!("request to {} failed", args.url))?;
    Ok(response.status())
}

fn percentile(samples: &mut [Duration], q: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    samples.sort_unstable();
    let index = ((samples.len() as f64 - 1.0) * q).round() as usize;
    samples[index].as_secs_f64() * 1000.0
}

fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}
