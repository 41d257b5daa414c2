//! `relay eval` as a user runs it: the shipped suite over this repository, against the scripted
//! LLM server. The transcript searches the graph, then greps (the graph indexes no Rust)
//! and cites the suite's lines, except on `usages`, where it cites only the definition and misses
//! a fact, and on `history`, where it asks the git history of the cited line: the `usages` row
//! scores below 1, every other row 1. The table is printed (`--nocapture`).

use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use serde_json::{Value, json};

const REPO_ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn transcript(suite: &Value) -> Vec<ScriptedReply> {
    let mut script = Vec::new();
    for question in suite["question"].as_array().unwrap() {
        let id = question["id"].as_str().unwrap();
        let cites: Vec<&Value> = question["cite"].as_array().unwrap().iter().collect();
        let first = cites[0]["contains"].as_str().unwrap();
        let word = first
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .rfind(|w| w.len() > 3)
            .unwrap_or(first);
        if id == "history" {
            // "Why, and since when?": the history of the cited line, which `relay eval` offers
            // on this repository (a git checkout).
            let line = cites[0]["line"].clone();
            script.push(ScriptedReply::tool_calls(vec![(
                "history",
                json!({"path": cites[0]["path"], "start_line": line, "end_line": line}),
            )]));
        } else {
            script.push(ScriptedReply::tool_calls(vec![(
                "codegraph",
                json!({"operation": "search", "name": word}),
            )]));
            script.push(ScriptedReply::tool_calls(vec![(
                "grep",
                json!({"pattern": word}),
            )]));
        }
        let (cited, facts): (Vec<&Value>, Vec<&Value>) = if id == "usages" {
            (cites[..1].to_vec(), Vec::new())
        } else {
            (
                cites.clone(),
                question["facts"].as_array().unwrap().iter().collect(),
            )
        };
        let evidence: Vec<Value> = cited
            .iter()
            .map(|c| json!({"path": c["path"], "start_line": c["line"], "end_line": c["line"]}))
            .collect();
        let facts: Vec<&str> = facts.iter().filter_map(|f| f.as_str()).collect();
        script.push(ScriptedReply::tool_calls(vec![(
            "submit_report",
            json!({"answer": format!("Found it: {}.", facts.join(", ")), "evidence": evidence,
                   "confidence": "high", "unanswered": []}),
        )]));
    }
    script
}

#[tokio::test]
async fn eval_scores_the_shipped_suite_on_this_repository() {
    let suite_path = format!("{REPO_ROOT}/eval/relay.toml");
    let suite: Value = toml::from_str(&std::fs::read_to_string(&suite_path).unwrap()).unwrap();
    let server = ScriptedLlm::start(transcript(&suite)).await;
    let dir = tempfile::tempdir().unwrap();
    let args: Vec<String> = [
        "eval",
        "--repo",
        REPO_ROOT,
        "--suite",
        &suite_path,
        "--base-url",
        &server.base_url(),
        "--api-key-env",
        crate::support::KEY_ENV,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let output = crate::support::relay(args, crate::support::config(dir.path())).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    println!("{stdout}");
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with("question"))
        .collect();
    assert_eq!(
        rows.len(),
        8,
        "six questions, the history question and the suite: {stdout}"
    );
    for row in &rows[..7] {
        let score: f64 = row.split_whitespace().nth(1).unwrap().parse().unwrap();
        if row.starts_with("usages") {
            assert!(score < 1.0, "{row}");
        } else {
            assert_eq!(score, 1.0, "{row}");
        }
    }
    // Relay is Rust, which the graph does not index: its searches find nothing and the questions
    // fall back to grep (a name the repository's Go or Python fixtures also define is found).
    assert!(stdout.matches("fell back to grep").count() >= 5, "{stdout}");
    let lookup = stdout.split("search-lookup").nth(1).unwrap();
    assert!(
        lookup.lines().nth(1).unwrap().contains("fell back to grep"),
        "{stdout}"
    );
    let history = rows[6];
    assert!(
        history.starts_with("history ") && history.contains("2/2"),
        "{stdout}"
    );
    assert!(stdout.contains("asked the history"), "{stdout}");
    assert_eq!(server.remaining(), 0);
}
