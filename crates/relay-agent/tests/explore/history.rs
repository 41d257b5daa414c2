//! The `history` tool in an explore: offered only over a checkout with git history, told about in
//! the prompt, answering "since when?" with the commits of a line range, and traced like any tool.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use relay_agent::explore::{ExploreAgent, ExploreConfig, ExploreRequest, StopReason, Thoroughness};
use relay_agent::llm::scripted::ScriptedLlm;
use relay_agent::toolbox::Toolbox;
use relay_agent::trace::{MemoryTraceSink, TraceKind, Tracer};
use relay_tools::ToolLimits;
use serde_json::json;

use crate::support::*;

fn git(root: &Path, args: &[&str], day: i64, author: &str) {
    let date = format!("@{} +0000", day * 86_400);
    let output = Command::new("git")
        .args([
            "-c",
            &format!("user.name={author}"),
            "-c",
            "user.email=a@example.com",
        ])
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The explore checkout as a git repository: `Plan` once returned nil itself; on day 2 it began to
/// delegate to `helper`.
fn checkout_with_history() -> tempfile::TempDir {
    let repo = checkout();
    let root = repo.path();
    let plan = root.join("pkg/planner/plan.go");
    std::fs::write(
        &plan,
        PLAN_GO.replace("\treturn helper()\n}", "\treturn nil\n}"),
    )
    .unwrap();
    git(root, &["init", "--quiet", "--initial-branch=main"], 1, "x");
    git(root, &["add", "--all"], 1, "x");
    git(
        root,
        &["commit", "--quiet", "-m", "planner: add Plan"],
        1,
        "Ann",
    );
    std::fs::write(&plan, PLAN_GO).unwrap();
    git(
        root,
        &[
            "commit",
            "--quiet",
            "-am",
            "planner: Plan delegates to helper, so a step can be tested alone",
        ],
        2,
        "Bo",
    );
    repo
}

#[tokio::test]
async fn history_is_offered_only_with_git_history() {
    let plain = checkout();
    let toolbox = Toolbox::new(plain.path(), None, ToolLimits::default())
        .unwrap()
        .with_worktree_history();
    assert_eq!(toolbox.names(), ["grep", "read", "glob", "tree"]);
    let repo = checkout_with_history();
    let toolbox = Toolbox::new(repo.path(), None, ToolLimits::default())
        .unwrap()
        .with_worktree_history();
    assert_eq!(toolbox.names(), ["grep", "read", "glob", "tree", "history"]);
}

/// "Since when does Plan delegate?": read the code, ask the history of its lines, answer with the
/// commit. The request offers `history`, the prompt says when to use it, its answer reaches the
/// model, and the trace records the call like any other.
#[tokio::test]
async fn an_explore_answers_since_when_from_the_history_of_the_lines() {
    let repo = checkout_with_history();
    let server = ScriptedLlm::start(vec![
        call("read", json!({"path": "pkg/planner/plan.go"})),
        call("history", json!({"path": "pkg/planner/plan.go", "start_line": 8, "end_line": 8})),
        submit(
            "Plan has delegated to helper since 1970-01-03 (Bo: \"planner: Plan delegates to helper\").",
            json!([good_citation()]),
            "high",
        ),
    ])
    .await;
    let toolbox = Toolbox::new(repo.path(), None, ToolLimits::default())
        .unwrap()
        .with_worktree_history();
    let sink = MemoryTraceSink::new();
    let agent = ExploreAgent::new(client(&server), Arc::new(toolbox), ExploreConfig::default())
        .with_tracer(&Tracer::new(sink.clone()));
    let report = agent
        .explore(ExploreRequest::new(
            "Since when does Plan delegate to helper, and why?",
            Thoroughness::Quick,
        ))
        .await
        .unwrap();
    assert_eq!(report.stop, StopReason::Submitted);

    let requests = server.requests();
    assert!(tool_names(&requests[0]).contains(&"history".to_owned()));
    let system = messages(&requests[0])[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        system.contains("`history`") && system.contains("since"),
        "{system}"
    );
    let answer = tool_results(&requests[2]).pop().unwrap();
    assert!(
        answer.starts_with("Line 8 of pkg/planner/plan.go at "),
        "{answer}"
    );
    assert!(
        answer.contains(
            "1970-01-03 Bo — planner: Plan delegates to helper, so a step can be tested alone"
        ),
        "{answer}"
    );
    assert!(answer.contains("Showing 2 of 2 commits"), "{answer}");

    let tools: Vec<&str> = report.tool_calls.iter().map(|c| c.tool.as_str()).collect();
    assert_eq!(tools, ["read", "history"]);
    let traced: Vec<(TraceKind, String)> = sink
        .events()
        .iter()
        .filter(|e| matches!(e.kind, TraceKind::ToolStart | TraceKind::ToolCall))
        .map(|e| {
            (
                e.kind,
                e.payload["tool"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        traced,
        [
            (TraceKind::ToolStart, "read".to_owned()),
            (TraceKind::ToolCall, "read".to_owned()),
            (TraceKind::ToolStart, "history".to_owned()),
            (TraceKind::ToolCall, "history".to_owned()),
        ]
    );
}
