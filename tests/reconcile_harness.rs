//! The GitHub harness of the reconciler tests: real Postgres, the fake GitHub with the fixture's
//! issue, the gateway, a worker with the orchestrator (scripted LLM) and a reconciler pointed at
//! the fake.

use std::sync::Arc;

use relay_agent::agent_settings::AgentSettings;
use relay_agent::llm::LlmSettings;
use relay_agent::llm::scripted::ScriptedLlm;
use relay_tracker::Trackers;
use relay_tracker::fake::FakeGitHub;
use relay_worker::Worker;
use relay_worker::jobs::orchestrator::Orchestrator;
use relay_worker::jobs::{JobDeps, RepoSpecs};
use relay_worker::reconcile::{PassOptions, ReconcileSettings, Reconciler};
use serde_json::json;
use sqlx::PgPool;

use crate::helpers::*;
use crate::orchestrator::happy_script;
use crate::queue::settings;

pub const REPO: &str = "Codertocat/Hello-World";
pub const TOKEN: &str = "ghs_reconcile_token";
const LLM_KEY: &str = "sk-reconcile-llm-key";

/// Postgres, the fake GitHub with the fixture's issue, the gateway, a worker with the orchestrator
/// and a reconciler pointed at the fake.
pub struct GitHubHarness {
    pub github: FakeGitHub,
    pub llm: ScriptedLlm,
    pub app: axum::Router,
    pub worker: Worker,
    pub reconciler: Reconciler,
    _upstream: tempfile::TempDir,
    _data: tempfile::TempDir,
}

impl GitHubHarness {
    pub async fn start(pool: PgPool) -> GitHubHarness {
        let github = FakeGitHub::start().await;
        github.seed_issue(
            REPO,
            1,
            "Spelling error in the README file",
            "It is broken.",
        );
        github.set_permission(REPO, "Codertocat", "admin");
        let llm = ScriptedLlm::start(happy_script()).await;
        let upstream = tempfile::tempdir().unwrap();
        git(upstream.path(), &["init", "-q"]);
        std::fs::write(
            upstream.path().join("config.go"),
            "package main\n\ntype Config struct {\n\tRetries int\n}\n",
        )
        .unwrap();
        git(upstream.path(), &["add", "."]);
        git(upstream.path(), &["commit", "-qm", "config"]);
        let tracker = github.settings(TOKEN, "relay-bot");
        let llm_settings: LlmSettings = toml::from_str(&format!(
            "[default]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\napi_key = \"{LLM_KEY}\"\nmax_retries = 0\n",
            llm.base_url()
        ))
        .unwrap();
        let mut clients = Trackers::default();
        clients.insert(
            tracker.name.clone(),
            relay_tracker::build(&tracker).unwrap(),
        );
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
                trackers: clients.clone(),
                tracker_settings: vec![tracker.clone()],
                llm: llm_settings,
                // These tests count the planner's replies; the summary has its own tests.
                agent: AgentSettings {
                    summary_comment: false,
                    ..AgentSettings::default()
                },
                tools: Default::default(),
                codegraph: None,
                roles: Default::default(),
                prices: Default::default(),
            })),
        });
        let worker = Worker::new(pool.clone(), registry, settings());
        let reconciler = Reconciler::new(
            pool.clone(),
            clients,
            vec![tracker],
            ReconcileSettings {
                interval_secs: 5,
                ..ReconcileSettings::default()
            },
            3,
        );
        GitHubHarness {
            app: relay_gateway::app(state(pool.clone())),
            github,
            llm,
            worker,
            reconciler,
            _upstream: upstream,
            _data: data,
        }
    }

    /// Relay sees the issue opened (no mention: recorded, ignored).
    pub async fn see_issue_opened(&self) {
        let mut opened = fixture_json("webhooks/github/issues.opened.json");
        opened["issue"]["body"] = json!("It is broken.");
        let answer = call(
            &self.app,
            github_request("issues", "opened-1", serde_json::to_vec(&opened).unwrap()),
        )
        .await;
        assert_eq!(answer.outcome(), "ignored", "{:?}", answer.body);
    }

    /// The signed `issue_comment created` webhook of comment `id` by `author`.
    pub async fn deliver_comment(
        &self,
        id: i64,
        author: &str,
        body: &str,
        delivery: &str,
    ) -> Answer {
        let mut payload = fixture_json("webhooks/github/issue_comment.created.on-issue.json");
        payload["comment"]["id"] = json!(id);
        payload["comment"]["body"] = json!(body);
        payload["comment"]["user"]["login"] = json!(author);
        payload["sender"]["login"] = json!(author);
        call(
            &self.app,
            github_request(
                "issue_comment",
                delivery,
                serde_json::to_vec(&payload).unwrap(),
            ),
        )
        .await
    }

    pub async fn pass(&self) -> relay_worker::reconcile::PassReport {
        let report = self.reconciler.pass(PassOptions::default()).await.unwrap();
        assert!(!report.locked_out);
        report
    }

    pub fn bot_comments(&self) -> Vec<String> {
        self.github
            .comments(REPO, 1)
            .into_iter()
            .filter(|c| c.author == "relay-bot")
            .map(|c| c.body)
            .collect()
    }
}
