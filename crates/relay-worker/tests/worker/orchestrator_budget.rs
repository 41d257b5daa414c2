//! The per-issue cap across jobs (and a maintainer's `@bot budget` raise), through `Orchestrator::orchestrate`: real Postgres, the local
//! GitHub server, the scripted LLM over HTTP and a local git repository as the checkout.

use relay_core::{IssueId, JobId};

use relay_agent::agent_settings::AgentSettings;
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::llm::{LlmSettings, Role};
use relay_store::PgPool;
use relay_tracker::fake::FakeGitHub;
use relay_worker::jobs::RepoSpecs;
use relay_worker::jobs::orchestrator::{JobRun, Orchestrator};
use serde_json::json;

use crate::support::origin;

const REPO: &str = "acme/app";
const NUMBER: i64 = 7;
const TOKEN: &str = "ghs_budget_secret_token";
const BOT: &str = "relay-bot";
const BUDGET: u64 = 1_000;

async fn seed_issue(pool: &PgPool) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO issues (tracker, project_id, project_path, number, title, body, state, author, url, updated_at)
         VALUES ('github', '42', $1, $2, 'Retries', 'Make retries configurable.', 'open', 'alice', 'http://x', now())
         RETURNING id",
    )
    .bind(REPO)
    .bind(NUMBER)
    .fetch_one(pool)
    .await
    .unwrap()
}

async fn deliver(pool: &PgPool, issue: i64, key: &str, reason: &str, note_id: i64) {
    sqlx::query(
        "INSERT INTO deliveries (tracker, event_type, action, delivery_key, outcome, reason, payload, issue_id, actor, note_id)
         VALUES ('github', 'issue_comment', 'created', $1, 'accepted', $2, '{}', $3, 'alice', $4)",
    )
    .bind(key)
    .bind(reason)
    .bind(issue)
    .bind(note_id.to_string())
    .execute(pool)
    .await
    .unwrap();
}

async fn spend(pool: &PgPool, issue: i64, tokens: i64) {
    relay_store::llm_usage::insert(
        pool,
        &relay_store::llm_usage::NewLlmUsage {
            job_id: None,
            issue_id: Some(IssueId(issue)),
            role: Role::Planner.as_str(),
            provider: "openai",
            model: "m",
            prompt_tokens: tokens,
            completion_tokens: 0,
            cached_tokens: 0,
            latency_ms: 1,
            attempts: 1,
            outcome: "ok",
            error_kind: None,
            estimated: false,
        },
    )
    .await
    .unwrap();
}

fn bot_comments(github: &FakeGitHub) -> Vec<String> {
    github
        .comments(REPO, NUMBER)
        .into_iter()
        .filter(|c| c.author == BOT)
        .map(|c| c.body)
        .collect()
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn past_the_budget_one_note_then_silence_until_a_maintainer_raises_it(pool: PgPool) {
    let github = FakeGitHub::start().await;
    github.seed_issue(REPO, NUMBER, "Retries", "Make retries configurable.");
    github.set_permission(REPO, "alice", "admin");
    let issue = seed_issue(&pool).await;
    let llm = ScriptedLlm::start(vec![ScriptedReply::tool_calls(vec![(
        "submit_actions",
        json!({"actions": [{"type": "post_comment", "content": "Retries live in config.go:4."}]}),
    )])])
    .await;
    let tracker = github.settings(TOKEN, BOT);
    let llm_settings: LlmSettings = toml::from_str(&format!(
        "[default]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\napi_key = \"sk-x\"\n",
        llm.base_url()
    ))
    .unwrap();
    let orchestrator = Orchestrator {
        trackers: relay_tracker::Trackers::from_settings(std::slice::from_ref(&tracker)).unwrap(),
        tracker_settings: vec![tracker.clone()],
        llm: llm_settings,
        agent: AgentSettings {
            issue_token_budget: BUDGET,
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

    // Earlier jobs spent past the budget: the mention gets one note, no LLM call.
    spend(&pool, issue, 1_200).await;
    let c1 = github.seed_comment(REPO, NUMBER, "alice", "@relay-bot please look");
    deliver(&pool, issue, "d1", "mention", c1).await;
    let first = orchestrator
        .orchestrate(
            &pool,
            &repos,
            &specs,
            &JobRun::new(relay_core::JobId(1), 3, relay_core::IssueId(issue)),
        )
        .await
        .unwrap();
    assert_eq!(first["budget_reached"]["epoch"], 1, "{first}");
    let notes = bot_comments(&github);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("1200 tokens spent; allowed: 1000 tokens"),
        "{}",
        notes[0]
    );
    assert!(notes[0].contains("`@relay-bot budget 200k`"));
    assert!(llm.requests().is_empty());

    // A reply that does not mention the bot, then a new mention: both consumed silently (no
    // second note, no LLM) — only a maintainer's raise continues.
    for (key, reason, text) in [
        ("d2", "thread_reply", "any news?"),
        ("d3", "mention", "@relay-bot go on"),
    ] {
        let comment = github.seed_comment(REPO, NUMBER, "alice", text);
        deliver(&pool, issue, key, reason, comment).await;
        let paused = orchestrator
            .orchestrate(
                &pool,
                &repos,
                &specs,
                &JobRun::new(relay_core::JobId(2), 3, relay_core::IssueId(issue)),
            )
            .await
            .unwrap();
        assert_eq!(paused["paused"], "issue budget", "{paused}");
    }
    assert_eq!(bot_comments(&github).len(), 1);
    assert!(llm.requests().is_empty());
    let mut conn = pool.acquire().await.unwrap();
    assert!(
        relay_store::issues::pending_events(&mut conn, IssueId(issue))
            .await
            .unwrap()
            .is_empty()
    );
    drop(conn);

    // A maintainer raises the cap once: the answer, then the cycle runs.
    let c4 = github.seed_comment(REPO, NUMBER, "alice", "@relay-bot budget 1k");
    cache_note(&pool, issue, c4, "alice", "@relay-bot budget 1k").await;
    deliver(&pool, issue, "d4", "mention", c4).await;
    let resumed = orchestrator
        .orchestrate(
            &pool,
            &repos,
            &specs,
            &JobRun::new(relay_core::JobId(3), 3, relay_core::IssueId(issue)),
        )
        .await
        .unwrap();
    assert_eq!(resumed["cycles"], 1, "{resumed}");
    assert_eq!(llm.requests().len(), 1);
    let comments = bot_comments(&github);
    assert_eq!(comments.len(), 3, "{comments:?}");
    assert!(
        comments[1].contains("Raised this issue's cap by 1000 tokens: it now allows 2000 tokens"),
        "{}",
        comments[1]
    );
    assert!(comments[2].contains("config.go:4"));

    // The cycle's own tokens were recorded against the issue (planner role).
    let spend_rows = relay_store::browse::spend_by_role(&pool, IssueId(issue))
        .await
        .unwrap();
    assert_eq!(spend_rows[0].role, "planner");
    assert_eq!(spend_rows[0].calls, 2);

    // Past the raised allowance the next mention gets note 2, exactly once.
    spend(&pool, issue, 1_000).await;
    let c5 = github.seed_comment(REPO, NUMBER, "alice", "@relay-bot and now?");
    deliver(&pool, issue, "d5", "mention", c5).await;
    let second = orchestrator
        .orchestrate(
            &pool,
            &repos,
            &specs,
            &JobRun::new(relay_core::JobId(4), 3, relay_core::IssueId(issue)),
        )
        .await
        .unwrap();
    assert_eq!(second["budget_reached"]["epoch"], 2, "{second}");
    let again = orchestrator
        .orchestrate(
            &pool,
            &repos,
            &specs,
            &JobRun::new(relay_core::JobId(4), 3, relay_core::IssueId(issue)),
        )
        .await
        .unwrap();
    assert_eq!(again["cycles"], 0, "{again}");
    let comments = bot_comments(&github);
    assert_eq!(comments.len(), 4, "{comments:?}");
    assert!(
        comments[3].contains("allowed: 2000 tokens"),
        "{}",
        comments[3]
    );
    assert_eq!(llm.requests().len(), 1);
}

/// The note as the gateway's intake caches it (commands are read from the cached thread).
async fn cache_note(pool: &PgPool, issue: i64, note_id: i64, author: &str, body: &str) {
    sqlx::query(
        "INSERT INTO issue_notes (issue_id, note_id, author, body, created_at, updated_at)
         VALUES ($1, $2, $3, $4, now(), now())",
    )
    .bind(issue)
    .bind(note_id.to_string())
    .bind(author)
    .bind(body)
    .execute(pool)
    .await
    .unwrap();
}

/// Events that arrive during the job's last allowed cycle get a follow-up job (one, joined).
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn events_left_after_the_last_cycle_get_one_follow_up_job(pool: PgPool) {
    let github = FakeGitHub::start().await;
    github.seed_issue(REPO, NUMBER, "Retries", "Make retries configurable.");
    github.set_permission(REPO, "alice", "admin");
    let issue = seed_issue(&pool).await;
    // A reply lands while the planner thinks: the first LLM call's usage row brings it in,
    // after the cycle loaded its events and before it raised the watermark.
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
            cycles_per_job: 1,
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
    let c1 = github.seed_comment(REPO, NUMBER, "alice", "@relay-bot please look");
    deliver(&pool, issue, "d1", "mention", c1).await;

    // The job id stands for a job row that is not in this test's table: far from the ids the
    // queue hands out, so the follow-up's outbox keys differ from this job's.
    let first = orchestrator
        .orchestrate(
            &pool,
            &repos,
            &specs,
            &JobRun::new(relay_core::JobId(1_000), 4, relay_core::IssueId(issue)),
        )
        .await
        .unwrap();
    assert_eq!(first["cycles"], 1, "{first}");
    let follow_up = first["follow_up_job"].as_i64().expect("a follow-up job");
    let queued: Vec<(i64, String, serde_json::Value, Option<String>, i32)> = sqlx::query_as(
        "SELECT id, kind, payload, concurrency_key, max_attempts FROM jobs WHERE status = 'queued'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        queued,
        [(
            follow_up,
            "process_issue".to_owned(),
            json!({ "issue_id": issue }),
            Some(format!("issue:{issue}")),
            4
        )]
    );

    // The follow-up handles the reply; nothing is left, so it queues no further job.
    let second = orchestrator
        .orchestrate(
            &pool,
            &repos,
            &specs,
            &JobRun::new(relay_core::JobId(follow_up), 4, relay_core::IssueId(issue)),
        )
        .await
        .unwrap();
    assert_eq!(second["cycles"], 1, "{second}");
    assert!(second["follow_up_job"].is_null(), "{second}");
    let bodies = bot_comments(&github);
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    let queued: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs WHERE status = 'queued'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(queued, 1, "only the one follow-up, never a second");
}

/// `[agent] daily_token_budget`: past today's spend of the tracker's issues, a mention is recorded
/// and its job held until midnight UTC (no LLM call); after the reset it is answered.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn past_the_daily_budget_issues_wait_for_the_reset(pool: PgPool) {
    let github = FakeGitHub::start().await;
    github.seed_issue(REPO, NUMBER, "Retries", "Make retries configurable.");
    github.set_permission(REPO, "alice", "admin");
    let issue = seed_issue(&pool).await;
    // Another issue of the same tracker spent most of today's budget; yesterday does not count.
    let other: i64 = sqlx::query_scalar(
        "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
         VALUES ('github', '42', $1, 8, 'Other', 'open', 'bob', 'http://y', now()) RETURNING id",
    )
    .bind(REPO)
    .fetch_one(&pool)
    .await
    .unwrap();
    spend(&pool, other, 50_000).await;
    sqlx::query("UPDATE llm_usage SET created_at = now() - interval '1 day'")
        .execute(&pool)
        .await
        .unwrap();
    spend(&pool, other, 600).await;
    let llm = ScriptedLlm::start(vec![ScriptedReply::tool_calls(vec![(
        "submit_actions",
        json!({"actions": [{"type": "post_comment", "content": "Retries live in config.go:4."}]}),
    )])])
    .await;
    let tracker = github.settings(TOKEN, BOT);
    let llm_settings: LlmSettings = toml::from_str(&format!(
        "[default]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\napi_key = \"sk-x\"\n",
        llm.base_url()
    ))
    .unwrap();
    let orchestrator = Orchestrator {
        trackers: relay_tracker::Trackers::from_settings(std::slice::from_ref(&tracker)).unwrap(),
        tracker_settings: vec![tracker.clone()],
        llm: llm_settings,
        agent: AgentSettings {
            daily_token_budget: 1_000,
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

    // 600 of 1,000 today: within.
    let within = relay_worker::jobs::orchestrator::gates::daily_budget::gate(
        &pool,
        "github",
        1_000,
        chrono::Utc::now(),
    )
    .await
    .unwrap();
    assert_eq!(
        within,
        relay_worker::jobs::orchestrator::gates::daily_budget::DailyGate::Within
    );

    // 1,100 today: the mention is recorded, its job held until midnight UTC, no LLM call.
    spend(&pool, other, 500).await;
    let c1 = github.seed_comment(REPO, NUMBER, "alice", "@relay-bot please look");
    deliver(&pool, issue, "d1", "mention", c1).await;
    let deferred = orchestrator
        .orchestrate(
            &pool,
            &repos,
            &specs,
            &JobRun::new(relay_core::JobId(1), 3, relay_core::IssueId(issue)),
        )
        .await
        .unwrap();
    assert_eq!(
        deferred["daily_budget_reached"]["spent"], 1_100,
        "{deferred}"
    );
    assert!(llm.requests().is_empty());
    assert!(bot_comments(&github).is_empty());
    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(
        relay_store::issues::pending_events(&mut conn, IssueId(issue))
            .await
            .unwrap()
            .len(),
        1,
        "the mention waits"
    );
    drop(conn);
    let job = deferred["deferred_job"].as_i64().unwrap();
    let row = relay_store::queue::get(&pool, JobId(job))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.status, "queued");
    let tomorrow = (chrono::Utc::now().date_naive() + chrono::Days::new(1))
        .and_hms_opt(0, 0, 0)
        .unwrap()
        .and_utc();
    assert_eq!(row.run_after, tomorrow);

    // The reset (today's spend becomes yesterday's): the held job answers the mention.
    sqlx::query("UPDATE llm_usage SET created_at = created_at - interval '1 day'")
        .execute(&pool)
        .await
        .unwrap();
    let answered = orchestrator
        .orchestrate(
            &pool,
            &repos,
            &specs,
            &JobRun::new(relay_core::JobId(job), 3, relay_core::IssueId(issue)),
        )
        .await
        .unwrap();
    assert_eq!(answered["cycles"], 1, "{answered}");
    assert_eq!(llm.requests().len(), 1);
    assert!(bot_comments(&github)[0].contains("config.go:4"));
}
