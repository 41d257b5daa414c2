//! Engagement rules end to end: mentions, edits, threads, labels, assignment, the bot's own events.

use serde_json::{Value, json};
use sqlx::PgPool;

use crate::helpers::*;

fn github_comment(body: &str, author: &str, comment_id: u64, action: &str) -> Vec<u8> {
    let mut payload = fixture_json("webhooks/github/issue_comment.created.on-issue.json");
    payload["action"] = json!(action);
    payload["comment"]["body"] = json!(body);
    payload["comment"]["id"] = json!(comment_id);
    payload["comment"]["user"]["login"] = json!(author);
    payload["sender"]["login"] = json!(author);
    serde_json::to_vec(&payload).unwrap()
}

fn gitlab_note(body: &str, author: &str, note_id: u64, discussion: &str) -> Vec<u8> {
    let mut payload = fixture_json("webhooks/gitlab/note_hook.issue.with-discussion_id.json");
    payload["object_attributes"]["note"] = json!(body);
    payload["object_attributes"]["id"] = json!(note_id);
    payload["object_attributes"]["discussion_id"] = json!(discussion);
    payload["user"]["username"] = json!(author);
    serde_json::to_vec(&payload).unwrap()
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn mentions_in_comments(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    let cases = [
        (
            "@relay-bot please scope this",
            "alice",
            "accepted",
            "mention",
        ),
        ("ping @relay-bot2 instead", "alice", "ignored", "no_mention"),
        ("mail x@relay-bot.io", "alice", "ignored", "no_mention"),
        ("`@relay-bot` in code", "alice", "ignored", "no_mention"),
        (
            "> @relay-bot quoted\nthanks",
            "alice",
            "ignored",
            "no_mention",
        ),
        // The bot's own comment never engages, even when it mentions itself.
        (
            "@relay-bot here is the plan",
            "relay-bot",
            "ignored",
            "authored_by_bot",
        ),
        (
            "@relay-bot here is the plan",
            "relay-bot[bot]",
            "ignored",
            "authored_by_bot",
        ),
    ];
    for (i, (body, author, outcome, reason)) in cases.into_iter().enumerate() {
        let answer = call(
            &app,
            github_request(
                "issue_comment",
                &format!("c-{i}"),
                github_comment(body, author, 100 + i as u64, "created"),
            ),
        )
        .await;
        assert_eq!(
            (answer.outcome(), answer.reason()),
            (outcome, reason),
            "{body:?} by {author}"
        );
    }
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn github_thread_reply_after_the_bot_posted(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    let answer = call(
        &app,
        github_request(
            "issue_comment",
            "t-0",
            github_comment("first!", "alice", 1, "created"),
        ),
    )
    .await;
    assert_eq!(answer.reason(), "no_mention");
    let answer = call(
        &app,
        github_request(
            "issue_comment",
            "t-1",
            github_comment("Questions: ...", "relay-bot", 2, "created"),
        ),
    )
    .await;
    assert_eq!(answer.reason(), "authored_by_bot");
    let answer = call(
        &app,
        github_request(
            "issue_comment",
            "t-2",
            github_comment("Answers: yes", "alice", 3, "created"),
        ),
    )
    .await;
    assert_eq!(
        (answer.outcome(), answer.reason()),
        ("accepted", "thread_reply")
    );
}

/// A GitHub App comments as `slug[bot]` while `bot_username` is the slug: a plain reply in the
/// thread it posted in is a thread reply, as it is after a user-account bot posted.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn github_thread_reply_after_the_app_posted(pool: PgPool) {
    let mut trackers = trackers();
    trackers[0].bot_username = "relay-app".into();
    relay_telemetry::init_for_test();
    let app = relay_gateway::app(relay_gateway::AppState::new(
        pool.clone(),
        trackers,
        relay_gateway::ServerSettings::default(),
        5,
    ));
    let steps = [
        ("first!", "alice", "ignored", "no_mention"),
        (
            "Questions: ...",
            "relay-app[bot]",
            "ignored",
            "authored_by_bot",
        ),
        ("Answers: yes", "alice", "accepted", "thread_reply"),
    ];
    for (i, (body, author, outcome, reason)) in steps.into_iter().enumerate() {
        let answer = call(
            &app,
            github_request(
                "issue_comment",
                &format!("app-{i}"),
                github_comment(body, author, 10 + i as u64, "created"),
            ),
        )
        .await;
        assert_eq!(
            (answer.outcome(), answer.reason()),
            (outcome, reason),
            "{body:?} by {author}"
        );
    }
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn comment_edits_engage_only_on_a_new_mention(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    call(
        &app,
        github_request(
            "issue_comment",
            "e-0",
            github_comment("typo here", "alice", 7, "created"),
        ),
    )
    .await;
    // GitLab-style edit without `changes`: the cached body tells the mention is new.
    let mut edit: Value = serde_json::from_slice(&github_comment(
        "typo here @relay-bot",
        "alice",
        7,
        "edited",
    ))
    .unwrap();
    edit.as_object_mut().unwrap().remove("changes");
    let answer = call(
        &app,
        github_request("issue_comment", "e-1", serde_json::to_vec(&edit).unwrap()),
    )
    .await;
    assert_eq!((answer.outcome(), answer.reason()), ("accepted", "mention"));
    // Editing again, the mention is old news.
    let mut edit: Value = serde_json::from_slice(&github_comment(
        "typo fixed @relay-bot",
        "alice",
        7,
        "edited",
    ))
    .unwrap();
    edit["changes"] = json!({ "body": { "from": "typo here @relay-bot" } });
    // Each edit stamps the comment anew (the same stamp again would be the same event).
    edit["comment"]["updated_at"] = json!("2030-01-01T00:00:00Z");
    let answer = call(
        &app,
        github_request("issue_comment", "e-2", serde_json::to_vec(&edit).unwrap()),
    )
    .await;
    assert_eq!(
        (answer.outcome(), answer.reason()),
        ("ignored", "edit_without_new_mention")
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn issue_bodies_labels_and_assignment(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    let mut opened = fixture_json("webhooks/github/issues.opened.json");
    opened["issue"]["body"] = json!("Checkout is slow.\n\n@relay-bot can you scope this?");
    let answer = call(
        &app,
        github_request("issues", "i-0", serde_json::to_vec(&opened).unwrap()),
    )
    .await;
    assert_eq!((answer.outcome(), answer.reason()), ("accepted", "mention"));

    // An edit that adds the mention engages; one that keeps an old mention does not.
    let mut edited = fixture_json("webhooks/github/issues.edited.json");
    edited["issue"]["number"] = json!(99);
    edited["issue"]["body"] = json!("now with @relay-bot");
    edited["changes"] = json!({ "body": { "from": "no mention yet" } });
    let answer = call(
        &app,
        github_request("issues", "i-1", serde_json::to_vec(&edited).unwrap()),
    )
    .await;
    assert_eq!((answer.outcome(), answer.reason()), ("accepted", "mention"));
    edited["issue"]["body"] = json!("now with @relay-bot, edited");
    edited["changes"] = json!({ "body": { "from": "now with @relay-bot" } });
    edited["issue"]["updated_at"] = json!("2030-01-01T00:00:00Z");
    let answer = call(
        &app,
        github_request("issues", "i-2", serde_json::to_vec(&edited).unwrap()),
    )
    .await;
    assert_eq!(
        (answer.outcome(), answer.reason()),
        ("ignored", "not_engaged")
    );

    // Assigned to the bot.
    let mut assigned = fixture_json("webhooks/github/issues.assigned.with-installation.json");
    assigned["assignee"]["login"] = json!("relay-bot");
    let answer = call(
        &app,
        github_request("issues", "i-3", serde_json::to_vec(&assigned).unwrap()),
    )
    .await;
    assert_eq!(
        (answer.outcome(), answer.reason()),
        ("accepted", "assigned")
    );

    // A label that is not a trigger.
    let mut labeled = fixture_json("webhooks/github/issues.labeled.json");
    labeled["label"]["name"] = json!("wontfix");
    let answer = call(
        &app,
        github_request("issues", "i-4", serde_json::to_vec(&labeled).unwrap()),
    )
    .await;
    assert_eq!(answer.reason(), "not_engaged");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn gitlab_discussions(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    let d1 = "1111111111111111111111111111111111111111";
    let d2 = "2222222222222222222222222222222222222222";
    let steps = [
        (
            gitlab_note("Could @relay please look?", "alice", 1, d1),
            "accepted",
            "mention",
        ),
        (
            gitlab_note("Two questions: ...", "relay", 2, d1),
            "ignored",
            "authored_by_bot",
        ),
        (
            gitlab_note("1. yes 2. no", "alice", 3, d1),
            "accepted",
            "thread_reply",
        ),
        // Another discussion the bot has not joined.
        (
            gitlab_note("unrelated", "bob", 4, d2),
            "ignored",
            "no_mention",
        ),
        (
            gitlab_note("@relay-dev is another user", "bob", 5, d2),
            "ignored",
            "no_mention",
        ),
    ];
    for (i, (body, outcome, reason)) in steps.into_iter().enumerate() {
        let answer = call(&app, gitlab_request("Note Hook", &format!("n-{i}"), body)).await;
        assert_eq!(
            (answer.outcome(), answer.reason()),
            (outcome, reason),
            "step {i}"
        );
    }
    // Two accepted events, one issue: they share one queued job.
    assert_eq!(
        relay_store::issues::count_pending_events(&pool)
            .await
            .unwrap(),
        2
    );
    assert_eq!(count(&pool, "jobs").await, 1);
    assert_eq!(count(&pool, "issue_notes").await, 5);
}
