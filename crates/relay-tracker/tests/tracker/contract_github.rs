//! Every request the GitHub client can make (token and App), made against the fake, then checked
//! against GitHub's official OpenAPI description (`contracts/github.json`): a declared
//! operation, declared query parameters of valid types, a body valid against the request
//! schema, the recommended headers; and the fake's answer valid against the response schema.

use std::time::Duration;

use relay_tracker::fake::{FakeGitHub, TEST_APP_PUBLIC_KEY_PEM};
use relay_tracker::{
    CommentTarget, GitHubClient, IssueRef, IssueTracker, NoteRef, ProjectRef, Reaction,
    ReactionTarget, http_client,
};

use crate::contract::{GitHubContract, assert_kept};

const REPO: &str = "octo/hello";
const APP_ID: u64 = 4242;

fn issue(installation_id: Option<i64>) -> IssueRef {
    IssueRef {
        project_id: "1296269".into(),
        project_path: REPO.into(),
        number: 1,
        installation_id,
    }
}

async fn exercise(client: &GitHubClient, issue: &IssueRef, human_comment: i64) {
    client.get_issue(issue).await.unwrap();
    client.list_thread(issue).await.unwrap();
    let posted = client
        .post_comment(
            issue,
            "Hello <!-- relay:write:x -->",
            &CommentTarget::NewThread,
        )
        .await
        .unwrap();
    client
        .edit_comment(
            issue,
            &NoteRef {
                note_id: posted.note_id.clone(),
                discussion_id: None,
            },
            "Hello again <!-- relay:write:x -->",
        )
        .await
        .unwrap();
    client
        .find_marked_comment(issue, "<!-- relay:write:x -->")
        .await
        .unwrap();
    client
        .add_reaction(issue, &ReactionTarget::Issue, Reaction::Eyes)
        .await
        .unwrap();
    client
        .add_reaction(
            issue,
            &ReactionTarget::Note(NoteRef {
                note_id: human_comment.to_string(),
                discussion_id: None,
            }),
            Reaction::ThumbsUp,
        )
        .await
        .unwrap();
    client.author_role(issue, "alice").await.unwrap();
    client
        .changes_since(
            &ProjectRef {
                project_id: Some("1296269".into()),
                project_path: REPO.into(),
            },
            chrono::Utc::now() - chrono::Duration::hours(1),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn every_github_request_and_answer_keeps_the_openapi_description() {
    let gh = FakeGitHub::start().await;
    gh.seed_issue(REPO, 1, "Broken login", "Steps…");
    gh.set_repo_id(REPO, 1_296_269);
    let human = gh.seed_comment(REPO, 1, "alice", "Any idea?");
    gh.set_permission(REPO, "alice", "write");
    gh.add_token("ghp_test", "relay-bot");
    gh.enable_app(
        APP_ID,
        "relay-app",
        TEST_APP_PUBLIC_KEY_PEM,
        Duration::from_secs(3600),
    );
    gh.install(REPO, 77);

    // A token.
    let client = GitHubClient::new(
        &gh.settings("ghp_test", "relay-bot"),
        http_client().unwrap(),
    )
    .unwrap();
    client.whoami().await.unwrap();
    exercise(&client, &issue(None), human).await;

    // A GitHub App: its identity, an installation token found by repository, then by id.
    let app = GitHubClient::new(
        &gh.app_settings(APP_ID, "relay-app"),
        http_client().unwrap(),
    )
    .unwrap();
    app.whoami().await.unwrap();
    app.clone_credential(&issue(None)).await.unwrap();
    exercise(&app, &issue(Some(77)), human).await;

    let contract = GitHubContract::load();
    let requests = gh.requests();
    let problems: Vec<String> = requests.iter().flat_map(|r| contract.check(r)).collect();
    assert_kept(problems, requests.len());
}
