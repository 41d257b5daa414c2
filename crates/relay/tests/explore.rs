//! `relay explore` as a user runs it, against the scripted LLM server.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use serde_json::json;

async fn relay(args: Vec<String>, config: PathBuf) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_relay"))
            .arg("--config")
            .arg(config)
            .args(args)
            .env_remove("DATABASE_URL")
            .env("RUST_LOG", "error")
            .env("RELAY_TEST_EXPLORE_KEY", "sk-from-env")
            .output()
            .expect("relay runs")
    })
    .await
    .unwrap()
}

fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("go.mod"), "module example.com/app\n").unwrap();
    std::fs::write(
        dir.path().join("app.go"),
        "package app\n\n// Run starts the app.\nfunc Run() error {\n\treturn start()\n}\n\nfunc start() error {\n\treturn nil\n}\n",
    )
    .unwrap();
    dir
}

/// `[llm.default]` points nowhere useful: the flags must override it.
fn config(dir: &Path) -> PathBuf {
    let path = dir.join("relay.toml");
    std::fs::write(
        &path,
        "[llm.default]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"default-model\"\napi_key = \"sk-config\"\nmax_retries = 0\n\n[llm.explore]\nmodel = \"explore-model\"\n",
    )
    .unwrap();
    path
}

fn args(repo: &Path, base_url: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "explore".into(),
        "--repo".into(),
        repo.display().to_string(),
        "--base-url".into(),
        base_url.into(),
        "--api-key-env".into(),
        "RELAY_TEST_EXPLORE_KEY".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("Who calls start?".into());
    args
}

#[tokio::test]
async fn explore_prints_the_answer_citations_and_figures() {
    let repo = checkout();
    let dir = tempfile::tempdir().unwrap();
    let submit = ScriptedReply::tool_calls(vec![(
        "submit_report",
        json!({
            "answer": "start is called by Run (app.go:5).",
            "evidence": [{"path": "app.go", "start_line": 4, "end_line": 6, "quote": "return start()"},
                         {"path": "nope.go", "start_line": 1, "end_line": 1}],
            "confidence": "high",
            "unanswered": []
        }),
    )]);
    // `nope.go` does not exist: the agent is told once, submits again, and it is dropped.
    let server = ScriptedLlm::start(vec![
        ScriptedReply::tool_calls(vec![(
            "codegraph",
            json!({"operation": "search", "name": "start"}),
        )]),
        submit.clone(),
        submit,
    ])
    .await;
    let output = relay(
        args(repo.path(), &server.base_url(), &[]),
        config(dir.path()),
    )
    .await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("start is called by Run"), "{stdout}");
    assert!(stdout.contains("app.go:4-6"), "{stdout}");
    assert!(!stdout.contains("nope.go"), "{stdout}");
    assert!(stdout.contains("citations dropped: 1"), "{stdout}");
    assert!(stdout.contains("iterations: 3"), "{stdout}");
    assert!(stdout.contains("tokens in/out: 30/15"), "{stdout}");
    assert!(stdout.contains("stopped: submitted"), "{stdout}");
    let requests = server.requests();
    assert_eq!(
        requests[0].body["model"], "explore-model",
        "[llm.explore] over [llm.default]"
    );
    assert_eq!(requests[0].headers["authorization"], "Bearer sk-from-env");
    let result = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        result.contains("app.go:8"),
        "codegraph answered from the in-memory graph: {result}"
    );
}

#[tokio::test]
async fn explore_json_and_model_override() {
    let repo = checkout();
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedLlm::start(vec![ScriptedReply::tool_calls(vec![(
        "submit_report",
        json!({"answer": "Run calls start.", "evidence": [{"path": "app.go", "start_line": 5, "end_line": 5}], "confidence": "medium"}),
    )])])
    .await;
    let output = relay(
        args(
            repo.path(),
            &server.base_url(),
            &[
                "--format",
                "json",
                "--model",
                "flag-model",
                "--thoroughness",
                "medium",
            ],
        ),
        config(dir.path()),
    )
    .await;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["stop"], "submitted");
    assert_eq!(report["evidence"][0]["path"], "app.go");
    assert_eq!(report["confidence"], "medium");
    assert_eq!(server.requests()[0].body["model"], "flag-model");
}

#[tokio::test]
async fn explore_exits_non_zero_with_the_classified_error() {
    let repo = checkout();
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedLlm::start(vec![ScriptedReply::error(401)]).await;
    let output = relay(
        args(repo.path(), &server.base_url(), &[]),
        config(dir.path()),
    )
    .await;
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("[authentication]"), "{stderr}");

    let unreachable = relay(
        args(repo.path(), "http://127.0.0.1:9/v1", &[]),
        config(dir.path()),
    )
    .await;
    assert!(!unreachable.status.success());
    let stderr = String::from_utf8_lossy(&unreachable.stderr);
    assert!(stderr.contains("[network]"), "{stderr}");
}
