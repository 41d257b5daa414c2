//! The read API over real HTTP against real Postgres: auth (none configured → 404, wrong → 401,
//! right → 200) and what each route returns.

use relay_core::IssueId;
use relay_gateway::{ApiSettings, AppState, ServerSettings};
use relay_store::PgPool;
use reqwest::StatusCode;
use serde_json::Value;

const TOKEN: &str = "api-test-token";

async fn serve(pool: PgPool, api: ApiSettings) -> String {
    relay_telemetry::init_for_test();
    let state = AppState::new(pool, Vec::new(), ServerSettings::default(), 3).with_api(api);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        axum::serve(listener, relay_gateway::app(state))
            .await
            .unwrap();
    });
    base
}

fn with_token() -> ApiSettings {
    ApiSettings {
        token: Some(TOKEN.to_string().into()),
    }
}

async fn get(url: &str, token: Option<&str>) -> (StatusCode, Value) {
    let mut request = reqwest::Client::new().get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn seed(pool: &PgPool) -> (i64, i64) {
    let issue: i64 = sqlx::query_scalar(
        "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
         VALUES ('github', '7', 'acme/app', 12, 'Export fails', 'open', 'alice', 'https://x/12', now())
         RETURNING id",
    )
    .fetch_one(pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
         VALUES ('gitlab', '9', 'grp/app', 3, 'Other', 'opened', 'bob', 'https://y/3', now())",
    )
    .execute(pool)
    .await
    .unwrap();
    let mut conn = pool.acquire().await.unwrap();
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
    .await
    .unwrap();
    relay_store::learnings::propose(
        &mut conn,
        &relay_store::learnings::NewLearning {
            tracker: "github",
            project_id: "7",
            kind: "code",
            content: "Exports live in pkg/.",
            issue_id: Some(IssueId(issue)),
            run: None,
            restricted: false,
            note_id: None,
            guidance_digest: None,
        },
    )
    .await
    .unwrap();
    relay_store::llm_usage::insert(
        pool,
        &relay_store::llm_usage::NewLlmUsage {
            job_id: None,
            issue_id: Some(IssueId(issue)),
            role: "planner",
            provider: "openai",
            model: "m",
            prompt_tokens: 100,
            completion_tokens: 10,
            cached_tokens: 0,
            latency_ms: 1,
            attempts: 1,
            outcome: "ok",
            error_kind: None,
            estimated: false,
        },
    )
    .await
    .unwrap();
    let job: i64 = sqlx::query_scalar(
        "INSERT INTO jobs (kind, payload, max_attempts) VALUES ('process_issue', $1, 3) RETURNING id",
    )
    .bind(serde_json::json!({ "issue_id": issue }))
    .fetch_one(pool)
    .await
    .unwrap();
    (issue, job)
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn without_a_configured_token_the_api_does_not_exist(pool: PgPool) {
    let (issue, job) = seed(&pool).await;
    let base = serve(pool, ApiSettings::default()).await;
    for path in [
        "/api/issues".to_string(),
        format!("/api/issues/{issue}"),
        format!("/api/jobs/{job}"),
    ] {
        for token in [None, Some(TOKEN), Some("")] {
            let (status, _) = get(&format!("{base}{path}"), token).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{path} {token:?}");
        }
    }
    // The rest of the gateway is unaffected.
    assert_eq!(
        get(&format!("{base}/healthz"), None).await.0,
        StatusCode::OK
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_wrong_token_is_refused_and_the_right_one_reads(pool: PgPool) {
    let (issue, job) = seed(&pool).await;
    let base = serve(pool, with_token()).await;
    for token in [
        None,
        Some("wrong"),
        Some("api-test-toke"),
        Some("api-test-token2"),
    ] {
        let (status, body) = get(&format!("{base}/api/issues/{issue}"), token).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{token:?}");
        assert_eq!(body["error"], "missing or wrong api token");
    }

    let (status, list) = get(&format!("{base}/api/issues"), Some(TOKEN)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["issues"].as_array().unwrap().len(), 2);
    let (_, filtered) = get(
        &format!("{base}/api/issues?tracker=github&project=acme/app&number=12"),
        Some(TOKEN),
    )
    .await;
    assert_eq!(filtered["issues"][0]["id"], issue);
    assert_eq!(filtered["issues"][0]["open_gaps"], 1);
    assert_eq!(filtered["issues"].as_array().unwrap().len(), 1);
    let (_, page) = get(&format!("{base}/api/issues?limit=1"), Some(TOKEN)).await;
    assert_eq!(page["next_after"], issue);
    let (_, rest) = get(
        &format!("{base}/api/issues?limit=1&after={issue}"),
        Some(TOKEN),
    )
    .await;
    assert_eq!(rest["issues"][0]["number"], 3);
    let (status, _) = get(&format!("{base}/api/issues?limit=abc"), Some(TOKEN)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let (status, detail) = get(&format!("{base}/api/issues/{issue}"), Some(TOKEN)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(detail["issue"]["title"], "Export fails");
    assert_eq!(detail["status"], "waiting_for_answers");
    assert_eq!(detail["gaps"][0]["question"], "Which format?");
    assert_eq!(detail["findings"], serde_json::json!([]));
    assert_eq!(detail["learnings"][0]["content"], "Exports live in pkg/.");
    assert_eq!(detail["spec"], Value::Null);
    assert_eq!(detail["spend_by_role"][0]["role"], "planner");
    assert_eq!(detail["spend_by_role"][0]["prompt_tokens"], 100);
    assert_eq!(detail["jobs"][0]["id"], job);
    assert_eq!(
        detail["jobs"][0]["events_url"],
        format!("/api/jobs/{job}/events")
    );

    let (status, job_body) = get(&format!("{base}/api/jobs/{job}"), Some(TOKEN)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(job_body["job"]["kind"], "process_issue");
    assert_eq!(
        job_body["job"]["events_url"],
        format!("/api/jobs/{job}/events")
    );
    assert_eq!(job_body["runs"], serde_json::json!([]));

    assert_eq!(
        get(&format!("{base}/api/issues/999999"), Some(TOKEN))
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        get(&format!("{base}/api/jobs/999999"), Some(TOKEN)).await.0,
        StatusCode::NOT_FOUND
    );
}
