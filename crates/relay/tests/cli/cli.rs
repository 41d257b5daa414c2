//! The command-line tools, run as a user runs them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};

fn relay(args: &[&str], config: Option<&Path>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_relay"));
    if let Some(config) = config {
        command.arg("--config").arg(config);
    }
    command
        .args(args)
        .env_remove("DATABASE_URL")
        .env("RUST_LOG", "error")
        .output()
        .expect("relay runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn fixtures(language: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../relay-codegraph/tests/fixtures")
        .join(language)
}

#[test]
fn index_exports_the_documented_json() {
    let repo = fixtures("python");
    let output = relay(&["index", repo.to_str().unwrap(), "--format", "json"], None);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let graph: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let symbols = graph["symbols"].as_array().unwrap();
    let edges = graph["edges"].as_array().unwrap();
    assert!(!symbols.is_empty() && !edges.is_empty());
    for key in [
        "qname", "name", "kind", "language", "file", "line", "end_line",
    ] {
        assert!(
            symbols.iter().all(|s| s.get(key).is_some()),
            "symbol field {key}"
        );
    }
    for key in [
        "kind",
        "from",
        "to",
        "to_name",
        "file",
        "line",
        "confidence",
    ] {
        assert!(
            edges.iter().all(|e| e.get(key).is_some()),
            "edge field {key}"
        );
    }
    assert!(
        edges.iter().any(|e| e["to"].is_null()),
        "unresolved edges carry to = null"
    );

    let summary = relay(&["index", repo.to_str().unwrap()], None);
    let text = stdout(&summary);
    assert!(
        text.starts_with("Indexed ")
            && text.contains("Symbols: ")
            && text.contains("By confidence:"),
        "{text}"
    );
}

#[test]
fn codegraph_and_tool_print_what_agents_receive() {
    let repo = fixtures("go");
    let repo = repo.to_str().unwrap();
    let output = relay(
        &[
            "codegraph",
            "search",
            "--repo",
            repo,
            "--name",
            "Plan",
            "--kind",
            "method",
        ],
        None,
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = stdout(&output);
    assert!(
        text.contains("symbols matching \"Plan\" (kind=method)"),
        "{text}"
    );
    assert!(text.contains("Use qname with callers/callees/implementations/usages operations."));

    let missing = relay(&["codegraph", "callers", "--repo", repo], None);
    assert!(!missing.status.success());
    assert!(stdout(&missing).contains("qname parameter required for callers"));

    let grep = relay(
        &["tool", "grep", "--repo", repo, r#"{"pattern": "func "}"#],
        None,
    );
    assert!(grep.status.success());
    assert!(
        stdout(&grep).contains("[~"),
        "every result ends with a size note"
    );
    let escape = relay(
        &[
            "tool",
            "read",
            "--repo",
            repo,
            r#"{"path": "../../../../../etc/passwd"}"#, // self-contained: test data
        ],
        None,
    );
    assert!(!escape.status.success());
    assert!(!stdout(&escape).contains("root:"));
}

fn llm_config(dir: &Path, base_url: &str) -> PathBuf {
    let path = dir.join("relay.toml");
    std::fs::write(
        &path,
        format!(
            "[llm.default]\nprovider = \"openai\"\nbase_url = \"{base_url}\"\nmodel = \"gpt-4o-mini\"\napi_key = \"sk-test-secret\"\nmax_retries = 0\n"
        ),
    )
    .unwrap();
    path
}

#[tokio::test]
async fn llm_ping_reports_usage_or_the_classified_error() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedLlm::start(vec![ScriptedReply::text("pong")]).await;
    let config = llm_config(dir.path(), &server.base_url());
    let config_path = config.clone();
    let output = tokio::task::spawn_blocking(move || {
        relay(&["llm", "ping", "--role", "explore"], Some(&config_path))
    })
    .await
    .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = stdout(&output);
    assert!(text.contains("gpt-4o-mini"), "{text}");
    assert_eq!(server.requests().len(), 1);

    let failing = ScriptedLlm::start(vec![ScriptedReply::error(401)]).await;
    let config = llm_config(dir.path(), &failing.base_url());
    let output = tokio::task::spawn_blocking(move || relay(&["llm", "ping"], Some(&config)))
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("error:"), "{stderr}");
    assert!(
        !stderr.contains("sk-test-secret"),
        "the API key leaked: {stderr}"
    );
}

fn tracker_config(dir: &Path, entries: &str) -> PathBuf {
    let path = dir.join("trackers.toml");
    std::fs::write(&path, entries).unwrap();
    path
}

fn tracker_entry(name: &str, provider: &str, base_url: &str, auth: &str, bot: &str) -> String {
    format!(
        "[[trackers]]\nname = \"{name}\"\nprovider = \"{provider}\"\nbase_url = \"{base_url}\"\n{auth}\nwebhook_secret = \"cli-hook-secret-0001\"\nbot_username = \"{bot}\"\n\n"
    )
}

async fn relay_async(args: Vec<String>, config: PathBuf) -> Output {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        relay(&args, Some(&config))
    })
    .await
    .unwrap()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[tokio::test]
async fn tracker_check_against_local_github_and_gitlab() {
    use relay_tracker::fake::{
        FakeGitHub, FakeGitLab, TEST_APP_PRIVATE_KEY_PEM, TEST_APP_PUBLIC_KEY_PEM,
    };

    let dir = tempfile::tempdir().unwrap();
    let gh = FakeGitHub::start().await;
    gh.add_token("ghp_cli_secret", "relay-bot");
    gh.seed_issue("octo-org/hello", 1, "Crash on save", "b");
    gh.seed_comment("octo-org/hello", 1, "alice", "me too");
    gh.enable_app(
        77,
        "relay-app",
        TEST_APP_PUBLIC_KEY_PEM,
        std::time::Duration::from_secs(3600),
    );
    gh.install("octo-org/hello", 9001);
    let key = dir.path().join("app.pem");
    std::fs::write(&key, TEST_APP_PRIVATE_KEY_PEM).unwrap();
    let gl = FakeGitLab::start_with_prefix("/gitlab").await;
    gl.add_token("glpat-cli-secret", "relay");
    gl.seed_issue(42, "group/project", 7, "Broken login", "d");

    let config = tracker_config(
        dir.path(),
        &[
            tracker_entry(
                "gh",
                "github",
                &gh.base_url(),
                "token = \"ghp_cli_secret\"",
                "relay-bot",
            ),
            tracker_entry(
                "gh-wrong",
                "github",
                &gh.base_url(),
                "token = \"ghp_wrong_secret\"",
                "relay-bot",
            ),
            tracker_entry(
                "gh-other-bot",
                "github",
                &gh.base_url(),
                "token = \"ghp_cli_secret\"",
                "someone-else",
            ),
            tracker_entry(
                "gh-app",
                "github",
                &gh.base_url(),
                &format!("app_id = 77\nprivate_key_path = \"{}\"", key.display()),
                "relay-app",
            ),
            tracker_entry(
                "gl",
                "gitlab",
                &gl.base_url(),
                "token = \"glpat-cli-secret\"",
                "relay",
            ),
        ]
        .concat(),
    );

    let ok = relay_async(
        args(&["tracker", "check", "gh", "--issue", "octo-org/hello#1"]),
        config.clone(),
    )
    .await;
    let text = stdout(&ok);
    assert!(
        ok.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(text.contains("authenticated as relay-bot"), "{text}");
    assert!(
        text.contains("bot_username \"relay-bot\" matches"),
        "{text}"
    );
    assert!(
        text.contains("can read octo-org/hello#1: \"Crash on save\" (open), 1 comments"),
        "{text}"
    );
    assert!(!text.contains("ghp_cli_secret"));

    let wrong = relay_async(args(&["tracker", "check", "gh-wrong"]), config.clone()).await;
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert!(!wrong.status.success());
    assert!(
        stderr.contains("unauthorized") && stderr.contains("[unauthorized, permanent]"),
        "{stderr}"
    );
    assert!(!stderr.contains("ghp_wrong_secret") && !stdout(&wrong).contains("ghp_wrong_secret"));

    let other = relay_async(args(&["tracker", "check", "gh-other-bot"]), config.clone()).await;
    assert!(!other.status.success());
    assert!(String::from_utf8_lossy(&other.stderr).contains("does not match \"relay-bot\""));

    let app = relay_async(
        args(&["tracker", "check", "gh-app", "--issue", "octo-org/hello#1"]),
        config.clone(),
    )
    .await;
    let text = stdout(&app);
    assert!(
        app.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&app.stderr)
    );
    assert!(
        text.contains("authenticated as GitHub App relay-app (comments appear as relay-app[bot])"),
        "{text}"
    );
    assert!(text.contains("can read octo-org/hello#1"), "{text}");
    assert_eq!(
        gh.token_exchanges(),
        vec![9001],
        "the installation was found and its token exchanged"
    );

    let lab = relay_async(
        args(&["tracker", "check", "gl", "--issue", "group/project#7"]),
        config.clone(),
    )
    .await;
    let text = stdout(&lab);
    assert!(
        lab.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&lab.stderr)
    );
    assert!(
        text.contains("authenticated as relay")
            && text.contains("can read group/project#7: \"Broken login\" (open), 0 comments"),
        "{text}"
    );

    let missing = relay_async(
        args(&["tracker", "check", "gl", "--issue", "group/project#99"]),
        config.clone(),
    )
    .await;
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(!missing.status.success());
    assert!(
        stderr.contains("cannot read issue group/project#99")
            && stderr.contains("[not_found, permanent]"),
        "{stderr}"
    );

    let unknown = relay_async(args(&["tracker", "check", "nope"]), config).await;
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no tracker named \"nope\""));
}
