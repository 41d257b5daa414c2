//! GitLab member lookup: by the webhook's user id (`members/all/:user_id`), falling
//! back to the fuzzy, paginated `members/all?query=` search read over every page.

use relay_tracker::fake::FakeGitLab;
use relay_tracker::{AuthorRole, GitLabClient, IssueRef, http_client};

const PROJECT: i64 = 42;
const PATH: &str = "group/project";

async fn setup() -> (FakeGitLab, GitLabClient, IssueRef) {
    let gl = FakeGitLab::start().await;
    gl.seed_issue(PROJECT, PATH, 7, "Broken login", "Steps…");
    // More fuzzy matches of "root" than one page holds, all sorting before it.
    for i in 0..150 {
        gl.set_member(PROJECT, &format!("aroot{i:03}"), 10);
    }
    gl.set_member(PROJECT, "root", 40);
    let client =
        GitLabClient::new(&gl.settings("glpat-test", "relay"), http_client().unwrap()).unwrap();
    let issue = IssueRef {
        project_id: PROJECT.to_string(),
        project_path: PATH.into(),
        number: 7,
        installation_id: None,
    };
    (gl, client, issue)
}

fn gets(gl: &FakeGitLab, suffix: &str) -> Vec<String> {
    gl.requests()
        .into_iter()
        .filter(|r| r.method == "GET" && r.path.ends_with(suffix))
        .map(|r| r.query.unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn a_member_is_looked_up_by_the_webhooks_user_id() {
    let (gl, client, issue) = setup().await;
    let id = gl.user_id("root").unwrap();
    let role = client
        .author_role_by_id(&issue, "root", Some(id))
        .await
        .unwrap();
    assert_ne!(role, AuthorRole::None);
    assert_eq!(gets(&gl, &format!("/members/all/{id}")).len(), 1);
    assert!(gets(&gl, "/members/all").is_empty(), "no fuzzy search");
}

#[tokio::test]
async fn without_an_id_the_search_reads_every_page() {
    let (gl, client, issue) = setup().await;
    let role = client.author_role(&issue, "root").await.unwrap();
    assert_ne!(role, AuthorRole::None, "found on the second page");
    let pages = gets(&gl, "/members/all");
    assert_eq!(pages.len(), 2, "{pages:?}");
    assert!(pages[1].contains("page=2"), "{pages:?}");
    assert_eq!(
        client.author_role(&issue, "nobody").await.unwrap(),
        AuthorRole::None,
        "a definite no"
    );
}

#[tokio::test]
async fn an_id_that_names_someone_else_falls_back_to_the_name() {
    let (gl, client, issue) = setup().await;
    let other = gl.user_id("aroot001").unwrap();
    let by_name = client.author_role(&issue, "root").await.unwrap();
    let role = client
        .author_role_by_id(&issue, "root", Some(other))
        .await
        .unwrap();
    assert_eq!(role, by_name, "the stale id's member is not taken for root");
    let unknown = client
        .author_role_by_id(&issue, "root", Some(1))
        .await
        .unwrap();
    assert_eq!(unknown, by_name, "a 404 by id falls back to the search");
}
