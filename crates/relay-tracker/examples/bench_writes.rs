//! Comment writes against the local fake GitHub over real HTTP: the rate with pacing off, then
//! with pacing on at a configured rate (and how close the achieved rate comes), in one run.
//!
//! ```text
//! cargo run --release -p relay-tracker --example bench_writes --features test-support -- \
//!     [--writes 1000] [--rate 50] [--burst 5] [--concurrency 1]
//! ```
//!
//! `--concurrency` writers share one client (and so one bucket), as the worker's jobs do.

use std::sync::Arc;
use std::time::Instant;

use relay_tracker::fake::FakeGitHub;
use relay_tracker::{CommentTarget, GitHubClient, IssueRef, http_client};

const REPO: &str = "bench/repo";

struct Args {
    writes: usize,
    rate: f64,
    burst: u32,
    concurrency: usize,
}

fn args() -> anyhow::Result<Args> {
    let mut parsed = Args {
        writes: 1000,
        rate: 50.0,
        burst: 5,
        concurrency: 1,
    };
    let raw: Vec<String> = std::env::args().skip(1).collect();
    for pair in raw.chunks(2) {
        let value = pair
            .get(1)
            .ok_or_else(|| anyhow::anyhow!("{} needs a value", pair[0]))?;
        match pair[0].as_str() {
            "--writes" => parsed.writes = value.parse()?,
            "--rate" => parsed.rate = value.parse()?,
            "--burst" => parsed.burst = value.parse()?,
            "--concurrency" => parsed.concurrency = value.parse::<usize>()?.max(1),
            other => anyhow::bail!("unknown argument {other}"),
        }
    }
    Ok(parsed)
}

/// Posts `writes` comments with `concurrency` writers; returns the elapsed seconds.
async fn run(client: Arc<GitHubClient>, writes: usize, concurrency: usize) -> anyhow::Result<f64> {
    let issue = IssueRef {
        project_id: "1".into(),
        project_path: REPO.into(),
        number: 1,
        installation_id: None,
    };
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (client, issue, next) = (client.clone(), issue.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= writes {
                    return anyhow::Ok(());
                }
                let body = format!("write {i}\n<!-- relay:write:bench-{i} -->");
                client
                    .post_comment(&issue, &body, &CommentTarget::NewThread)
                    .await?;
            }
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok(start.elapsed().as_secs_f64())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = args()?;
    let gh = FakeGitHub::start().await;
    gh.seed_issue(REPO, 1, "bench", "bench");
    let http = http_client()?;

    // Warm-up: connection set-up and first-request costs out of the figures.
    let warm = Arc::new(GitHubClient::new(&gh.settings("t", "bot"), http.clone())?);
    run(warm, 50, args.concurrency).await?;

    let off = Arc::new(GitHubClient::new(&gh.settings("t", "bot"), http.clone())?);
    let off_secs = run(off, args.writes, args.concurrency).await?;
    let off_rate = args.writes as f64 / off_secs;

    let mut paced = gh.settings("t", "bot");
    paced.write_rate_per_sec = args.rate;
    paced.write_burst = args.burst;
    let on = Arc::new(GitHubClient::new(&paced, http)?);
    let on_secs = run(on, args.writes, args.concurrency).await?;
    let on_rate = args.writes as f64 / on_secs;
    // The burst goes out at once; the rest at the configured rate.
    let expected_secs = (args.writes as f64 - f64::from(args.burst)).max(0.0) / args.rate;
    let sustained = (args.writes as f64 - f64::from(args.burst)) / on_secs;

    let posted = gh.comments(REPO, 1).len();
    println!(
        "writes per phase: {} (concurrency {})",
        args.writes, args.concurrency
    );
    println!("pacing off: {off_secs:.3} s, {off_rate:.0} writes/s");
    println!(
        "pacing on ({} /s, burst {}): {on_secs:.3} s (ideal {expected_secs:.3} s), {on_rate:.2} writes/s overall, \
         {sustained:.2} writes/s after the burst = {:.1}% of the configured rate",
        args.rate,
        args.burst,
        100.0 * sustained / args.rate
    );
    println!(
        "pacing-off rate / configured rate: {:.1}x",
        off_rate / args.rate
    );
    println!(
        "comments on the fake: {posted} (expected {})",
        50 + 2 * args.writes
    );
    anyhow::ensure!(
        posted == 50 + 2 * args.writes,
        "every write landed exactly once"
    );
    Ok(())
}
