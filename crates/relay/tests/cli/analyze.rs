//! `relay analyze` as a user runs it, against the scripted LLM server: the integrated answer, the
//! goals, the stages and the figures; `--format json` for the whole report; a refused key is a
//! non-zero exit with the classified error.

use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use serde_json::json;

use crate::support::{KEY, relay};

/// `relay analyze` on `repo` with the scripted server's URL, the key from the environment, `extra`.
fn args(repo: &std::path::Path, base_url: &str, extra: &[&str]) -> Vec<String> {
    crate::support::args(
        "analyze",
        repo,
        base_url,
        extra,
        "How does Run reach start, and can it fail?",
    )
}

fn script() -> Vec<ScriptedReply> {
    vec![
        ScriptedReply::json(json!({
            "primary_intent": "trace Run to start", "confidence": 0.9,
            "goals": [{"id": "g1", "description": "how Run reaches start", "priority": 1},
                      {"id": "g2", "description": "how start can fail", "priority": 2}]
        })),
        ScriptedReply::json(json!({
            "target_goals": ["g1", "g2"], "rationale": "read it", "feasibility": 0.9,
            "steps": [{"tool": "codegraph", "arguments": {"operation": "callers", "qname": "example.com/app.start"}},
                      {"tool": "read", "arguments": {"path": "app.go"}}]
        })),
        ScriptedReply::json(json!({
            "evidence": [{"claim": "Run calls start directly.", "goals": ["g1"],
                          "citations": [{"path": "app.go", "start_line": 5, "end_line": 5, "quote": "return start()"}]},
                         {"claim": "start retries three times.", "goals": ["g2"],
                          "citations": [{"path": "app.go", "start_line": 9, "end_line": 9, "quote": "retry(3)"}]}]
        })),
        ScriptedReply::json(json!({
            "verdict": "APPROVED",
            "goal_status": [{"id": "g1", "status": "satisfied"}, {"id": "g2", "status": "satisfied"}]
        })),
        // g2's "satisfied" had no verified claim behind it, so a second stage plans for it.
        ScriptedReply::json(json!({
            "target_goals": ["g2"], "rationale": "nothing left to read", "feasibility": 0.2, "steps": []
        })),
        ScriptedReply::json(json!({
            "verdict": "APPROVED",
            "goal_status": [{"id": "g2", "status": "blocked", "reason": "start cannot fail: it returns nil"}]
        })),
    ]
}

#[tokio::test]
async fn analyze_prints_the_verified_answer_goals_stages_and_figures() {
    let repo = crate::support::checkout();
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedLlm::start(script()).await;
    let output = relay(
        args(repo.path(), &server.base_url(), &[]),
        crate::support::config(dir.path()),
    )
    .await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with("- Run calls start directly. [app.go:5]\n"),
        "{stdout}"
    );
    // The invented claim's quote is not in the file: never stated, and g2 is not satisfied.
    assert!(!stdout.contains("retries three times"), "{stdout}");
    assert!(
        stdout.contains(
            "Not answered:\n- how start can fail (blocked: start cannot fail: it returns nil)"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("  g1   satisfied how Run reaches start"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "  1.0  2 steps (2 ok) · 1 verified claims, 1 dropped · APPROVED → next_stage"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("  2.0  0 steps (0 ok) · 0 verified claims, 0 dropped · APPROVED → integrate: goals_done"), "{stdout}");
    assert!(
        stdout.contains("ended: goals_done · llm calls: 6/10"),
        "{stdout}"
    );
    let requests = server.requests();
    assert_eq!(requests[0].body["model"], "explore-model");
    assert_eq!(
        requests[0].headers["authorization"],
        format!("Bearer {KEY}")
    );
    let synthesizer = requests[2].body["messages"][1]["content"].as_str().unwrap();
    assert!(
        synthesizer.contains("example.com/app.Run"),
        "the code graph answered: {synthesizer}"
    );
}

#[tokio::test]
async fn analyze_json_is_the_whole_report_and_a_refused_key_fails() {
    let repo = crate::support::checkout();
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedLlm::start(script()).await;
    let output = relay(
        args(repo.path(), &server.base_url(), &["--format", "json"]),
        crate::support::config(dir.path()),
    )
    .await;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        report["answer"]["claims"][0]["citations"][0]["path"],
        "app.go"
    );
    assert_eq!(
        report["answer"]["claims"][0]["seen_in"][0],
        json!({"stage": 1, "attempt": 0, "step": 0})
    );
    assert_eq!(report["stages"][0]["steps"][1]["status"], "ok");
    assert_eq!(report["goals"][1]["status"], "blocked");
    assert_eq!(report["llm_calls"], 6);
    assert_eq!(report["stages"][0]["route"], "next_stage");

    let server = ScriptedLlm::start(vec![ScriptedReply::error(401)]).await;
    let output = relay(
        args(repo.path(), &server.base_url(), &[]),
        crate::support::config(dir.path()),
    )
    .await;
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("[authentication]"), "{stderr}");
}
