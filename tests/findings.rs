//! Findings that stay true (issue #25): real git commits pushed through the gateway, the worker
//! re-verifying every cited source at the pushed commit, the read API showing each source's
//! status, and the living summary comment on the local GitHub and GitLab servers.

use relay_core::IssueId;
use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::Request;
use relay_agent::agent_settings::AgentSettings;
use relay_agent::llm::LlmSettings;
use relay_core::{JobKind, ProcessIssue, TrackerSettings};
use relay_gateway::ApiSettings;
use relay_store::findings::SourceRow;
use relay_store::queue::NewJob;
use relay_tracker::Trackers;
use relay_tracker::fake::{FakeGitHub, FakeGitLab, RecordedRequest};
use relay_worker::jobs::orchestrator::Orchestrator;
use relay_worker::jobs::{JobDeps, RepoSpecs};
use relay_worker::{Outcome, Worker};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::helpers::*;
use crate::queue::settings;

const TOKEN: &str = "ghs_findings_token";
const API_TOKEN: &str = "findings-api-token";

/// `app/settings.py`; line 6 is the cited one.
const SETTINGS: &str =
    "import os\n\n\nclass Settings:\n    debug = False\n    TIMEOUT = 30\n    RETRIES = 3\n";

/// Writes `file` and commits everything; returns the commit.
fn commit(dir: &Path, file: &str, text: &str) -> String {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    commit_all(dir, file)
}

fn commit_all(dir: &Path, message: &str) -> String {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", message]);
    git(dir, &["rev-parse", "HEAD"])
}

/// Which tracker the issue lives on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Host {
    GitHub,
    GitLab,
}

/// The summary setting under test.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Summary {
    On,
    Off,
}

enum Fake {
    GitHub(FakeGitHub),
    GitLab(FakeGitLab),
}

impl Fake {
    fn requests(&self) -> Vec<RecordedRequest> {
        match self {
            Fake::GitHub(fake) => fake.requests(),
            Fake::GitLab(fake) => fake.requests(),
        }
    }

    /// The bot's comments (GitHub) or notes (GitLab) on the issue, oldest first.
    fn bot_comments(&self) -> Vec<String> {
        match self {
            Fake::GitHub(fake) => fake
                .comments("octo/repo", 1)
                .into_iter()
                .filter(|c| c.author == "relay-bot")
                .map(|c| c.body)
                .collect(),
            Fake::GitLab(fake) => fake
                .discussions(15, 1)
                .into_iter()
                .flat_map(|d| d.notes)
                .filter(|n| n.author == "relay-bot")
                .map(|n| n.body)
                .collect(),
        }
    }

    /// Writes (POST/PUT/PATCH/DELETE) the tracker received.
    fn writes(&self) -> Vec<(String, String)> {
        self.requests()
            .into_iter()
            .filter(|r| r.method != "GET")
            .map(|r| (r.method, r.path))
            .collect()
    }
}

struct World {
    pool: PgPool,
    fake: Fake,
    host: Host,
    app: Router,
    worker: Worker,
    upstream: tempfile::TempDir,
    _data: tempfile::TempDir,
    issue: i64,
    pushes: usize,
}

impl World {
    /// A repository with `app/settings.py`, the checkout at its first commit, an issue with a
    /// finding cited at `app/settings.py:6` (quote `TIMEOUT = 30`) verified there, and (summary
    /// on) its summary posted.
    async fn new(pool: PgPool, host: Host, summary: Summary) -> World {
        World::with_llm(pool, host, summary, "http://127.0.0.1:9").await
    }

    /// [`World::new`] whose planning cycles call the language model at `llm_url`.
    async fn with_llm(pool: PgPool, host: Host, summary: Summary, llm_url: &str) -> World {
        let upstream = tempfile::tempdir().unwrap();
        git(upstream.path(), &["init", "-q"]);
        let first = commit(upstream.path(), "app/settings.py", SETTINGS);

        let (fake, tracker_settings, issue_url, project_id, project_path): (
            Fake,
            TrackerSettings,
            &str,
            &str,
            &str,
        ) = match host {
            Host::GitHub => {
                let fake = FakeGitHub::start().await;
                fake.seed_issue("octo/repo", 1, "Timeouts", "Requests time out.");
                let settings = fake.settings(TOKEN, "relay-bot");
                (
                    Fake::GitHub(fake),
                    settings,
                    "https://github.com/octo/repo/issues/1",
                    "77",
                    "octo/repo",
                )
            }
            Host::GitLab => {
                let fake = FakeGitLab::start().await;
                fake.seed_issue(15, "group/project", 1, "Timeouts", "Requests time out.");
                let settings = fake.settings(TOKEN, "relay-bot");
                (
                    Fake::GitLab(fake),
                    settings,
                    "https://gitlab.example.com/group/project/-/issues/1",
                    "15",
                    "group/project",
                )
            }
        };
        let tracker = tracker_settings.name.as_str().to_owned();
        let issue: i64 = sqlx::query_scalar(
            "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
             VALUES ($1, $2, $3, 1, 'Timeouts', 'open', 'alice', $4, now()) RETURNING id",
        )
        .bind(&tracker)
        .bind(project_id)
        .bind(project_path)
        .bind(issue_url)
        .fetch_one(&pool)
        .await
        .unwrap();
        let mut conn = pool.acquire().await.unwrap();
        relay_store::findings::insert(
            &mut conn,
            IssueId(issue),
            "Requests give up after TIMEOUT seconds (30).",
            None,
            &[SourceRow {
                path: "app/settings.py".into(),
                start_line: 6,
                end_line: 6,
                quote: Some("TIMEOUT = 30".into()),
                commit_sha: first.clone(),
                ..SourceRow::default()
            }],
        )
        .await
        .unwrap();
        drop(conn);

        let mut clients = Trackers::default();
        clients.insert(
            tracker_settings.name.clone(),
            relay_tracker::build(&tracker_settings).unwrap(),
        );
        // Called only by the planning cycle of a mention (none by default).
        let llm: LlmSettings = toml::from_str(&format!(
            "[default]\nprovider = \"openai\"\nbase_url = \"{llm_url}\"\nmodel = \"m\"\napi_key = \"k\"\nmax_retries = 0\n",
        ))
        .unwrap();
        let data = tempfile::tempdir().unwrap();
        let repos = relay_repo::RepoManager::new(relay_repo::RepoSettings {
            data_dir: data.path().to_path_buf(),
            ..Default::default()
        })
        .unwrap();
        let specs = RepoSpecs::new(&trackers())
            .with_local("github", "octo/repo", upstream.path().to_path_buf())
            .with_local("gitlab", "group/project", upstream.path().to_path_buf());
        let registry = relay_worker::jobs::registry(&JobDeps {
            repos: Arc::new(repos),
            specs: Arc::new(specs),
            codegraph: None,
            orchestrator: Some(Arc::new(Orchestrator {
                trackers: clients,
                tracker_settings: vec![tracker_settings],
                llm,
                agent: AgentSettings {
                    summary_comment: summary == Summary::On,
                    ..AgentSettings::default()
                },
                tools: Default::default(),
                codegraph: None,
                roles: Default::default(),
                prices: Default::default(),
            })),
        });
        let worker = Worker::new(pool.clone(), registry, settings());
        let app = relay_gateway::app(state(pool.clone()).with_api(ApiSettings {
            token: Some(API_TOKEN.to_owned().into()),
        }));
        let mut world = World {
            pool,
            fake,
            host,
            app,
            worker,
            upstream,
            _data: data,
            issue,
            pushes: 0,
        };
        world.push(&first).await;
        if summary == Summary::On {
            // The summary as the last planning cycle left it.
            relay_actions::summary::refresh_summary(
                &world.pool,
                IssueId(issue),
                None,
                &Default::default(),
            )
            .await
            .unwrap();
            world.run_issue_job().await;
            assert_eq!(world.fake.bot_comments().len(), 1, "the summary is posted");
        }
        world
    }

    /// Sends a push of `commit` to the default branch through the gateway and runs every job.
    async fn push(&mut self, commit: &str) {
        self.pushes += 1;
        let delivery = format!("push-{}", self.pushes);
        let request = match self.host {
            Host::GitHub => github_request(
                "push",
                &delivery,
                serde_json::to_vec(&json!({
                    "ref": "refs/heads/main", "before": "0000000000000000000000000000000000000000",
                    "after": commit, "created": false, "deleted": false, "forced": false,
                    "repository": { "id": 77, "full_name": "octo/repo", "default_branch": "main" },
                    "pusher": { "name": "alice" }, "sender": { "login": "alice", "type": "User" }
                }))
                .unwrap(),
            ),
            Host::GitLab => gitlab_request(
                "Push Hook",
                &delivery,
                serde_json::to_vec(&json!({
                    "object_kind": "push", "event_name": "push", "ref": "refs/heads/main",
                    "before": "0000000000000000000000000000000000000000", "after": commit,
                    "checkout_sha": commit, "project_id": 15,
                    "project": { "id": 15, "path_with_namespace": "group/project", "default_branch": "main" },
                    "user_username": "alice"
                }))
                .unwrap(),
            ),
        };
        let answer = call(&self.app, request).await;
        assert_eq!(answer.reason(), "default_branch_push", "{:?}", answer.body);
        self.drain().await;
    }

    /// A maintainer (`alice`, admin) mentions the bot on the GitHub issue; the signed webhook
    /// goes through the gateway and every job runs.
    async fn mention(&mut self, delivery: &str, text: &str) {
        let Fake::GitHub(fake) = &self.fake else {
            panic!("mentions are sent on GitHub here");
        };
        fake.set_permission("octo/repo", "alice", "admin");
        let comment = fake.seed_comment("octo/repo", 1, "alice", text);
        let mut payload = fixture_json("webhooks/github/issue_comment.created.on-issue.json");
        payload["repository"]["id"] = json!(77);
        payload["repository"]["full_name"] = json!("octo/repo");
        payload["repository"]["name"] = json!("repo");
        payload["repository"]["owner"]["login"] = json!("octo");
        payload["issue"]["number"] = json!(1);
        payload["comment"]["id"] = json!(comment);
        payload["comment"]["body"] = json!(text);
        payload["comment"]["user"]["login"] = json!("alice");
        payload["sender"]["login"] = json!("alice");
        let answer = call(
            &self.app,
            github_request(
                "issue_comment",
                delivery,
                serde_json::to_vec(&payload).unwrap(),
            ),
        )
        .await;
        assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
        self.drain().await;
    }

    async fn drain(&self) {
        let outcomes = self.worker.drain().await.unwrap();
        assert!(
            outcomes
                .iter()
                .all(|o| matches!(o, Outcome::Succeeded { .. })),
            "{outcomes:?}"
        );
    }

    async fn run_issue_job(&self) {
        let job = ProcessIssue {
            issue_id: IssueId(self.issue),
        };
        let mut conn = self.pool.acquire().await.unwrap();
        relay_store::queue::enqueue(
            &mut conn,
            &NewJob {
                kind: JobKind::ProcessIssue.as_str(),
                payload: &serde_json::to_value(&job).unwrap(),
                concurrency_key: Some(&job.concurrency_key()),
                max_attempts: 3,
            },
        )
        .await
        .unwrap();
        drop(conn);
        self.drain().await;
    }

    /// `/api/issues/{id}`'s only finding.
    async fn finding(&self) -> Value {
        let request = Request::get(format!("/api/issues/{}", self.issue))
            .header("authorization", format!("Bearer {API_TOKEN}"))
            .body(Body::empty())
            .unwrap();
        let answer = call(&self.app, request).await;
        assert!(answer.status.is_success(), "{:?}", answer.body);
        let findings = answer.body["findings"].as_array().unwrap().clone();
        assert_eq!(findings.len(), 1, "{findings:?}");
        findings[0].clone()
    }

    /// `/api/issues/{id}`'s only gap.
    async fn gap(&self) -> Value {
        let request = Request::get(format!("/api/issues/{}", self.issue))
            .header("authorization", format!("Bearer {API_TOKEN}"))
            .body(Body::empty())
            .unwrap();
        let answer = call(&self.app, request).await;
        assert!(answer.status.is_success(), "{:?}", answer.body);
        let gaps = answer.body["gaps"].as_array().unwrap().clone();
        assert_eq!(gaps.len(), 1, "{gaps:?}");
        gaps[0].clone()
    }

    fn head(&self) -> String {
        git(self.upstream.path(), &["rev-parse", "HEAD"])
    }
}

/// The summary on GitHub: a push inserting three lines above re-anchors the source (line 9,
/// verified at the pushed commit, moved from line 6) and edits the summary in place; deleting the
/// cited code makes it stale (the summary says so); restoring it verifies it again; a push that
/// touches no cited file writes nothing to the tracker.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_push_re_anchors_stales_and_restores_a_source_and_edits_the_summary(pool: PgPool) {
    let mut world = World::new(pool, Host::GitHub, Summary::On).await;
    let first_body = world.fake.bot_comments()[0].clone();
    assert!(first_body.contains("app/settings.py:6"), "{first_body}");
    assert!(first_body.contains("TIMEOUT"), "{first_body}");
    let before = world.fake.writes().len();

    // Three lines inserted above the cited one.
    let second = commit(
        world.upstream.path(),
        "app/settings.py",
        &format!("# one\n# two\n# three\n{SETTINGS}"),
    );
    world.push(&second).await;
    let finding = world.finding().await;
    let source = &finding["sources"][0];
    assert_eq!(finding["stale"], json!(false));
    assert_eq!(source["path"], json!("app/settings.py"));
    assert_eq!(
        (source["start_line"].clone(), source["end_line"].clone()),
        (json!(9), json!(9))
    );
    assert_eq!(source["status"], json!("verified"));
    assert_eq!(source["commit_sha"], json!(second));
    assert_eq!(
        source["moved_from"],
        json!({ "path": "app/settings.py", "start_line": 6, "end_line": 6 })
    );
    let comments = world.fake.bot_comments();
    assert_eq!(comments.len(), 1, "edited, never re-posted");
    assert!(comments[0].contains("app/settings.py:9"), "{}", comments[0]);
    assert!(
        comments[0].contains(&format!("blob/{second}/app/settings.py#L9-L9")),
        "{}",
        comments[0]
    );
    let writes = world.fake.writes();
    assert_eq!(writes.len(), before + 1, "one edit: {writes:?}");
    assert_eq!(writes.last().unwrap().0, "PATCH");

    // The cited code deleted.
    let third = commit(
        world.upstream.path(),
        "app/settings.py",
        &format!(
            "# one\n# two\n# three\n{}",
            SETTINGS.replace("    TIMEOUT = 30\n", "")
        ),
    );
    world.push(&third).await;
    let finding = world.finding().await;
    assert_eq!(finding["stale"], json!(true));
    assert_eq!(finding["sources"][0]["status"], json!("stale"));
    assert_eq!(
        finding["sources"][0]["commit_sha"],
        json!(second),
        "kept with its last good commit"
    );
    let comments = world.fake.bot_comments();
    assert_eq!(comments.len(), 1);
    assert!(comments[0].contains("stale"), "{}", comments[0]);
    assert_eq!(world.fake.writes().len(), before + 2);

    // Restored.
    let fourth = commit(
        world.upstream.path(),
        "app/settings.py",
        &format!("# one\n# two\n# three\n{SETTINGS}"),
    );
    world.push(&fourth).await;
    let finding = world.finding().await;
    assert_eq!(finding["stale"], json!(false));
    assert_eq!(finding["sources"][0]["status"], json!("verified"));
    assert_eq!(finding["sources"][0]["commit_sha"], json!(fourth));
    assert_eq!(finding["sources"][0]["start_line"], json!(9));
    let comments = world.fake.bot_comments();
    assert_eq!(comments.len(), 1);
    assert!(!comments[0].contains("stale"), "{}", comments[0]);
    let writes = world.fake.writes().len();
    assert_eq!(writes, before + 3);

    // A push that touches no cited file: verified at the new commit, nothing written.
    let fifth = commit(world.upstream.path(), "README.md", "# readme\n");
    world.push(&fifth).await;
    assert_eq!(world.fake.writes().len(), writes, "no tracker write at all");
    let finding = world.finding().await;
    assert_eq!(finding["sources"][0]["commit_sha"], json!(fifth));
    assert_eq!(finding["sources"][0]["status"], json!("verified"));
    assert_eq!(world.head(), fifth);
}

/// An open gap's evidence cites code too: a push inserting lines above moves it (verified at the
/// pushed commit, `moved_from` kept), a push changing the cited line makes it stale, and the
/// summary (edited, never re-posted) and the API say so.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_gaps_evidence_follows_the_code_and_goes_stale_with_it(pool: PgPool) {
    let mut world = World::new(pool, Host::GitHub, Summary::On).await;
    let first = world.head();
    let mut conn = world.pool.acquire().await.unwrap();
    let gap = relay_store::gaps::open(
        &mut conn,
        IssueId(world.issue),
        &relay_store::gaps::NewGapRow {
            question: "Should RETRIES be configurable?",
            severity: "high",
            respondent: "reporter",
            evidence: Some("`app/settings.py:7` hard-codes it"),
            run: None,
        },
    )
    .await
    .unwrap();
    let cited = relay_store::findings::Position {
        path: "app/settings.py".into(),
        start_line: 7,
        end_line: 7,
    };
    relay_store::gaps::add_evidence_sources(
        &mut conn,
        gap.id,
        &[relay_store::gaps::EvidencePlace {
            place: &cited,
            commit_sha: &first,
        }],
    )
    .await
    .unwrap();
    drop(conn);

    let second = commit(
        world.upstream.path(),
        "app/settings.py",
        &format!("# one\n# two\n# three\n{SETTINGS}"),
    );
    world.push(&second).await;
    let gap = world.gap().await;
    let source = &gap["evidence_sources"][0];
    assert_eq!(gap["evidence_stale"], json!(false));
    assert_eq!(
        (source["start_line"].clone(), source["status"].clone()),
        (json!(10), json!("verified"))
    );
    assert_eq!(source["commit_sha"], json!(second));
    assert_eq!(
        source["moved_from"],
        json!({ "path": "app/settings.py", "start_line": 7, "end_line": 7 })
    );
    let comments = world.fake.bot_comments();
    assert_eq!(comments.len(), 1, "edited, never re-posted");
    assert!(
        comments[0].contains("evidence [`app/settings.py:10`]"),
        "{}",
        comments[0]
    );

    let third = commit(
        world.upstream.path(),
        "app/settings.py",
        &format!(
            "# one\n# two\n# three\n{}",
            SETTINGS.replace("RETRIES = 3", "RETRIES = int(os.environ['RETRIES'])")
        ),
    );
    world.push(&third).await;
    let gap = world.gap().await;
    assert_eq!(gap["evidence_stale"], json!(true));
    assert_eq!(gap["evidence_sources"][0]["status"], json!("stale"));
    assert_eq!(
        gap["evidence_sources"][0]["commit_sha"],
        json!(second),
        "kept with its last good commit"
    );
    let comments = world.fake.bot_comments();
    assert_eq!(comments.len(), 1);
    assert!(
        comments[0].contains("Should RETRIES be configurable? — evidence **stale**"),
        "{}",
        comments[0]
    );
    let finding = world.finding().await;
    assert_eq!(
        finding["stale"],
        json!(false),
        "the finding's line still stands"
    );
}

/// With the summary off, the push that makes the finding stale posts exactly one short comment
/// naming it and the commit; nothing else is written.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn with_the_summary_off_a_stale_push_posts_one_notice(pool: PgPool) {
    let mut world = World::new(pool, Host::GitHub, Summary::Off).await;
    assert!(world.fake.writes().is_empty());
    let second = commit(
        world.upstream.path(),
        "app/settings.py",
        &SETTINGS.replace("TIMEOUT = 30", "TIMEOUT = 60"),
    );
    world.push(&second).await;
    let comments = world.fake.bot_comments();
    assert_eq!(comments.len(), 1, "{comments:?}");
    assert!(comments[0].contains("finding 1"), "{}", comments[0]);
    assert!(comments[0].contains(&second[..12]), "{}", comments[0]);
    assert_eq!(world.fake.writes().len(), 1);
    assert_eq!(world.finding().await["stale"], json!(true));

    // Another push that leaves it stale says nothing more.
    let third = commit(world.upstream.path(), "app/other.py", "x = 1\n");
    world.push(&third).await;
    assert_eq!(world.fake.writes().len(), 1);
}

/// A rename (`git mv`) on GitLab: the source follows the file, and the summary note is edited.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_renamed_file_is_followed_on_gitlab(pool: PgPool) {
    let mut world = World::new(pool, Host::GitLab, Summary::On).await;
    let before = world.fake.writes().len();
    git(
        world.upstream.path(),
        &["mv", "app/settings.py", "app/config.py"],
    );
    let second = commit_all(world.upstream.path(), "rename");
    world.push(&second).await;
    let finding = world.finding().await;
    let source = &finding["sources"][0];
    assert_eq!(source["path"], json!("app/config.py"));
    assert_eq!(source["start_line"], json!(6));
    assert_eq!(source["status"], json!("verified"));
    assert_eq!(source["commit_sha"], json!(second));
    assert_eq!(source["moved_from"]["path"], json!("app/settings.py"));
    let notes = world.fake.bot_comments();
    assert_eq!(notes.len(), 1, "edited, never re-posted");
    assert!(notes[0].contains("app/config.py:6"), "{}", notes[0]);
    assert!(
        notes[0].contains(&format!("/-/blob/{second}/app/config.py#L6-6")),
        "{}",
        notes[0]
    );
    let writes = world.fake.writes();
    assert_eq!(writes.len(), before + 1, "{writes:?}");
    assert_eq!(writes.last().unwrap().0, "PUT");
}

/// A planning cycle that opens a gap posts the summary once, after the planner's own comment,
/// listing the open question by severity and what Relay spent.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_cycle_that_changes_gaps_posts_the_summary(pool: PgPool) {
    use crate::orchestrator::{accept_mention_priced, happy_script};
    use relay_agent::llm::scripted::ScriptedLlm;
    use relay_core::prices::{ModelPrice, Prices};

    let github = FakeGitHub::start().await;
    let repo = "Codertocat/Hello-World";
    github.seed_issue(repo, 1, "Retries", "Make retries configurable.");
    github.set_permission(repo, "Codertocat", "admin");
    let llm = ScriptedLlm::start(happy_script()).await;
    // $100,000 per million tokens, so that the scripted calls' few tokens cost cents.
    let prices = Prices::from([(
        "m".to_owned(),
        ModelPrice {
            input: 100_000.0,
            output: 100_000.0,
            cached_input: None,
        },
    )]);
    let mention = accept_mention_priced(
        &pool,
        &github,
        &llm,
        AgentSettings::default(),
        prices,
        |_| {},
    )
    .await;
    mention.run().await;
    let bot: Vec<String> = github
        .comments(repo, 1)
        .into_iter()
        .filter(|c| c.author == "relay-bot")
        .map(|c| c.body)
        .collect();
    assert_eq!(bot.len(), 2, "the reply, then the summary: {bot:?}");
    assert!(bot[1].starts_with("### Relay summary"), "{}", bot[1]);
    assert!(
        bot[1].contains(
            "**blocking** (gap 1, for the reporter): Which calls should use the retry count?"
        ),
        "{}",
        bot[1]
    );
    assert!(bot[1].contains("planner 30 tokens (2 calls)"), "{}", bot[1]);
    // Every call so far was of the priced model: explore and planner, 30 + explore's tokens.
    assert!(bot[1].contains(", about $"), "the cost: {}", bot[1]);
    assert!(!bot[1].contains("unpriced"), "{}", bot[1]);
    assert!(bot[1].contains("<!-- relay:write:summary-i"), "{}", bot[1]);
}

/// Retention never deletes what live state depends on: everything aged past every `[retention]`
/// window and pruned at the defaults, a push still edits the summary in place, and a new mention
/// is answered (its reply lands, the summary is edited again, no second first-contact reaction).
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn after_retention_the_summary_is_edited_and_a_mention_answered(pool: PgPool) {
    use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};

    let answer = |reply: &str, gap: &str| {
        ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [
                {"type": "post_comment", "content": reply},
                {"type": "update_gaps", "add": [{"question": gap, "severity": "high",
                                                 "respondent": "reporter"}]}
            ]}),
        )])
    };
    let llm = ScriptedLlm::start(vec![
        answer(
            "Noted: the timeout is `TIMEOUT` in app/settings.py.",
            "Which calls should time out sooner?",
        ),
        answer(
            "Retries are `RETRIES` in app/settings.py.",
            "Should RETRIES be configurable?",
        ),
    ])
    .await;
    let reactions = |world: &World| match &world.fake {
        Fake::GitHub(fake) => fake.reactions().len(),
        Fake::GitLab(_) => unreachable!(),
    };
    let mut world = World::with_llm(pool, Host::GitHub, Summary::On, &llm.base_url()).await;
    // A first mention: the first-contact reaction, a reply, the summary edited.
    world
        .mention("mention-1", "@relay-bot where is the timeout set?")
        .await;
    assert_eq!(
        world.fake.bot_comments().len(),
        2,
        "the summary and the reply"
    );
    assert_eq!(reactions(&world), 1, "the first-contact reaction");

    // Everything ages past every retention window; the defaults' pass runs.
    for statement in [
        "UPDATE outbox SET created_at = now() - interval '1000 days',
                          updated_at = now() - interval '1000 days',
                          sent_at = now() - interval '1000 days'",
        "UPDATE jobs SET created_at = now() - interval '1000 days',
                        finished_at = now() - interval '1000 days' WHERE finished_at IS NOT NULL",
        "UPDATE trace_runs SET started_at = now() - interval '1000 days',
                              finished_at = now() - interval '1000 days' WHERE finished_at IS NOT NULL",
        "UPDATE deliveries SET received_at = now() - interval '1000 days'",
    ] {
        sqlx::query(statement).execute(&world.pool).await.unwrap();
    }
    let policy = relay_worker::RetentionSettings::default().policy();
    let report = relay_store::retention::prune(
        &world.pool,
        &policy,
        relay_store::retention::PruneMode::Delete,
    )
    .await
    .unwrap()
    .unwrap();
    assert!(report.total_rows() > 0, "{report:?}");

    // A push moving the cited line: the summary is edited in place.
    let second = commit(
        world.upstream.path(),
        "app/settings.py",
        &format!("# one\n# two\n# three\n{SETTINGS}"),
    );
    world.push(&second).await;
    let comments = world.fake.bot_comments();
    assert_eq!(comments.len(), 2, "edited, never re-posted: {comments:?}");
    assert!(
        comments[0].contains("app/settings.py:9"),
        "the summary follows the push: {}",
        comments[0]
    );

    // A new mention: the reply lands and the summary is edited with the new gap.
    world
        .mention("mention-2", "@relay-bot and the retries?")
        .await;
    let comments = world.fake.bot_comments();
    assert_eq!(comments.len(), 3, "one new reply: {comments:?}");
    assert!(comments[2].contains("Retries are"), "{}", comments[2]);
    assert!(
        comments[0].contains("Should RETRIES be configurable?"),
        "the summary follows the mention: {}",
        comments[0]
    );
    assert_eq!(reactions(&world), 1, "no second first-contact reaction");
}
