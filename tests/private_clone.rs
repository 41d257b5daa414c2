//! Private repositories under a GitHub App (issue #22 §5), end to end: the local GitHub serves
//! the repository over git smart HTTP (the real `git http-backend`) and, like github.com for a
//! private repository, lets git in only with an installation access token of an installation that
//! covers it. The worker clones with the token the tracker client minted; a clone that fails ends,
//! on the job's last attempt, in one status comment saying so.

use relay_core::JobId;
use std::sync::Arc;

use relay_agent::agent_settings::AgentSettings;
use relay_agent::llm::LlmSettings;
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_tracker::Trackers;
use relay_tracker::fake::{Failure, FakeGitHub};
use relay_worker::jobs::orchestrator::Orchestrator;
use relay_worker::jobs::{JobDeps, RepoSpecs};
use relay_worker::{Outcome, Worker};
use serde_json::json;
use sqlx::PgPool;

use crate::helpers::*;

const REPO: &str = "Codertocat/Hello-World";
const APP_ID: u64 = 4343;
const SLUG: &str = "relay-bot";
const INSTALLATION: i64 = 8080;
const LLM_KEY: &str = "sk-private-clone-llm-key";

struct AppHarness {
    github: FakeGitHub,
    llm: ScriptedLlm,
    worker: Worker,
    job: i64,
    _dirs: Vec<tempfile::TempDir>,
}

/// The App-mode tracker, the private repository served over git, a mention accepted by the
/// gateway, and a worker.
async fn start(pool: &PgPool, script: Vec<ScriptedReply>) -> AppHarness {
    let github = FakeGitHub::start().await;
    github.seed_issue(REPO, 1, "Retries", "Can retries be configured?");
    github.install(REPO, INSTALLATION);
    github.set_permission(REPO, "Codertocat", "admin");
    let mut settings = github.app_settings(APP_ID, SLUG);
    settings.name = relay_core::TrackerName::parse("github").unwrap();

    let upstream = tempfile::tempdir().unwrap();
    git(upstream.path(), &["init", "-q"]);
    std::fs::write(upstream.path().join("config.go"), "package main\n").unwrap();
    git(upstream.path(), &["add", "."]);
    git(upstream.path(), &["commit", "-qm", "config"]);
    let served = tempfile::tempdir().unwrap();
    let bare = served.path().join("Hello-World.git");
    git(
        served.path(),
        &[
            "clone",
            "-q",
            "--bare",
            &upstream.path().to_string_lossy(),
            "Hello-World.git",
        ],
    );
    github.serve_git(REPO, bare);

    let comment = github.seed_comment(
        REPO,
        1,
        "Codertocat",
        "@relay-bot can retries be configured?",
    );
    let app = relay_gateway::app(state(pool.clone()));
    let mut payload = fixture_json("webhooks/github/issue_comment.created.on-issue.json");
    payload["comment"]["id"] = json!(comment);
    payload["comment"]["body"] = json!("@relay-bot can retries be configured?");
    payload["installation"] = json!({ "id": INSTALLATION });
    let answer = call(
        &app,
        github_request(
            "issue_comment",
            "app-1",
            serde_json::to_vec(&payload).unwrap(),
        ),
    )
    .await;
    assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
    let job = answer.body["job"].as_i64().unwrap();

    let llm = ScriptedLlm::start(script).await;
    let llm_settings: LlmSettings = toml::from_str(&format!(
        "[default]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\napi_key = \"{LLM_KEY}\"\nmax_retries = 0\n",
        llm.base_url()
    ))
    .unwrap();
    let mut clients = Trackers::default();
    clients.insert(
        settings.name.clone(),
        relay_tracker::build(&settings).unwrap(),
    );
    let data = tempfile::tempdir().unwrap();
    let repos = relay_repo::RepoManager::new(relay_repo::RepoSettings {
        data_dir: data.path().to_path_buf(),
        ..Default::default()
    })
    .unwrap();
    // No local override: the worker clones from the tracker, as in production.
    let specs = RepoSpecs::new(std::slice::from_ref(&settings));
    let registry = relay_worker::jobs::registry(&JobDeps {
        repos: Arc::new(repos),
        specs: Arc::new(specs),
        codegraph: None,
        orchestrator: Some(Arc::new(Orchestrator {
            trackers: clients,
            tracker_settings: vec![settings],
            llm: llm_settings,
            agent: AgentSettings::default(),
            tools: Default::default(),
            codegraph: None,
            roles: Default::default(),
            prices: Default::default(),
        })),
    });
    let worker = Worker::new(pool.clone(), registry, crate::queue::settings());
    AppHarness {
        github,
        llm,
        worker,
        job,
        _dirs: vec![upstream, served, data],
    }
}

impl AppHarness {
    fn bot_comments(&self) -> Vec<String> {
        self.github
            .comments(REPO, 1)
            .into_iter()
            .filter(|c| c.author == format!("{SLUG}[bot]"))
            .map(|c| c.body)
            .collect()
    }

    fn git_requests(&self) -> Vec<relay_tracker::fake::RecordedRequest> {
        self.github
            .requests()
            .into_iter()
            .filter(|r| r.path.starts_with(&format!("/{REPO}.git/")))
            .collect()
    }
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_private_repository_is_cloned_with_the_installation_token(pool: PgPool) {
    let h = start(
        &pool,
        vec![ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [{"type": "post_comment", "content": "Cloned and read it."}]}),
        )])],
    )
    .await;
    assert_eq!(
        h.worker.drain().await.unwrap(),
        vec![Outcome::Succeeded {
            job_id: JobId(h.job)
        }]
    );
    let git = h.git_requests();
    assert!(
        git.iter()
            .any(|r| r.path.ends_with("/git-upload-pack") && r.method == "POST"),
        "the pack was fetched over git: {:?}",
        git.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    // Every git request carried the installation token (Basic x-access-token:<token>), never a
    // token in the URL.
    assert_eq!(h.github.token_exchanges(), vec![INSTALLATION]);
    for request in &git {
        let auth = request.header("authorization").unwrap_or_default();
        assert!(auth.starts_with("Basic "), "{auth}");
        assert!(
            !request.path.contains('@')
                && request
                    .query
                    .as_deref()
                    .is_none_or(|q| !q.contains("token"))
        );
    }
    let bot = h.bot_comments();
    assert_eq!(bot.len(), 1, "{bot:?}");
    assert!(bot[0].starts_with("Cloned and read it."));
    assert_eq!(h.llm.requests().len(), 1);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_clone_that_fails_on_the_last_attempt_says_so_once(pool: PgPool) {
    let h = start(&pool, Vec::new()).await;
    // Two attempts, the second due at once when the first fails.
    sqlx::query("UPDATE jobs SET max_attempts = 2 WHERE id = $1")
        .bind(h.job)
        .execute(&pool)
        .await
        .unwrap();
    // The git endpoint refuses (as GitHub does when the App lost access to the repository).
    h.github.fail_next(
        "GET",
        &format!("/{REPO}.git/info/refs"),
        10,
        Failure::Status(403),
    );
    assert_eq!(
        h.worker.run_next_job().await.unwrap(),
        Outcome::Retried {
            job_id: JobId(h.job)
        }
    );
    assert_eq!(
        h.bot_comments(),
        Vec::<String>::new(),
        "the retry may work: silent"
    );
    sqlx::query("UPDATE jobs SET run_after = now() WHERE id = $1")
        .bind(h.job)
        .execute(&pool)
        .await
        .unwrap();
    assert_eq!(
        h.worker.run_next_job().await.unwrap(),
        Outcome::Dead {
            job_id: JobId(h.job)
        }
    );
    let bot = h.bot_comments();
    assert_eq!(bot.len(), 1, "one status comment: {bot:?}");
    assert!(
        bot[0].contains("I could not clone or update the repository"),
        "{}",
        bot[0]
    );
    assert!(
        bot[0].contains("Mention @relay-bot to try again"),
        "{}",
        bot[0]
    );
    assert!(h.llm.requests().is_empty(), "no cycle ran");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_thread_that_cannot_be_read_on_the_last_attempt_is_said_in_its_discussion(pool: PgPool) {
    use crate::orchestrator_gitlab::{GitLabHarness, ISSUE, PROJECT, REPORTER};
    let h = GitLabHarness::start(pool.clone(), Vec::new()).await;
    const BODY: &str = "@relay can retries be configured?";
    let (discussion, note) = h.gitlab.seed_note(PROJECT, ISSUE, REPORTER, BODY, false);
    let answer = h.deliver(REPORTER, BODY, note, &discussion, "gl-t1").await;
    assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
    let job = answer.body["job"].as_i64().unwrap();
    sqlx::query("UPDATE jobs SET max_attempts = 1 WHERE id = $1")
        .bind(job)
        .execute(&pool)
        .await
        .unwrap();
    h.gitlab.fail_next(
        "GET",
        &format!("/api/v4/projects/{PROJECT}/issues/{ISSUE}/discussions"),
        10,
        Failure::Status(500),
    );
    assert_eq!(h.drain().await, vec![Outcome::Dead { job_id: JobId(job) }]);
    let bot = h.bot_notes();
    assert_eq!(bot.len(), 1, "one status comment: {bot:?}");
    assert_eq!(bot[0].0, discussion, "in the asker's discussion");
    assert!(
        bot[0].1.contains("I could not read this issue's thread"),
        "{}",
        bot[0].1
    );
    assert!(h.llm.requests().is_empty(), "no planner ran");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_push_to_the_private_repository_moves_the_checkout_with_the_installation_token(
    pool: PgPool,
) {
    let h = start(&pool, Vec::new()).await;
    // Only the push is run here: the mention's job is taken off the queue.
    sqlx::query("DELETE FROM jobs WHERE id = $1")
        .bind(h.job)
        .execute(&pool)
        .await
        .unwrap();
    let head = git(h._dirs[0].path(), &["rev-parse", "HEAD"]);
    let payload = serde_json::to_value(relay_core::UpdateCheckout {
        tracker: "github".into(),
        project_id: "1296269".into(),
        project_path: REPO.into(),
        commit: head.clone(),
    })
    .unwrap();
    let mut conn = pool.acquire().await.unwrap();
    let push = relay_store::queue::enqueue(
        &mut conn,
        &relay_store::queue::NewJob {
            kind: "update_checkout",
            payload: &payload,
            concurrency_key: Some("repo:github:1296269"),
            max_attempts: 1,
        },
    )
    .await
    .unwrap()
    .job_id();
    drop(conn);

    // The configured token is empty in App mode: without the installation token git is refused.
    assert_eq!(
        h.worker.drain().await.unwrap(),
        vec![Outcome::Succeeded { job_id: push }]
    );
    assert_eq!(h.github.token_exchanges(), vec![INSTALLATION]);
    let git = h.git_requests();
    assert!(
        git.iter()
            .any(|r| r.path.ends_with("/git-upload-pack") && r.method == "POST"),
        "the pack was fetched over git"
    );
    for request in &git {
        let auth = request.header("authorization").unwrap_or_default();
        assert!(auth.starts_with("Basic "), "{auth}");
    }
    let detail: serde_json::Value = sqlx::query_scalar(
        "SELECT detail FROM job_runs WHERE job_id = $1 ORDER BY id DESC LIMIT 1",
    )
    .bind(push)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(detail["commit"], json!(head), "{detail}");
}
