//! The GitHub App installation from a webhook is stored with its issue (migration 0005) and kept
//! when a later delivery does not carry one; the write-back reads it from `issues::get`.

use relay_core::IssueId;
use sqlx::PgPool;

use crate::helpers::*;

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_webhooks_installation_is_stored_with_the_issue(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    let file = "webhooks/github/issue_comment.created.app-installation.json";
    let answer = call(
        &app,
        github_request("issue_comment", "inst-1", fixture(file)),
    )
    .await;
    assert!(answer.status.is_success(), "{:?}", answer.body);

    let payload = fixture_json(file);
    let number = payload["issue"]["number"].as_i64().unwrap();
    let (issue_id, installation): (i64, Option<i64>) = sqlx::query_as(
        "SELECT id, installation_id FROM issues WHERE tracker = 'github' AND number = $1",
    )
    .bind(number)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(installation, Some(35217443));
    let mut conn = pool.acquire().await.unwrap();
    let row = relay_store::issues::get(&mut conn, IssueId(issue_id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.installation_id, Some(35217443));

    // A later delivery of the same issue without `installation` keeps the stored one.
    let mut later = payload.clone();
    later.as_object_mut().unwrap().remove("installation");
    later["issue"]["updated_at"] = "2099-01-01T00:00:00Z".into();
    // Another comment (the same one again would be the same event: a duplicate).
    later["comment"]["id"] = (later["comment"]["id"].as_i64().unwrap() + 1).into();
    let answer = call(
        &app,
        github_request(
            "issue_comment",
            "inst-2",
            serde_json::to_vec(&later).unwrap(),
        ),
    )
    .await;
    assert!(answer.status.is_success(), "{:?}", answer.body);
    let row = relay_store::issues::get(&mut conn, IssueId(issue_id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.installation_id, Some(35217443));
    assert_eq!(
        row.updated_at.to_rfc3339(),
        "2099-01-01T00:00:00+00:00",
        "the second delivery did update the issue"
    );

    // Token-authenticated deliveries (no `installation`) store none.
    let plain = "webhooks/github/issue_comment.created.on-issue.json";
    let answer = call(
        &app,
        github_request("issue_comment", "inst-3", fixture(plain)),
    )
    .await;
    assert!(answer.status.is_success());
    let number = fixture_json(plain)["issue"]["number"].as_i64().unwrap();
    let repo = fixture_json(plain)["repository"]["full_name"]
        .as_str()
        .unwrap()
        .to_owned();
    let none: Option<i64> = sqlx::query_scalar(
        "SELECT installation_id FROM issues WHERE tracker = 'github' AND number = $1 AND project_path = $2",
    )
    .bind(number)
    .bind(repo)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(none, None);
}
