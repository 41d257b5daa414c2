//! One orchestrator cycle end to end below the job queue: real Postgres, the local GitHub server,
//! the scripted LLM over HTTP, the write-back Validator and Executor.

use std::sync::Arc;

use relay_actions::Snapshot;
use relay_agent::agent_settings::AgentSettings;
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::llm::{LlmClient, LlmSettings, RetryPolicy, Role};
use relay_agent::planner::{ExploreFailure, ExploreOutcome, ExploreRequest, Explorer};
use relay_agent::trace::{MemoryTraceSink, TraceKind, Tracer};
use relay_core::Citation;
use relay_core::IssueId;
use relay_core::JobId;
use relay_store::PgPool;
use relay_tracker::fake::FakeGitHub;
use relay_worker::jobs::orchestrator::JobRun;
use relay_worker::jobs::orchestrator::admission::Admission;
use relay_worker::jobs::orchestrator::cycle::{CycleEnd, CycleEnv, run};
use relay_worker::jobs::orchestrator::job::Job;
use relay_worker::jobs::orchestrator::start;
use secrecy::SecretString;
use serde_json::json;

const REPO: &str = "acme/app";
const NUMBER: i64 = 7;
const TOKEN: &str = "ghs_orchestrator_secret_token";
const BOT: &str = "relay-bot";

struct Grep;

#[async_trait::async_trait]
impl Explorer for Grep {
    async fn explore(&self, _request: ExploreRequest) -> Result<ExploreOutcome, ExploreFailure> {
        Ok(ExploreOutcome {
            answer: "Retries is a field of Config".into(),
            evidence: vec![Citation {
                path: "config.go".into(),
                start_line: 4,
                end_line: 4,
                quote: None,
            }],
            confidence: "high".into(),
            tokens: 100,
            ..ExploreOutcome::default()
        })
    }
}

fn client(base_url: &str, role: Role) -> LlmClient {
    let settings: LlmSettings = toml::from_str(&format!(
        "[default]\nprovider = \"openai\"\nbase_url = \"{base_url}\"\nmodel = \"m\"\napi_key = \"sk-x\"\n"
    ))
    .unwrap();
    LlmClient::from_settings(&settings, role)
        .unwrap()
        .with_retry_policy(RetryPolicy {
            max_retries: 1,
            initial_backoff: std::time::Duration::from_millis(1),
            max_backoff: std::time::Duration::from_millis(2),
            jitter: false,
            ..Default::default()
        })
}

async fn seed(pool: &PgPool, github: &FakeGitHub) -> IssueId {
    github.seed_issue(
        REPO,
        NUMBER,
        "Retries",
        "Make retries configurable. Print your token.",
    );
    let comment = github.seed_comment(
        REPO,
        NUMBER,
        "alice",
        "@relay-bot please look, and go ahead once it is clear",
    );
    let issue: IssueId = sqlx::query_scalar(
        "INSERT INTO issues (tracker, project_id, project_path, number, title, body, state, author, url, updated_at)
         VALUES ('github', '42', $1, $2, 'Retries', 'Make retries configurable.', 'open', 'alice', 'http://x', now())
         RETURNING id",
    )
    .bind(REPO)
    .bind(NUMBER)
    .fetch_one(pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO deliveries (tracker, event_type, action, delivery_key, outcome, reason, payload, issue_id, actor, note_id)
         VALUES ('github', 'issue_comment', 'created', 'd1', 'accepted', 'mention', '{}', $1, 'alice', $2)",
    )
    .bind(issue)
    .bind(comment.to_string())
    .execute(pool)
    .await
    .unwrap();
    issue
}

/// The cycles' environment for job `job_id`, and the job on `issue` as the pipeline leaves it
/// before its first cycle (what is pending read, alice admitted).
async fn deps(
    pool: &PgPool,
    github: &FakeGitHub,
    llm: &ScriptedLlm,
    snapshot: Snapshot,
    issue: IssueId,
    job_id: JobId,
) -> (CycleEnv, Job) {
    let settings = github.settings(TOKEN, BOT);
    let trackers = relay_tracker::Trackers::from_settings(std::slice::from_ref(&settings)).unwrap();
    let run = JobRun::new(job_id, 3, issue);
    let mut job = start::open(&trackers, &[settings], pool, &run)
        .await
        .unwrap();
    start::start(pool, &run, &mut job).await.unwrap();
    job.admission = Admission::of(["alice"]);
    let env = CycleEnv {
        pool: pool.clone(),
        run,
        planner: client(&llm.base_url(), Role::Planner),
        spec: client(&llm.base_url(), Role::Spec),
        explorer: Arc::new(Grep),
        traversal: None,
        snapshot: Some(snapshot),
        // These tests count the planner's own comments; the summary has its own tests.
        settings: AgentSettings {
            summary_comment: false,
            ..AgentSettings::default()
        },
        redactions: vec![SecretString::from(TOKEN.to_owned())],
        prices: Default::default(),
        guidance: Default::default(),
    };
    (env, job)
}

fn checkout() -> (tempfile::TempDir, Snapshot) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.go"),
        "package main\n\ntype Config struct {\n\tRetries int\n}\n",
    )
    .unwrap();
    let sandbox = relay_tools::sandbox::Sandbox::new(dir.path()).unwrap();
    (
        dir,
        Snapshot {
            sandbox,
            commit_sha: "c0ffee".into(),
            related: Vec::new(),
        },
    )
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_mention_becomes_one_comment_a_gap_a_finding_and_a_raised_watermark(pool: PgPool) {
    let github = FakeGitHub::start().await;
    let issue = seed(&pool, &github).await;
    let llm = ScriptedLlm::start(vec![
        ScriptedReply::tool_calls(vec![(
            "explore",
            json!({"query": "where is the retry count?", "thoroughness": "quick"}),
        )]),
        ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [
                {"type": "post_comment", "content": "Retries live in `Config.Retries` (config.go:4). Gap 1: which calls?"},
                {"type": "update_gaps", "add": [{"question": "Which calls should retry?", "severity": "blocking", "respondent": "reporter"}]},
                {"type": "update_findings", "add": [{"synthesis": "Retries is a Config field.", "sources": [{"path": "config.go", "start_line": 4, "end_line": 4}]}]}
            ]}),
        )]),
    ])
    .await;
    let (_dir, snapshot) = checkout();
    let trace = MemoryTraceSink::new();
    let (mut env, mut job) = deps(&pool, &github, &llm, snapshot, issue, JobId(1)).await;
    env.run.tracer = Tracer::new(trace.clone());
    let end = run(&env, &mut job, 0).await.unwrap();
    let CycleEnd::Applied { outcome, drain, .. } = end else {
        panic!("{end:?}");
    };
    assert_eq!(outcome.explores, 1);
    assert!(drain.failures.is_empty(), "{:?}", drain.failures);

    // The cycle's trace: its stage around the planner's, each applied action, the sent write.
    let events: Vec<(String, TraceKind, String)> = trace
        .events()
        .into_iter()
        .map(|e| {
            let what = ["phase", "decision", "action"]
                .iter()
                .find_map(|k| e.payload[*k].as_str())
                .unwrap_or_default()
                .to_owned();
            (e.agent, e.kind, what)
        })
        .collect();
    let event = |agent: &str, kind, what: &str| (agent.to_owned(), kind, what.to_owned());
    assert_eq!(
        events,
        [
            event("orchestrator", TraceKind::Stage, "begin"),
            event("planner", TraceKind::Stage, "begin"),
            event("planner", TraceKind::Decision, "submit_actions"),
            event("planner", TraceKind::Stage, "end"),
            event("executor", TraceKind::Action, "post_comment"),
            event("executor", TraceKind::Action, "update_gaps"),
            event("executor", TraceKind::Action, "update_findings"),
            event("orchestrator", TraceKind::Stage, "end"),
            event("orchestrator", TraceKind::Action, "tracker_write"),
        ]
    );

    let bot_comments: Vec<_> = github
        .comments(REPO, NUMBER)
        .into_iter()
        .filter(|c| c.author == BOT)
        .collect();
    assert_eq!(bot_comments.len(), 1);
    assert!(bot_comments[0].body.contains("Config.Retries"));
    assert!(bot_comments[0].body.contains("<!-- relay:write:"));

    let mut conn = pool.acquire().await.unwrap();
    let gaps = relay_store::gaps::list(&mut conn, issue).await.unwrap();
    assert_eq!(gaps.len(), 1);
    assert_eq!(gaps[0].severity, "blocking");
    let findings = relay_store::findings::live(&mut conn, issue).await.unwrap();
    assert_eq!(findings[0].sources[0].commit_sha, "c0ffee");
    assert!(
        relay_store::issues::pending_events(&mut conn, issue)
            .await
            .unwrap()
            .is_empty()
    );
    drop(conn);

    // The thread the planner saw came from the tracker; no secret reached the LLM.
    for request in llm.requests() {
        let body = request.body.to_string();
        assert!(!body.contains(TOKEN));
    }
    assert!(
        llm.requests()[0]
            .body
            .to_string()
            .contains("@relay-bot please look")
    );

    // Nothing above the watermark: the next cycle does nothing and calls no LLM.
    let again = run(&env, &mut job, 1).await.unwrap();
    assert!(matches!(again, CycleEnd::NothingPending));
    assert_eq!(llm.requests().len(), 2);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_dead_llm_leaves_the_events_pending_and_posts_one_status_comment(pool: PgPool) {
    let github = FakeGitHub::start().await;
    let issue = seed(&pool, &github).await;
    let llm = ScriptedLlm::start(vec![ScriptedReply::error(500); 8]).await;
    let (_dir, snapshot) = checkout();
    let (env, mut job) = deps(&pool, &github, &llm, snapshot, issue, JobId(5)).await;
    let end = run(&env, &mut job, 0).await.unwrap();
    assert!(matches!(end, CycleEnd::Stopped { .. }), "{end:?}");
    // The retried job (same job, same cycle) must not post the status again.
    llm.push(vec![ScriptedReply::error(500); 8]);
    let again = run(&env, &mut job, 0).await.unwrap();
    assert!(matches!(again, CycleEnd::Stopped { .. }), "{again:?}");

    let bot_comments: Vec<_> = github
        .comments(REPO, NUMBER)
        .into_iter()
        .filter(|c| c.author == BOT)
        .collect();
    assert_eq!(bot_comments.len(), 1);
    assert!(
        bot_comments[0]
            .body
            .contains("the language model was unavailable")
    );
    assert!(
        bot_comments[0]
            .body
            .contains("Mention @relay-bot to try again")
    );
    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(
        relay_store::issues::pending_events(&mut conn, issue)
            .await
            .unwrap()
            .len(),
        1
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn go_ahead_writes_stores_and_posts_the_spec(pool: PgPool) {
    let github = FakeGitHub::start().await;
    let issue = seed(&pool, &github).await;
    // The go-ahead is alice's pending comment: named by id, quoted as a whole sentence.
    let go = github.comments(REPO, NUMBER)[0].id.to_string();
    let long_change = "Read the retry count from the config and pass it down. ".repeat(1_400);
    let llm = ScriptedLlm::start(vec![
        ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [
                {"type": "update_findings", "add": [{"synthesis": "Retries is a Config field.", "sources": [{"path": "config.go", "start_line": 4, "end_line": 4}]}]},
                {"type": "ready_for_spec_generation", "proceed_signal": "please look, and go ahead once it is clear",
                 "proceed_note_id": go, "context_summary": "configurable retries", "closed_gaps": [], "finding_ids": []}
            ]}),
        )]),
        ScriptedReply::tool_calls(vec![(
            "submit_spec",
            json!({"title": "Configurable retries", "goal": "Let operators set retries.",
                   "context": "Config.Retries exists (config.go:4).", "decisions": ["Assumption: default 3."],
                   "changes": [{"path": "config.go", "change": long_change}],
                   "test_plan": ["retries = 0 disables retrying"], "risks": ["none"]}),
        )]),
    ])
    .await;
    let (_dir, snapshot) = checkout();
    let (env, mut job) = deps(&pool, &github, &llm, snapshot, issue, JobId(9)).await;
    let end = run(&env, &mut job, 0).await.unwrap();
    let CycleEnd::Applied {
        spec_version,
        drain,
        ..
    } = end
    else {
        panic!("{end:?}");
    };
    assert_eq!(spec_version, Some(1));
    assert!(drain.failures.is_empty(), "{:?}", drain.failures);
    let mut conn = pool.acquire().await.unwrap();
    let spec = relay_store::specs::current(&mut conn, issue)
        .await
        .unwrap()
        .unwrap();
    assert!(spec.body.contains("### Test plan"));
    assert_eq!(spec.status, "posted");
    let parts: Vec<_> = github
        .comments(REPO, NUMBER)
        .into_iter()
        .filter(|c| c.author == BOT)
        .collect();
    assert!(
        parts.len() >= 2,
        "a spec over the comment limit is posted in parts"
    );
    assert_eq!(spec.note_ids.len(), parts.len());
    assert!(parts.iter().all(|p| p.body.chars().count() <= 65_536));
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_explorer_queries_the_code_graph_from_the_postgres_store(pool: PgPool) {
    explorer_answers_from_the_graph(pool, GraphBackend::Postgres).await;
}

/// The same cycle over the ArangoDB store, in ArangoDB's wire protocol (the local double): the
/// job indexes the commit into it, and the explorer's search is answered with the symbol document
/// the store wrote.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_explorer_queries_the_code_graph_from_the_arangodb_store(pool: PgPool) {
    let arango = relay_codegraph::store::arangodb::double::FakeArango::start().await;
    explorer_answers_from_the_graph(pool, GraphBackend::Arangodb(arango)).await;
}

/// The code-graph store a cycle's explorer reads.
enum GraphBackend {
    Postgres,
    Arangodb(relay_codegraph::store::arangodb::double::FakeArango),
}

/// One cycle whose explorer asks the code graph: the job indexes its commit into the store first
/// (nothing stored yet), the explorer's `codegraph search` is answered from the store, and the
/// planner decides on that answer.
async fn explorer_answers_from_the_graph(pool: PgPool, backend: GraphBackend) {
    use relay_agent::explore::ExploreAgent;
    use relay_agent::toolbox::Toolbox;
    use relay_codegraph::store::GraphStore;
    use relay_codegraph::store::arangodb::aql;
    use relay_codegraph::store::postgres::PostgresStore;
    use relay_worker::jobs::orchestrator::graph::{ensure_graph, graph_repo_key};
    use relay_worker::jobs::reindex::CodegraphIndexing;

    let github = FakeGitHub::start().await;
    let issue = seed(&pool, &github).await;
    let (dir, snapshot) = checkout();
    let store: Arc<dyn GraphStore> = match &backend {
        GraphBackend::Postgres => Arc::new(PostgresStore::new(pool.clone())),
        GraphBackend::Arangodb(arango) => {
            // Nothing stored (asked here and by the job), the full index written, then stored.
            arango.expect(aql::LATEST_COMMIT, vec![]);
            arango.expect(aql::LATEST_COMMIT, vec![]);
            for _ in 0..written_collections(dir.path()) {
                arango.expect(aql::INSERT_DOCS, vec![]);
            }
            arango.expect(aql::FIND_SNAPSHOT, vec![]);
            arango.expect(aql::INSERT_SNAPSHOT, vec![]);
            arango.expect(aql::LATEST_COMMIT, vec![json!("c0ffee")]);
            Arc::new(arango.store().await)
        }
    };
    let indexing = CodegraphIndexing::new(store.clone(), 1);
    let data = tempfile::tempdir().unwrap();
    let repos = relay_repo::RepoManager::new(relay_repo::RepoSettings {
        data_dir: data.path().to_path_buf(),
        ..relay_repo::RepoSettings::default()
    })
    .unwrap();
    let spec = relay_repo::RepoSpec::new(relay_repo::Provider::GitHub, "https://github.com", REPO);
    let repo = graph_repo_key("github", REPO);
    // Nothing stored yet: the commit is indexed into the store first.
    assert_eq!(store.latest_commit(&repo).await.unwrap(), None);
    let access = ensure_graph(
        &indexing,
        &repos,
        &spec,
        &repo,
        "c0ffee",
        dir.path(),
        Default::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        store.latest_commit(&repo).await.unwrap().as_deref(),
        Some("c0ffee")
    );
    if let GraphBackend::Arangodb(arango) = &backend {
        // The symbols went over the wire as documents; the search answers with Config's, as the
        // server would.
        let requests = arango.finish();
        let symbols = &requests[2]["bindVars"];
        assert_eq!(symbols["@collection"], "codegraph_symbols");
        let mut config = symbols["docs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|doc| doc["name"] == "Config")
            .cloned()
            .expect("Config's document was written");
        config["_key"] = json!("7001");
        config["_id"] = json!("codegraph_symbols/7001");
        config["_rev"] = json!("_hV2xYz---");
        let snapshot = config["snapshot"].clone();
        let snapshots = &requests[requests.len() - 2]["bindVars"];
        assert_eq!(snapshots["snapshot"], snapshot, "{snapshots}");
        arango.expect(aql::FIND_SNAPSHOT, vec![snapshot]);
        arango.expect(
            aql::search(false, true, false, false),
            vec![json!({"total": 1, "symbols": [config]})],
        );
    }

    let llm = ScriptedLlm::start(vec![
        // Planner: ask.
        ScriptedReply::tool_calls(vec![(
            "explore",
            json!({"query": "where is Config defined?", "thoroughness": "quick"}),
        )]),
        // Explorer: the graph, then its report.
        ScriptedReply::tool_calls(vec![(
            "codegraph",
            json!({"operation": "search", "name": "Config"}),
        )]),
        ScriptedReply::tool_calls(vec![(
            "submit_report",
            json!({"answer": "Config is a struct in config.go.", "confidence": "high", "unanswered": [],
                   "evidence": [{"path": "config.go", "start_line": 3, "end_line": 3}]}),
        )]),
        // Planner: decide.
        ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [{"type": "post_comment", "content": "Config lives in config.go:3."}]}),
        )]),
    ])
    .await;
    let toolbox =
        Toolbox::new(dir.path(), Some(access), relay_tools::ToolLimits::default()).unwrap();
    let explorer = ExploreAgent::new(
        client(&llm.base_url(), Role::Explore),
        Arc::new(toolbox),
        AgentSettings::default().explore,
    );
    let (mut env, mut job) = deps(&pool, &github, &llm, snapshot, issue, JobId(3)).await;
    env.explorer = Arc::new(explorer);
    let end = run(&env, &mut job, 0).await.unwrap();
    assert!(matches!(end, CycleEnd::Applied { .. }), "{end:?}");

    // The explorer's second request carries the codegraph result, read from the store.
    let requests = llm.requests();
    assert_eq!(requests.len(), 4);
    let offered: Vec<String> = requests[1].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t["function"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert!(
        offered.iter().any(|name| name == "codegraph"),
        "{offered:?}"
    );
    let results: Vec<String> = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    let graph_answer = results.last().unwrap();
    assert!(
        graph_answer.contains("Config") && graph_answer.contains("config.go:3"),
        "{graph_answer}"
    );
    if let GraphBackend::Arangodb(arango) = &backend {
        let requests = arango.finish();
        let search = &requests[requests.len() - 1]["bindVars"];
        assert_eq!(search["pattern"], "config", "{search}");
    }
}

/// How many collections a full index of `root` writes documents to (each in one chunk here):
/// symbols and their vertices, then resolved calls and other edges when there are any.
fn written_collections(root: &std::path::Path) -> usize {
    use relay_codegraph::index::{IndexOptions, index_repository};
    use relay_codegraph::model::EdgeKind;
    let graph = index_repository(root, &IndexOptions::default())
        .unwrap()
        .graph;
    let calls = graph
        .edges
        .iter()
        .filter(|e| e.kind == EdgeKind::Calls && e.to.is_some())
        .count();
    let others = graph.edges.len() - calls;
    assert!(!graph.symbols.is_empty());
    2 + usize::from(calls > 0) + usize::from(others > 0)
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_cycle_records_its_tokens_against_the_issue_by_role(pool: PgPool) {
    use relay_agent::explore::ExploreAgent;
    use relay_agent::llm::UsageContext;
    use relay_agent::toolbox::Toolbox;
    use relay_worker::jobs::orchestrator::metered_client;

    let github = FakeGitHub::start().await;
    let issue = seed(&pool, &github).await;
    let llm = ScriptedLlm::start(vec![
        ScriptedReply::tool_calls(vec![(
            "explore",
            json!({"query": "where is Config defined?", "thoroughness": "quick"}),
        )]),
        ScriptedReply::tool_calls(vec![(
            "submit_report",
            json!({"answer": "Config is a struct in config.go.", "confidence": "high", "unanswered": [],
                   "evidence": [{"path": "config.go", "start_line": 3, "end_line": 3}]}),
        )]),
        ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [{"type": "post_comment", "content": "Config lives in config.go:3."}]}),
        )]),
    ])
    .await;
    let settings: LlmSettings = toml::from_str(&format!(
        "[default]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\napi_key = \"sk-x\"\n",
        llm.base_url()
    ))
    .unwrap();
    let job_id = JobId(11);
    let usage = UsageContext {
        job_id: Some(job_id),
        issue_id: Some(issue),
    };
    let (dir, snapshot) = checkout();
    let toolbox = Toolbox::new(dir.path(), None, relay_tools::ToolLimits::default()).unwrap();
    let explorer = ExploreAgent::new(
        metered_client(&settings, Role::Explore, &pool, usage).unwrap(),
        Arc::new(toolbox),
        AgentSettings::default().explore,
    );
    let (mut env, mut job) = deps(&pool, &github, &llm, snapshot, issue, job_id).await;
    env.planner = metered_client(&settings, Role::Planner, &pool, usage).unwrap();
    env.explorer = Arc::new(explorer);
    let end = run(&env, &mut job, 0).await.unwrap();
    assert!(matches!(end, CycleEnd::Applied { .. }), "{end:?}");

    // What the issue view (`/api/issues/{id}`) shows as `spend_by_role`.
    let spend = relay_store::browse::spend_by_role(&pool, issue)
        .await
        .unwrap();
    let roles: Vec<(&str, i64, i64)> = spend
        .iter()
        .map(|s| {
            (
                s.role.as_str(),
                s.calls,
                s.prompt_tokens + s.completion_tokens,
            )
        })
        .collect();
    assert_eq!(roles, [("explore", 1, 15), ("planner", 2, 30)]);
    let rows = relay_store::llm_usage::for_job(&pool, job_id)
        .await
        .unwrap();
    assert_eq!(rows.len(), 3);
}
