//! The status page's test fixture: a database holding an issue with gaps, a finding, spec
//! versions, a running traced job with LLM calls, a dead job, a failed tracker write and
//! deliveries; the gateway served on a real port with the API token and prices; HTTP helpers.
//! Used by `status_page`, `status_content` and `status_browser`.

use relay_core::{IssueId, JobId};
use relay_gateway::{ApiSettings, AppState, UiSettings};
use relay_store::findings::SourceRow;
use relay_store::trace::NewEvent;
use reqwest::StatusCode;
use reqwest::header::SET_COOKIE;
use serde_json::json;
use sqlx::PgPool;

use crate::helpers::state;

pub const UI_TOKEN: &str = "status-page-token";
/// A commit the finding's citation was verified at.
pub const COMMIT: &str = "7fd1a60b01f91b314f59955a4e4d4e80d8edf11d";

/// What [`seed`] wrote.
pub struct Seeded {
    pub issue: i64,
    pub job: i64,
    pub run: i64,
}

/// Text the seeded rows carry (the browser test looks for it).
pub struct SeedText<'a> {
    pub title: &'a str,
    pub gap: &'a str,
    pub finding: &'a str,
    pub spec: &'a str,
}

pub const PLAIN: SeedText<'static> = SeedText {
    title: "Retries are not configurable",
    gap: "Which HTTP status codes should be retried?",
    finding: "The client retries every request three times with a fixed delay.",
    spec: "# Configurable retries\n\n- Add `retry.max_attempts` to the config.\n- Keep the default at **3**.\n",
};

/// An issue with a gap (open) and a closed one, a finding citing a file, two spec versions, a
/// running traced job with LLM calls, a dead job, a failed tracker write and deliveries.
pub async fn seed(pool: &PgPool, text: &SeedText<'_>) -> Seeded {
    let issue: i64 = sqlx::query_scalar(
        "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
         VALUES ('github', '1296269', 'Codertocat/Hello-World', 1, $1, 'open', 'Codertocat',
                 'https://github.com/Codertocat/Hello-World/issues/1', now() - interval '1 hour')
         RETURNING id",
    )
    .bind(text.title)
    .fetch_one(pool)
    .await
    .unwrap();
    let mut conn = pool.acquire().await.unwrap();
    let gap = relay_store::gaps::NewGapRow {
        question: text.gap,
        severity: "blocking",
        respondent: "reporter",
        evidence: Some("src/client.rs retries on every error"),
        run: None,
    };
    relay_store::gaps::open(&mut conn, IssueId(issue), &gap)
        .await
        .unwrap();
    let answered = relay_store::gaps::NewGapRow {
        question: "Is the delay configurable today?",
        severity: "low",
        ..gap.clone()
    };
    let closed = relay_store::gaps::open(&mut conn, IssueId(issue), &answered)
        .await
        .unwrap();
    relay_store::gaps::close(
        &mut conn,
        IssueId(issue),
        closed.number,
        &relay_store::gaps::GapClosure {
            reason: "inferred",
            note: "the code has a constant delay",
            run: None,
        },
    )
    .await
    .unwrap();
    let source = SourceRow {
        path: "src/client.rs".into(),
        start_line: 3,
        end_line: 5,
        quote: Some("for _ in 0..3 { retry() }".into()),
        commit_sha: COMMIT.into(),
        status: Default::default(),
        moved_from: None,
    };
    relay_store::findings::insert(&mut conn, IssueId(issue), text.finding, None, &[source])
        .await
        .unwrap();
    relay_store::specs::insert_draft(&mut conn, IssueId(issue), "# First draft\n", None)
        .await
        .unwrap();
    relay_store::specs::insert_draft(&mut conn, IssueId(issue), text.spec, None)
        .await
        .unwrap();
    drop(conn);

    let job: i64 = sqlx::query_scalar(
        "INSERT INTO jobs (kind, payload, max_attempts, status, attempts, started_at)
         VALUES ('process_issue', $1, 3, 'running', 1, now()) RETURNING id",
    )
    .bind(json!({ "issue_id": issue }))
    .fetch_one(pool)
    .await
    .unwrap();
    let run = relay_store::trace::start_run(
        pool,
        &relay_store::trace::NewRun {
            job_id: JobId(job),
            issue_id: Some(IssueId(issue)),
            attempt: 1,
            worker: "worker-1",
        },
    )
    .await
    .unwrap();
    let stage = json!({ "stage": "planner", "phase": "begin" });
    let call = json!({ "role": "planner", "model": "gpt-5-mini", "tokens_in": 1200,
                       "tokens_out": 300, "tokens_cached": 200, "latency_ms": 850, "outcome": "ok" });
    let tool = json!({ "tool": "grep", "args": "retry", "ok": true, "duration_ms": 12, "result_tokens": 90 });
    write_events(
        pool,
        run,
        job,
        &[
            ("stage", "planner", &stage),
            ("llm_call", "planner", &call),
            ("tool_call", "explore#1", &tool),
        ],
    )
    .await;
    for (role, prompt) in [("planner", 1200), ("explore", 5000), ("spec", 900)] {
        relay_store::llm_usage::insert(
            pool,
            &relay_store::llm_usage::NewLlmUsage {
                job_id: Some(JobId(job)),
                issue_id: Some(IssueId(issue)),
                role,
                provider: "openai",
                model: "gpt-5-mini",
                prompt_tokens: prompt,
                completion_tokens: prompt / 4,
                cached_tokens: prompt / 6,
                latency_ms: 850,
                estimated: false,
                attempts: 1,
                outcome: "ok",
                error_kind: None,
            },
        )
        .await
        .unwrap();
    }
    sqlx::query(
        "INSERT INTO jobs (kind, payload, max_attempts, status, attempts, last_error, last_cause, finished_at)
         VALUES ('process_issue', $1, 3, 'dead', 3, 'llm: 429 too many requests (3 attempts)',
                 'llm rate_limited', now())",
    )
    .bind(json!({ "issue_id": issue }))
    .execute(pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO outbox (idempotency_key, issue_id, job_id, kind, body, status, attempts, last_error)
         VALUES ('seed-1', $1, $2, 'comment', 'hello', 'failed', 5, 'github: 403 resource not accessible')",
    )
    .bind(issue)
    .bind(job)
    .execute(pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO deliveries (tracker, event_type, action, delivery_key, outcome, reason, payload, issue_id, job_id)
         VALUES ('github', 'issue_comment', 'created', 'd-1', 'accepted', 'mention', '{}', $1, $2),
                ('github', 'issues', 'edited', 'd-2', 'ignored', 'not_mentioned', '{}', $1, NULL)",
    )
    .bind(issue)
    .bind(job)
    .execute(pool)
    .await
    .unwrap();
    Seeded { issue, job, run }
}

/// Appends events to a run (sequence numbers after the run's last).
pub async fn write_events(
    pool: &PgPool,
    run: i64,
    job: i64,
    events: &[(&str, &str, &serde_json::Value)],
) {
    let last: i32 =
        sqlx::query_scalar("SELECT coalesce(max(seq), 0) FROM trace_events WHERE run_id = $1")
            .bind(run)
            .fetch_one(pool)
            .await
            .unwrap();
    let now = chrono::Utc::now();
    let events: Vec<NewEvent<'_>> = events
        .iter()
        .enumerate()
        .map(|(i, (kind, agent, payload))| NewEvent {
            seq: last + 1 + i as i32,
            at: now,
            kind,
            agent,
            payload,
        })
        .collect();
    relay_store::trace::insert_events(pool, run, JobId(job), &events)
        .await
        .unwrap();
}

/// The app with the API token, the status page and prices.
pub fn ui_state(pool: PgPool, ui: UiSettings) -> AppState {
    let prices =
        toml::from_str("[\"gpt-5-mini\"]\ninput = 0.25\noutput = 2.0\ncached_input = 0.025\n")
            .unwrap();
    state(pool)
        .with_api(ApiSettings {
            token: Some(UI_TOKEN.to_owned().into()),
        })
        .with_ui(ui)
        .with_prices(prices)
}

/// Serves `state` on a real port; returns `http://127.0.0.1:PORT`.
pub async fn serve(state: AppState) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = relay_gateway::app(state);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Signs in and returns the `Cookie` header value.
pub async fn sign_in(base: &str) -> String {
    let response = client()
        .post(format!("{base}/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}", UI_TOKEN))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let cookie = response.headers()[SET_COOKIE].to_str().unwrap();
    cookie.split(';').next().unwrap().to_owned()
}

pub async fn get(base: &str, path: &str, cookie: Option<&str>) -> reqwest::Response {
    let mut request = client().get(format!("{base}{path}"));
    if let Some(cookie) = cookie {
        request = request.header("cookie", cookie);
    }
    request.send().await.unwrap()
}
