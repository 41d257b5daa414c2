//! The orchestrator end to end on GitLab: a signed Note Hook → gateway → job → planner (scripted
//! LLM over HTTP) → the reply in the triggering discussion on the local GitLab server, the gap
//! stored, the watermark raised; then the reporter's answer closes the gap in the next cycle.

use relay_core::{IssueId, JobId};
use std::sync::Arc;

use relay_agent::agent_settings::AgentSettings;
use relay_agent::llm::LlmSettings;
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_tracker::Trackers;
use relay_tracker::fake::FakeGitLab;
use relay_worker::jobs::orchestrator::Orchestrator;
use relay_worker::jobs::{JobDeps, RepoSpecs};
use relay_worker::{Outcome, Worker};
use serde_json::json;
use sqlx::PgPool;

use crate::helpers::*;
use crate::queue::settings;

/// The project and issue of the Note Hook fixture.
pub const PROJECT: i64 = 5;
pub const PROJECT_PATH: &str = "gitlab-org/gitlab-test";
pub const ISSUE: i64 = 17;
/// The gateway's GitLab bot (`helpers::trackers`).
pub const BOT: &str = "relay";
pub const TOKEN: &str = "glpat-e2e-gitlab-token";
pub const LLM_KEY: &str = "sk-e2e-gitlab-llm-key";
pub const REPORTER: &str = "root";

/// `object_attributes.action` of a Note Hook.
#[derive(Debug, Clone, Copy)]
enum NoteAction {
    Create,
    Update,
}

/// Real Postgres, the fake GitLab, the scripted LLM, a local upstream repository and a worker
/// with the orchestrator.
pub struct GitLabHarness {
    pub pool: PgPool,
    pub gitlab: FakeGitLab,
    pub llm: ScriptedLlm,
    pub app: axum::Router,
    worker: Worker,
    /// The job handlers, for tests that run their own workers (a restart, the sweeper).
    pub registry: relay_worker::Registry,
    _upstream: tempfile::TempDir,
    _data: tempfile::TempDir,
}

impl GitLabHarness {
    pub async fn start(pool: PgPool, script: Vec<ScriptedReply>) -> GitLabHarness {
        GitLabHarness::start_with_llm(pool, script, 0).await
    }

    pub async fn start_with_llm(
        pool: PgPool,
        script: Vec<ScriptedReply>,
        llm_max_retries: u32,
    ) -> GitLabHarness {
        GitLabHarness::start_full(
            pool,
            script,
            llm_max_retries,
            "The client gives up after the first failure.",
        )
        .await
    }

    /// The issue's description is `description`.
    pub async fn start_full(
        pool: PgPool,
        script: Vec<ScriptedReply>,
        llm_max_retries: u32,
        description: &str,
    ) -> GitLabHarness {
        GitLabHarness::start_configured(pool, script, llm_max_retries, description, false).await
    }

    /// [`GitLabHarness::start`] with the living summary comment on.
    pub async fn start_with_summary(pool: PgPool, script: Vec<ScriptedReply>) -> GitLabHarness {
        GitLabHarness::start_configured(
            pool,
            script,
            0,
            "The client gives up after the first failure.",
            true,
        )
        .await
    }

    async fn start_configured(
        pool: PgPool,
        script: Vec<ScriptedReply>,
        llm_max_retries: u32,
        description: &str,
        summary_comment: bool,
    ) -> GitLabHarness {
        let gitlab = FakeGitLab::start().await;
        gitlab.seed_issue(
            PROJECT,
            PROJECT_PATH,
            ISSUE,
            "Retries are not configurable",
            description,
        );
        gitlab.set_member(PROJECT, REPORTER, 40);
        let llm = ScriptedLlm::start(script).await;

        let upstream = tempfile::tempdir().unwrap();
        git(upstream.path(), &["init", "-q"]);
        std::fs::write(
            upstream.path().join("config.go"),
            "package main\n\ntype Config struct {\n\tRetries int\n}\n",
        )
        .unwrap();
        git(upstream.path(), &["add", "."]);
        git(upstream.path(), &["commit", "-qm", "config"]);

        let tracker_settings = gitlab.settings(TOKEN, BOT);
        let llm_settings: LlmSettings = toml::from_str(&format!(
            "[default]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\napi_key = \"{LLM_KEY}\"\nmax_retries = {llm_max_retries}\n",
            llm.base_url()
        ))
        .unwrap();
        let mut clients = Trackers::default();
        clients.insert(
            tracker_settings.name.clone(),
            relay_tracker::build(&tracker_settings).unwrap(),
        );
        let data = tempfile::tempdir().unwrap();
        let repos = relay_repo::RepoManager::new(relay_repo::RepoSettings {
            data_dir: data.path().to_path_buf(),
            ..Default::default()
        })
        .unwrap();
        let specs = RepoSpecs::new(&trackers()).with_local(
            "gitlab",
            PROJECT_PATH,
            upstream.path().to_path_buf(),
        );
        let registry = relay_worker::jobs::registry(&JobDeps {
            repos: Arc::new(repos),
            specs: Arc::new(specs),
            codegraph: None,
            orchestrator: Some(Arc::new(Orchestrator {
                trackers: clients,
                tracker_settings: vec![tracker_settings],
                llm: llm_settings,
                // Most tests count the planner's own notes; the summary has its own tests.
                agent: AgentSettings {
                    summary_comment,
                    ..AgentSettings::default()
                },
                tools: Default::default(),
                codegraph: None,
                roles: Default::default(),
                prices: Default::default(),
            })),
        });
        let worker = Worker::new(pool.clone(), registry.clone(), settings());
        let app = relay_gateway::app(state(pool.clone()));
        GitLabHarness {
            pool,
            gitlab,
            llm,
            app,
            worker,
            registry,
            _upstream: upstream,
            _data: data,
        }
    }

    /// Delivers a signed Note Hook (the fixture adapted to the fake's project and issue).
    pub async fn deliver(
        &self,
        author: &str,
        body: &str,
        note: i64,
        discussion: &str,
        uuid: &str,
    ) -> Answer {
        self.deliver_hook(NoteAction::Create, author, body, note, discussion, uuid)
            .await
    }

    /// Delivers the Note Hook GitLab sends when a note is edited (`action: update`).
    pub async fn deliver_edit(
        &self,
        author: &str,
        body: &str,
        note: i64,
        discussion: &str,
        uuid: &str,
    ) -> Answer {
        self.deliver_hook(NoteAction::Update, author, body, note, discussion, uuid)
            .await
    }

    async fn deliver_hook(
        &self,
        action: NoteAction,
        author: &str,
        body: &str,
        note: i64,
        discussion: &str,
        uuid: &str,
    ) -> Answer {
        let mut payload = fixture_json("webhooks/gitlab/note_hook.issue.with-discussion_id.json");
        payload["user"]["username"] = json!(author);
        payload["object_attributes"]["note"] = json!(body);
        payload["object_attributes"]["id"] = json!(note);
        payload["object_attributes"]["discussion_id"] = json!(discussion);
        payload["object_attributes"]["url"] = json!(format!(
            "http://example.com/{PROJECT_PATH}/issues/{ISSUE}#note_{note}"
        ));
        payload["object_attributes"]["action"] = json!(match action {
            NoteAction::Create => "create",
            NoteAction::Update => "update",
        });
        // GitLab stamps the note's (edit) time; the fixture's 2015 stamps would lose to any
        // fresher copy of the note. Each delivery is a second later than the one before: an
        // edit's identity carries its stamp at second precision, and two real edits of a note
        // never share one.
        static DELIVERED: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);
        let later = DELIVERED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let stamp = chrono::Utc::now() + chrono::Duration::seconds(later);
        payload["object_attributes"]["updated_at"] = json!(stamp.to_rfc3339());
        payload["issue"]["state"] = json!("opened");
        call(
            &self.app,
            gitlab_request("Note Hook", uuid, serde_json::to_vec(&payload).unwrap()),
        )
        .await
    }

    pub async fn drain(&self) -> Vec<Outcome> {
        self.worker.drain().await.unwrap()
    }

    pub async fn issue_id(&self) -> i64 {
        sqlx::query_scalar("SELECT id FROM issues")
            .fetch_one(&self.pool)
            .await
            .unwrap()
    }

    pub async fn gaps(&self) -> Vec<relay_store::gaps::GapRow> {
        let issue = self.issue_id().await;
        let mut conn = self.pool.acquire().await.unwrap();
        relay_store::gaps::list(&mut conn, IssueId(issue))
            .await
            .unwrap()
    }

    pub async fn pending_events(&self) -> usize {
        let issue = self.issue_id().await;
        let mut conn = self.pool.acquire().await.unwrap();
        relay_store::issues::pending_events(&mut conn, IssueId(issue))
            .await
            .unwrap()
            .len()
    }

    /// Every note the bot wrote on the issue, with its discussion id.
    /// The reporter's `text` in `discussion`, answered by the planner with `set_spec_status`
    /// approved; runs the job and returns the issue's current spec.
    pub async fn approve_spec(
        &self,
        discussion: &str,
        text: &str,
        delivery: &str,
    ) -> relay_store::specs::SpecRow {
        let (_, note) = self.gitlab.seed_note(PROJECT, ISSUE, REPORTER, text, false);
        self.llm.push([ScriptedReply::tool_calls(vec![(
            "submit_actions",
            serde_json::json!({"actions": [{"type": "set_spec_status", "status": "approved", "note": text,
                                "note_id": note.to_string()}]}),
        )])]);
        let answer = self
            .deliver(REPORTER, text, note, discussion, delivery)
            .await;
        assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
        let job = answer.body["job"].as_i64().unwrap();
        assert_eq!(
            self.drain().await,
            vec![relay_worker::Outcome::Succeeded { job_id: JobId(job) }]
        );
        let issue = self.issue_id().await;
        let mut conn = self.pool.acquire().await.unwrap();
        relay_store::specs::current(&mut conn, IssueId(issue))
            .await
            .unwrap()
            .expect("a spec")
    }

    pub fn bot_notes(&self) -> Vec<(String, String)> {
        self.gitlab
            .discussions(PROJECT, ISSUE)
            .into_iter()
            .flat_map(|d| {
                d.notes
                    .into_iter()
                    .filter(|n| n.author == BOT)
                    .map(move |n| (d.id.clone(), n.body))
            })
            .collect()
    }

    /// No secret in any recorded LLM or tracker request.
    pub fn assert_no_secret_leaked(&self) {
        for request in self.llm.requests() {
            let body = request.body.to_string();
            assert!(
                !body.contains(TOKEN) && !body.contains(LLM_KEY),
                "a secret reached the LLM"
            );
        }
        for request in self.gitlab.requests() {
            assert!(
                !request.body.contains(TOKEN) && !request.body.contains(LLM_KEY),
                "a secret in a tracker request body: {}",
                request.body
            );
        }
    }
}

const QUESTION: &str = "Which calls should use the retry count?";

/// The planner replies in `discussion` (the id it is shown in the thread and trigger list).
pub fn ask_script(discussion: &str) -> Vec<ScriptedReply> {
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
                {"type": "post_comment", "reply_to": discussion, "content": "`Config.Retries` exists (config.go:4). Which calls should use it? (gap 1)"},
                {"type": "update_gaps", "add": [{"question": QUESTION, "severity": "blocking", "respondent": "reporter"}]}
            ]}),
        )]),
    ]
}

/// The reporter mentions the bot in a new discussion; the planner explores, asks in that
/// discussion and opens gap 1.
pub async fn mention(h: &GitLabHarness) -> String {
    const BODY: &str = "@relay can retries be configured?";
    let (discussion, note) = h.gitlab.seed_note(PROJECT, ISSUE, REPORTER, BODY, false);
    h.llm.push(ask_script(&discussion));
    let answer = h.deliver(REPORTER, BODY, note, &discussion, "gl-1").await;
    assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
    let job = answer.body["job"].as_i64().unwrap();
    assert_eq!(
        h.drain().await,
        vec![Outcome::Succeeded { job_id: JobId(job) }]
    );
    discussion
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn gitlab_mention_is_answered_in_its_discussion(pool: PgPool) {
    let h = GitLabHarness::start(pool, Vec::new()).await;
    let discussion = mention(&h).await;

    let bot = h.bot_notes();
    assert_eq!(bot.len(), 1, "exactly one reply: {bot:?}");
    assert_eq!(
        bot[0].0, discussion,
        "the reply is in the triggering discussion"
    );
    assert!(bot[0].1.contains("Config.Retries"), "{}", bot[0].1);
    assert_eq!(
        h.gitlab.discussions(PROJECT, ISSUE).len(),
        1,
        "no new discussion was started"
    );

    let gaps = h.gaps().await;
    assert_eq!(gaps.len(), 1);
    assert_eq!(gaps[0].question, QUESTION);
    assert!(gaps[0].is_open());
    assert_eq!(h.pending_events().await, 0, "the watermark was raised");
    assert_eq!(h.llm.requests().len(), 4);
    // The planner was shown the triggering discussion it replied in.
    let first = h.llm.requests()[0].body.to_string();
    assert!(first.contains(&discussion), "{first}");
    h.assert_no_secret_leaked();
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_reporters_answer_closes_the_gap(pool: PgPool) {
    let h = GitLabHarness::start(pool, Vec::new()).await;
    let discussion = mention(&h).await;
    assert_eq!(h.gaps().await.len(), 1);

    // The reporter answers in the same discussion, mentioning the bot.
    const ANSWER: &str = "@relay only the upload calls should retry.";
    // The fake has no seeded replies; the note exists on the issue and the hook names the
    // triggering discussion, as GitLab's does for a reply.
    let (_, note) = h.gitlab.seed_note(PROJECT, ISSUE, REPORTER, ANSWER, false);
    h.llm.push([ScriptedReply::tool_calls(vec![(
        "submit_actions",
        json!({"actions": [
            {"type": "update_gaps", "close": [{"gap": "gap 1", "reason": "answered", "note": ANSWER,
                                                "note_id": note.to_string()}]},
            {"type": "post_comment", "content": "Thanks, noted: only upload calls retry."}
        ]}),
    )])]);
    let answer = h.deliver(REPORTER, ANSWER, note, &discussion, "gl-2").await;
    assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
    let job = answer.body["job"].as_i64().unwrap();
    assert_eq!(
        h.drain().await,
        vec![Outcome::Succeeded { job_id: JobId(job) }]
    );

    let gaps = h.gaps().await;
    assert_eq!(gaps.len(), 1);
    assert_eq!(gaps[0].status, "closed");
    assert_eq!(gaps[0].close_reason.as_deref(), Some("answered"));
    assert_eq!(gaps[0].close_note.as_deref(), Some(ANSWER), "verbatim");
    assert!(gaps[0].closed_by_run.is_some());
    assert_eq!(h.pending_events().await, 0);
    // Two jobs for the same author: the role was looked up once (the Orchestrator's role cache).
    let lookups = h
        .gitlab
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/members/all"))
        .count();
    assert_eq!(
        lookups, 1,
        "one member lookup for two jobs by the same author"
    );
    // The planner saw the answer in its context.
    let last = h.llm.requests().last().unwrap().body.to_string();
    assert!(
        last.contains("only the upload calls should retry"),
        "{last}"
    );
    h.assert_no_secret_leaked();
}
