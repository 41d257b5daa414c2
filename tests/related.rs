//! Related repositories end to end: the app's `.relay.toml` names the SDK, a mention's answer is in
//! the SDK, the explorer reads it through the `repo` argument, the reply and the finding cite
//! `acme/sdk:` places the Validator verified against the SDK's checkout; a name that may not be
//! admitted is refused with its reason and nothing of that repository reaches the model; the
//! project API shows every verdict.

use std::path::Path;
use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use relay_agent::agent_settings::AgentSettings;
use relay_agent::llm::LlmSettings;
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_gateway::ApiSettings;
use relay_tracker::Trackers;
use relay_tracker::fake::FakeGitHub;
use relay_worker::jobs::orchestrator::Orchestrator;
use relay_worker::jobs::reindex::CodegraphIndexing;
use relay_worker::jobs::{JobDeps, RepoSpecs};
use relay_worker::{Outcome, Worker};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::helpers::*;
use crate::queue::settings;

const APP: &str = "acme/app";
const SDK: &str = "acme/sdk";
const SECRET_LIB: &str = "acme/secret-lib";
const TOKEN: &str = "ghs_related_token";
const API_TOKEN: &str = "related-api-token";
/// A line of the private library: it must never reach a prompt.
const SECRET_LINE: &str = "const internalSigningSalt = \"do-not-quote-7d1e\"";

const SDK_CLIENT: &str = "package sdk\n\n// Retry is how often a call is tried again.\nconst Retry = 3\n\nfunc Call() error { return nil }\n";

fn commit_file(dir: &Path, file: &str, text: &str) -> String {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", file]);
    git(dir, &["rev-parse", "HEAD"])
}

fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    for (file, text) in files {
        commit_file(dir.path(), file, text);
    }
    dir
}

/// Whether the jobs have a code graph.
#[derive(Debug, Clone, Copy)]
enum Graph {
    None,
    Memory,
}

struct World {
    pool: PgPool,
    github: FakeGitHub,
    llm: ScriptedLlm,
    worker: Worker,
    app: axum::Router,
    sdk: tempfile::TempDir,
    _repos: Vec<tempfile::TempDir>,
    _data: tempfile::TempDir,
}

impl World {
    /// The app names `related`; the SDK is public, the secret library private; the issue's
    /// repository is public (its webhook says so).
    async fn new(pool: PgPool, related: &[&str], script: Vec<ScriptedReply>) -> World {
        World::build(
            pool,
            related,
            script,
            &[("main.go", "package main\n\nfunc main() {}\n")],
            &[
                ("client.go", SDK_CLIENT),
                // The SDK's own configuration excludes its vendored copy.
                (".relay.toml", "exclude = [\"vendor/\"]\n"),
                ("vendor/old/client.go", "package old\n\nconst Retry = 9\n"),
            ],
            Graph::None,
        )
        .await
    }

    /// [`World::new`] with the app's and the SDK's files and, with [`Graph::Memory`], a code
    /// graph store the jobs index both into.
    async fn build(
        pool: PgPool,
        related: &[&str],
        script: Vec<ScriptedReply>,
        app_files: &[(&str, &str)],
        sdk_files: &[(&str, &str)],
        graph: Graph,
    ) -> World {
        let names: Vec<String> = related.iter().map(|r| format!("{r:?}")).collect();
        let config = format!("related = [{}]\n", names.join(", "));
        let mut files = app_files.to_vec();
        files.push((".relay.toml", &config));
        let app = repo(&files);
        let sdk = repo(sdk_files);
        let secret = repo(&[("salt.go", &format!("package lib\n\n{SECRET_LINE}\n"))]);
        let github = FakeGitHub::start().await;
        github.seed_issue(APP, 1, "Retries", "How often is a call retried?");
        github.set_repo_visibility(APP, "public");
        github.set_repo_visibility(SDK, "public");
        github.set_repo_visibility(SECRET_LIB, "private");
        github.set_repo_visibility("outside/lib", "public");
        github.set_permission(APP, "alice", "admin");
        let mut tracker_settings = github.settings(TOKEN, "relay-bot");
        // `acme/nowhere` is allowed but unknown to the tracker; `outside/lib` is known, not allowed.
        tracker_settings.projects = Some(vec![
            APP.into(),
            SDK.into(),
            SECRET_LIB.into(),
            "acme/nowhere".into(),
        ]);
        let llm = ScriptedLlm::start(script).await;
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
            .with_local("github", APP, app.path().to_path_buf())
            .with_local("github", SDK, sdk.path().to_path_buf())
            .with_local("github", SECRET_LIB, secret.path().to_path_buf());
        let codegraph = match graph {
            Graph::None => None,
            Graph::Memory => Some(Arc::new(CodegraphIndexing::new(
                Arc::new(relay_codegraph::store::memory::MemoryStore::new()),
                4,
            ))),
        };
        let registry = relay_worker::jobs::registry(&JobDeps {
            repos: Arc::new(repos),
            specs: Arc::new(specs),
            codegraph: codegraph.clone(),
            orchestrator: Some(Arc::new(Orchestrator {
                trackers: clients,
                tracker_settings: vec![tracker_settings],
                llm: llm_settings,
                agent: AgentSettings {
                    summary_comment: false,
                    ..AgentSettings::default()
                },
                tools: Default::default(),
                codegraph,
                roles: Default::default(),
                prices: Default::default(),
            })),
        });
        let worker = Worker::new(pool.clone(), registry, settings());
        let gateway = relay_gateway::app(state(pool.clone()).with_api(ApiSettings {
            token: Some(API_TOKEN.to_owned().into()),
        }));
        World {
            pool,
            github,
            llm,
            worker,
            app: gateway,
            sdk,
            _repos: vec![app, secret],
            _data: data,
        }
    }

    /// `alice` (admin) mentions the bot; the signed webhook goes through the gateway and the job
    /// runs to success.
    async fn mention(&self, text: &str) {
        let comment = self.github.seed_comment(APP, 1, "alice", text);
        let mut payload = fixture_json("webhooks/github/issue_comment.created.on-issue.json");
        payload["repository"]["id"] = json!(77);
        payload["repository"]["full_name"] = json!(APP);
        payload["repository"]["name"] = json!("app");
        payload["repository"]["owner"]["login"] = json!("acme");
        payload["repository"]["private"] = json!(false);
        payload["repository"]["visibility"] = json!("public");
        payload["issue"]["number"] = json!(1);
        payload["comment"]["id"] = json!(comment);
        payload["comment"]["body"] = json!(text);
        payload["comment"]["user"]["login"] = json!("alice");
        payload["sender"]["login"] = json!("alice");
        let answer = call(
            &self.app,
            github_request(
                "issue_comment",
                &format!("related-{comment}"),
                serde_json::to_vec(&payload).unwrap(),
            ),
        )
        .await;
        assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
        let outcomes = self.worker.drain().await.unwrap();
        let errors: Vec<Option<String>> = sqlx::query_scalar("SELECT last_error FROM jobs")
            .fetch_all(&self.pool)
            .await
            .unwrap();
        assert!(
            outcomes
                .iter()
                .all(|o| matches!(o, Outcome::Succeeded { .. })),
            "{outcomes:?} {errors:?}; the model's last request: {}",
            self.llm
                .requests()
                .last()
                .map(|r| r.body["messages"]
                    .as_array()
                    .and_then(|m| m.last())
                    .cloned()
                    .unwrap_or_default()
                    .to_string())
                .unwrap_or_default()
        );
    }

    async fn api(&self, path: &str) -> Value {
        let request = Request::get(path)
            .header("authorization", format!("Bearer {API_TOKEN}"))
            .body(Body::empty())
            .unwrap();
        let answer = call(&self.app, request).await;
        assert!(answer.status.is_success(), "{path}: {:?}", answer.body);
        answer.body
    }

    fn bot_comments(&self) -> Vec<String> {
        self.github
            .comments(APP, 1)
            .into_iter()
            .filter(|c| c.author == "relay-bot")
            .map(|c| c.body)
            .collect()
    }

    /// A push of the SDK's default branch at `commit` through the gateway; every job runs.
    async fn push_sdk(&self, delivery: &str, commit: &str) {
        let request = github_request(
            "push",
            delivery,
            serde_json::to_vec(&json!({
                "ref": "refs/heads/main", "before": "0000000000000000000000000000000000000000",
                "after": commit, "created": false, "deleted": false, "forced": false,
                "repository": { "id": 78, "full_name": SDK, "default_branch": "main" },
                "pusher": { "name": "alice" }, "sender": { "login": "alice", "type": "User" }
            }))
            .unwrap(),
        );
        let answer = call(&self.app, request).await;
        assert_eq!(answer.reason(), "default_branch_push", "{:?}", answer.body);
        let outcomes = self.worker.drain().await.unwrap();
        assert!(
            outcomes
                .iter()
                .all(|o| matches!(o, Outcome::Succeeded { .. })),
            "{outcomes:?}"
        );
    }

    async fn finding_source(&self) -> Value {
        let issue_id: i64 = sqlx::query_scalar("SELECT id FROM issues")
            .fetch_one(&self.pool)
            .await
            .unwrap();
        let issue = self.api(&format!("/api/issues/{issue_id}")).await;
        issue["findings"][0]["sources"][0].clone()
    }

    fn sdk_head(&self) -> String {
        git(self.sdk.path(), &["rev-parse", "HEAD"])
    }
}

fn answer_in_the_sdk() -> Vec<ScriptedReply> {
    vec![
        ScriptedReply::tool_calls(vec![(
            "explore",
            json!({"query": "how often is a call retried?", "thoroughness": "quick"}),
        )]),
        ScriptedReply::tool_calls(vec![("grep", json!({"pattern": "Retry", "repo": SDK}))]),
        ScriptedReply::tool_calls(vec![(
            "submit_report",
            json!({"answer": "The SDK's Retry constant (3)", "confidence": "high",
                   "evidence": [{"path": format!("{SDK}:client.go"), "start_line": 4, "end_line": 4, "quote": "const Retry = 3"}]}),
        )]),
        ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [
                {"type": "post_comment", "content": format!("A call is tried again `Retry` times, 3 ({SDK}:client.go:4).")},
                {"type": "update_findings", "add": [{"synthesis": "The SDK retries a call 3 times.",
                  "sources": [{"path": format!("{SDK}:client.go"), "start_line": 4, "end_line": 4, "quote": "const Retry = 3"}]}]}
            ]}),
        )]),
    ]
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn an_answer_in_the_sdk_is_cited_from_the_sdk_and_verified_there(pool: PgPool) {
    let world = World::new(pool, &[SDK], answer_in_the_sdk()).await;
    // The app also depends on a library of the same tracker it does not name.
    commit_file(
        world._repos[0].path(),
        "requirements.txt",
        &format!(
            "requests==2.31\ngit+{}/acme/lib.git@v1#egg=lib\n",
            world.github.base_url()
        ),
    );
    world
        .mention("@relay-bot how often is a call retried?")
        .await;

    let comments = world.bot_comments();
    assert_eq!(comments.len(), 1, "{comments:?}");
    assert!(
        comments[0].contains("acme/sdk:client.go:4"),
        "{}",
        comments[0]
    );
    // The explorer's grep ran in the SDK and said so with the SDK's places.
    let requests = world.llm.requests();
    let grep_result = requests
        .iter()
        .map(|r| r.body.to_string())
        .find(|body| body.contains("const Retry = 3"))
        .expect("the SDK's line reached the explorer");
    assert!(grep_result.contains("acme/sdk:client.go"), "{grep_result}");
    assert!(
        !grep_result.contains("Retry = 9"),
        "the SDK's excluded vendor/ was searched: {grep_result}"
    );

    // The finding's source is the SDK's place at the SDK's commit.
    let issue_id: i64 = sqlx::query_scalar("SELECT id FROM issues")
        .fetch_one(&world.pool)
        .await
        .unwrap();
    let issue = world.api(&format!("/api/issues/{issue_id}")).await;
    let findings = issue["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{issue}");
    let source = &findings[0]["sources"][0];
    assert_eq!(source["path"], "acme/sdk:client.go", "{source}");
    assert_eq!(source["commit_sha"], world.sdk_head(), "{source}");

    // The project shows the SDK admitted at the commit explored.
    let project = world.api("/api/projects/github/77").await;
    let related = project["related"].as_array().unwrap();
    assert_eq!(related.len(), 2, "{project}");
    assert_eq!(related[0]["related_path"], SDK);
    assert_eq!(related[0]["admitted"], true);
    assert_eq!(related[0]["head_commit"], world.sdk_head());
    // Suggested from the dependency, never admitted.
    assert_eq!(related[1]["related_path"], "acme/lib", "{project}");
    assert_eq!(related[1]["source"], "suggested");
    assert_eq!(related[1]["admitted"], false);
    assert!(
        related[1]["reason"]
            .as_str()
            .unwrap()
            .contains("depends on it"),
        "{project}"
    );
    // The job says what it explored beside the issue's own repository (the issue page lists it).
    let explored: Vec<Option<Vec<String>>> =
        sqlx::query_scalar("SELECT explored_related FROM jobs")
            .fetch_all(&world.pool)
            .await
            .unwrap();
    assert_eq!(explored, [Some(vec![SDK.to_owned()])]);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_name_that_may_not_be_admitted_is_refused_with_its_reason_and_never_read(pool: PgPool) {
    // The model asks for the private library anyway: the tool refuses without reading it.
    let script = vec![
        ScriptedReply::tool_calls(vec![(
            "explore",
            json!({"query": "where is the signing salt?", "thoroughness": "quick"}),
        )]),
        ScriptedReply::tool_calls(vec![(
            "grep",
            json!({"pattern": "Salt", "repo": SECRET_LIB}),
        )]),
        ScriptedReply::tool_calls(vec![(
            "submit_report",
            json!({"answer": "not found", "confidence": "low", "evidence": []}),
        )]),
        ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [
                {"type": "post_comment", "content": "I could not find the signing salt in this repository."}
            ]}),
        )]),
    ];
    let world = World::new(
        pool,
        &[
            SECRET_LIB,
            "outside/lib",
            "acme/nowhere",
            "https://github.com/acme/sdk",
            APP,
        ],
        script,
    )
    .await;
    world.mention("@relay-bot where is the signing salt?").await;

    let project = world.api("/api/projects/github/77").await;
    let related = project["related"].as_array().unwrap();
    let verdicts: Vec<(String, bool, String)> = related
        .iter()
        .map(|r| {
            (
                r["related_path"].as_str().unwrap().to_owned(),
                r["admitted"].as_bool().unwrap(),
                r["reason"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(verdicts.len(), 5, "{verdicts:?}");
    assert!(
        verdicts.iter().all(|(_, admitted, _)| !admitted),
        "{verdicts:?}"
    );
    assert!(verdicts[0].2.contains("private"), "{verdicts:?}");
    assert!(verdicts[1].2.contains("allow-list"), "{verdicts:?}");
    assert!(verdicts[2].2.contains("does not know it"), "{verdicts:?}");
    assert!(
        verdicts[3].2.contains("not a repository path"),
        "{verdicts:?}"
    );
    assert!(verdicts[4].2.contains("own repository"), "{verdicts:?}");

    let requests = world.llm.requests();
    let refused = requests
        .iter()
        .map(|r| r.body.to_string())
        .find(|body| body.contains("is not related to this issue"))
        .expect("the tool's refusal reached the explorer");
    assert!(
        refused.contains("this issue has no related repositories"),
        "{refused}"
    );
    for request in &requests {
        let body = request.body.to_string();
        assert!(
            !body.contains("do-not-quote-7d1e"),
            "the private line reached a prompt"
        );
    }
    let comments = world.bot_comments();
    assert_eq!(comments.len(), 1, "{comments:?}");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_push_to_the_sdk_re_anchors_then_stales_the_apps_finding(pool: PgPool) {
    let world = World::new(pool, &[SDK], answer_in_the_sdk()).await;
    world
        .mention("@relay-bot how often is a call retried?")
        .await;
    let first = world.sdk_head();
    assert_eq!(world.finding_source().await["commit_sha"], first);

    // Two lines inserted above the cited one: the finding follows it to line 6.
    let second = commit_file(
        world.sdk.path(),
        "client.go",
        &SDK_CLIENT.replace("package sdk\n", "package sdk\n\n// Calls.\n"),
    );
    world.push_sdk("sdk-push-1", &second).await;
    let source = world.finding_source().await;
    assert_eq!(source["path"], "acme/sdk:client.go", "{source}");
    assert_eq!(source["start_line"], 6, "{source}");
    assert_eq!(source["status"], "verified", "{source}");
    assert_eq!(source["commit_sha"], second, "{source}");
    assert_eq!(
        source["moved_from"]["path"], "acme/sdk:client.go",
        "{source}"
    );

    // The cited constant removed: the finding goes stale, keeping its last good commit.
    let third = commit_file(
        world.sdk.path(),
        "client.go",
        "package sdk\n\nfunc Call() error { return nil }\n",
    );
    world.push_sdk("sdk-push-2", &third).await;
    let source = world.finding_source().await;
    assert_eq!(source["status"], "stale", "{source}");
    assert_eq!(source["commit_sha"], second, "{source}");
}

/// A repository's files as (path, text).
type Files = Vec<(String, String)>;

/// The fixture pair of the code graph's own tests: a Go app whose `go.mod` requires the SDK's
/// module, calling into it; (the app's files, the SDK's).
fn go_pair() -> (Files, Files) {
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../crates/relay-codegraph/tests/fixtures/related/go"
    );
    let read = |side: &str, files: &[&str]| -> Files {
        files
            .iter()
            .map(|f| {
                let text = std::fs::read_to_string(format!("{root}/{side}/{f}")).unwrap();
                ((*f).to_owned(), text)
            })
            .collect()
    };
    (
        read("app", &["go.mod", "service/service.go"]),
        read("sdk", &["go.mod", "client/client.go"]),
    )
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_sdks_callers_in_the_app_are_found_through_one_graph(pool: PgPool) {
    let (app, sdk) = go_pair();
    let app: Vec<(&str, &str)> = app.iter().map(|(f, t)| (f.as_str(), t.as_str())).collect();
    let sdk_files: Vec<(&str, &str)> = sdk.iter().map(|(f, t)| (f.as_str(), t.as_str())).collect();
    let script = vec![
        ScriptedReply::tool_calls(vec![(
            "explore",
            json!({"query": "who calls the SDK's NewClient?", "thoroughness": "quick"}),
        )]),
        ScriptedReply::tool_calls(vec![(
            "codegraph",
            json!({"operation": "callers", "qname": "example.com/sdk/client.NewClient", "repo": SDK}),
        )]),
        ScriptedReply::tool_calls(vec![(
            "submit_report",
            json!({"answer": "service.Fetch", "confidence": "high", "evidence": []}),
        )]),
        ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [{"type": "post_comment", "content": "The app's Fetch builds the SDK's client."}]}),
        )]),
    ];
    let world = World::build(pool, &[SDK], script, &app, &sdk_files, Graph::Memory).await;
    world
        .mention("@relay-bot who calls the SDK's NewClient?")
        .await;

    // The explorer's codegraph offered `repo` and named the SDK in its description.
    let requests = world.llm.requests();
    let explore = requests[1].body.to_string();
    assert!(explore.contains("Related repositories"), "{explore}");
    // The SDK function's caller is the app's Fetch, at its bare path.
    let answer = requests
        .iter()
        .map(|r| r.body.to_string())
        .find(|body| body.contains("service/service.go"))
        .expect("the app's call site reached the explorer");
    assert!(answer.contains("Fetch"), "{answer}");
    let project = world.api("/api/projects/github/77").await;
    assert_eq!(
        project["related"][0]["graph_commit"],
        world.sdk_head(),
        "{project}"
    );
}
