//! Write-back figures ("Figures for the closing note"):
//!
//! 1. validator + batch transaction per batch (load the context, validate a 5-action batch with a
//!    verified citation, apply it with the watermark raise, commit), p50/p99, as a ratio to a bare
//!    single-row autocommit INSERT measured in the same run;
//! 2. outbox drain of N writes through the in-process tracker double (no HTTP): the outbox's own
//!    cost per write (attempt bookkeeping + sent record), as a ratio to the same bare INSERT;
//! 3. outbox drain of N writes against the local GitHub server (`relay_tracker::fake`) with the
//!    real GitHub client, pacing off: writes/s;
//! 4. the same with pacing on (`PACED_RATE` writes/s, burst `PACED_BURST`, `PACED_WRITES` writes):
//!    the measured rate against the configured one.
//!
//! `DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres cargo run --release -p relay-actions --example bench_writeback [-- BATCHES WRITES]`
//! Runs in a throwaway database it creates and drops.

#[path = "../tests/actions/support/mod.rs"]
mod support;

use relay_core::{IssueId, JobId};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use relay_actions::{BatchId, Executor, RetryPolicy, ValidationContext, WatermarkRaise, validate};
use sqlx::postgres::PgPoolOptions;

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let batches: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(500);
    let writes: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(1000);
    let admin_url = std::env::var("DATABASE_URL").context("DATABASE_URL must be set")?;
    let scratch =
        relay_store::bench::ScratchDatabase::create(&admin_url, "relay_bench_writeback").await?;
    let result = run(&scratch.url, batches, writes).await;
    scratch.drop_database().await?;
    result
}

async fn run(url: &str, batches: usize, writes: usize) -> anyhow::Result<()> {
    let pool = PgPoolOptions::new().max_connections(4).connect(url).await?;
    relay_store::migrate(&pool).await?;
    let (_dir, snapshot) = support::checkout();
    let tracker = Arc::new(support::MemoryTracker::default());
    let executor =
        Executor::new(pool.clone(), tracker.clone()).with_retry(RetryPolicy::immediate());

    // One issue per batch, each with one open gap, so every batch sees the same state.
    let mut issues = Vec::with_capacity(batches);
    for i in 0..batches {
        let issue = support::insert_issue(&pool, i as i64 + 1, &[("501", Some("dA"))]).await;
        let mut conn = pool.acquire().await?;
        relay_store::gaps::open(
            &mut conn,
            IssueId(issue),
            &relay_store::gaps::NewGapRow {
                question: "Which format?",
                severity: "blocking",
                respondent: "reporter",
                evidence: None,
                run: None,
            },
        )
        .await?;
        issues.push(issue);
    }
    let batch = support::batch(serde_json::json!({"actions": [
        {"type": "update_gaps", "close": [{"gap": "1", "reason": "answered", "note": "CSV please.", "note_id": "501"}],
         "add": [{"question": "Which encoding?", "severity": "low", "respondent": "assignee"}]},
        {"type": "update_findings", "add": [{"synthesis": "Export is a stub",
            "sources": [{"path": "pkg/export.go", "start_line": 4, "end_line": 5, "quote": "return errNotImplemented"}]}]},
        {"type": "update_learnings", "propose": [{"kind": "code", "content": "Exports live in pkg/."}]},
        {"type": "post_comment", "content": "Thanks, CSV it is.", "reply_to": "501"},
        {"type": "ready_for_spec_generation", "proceed_signal": "go", "proceed_note_id": "501", "context_summary": "CSV export"}
    ]}));

    // Interleave the baseline and the measured work so both see the same machine load.
    let mut insert = Vec::with_capacity(batches);
    let mut batch_cost = Vec::with_capacity(batches);
    for (i, issue) in issues.iter().enumerate() {
        let started = Instant::now();
        sqlx::query("INSERT INTO learnings (tracker, project_id, kind, content, content_hash) VALUES ('b', 'b', 'code', 'x', $1)")
            .bind(format!("baseline-{i}"))
            .execute(&pool)
            .await?;
        insert.push(started.elapsed());

        let started = Instant::now();
        let mut conn = pool.acquire().await?;
        let mut ctx =
            ValidationContext::load(&mut conn, IssueId(*issue), Some(snapshot.clone())).await?;
        drop(conn);
        // The pending note of an author who may engage Relay, as the orchestrator hands it over.
        ctx.authority = relay_actions::Authority::Events {
            admitted: vec![relay_actions::PendingNote::new("501", "CSV please.\nGo")],
            refused: Vec::new(),
        };
        let validated = validate(&ctx, &batch).map_err(|r| anyhow::anyhow!("{r}"))?;
        executor
            .execute(
                &validated,
                BatchId {
                    job_id: JobId(i as i64 + 1),
                    run: 1,
                    cycle: 0,
                },
                Some(WatermarkRaise {
                    issue_id: IssueId(*issue),
                    through_delivery: 1,
                }),
            )
            .await?;
        batch_cost.push(started.elapsed());
    }
    let (i50, i99) = percentiles(&mut insert);
    let (b50, b99) = percentiles(&mut batch_cost);
    println!(
        "batches: {batches} (5 actions each: close+add gap, 1 cited finding, 1 learning, 1 reply, ready)"
    );
    println!(
        "bare single-row INSERT      p50 {:>8.3} ms  p99 {:>8.3} ms",
        ms(i50),
        ms(i99)
    );
    println!(
        "validate + batch tx         p50 {:>8.3} ms  p99 {:>8.3} ms",
        ms(b50),
        ms(b99)
    );
    println!(
        "ratio (batch / INSERT)      p50 {:>8.1}x    p99 {:>8.1}x",
        ratio(b50, i50),
        ratio(b99, i99)
    );

    // Outbox drain: `writes` comments on one issue, through the in-process tracker double.
    let drain_issue = support::insert_issue(&pool, 1_000_000, &[]).await;
    let mut tx = pool.begin().await?;
    for i in 0..writes {
        let key = format!("bench-{i}");
        relay_store::outbox::enqueue(
            &mut tx,
            &relay_store::outbox::NewWrite {
                idempotency_key: &key,
                issue_id: IssueId(drain_issue),
                job_id: None,
                kind: relay_store::outbox::WriteKind::Comment,
                body: &relay_actions::keys::with_marker("benchmark comment", &key),
                target_note_id: None,
                target_discussion_id: None,
            },
        )
        .await?;
    }
    tx.commit().await?;
    let started = Instant::now();
    let report = executor
        .drain_outbox(IssueId(drain_issue), &support::issue_ref(1_000_000))
        .await?;
    let elapsed = started.elapsed();
    anyhow::ensure!(
        report.sent.len() == writes,
        "drained {} of {writes}",
        report.sent.len()
    );
    let per_write = elapsed / writes as u32;
    println!(
        "outbox drain, {writes} writes (tracker double, no HTTP): {:.0} writes/s, {:.3} ms per write = {:.1}x a bare INSERT (p50)",
        writes as f64 / elapsed.as_secs_f64(),
        ms(per_write),
        ratio(per_write, i50)
    );

    // Against the local GitHub server, with the real client: pacing off, then on.
    let github = relay_tracker::fake::FakeGitHub::start().await;
    github.add_token("ghp_bench", "relay-bot");
    github.seed_issue("octo/bench", 1, "Bench", "body");
    let unpaced = github.settings("ghp_bench", "relay-bot");
    let (rate, elapsed) = drain_github(&pool, &unpaced, 2_000_000, writes).await?;
    println!(
        "outbox drain, {writes} writes to the local GitHub server, pacing off: {rate:.0} writes/s ({:.2} s)",
        elapsed.as_secs_f64()
    );
    let mut paced = unpaced.clone();
    paced.write_rate_per_sec = PACED_RATE;
    paced.write_burst = PACED_BURST;
    let (rate, elapsed) = drain_github(&pool, &paced, 3_000_000, PACED_WRITES).await?;
    // After the burst, writes are released at the configured rate.
    let steady = (PACED_WRITES - PACED_BURST as usize) as f64 / elapsed.as_secs_f64();
    println!(
        "outbox drain, {PACED_WRITES} writes, pacing on ({PACED_RATE}/s, burst {PACED_BURST}): {rate:.1} writes/s overall, \
         {steady:.1} writes/s after the burst ({:.2} s) = {:.3} of the configured rate",
        elapsed.as_secs_f64(),
        steady / PACED_RATE
    );
    Ok(())
}

/// Pacing-on figure: configured rate, burst, and how many writes.
const PACED_RATE: f64 = 50.0;
const PACED_BURST: u32 = 5;
const PACED_WRITES: usize = 250;

/// Records `writes` comments for a new issue (`number` on the fake's `octo/bench#1`) and drains
/// them through a real GitHub client built from `settings`. Returns writes/s and the drain time.
async fn drain_github(
    pool: &sqlx::PgPool,
    settings: &relay_core::TrackerSettings,
    number: i64,
    writes: usize,
) -> anyhow::Result<(f64, Duration)> {
    let issue = support::insert_issue(pool, number, &[]).await;
    let mut tx = pool.begin().await?;
    for i in 0..writes {
        let key = format!("gh-{number}-{i}");
        relay_store::outbox::enqueue(
            &mut tx,
            &relay_store::outbox::NewWrite {
                idempotency_key: &key,
                issue_id: IssueId(issue),
                job_id: None,
                kind: relay_store::outbox::WriteKind::Comment,
                body: &relay_actions::keys::with_marker("benchmark comment", &key),
                target_note_id: None,
                target_discussion_id: None,
            },
        )
        .await?;
    }
    tx.commit().await?;
    let tracker = relay_tracker::registry::build(settings)?;
    let executor = Executor::new(pool.clone(), tracker).with_retry(RetryPolicy::immediate());
    let target = relay_tracker::IssueRef {
        project_id: "1".into(),
        project_path: "octo/bench".into(),
        number: 1,
        installation_id: None,
    };
    let started = Instant::now();
    let report = executor.drain_outbox(IssueId(issue), &target).await?;
    let elapsed = started.elapsed();
    anyhow::ensure!(
        report.sent.len() == writes,
        "drained {} of {writes}: {:?}",
        report.sent.len(),
        report.failures
    );
    Ok((writes as f64 / elapsed.as_secs_f64(), elapsed))
}

fn percentiles(samples: &mut [Duration]) -> (Duration, Duration) {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)];
    (at(0.50), at(0.99))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}
