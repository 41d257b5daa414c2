use axum::body::Body;
use http::{Request, StatusCode};
use sqlx::PgPool;

use crate::helpers::*;

/// Every recorded webhook goes through the real router with a valid signature and yields the outcome
/// its event implies (tracker settings in `helpers::trackers`).
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn every_recorded_webhook_yields_its_outcome(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    // (file, event header, status, outcome, reason)
    let github = [
        (
            "issue_comment.created.app-installation.json",
            "issue_comment",
            202,
            "ignored",
            "no_mention",
        ),
        (
            "issue_comment.created.by-bot.minimal.json",
            "issue_comment",
            202,
            "ignored",
            "malformed_payload",
        ),
        (
            "issue_comment.created.on-issue.json",
            "issue_comment",
            202,
            "ignored",
            "no_mention",
        ),
        (
            // The same event as the fixture before it (another hook's copy): one event.
            "issue_comment.created.on-issue.with-installation.json",
            "issue_comment",
            200,
            "duplicate",
            "",
        ),
        (
            "issue_comment.created.on-pull-request.json",
            "issue_comment",
            202,
            "ignored",
            "pull_request_comment",
        ),
        (
            "issue_comment.edited.json",
            "issue_comment",
            202,
            "ignored",
            "edit_without_new_mention",
        ),
        (
            "issues.assigned.with-installation.json",
            "issues",
            202,
            "ignored",
            "not_engaged",
        ),
        (
            "issues.closed.json",
            "issues",
            202,
            "ignored",
            "issue_closed",
        ),
        (
            "issues.edited.app-installation.no-changes.json",
            "issues",
            202,
            "ignored",
            "not_engaged",
        ),
        (
            "issues.edited.json",
            "issues",
            202,
            "ignored",
            "not_engaged",
        ),
        (
            "issues.labeled.json",
            "issues",
            202,
            "accepted",
            "trigger_label",
        ),
        (
            "issues.opened.json",
            "issues",
            202,
            "ignored",
            "not_engaged",
        ),
        (
            // The same event as the fixture before it (another hook's copy): one event.
            "issues.opened.null-body.json",
            "issues",
            200,
            "duplicate",
            "",
        ),
        (
            "issues.reopened.with-installation.json",
            "issues",
            202,
            "ignored",
            "not_engaged",
        ),
        ("ping.json", "ping", 200, "ignored", "ping"),
        ("ping.with-app_id.json", "ping", 200, "ignored", "ping"),
    ];
    for (i, (file, event, status, outcome, reason)) in github.into_iter().enumerate() {
        let body = fixture(&format!("webhooks/github/{file}"));
        let answer = call(&app, github_request(event, &format!("gh-{i}"), body)).await;
        assert_eq!(answer.status.as_u16(), status, "{file}: {:?}", answer.body);
        assert_eq!(
            (answer.outcome(), answer.reason()),
            (outcome, reason),
            "{file}"
        );
    }
    let gitlab = [
        (
            "confidential_issue_hook.open.json",
            "Confidential Issue Hook",
            "ignored",
            "not_engaged",
        ),
        (
            "confidential_note_hook.issue.internal-note.json",
            "Confidential Note Hook",
            "ignored",
            "no_mention",
        ),
        (
            "issue_hook.open.json",
            "Issue Hook",
            "accepted",
            "trigger_label",
        ),
        (
            "issue_hook.update.gitlab-com-2016.json",
            "Issue Hook",
            "ignored",
            "not_engaged",
        ),
        (
            "note_hook.issue.gitlab-com-2023.json",
            "Note Hook",
            "ignored",
            "no_mention",
        ),
        ("note_hook.issue.json", "Note Hook", "ignored", "no_mention"),
        (
            // The same note as `note_hook.issue.json`: one event.
            "note_hook.issue.with-discussion_id.json",
            "Note Hook",
            "duplicate",
            "",
        ),
        (
            "note_hook.merge_request.json",
            "Note Hook",
            "ignored",
            "merge_request_note",
        ),
    ];
    for (i, (file, event, outcome, reason)) in gitlab.into_iter().enumerate() {
        let body = fixture(&format!("webhooks/gitlab/{file}"));
        let answer = call(&app, gitlab_request(event, &format!("gl-{i}"), body)).await;
        assert!(
            answer.status.is_success(),
            "{file}: {} {:?}",
            answer.status,
            answer.body
        );
        assert_eq!(
            (answer.outcome(), answer.reason()),
            (outcome, reason),
            "{file}"
        );
    }

    // Every delivery is on disk, with its outcome; accepted ones created exactly one job each.
    let deliveries = relay_store::deliveries::list(&pool).await.unwrap();
    // Three fixtures repeat an earlier one's event: duplicates, not stored.
    assert_eq!(deliveries.len(), 14 + 7);
    let accepted: Vec<_> = deliveries
        .iter()
        .filter(|d| d.outcome == "accepted")
        .collect();
    assert_eq!(accepted.len(), 2);
    assert!(
        accepted
            .iter()
            .all(|d| d.job_id.is_some() && d.issue_id.is_some())
    );
    assert_eq!(count(&pool, "jobs").await, 2);

    // GitLab's issue number is the iid, never the global id.
    let (number, path): (i64, String) = sqlx::query_as(
        "SELECT number, project_path FROM issues WHERE tracker = 'gitlab' AND project_path = 'gitlabhq/gitlab-test'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!((number, path.as_str()), (23, "gitlabhq/gitlab-test"));
    let note_issue: i64 = sqlx::query_scalar(
        "SELECT number FROM issues WHERE tracker = 'gitlab' AND project_path = 'gitlab-org/gitlab-test'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(note_issue, 17, "note hooks use issue.iid, not noteable_id");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn forged_and_missing_signatures_store_nothing(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    let body = fixture("webhooks/github/issues.labeled.json");

    let mut forged = github_request("issues", "d-1", body.clone());
    forged.headers_mut().insert(
        "x-hub-signature-256",
        relay_gateway::providers::github::sign(&body, b"wrong secret")
            .parse()
            .unwrap(),
    );
    let mut missing = github_request("issues", "d-2", body.clone());
    missing.headers_mut().remove("x-hub-signature-256");
    let mut tampered_body = body.clone();
    tampered_body.push(b' ');
    let mut tampered = github_request("issues", "d-3", body.clone());
    *tampered.body_mut() = Body::from(tampered_body);
    let mut wrong_token = gitlab_request(
        "Issue Hook",
        "u-1",
        fixture("webhooks/gitlab/issue_hook.open.json"),
    );
    wrong_token
        .headers_mut()
        .insert("x-gitlab-token", "gitlab-hook-token2".parse().unwrap());
    let mut no_token = gitlab_request(
        "Issue Hook",
        "u-2",
        fixture("webhooks/gitlab/issue_hook.open.json"),
    );
    no_token.headers_mut().remove("x-gitlab-token");

    for request in [forged, missing, tampered, wrong_token, no_token] {
        let answer = call(&app, request).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{:?}", answer.body);
    }
    for table in ["deliveries", "issues", "jobs"] {
        assert_eq!(count(&pool, table).await, 0, "{table}");
    }
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn redelivery_creates_nothing_new(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    let body = fixture("webhooks/github/issues.labeled.json");
    let first = call(&app, github_request("issues", "same-guid", body.clone())).await;
    assert_eq!(
        (first.status, first.outcome()),
        (StatusCode::ACCEPTED, "accepted")
    );
    let again = call(&app, github_request("issues", "same-guid", body.clone())).await;
    assert_eq!(
        (again.status, again.outcome()),
        (StatusCode::OK, "duplicate")
    );
    assert_eq!(count(&pool, "deliveries").await, 1);
    assert_eq!(count(&pool, "jobs").await, 1);
    assert_eq!(
        relay_store::issues::count_pending_events(&pool)
            .await
            .unwrap(),
        1
    );

    // The same GUID delivered to another hook is another delivery, but of the same event (its
    // content identity): a duplicate too, so a repository hook and an App hook on the same
    // repository never answer one mention twice.
    let mut other_hook = github_request("issues", "same-guid", body.clone());
    other_hook
        .headers_mut()
        .insert("x-github-hook-id", "2".parse().unwrap());
    let answer = call(&app, other_hook).await;
    assert_eq!(
        (answer.status, answer.outcome()),
        (StatusCode::OK, "duplicate")
    );
    assert_eq!(count(&pool, "deliveries").await, 1);
    // Another event under the same GUID on another hook is recorded.
    let mut later: serde_json::Value = serde_json::from_slice(&body).unwrap();
    later["issue"]["updated_at"] = "2030-01-01T00:00:00Z".into();
    let mut other_event =
        github_request("issues", "same-guid", serde_json::to_vec(&later).unwrap());
    other_event
        .headers_mut()
        .insert("x-github-hook-id", "3".parse().unwrap());
    let answer = call(&app, other_event).await;
    assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
    assert_eq!(count(&pool, "deliveries").await, 2);

    // GitLab: Idempotency-Key wins over the event UUID.
    let gitlab_body = fixture("webhooks/gitlab/note_hook.issue.json");
    let mut first = gitlab_request("Note Hook", "uuid-1", gitlab_body.clone());
    first
        .headers_mut()
        .insert("idempotency-key", "key-1".parse().unwrap());
    let mut retry = gitlab_request("Note Hook", "uuid-2", gitlab_body);
    retry
        .headers_mut()
        .insert("idempotency-key", "key-1".parse().unwrap());
    assert_eq!(call(&app, first).await.outcome(), "ignored");
    let answer = call(&app, retry).await;
    assert_eq!(
        (answer.status, answer.outcome()),
        (StatusCode::OK, "duplicate")
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn limits_and_malformed_bodies(pool: PgPool) {
    let limit = 64 * 1024;
    let settings = relay_gateway::ServerSettings {
        body_limit_bytes: limit,
        ..Default::default()
    };
    let app = relay_gateway::app(state_with(pool.clone(), settings));

    // Exactly at the limit: a valid (padded) payload is accepted.
    let mut at_limit = fixture("webhooks/github/issues.labeled.json");
    at_limit.resize(limit, b' ');
    let answer = call(&app, github_request("issues", "at-limit", at_limit)).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{:?}", answer.body);
    // One byte over: 413 and nothing stored.
    let mut over = fixture("webhooks/github/issues.labeled.json");
    over.resize(limit + 1, b' ');
    let answer = call(&app, github_request("issues", "over-limit", over)).await;
    assert_eq!(answer.status, StatusCode::PAYLOAD_TOO_LARGE);

    // Truncated JSON with a valid signature: 400.
    let body = fixture("webhooks/github/issues.labeled.json");
    let truncated = body[..body.len() / 2].to_vec();
    let answer = call(&app, github_request("issues", "truncated", truncated)).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(
        answer.body["error"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
    // A JSON value that is not an object: 400.
    let answer = call(&app, github_request("issues", "array", b"[1,2]".to_vec())).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    // No event header: 400.
    let mut no_event = github_request("issues", "no-event", body.clone());
    no_event.headers_mut().remove("x-github-event");
    assert_eq!(call(&app, no_event).await.status, StatusCode::BAD_REQUEST);
    // Unknown tracker: 404.
    let unknown = Request::post("/webhooks/jira")
        .body(Body::from(body))
        .unwrap();
    assert_eq!(call(&app, unknown).await.status, StatusCode::NOT_FOUND);

    assert_eq!(count(&pool, "deliveries").await, 1);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn ops_endpoints(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    let health = call(&app, Request::get("/healthz").body(Body::empty()).unwrap()).await;
    assert_eq!(health.status, StatusCode::OK);
    let ready = call(&app, Request::get("/readyz").body(Body::empty()).unwrap()).await;
    assert_eq!(ready.status, StatusCode::OK, "{:?}", ready.body);

    call(
        &app,
        github_request(
            "issues",
            "m-1",
            fixture("webhooks/github/issues.labeled.json"),
        ),
    )
    .await;
    let response = tower::ServiceExt::oneshot(
        app.clone(),
        Request::get("/metrics").body(Body::empty()).unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let text = String::from_utf8(
        axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap()
            .to_vec(),
    )
    .unwrap();
    assert!(text.contains("relay_webhook_deliveries_total{tracker=\"github\",event=\"issues\",outcome=\"accepted\"}"), "{text}");
    assert!(
        text.contains("relay_queue_depth{status=\"queued\"} 1"),
        "{text}"
    );

    // Readiness reports pending migrations.
    sqlx::query(
        "DELETE FROM _sqlx_migrations WHERE version = (SELECT max(version) FROM _sqlx_migrations)",
    )
    .execute(&pool)
    .await
    .unwrap();
    let ready = call(&app, Request::get("/readyz").body(Body::empty()).unwrap()).await;
    assert_eq!(ready.status, StatusCode::SERVICE_UNAVAILABLE);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn worker_processes_serve_only_ops_endpoints(pool: PgPool) {
    let app = relay_gateway::ops_app(state(pool.clone()));
    let ready = call(&app, Request::get("/readyz").body(Body::empty()).unwrap()).await;
    assert_eq!(ready.status, StatusCode::OK);
    let body = fixture("webhooks/github/issues.labeled.json");
    let answer = call(&app, github_request("issues", "w-1", body)).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert_eq!(count(&pool, "deliveries").await, 0);
}

/// How often the concurrency test redelivers a delivery answered 503 (as GitHub would).
const MAX_REDELIVERIES: usize = 5;

/// Many webhooks at once: every delivery is recorded exactly once with the right outcome,
/// redeliveries create nothing, and each issue ends with one queued job.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn concurrent_deliveries_are_neither_lost_nor_doubled(
    options: sqlx::postgres::PgPoolOptions,
    connect: sqlx::postgres::PgConnectOptions,
) {
    let pool = options
        .max_connections(20)
        .connect_with(connect)
        .await
        .unwrap();
    let app = relay_gateway::app(state(pool.clone()));
    let comment = |issue: u64, id: u64, body: &str| {
        let mut payload = fixture_json("webhooks/github/issue_comment.created.on-issue.json");
        payload["issue"]["number"] = serde_json::json!(issue);
        payload["comment"]["id"] = serde_json::json!(id);
        payload["comment"]["body"] = serde_json::json!(body);
        serde_json::to_vec(&payload).unwrap()
    };
    let body_of = |i: u64| {
        if i.is_multiple_of(3) {
            "no mention here"
        } else {
            "@relay-bot please"
        }
    };
    let mut requests = Vec::new();
    for i in 0..120u64 {
        requests.push((format!("c-{i}"), comment(i % 10, 1000 + i, body_of(i))));
    }
    // Redeliveries of some of them, interleaved.
    for i in (0..120u64).step_by(15) {
        requests.push((format!("c-{i}"), comment(i % 10, 1000 + i, body_of(i))));
    }
    let mut handles = Vec::new();
    for (delivery, body) in requests {
        let app = app.clone();
        handles.push(tokio::spawn(async move {
            // A 503 means "nothing recorded, deliver again" (the database was busy past its
            // acquire timeout); GitHub redelivers such a delivery, so the test does too. What
            // must hold is the end state: nothing lost, nothing doubled.
            let mut answer = call(
                &app,
                github_request("issue_comment", &delivery, body.clone()),
            )
            .await;
            for _ in 0..MAX_REDELIVERIES {
                if answer.status != StatusCode::SERVICE_UNAVAILABLE {
                    break;
                }
                answer = call(
                    &app,
                    github_request("issue_comment", &delivery, body.clone()),
                )
                .await;
            }
            answer
        }));
    }
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    for handle in handles {
        let answer = handle.await.unwrap();
        assert!(
            answer.status.is_success(),
            "{} {:?}",
            answer.status,
            answer.body
        );
        *outcomes.entry(answer.outcome().to_owned()).or_default() += 1;
    }
    assert_eq!(outcomes.get("duplicate"), Some(&8), "{outcomes:?}");
    assert_eq!(outcomes.get("accepted"), Some(&80), "{outcomes:?}");
    assert_eq!(outcomes.get("ignored"), Some(&40), "{outcomes:?}");
    assert_eq!(count(&pool, "deliveries").await, 120);
    assert_eq!(count(&pool, "issue_notes").await, 120);
    assert_eq!(
        relay_store::issues::count_pending_events(&pool)
            .await
            .unwrap(),
        80
    );
    assert_eq!(count(&pool, "issues").await, 10);
    let per_key: Vec<(String, i64)> =
        sqlx::query_as("SELECT concurrency_key, count(*) FROM jobs GROUP BY 1 ORDER BY 1")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(per_key.len(), 10, "one queued job per issue: {per_key:?}");
    assert!(per_key.iter().all(|(_, n)| *n == 1));
    let orphans: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM deliveries d
         WHERE d.outcome = 'accepted' AND NOT EXISTS (
             SELECT 1 FROM jobs j WHERE j.id = d.job_id AND j.concurrency_key = 'issue:' || d.issue_id)",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(orphans, 0);
}
