//! Related repositories end to end on GitLab: the app's `.relay.toml` names the SDK (a project
//! path), the answer is cited from `gitlab-org/sdk:` places verified there and lands in the
//! triggering discussion; a private project named on a public project's issue is refused with its
//! reason and never read.

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

const PROJECT: i64 = 5;
const APP: &str = "gitlab-org/gitlab-test";
const SDK: &str = "gitlab-org/sdk";
const SECRET: &str = "gitlab-org/secret";
const ISSUE: i64 = 17;
const BOT: &str = "relay";
const REPORTER: &str = "root";
const TOKEN: &str = "glpat-related-token";
const SECRET_LINE: &str = "salt := \"gl-do-not-quote-51c\"";

fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    for (file, text) in files {
        std::fs::write(dir.path().join(file), text).unwrap();
    }
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-qm", "files"]);
    dir
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_gitlab_answer_in_the_sdk_is_cited_from_it_and_a_private_project_is_refused(
    pool: PgPool,
) {
    let app = repo(&[
        ("main.go", "package main\n\nfunc main() {}\n"),
        (".relay.toml", &format!("related = [{SDK:?}, {SECRET:?}]\n")),
    ]);
    let sdk = repo(&[(
        "client.go",
        "package sdk\n\n// Retry is how often a call is tried again.\nconst Retry = 3\n",
    )]);
    let secret = repo(&[("salt.go", &format!("package secret\n\n{SECRET_LINE}\n"))]);
    let gitlab = FakeGitLab::start().await;
    gitlab.seed_issue(
        PROJECT,
        APP,
        ISSUE,
        "Retries",
        "How often is a call retried?",
    );
    gitlab.seed_project(PROJECT, APP, "public");
    gitlab.seed_project(6, SDK, "public");
    gitlab.seed_project(7, SECRET, "private");
    gitlab.set_member(PROJECT, REPORTER, 40);
    const BODY: &str = "@relay how often is a call retried?";
    let (discussion, note) = gitlab.seed_note(PROJECT, ISSUE, REPORTER, BODY, false);
    let llm = ScriptedLlm::start(vec![
        ScriptedReply::tool_calls(vec![(
            "explore",
            json!({"query": "how often is a call retried?", "thoroughness": "quick"}),
        )]),
        ScriptedReply::tool_calls(vec![("grep", json!({"pattern": "Retry", "repo": SDK}))]),
        ScriptedReply::tool_calls(vec![(
            "submit_report",
            json!({"answer": "The SDK's Retry (3)", "confidence": "high",
                   "evidence": [{"path": format!("{SDK}:client.go"), "start_line": 4, "end_line": 4, "quote": "const Retry = 3"}]}),
        )]),
        ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [
                {"type": "post_comment", "reply_to": discussion, "content": format!("Three tries ({SDK}:client.go:4).")},
                {"type": "update_findings", "add": [{"synthesis": "The SDK retries a call 3 times.",
                  "sources": [{"path": format!("{SDK}:client.go"), "start_line": 4, "end_line": 4, "quote": "const Retry = 3"}]}]}
            ]}),
        )]),
    ])
    .await;

    let tracker_settings = gitlab.settings(TOKEN, BOT);
    let llm_settings: LlmSettings = toml::from_str(&format!(
        "[default]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\napi_key = \"k\"\nmax_retries = 0\n",
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
    let specs = RepoSpecs::new(&trackers())
        .with_local("gitlab", APP, app.path().to_path_buf())
        .with_local("gitlab", SDK, sdk.path().to_path_buf())
        .with_local("gitlab", SECRET, secret.path().to_path_buf());
    let registry = relay_worker::jobs::registry(&JobDeps {
        repos: Arc::new(repos),
        specs: Arc::new(specs),
        codegraph: None,
        orchestrator: Some(Arc::new(Orchestrator {
            trackers: clients,
            tracker_settings: vec![tracker_settings],
            llm: llm_settings,
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
    let gateway = relay_gateway::app(state(pool.clone()));

    let mut payload = fixture_json("webhooks/gitlab/note_hook.issue.with-discussion_id.json");
    payload["user"]["username"] = json!(REPORTER);
    payload["project"]["visibility_level"] = json!(20);
    payload["object_attributes"]["note"] = json!(BODY);
    payload["object_attributes"]["id"] = json!(note);
    payload["object_attributes"]["discussion_id"] = json!(discussion);
    payload["object_attributes"]["updated_at"] = json!(chrono::Utc::now().to_rfc3339());
    payload["issue"]["state"] = json!("opened");
    let answer = call(
        &gateway,
        gitlab_request(
            "Note Hook",
            "gl-related-1",
            serde_json::to_vec(&payload).unwrap(),
        ),
    )
    .await;
    assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
    let outcomes = worker.drain().await.unwrap();
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o, Outcome::Succeeded { .. })),
        "{outcomes:?}"
    );

    let replies: Vec<(String, String)> = gitlab
        .discussions(PROJECT, ISSUE)
        .into_iter()
        .flat_map(|d| {
            d.notes
                .into_iter()
                .filter(|n| n.author == BOT)
                .map(move |n| (d.id.clone(), n.body))
        })
        .collect();
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert_eq!(replies[0].0, discussion, "in the triggering discussion");
    assert!(
        replies[0].1.contains("gitlab-org/sdk:client.go:4"),
        "{}",
        replies[0].1
    );

    let sdk_head = git(sdk.path(), &["rev-parse", "HEAD"]);
    let sources: Vec<(String, String)> =
        sqlx::query_as("SELECT path, commit_sha FROM finding_sources")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(sources, [("gitlab-org/sdk:client.go".to_owned(), sdk_head)]);

    let verdicts: Vec<(String, bool, Option<String>)> = sqlx::query_as(
        "SELECT related_path, admitted, reason FROM related_repositories ORDER BY position",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(verdicts.len(), 2, "{verdicts:?}");
    assert_eq!((verdicts[0].0.as_str(), verdicts[0].1), (SDK, true));
    assert_eq!((verdicts[1].0.as_str(), verdicts[1].1), (SECRET, false));
    assert!(
        verdicts[1]
            .2
            .as_deref()
            .unwrap_or_default()
            .contains("private"),
        "{verdicts:?}"
    );
    for request in llm.requests() {
        let body = request.body.to_string();
        assert!(
            !body.contains("gl-do-not-quote-51c"),
            "the private line reached a prompt"
        );
        assert!(!body.contains(TOKEN), "the token reached a prompt");
    }
}
