//! The scripted model of `scripts/eval-local-model.sh`: an OpenAI-compatible server (the scripted
//! LLM server) that answers a suite's questions, in suite order, with the suite's own answer: for a
//! quick or medium question one `submit_report` naming every expected fact and citing every
//! expected line (an expected file is cited at its first line), and no tool call; for a thorough
//! question the four stages of one pass (intent: one goal; navigator: a `read` of each cited file;
//! synthesizer: one claim per citation, the first naming every fact; critic: approved); for a
//! question that starts from an issue, the planner's one `submit_actions` (a finding citing every
//! expected line, a comment naming every fact). Run through `relay eval`, it is the harness's calibration row: files, lines and facts
//! at 1 (the scorer and the citation check agree with the suite), tool use at 0 wherever the
//! question expects tools (no tool was called) — so a real model's row reads against both ends.
//!
//! Run: `cargo run -p relay-agent --features test-support --example scripted_eval_server -- SUITE.toml REPO`
//! It prints its base URL (`http://127.0.0.1:PORT/v1`) on the first line and serves until killed.

use std::path::{Path, PathBuf};

use relay_agent::eval::{Question, Suite};
use relay_agent::explore::Thoroughness;
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use serde_json::{Value, json};

/// The question's citations: each expected line, then each expected file at its first line.
fn citations(question: &Question, repo: &Path) -> Vec<Value> {
    let lines = question.cite.iter().map(
        |c| json!({"path": c.path, "start_line": c.line, "end_line": c.line, "quote": c.contains}),
    );
    let files = question.files.iter().map(|file| {
        let text = std::fs::read_to_string(repo.join(file)).unwrap_or_default();
        let first = text.lines().next().unwrap_or_default().to_owned();
        json!({"path": file, "start_line": 1, "end_line": 1, "quote": first})
    });
    lines.chain(files).collect()
}

fn answer(question: &Question) -> String {
    format!("{}: {}.", question.id, question.facts.join(", "))
}

/// The suite's own answer to `question`, as the replies the explorer (or, for a question that
/// starts from an issue, the planner) asks for.
fn oracle(question: &Question, repo: &Path) -> Vec<ScriptedReply> {
    let evidence = citations(question, repo);
    if question.issue.is_some() {
        return vec![ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [
                {"type": "update_findings", "add": [{"synthesis": answer(question), "sources": evidence}]},
                {"type": "post_comment", "content": answer(question)}
            ]}),
        )])];
    }
    if question.mode != Thoroughness::Thorough {
        return vec![ScriptedReply::tool_calls(vec![(
            "submit_report",
            json!({"answer": answer(question), "evidence": evidence, "confidence": "high", "unanswered": []}),
        )])];
    }
    let reads: Vec<Value> = evidence
        .iter()
        .map(|c| json!({"tool": "read", "arguments": {"path": c["path"]}}))
        .collect();
    let claims: Vec<Value> = evidence
        .iter()
        .enumerate()
        .map(|(at, c)| {
            let text = if at == 0 {
                answer(question)
            } else {
                format!("See {}.", c["path"].as_str().unwrap_or_default())
            };
            json!({"claim": text, "goals": ["g1"], "citations": [c]})
        })
        .collect();
    vec![
        ScriptedReply::json(json!({
            "primary_intent": question.question,
            "goals": [{"id": "g1", "description": question.question, "priority": 1, "depends_on": []}],
            "constraints": [], "ambiguities": [], "confidence": 0.9
        })),
        ScriptedReply::json(json!({
            "target_goals": ["g1"], "steps": reads, "rationale": "read the cited files", "feasibility": 0.9
        })),
        ScriptedReply::json(json!({
            "entities": [], "flows": [], "open_questions": [], "contradictions": [], "evidence": claims
        })),
        ScriptedReply::json(json!({
            "verdict": "APPROVED", "goal_status": [{"id": "g1", "status": "satisfied"}],
            "blocking_issues": [], "goal_updates": []
        })),
    ]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let (Some(path), Some(repo)) = (
        std::env::args().nth(1).map(PathBuf::from),
        std::env::args().nth(2).map(PathBuf::from),
    ) else {
        eprintln!("usage: scripted_eval_server SUITE.toml REPO");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read the suite {}: {e}", path.display()));
    let suite: Suite =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{} is not a suite: {e}", path.display()));
    let server = ScriptedLlm::start(
        suite
            .questions
            .iter()
            .flat_map(|q| oracle(q, &repo))
            .collect(),
    )
    .await;
    println!("{}", server.base_url());
    // Serve until the script that started us kills us.
    std::future::pending::<()>().await;
}
