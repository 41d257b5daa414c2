//! `relay explore` as a user runs it, against the scripted LLM server.

use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use serde_json::json;

use crate::support::{KEY, relay};

/// `relay explore` on `repo` with the scripted server's URL, the key from the environment, `extra`.
fn args(repo: &std::path::Path, base_url: &str, extra: &[&str]) -> Vec<String> {
    crate::support::args("explore", repo, base_url, extra, "Who calls start?")
}

#[tokio::test]
async fn explore_prints_the_answer_citations_and_figures() {
    let repo = crate::support::checkout();
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
        crate::support::config(dir.path()),
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
    assert_eq!(
        requests[0].headers["authorization"],
        format!("Bearer {KEY}")
    );
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
    let repo = crate::support::checkout();
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
        crate::support::config(dir.path()),
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
    let repo = crate::support::checkout();
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedLlm::start(vec![ScriptedReply::error(401)]).await;
    let output = relay(
        args(repo.path(), &server.base_url(), &[]),
        crate::support::config(dir.path()),
    )
    .await;
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("[authentication]"), "{stderr}");

    let unreachable = relay(
        args(repo.path(), "http://127.0.0.1:9/v1", &[]),
        crate::support::config(dir.path()),
    )
    .await;
    assert!(!unreachable.status.success());
    let stderr = String::from_utf8_lossy(&unreachable.stderr);
    assert!(stderr.contains("[network]"), "{stderr}");
}
