//! The reconciler end to end: real Postgres, the local GitHub and GitLab servers, the gateway, the
//! worker with the orchestrator and the scripted LLM. A mention whose webhook never arrives is
//! found by a pass and answered exactly once; the lost webhook arriving later (a new delivery id)
//! is the same event; the webhook first and a pass afterwards is one event too; who may engage is
//! decided as for a webhook; an idle pass costs at most two calls per project, and a failing
//! project does not hold the others back.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use relay_agent::agent_settings::AgentSettings;
use relay_agent::llm::LlmSettings;
use relay_agent::llm::scripted::ScriptedLlm;
use relay_core::engage::Decision;
use relay_tracker::Trackers;
use relay_tracker::fake::{Failure, FakeGitHub};
use relay_worker::jobs::orchestrator::brain::Brain;
use relay_worker::jobs::{JobDeps, RepoSpecs};
use relay_worker::reconcile::{PassOptions, ReconcileSettings, Reconciler};
use relay_worker::{Outcome, Worker};
use serde_json::json;
use sqlx::PgPool;

use crate::helpers::*;
use crate::orchestrator::happy_script;
use crate::orchestrator_gitlab::{self as gl, GitLabHarness};
use crate::queue::settings;

pub const REPO: &str = "Codertocat/Hello-World";
const TOKEN: &str = "ghs_reconcile_token";
const LLM_KEY: &str = "sk-reconcile-llm-key";
const MENTION: &str = "@relay-bot can retries be configured?";

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

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
            brain: Some(Arc::new(Brain {
                trackers: clients.clone(),
                tracker_settings: vec![tracker.clone()],
                llm: llm_settings,
                agent: AgentSettings::default(),
                tools: Default::default(),
                codegraph: None,
                roles: Default::default(),
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

async fn jobs(pool: &PgPool) -> i64 {
    count(pool, "jobs").await
}

async fn origins(pool: &PgPool) -> Vec<(String, String, String)> {
    sqlx::query_as("SELECT origin, outcome, reason FROM deliveries ORDER BY id")
        .fetch_all(pool)
        .await
        .unwrap()
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_lost_github_mention_is_answered_once_and_its_late_webhook_is_a_duplicate(pool: PgPool) {
    let h = GitHubHarness::start(pool.clone()).await;
    h.see_issue_opened().await;
    // The mention is made; its webhook never arrives.
    let comment = h.github.seed_comment(REPO, 1, "Codertocat", MENTION);

    let report = h.pass().await;
    let events: Vec<_> = report.projects.iter().flat_map(|p| &p.events).collect();
    assert_eq!(events.len(), 1, "{report:?}");
    assert_eq!(events[0].decision, Decision::Engage("mention"));
    let job = events[0].recorded.flatten().expect("a job");
    assert_eq!(
        h.worker.drain().await.unwrap(),
        vec![Outcome::Succeeded { job_id: job }]
    );
    let bot = h.bot_comments();
    assert_eq!(bot.len(), 1, "exactly one reply: {bot:?}");
    assert!(bot[0].contains("Config.Retries"), "{}", bot[0]);
    assert_eq!(
        origins(&pool).await,
        vec![
            ("webhook".into(), "ignored".into(), "not_engaged".into()),
            ("reconcile".into(), "accepted".into(), "mention".into()),
        ]
    );

    // The next pass finds the bot's own reply (recorded, never engaging) and nothing to answer.
    let jobs_before = jobs(&pool).await;
    let report = h.pass().await;
    for event in report.projects.iter().flat_map(|p| &p.events) {
        assert_eq!(
            event.decision,
            Decision::Ignore("authored_by_bot"),
            "{event:?}"
        );
    }
    // The lost webhook arrives after all (a manual redelivery: a new delivery id).
    let late = h
        .deliver_comment(comment, "Codertocat", MENTION, "late-redelivery")
        .await;
    assert_eq!(
        (late.status.as_u16(), late.outcome()),
        (200, "duplicate"),
        "{:?}",
        late.body
    );
    assert_eq!(jobs(&pool).await, jobs_before, "no new job");
    assert!(h.worker.drain().await.unwrap().is_empty());
    assert_eq!(h.bot_comments().len(), 1, "still exactly one reply");
    assert_eq!(h.llm.requests().len(), 4, "one planner run");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn webhook_first_then_the_reconciler_sees_the_same_comment(pool: PgPool) {
    let h = GitHubHarness::start(pool.clone()).await;
    h.see_issue_opened().await;
    let comment = h.github.seed_comment(REPO, 1, "Codertocat", MENTION);
    let answer = h
        .deliver_comment(comment, "Codertocat", MENTION, "on-time")
        .await;
    assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
    h.worker.drain().await.unwrap();
    assert_eq!(h.bot_comments().len(), 1);
    let jobs_before = jobs(&pool).await;

    let report = h.pass().await;
    let engaged: Vec<_> = report
        .projects
        .iter()
        .flat_map(|p| &p.events)
        .filter(|e| matches!(e.decision, Decision::Engage(_)))
        .collect();
    assert!(
        engaged.is_empty(),
        "the mention was seen already: {report:?}"
    );
    // Even asked again from the start, the mention is the event the webhook recorded.
    let again = h
        .reconciler
        .pass(PassOptions {
            dry_run: false,
            since: Some(chrono::Duration::hours(1)),
        })
        .await
        .unwrap();
    assert!(
        again
            .projects
            .iter()
            .flat_map(|p| &p.events)
            .all(|e| e.recorded.is_none()),
        "{again:?}"
    );
    assert_eq!(jobs(&pool).await, jobs_before, "nothing enqueued twice");
    assert!(h.worker.drain().await.unwrap().is_empty());
    assert_eq!(h.bot_comments().len(), 1, "nothing answered twice");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_reconciled_mention_by_someone_who_may_not_engage_is_ignored(pool: PgPool) {
    let h = GitHubHarness::start(pool.clone()).await;
    h.see_issue_opened().await;
    // mallory has no role on the repository.
    h.github.seed_comment(REPO, 1, "mallory", MENTION);
    let report = h.pass().await;
    let events: Vec<_> = report.projects.iter().flat_map(|p| &p.events).collect();
    assert_eq!(events.len(), 1);
    // Recorded as a webhook's would be; the worker's role check decides, as for a webhook.
    let job = events[0]
        .recorded
        .flatten()
        .expect("a job, as a webhook's mention gets");
    assert_eq!(
        h.worker.drain().await.unwrap(),
        vec![Outcome::Succeeded { job_id: job }]
    );
    assert!(h.llm.requests().is_empty(), "no LLM call");
    assert!(h.bot_comments().is_empty(), "no reply");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_dry_run_records_nothing_and_moves_no_watermark(pool: PgPool) {
    let h = GitHubHarness::start(pool.clone()).await;
    h.see_issue_opened().await;
    h.github.seed_comment(REPO, 1, "Codertocat", MENTION);
    let deliveries = count(&pool, "deliveries").await;
    let report = h
        .reconciler
        .pass(PassOptions {
            dry_run: true,
            since: None,
        })
        .await
        .unwrap();
    let events: Vec<_> = report.projects.iter().flat_map(|p| &p.events).collect();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].decision, Decision::Engage("mention"));
    assert_eq!(events[0].recorded, None);
    assert_eq!(count(&pool, "deliveries").await, deliveries);
    assert_eq!(jobs(&pool).await, 0);
    let states = relay_store::reconcile::list(&pool).await.unwrap();
    assert!(states.iter().all(|s| s.watermark.is_none()), "{states:?}");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_lost_gitlab_mention_is_answered_in_its_discussion(pool: PgPool) {
    let h = GitLabHarness::start(pool.clone(), Vec::new()).await;
    // Relay sees the issue through a note that does not mention the bot.
    let (d0, n0) = h
        .gitlab
        .seed_note(gl::PROJECT, gl::ISSUE, gl::REPORTER, "first!", false);
    let answer = h.deliver(gl::REPORTER, "first!", n0, &d0, "gl-seen").await;
    assert_eq!(answer.outcome(), "ignored", "{:?}", answer.body);

    // The mention, in its own discussion; its Note Hook never arrives.
    const BODY: &str = "@relay can retries be configured?";
    let (discussion, note) = h
        .gitlab
        .seed_note(gl::PROJECT, gl::ISSUE, gl::REPORTER, BODY, false);
    h.llm.push(gl::ask_script(&discussion));
    let tracker = h.gitlab.settings("glpat-reconcile", gl::BOT);
    let mut clients = Trackers::default();
    clients.insert(
        tracker.name.clone(),
        relay_tracker::build(&tracker).unwrap(),
    );
    let reconciler = Reconciler::new(
        pool.clone(),
        clients,
        vec![tracker],
        ReconcileSettings::default(),
        3,
    );
    let report = reconciler.pass(PassOptions::default()).await.unwrap();
    let engaged: Vec<_> = report
        .projects
        .iter()
        .flat_map(|p| &p.events)
        .filter(|e| e.decision == Decision::Engage("mention"))
        .collect();
    assert_eq!(engaged.len(), 1, "{report:?}");
    let job = engaged[0].recorded.flatten().unwrap();
    assert_eq!(h.drain().await, vec![Outcome::Succeeded { job_id: job }]);
    let bot = h.bot_notes();
    assert_eq!(bot.len(), 1, "exactly one reply: {bot:?}");
    assert_eq!(
        bot[0].0, discussion,
        "the reply is in the mention's discussion"
    );

    // The lost Note Hook arrives afterwards with a new UUID: the same event.
    let late = h
        .deliver(gl::REPORTER, BODY, note, &discussion, "gl-late")
        .await;
    assert_eq!(
        (late.status.as_u16(), late.outcome()),
        (200, "duplicate"),
        "{:?}",
        late.body
    );
    assert!(h.drain().await.is_empty());
    assert_eq!(h.bot_notes().len(), 1, "still exactly one reply");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn an_idle_pass_costs_at_most_two_calls_per_project_and_a_failure_holds_no_one_back(
    pool: PgPool,
) {
    const PROJECTS: usize = 500;
    const FAILING: &str = "org/repo-7";
    let github = FakeGitHub::start().await;
    let mut tracker = github.settings(TOKEN, "relay-bot");
    let listed: Vec<String> = (0..PROJECTS).map(|i| format!("org/repo-{i}")).collect();
    tracker.projects = Some(listed.clone());
    let mut clients = Trackers::default();
    clients.insert(
        tracker.name.clone(),
        relay_tracker::build(&tracker).unwrap(),
    );
    let reconciler = Reconciler::new(
        pool.clone(),
        clients,
        vec![tracker],
        ReconcileSettings::default(),
        3,
    );
    github.fail_next(
        "GET",
        &format!("/repos/{FAILING}/issues/comments"),
        1,
        Failure::Status(500),
    );

    let report = reconciler.pass(PassOptions::default()).await.unwrap();
    assert_eq!(report.projects.len(), PROJECTS);
    let failed: Vec<_> = report
        .projects
        .iter()
        .filter(|p| p.error.is_some())
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].project_path, FAILING);

    // Calls per project when nothing changed.
    let mut calls = std::collections::HashMap::<String, usize>::new();
    for request in github.requests() {
        let project: Vec<&str> = request.path.split('/').skip(2).take(2).collect();
        *calls.entry(project.join("/")).or_default() += 1;
    }
    assert_eq!(calls.len(), PROJECTS, "every project asked");
    for project in &listed {
        if project != FAILING {
            assert_eq!(calls[project], 2, "{project}");
        }
    }

    let states = relay_store::reconcile::list(&pool).await.unwrap();
    assert_eq!(states.len(), PROJECTS);
    for state in &states {
        if state.project_path == FAILING {
            assert!(
                state.watermark.is_none(),
                "a failed project keeps its watermark"
            );
            assert!(
                state.last_error.as_deref().unwrap_or("").contains("500"),
                "{state:?}"
            );
        } else {
            assert!(state.watermark.is_some(), "{state:?}");
            assert!(state.last_error.is_none());
        }
    }

    // The next pass retries the failed project (the fake answers again) and asks the others from
    // their watermark minus the overlap.
    let report = reconciler.pass(PassOptions::default()).await.unwrap();
    assert!(report.projects.iter().all(|p| p.error.is_none()));
    for project in &report.projects {
        let state = states
            .iter()
            .find(|s| s.project_path == project.project_path)
            .unwrap();
        match state.watermark {
            Some(mark) => assert_eq!(project.since, mark - chrono::Duration::seconds(120)),
            // Never succeeded: still the first pass's look-back.
            None => assert_eq!(
                project.since,
                state.first_seen_at - chrono::Duration::hours(24)
            ),
        }
    }
    let states = relay_store::reconcile::list(&pool).await.unwrap();
    assert!(states.iter().all(|s| s.watermark.is_some()));
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn one_pass_at_a_time_per_database(pool: PgPool) {
    let held = relay_store::reconcile::try_lock(&pool)
        .await
        .unwrap()
        .expect("free");
    assert!(
        relay_store::reconcile::try_lock(&pool)
            .await
            .unwrap()
            .is_none()
    );
    let h = GitHubHarness::start(pool.clone()).await;
    let report = h.reconciler.pass(PassOptions::default()).await.unwrap();
    assert!(report.locked_out);
    held.release().await.unwrap();
    assert!(!h.pass().await.locked_out);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_replayed_signed_body_with_a_new_delivery_id_is_a_duplicate(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    let mut payload = fixture_json("webhooks/github/issue_comment.created.on-issue.json");
    payload["comment"]["body"] = json!("@relay-bot please look");
    let body = serde_json::to_vec(&payload).unwrap();
    let first = call(
        &app,
        github_request("issue_comment", "guid-1", body.clone()),
    )
    .await;
    assert_eq!(first.outcome(), "accepted", "{:?}", first.body);
    let replay = call(&app, github_request("issue_comment", "guid-2", body)).await;
    assert_eq!(
        (replay.status.as_u16(), replay.outcome()),
        (200, "duplicate")
    );
    assert_eq!(count(&pool, "jobs").await, 1, "no new job");
    assert_eq!(count(&pool, "deliveries").await, 1);
    // An edit of that comment is a new event (its own stamp), decided as edits are.
    payload["action"] = json!("edited");
    payload["comment"]["updated_at"] = json!("2030-01-01T00:00:00Z");
    payload["comment"]["body"] = json!("@relay-bot please look (typo)");
    payload["changes"] = json!({"body": {"from": "@relay-bot please look"}});
    let edit = call(
        &app,
        github_request(
            "issue_comment",
            "guid-3",
            serde_json::to_vec(&payload).unwrap(),
        ),
    )
    .await;
    assert_eq!(
        (edit.outcome(), edit.reason()),
        ("ignored", "edit_without_new_mention")
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_projects_allow_list_ignores_other_projects(pool: PgPool) {
    let mut trackers = trackers();
    trackers[0].projects = Some(vec!["octo-org/allowed".into()]);
    let app = relay_gateway::app(relay_gateway::AppState::new(
        pool.clone(),
        trackers,
        relay_gateway::ServerSettings::default(),
        3,
    ));
    let mut payload = fixture_json("webhooks/github/issue_comment.created.on-issue.json");
    payload["comment"]["body"] = json!("@relay-bot please look");
    let answer = call(
        &app,
        github_request(
            "issue_comment",
            "al-1",
            serde_json::to_vec(&payload).unwrap(),
        ),
    )
    .await;
    assert_eq!(
        (answer.outcome(), answer.reason()),
        ("ignored", "project_not_allowed")
    );
    assert_eq!(count(&pool, "jobs").await, 0);
    assert_eq!(count(&pool, "issues").await, 0);
    payload["repository"]["full_name"] = json!("Octo-Org/Allowed");
    let answer = call(
        &app,
        github_request(
            "issue_comment",
            "al-2",
            serde_json::to_vec(&payload).unwrap(),
        ),
    )
    .await;
    assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
}
