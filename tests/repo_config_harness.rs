//! A harness for the repository-configuration and command tests: real Postgres, the local
//! GitHub or GitLab, the scripted LLM, an upstream git repository with the files a test gives
//! (its `.relay.toml` among them), the gateway (with the read API) and a worker with the
//! orchestrator and an in-memory code graph.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Body;
use http::Request;
use relay_agent::agent_settings::AgentSettings;
use relay_agent::llm::LlmSettings;
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_tracker::Trackers;
use relay_tracker::fake::{FakeGitHub, FakeGitLab};
use relay_worker::jobs::orchestrator::Orchestrator;
use relay_worker::jobs::reindex::CodegraphIndexing;
use relay_worker::jobs::{JobDeps, RepoSpecs};
use relay_worker::{Outcome, Worker};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::helpers::*;
use crate::status_fixture::{UI_TOKEN, ui_state};

pub const GH_REPO: &str = "Codertocat/Hello-World";
pub const GH_ISSUE: i64 = 1;
pub const GH_BOT: &str = "relay-bot";
pub const GL_PROJECT: i64 = 5;
pub const GL_PATH: &str = "gitlab-org/gitlab-test";
pub const GL_ISSUE: i64 = 17;
pub const GL_BOT: &str = "relay";
const TOKEN: &str = "tok-repo-config-e2e";
const LLM_KEY: &str = "sk-repo-config-e2e";

/// A maintainer or a member, on either tracker (anyone else has no role).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Maintainer,
    Member,
}

pub enum Side {
    GitHub(FakeGitHub),
    GitLab(FakeGitLab),
}

pub struct Harness {
    pub pool: PgPool,
    pub side: Side,
    pub llm: ScriptedLlm,
    pub app: axum::Router,
    /// The tracker as configured, for a gateway started again with other settings.
    tracker_settings: relay_core::TrackerSettings,
    worker: Worker,
    pub codegraph: Arc<CodegraphIndexing>,
    upstream: tempfile::TempDir,
    _data: tempfile::TempDir,
}

static DELIVERY: AtomicU64 = AtomicU64::new(0);

impl Harness {
    /// GitHub, with `files` in the repository and `agent` as the server's `[agent]`.
    pub async fn github(pool: PgPool, files: &[(&str, &str)], agent: AgentSettings) -> Harness {
        let github = FakeGitHub::start().await;
        github.seed_issue(GH_REPO, GH_ISSUE, "Retries", "Can retries be configured?");
        let settings = github.settings(TOKEN, GH_BOT);
        Harness::start(
            pool,
            Side::GitHub(github),
            settings,
            "github",
            GH_REPO,
            files,
            agent,
        )
        .await
    }

    /// GitLab, likewise.
    pub async fn gitlab(pool: PgPool, files: &[(&str, &str)], agent: AgentSettings) -> Harness {
        let gitlab = FakeGitLab::start().await;
        gitlab.seed_issue(
            GL_PROJECT,
            GL_PATH,
            GL_ISSUE,
            "Retries",
            "Can retries be configured?",
        );
        let settings = gitlab.settings(TOKEN, GL_BOT);
        Harness::start(
            pool,
            Side::GitLab(gitlab),
            settings,
            "gitlab",
            GL_PATH,
            files,
            agent,
        )
        .await
    }

    async fn start(
        pool: PgPool,
        side: Side,
        tracker_settings: relay_core::TrackerSettings,
        tracker: &str,
        path: &str,
        files: &[(&str, &str)],
        agent: AgentSettings,
    ) -> Harness {
        // The worker's server settings agree with the gateway's (`trackers()`): one server.
        let mut tracker_settings = tracker_settings;
        tracker_settings.trigger_labels = trackers()
            .into_iter()
            .find(|t| t.name.as_str() == tracker)
            .map(|t| t.trigger_labels)
            .unwrap_or_default();
        let upstream = tempfile::tempdir().unwrap();
        git(upstream.path(), &["init", "-q"]);
        for (rel, text) in files {
            let file = upstream.path().join(rel);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        git(upstream.path(), &["add", "-A"]);
        git(upstream.path(), &["commit", "-qm", "v1"]);
        let llm = ScriptedLlm::start(Vec::new()).await;
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
        let app = gateway(&pool, &tracker_settings, &agent);
        let data = tempfile::tempdir().unwrap();
        let repos = relay_repo::RepoManager::new(relay_repo::RepoSettings {
            data_dir: data.path().to_path_buf(),
            ..Default::default()
        })
        .unwrap();
        let specs =
            RepoSpecs::new(&trackers()).with_local(tracker, path, upstream.path().to_path_buf());
        let codegraph = Arc::new(CodegraphIndexing::new(
            Arc::new(relay_codegraph::store::memory::MemoryStore::new()),
            4,
        ));
        let registry = relay_worker::jobs::registry(&JobDeps {
            repos: Arc::new(repos),
            specs: Arc::new(specs),
            codegraph: Some(codegraph.clone()),
            orchestrator: Some(Arc::new(Orchestrator {
                trackers: clients,
                tracker_settings: vec![tracker_settings.clone()],
                llm: llm_settings,
                agent,
                tools: Default::default(),
                codegraph: Some(codegraph.clone()),
                roles: Default::default(),
                prices: Default::default(),
            })),
        });
        let worker = Worker::new(pool.clone(), registry, crate::queue::settings());
        Harness {
            pool,
            side,
            llm,
            app,
            tracker_settings,
            worker,
            codegraph,
            upstream,
            _data: data,
        }
    }

    /// The gateway started again with `agent` as the server's `[agent]` (the worker keeps its
    /// settings, and no job runs).
    pub fn restart_gateway(&mut self, agent: &AgentSettings) {
        self.app = gateway(&self.pool, &self.tracker_settings, agent);
    }

    /// Gives `who` a role on the project.
    pub fn set_role(&self, who: &str, role: Role) {
        match &self.side {
            Side::GitHub(github) => {
                let permission = match role {
                    Role::Maintainer => "admin",
                    Role::Member => "write",
                };
                github.set_permission(GH_REPO, who, permission);
            }
            Side::GitLab(gitlab) => match role {
                Role::Maintainer => gitlab.set_member(GL_PROJECT, who, 40),
                Role::Member => gitlab.set_member(GL_PROJECT, who, 30),
            },
        }
    }

    /// `who` comments `body` on the issue: the comment on the tracker, its signed webhook
    /// through the gateway, and the worker run to the end. Returns the gateway's answer.
    pub async fn say(&self, who: &str, body: &str) -> Answer {
        let n = DELIVERY.fetch_add(1, Ordering::Relaxed);
        let answer = match &self.side {
            Side::GitHub(github) => {
                let comment = github.seed_comment(GH_REPO, GH_ISSUE, who, body);
                let mut payload =
                    fixture_json("webhooks/github/issue_comment.created.on-issue.json");
                payload["comment"]["id"] = json!(comment);
                payload["comment"]["body"] = json!(body);
                payload["comment"]["user"]["login"] = json!(who);
                payload["comment"]["author_association"] = json!("NONE");
                payload["sender"]["login"] = json!(who);
                payload["comment"]["created_at"] = json!(chrono::Utc::now().to_rfc3339());
                payload["comment"]["updated_at"] = json!(chrono::Utc::now().to_rfc3339());
                call(
                    &self.app,
                    github_request(
                        "issue_comment",
                        &format!("rc-{n}"),
                        serde_json::to_vec(&payload).unwrap(),
                    ),
                )
                .await
            }
            Side::GitLab(gitlab) => {
                let (discussion, note) = gitlab.seed_note(GL_PROJECT, GL_ISSUE, who, body, false);
                let mut payload =
                    fixture_json("webhooks/gitlab/note_hook.issue.with-discussion_id.json");
                payload["user"]["username"] = json!(who);
                if let Some(id) = gitlab.user_id(who) {
                    payload["user"]["id"] = json!(id);
                }
                payload["object_attributes"]["note"] = json!(body);
                payload["object_attributes"]["id"] = json!(note);
                payload["object_attributes"]["discussion_id"] = json!(discussion);
                payload["object_attributes"]["action"] = json!("create");
                let stamp = chrono::Utc::now() + chrono::Duration::seconds(n as i64);
                payload["object_attributes"]["updated_at"] = json!(stamp.to_rfc3339());
                payload["issue"]["state"] = json!("opened");
                call(
                    &self.app,
                    gitlab_request(
                        "Note Hook",
                        &format!("rc-{n}"),
                        serde_json::to_vec(&payload).unwrap(),
                    ),
                )
                .await
            }
        };
        assert!(answer.status.is_success(), "{:?}", answer.body);
        let outcomes = self.worker.drain().await.unwrap();
        for outcome in &outcomes {
            assert!(
                matches!(outcome, Outcome::Succeeded { .. }),
                "every job succeeds: {outcomes:?}"
            );
        }
        answer
    }

    /// `who` adds the label `added` to the GitHub issue, which then carries `labels`: the
    /// signed `issues.labeled` webhook through the gateway, and the worker run to the end.
    pub async fn label(&self, who: &str, added: &str, labels: &[&str]) -> Answer {
        let n = DELIVERY.fetch_add(1, Ordering::Relaxed);
        let mut payload = fixture_json("webhooks/github/issues.labeled.json");
        payload["label"]["name"] = json!(added);
        payload["issue"]["labels"] = json!(
            labels
                .iter()
                .map(|name| json!({ "name": name }))
                .collect::<Vec<_>>()
        );
        payload["sender"]["login"] = json!(who);
        payload["issue"]["updated_at"] = json!(chrono::Utc::now().to_rfc3339());
        let answer = call(
            &self.app,
            github_request(
                "issues",
                &format!("rc-{n}"),
                serde_json::to_vec(&payload).unwrap(),
            ),
        )
        .await;
        assert!(answer.status.is_success(), "{:?}", answer.body);
        let outcomes = self.worker.drain().await.unwrap();
        for outcome in &outcomes {
            assert!(
                matches!(outcome, Outcome::Succeeded { .. }),
                "every job succeeds: {outcomes:?}"
            );
        }
        answer
    }

    /// Every comment the bot wrote on the issue, oldest first, without its idempotency marker.
    pub fn bot_comments(&self) -> Vec<String> {
        let comments: Vec<String> = match &self.side {
            Side::GitHub(github) => github
                .comments(GH_REPO, GH_ISSUE)
                .into_iter()
                .filter(|c| c.author == GH_BOT)
                .map(|c| c.body)
                .collect(),
            Side::GitLab(gitlab) => gitlab
                .discussions(GL_PROJECT, GL_ISSUE)
                .into_iter()
                .flat_map(|d| d.notes)
                .filter(|n| n.author == GL_BOT)
                .map(|n| n.body)
                .collect(),
        };
        comments.iter().map(|body| answer_text(body)).collect()
    }

    /// The bot's mention as people write it.
    pub fn bot(&self) -> &'static str {
        match self.side {
            Side::GitHub(_) => "@relay-bot",
            Side::GitLab(_) => "@relay",
        }
    }

    /// The LLM request bodies so far, as text.
    pub fn llm_bodies(&self) -> Vec<String> {
        self.llm
            .requests()
            .iter()
            .map(|r| r.body.to_string())
            .collect()
    }

    pub async fn issue_id(&self) -> i64 {
        sqlx::query_scalar("SELECT id FROM issues")
            .fetch_one(&self.pool)
            .await
            .unwrap()
    }

    pub async fn project_id(&self) -> String {
        sqlx::query_scalar("SELECT project_id FROM issues")
            .fetch_one(&self.pool)
            .await
            .unwrap()
    }

    /// `GET path` on the read API with the token.
    pub async fn api(&self, path: &str) -> Value {
        let request = Request::get(path)
            .header("authorization", format!("Bearer {UI_TOKEN}"))
            .body(Body::empty())
            .unwrap();
        let answer = call(&self.app, request).await;
        assert!(answer.status.is_success(), "{path}: {:?}", answer.body);
        answer.body
    }

    /// The upstream repository, for a test that pushes a new commit.
    pub fn upstream(&self) -> &std::path::Path {
        self.upstream.path()
    }

    /// Queues the planner's replies for the next cycle.
    pub fn script(&self, replies: impl IntoIterator<Item = ScriptedReply>) {
        self.llm.push(replies);
    }
}

/// The gateway with the read API, narrowing each repository's recorded file by the tracker's
/// server policy under `agent`, as `relay serve` composes it.
fn gateway(
    pool: &PgPool,
    tracker: &relay_core::TrackerSettings,
    agent: &AgentSettings,
) -> axum::Router {
    let policy = relay_worker::jobs::repo_config::server_policy(agent, tracker);
    let policies = [(tracker.name.as_str().to_owned(), policy)].into();
    relay_gateway::app(ui_state(pool.clone(), Default::default()).with_policies(policies))
}

/// A comment's own words: without its idempotency marker, and without the quote of the
/// answered comment a GitHub reply starts with.
fn answer_text(body: &str) -> String {
    let body = body
        .find("\n\n<!-- relay:write:")
        .map_or(body, |at| &body[..at]);
    if !body.starts_with('>') {
        return body.to_owned();
    }
    let mut lines = body.lines().skip_while(|line| line.starts_with('>'));
    let rest: Vec<&str> = lines.by_ref().collect();
    rest.join("\n").trim_start().to_owned()
}

/// A planner cycle that only submits `comment`.
pub fn comment_only(comment: &str) -> Vec<ScriptedReply> {
    vec![ScriptedReply::tool_calls(vec![(
        "submit_actions",
        json!({"actions": [{"type": "post_comment", "content": comment}]}),
    )])]
}

/// The files of a small Go repository: `config.go` and whatever else is given.
pub fn repository(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    let mut files = vec![(
        "config.go",
        "package main\n\ntype Config struct {\n\tRetries int\n}\n",
    )];
    files.extend_from_slice(extra);
    files
}

/// `[agent]` without the living summary (the tests count the bot's comments).
pub fn agent() -> AgentSettings {
    AgentSettings {
        summary_comment: false,
        ..AgentSettings::default()
    }
}
