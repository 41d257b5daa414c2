//! Tokens of one planning cycle on the scripted happy path (explore, then `post_comment` +
//! `update_gaps`), split into injected context, tool definitions and tool results (estimates,
//! ~4 characters per token), against the sample issue of the ContextBuilder snapshot test.
//!
//! `cargo run -p relay-agent --example planner_tokens --features test-support`

use std::sync::Arc;

use relay_agent::context::{
    ContextBuilder, IssueContext, OpenGapView, ThreadNoteView, TriggerView,
};
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::llm::{LlmClient, LlmSettings, Role};
use relay_agent::planner::{
    BatchValidator, ExploreFailure, ExploreOutcome, ExploreRequest, Explorer, Planner,
    PlannerLimits, Verdict,
};
use relay_core::action::{Respondent, Severity};
use relay_core::{ActionBatch, Citation};
use serde_json::json;

struct Explore;

#[async_trait::async_trait]
impl Explorer for Explore {
    async fn explore(&self, _request: ExploreRequest) -> Result<ExploreOutcome, ExploreFailure> {
        Ok(ExploreOutcome {
            answer:
                "Retries sleep a fixed 100 ms in client.go; every upstream call goes through it."
                    .into(),
            evidence: vec![Citation {
                path: "client.go".into(),
                start_line: 40,
                end_line: 52,
                quote: None,
            }],
            confidence: "high".into(),
            ..ExploreOutcome::default()
        })
    }
}

struct Accept;

#[async_trait::async_trait]
impl BatchValidator for Accept {
    async fn validate(&self, _batch: &ActionBatch) -> Verdict {
        Verdict::Accepted
    }
}

#[tokio::main]
async fn main() {
    let server = ScriptedLlm::start(vec![
        ScriptedReply::tool_calls(vec![(
            "explore",
            json!({"query": "how do retries wait?", "thoroughness": "quick"}),
        )]),
        ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [
                {"type": "post_comment", "content": "Retries sleep a fixed 100 ms (client.go:40-52). Gap 1: which calls?"},
                {"type": "update_gaps", "add": [{"question": "Which calls?", "severity": "blocking", "respondent": "reporter"}]}
            ]}),
        )]),
    ])
    .await;
    let settings: LlmSettings = toml::from_str(&format!(
        "[default]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\napi_key = \"k\"\n",
        server.base_url()
    ))
    .unwrap();
    let planner = Planner::new(
        LlmClient::from_settings(&settings, Role::Planner).unwrap(),
        Arc::new(Explore),
        Arc::new(Accept),
        PlannerLimits::default(),
    );
    let issue = IssueContext {
        title: "Retries should back off".into(),
        body: "When the upstream is down we retry in a tight loop. Can we back off?".into(),
        reporter: Some("alice".into()),
        open_gaps: vec![OpenGapView {
            number: 1,
            question: "Should the backoff be capped?".into(),
            severity: Severity::Medium,
            respondent: Respondent::Assignee,
            evidence: None,
        }],
        thread: vec![ThreadNoteView {
            note_id: "101".into(),
            discussion_id: None,
            author: "alice".into(),
            author_role: Some("member".into()),
            by_bot: false,
            body: "@relay please look at this".into(),
            internal: false,
            created_at: None,
        }],
        triggers: vec![TriggerView {
            kind: "mention".into(),
            actor: "alice".into(),
            note_id: Some("101".into()),
        }],
        ..IssueContext::default()
    };
    let context = ContextBuilder::default().build(&issue);
    let outcome = planner.plan(&context).await;
    let requests = server.requests();
    let sent: usize = requests.iter().map(|r| r.body.to_string().len()).sum();
    let split = outcome.split;
    let turns = outcome.iterations as usize;
    println!("turns: {turns}");
    println!(
        "per request: context (system prompt + injected) ~{} tokens, tool definitions ~{} tokens",
        split.context, split.tool_definitions
    );
    println!(
        "cycle total: context ~{} tokens, tool definitions ~{} tokens, tool results ~{} tokens",
        split.context * turns,
        split.tool_definitions * turns,
        split.tool_results
    );
    println!(
        "request bodies sent: {sent} bytes over {} requests",
        requests.len()
    );
}
