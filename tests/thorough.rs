//! A mention whose planner asks a thorough question, end to end: the planner's `explore` with
//! `thoroughness: thorough` runs thorough mode (intent, one stage, critic), the planner gets the
//! integrated answer with its verified citation, and the issue's traversal state is stored for the
//! next job.

use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_tracker::fake::FakeGitHub;
use serde_json::json;
use sqlx::PgPool;

use crate::orchestrator::{LLM_KEY, TOKEN, accept_mention};

const REPO: &str = "Codertocat/Hello-World";

fn script() -> Vec<ScriptedReply> {
    vec![
        ScriptedReply::tool_calls(vec![(
            "explore",
            json!({"query": "how is the retry count configured, end to end?", "thoroughness": "thorough"}),
        )]),
        ScriptedReply::json(json!({
            "primary_intent": "find the retry setting", "confidence": 0.8,
            "goals": [{"id": "g1", "description": "where the retry count is defined", "priority": 1}]
        })),
        ScriptedReply::json(json!({
            "target_goals": ["g1"], "rationale": "grep then read", "feasibility": 0.8,
            "steps": [{"tool": "grep", "arguments": {"pattern": "Retries"}},
                      {"tool": "read", "arguments": {"path": "config.go"}}]
        })),
        ScriptedReply::json(json!({
            "evidence": [{"claim": "Config.Retries holds the retry count.", "goals": ["g1"],
                          "citations": [{"path": "config.go", "start_line": 4, "end_line": 4, "quote": "Retries int"}]}]
        })),
        ScriptedReply::json(json!({
            "verdict": "APPROVED", "goal_status": [{"id": "g1", "status": "satisfied"}]
        })),
        ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [
                {"type": "post_comment", "content": "`Config.Retries` (config.go:4) holds it. Which calls should use it? (gap 1)"},
                {"type": "update_gaps", "add": [{"question": "Which calls should use the retry count?", "severity": "blocking", "respondent": "reporter"}]}
            ]}),
        )]),
    ]
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_thorough_explore_answers_the_planner_and_its_state_outlives_the_job(pool: PgPool) {
    let github = FakeGitHub::start().await;
    github.seed_issue(REPO, 1, "Retries", "Can retries be configured?");
    github.set_permission(REPO, "Codertocat", "admin");
    let llm = ScriptedLlm::start(script()).await;
    accept_mention(&pool, &github, &llm).await.run().await;

    let requests = llm.requests();
    assert_eq!(requests.len(), 6, "planner, 4 thorough stages, planner");
    for request in &requests {
        let body = request.body.to_string();
        assert!(
            !body.contains(TOKEN) && !body.contains(LLM_KEY),
            "no secret reaches a prompt"
        );
    }
    let stages: Vec<&str> = requests[1..5]
        .iter()
        .map(|r| {
            r.body["response_format"]["json_schema"]["name"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(
        stages,
        [
            "thorough_intent",
            "thorough_navigator",
            "thorough_synthesizer",
            "thorough_critic"
        ]
    );
    // The planner's explore result is the integrated answer, its claim with the verified citation.
    let result = requests[5].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        result.contains("Config.Retries holds the retry count. [config.go:4]"),
        "{result}"
    );

    let bot: Vec<_> = github
        .comments(REPO, 1)
        .into_iter()
        .filter(|c| c.author == "relay-bot")
        .collect();
    assert_eq!(bot.len(), 1);

    let (state, commit): (serde_json::Value, String) =
        sqlx::query_as("SELECT state, commit_sha FROM traversal_states")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(state["files"], json!(["config.go"]));
    assert_eq!(state["snippets"][0]["path"], "config.go");
    assert_eq!(commit.len(), 40, "the explored commit: {commit}");
}
