//! GitHubClient against the local fake GitHub over real HTTP.

use std::time::Duration;

use relay_tracker::fake::{Failure, FakeGitHub};
use relay_tracker::{
    AuthorRole, CommentTarget, GitHubClient, IssueRef, NoteRef, Reaction, ReactionTarget,
    TrackerError, http_client,
};

const REPO: &str = "octo-org/hello";
const TOKEN: &str = "ghp_test_token";
const BOT: &str = "relay-bot";

fn issue(number: i64) -> IssueRef {
    IssueRef {
        project_id: "1296269".into(),
        project_path: REPO.into(),
        number,
        installation_id: None,
    }
}

async fn setup() -> (FakeGitHub, GitHubClient) {
    let gh = FakeGitHub::start().await;
    gh.seed_issue(REPO, 1, "Crash on save", "It crashes.");
    let client = GitHubClient::new(&gh.settings(TOKEN, BOT), http_client().unwrap()).unwrap();
    (gh, client)
}

fn note(id: i64) -> NoteRef {
    NoteRef {
        note_id: id.to_string(),
        discussion_id: None,
    }
}

#[tokio::test]
async fn create_reply_edit_react_with_githubs_headers() {
    let (gh, client) = setup().await;
    let question = gh.seed_comment(
        REPO,
        1,
        "alice",
        "Why does it crash?\nsecond line\nthird\nfourth",
    );

    let posted = client
        .post_comment(&issue(1), "Looking into it.", &CommentTarget::NewThread)
        .await
        .unwrap();
    let reply = client
        .post_comment(
            &issue(1),
            "Because of X.",
            &CommentTarget::Reply(note(question)),
        )
        .await
        .unwrap();
    client
        .edit_comment(
            &issue(1),
            &NoteRef {
                note_id: posted.note_id.clone(),
                discussion_id: None,
            },
            "Edited.",
        )
        .await
        .unwrap();
    client
        .add_reaction(&issue(1), &ReactionTarget::Issue, Reaction::Eyes)
        .await
        .unwrap();
    client
        .add_reaction(&issue(1), &ReactionTarget::Issue, Reaction::Eyes)
        .await
        .expect("an existing reaction is success");
    client
        .add_reaction(
            &issue(1),
            &ReactionTarget::Note(note(question)),
            Reaction::ThumbsUp,
        )
        .await
        .unwrap();

    let comments = gh.comments(REPO, 1);
    assert_eq!(comments.len(), 3);
    assert_eq!(comments[1].id.to_string(), posted.note_id);
    assert_eq!(comments[1].body, "Edited.");
    assert_eq!(comments[1].author, BOT);
    let reply_body = &comments[2].body;
    assert_eq!(comments[2].id.to_string(), reply.note_id);
    assert!(
        reply_body.starts_with("> Why does it crash?\n> second line\n> third\n>\n"),
        "{reply_body}"
    );
    assert!(
        reply_body.contains(&format!("issuecomment-{question})")),
        "links the answered comment: {reply_body}"
    );
    assert!(reply_body.ends_with("\n\nBecause of X."));
    assert!(!reply_body.contains("fourth"));
    assert!(
        posted
            .url
            .unwrap()
            .ends_with(&format!("#issuecomment-{}", posted.note_id))
    );

    let reactions = gh.reactions();
    assert_eq!(reactions.len(), 2);
    assert_eq!(
        (reactions[0].content.as_str(), reactions[0].comment),
        ("eyes", None)
    );
    assert_eq!(
        (reactions[1].content.as_str(), reactions[1].comment),
        ("+1", Some(question))
    );

    for r in gh.requests() {
        assert_eq!(
            r.header("accept"),
            Some("application/vnd.github+json"),
            "{} {}",
            r.method,
            r.path
        );
        assert_eq!(r.header("x-github-api-version"), Some("2022-11-28"));
        assert!(r.header("user-agent").unwrap().starts_with("relay/"));
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {TOKEN}").as_str())
        );
    }
    let post = gh
        .requests()
        .into_iter()
        .find(|r| r.method == "POST")
        .unwrap();
    assert_eq!(post.path, "/repos/octo-org/hello/issues/1/comments");
    assert_eq!(post.json()["body"], "Looking into it.");
}

#[tokio::test]
async fn comments_of_another_issue_cannot_be_addressed() {
    let (gh, client) = setup().await;
    gh.seed_issue(REPO, 2, "Other", "");
    let elsewhere = gh.seed_comment(REPO, 2, "mallory", "mine");

    let reply = client
        .post_comment(&issue(1), "x", &CommentTarget::Reply(note(elsewhere)))
        .await;
    assert!(matches!(reply, Err(TrackerError::NotFound(_))), "{reply:?}");
    let edit = client.edit_comment(&issue(1), &note(elsewhere), "x").await;
    assert!(matches!(edit, Err(TrackerError::NotFound(_))), "{edit:?}");
    let react = client
        .add_reaction(
            &issue(1),
            &ReactionTarget::Note(note(elsewhere)),
            Reaction::Eyes,
        )
        .await;
    assert!(matches!(react, Err(TrackerError::NotFound(_))), "{react:?}");
    assert!(
        gh.requests().iter().all(|r| !r.is_write()),
        "nothing was written"
    );
    assert_eq!(gh.comments(REPO, 2)[0].body, "mine");
}

#[tokio::test]
async fn lists_the_whole_thread_over_three_pages() {
    let (gh, client) = setup().await;
    for i in 0..250 {
        gh.seed_comment(
            REPO,
            1,
            if i % 2 == 0 { "alice" } else { BOT },
            &format!("comment {i}"),
        );
    }
    gh.set_association(gh.comments(REPO, 1)[0].id, "OWNER");
    let thread = client.list_thread(&issue(1)).await.unwrap();
    assert_eq!(thread.len(), 250);
    for (i, n) in thread.iter().enumerate() {
        assert_eq!(n.note.body, format!("comment {i}"));
        assert_eq!(n.by_bot, i % 2 == 1);
    }
    assert_eq!(thread[0].author_role, Some(AuthorRole::Owner));
    assert_eq!(thread[1].author_role, Some(AuthorRole::None));
    let pages: Vec<_> = gh
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/comments"))
        .collect();
    assert_eq!(pages.len(), 3);
    assert_eq!(pages[0].query.as_deref(), Some("per_page=100"));
    assert_eq!(pages[2].query.as_deref(), Some("per_page=100&page=3"));
}

#[tokio::test]
async fn finds_only_the_bots_marked_comment() {
    let (gh, client) = setup().await;
    let marker = "<!-- relay:write:k1 -->";
    gh.seed_comment(REPO, 1, "mallory", &format!("fake {marker}"));
    assert_eq!(
        client.find_marked_comment(&issue(1), marker).await.unwrap(),
        None
    );
    gh.seed_comment(REPO, 1, BOT, "unmarked");
    let mine = gh.seed_comment(REPO, 1, BOT, &format!("answer\n{marker}"));
    let found = client
        .find_marked_comment(&issue(1), marker)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.note_id, mine.to_string());
    assert_eq!(
        client
            .find_marked_comment(&issue(1), "<!-- relay:write:k2 -->")
            .await
            .unwrap(),
        None
    );
}

#[tokio::test]
async fn reads_the_issue_roles_and_identity() {
    let (gh, client) = setup().await;
    let got = client.get_issue(&issue(1)).await.unwrap();
    assert_eq!(
        (got.number, got.title.as_str(), got.state.as_str()),
        (1, "Crash on save", "open")
    );
    assert_eq!(got.author.as_deref(), Some("octocat"));
    assert_eq!(got.url, "https://github.com/octo-org/hello/issues/1");
    gh.set_permission(REPO, "alice", "admin");
    gh.set_permission(REPO, "bob", "write");
    assert_eq!(
        client.author_role(&issue(1), "alice").await.unwrap(),
        AuthorRole::Owner
    );
    assert_eq!(
        client.author_role(&issue(1), "bob").await.unwrap(),
        AuthorRole::Member
    );
    assert_eq!(
        client.author_role(&issue(1), "carol").await.unwrap(),
        AuthorRole::None
    );
    assert!(matches!(
        client.author_role(&issue(1), "../x").await,
        Err(TrackerError::Validation(_))
    ));
    assert_eq!(client.whoami().await.unwrap().login, BOT);
    assert!(matches!(
        client.get_issue(&issue(9)).await,
        Err(TrackerError::NotFound(_))
    ));
}

#[tokio::test]
async fn failures_are_classified() {
    let (gh, client) = setup().await;
    let path = "/repos/octo-org/hello/issues/1/comments";
    let one = issue(1);
    let post = || client.post_comment(&one, "hello", &CommentTarget::NewThread);

    gh.fail_next(
        "POST",
        path,
        1,
        Failure::Validation("body is too long (maximum is 65536 characters)".into()),
    );
    let e = post().await.unwrap_err();
    assert!(
        matches!(&e, TrackerError::Validation(m) if m.contains("body is too long")),
        "{e:?}"
    );
    assert!(!e.is_retryable());

    gh.fail_next(
        "POST",
        path,
        1,
        Failure::SecondaryRateLimit { retry_after: None },
    );
    assert_eq!(
        post().await.unwrap_err().retry_after(),
        Some(Duration::from_secs(60))
    );
    gh.fail_next(
        "POST",
        path,
        1,
        Failure::SecondaryRateLimit {
            retry_after: Some(17),
        },
    );
    assert_eq!(
        post().await.unwrap_err().retry_after(),
        Some(Duration::from_secs(17))
    );
    gh.fail_next(
        "POST",
        path,
        1,
        Failure::TooManyRequests {
            retry_after: Some(5),
        },
    );
    assert_eq!(
        post().await.unwrap_err().retry_after(),
        Some(Duration::from_secs(5))
    );
    gh.fail_next(
        "POST",
        path,
        1,
        Failure::TooManyRequests {
            retry_after: Some(u64::MAX),
        },
    );
    assert_eq!(
        post().await.unwrap_err().retry_after(),
        Some(relay_tracker::MAX_RETRY_AFTER)
    );
    gh.fail_next(
        "POST",
        path,
        1,
        Failure::PrimaryRateLimit { reset_in_secs: 300 },
    );
    let wait = post().await.unwrap_err().retry_after().unwrap().as_secs();
    assert!((290..=300).contains(&wait), "{wait}");

    for status in [500, 502, 503] {
        gh.fail_next("POST", path, 1, Failure::Status(status));
        let e = post().await.unwrap_err();
        assert!(
            matches!(&e, TrackerError::Transient(m) if m.starts_with(&status.to_string())),
            "{e:?}"
        );
        assert!(e.is_retryable());
    }
    gh.fail_next("POST", path, 1, Failure::Status(403));
    assert!(matches!(post().await, Err(TrackerError::Forbidden(_))));

    assert_eq!(gh.comments(REPO, 1).len(), 0, "no failed write landed");
    post().await.expect("the script is used up");

    let stranger = GitHubClient::new(
        &relay_tracker::fake::tracker_settings(
            relay_core::Provider::GitHub,
            gh.base_url(),
            "ghp_wrong",
            BOT,
        ),
        http_client().unwrap(),
    )
    .unwrap();
    let e = stranger.get_issue(&issue(1)).await.unwrap_err();
    assert!(
        matches!(&e, TrackerError::Unauthorized(m) if m.contains("Bad credentials")),
        "{e:?}"
    );
    assert!(!e.to_string().contains("ghp_wrong"));
}

#[tokio::test]
async fn a_hung_tracker_times_out_as_transient() {
    let gh = FakeGitHub::start().await;
    gh.seed_issue(REPO, 1, "t", "b");
    let mut settings = gh.settings(TOKEN, BOT);
    settings.request_timeout_secs = 1;
    let client = GitHubClient::new(&settings, http_client().unwrap()).unwrap();
    gh.fail_next(
        "GET",
        "/repos/octo-org/hello/issues/1",
        1,
        Failure::Delay(Duration::from_secs(5)),
    );
    let e = client.get_issue(&issue(1)).await.unwrap_err();
    assert!(
        matches!(&e, TrackerError::Transient(m) if m.contains("timed out")),
        "{e:?}"
    );
    assert!(e.is_retryable());
}

#[tokio::test]
async fn overlong_bodies_are_refused_before_sending() {
    let (gh, client) = setup().await;
    let body = "x".repeat(relay_tracker::github::MAX_COMMENT_CHARS + 1);
    let e = client
        .post_comment(&issue(1), &body, &CommentTarget::NewThread)
        .await
        .unwrap_err();
    assert!(matches!(e, TrackerError::Validation(_)));
    assert!(gh.requests().is_empty());
    client
        .post_comment(
            &issue(1),
            &"x".repeat(relay_tracker::github::MAX_COMMENT_CHARS),
            &CommentTarget::NewThread,
        )
        .await
        .expect("exactly the limit is accepted");
}

#[tokio::test]
async fn pacing_holds_writes_not_reads() {
    let gh = FakeGitHub::start().await;
    gh.seed_issue(REPO, 1, "t", "b");
    let mut settings = gh.settings(TOKEN, BOT);
    // A burst of 2, then one write per ~17 minutes: the third write must wait.
    settings.write_rate_per_sec = 0.001;
    settings.write_burst = 2;
    let client = GitHubClient::new(&settings, http_client().unwrap()).unwrap();
    for _ in 0..2 {
        client
            .post_comment(&issue(1), "x", &CommentTarget::NewThread)
            .await
            .unwrap();
    }
    for _ in 0..5 {
        client
            .list_thread(&issue(1))
            .await
            .expect("reads are never paced");
    }
    let third = tokio::time::timeout(
        Duration::from_millis(300),
        client.post_comment(&issue(1), "x", &CommentTarget::NewThread),
    )
    .await;
    assert!(third.is_err(), "the third write is held by the bucket");
    assert_eq!(gh.comments(REPO, 1).len(), 2);
    assert_eq!(gh.requests().iter().filter(|r| r.is_write()).count(), 2);
}
