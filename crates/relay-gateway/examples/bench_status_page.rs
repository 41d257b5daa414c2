//! The status page's figures: render time of the issues list with 10,000 issues
//! (`GET /ui`, the first page of 50, newest activity first), p50/p99, against the matching read-API
//! call (`GET /api/issues?limit=50`) measured in the same run on the same data, both over real
//! HTTP; then the weight (bytes) of each page and of the embedded assets.
//!
//! `DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres cargo run --release -p relay-gateway --example bench_status_page [-- ISSUES ROUNDS]`
//! Runs in a throwaway database it creates and drops.

use relay_core::{IssueId, JobId};
use std::time::{Duration, Instant};

use anyhow::Context;
use relay_gateway::{ApiSettings, AppState, ServerSettings, UiSettings};
use relay_store::bench::p50_p99;
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;

const TOKEN: &str = "bench-token";
const WARMUP: usize = 20;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let issues: i64 = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(10_000);
    let rounds: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(300);
    let admin_url = std::env::var("DATABASE_URL").context("DATABASE_URL must be set")?;
    let scratch = relay_store::bench::ScratchDatabase::create(&admin_url, "relay_bench_ui").await?;
    let result = run(&scratch.url, issues, rounds).await;
    scratch.drop_database().await?;
    result
}

async fn run(url: &str, issues: i64, rounds: usize) -> anyhow::Result<()> {
    let pool = PgPoolOptions::new().max_connections(8).connect(url).await?;
    relay_store::migrate(&pool).await?;
    let (issue, job) = seed(&pool, issues).await?;

    let state = AppState::new(pool.clone(), Vec::new(), ServerSettings::default(), 1)
        .with_api(ApiSettings {
            token: Some(TOKEN.to_owned().into()),
        })
        .with_ui(UiSettings::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, relay_gateway::app(state)).await });
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let login = client
        .post(format!("{base}/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={TOKEN}"))
        .send()
        .await?;
    let cookie = login
        .headers()
        .get("set-cookie")
        .context("no session cookie")?
        .to_str()?
        .split(';')
        .next()
        .unwrap_or_default()
        .to_owned();

    let ui = |path: String| {
        let request = client
            .get(format!("{base}{path}"))
            .header("cookie", &cookie);
        async move { request.send().await?.error_for_status()?.bytes().await }
    };
    let api = |path: String| {
        let request = client.get(format!("{base}{path}")).bearer_auth(TOKEN);
        async move { request.send().await?.error_for_status()?.bytes().await }
    };
    for _ in 0..WARMUP {
        ui("/ui".into()).await?;
        api("/api/issues?limit=50".into()).await?;
    }
    let (mut page_times, mut api_times, mut deep_times) = (Vec::new(), Vec::new(), Vec::new());
    // Interleaved, so both see the same cache and load.
    for _ in 0..rounds {
        let started = Instant::now();
        ui("/ui".into()).await?;
        page_times.push(started.elapsed());
        let started = Instant::now();
        api("/api/issues?limit=50".into()).await?;
        api_times.push(started.elapsed());
        let started = Instant::now();
        ui(format!("/ui?page={}", issues / 50 / 2)).await?;
        deep_times.push(started.elapsed());
    }
    let (p50, p99) = p50_p99(&mut page_times);
    let (api50, api99) = p50_p99(&mut api_times);
    let (deep50, deep99) = p50_p99(&mut deep_times);
    println!(
        "{issues} issues, {rounds} rounds each (after {WARMUP} warm-up), one client, real HTTP"
    );
    println!(
        "GET /ui (first 50, newest activity first): p50 {} p99 {}",
        ms(p50),
        ms(p99)
    );
    println!(
        "GET /ui?page={} (a middle page):          p50 {} p99 {}",
        issues / 50 / 2,
        ms(deep50),
        ms(deep99)
    );
    println!(
        "GET /api/issues?limit=50 (baseline):       p50 {} p99 {}",
        ms(api50),
        ms(api99)
    );
    println!(
        "ratio /ui ÷ /api: p50 {:.2}× p99 {:.2}×",
        p50.as_secs_f64() / api50.as_secs_f64(),
        p99.as_secs_f64() / api99.as_secs_f64()
    );

    listing_statements(&pool, rounds).await?;

    println!("\npage weight (uncompressed HTML bytes; assets are separate, cacheable files):");
    let sign_in = client
        .get(format!("{base}/ui"))
        .send()
        .await?
        .bytes()
        .await?;
    println!("  sign-in form            {:>7}", sign_in.len());
    for (name, path) in [
        ("issues list (50 rows)", "/ui".to_owned()),
        ("one issue", format!("/ui/issues/{issue}")),
        ("one job", format!("/ui/jobs/{job}")),
        ("operations", "/ui/ops".to_owned()),
    ] {
        println!("  {name:<23} {:>7}", ui(path).await?.len());
    }
    for asset in ["style.css", "live.js"] {
        let bytes = ui(format!("/ui/assets/{asset}")).await?;
        println!("  asset {asset:<17} {:>7}", bytes.len());
    }
    Ok(())
}

/// The listing's statement before issue #38 (every issue's activity aggregated from the usage
/// ledger and every issue sorted, per request), kept here as the baseline.
const LISTING_BEFORE: &str = "WITH usage AS (
         SELECT issue_id, sum(prompt_tokens + completion_tokens) AS tokens, max(created_at) AS last
         FROM llm_usage WHERE issue_id IS NOT NULL GROUP BY issue_id
     ), page AS (
         SELECT i.id, i.tracker, i.project_path, i.number, i.title, i.state, i.url,
                coalesce(u.tokens, 0)::BIGINT AS tokens, greatest(i.updated_at, u.last) AS last_activity
         FROM issues i LEFT JOIN usage u ON u.issue_id = i.id
         ORDER BY last_activity DESC, i.id DESC OFFSET 0 LIMIT 51
     )
     SELECT p.*,
            (SELECT count(*) FROM gaps g WHERE g.issue_id = p.id AND g.status = 'open') AS open_gaps,
            (SELECT count(*) FROM findings f WHERE f.issue_id = p.id AND NOT f.removed) AS findings,
            (SELECT s.status FROM specs s WHERE s.issue_id = p.id ORDER BY s.version DESC LIMIT 1)
     FROM page p ORDER BY p.last_activity DESC, p.id DESC";

/// The first page's statement before and now (`relay_store::status::issues`), alternating on one
/// pool, as the database alone sees them (no HTTP, no rendering).
async fn listing_statements(pool: &PgPool, rounds: usize) -> anyhow::Result<()> {
    let page = relay_store::status::IssuePage {
        limit: 51,
        ..Default::default()
    };
    let (mut before, mut now) = (Vec::new(), Vec::new());
    for _ in 0..rounds.min(200) {
        let started = Instant::now();
        sqlx::query(LISTING_BEFORE).fetch_all(pool).await?;
        before.push(started.elapsed());
        let started = Instant::now();
        relay_store::status::issues(pool, &page).await?;
        now.push(started.elapsed());
    }
    let (before50, before99) = p50_p99(&mut before);
    let (now50, now99) = p50_p99(&mut now);
    println!(
        "listing statement, first page, before issue #38 (aggregate + sort every issue): p50 {} p99 {}",
        ms(before50),
        ms(before99)
    );
    println!(
        "listing statement, now (the last-activity index):                          p50 {} p99 {} ({:.1}x faster at p50)",
        ms(now50),
        ms(now99),
        before50.as_secs_f64() / now50.as_secs_f64()
    );
    Ok(())
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// `count` issues over 20 projects, each with an LLM call (tokens and activity), every third
/// with an open gap, every fifth with a finding and a spec; plus one issue with a traced job of
/// 200 events and 40 LLM calls for the weight of the detail pages, and some operations rows.
async fn seed(pool: &PgPool, count: i64) -> anyhow::Result<(i64, i64)> {
    sqlx::query(
        "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
         SELECT 'github', (n % 20)::text, 'acme/project-' || (n % 20), n,
                'Issue ' || n || ': retries are not configurable for <component>', 'open', 'someone',
                'https://github.com/acme/project-' || (n % 20) || '/issues/' || n,
                now() - n * interval '1 minute'
         FROM generate_series(1, $1) AS n",
    )
    .bind(count)
    .execute(pool)
    .await?;
    sqlx::query(
        "INSERT INTO llm_usage (issue_id, role, provider, model, prompt_tokens, completion_tokens,
                                cached_tokens, latency_ms, attempts, outcome, created_at)
         SELECT id, 'planner', 'openai', 'gpt-5-mini', 1000 + id % 500, 200, 100, 800, 1, 'ok',
                now() - (id % 997) * interval '1 minute'
         FROM issues",
    )
    .execute(pool)
    .await?;
    sqlx::query(
        "INSERT INTO gaps (issue_id, number, question, severity, respondent)
         SELECT id, 1, 'Which status codes should be retried?', 'high', 'reporter'
         FROM issues WHERE id % 3 = 0",
    )
    .execute(pool)
    .await?;
    sqlx::query(
        "INSERT INTO findings (issue_id, number, synthesis)
         SELECT id, 1, 'The client retries three times.' FROM issues WHERE id % 5 = 0",
    )
    .execute(pool)
    .await?;
    sqlx::query(
        "INSERT INTO specs (issue_id, version, body)
         SELECT id, 1, '# Spec' FROM issues WHERE id % 5 = 0",
    )
    .execute(pool)
    .await?;
    sqlx::query("ANALYZE").execute(pool).await?;

    let issue: i64 = 1;
    let mut conn = pool.acquire().await?;
    for n in 0..6 {
        let gap = relay_store::gaps::NewGapRow {
            question: "Which HTTP status codes should be retried, and how often?",
            severity: ["blocking", "high", "medium", "low"][n % 4],
            respondent: "reporter",
            evidence: Some("src/client.rs:40 retries on every error"),
            run: None,
        };
        relay_store::gaps::open(&mut conn, IssueId(issue), &gap).await?;
    }
    for _ in 0..5 {
        let source = relay_store::findings::SourceRow {
            path: "src/client.rs".into(),
            start_line: 40,
            end_line: 52,
            quote: Some("for attempt in 0..3 {\n    match send().await { .. }\n}".into()),
            commit_sha: "7fd1a60b01f91b314f59955a4e4d4e80d8edf11d".into(),
            status: Default::default(),
            moved_from: None,
        };
        relay_store::findings::insert(
            &mut conn,
            IssueId(issue),
            "The client retries every request three times with a fixed delay of one second.",
            None,
            &[source],
        )
        .await?;
    }
    let spec = "# Configurable retries\n\n## Scope\n\n- `retry.max_attempts` (default 3)\n- `retry.backoff` (fixed | exponential)\n\n## Acceptance\n\n1. Config keys documented.\n2. Tests for both backoffs.\n";
    for _ in 0..3 {
        relay_store::specs::insert_draft(&mut conn, IssueId(issue), spec, None).await?;
    }
    drop(conn);
    let job: i64 = sqlx::query_scalar(
        "INSERT INTO jobs (kind, payload, max_attempts, status, attempts, finished_at)
         VALUES ('process_issue', jsonb_build_object('issue_id', $1::bigint), 3, 'succeeded', 1, now())
         RETURNING id",
    )
    .bind(issue)
    .fetch_one(pool)
    .await?;
    let run = relay_store::trace::start_run(
        pool,
        &relay_store::trace::NewRun {
            job_id: JobId(job),
            issue_id: Some(IssueId(issue)),
            attempt: 1,
            worker: "bench",
        },
    )
    .await?;
    let call = serde_json::json!({ "role": "explore", "model": "gpt-5-mini", "tokens_in": 4000,
        "tokens_out": 300, "tokens_cached": 1000, "latency_ms": 900, "outcome": "ok" });
    let tool = serde_json::json!({ "tool": "grep", "args": "retry", "ok": true, "duration_ms": 12, "result_tokens": 400 });
    let now = chrono::Utc::now();
    let events: Vec<relay_store::trace::NewEvent<'_>> = (0..200)
        .map(|seq| relay_store::trace::NewEvent {
            seq,
            at: now,
            kind: if seq % 2 == 0 {
                "llm_call"
            } else {
                "tool_call"
            },
            agent: "explore#1",
            payload: if seq % 2 == 0 { &call } else { &tool },
        })
        .collect();
    relay_store::trace::insert_events(pool, run, JobId(job), &events).await?;
    for _ in 0..40 {
        relay_store::llm_usage::insert(
            pool,
            &relay_store::llm_usage::NewLlmUsage {
                job_id: Some(JobId(job)),
                issue_id: Some(IssueId(issue)),
                role: "explore",
                provider: "openai",
                model: "gpt-5-mini",
                prompt_tokens: 4000,
                completion_tokens: 300,
                cached_tokens: 1000,
                latency_ms: 900,
                estimated: false,
                attempts: 1,
                outcome: "ok",
                error_kind: None,
            },
        )
        .await?;
    }
    sqlx::query(
        "INSERT INTO deliveries (tracker, event_type, action, delivery_key, outcome, reason, payload)
         SELECT 'github', 'issue_comment', 'created', 'd-' || n,
                CASE WHEN n % 3 = 0 THEN 'accepted' ELSE 'ignored' END,
                CASE WHEN n % 3 = 0 THEN 'mention' ELSE 'not_mentioned' END, '{}'
         FROM generate_series(1, 100) AS n",
    )
    .execute(pool)
    .await?;
    Ok((issue, job))
}
