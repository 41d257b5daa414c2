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
            r#"{"path": "../../../../../etc/passwd"}"#,
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
