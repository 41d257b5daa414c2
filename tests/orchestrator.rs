//! A mention, end to end with the orchestrator: signed GitHub webhook → gateway → job → planner
//! explores → explorer greps, reports with a citation → planner submits `post_comment` +
//! `update_gaps` → one comment on the local GitHub server, the gap stored, the watermark raised.

use relay_core::{IssueId, JobId};
use std::sync::Arc;

use relay_agent::agent_settings::AgentSettings;
use relay_agent::llm::LlmSettings;
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_tracker::Trackers;
use relay_tracker::fake::FakeGitHub;
use relay_worker::jobs::orchestrator::Orchestrator;
use relay_worker::jobs::{JobDeps, RepoSpecs};
use relay_worker::{Outcome, Worker};
use serde_json::json;
use sqlx::PgPool;

use crate::helpers::*;
use crate::queue::settings;

const REPO: &str = "Codertocat/Hello-World";
pub const TOKEN: &str = "ghs_e2e_orchestrator_token";
pub const LLM_KEY: &str = "sk-e2e-llm-key";

/// Sends the signed mention through the gateway and drains the worker with the orchestrator;
/// returns the job id.
/// A mention accepted by the gateway, its job queued, and the worker that will run it.
pub struct Mention {
    pub job: i64,
    pub worker: Worker,
    // The upstream repository and the checkouts live as long as the job may run.
    _upstream: tempfile::TempDir,
    _data: tempfile::TempDir,
}

impl Mention {
    /// Runs the job to success.
    pub async fn run(&self) {
        assert_eq!(
            self.worker.drain().await.unwrap(),
            vec![Outcome::Succeeded {
                job_id: JobId(self.job)
            }]
        );
    }
}

async fn run_mention(pool: &PgPool, github: &FakeGitHub, llm: &ScriptedLlm) -> i64 {
    let mention = accept_mention(pool, github, llm).await;
    mention.run().await;
    mention.job
}

/// The signed webhook of a mention through the gateway, and a worker ready to run its job.
pub async fn accept_mention(pool: &PgPool, github: &FakeGitHub, llm: &ScriptedLlm) -> Mention {
    accept_mention_with(pool, github, llm, |_| {}).await
}

/// [`accept_mention`] with the webhook payload edited first.
pub async fn accept_mention_with(
    pool: &PgPool,
    github: &FakeGitHub,
    llm: &ScriptedLlm,
    edit: impl FnOnce(&mut serde_json::Value),
) -> Mention {
    // These tests count the planner's own comments; the summary has its own tests.
    let agent = AgentSettings {
        summary_comment: false,
        ..AgentSettings::default()
    };
    accept_mention_with_agent(pool, github, llm, agent, edit).await
}

/// [`accept_mention_with`] with the given `[agent]` settings.
pub async fn accept_mention_with_agent(
    pool: &PgPool,
    github: &FakeGitHub,
    llm: &ScriptedLlm,
    agent: AgentSettings,
    edit: impl FnOnce(&mut serde_json::Value),
) -> Mention {
    accept_mention_priced(pool, github, llm, agent, Default::default(), edit).await
}

/// [`accept_mention_with_agent`] with `[prices]` for the worker.
pub async fn accept_mention_priced(
    pool: &PgPool,
    github: &FakeGitHub,
    llm: &ScriptedLlm,
    agent: AgentSettings,
    prices: relay_core::prices::Prices,
    edit: impl FnOnce(&mut serde_json::Value),
) -> Mention {
    let pool = pool.clone();
    let upstream = tempfile::tempdir().unwrap();
    git(upstream.path(), &["init", "-q"]);
    std::fs::write(
        upstream.path().join("config.go"),
        "package main\n\ntype Config struct {\n\tRetries int\n}\n",
    )
    .unwrap();
    git(upstream.path(), &["add", "."]);
    git(upstream.path(), &["commit", "-qm", "config"]);

    let comment = github.seed_comment(
        REPO,
        1,
        "Codertocat",
        "@relay-bot can retries be configured?",
    );
    let tracker_settings = github.settings(TOKEN, "relay-bot");
    let llm_settings: LlmSettings = toml::from_str(&format!(
        "[default]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\napi_key = \"{LLM_KEY}\"\nmax_retries = 0\n",
        llm.base_url()
    ))
    .unwrap();
    let mut clients = Trackers::default();
    clients.insert(
        tracker_settings.name.clone(),
        relay_tracker::build(&tracker_settings).unwrap(),
    );

    // The webhook, signed, through the gateway.
    let app = relay_gateway::app(state(pool.clone()));
    let mut payload = fixture_json("webhooks/github/issue_comment.created.on-issue.json");
    payload["comment"]["id"] = json!(comment);
    payload["comment"]["body"] = json!("@relay-bot can retries be configured?");
    edit(&mut payload);
    let answer = call(
        &app,
        github_request(
            "issue_comment",
            "e2e-1",
            serde_json::to_vec(&payload).unwrap(),
        ),
    )
    .await;
    assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
    let job = answer.body["job"].as_i64().unwrap();

    let data = tempfile::tempdir().unwrap();
    let repos = relay_repo::RepoManager::new(relay_repo::RepoSettings {
        data_dir: data.path().to_path_buf(),
        ..Default::default()
    })
    .unwrap();
    let specs =
        RepoSpecs::new(&trackers()).with_local("github", REPO, upstream.path().to_path_buf());
    let registry = relay_worker::jobs::registry(&JobDeps {
        repos: Arc::new(repos),
        specs: Arc::new(specs),
        codegraph: None,
        orchestrator: Some(Arc::new(Orchestrator {
            trackers: clients,
            tracker_settings: vec![tracker_settings],
            llm: llm_settings,
            agent,
            tools: Default::default(),
            codegraph: None,
            roles: Default::default(),
            prices: Arc::new(prices),
        })),
    });
    let worker = Worker::new(pool.clone(), registry, settings());
    Mention {
        job,
        worker,
        _upstream: upstream,
        _data: data,
    }
}

pub fn happy_script() -> Vec<ScriptedReply> {
    vec![
        ScriptedReply::tool_calls(vec![(
            "explore",
            json!({"query": "where is the retry count defined?", "thoroughness": "quick"}),
        )]),
        ScriptedReply::tool_calls(vec![("grep", json!({"pattern": "Retries"}))]),
        ScriptedReply::tool_calls(vec![(
            "submit_report",
            json!({"answer": "Config.Retries in config.go", "confidence": "high",
                   "evidence": [{"path": "config.go", "start_line": 4, "end_line": 4, "quote": "Retries int"}]}),
        )]),
        ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [
                {"type": "post_comment", "content": "`Config.Retries` exists (config.go:4). Which calls should use it? (gap 1)"},
                {"type": "update_gaps", "add": [{"question": "Which calls should use the retry count?", "severity": "blocking", "respondent": "reporter"}]}
            ]}),
        )]),
    ]
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_mention_is_explored_asked_and_recorded(pool: PgPool) {
    let github = FakeGitHub::start().await;
    github.seed_issue(
        REPO,
        1,
        "Spelling error in the README file",
        "It is broken.",
    );
    github.set_permission(REPO, "Codertocat", "admin");
    let llm = ScriptedLlm::start(happy_script()).await;
    run_mention(&pool, &github, &llm).await;

    let bot: Vec<_> = github
        .comments(REPO, 1)
        .into_iter()
        .filter(|c| c.author == "relay-bot")
        .collect();
    assert_eq!(bot.len(), 1, "exactly one comment");
    assert!(bot[0].body.contains("Config.Retries"));
    assert_eq!(github.reactions().len(), 1, "the first-contact reaction");

    let issue_id: i64 = sqlx::query_scalar("SELECT id FROM issues")
        .fetch_one(&pool)
        .await
        .unwrap();
    let mut conn = pool.acquire().await.unwrap();
    let gaps = relay_store::gaps::list(&mut conn, IssueId(issue_id))
        .await
        .unwrap();
    assert_eq!(gaps.len(), 1);
    assert!(
        relay_store::issues::pending_events(&mut conn, IssueId(issue_id))
            .await
            .unwrap()
            .is_empty(),
        "the watermark was raised"
    );
    assert_eq!(llm.requests().len(), 4);
    for request in llm.requests() {
        let body = request.body.to_string();
        assert!(!body.contains(TOKEN) && !body.contains(LLM_KEY));
    }
    // The explore's successful calls were learned for this repository (one grounded run).
    let edges = relay_store::tool_graph::edges(&pool, &format!("github:{REPO}"))
        .await
        .unwrap();
    let edges: Vec<(&str, &str, i64, i64)> = edges
        .iter()
        .map(|e| {
            (
                e.from_tool.as_str(),
                e.to_tool.as_str(),
                e.count,
                e.successes,
            )
        })
        .collect();
    assert_eq!(edges, [("^", "grep", 1, 1)]);
    for request in github.requests() {
        assert!(!format!("{request:?}").contains(LLM_KEY));
    }
}

/// The job's explorers read the git history of the snapshot they explore (the repository's
/// mirror at the snapshot's commit): an explorer offered `history` asks it and gets the commit that
/// wrote the file.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_explorer_reads_the_history_of_its_snapshot(pool: PgPool) {
    let github = FakeGitHub::start().await;
    github.seed_issue(REPO, 1, "Retries", "Since when can retries be configured?");
    github.set_permission(REPO, "Codertocat", "admin");
    let mut script = happy_script();
    script[1] = ScriptedReply::tool_calls(vec![("history", json!({"path": "config.go"}))]);
    let llm = ScriptedLlm::start(script).await;
    run_mention(&pool, &github, &llm).await;

    let requests = llm.requests();
    let offered: Vec<&str> = requests[1].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["function"]["name"].as_str())
        .collect();
    assert!(offered.contains(&"history"), "{offered:?}");
    let answered = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .filter_map(|message| message["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        answered.starts_with("History of config.go at "),
        "{answered}"
    );
    assert!(
        answered.contains(" — config\nShowing 1 of 1 commit"),
        "{answered}"
    );
}

/// The job's run trace keeps the explorer's tool-argument names, not their values: the grep
/// pattern is the repository's data.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_trace_keeps_argument_names_by_default(pool: PgPool) {
    let payloads = traced_tool_calls(&pool, None).await;
    assert_eq!(payloads.len(), 2, "{payloads:?}");
    for payload in &payloads {
        assert_eq!(payload["args"], "{pattern}", "{payload}");
        assert_eq!(payload["arg_keys"], json!(["pattern"]), "{payload}");
    }
    assert!(!json!(payloads).to_string().contains("Retries"));
}

/// With `[trace] record_argument_values` the worker's trace keeps the values too.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_trace_keeps_argument_values_when_asked_to(pool: PgPool) {
    let recorded = relay_agent::trace::TraceSettings {
        record_argument_values: true,
    };
    let payloads = traced_tool_calls(&pool, Some(recorded)).await;
    assert_eq!(
        payloads[1]["args"], r#"{"pattern":"Retries"}"#,
        "{payloads:?}"
    );
}

/// The `tool_start`/`tool_call` payloads of a mention's job (the explorer greps `Retries`), run by
/// a worker with `trace` settings.
async fn traced_tool_calls(
    pool: &PgPool,
    trace: Option<relay_agent::trace::TraceSettings>,
) -> Vec<serde_json::Value> {
    let github = FakeGitHub::start().await;
    github.seed_issue(REPO, 1, "Retries", "Can retries be configured?");
    github.set_permission(REPO, "Codertocat", "admin");
    let llm = ScriptedLlm::start(happy_script()).await;
    let mut mention = accept_mention(pool, &github, &llm).await;
    if let Some(trace) = trace {
        mention.worker = mention.worker.with_trace_settings(&trace);
    }
    mention.run().await;
    sqlx::query_scalar(
        "SELECT payload FROM trace_events WHERE type IN ('tool_start', 'tool_call') ORDER BY run_id, seq",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_mention_by_someone_without_a_role_is_ignored_without_an_llm_call(pool: PgPool) {
    let github = FakeGitHub::start().await;
    github.seed_issue(
        REPO,
        1,
        "Spelling error in the README file",
        "It is broken.",
    );
    let llm = ScriptedLlm::start(happy_script()).await;
    let job = run_mention(&pool, &github, &llm).await;
    assert!(llm.requests().is_empty(), "no LLM call");
    assert!(
        github
            .comments(REPO, 1)
            .iter()
            .all(|c| c.author != "relay-bot")
    );
    let detail: serde_json::Value = sqlx::query_scalar(
        "SELECT detail FROM job_runs WHERE job_id = $1 AND outcome = 'succeeded'",
    )
    .bind(job)
    .fetch_one(&pool)
    .await
    .unwrap();
    let reason = detail["ignored"][0].as_str().unwrap();
    assert!(
        reason.contains("@Codertocat: author role none may not engage relay"),
        "{reason}"
    );
    assert_eq!(
        relay_store::issues::count_pending_events(&pool)
            .await
            .unwrap(),
        0
    );
}

/// On a private repository anyone who can comment may engage Relay (`[agent.engage_roles]
/// private = ["anyone"]`): the same mention by someone without a role is planned.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn on_a_private_repository_a_mention_without_a_role_engages(pool: PgPool) {
    let github = FakeGitHub::start().await;
    github.seed_issue(REPO, 1, "Retries", "Can retries be configured?");
    let llm = ScriptedLlm::start(happy_script()).await;
    let mention = accept_mention_with(&pool, &github, &llm, |payload| {
        payload["repository"]["private"] = json!(true);
        payload["repository"]["visibility"] = json!("private");
    })
    .await;
    mention.run().await;
    let visibility: Option<String> = sqlx::query_scalar("SELECT project_visibility FROM issues")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(visibility.as_deref(), Some("private"));
    assert_eq!(llm.requests().len(), 4, "planned and explored");
    let bot = github
        .comments(REPO, 1)
        .into_iter()
        .filter(|c| c.author == "relay-bot")
        .count();
    assert_eq!(bot, 1);
}
