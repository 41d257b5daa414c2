//! A NUL in a payload (the `\u0000` escape, or a raw NUL byte inside a string) is stored as U+FFFD
//! and answered 2xx; redeliveries are duplicates. Postgres accepts neither in `jsonb` nor in `text`,
//! so before the fix such a delivery was answered 500 on every redelivery.

use http::StatusCode;
use serde_json::Value;
use sqlx::PgPool;

use crate::helpers::*;

const ISSUE_BODY: &str = "before\0after";
const STORED_ISSUE_BODY: &str = "before\u{FFFD}after";

/// The GitHub comment fixture with a NUL in the issue body and in a comment that mentions the bot.
fn github_body() -> Vec<u8> {
    let mut payload = fixture_json("webhooks/github/issue_comment.created.on-issue.json");
    payload["issue"]["body"] = Value::from(ISSUE_BODY);
    payload["comment"]["body"] = Value::from("@relay-bot look\0here");
    serde_json::to_vec(&payload).unwrap()
}

/// The GitLab note fixture with a NUL in the issue description and in a note that mentions the bot.
fn gitlab_body() -> Vec<u8> {
    let mut payload = fixture_json("webhooks/gitlab/note_hook.issue.json");
    payload["issue"]["description"] = Value::from(ISSUE_BODY);
    payload["object_attributes"]["note"] = Value::from("@relay look\0here");
    serde_json::to_vec(&payload).unwrap()
}

/// `serde_json` writes NUL as the `\u0000` escape; a raw NUL byte is what a sloppy sender writes.
fn with_raw_nuls(escaped: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(escaped.to_vec()).unwrap();
    assert!(text.contains("\\u0000"), "the body has escaped NULs");
    text.replace("\\u0000", "\0").into_bytes()
}

async fn assert_stored_once(pool: &PgPool, tracker: &str, note: &str) {
    let deliveries: i64 = sqlx::query_scalar("SELECT count(*) FROM deliveries WHERE tracker = $1")
        .bind(tracker)
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(deliveries, 1, "{tracker}: one delivery");
    let bodies: Vec<String> = sqlx::query_scalar("SELECT body FROM issues WHERE tracker = $1")
        .bind(tracker)
        .fetch_all(pool)
        .await
        .unwrap();
    assert_eq!(bodies, [STORED_ISSUE_BODY], "{tracker}: the issue body");
    let notes: Vec<String> = sqlx::query_scalar(
        "SELECT n.body FROM issue_notes n JOIN issues i ON i.id = n.issue_id WHERE i.tracker = $1",
    )
    .bind(tracker)
    .fetch_all(pool)
    .await
    .unwrap();
    assert_eq!(notes, [note], "{tracker}: the note body");
    let payload_has_replacement: bool = sqlx::query_scalar(
        "SELECT payload::text LIKE '%' || $2 || '%' FROM deliveries WHERE tracker = $1",
    )
    .bind(tracker)
    .bind(STORED_ISSUE_BODY)
    .fetch_one(pool)
    .await
    .unwrap();
    assert!(payload_has_replacement, "{tracker}: the stored payload");
    let jobs: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs")
        .fetch_one(pool)
        .await
        .unwrap();
    assert!(jobs >= 1, "{tracker}: the mention created a job");
}

async fn deliver_three_times(
    app: &axum::Router,
    request: impl Fn() -> http::Request<axum::body::Body>,
) {
    let first = call(app, request()).await;
    assert_eq!(
        (first.status, first.outcome()),
        (StatusCode::ACCEPTED, "accepted"),
        "{:?}",
        first.body
    );
    for _ in 0..2 {
        let again = call(app, request()).await;
        assert_eq!(
            (again.status, again.outcome()),
            (StatusCode::OK, "duplicate"),
            "{:?}",
            again.body
        );
    }
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn github_nul_in_issue_and_comment_is_stored_replaced(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    deliver_three_times(&app, || {
        github_request("issue_comment", "nul-1", github_body())
    })
    .await;
    assert_stored_once(&pool, "github", "@relay-bot look\u{FFFD}here").await;
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn gitlab_nul_in_issue_and_note_is_stored_replaced(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    deliver_three_times(&app, || gitlab_request("Note Hook", "nul-1", gitlab_body())).await;
    assert_stored_once(&pool, "gitlab", "@relay look\u{FFFD}here").await;
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn raw_nul_bytes_inside_strings_are_stored_replaced(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    deliver_three_times(&app, || {
        github_request("issue_comment", "raw-nul-1", with_raw_nuls(&github_body()))
    })
    .await;
    assert_stored_once(&pool, "github", "@relay-bot look\u{FFFD}here").await;
    deliver_three_times(&app, || {
        gitlab_request("Note Hook", "raw-nul-1", with_raw_nuls(&gitlab_body()))
    })
    .await;
    assert_stored_once(&pool, "gitlab", "@relay look\u{FFFD}here").await;
}
