//! GitLabClient against the local fake GitLab (under a path prefix) over real HTTP.

use std::time::Duration;

use relay_core::TokenAuth;
use relay_tracker::fake::{Failure, FakeGitLab};
use relay_tracker::{
    AuthorRole, CommentTarget, GitLabClient, IssueRef, NoteRef, Reaction, ReactionTarget,
    TrackerError, http_client,
};

const PROJECT: i64 = 42;
const PATH: &str = "group/sub/project";
const TOKEN: &str = "glpat-test";
const BOT: &str = "relay";

fn issue() -> IssueRef {
    IssueRef {
        project_id: PROJECT.to_string(),
        project_path: PATH.into(),
        number: 7,
        installation_id: None,
    }
}

async fn setup() -> (FakeGitLab, GitLabClient) {
    let gl = FakeGitLab::start_with_prefix("/gitlab").await;
    gl.seed_issue(PROJECT, PATH, 7, "Broken login", "Steps…");
    let settings = gl.settings(TOKEN, BOT);
    assert!(settings.base_url.ends_with("/gitlab"));
    (
        gl,
        GitLabClient::new(&settings, http_client().unwrap()).unwrap(),
    )
}

#[tokio::test]
async fn create_reply_edit_award_under_a_path_prefix() {
    let (gl, client) = setup().await;
    let (human_discussion, human_note) = gl.seed_note(PROJECT, 7, "alice", "Any idea?", false);

    let got = client.get_issue(&issue()).await.unwrap();
    assert_eq!(
        (got.number, got.state.as_str(), got.project_id.as_str()),
        (7, "open", "42")
    );

    let thread = client
        .post_comment(&issue(), "New thread", &CommentTarget::NewThread)
        .await
        .unwrap();
    let discussion = thread.discussion_id.clone().unwrap();
    let reply = client
        .post_comment(
            &issue(),
            "In the thread",
            &CommentTarget::Reply(NoteRef {
                note_id: thread.note_id.clone(),
                discussion_id: Some(discussion.clone()),
            }),
        )
        .await
        .unwrap();
    assert_eq!(reply.discussion_id.as_deref(), Some(discussion.as_str()));
    // A reply to a note given without its discussion: the client finds the discussion.
    let answer = client
        .post_comment(
            &issue(),
            "Yes",
            &CommentTarget::Reply(NoteRef {
                note_id: human_note.to_string(),
                discussion_id: None,
            }),
        )
        .await
        .unwrap();
    assert_eq!(
        answer.discussion_id.as_deref(),
        Some(human_discussion.as_str())
    );

    client
        .edit_comment(
            &issue(),
            &NoteRef {
                note_id: reply.note_id.clone(),
                discussion_id: Some(discussion.clone()),
            },
            "Edited in thread",
        )
        .await
        .unwrap();
    client
        .edit_comment(
            &issue(),
            &NoteRef {
                note_id: thread.note_id.clone(),
                discussion_id: None,
            },
            "Edited plain",
        )
        .await
        .unwrap();

    client
        .add_reaction(&issue(), &ReactionTarget::Issue, Reaction::Eyes)
        .await
        .unwrap();
    client
        .add_reaction(&issue(), &ReactionTarget::Issue, Reaction::Eyes)
        .await
        .expect("already awarded is success");
    let on_note = ReactionTarget::Note(NoteRef {
        note_id: human_note.to_string(),
        discussion_id: None,
    });
    client
        .add_reaction(&issue(), &on_note, Reaction::ThumbsUp)
        .await
        .unwrap();
    client
        .add_reaction(&issue(), &on_note, Reaction::ThumbsUp)
        .await
        .unwrap();
    assert_eq!(gl.awards().len(), 2);
    assert_eq!(gl.awards()[1].name, "thumbsup");

    let discussions = gl.discussions(PROJECT, 7);
    assert_eq!(discussions.len(), 2);
    let human = &discussions[0];
    assert_eq!(human.notes[1].body, "Yes");
    assert!(
        !human.individual_note,
        "replying turned the comment into a thread"
    );
    let ours = &discussions[1];
    assert_eq!(
        ours.notes
            .iter()
            .map(|n| n.body.as_str())
            .collect::<Vec<_>>(),
        ["Edited plain", "Edited in thread"]
    );
    assert_eq!(ours.notes[0].author, BOT);

    let requests = gl.requests();
    assert!(
        requests
            .iter()
            .all(|r| r.path.starts_with("/gitlab/api/v4/"))
    );
    assert!(
        requests
            .iter()
            .all(|r| r.header("private-token") == Some(TOKEN))
    );
    assert!(requests.iter().any(|r| r.method == "POST"
        && r.path
            == format!("/gitlab/api/v4/projects/42/issues/7/discussions/{discussion}/notes")));
    assert!(requests.iter().any(|r| {
        r.method == "PUT"
            && r.path
                .ends_with(&format!("/issues/7/notes/{}", thread.note_id))
    }));
}

#[tokio::test]
async fn lists_three_pages_skipping_system_notes() {
    let (gl, client) = setup().await;
    for i in 0..250 {
        gl.seed_note(
            PROJECT,
            7,
            if i % 5 == 0 { BOT } else { "bob" },
            &format!("note {i}"),
            false,
        );
    }
    gl.seed_note(PROJECT, 7, "bob", "added ~bug label", true);
    let thread = client.list_thread(&issue()).await.unwrap();
    assert_eq!(thread.len(), 250);
    assert!(thread.iter().all(|n| n.note.body.starts_with("note ")));
    assert_eq!(thread.iter().filter(|n| n.by_bot).count(), 50);
    let pages = gl
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/discussions"))
        .count();
    assert_eq!(pages, 3);

    // Without x-next-page, the Link header is followed.
    gl.link_pagination_only();
    assert_eq!(client.list_thread(&issue()).await.unwrap().len(), 250);
    assert_eq!(
        gl.requests()
            .into_iter()
            .filter(|r| r.path.ends_with("/discussions"))
            .count(),
        6
    );
}

#[tokio::test]
async fn finds_only_the_bots_marked_note() {
    let (gl, client) = setup().await;
    let marker = "<!-- relay:write:x -->";
    gl.seed_note(PROJECT, 7, "mallory", marker, false);
    assert_eq!(
        client.find_marked_comment(&issue(), marker).await.unwrap(),
        None
    );
    let (d, n) = gl.seed_note(PROJECT, 7, BOT, &format!("done {marker}"), false);
    let found = client
        .find_marked_comment(&issue(), marker)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (found.note_id, found.discussion_id),
        (n.to_string(), Some(d))
    );
}

#[tokio::test]
async fn roles_bearer_auth_path_ids_and_identity() {
    let (gl, _) = setup().await;
    let mut settings = gl.settings(TOKEN, BOT);
    settings.auth = TokenAuth::Bearer;
    let client = GitLabClient::new(&settings, http_client().unwrap()).unwrap();
    gl.set_member(PROJECT, "ann", 20);
    gl.set_member(PROJECT, "anna", 50);
    gl.set_member(PROJECT, "mo", 40);
    gl.set_member(PROJECT, "gus", 10);
    assert_eq!(
        client.author_role(&issue(), "ann").await.unwrap(),
        AuthorRole::Member,
        "exact match, not anna"
    );
    assert_eq!(
        client.author_role(&issue(), "mo").await.unwrap(),
        AuthorRole::Owner
    );
    assert_eq!(
        client.author_role(&issue(), "gus").await.unwrap(),
        AuthorRole::Contributor
    );
    assert_eq!(
        client.author_role(&issue(), "zed").await.unwrap(),
        AuthorRole::None
    );
    let by_path = IssueRef {
        project_id: String::new(),
        ..issue()
    };
    assert_eq!(client.get_issue(&by_path).await.unwrap().project_id, "42");
    assert_eq!(client.whoami().await.unwrap().login, BOT);
    let requests = gl.requests();
    assert!(
        requests
            .iter()
            .any(|r| r.path == "/gitlab/api/v4/projects/group%2Fsub%2Fproject/issues/7")
    );
    assert!(
        requests
            .iter()
            .all(|r| r.header("authorization") == Some("Bearer glpat-test")
                && r.header("private-token").is_none())
    );
}

#[tokio::test]
async fn failures_are_classified() {
    let (gl, client) = setup().await;
    let path = "/gitlab/api/v4/projects/42/issues/7/discussions";
    let one = issue();
    let post = || client.post_comment(&one, "hello", &CommentTarget::NewThread);

    gl.fail_next(
        "POST",
        path,
        1,
        Failure::TooManyRequests {
            retry_after: Some(12),
        },
    );
    assert_eq!(
        post().await.unwrap_err().retry_after(),
        Some(Duration::from_secs(12))
    );
    gl.fail_next(
        "POST",
        path,
        1,
        Failure::TooManyRequests { retry_after: None },
    );
    assert_eq!(
        post().await.unwrap_err().retry_after(),
        Some(Duration::from_secs(60))
    );
    gl.fail_next(
        "POST",
        path,
        1,
        Failure::Validation("Note can't be blank".into()),
    );
    assert!(
        matches!(post().await, Err(TrackerError::Validation(m)) if m.contains("can't be blank"))
    );
    gl.fail_next("POST", path, 1, Failure::Status(503));
    assert!(post().await.unwrap_err().is_retryable());
    gl.fail_next("POST", path, 1, Failure::Status(403));
    assert!(matches!(post().await, Err(TrackerError::Forbidden(_))));
    gl.fail_next("POST", path, 1, Failure::Delay(Duration::from_secs(5)));
    let mut settings = gl.settings(TOKEN, BOT);
    settings.request_timeout_secs = 1;
    let impatient = GitLabClient::new(&settings, http_client().unwrap()).unwrap();
    let e = impatient
        .post_comment(&issue(), "x", &CommentTarget::NewThread)
        .await
        .unwrap_err();
    assert!(
        matches!(&e, TrackerError::Transient(m) if m.contains("timed out")),
        "{e:?}"
    );

    let stranger = GitLabClient::new(
        &relay_tracker::fake::tracker_settings(
            relay_core::Provider::GitLab,
            gl.base_url(),
            "wrong",
            BOT,
        ),
        http_client().unwrap(),
    )
    .unwrap();
    assert!(
        matches!(stranger.get_issue(&issue()).await, Err(TrackerError::Unauthorized(m)) if m.contains("401 Unauthorized"))
    );
    let missing = IssueRef {
        number: 99,
        ..issue()
    };
    assert!(matches!(
        client.get_issue(&missing).await,
        Err(TrackerError::NotFound(_))
    ));
    let foreign = NoteRef {
        note_id: "1".into(),
        discussion_id: Some("abc".into()),
    };
    assert!(matches!(
        client.edit_comment(&issue(), &foreign, "x").await,
        Err(TrackerError::NotFound(_))
    ));
    let bad = NoteRef {
        note_id: "1".into(),
        discussion_id: Some("../../x".into()),
    };
    assert!(matches!(
        client.edit_comment(&issue(), &bad, "x").await,
        Err(TrackerError::Validation(_))
    ));
}

/// A body with planted quick actions, as a model echoing an issue might write it.
const PLANTED: &str = "Sure, noted.\n/close\n/confidential\n/move evil/elsewhere\n/assign @mallory\n\
/label ~wontfix\n/title pwned\n```\n/usr/bin/true\n/unlabel\n```\n  /lock\n/reopen";

/// Issue #33 §2: a reader (and Relay's old escaping) sees each command inside a fence; GitLab's
/// extractor closes a block early and runs it.
const HIDDEN: [&str; 3] = [
    "<details>\n```\n</details>\n/move attacker/loot\n```",
    "```\n```\n```\n/confidential\n```",
    ">>>\n```\n>>>\n/close\n```",
];

async fn post_raw(gl: &FakeGitLab, body: &str) {
    let url = format!(
        "{}/api/v4/projects/{PROJECT}/issues/7/discussions",
        gl.base_url()
    );
    let answer = http_client()
        .unwrap()
        .post(url)
        .header("PRIVATE-TOKEN", TOKEN)
        .json(&serde_json::json!({ "body": body }))
        .send()
        .await
        .unwrap();
    assert!(answer.status().is_success());
}

#[tokio::test]
async fn the_fake_runs_quick_actions_posted_raw_as_gitlab_does() {
    // The seam the next tests rely on: a raw POST (no client) does run them, as GitLab's
    // extractor finds them (ported, not Relay's own idea of it).
    let (gl, _client) = setup().await;
    post_raw(&gl, PLANTED).await;
    let ran: Vec<String> = gl.quick_actions().into_iter().map(|q| q.command).collect();
    assert_eq!(
        ran,
        [
            "close",
            "confidential",
            "move",
            "assign",
            "label",
            "title",
            "reopen"
        ],
        "the fenced /unlabel is in a code block and the indented /lock is not in the first column"
    );
    let state = gl.issue_state(PROJECT, 7).unwrap();
    assert!(state.confidential);
    assert_eq!(state.moved_to.as_deref(), Some("evil/elsewhere"));
    assert_eq!(state.title, "pwned");
    assert!(
        state.labels.iter().any(|l| l == "wontfix"),
        "{:?}",
        state.labels
    );
}

#[tokio::test]
async fn the_fake_runs_commands_hidden_after_a_block_gitlab_closes_early() {
    let (gl, _client) = setup().await;
    for body in HIDDEN {
        post_raw(&gl, body).await;
    }
    let ran: Vec<(String, String)> = gl
        .quick_actions()
        .into_iter()
        .map(|q| (q.command, q.argument))
        .collect();
    assert_eq!(
        ran,
        [
            ("move".to_owned(), "attacker/loot".to_owned()),
            ("confidential".to_owned(), String::new()),
            ("close".to_owned(), String::new()),
        ]
    );
}

#[tokio::test]
async fn no_body_the_client_sends_can_run_a_quick_action() {
    let (gl, client) = setup().await;
    let before = gl.issue_state(PROJECT, 7).unwrap();
    let mut bodies = vec![PLANTED.to_owned()];
    bodies.extend(HIDDEN.iter().map(|b| (*b).to_owned()));
    bodies.push(HIDDEN.join("\n"));
    for body in &bodies {
        let thread = client
            .post_comment(&issue(), body, &CommentTarget::NewThread)
            .await
            .unwrap();
        let note = NoteRef {
            note_id: thread.note_id.clone(),
            discussion_id: thread.discussion_id.clone(),
        };
        client
            .post_comment(&issue(), body, &CommentTarget::Reply(note.clone()))
            .await
            .unwrap();
        // Edits run quick actions on GitLab too.
        client.edit_comment(&issue(), &note, body).await.unwrap();
    }
    assert_eq!(gl.quick_actions(), [], "no quick action ran");
    assert_eq!(gl.issue_state(PROJECT, 7).unwrap(), before);
    // Readable: the same lines with a backslash before the slash, fenced code included.
    let posted = &gl.discussions(PROJECT, 7)[0].notes[0].body;
    assert!(posted.contains("\n\\/close\n\\/confidential\n"), "{posted}");
    assert!(
        posted.contains("```\n\\/usr/bin/true\n\\/unlabel\n```\n  \\/lock"),
        "{posted}"
    );
    let hidden = &gl.discussions(PROJECT, 7)[1].notes[0].body;
    assert_eq!(
        hidden,
        "<details>\n```\n</details>\n\\/move attacker/loot\n```"
    );
    let mut bodies_sent = 0;
    for request in gl.requests() {
        let body: serde_json::Value =
            serde_json::from_str(&request.body).unwrap_or(serde_json::Value::Null);
        if let Some(text) = body["body"].as_str() {
            bodies_sent += 1;
            assert_eq!(
                relay_tracker::fake::gitlab_quick::extract(text),
                [],
                "a request body still carries a quick action: {text}"
            );
        }
    }
    assert_eq!(bodies_sent, bodies.len() * 3);
}
