//! The status page (`/ui`) over real HTTP against a served gateway: 404 without a token,
//! sign-in, sessions (cookie flags, sign-out, server-side expiry, the API accepting the cookie
//! for GETs), escaping of tracker and model text, the Content-Security-Policy, and what each page
//! shows. The browser test (`status_browser`) drives the same pages in Chromium.

use std::time::Duration;

use relay_gateway::{ApiSettings, AppState, UiSettings};
use relay_store::findings::SourceRow;
use relay_store::trace::NewEvent;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_SECURITY_POLICY, LOCATION, SET_COOKIE};
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
    relay_store::gaps::open(&mut conn, issue, &gap)
        .await
        .unwrap();
    let answered = relay_store::gaps::NewGapRow {
        question: "Is the delay configurable today?",
        severity: "low",
        ..gap.clone()
    };
    let closed = relay_store::gaps::open(&mut conn, issue, &answered)
        .await
        .unwrap();
    relay_store::gaps::close(
        &mut conn,
        issue,
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
    };
    relay_store::findings::insert(&mut conn, issue, text.finding, None, &[source])
        .await
        .unwrap();
    relay_store::specs::insert_draft(&mut conn, issue, "# First draft\n", None)
        .await
        .unwrap();
    relay_store::specs::insert_draft(&mut conn, issue, text.spec, None)
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
            job_id: job,
            issue_id: Some(issue),
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
                job_id: Some(job),
                issue_id: Some(issue),
                role,
                provider: "openai",
                model: "gpt-5-mini",
                prompt_tokens: prompt,
                completion_tokens: prompt / 4,
                cached_tokens: prompt / 6,
                latency_ms: 850,
                attempts: 1,
                outcome: "ok",
                error_kind: None,
            },
        )
        .await
        .unwrap();
    }
    sqlx::query(
        "INSERT INTO jobs (kind, payload, max_attempts, status, attempts, last_error, finished_at)
         VALUES ('process_issue', $1, 3, 'dead', 3, 'llm: 429 too many requests (3 attempts)', now())",
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
    relay_store::trace::insert_events(pool, run, job, &events)
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

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Signs in and returns the `Cookie` header value.
async fn sign_in(base: &str) -> String {
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

async fn get(base: &str, path: &str, cookie: Option<&str>) -> reqwest::Response {
    let mut request = client().get(format!("{base}{path}"));
    if let Some(cookie) = cookie {
        request = request.header("cookie", cookie);
    }
    request.send().await.unwrap()
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_status_page_does_not_exist_without_an_api_token(pool: PgPool) {
    seed(&pool, &PLAIN).await;
    let base = serve(state(pool)).await;
    for path in [
        "/ui",
        "/ui/ops",
        "/ui/issues/1",
        "/ui/jobs/1",
        "/ui/assets/style.css",
    ] {
        assert_eq!(
            get(&base, path, None).await.status(),
            StatusCode::NOT_FOUND,
            "{path}"
        );
    }
    let login = client()
        .post(format!("{base}/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}", ""))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), StatusCode::NOT_FOUND);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn signing_in_sets_a_session_cookie_and_a_wrong_token_shows_the_form_again(pool: PgPool) {
    let seeded = seed(&pool, &PLAIN).await;
    let base = serve(ui_state(pool, UiSettings::default())).await;

    let form = get(&base, "/ui", None).await;
    assert_eq!(form.status(), StatusCode::OK);
    let html = form.text().await.unwrap();
    assert!(
        html.contains(r#"name="token""#) && html.contains(r#"action="/ui/login""#),
        "{html}"
    );
    assert!(!html.contains(PLAIN.title), "no data before signing in");
    for path in [
        "/ui/ops".to_owned(),
        format!("/ui/issues/{}", seeded.issue),
        format!("/ui/jobs/{}", seeded.job),
    ] {
        let response = get(&base, &path, None).await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "{path}");
        assert_eq!(response.headers()[LOCATION], "/ui");
    }

    let wrong = client()
        .post(format!("{base}/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}", "status-page-tokeN"))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(wrong.headers().get(SET_COOKIE).is_none());
    let html = wrong.text().await.unwrap();
    assert!(
        html.contains(r#"name="token""#) && html.contains("not right"),
        "{html}"
    );

    let right = client()
        .post(format!("{base}/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}", UI_TOKEN))
        .send()
        .await
        .unwrap();
    assert_eq!(right.status(), StatusCode::SEE_OTHER);
    assert_eq!(right.headers()[LOCATION], "/ui");
    let set_cookie = right.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    assert!(set_cookie.starts_with("relay_session="), "{set_cookie}");
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(set_cookie.contains(flag), "{set_cookie}");
    }
    assert!(!set_cookie.contains("Secure"), "plain http: {set_cookie}");
    let id = set_cookie
        .split(';')
        .next()
        .unwrap()
        .trim_start_matches("relay_session=");
    assert_eq!(id.len(), 64, "256 random bits");
    assert_ne!(
        id,
        sign_in(&base).await.trim_start_matches("relay_session="),
        "random ids"
    );
    let cookie = format!("relay_session={id}");

    let list = get(&base, "/ui", Some(&cookie)).await;
    assert_eq!(list.status(), StatusCode::OK);
    assert!(list.text().await.unwrap().contains(PLAIN.title));
    // The API takes the cookie for GETs (what the live trace's EventSource sends) …
    assert_eq!(
        get(&base, "/api/issues", Some(&cookie)).await.status(),
        StatusCode::OK
    );
    // … but not a made-up one, and never for anything but GET.
    assert_eq!(
        get(&base, "/api/issues", Some("relay_session=00ff"))
            .await
            .status(),
        StatusCode::UNAUTHORIZED
    );
    let post = client()
        .post(format!("{base}/api/issues"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_ne!(post.status(), StatusCode::OK);

    // Behind a TLS-terminating proxy the cookie is Secure.
    let proxied = client()
        .post(format!("{base}/ui/login"))
        .header("x-forwarded-proto", "https")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}", UI_TOKEN))
        .send()
        .await
        .unwrap();
    assert!(
        proxied.headers()[SET_COOKIE]
            .to_str()
            .unwrap()
            .contains("; Secure")
    );
    // A form posted from another site is refused.
    let cross = client()
        .post(format!("{base}/ui/login"))
        .header("origin", "https://evil.example")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}", UI_TOKEN))
        .send()
        .await
        .unwrap();
    assert_eq!(cross.status(), StatusCode::FORBIDDEN);

    // Signing out ends the session on the server, whatever the browser keeps.
    let out = client()
        .post(format!("{base}/ui/logout"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    assert!(
        out.headers()[SET_COOKIE]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    assert_eq!(
        get(&base, "/ui/ops", Some(&cookie)).await.status(),
        StatusCode::SEE_OTHER
    );
    assert_eq!(
        get(&base, "/api/issues", Some(&cookie)).await.status(),
        StatusCode::UNAUTHORIZED
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_session_expires_on_the_server(pool: PgPool) {
    seed(&pool, &PLAIN).await;
    let ui = UiSettings {
        session_ttl_secs: 1,
        secure_cookie: true,
        ..UiSettings::default()
    };
    let base = serve(ui_state(pool, ui)).await;
    let response = client()
        .post(format!("{base}/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}", UI_TOKEN))
        .send()
        .await
        .unwrap();
    let set_cookie = response.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    assert!(
        set_cookie.contains("Max-Age=1") && set_cookie.contains("; Secure"),
        "{set_cookie}"
    );
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    assert_eq!(
        get(&base, "/ui/ops", Some(&cookie)).await.status(),
        StatusCode::OK
    );
    // Past the lifetime (the browser would still send the cookie if it ignored Max-Age).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        get(&base, "/ui/ops", Some(&cookie)).await.status(),
        StatusCode::SEE_OTHER
    );
    assert_eq!(
        get(&base, "/api/issues", Some(&cookie)).await.status(),
        StatusCode::UNAUTHORIZED
    );
    let form = get(&base, "/ui", Some(&cookie)).await.text().await.unwrap();
    assert!(form.contains(r#"name="token""#));
}

const HOSTILE: SeedText<'static> = SeedText {
    title: "<script>alert('title')</script> retries",
    gap: "Why <img src=x onerror=alert('gap')>?",
    finding: "It calls <b onclick=\"alert('finding')\">retry</b>",
    spec: "# Spec\n\n<script>alert('spec')</script>\n\n<iframe src=\"https://evil.example\"></iframe>\n\n[click](javascript:alert('link'))\n",
};

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn tracker_and_model_text_renders_as_text_under_a_strict_csp(pool: PgPool) {
    let seeded = seed(&pool, &HOSTILE).await;
    // A model's trace event with markup in it.
    let hostile = json!({ "decision": "<script>alert('trace')</script>" });
    write_events(
        &pool,
        seeded.run,
        seeded.job,
        &[("decision", "planner", &hostile)],
    )
    .await;
    let base = serve(ui_state(pool, UiSettings::default())).await;
    let cookie = sign_in(&base).await;
    let pages = [
        "/ui".to_owned(),
        format!("/ui/issues/{}", seeded.issue),
        format!("/ui/jobs/{}", seeded.job),
        "/ui/ops".to_owned(),
    ];
    for path in &pages {
        let response = get(&base, path, Some(&cookie)).await;
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let csp = response.headers()[CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap()
            .to_owned();
        assert_eq!(csp, relay_gateway::ui::CONTENT_SECURITY_POLICY);
        for directive in [
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "frame-ancestors 'none'",
            "form-action 'self'",
        ] {
            assert!(csp.contains(directive), "{csp}");
        }
        assert!(!csp.contains("unsafe"), "{csp}");
        assert_eq!(response.headers()["x-content-type-options"], "nosniff");
        assert_eq!(response.headers()["cache-control"], "no-store");
        let html = response.text().await.unwrap();
        for raw in [
            "<script>alert",
            "<img",
            "<iframe",
            "<b onclick",
            "javascript:",
        ] {
            assert!(
                !html.contains(raw),
                "{path} renders {raw} as markup:\n{html}"
            );
        }
        // The only script is the embedded live-trace file, and the only form signs out.
        let scripts: Vec<&str> = html
            .match_indices("<script")
            .map(|(i, _)| &html[i..i + 45])
            .collect();
        assert!(
            scripts
                .iter()
                .all(|s| s.starts_with(r#"<script src="/ui/assets/live.js""#)),
            "{scripts:?}"
        );
        let posts: Vec<&str> = html
            .match_indices("<form")
            .map(|(i, _)| &html[i..i + html[i..].find('>').unwrap()])
            .filter(|form| form.contains(r#"method="post""#))
            .collect();
        assert!(
            posts.iter().all(|f| f.contains(r#"action="/ui/logout""#)),
            "{path}: {posts:?}"
        );
        assert!(!html.contains("method=\"post\" action=\"/api"), "{path}");
    }
    let issue = get(&base, &pages[1], Some(&cookie))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        issue.contains("&lt;script&gt;alert('title')&lt;/script&gt; retries"),
        "{issue}"
    );
    assert!(
        issue.contains("Why &lt;img src=x onerror=alert('gap')&gt;?"),
        "{issue}"
    );
    assert!(
        issue.contains("&lt;b onclick=&quot;alert('finding')&quot;&gt;retry&lt;/b&gt;"),
        "{issue}"
    );
    assert!(
        issue.contains("&lt;script&gt;alert('spec')&lt;/script&gt;"),
        "{issue}"
    );
    assert!(
        issue.contains("<h1>Spec</h1>"),
        "the spec's Markdown is rendered: {issue}"
    );
    let list = get(&base, "/ui", Some(&cookie)).await.text().await.unwrap();
    assert!(
        list.contains("&lt;script&gt;alert('title')&lt;/script&gt; retries"),
        "{list}"
    );
    let job = get(&base, &pages[2], Some(&cookie))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        job.contains("&lt;script&gt;alert('trace')&lt;/script&gt;"),
        "{job}"
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn each_page_shows_what_relay_knows(pool: PgPool) {
    let seeded = seed(&pool, &PLAIN).await;
    let base = serve(ui_state(pool, UiSettings::default())).await;
    let cookie = sign_in(&base).await;

    let list = get(&base, "/ui", Some(&cookie)).await.text().await.unwrap();
    for expected in [
        "github",
        "Codertocat/Hello-World",
        r#"href="https://github.com/Codertocat/Hello-World/issues/1""#,
        "#1 Retries are not configurable",
        // Open gaps 1, findings 1, the latest spec's state, tokens 7,100 + 1,775.
        r#"<td class="num">1</td><td class="num">1</td><td>draft</td>"#,
        "8,875",
        &format!(r#"href="/ui/issues/{}""#, seeded.issue),
    ] {
        assert!(
            list.contains(expected),
            "issues list lacks {expected}:\n{list}"
        );
    }
    let filtered = get(&base, "/ui?project=gitlab/none", Some(&cookie))
        .await
        .text()
        .await
        .unwrap();
    assert!(filtered.contains("No issues yet.") && !filtered.contains(PLAIN.title));

    let issue = get(
        &base,
        &format!("/ui/issues/{}", seeded.issue),
        Some(&cookie),
    )
    .await
    .text()
    .await
    .unwrap();
    for expected in [
        PLAIN.gap,
        "closed: inferred",
        "the code has a constant delay",
        PLAIN.finding,
        &format!(
            r#"href="https://github.com/Codertocat/Hello-World/blob/{COMMIT}/src/client.rs#L3-L5""#
        ),
        "<h1>Configurable retries</h1>",
        "<strong>3</strong>",
        "Version 1",
        "Version 2",
        "<svg",
        "planner",
        "explore",
        &format!(r#"href="/ui/jobs/{}""#, seeded.job),
        "dead",
    ] {
        assert!(
            issue.contains(expected),
            "issue page lacks {expected}:\n{issue}"
        );
    }
    let blocking = issue.find("blocking").unwrap();
    let low = issue.find(">low<").unwrap();
    assert!(blocking < low, "severities in order");

    let job = get(&base, &format!("/ui/jobs/{}", seeded.job), Some(&cookie))
        .await
        .text()
        .await
        .unwrap();
    for expected in [
        "planner begin",
        "grep retry ok",
        "1200/300",
        r#"data-live="true""#,
        "gpt-5-mini",
        // explore: (5000 - 833) × 0.25 + 833 × 0.025 + 1250 × 2.0, per million = $0.0036.
        "$0.0036",
    ] {
        assert!(job.contains(expected), "job page lacks {expected}:\n{job}");
    }

    let ops = get(&base, "/ui/ops", Some(&cookie))
        .await
        .text()
        .await
        .unwrap();
    for expected in [
        "llm: 429 too many requests (3 attempts)",
        "github: 403 resource not accessible",
        "not_mentioned",
        "engaged",
        "mention",
        "running",
    ] {
        assert!(
            ops.contains(expected),
            "operations page lacks {expected}:\n{ops}"
        );
    }
}
