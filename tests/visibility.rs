//! The project's visibility, stored from every recorded webhook that carries it (GitHub
//! `repository.visibility`, else `repository.private`; GitLab `project.visibility_level`), and
//! kept when a payload does not say.

use serde_json::Value;
use sqlx::PgPool;

use crate::helpers::*;

async fn stored(pool: &PgPool) -> Option<Option<String>> {
    sqlx::query_scalar("SELECT project_visibility FROM issues")
        .fetch_optional(pool)
        .await
        .unwrap()
}

async fn reset(pool: &PgPool) {
    sqlx::query("TRUNCATE issues, issue_notes, deliveries, jobs CASCADE")
        .execute(pool)
        .await
        .unwrap();
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn every_fixture_stores_the_visibility_it_carries(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    let github = [
        (
            "issue_comment",
            "issue_comment.created.on-issue.json",
            Some("public"),
        ),
        (
            "issue_comment",
            "issue_comment.created.app-installation.json",
            Some("public"),
        ),
        // A pull request's comment is not an issue event: no issue stored.
        (
            "issue_comment",
            "issue_comment.created.on-pull-request.json",
            None,
        ),
        // Neither field: nothing known (the stricter public rule applies).
        (
            "issue_comment",
            "issue_comment.created.by-bot.minimal.json",
            None,
        ),
        ("issue_comment", "issue_comment.edited.json", Some("public")),
        ("issues", "issues.opened.json", Some("public")),
        ("issues", "issues.labeled.json", Some("public")),
        ("issues", "issues.closed.json", Some("public")),
    ];
    for (i, (event, file, expected)) in github.into_iter().enumerate() {
        reset(&pool).await;
        let body = fixture(&format!("webhooks/github/{file}"));
        call(&app, github_request(event, &format!("vis-gh-{i}"), body)).await;
        let got = stored(&pool).await;
        assert_eq!(got.flatten(), expected.map(str::to_owned), "{file}");
    }

    let gitlab = [
        ("Issue Hook", "issue_hook.open.json", "public"),
        (
            "Issue Hook",
            "issue_hook.update.gitlab-com-2016.json",
            "private",
        ),
        (
            "Confidential Issue Hook",
            "confidential_issue_hook.open.json",
            "private",
        ),
        ("Note Hook", "note_hook.issue.json", "internal"),
        (
            "Note Hook",
            "note_hook.issue.with-discussion_id.json",
            "internal",
        ),
        (
            "Note Hook",
            "note_hook.issue.gitlab-com-2023.json",
            "private",
        ),
    ];
    for (i, (event, file, expected)) in gitlab.into_iter().enumerate() {
        reset(&pool).await;
        let body = fixture(&format!("webhooks/gitlab/{file}"));
        call(&app, gitlab_request(event, &format!("vis-gl-{i}"), body)).await;
        assert_eq!(
            stored(&pool).await,
            Some(Some(expected.to_owned())),
            "{file}"
        );
    }
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_payload_that_does_not_say_keeps_the_stored_visibility(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    // Without `visibility`, `private` decides.
    let mut payload: Value = fixture_json("webhooks/github/issues.opened.json");
    payload["repository"]
        .as_object_mut()
        .unwrap()
        .remove("visibility");
    payload["repository"]["private"] = true.into();
    call(
        &app,
        github_request("issues", "keep-1", serde_json::to_vec(&payload).unwrap()),
    )
    .await;
    assert_eq!(stored(&pool).await, Some(Some("private".to_owned())));

    let mut later: Value = fixture_json("webhooks/github/issues.labeled.json");
    let object = later["repository"].as_object_mut().unwrap();
    object.remove("visibility");
    object.remove("private");
    later["issue"]["number"] = payload["issue"]["number"].clone();
    later["repository"]["id"] = payload["repository"]["id"].clone();
    later["issue"]["updated_at"] = "2099-01-01T00:00:00Z".into();
    call(
        &app,
        github_request("issues", "keep-2", serde_json::to_vec(&later).unwrap()),
    )
    .await;
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM issues")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(rows, 1, "the same issue");
    assert_eq!(stored(&pool).await, Some(Some("private".to_owned())));
}
