//! `build` and `Trackers` from settings; connection failures are transient.

use relay_core::{Provider, TrackerName};
use relay_tracker::fake::{FakeGitHub, FakeGitLab, tracker_settings};
use relay_tracker::{IssueRef, TrackerError, Trackers, build};

#[tokio::test]
async fn the_registry_builds_every_configured_tracker() {
    let gh = FakeGitHub::start().await;
    let gl = FakeGitLab::start().await;
    gh.seed_issue("o/r", 1, "gh issue", "");
    gl.seed_issue(5, "g/p", 2, "gl issue", "");
    let mut lab = gl.settings("glpat", "relay");
    lab.name = TrackerName::parse("lab").unwrap();
    let trackers = Trackers::from_settings(&[gh.settings("ghp", "relay-bot"), lab]).unwrap();
    assert_eq!(trackers.len(), 2);

    let github = trackers
        .get(&TrackerName::parse("github").unwrap())
        .unwrap();
    assert_eq!(
        (github.provider(), github.bot_username()),
        (Provider::GitHub, "relay-bot")
    );
    let issue = IssueRef {
        project_id: "1".into(),
        project_path: "o/r".into(),
        number: 1,
        installation_id: None,
    };
    assert_eq!(github.get_issue(&issue).await.unwrap().title, "gh issue");

    let gitlab = trackers.get_str("lab").unwrap();
    assert_eq!(gitlab.provider(), Provider::GitLab);
    let issue = IssueRef {
        project_id: "5".into(),
        project_path: "g/p".into(),
        number: 2,
        installation_id: None,
    };
    assert_eq!(gitlab.get_issue(&issue).await.unwrap().title, "gl issue");
    assert!(trackers.get_str("nope").is_none());
}

#[test]
fn invalid_settings_name_the_tracker_and_key() {
    let mut bad = tracker_settings(Provider::GitHub, "https://api.github.com".into(), "", "bot");
    bad.name = TrackerName::parse("broken").unwrap();
    let Err(e) = Trackers::from_settings(&[bad.clone()]) else {
        panic!("accepted")
    };
    assert!(
        matches!(&e, TrackerError::Config(m) if m.contains("tracker broken") && m.contains("token")),
        "{e}"
    );
    bad.token = secrecy::SecretString::from("x");
    bad.write_burst = 0;
    assert!(matches!(build(&bad), Err(TrackerError::Config(m)) if m.contains("write_burst")));
}

#[tokio::test]
async fn a_tracker_that_is_down_is_transient() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let settings = tracker_settings(Provider::GitHub, format!("http://{addr}"), "ghp", "bot");
    let client = build(&settings).unwrap();
    let issue = IssueRef {
        project_id: "1".into(),
        project_path: "o/r".into(),
        number: 1,
        installation_id: None,
    };
    let e = client.get_issue(&issue).await.unwrap_err();
    assert!(
        matches!(&e, TrackerError::Transient(m) if m.contains("cannot connect")),
        "{e:?}"
    );
    assert!(e.is_retryable());
}
