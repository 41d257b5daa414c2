//! The job's shape, counted through `Orchestrator::orchestrate` (real Postgres, the local GitHub
//! server, the scripted LLM over HTTP, a local git repository): one read of what is pending at the
//! job's start and one per cycle, one outbox drain at the start and one per cycle. The counts are
//! the orchestrator's own (`orchestrator::counts`), and its unit test checks that every read of
//! pending events and every drain goes through them; a second read or drain in a cycle fails here.

use relay_agent::agent_settings::AgentSettings;
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_core::{IssueId, JobId};
use relay_store::PgPool;
use relay_tracker::fake::FakeGitHub;
use relay_worker::jobs::RepoSpecs;
use relay_worker::jobs::orchestrator::counts::{Counts, counted};
use relay_worker::jobs::orchestrator::{JobRun, Orchestrator};
use serde_json::json;

use crate::support::origin;

const REPO: &str = "acme/app";
const NUMBER: i64 = 7;
const TOKEN: &str = "ghs_counts_secret_token";
const BOT: &str = "relay-bot";

/// Two cycles: a mention, then a reply that lands while the first cycle's planner thinks (the
/// first LLM call's usage row brings it in, after the job read what is pending).
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_job_reads_what_is_pending_and_drains_once_at_its_start_and_once_per_cycle(pool: PgPool) {
    let github = FakeGitHub::start().await;
    github.seed_issue(REPO, NUMBER, "Retries", "Make retries configurable.");
    github.set_permission(REPO, "alice", "admin");
    let issue: IssueId = sqlx::query_scalar(
        "INSERT INTO issues (tracker, project_id, project_path, number, title, body, state, author, url, updated_at)
         VALUES ('github', '42', $1, $2, 'Retries', 'Make retries configurable.', 'open', 'alice', 'http://x', now())
         RETURNING id",
    )
    .bind(REPO)
    .bind(NUMBER)
    .fetch_one(&pool)
    .await
    .unwrap();
    sqlx::raw_sql(
        "CREATE FUNCTION reply_during_cycle() RETURNS trigger AS $$
         BEGIN
             INSERT INTO deliveries (tracker, event_type, action, delivery_key, outcome, reason, payload, issue_id, actor, note_id)
             VALUES ('github', 'issue_comment', 'created', 'during', 'accepted', 'thread_reply', '{}', NEW.issue_id, 'alice', '999')
             ON CONFLICT DO NOTHING;
             RETURN NEW;
         END $$ LANGUAGE plpgsql;
         CREATE TRIGGER reply_during_cycle AFTER INSERT ON llm_usage
             FOR EACH ROW EXECUTE FUNCTION reply_during_cycle();",
    )
    .execute(&pool)
    .await
    .unwrap();
    let comment = |text: &str| {
        ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [{"type": "post_comment", "content": text}]}),
        )])
    };
    let llm = ScriptedLlm::start(vec![comment("Looking."), comment("Noted your reply.")]).await;
    let tracker = github.settings(TOKEN, BOT);
    let orchestrator = Orchestrator {
        trackers: relay_tracker::Trackers::from_settings(std::slice::from_ref(&tracker)).unwrap(),
        tracker_settings: vec![tracker.clone()],
        llm: toml::from_str(&format!(
            "[default]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\napi_key = \"sk-x\"\n",
            llm.base_url()
        ))
        .unwrap(),
        agent: AgentSettings {
            cycles_per_job: 3,
            summary_comment: false,
            ..AgentSettings::default()
        },
        tools: relay_tools::ToolLimits::default(),
        codegraph: None,
        roles: Default::default(),
        prices: Default::default(),
    };
    let origin = origin();
    let data = tempfile::tempdir().unwrap();
    let repos = relay_repo::RepoManager::new(relay_repo::RepoSettings {
        data_dir: data.path().to_path_buf(),
        ..relay_repo::RepoSettings::default()
    })
    .unwrap();
    let specs = RepoSpecs::new(std::slice::from_ref(&tracker)).with_local(
        "github",
        REPO,
        format!("file://{}", origin.path().display()).into(),
    );
    let mention = github.seed_comment(REPO, NUMBER, "alice", "@relay-bot please look");
    sqlx::query(
        "INSERT INTO deliveries (tracker, event_type, action, delivery_key, outcome, reason, payload, issue_id, actor, note_id)
         VALUES ('github', 'issue_comment', 'created', 'd1', 'accepted', 'mention', '{}', $1, 'alice', $2)",
    )
    .bind(issue)
    .bind(mention.to_string())
    .execute(&pool)
    .await
    .unwrap();

    let (result, counts) = counted(orchestrator.orchestrate(
        &pool,
        &repos,
        &specs,
        &JobRun::new(JobId(1_000), 3, issue),
    ))
    .await;
    let result = result.unwrap();
    assert_eq!(result["cycles"], 2, "{result}");
    let comments: Vec<String> = github
        .comments(REPO, NUMBER)
        .into_iter()
        .filter(|c| c.author == BOT)
        .map(|c| c.body)
        .collect();
    assert_eq!(comments.len(), 2, "{comments:?}");
    // Start: one read, one drain. Each cycle: one drain, then one read of what is pending for the
    // next (the third cycle finds nothing: no read, no drain, no LLM call).
    assert_eq!(
        counts,
        Counts {
            pending_reads: 3,
            drains: 3
        }
    );
    assert_eq!(llm.requests().len(), 2);
}

/// A job that only answers a command: one read, the start's drain, and the job's last drain that
/// sends the answer (the command only queued it).
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_command_is_queued_and_sent_by_the_jobs_last_drain(pool: PgPool) {
    let github = FakeGitHub::start().await;
    github.seed_issue(REPO, NUMBER, "Retries", "Make retries configurable.");
    github.set_permission(REPO, "alice", "admin");
    let issue: IssueId = sqlx::query_scalar(
        "INSERT INTO issues (tracker, project_id, project_path, number, title, body, state, author, url, updated_at)
         VALUES ('github', '42', $1, $2, 'Retries', 'Make retries configurable.', 'open', 'alice', 'http://x', now())
         RETURNING id",
    )
    .bind(REPO)
    .bind(NUMBER)
    .fetch_one(&pool)
    .await
    .unwrap();
    let llm = ScriptedLlm::start(Vec::new()).await;
    let tracker = github.settings(TOKEN, BOT);
    let orchestrator = Orchestrator {
        trackers: relay_tracker::Trackers::from_settings(std::slice::from_ref(&tracker)).unwrap(),
        tracker_settings: vec![tracker.clone()],
        llm: toml::from_str(&format!(
            "[default]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\napi_key = \"sk-x\"\n",
            llm.base_url()
        ))
        .unwrap(),
        agent: AgentSettings::default(),
        tools: relay_tools::ToolLimits::default(),
        codegraph: None,
        roles: Default::default(),
        prices: Default::default(),
    };
    let origin = origin();
    let data = tempfile::tempdir().unwrap();
    let repos = relay_repo::RepoManager::new(relay_repo::RepoSettings {
        data_dir: data.path().to_path_buf(),
        ..relay_repo::RepoSettings::default()
    })
    .unwrap();
    let specs = RepoSpecs::new(std::slice::from_ref(&tracker)).with_local(
        "github",
        REPO,
        format!("file://{}", origin.path().display()).into(),
    );
    let help = github.seed_comment(REPO, NUMBER, "alice", "@relay-bot help");
    // The note as the gateway's intake caches it (commands are read from the cached thread).
    sqlx::query(
        "INSERT INTO issue_notes (issue_id, note_id, author, body, created_at, updated_at)
         VALUES ($1, $2, 'alice', '@relay-bot help', now(), now())",
    )
    .bind(issue)
    .bind(help.to_string())
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO deliveries (tracker, event_type, action, delivery_key, outcome, reason, payload, issue_id, actor, note_id)
         VALUES ('github', 'issue_comment', 'created', 'd1', 'accepted', 'mention', '{}', $1, 'alice', $2)",
    )
    .bind(issue)
    .bind(help.to_string())
    .execute(&pool)
    .await
    .unwrap();

    let (result, counts) =
        counted(orchestrator.orchestrate(&pool, &repos, &specs, &JobRun::new(JobId(1), 3, issue)))
            .await;
    let result = result.unwrap();
    assert_eq!(result["commands"], json!(["help"]), "{result}");
    let comments: Vec<String> = github
        .comments(REPO, NUMBER)
        .into_iter()
        .filter(|c| c.author == BOT)
        .map(|c| c.body)
        .collect();
    assert_eq!(comments.len(), 1, "{comments:?}");
    assert_eq!(
        counts,
        Counts {
            pending_reads: 1,
            drains: 2
        }
    );
    assert!(llm.requests().is_empty());
}
