//! One identity per event at the gateway: a correctly signed body replayed under a new delivery
//! id is a duplicate (no new job), an edit is a new event; and the `[[trackers]] projects`
//! allow-list.

use serde_json::json;
use sqlx::PgPool;

use crate::helpers::*;

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_replayed_signed_body_with_a_new_delivery_id_is_a_duplicate(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    let mut payload = fixture_json("webhooks/github/issue_comment.created.on-issue.json");
    payload["comment"]["body"] = json!("@relay-bot please look");
    let body = serde_json::to_vec(&payload).unwrap();
    let first = call(
        &app,
        github_request("issue_comment", "guid-1", body.clone()),
    )
    .await;
    assert_eq!(first.outcome(), "accepted", "{:?}", first.body);
    let replay = call(&app, github_request("issue_comment", "guid-2", body)).await;
    assert_eq!(
        (replay.status.as_u16(), replay.outcome()),
        (200, "duplicate")
    );
    assert_eq!(count(&pool, "jobs").await, 1, "no new job");
    assert_eq!(count(&pool, "deliveries").await, 1);
    // An edit of that comment is a new event (its own stamp), decided as edits are.
    payload["action"] = json!("edited");
    payload["comment"]["updated_at"] = json!("2030-01-01T00:00:00Z");
    payload["comment"]["body"] = json!("@relay-bot please look (typo)");
    payload["changes"] = json!({"body": {"from": "@relay-bot please look"}});
    let edit = call(
        &app,
        github_request(
            "issue_comment",
            "guid-3",
            serde_json::to_vec(&payload).unwrap(),
        ),
    )
    .await;
    assert_eq!(
        (edit.outcome(), edit.reason()),
        ("ignored", "edit_without_new_mention")
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_projects_allow_list_ignores_other_projects(pool: PgPool) {
    let mut trackers = trackers();
    trackers[0].projects = Some(vec!["octo-org/allowed".into()]);
    let app = relay_gateway::app(relay_gateway::AppState::new(
        pool.clone(),
        trackers,
        relay_gateway::ServerSettings::default(),
        3,
    ));
    let mut payload = fixture_json("webhooks/github/issue_comment.created.on-issue.json");
    payload["comment"]["body"] = json!("@relay-bot please look");
    let answer = call(
        &app,
        github_request(
            "issue_comment",
            "al-1",
            serde_json::to_vec(&payload).unwrap(),
        ),
    )
    .await;
    assert_eq!(
        (answer.outcome(), answer.reason()),
        ("ignored", "project_not_allowed")
    );
    assert_eq!(count(&pool, "jobs").await, 0);
    assert_eq!(count(&pool, "issues").await, 0);
    payload["repository"]["full_name"] = json!("Octo-Org/Allowed");
    let answer = call(
        &app,
        github_request(
            "issue_comment",
            "al-2",
            serde_json::to_vec(&payload).unwrap(),
        ),
    )
    .await;
    assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_change_whose_payload_carries_no_time_is_identified_by_its_delivery(pool: PgPool) {
    // Without the payload's `updated_at` the only time there is is the clock's, which a
    // redelivery does not repeat: such a change has no content identity, only its delivery key.
    // (With one, two deliveries in one second were one event and a redelivery of the second, a
    // second later, a new one: the fuzz test's seed found it.)
    let app = relay_gateway::app(state(pool.clone()));
    let mut payload = fixture_json("webhooks/gitlab/issue_hook.update.gitlab-com-2016.json");
    payload["object_attributes"]
        .as_object_mut()
        .unwrap()
        .remove("updated_at");
    let body = serde_json::to_vec(&payload).unwrap();
    let first = call(&app, gitlab_request("Issue Hook", "u-1", body.clone())).await;
    let second = call(&app, gitlab_request("Issue Hook", "u-2", body.clone())).await;
    for answer in [&first, &second] {
        assert_eq!(answer.status.as_u16(), 202, "{:?}", answer.body);
    }
    assert_eq!(
        count(&pool, "deliveries").await,
        2,
        "two deliveries, two records"
    );
    for uuid in ["u-1", "u-2"] {
        let again = call(&app, gitlab_request("Issue Hook", uuid, body.clone())).await;
        assert_eq!(
            (again.status.as_u16(), again.outcome()),
            (200, "duplicate"),
            "{uuid}"
        );
    }
    assert_eq!(count(&pool, "deliveries").await, 2);
}
