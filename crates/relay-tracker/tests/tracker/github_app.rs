//! The GitHub App flow against the fake: RS256 JWT verified with the public key, installation
//! tokens exchanged per installation, cached, refreshed five minutes before expiry.

use std::time::Duration;

use relay_tracker::fake::{FakeGitHub, TEST_APP_PUBLIC_KEY_PEM};
use relay_tracker::{CommentTarget, GitHubClient, IssueRef, TrackerError, http_client};

const REPO: &str = "octo-org/hello";
const APP_ID: u64 = 4242;

fn issue(installation: Option<i64>) -> IssueRef {
    IssueRef {
        project_id: "1".into(),
        project_path: REPO.into(),
        number: 1,
        installation_id: installation,
    }
}

async fn setup() -> (FakeGitHub, GitHubClient) {
    let gh = FakeGitHub::start().await;
    gh.seed_issue(REPO, 1, "t", "b");
    let settings = gh.app_settings(APP_ID, "relay-app");
    let client = GitHubClient::new(&settings, http_client().unwrap()).unwrap();
    (gh, client)
}

#[tokio::test]
async fn installation_token_is_exchanged_once_and_cached() {
    let (gh, client) = setup().await;
    gh.install(REPO, 77);
    client.get_issue(&issue(Some(77))).await.unwrap();
    let posted = client
        .post_comment(
            &issue(Some(77)),
            "hi <!-- relay:write:a -->",
            &CommentTarget::NewThread,
        )
        .await
        .unwrap();
    client.list_thread(&issue(Some(77))).await.unwrap();
    assert_eq!(
        gh.token_exchanges(),
        vec![77],
        "one exchange, then the cache"
    );

    let comments = gh.comments(REPO, 1);
    assert_eq!(comments[0].author, "relay-app[bot]");
    assert_eq!(comments[0].author_type, "Bot");
    // bot_username is the slug; the App comments as slug[bot].
    let found = client
        .find_marked_comment(&issue(Some(77)), "<!-- relay:write:a -->")
        .await
        .unwrap();
    assert_eq!(found.unwrap().note_id, posted.note_id);
    assert!(client.list_thread(&issue(Some(77))).await.unwrap()[0].by_bot);

    let exchange = gh
        .requests()
        .into_iter()
        .find(|r| r.path.ends_with("/access_tokens"))
        .unwrap();
    assert_eq!(exchange.path, "/app/installations/77/access_tokens");
    let jwt = exchange
        .header("authorization")
        .unwrap()
        .strip_prefix("Bearer ")
        .unwrap()
        .to_owned();
    assert_eq!(jwt.matches('.').count(), 2, "a JWT");
    let later = gh
        .requests()
        .into_iter()
        .rfind(|r| r.method == "POST")
        .unwrap();
    assert!(
        later
            .header("authorization")
            .unwrap()
            .starts_with("Bearer ghs_"),
        "installation token used"
    );
}

#[tokio::test]
async fn installations_get_their_own_tokens_and_unknown_ones_are_looked_up() {
    let (gh, client) = setup().await;
    gh.install(REPO, 5);
    client.get_issue(&issue(None)).await.unwrap();
    client.get_issue(&issue(None)).await.unwrap();
    assert_eq!(gh.token_exchanges(), vec![5]);
    assert_eq!(
        gh.requests()
            .iter()
            .filter(|r| r.path.ends_with("/installation"))
            .count(),
        1
    );
    // Another installation's token cannot reach this repository (the fake answers 404 like GitHub).
    let e = client.get_issue(&issue(Some(6))).await.unwrap_err();
    assert!(matches!(e, TrackerError::NotFound(_)), "{e:?}");
    assert_eq!(gh.token_exchanges(), vec![5, 6]);
}

#[tokio::test]
async fn a_token_near_expiry_is_refreshed() {
    let gh = FakeGitHub::start().await;
    gh.seed_issue(REPO, 1, "t", "b");
    let settings = gh.app_settings(APP_ID, "relay-app");
    // Tokens that live 4 minutes are always inside the 5-minute refresh margin.
    gh.enable_app(
        APP_ID,
        "relay-app",
        TEST_APP_PUBLIC_KEY_PEM,
        Duration::from_secs(240),
    );
    let client = GitHubClient::new(&settings, http_client().unwrap()).unwrap();
    client.get_issue(&issue(Some(9))).await.unwrap();
    client.get_issue(&issue(Some(9))).await.unwrap();
    assert_eq!(gh.token_exchanges(), vec![9, 9]);
    // Tokens that live 6 minutes are kept.
    gh.enable_app(
        APP_ID,
        "relay-app",
        TEST_APP_PUBLIC_KEY_PEM,
        Duration::from_secs(360),
    );
    client.get_issue(&issue(Some(10))).await.unwrap();
    client.get_issue(&issue(Some(10))).await.unwrap();
    assert_eq!(gh.token_exchanges(), vec![9, 9, 10]);
}

#[tokio::test]
async fn the_fake_verifies_the_jwt() {
    let (gh, _) = setup().await;
    // Same key, wrong App id: the issuer claim does not verify.
    let mut wrong = gh.app_settings(APP_ID + 1, "relay-app");
    gh.enable_app(
        APP_ID,
        "relay-app",
        TEST_APP_PUBLIC_KEY_PEM,
        Duration::from_secs(3600),
    );
    wrong.app_id = Some(APP_ID + 1);
    let client = GitHubClient::new(&wrong, http_client().unwrap()).unwrap();
    let e = client.get_issue(&issue(Some(1))).await.unwrap_err();
    assert!(
        matches!(&e, TrackerError::Unauthorized(m) if m.contains("JSON web token")),
        "{e:?}"
    );
    assert!(gh.token_exchanges().is_empty());
}

#[tokio::test]
async fn identity_of_an_app_is_its_bot_account() {
    let (_gh, client) = setup().await;
    let me = client.whoami().await.unwrap();
    assert_eq!(me.login, "relay-app[bot]");
    assert_eq!(me.app_slug.as_deref(), Some("relay-app"));
}

#[test]
fn a_bad_private_key_is_a_configuration_error() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let gh = rt.block_on(FakeGitHub::start());
    let mut settings = gh.app_settings(APP_ID, "relay-app");
    settings.private_key = Some(secrecy::SecretString::from("not a key"));
    assert!(matches!(
        GitHubClient::new(&settings, http_client().unwrap()),
        Err(TrackerError::Config(_))
    ));
}

/// An installation token is minted for the issue's repository only, with only the permissions
/// Relay uses; it reaches no other repository of the installation, and it joins the outgoing
/// secret scan.
#[tokio::test]
async fn installation_tokens_are_scoped_and_scanned_for() {
    let (gh, client) = setup().await;
    gh.seed_issue("octo-org/other", 1, "t", "b");
    gh.install(REPO, 77);
    gh.install("octo-org/other", 77);
    client.get_issue(&issue(Some(77))).await.unwrap();
    let exchange = gh
        .requests()
        .into_iter()
        .find(|r| r.path.ends_with("/access_tokens"))
        .unwrap();
    let body: serde_json::Value = serde_json::from_str(&exchange.body).unwrap();
    assert_eq!(
        body,
        serde_json::json!({
            "repositories": ["hello"],
            "permissions": {"issues": "write", "contents": "read", "metadata": "read"}
        })
    );
    let token = gh
        .requests()
        .into_iter()
        .rfind(|r| r.path.starts_with("/repos/"))
        .and_then(|r| r.header("authorization").map(str::to_owned))
        .and_then(|h| h.strip_prefix("Bearer ").map(str::to_owned))
        .unwrap();
    let leaked = format!("leak {token} here");
    let scrubbed = relay_core::secrets::scrub_secrets(&leaked);
    assert_eq!(scrubbed.body, "leak [REDACTED] here");

    // The other repository of the same installation gets its own token.
    let other = IssueRef {
        project_path: "octo-org/other".into(),
        ..issue(Some(77))
    };
    client.get_issue(&other).await.unwrap();
    assert_eq!(
        gh.token_exchanges(),
        vec![77, 77],
        "one token per repository"
    );
}

/// A related repository is read with a token of the issue's installation for that repository
/// alone, with `contents: read` and `metadata: read` only (never the issue's write token); a
/// repository the installation does not cover is not readable (`None`), not an error.
#[tokio::test]
async fn a_related_repository_is_read_with_a_read_only_token_for_it_alone() {
    let (gh, client) = setup().await;
    gh.install(REPO, 77);
    gh.install("octo-org/sdk", 77);
    gh.set_repo_visibility("octo-org/sdk", "private");
    gh.set_repo_visibility("octo-org/elsewhere", "public");
    let found = client
        .repository(&issue(Some(77)), "octo-org/sdk")
        .await
        .unwrap()
        .expect("the installation covers it");
    assert_eq!(found.project_path, "octo-org/sdk");
    assert_eq!(found.visibility, relay_core::ProjectVisibility::Private);
    let exchanges: Vec<serde_json::Value> = gh
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/access_tokens"))
        .map(|r| serde_json::from_str(&r.body).unwrap())
        .collect();
    assert_eq!(
        exchanges,
        [serde_json::json!({
            "repositories": ["sdk"],
            "permissions": {"contents": "read", "metadata": "read"}
        })]
    );
    // The clone credential is that token, cached.
    let token =
        relay_tracker::IssueTracker::read_credential(&client, &issue(Some(77)), "octo-org/sdk")
            .await
            .unwrap()
            .expect("a token");
    let lookup = gh
        .requests()
        .into_iter()
        .find(|r| r.path == "/repos/octo-org/sdk")
        .unwrap();
    assert_eq!(
        lookup.header("authorization"),
        Some(format!("Bearer {}", secrecy::ExposeSecret::expose_secret(&token)).as_str())
    );
    assert_eq!(
        gh.token_exchanges(),
        vec![77],
        "one exchange, then the cache"
    );
    // Another installation's repository is not readable with this one.
    gh.install("octo-org/elsewhere", 99);
    assert_eq!(
        client
            .repository(&issue(Some(77)), "octo-org/elsewhere")
            .await
            .unwrap(),
        None
    );
}
