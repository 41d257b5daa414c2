//! Every request the GitLab client can make, made against the fake, then checked against the
//! go-gitlab endpoints and options (`contracts/gitlab.json`).

use relay_tracker::fake::FakeGitLab;
use relay_tracker::{
    CommentTarget, GitLabClient, IssueRef, NoteRef, ProjectRef, Reaction, ReactionTarget,
    http_client,
};

use crate::contract::{GitLabContract, assert_kept};

const PROJECT: i64 = 42;
const PATH: &str = "group/sub/project";

#[tokio::test]
async fn every_gitlab_request_is_a_declared_endpoint_with_declared_options() {
    let gl = FakeGitLab::start().await;
    gl.seed_issue(PROJECT, PATH, 7, "Broken login", "Steps…");
    gl.set_member(PROJECT, "alice", 30);
    let (_, human_note) = gl.seed_note(PROJECT, 7, "alice", "Any idea?", false);
    let client =
        GitLabClient::new(&gl.settings("glpat-test", "relay"), http_client().unwrap()).unwrap();
    // By id and by path: the client addresses a project either way.
    for project_id in [PROJECT.to_string(), String::new()] {
        let issue = IssueRef {
            project_id,
            project_path: PATH.into(),
            number: 7,
            installation_id: None,
        };
        client.whoami().await.unwrap();
        client.get_issue(&issue).await.unwrap();
        client.list_thread(&issue).await.unwrap();
        let thread = client
            .post_comment(&issue, "New thread", &CommentTarget::NewThread)
            .await
            .unwrap();
        let reply = client
            .post_comment(
                &issue,
                "In the thread <!-- relay:write:x -->",
                &CommentTarget::Reply(NoteRef {
                    note_id: thread.note_id.clone(),
                    discussion_id: thread.discussion_id.clone(),
                }),
            )
            .await
            .unwrap();
        client
            .edit_comment(
                &issue,
                &NoteRef {
                    note_id: reply.note_id.clone(),
                    discussion_id: reply.discussion_id.clone(),
                },
                "Edited",
            )
            .await
            .unwrap();
        client
            .add_reaction(&issue, &ReactionTarget::Issue, Reaction::Eyes)
            .await
            .unwrap();
        client
            .add_reaction(
                &issue,
                &ReactionTarget::Note(NoteRef {
                    note_id: human_note.to_string(),
                    discussion_id: None,
                }),
                Reaction::ThumbsUp,
            )
            .await
            .unwrap();
        client
            .find_marked_comment(&issue, "<!-- relay:write:x -->")
            .await
            .unwrap();
        client.author_role(&issue, "alice").await.unwrap();
        client
            .author_role_by_id(&issue, "alice", gl.user_id("alice"))
            .await
            .unwrap();
        client
            .changes_since(
                &ProjectRef {
                    project_id: Some(PROJECT.to_string()),
                    project_path: PATH.into(),
                },
                chrono::Utc::now() - chrono::Duration::hours(1),
            )
            .await
            .unwrap();
    }
    let contract = GitLabContract::load();
    let requests = gl.requests();
    let problems: Vec<String> = requests
        .iter()
        .flat_map(|r| contract.check(r, "/api/v4"))
        .collect();
    assert_kept(problems, requests.len());
}
