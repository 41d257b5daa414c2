//! The crash test over real processes and real HTTP: a worker process drains the outbox against
//! the local GitHub server, the server accepts the comment, and the process is SIGKILLed before
//! the outbox records it. A fresh drain (the job's retry) must leave exactly one comment.
//!
//! One test, two roles: run normally it is the parent; it re-executes its own test binary with
//! `RELAY_CRASH_CHILD` set, and that child is the worker that gets killed.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use relay_actions::{BatchId, Executor, RetryPolicy, ValidationContext, validate};
use relay_store::PgPool;
use relay_tracker::fake::FakeGitHub;
use relay_tracker::{
    AuthorRole, IssueRef, IssueTracker, PostedComment, ThreadNote, TrackerWrite, WriteAck,
};
use serde_json::json;

const REPO: &str = "octo/hello";
const NUMBER: i64 = 1;
const TOKEN: &str = "ghp_test";
const BOT: &str = "relay-bot";
const CHILD_ENV: &str = "RELAY_CRASH_CHILD";
/// The test's name as the test binary lists it (its module path without the binary's name): the
/// child is this same binary, run with `--exact` on it.
const TEST_NAME: &str = "crash::a_worker_killed_after_github_accepted_the_comment_posts_it_once";
/// How long the parent waits for the child to reach the tracker before failing loudly.
const CHILD_DEADLINE: Duration = Duration::from_secs(120);

fn issue_ref() -> IssueRef {
    IssueRef {
        project_id: "1".into(),
        project_path: REPO.into(),
        number: NUMBER,
        installation_id: None,
    }
}

/// The real GitHub client, except that once a comment was accepted it never returns: the
/// process is then killed with the comment on the tracker and the outbox row not yet recorded.
struct StallAfterPost(Arc<dyn IssueTracker>);

#[async_trait::async_trait]
impl IssueTracker for StallAfterPost {
    fn provider(&self) -> relay_core::Provider {
        self.0.provider()
    }
    fn bot_username(&self) -> &str {
        self.0.bot_username()
    }
    async fn get_issue(
        &self,
        issue: &IssueRef,
    ) -> relay_tracker::Result<relay_core::IssueSnapshot> {
        self.0.get_issue(issue).await
    }
    async fn list_thread(&self, issue: &IssueRef) -> relay_tracker::Result<Vec<ThreadNote>> {
        self.0.list_thread(issue).await
    }
    async fn write(
        &self,
        issue: &IssueRef,
        write: &TrackerWrite,
    ) -> relay_tracker::Result<WriteAck> {
        let ack = self.0.write(issue, write).await?;
        if matches!(write, TrackerWrite::Comment { .. }) {
            eprintln!("child: the tracker accepted the comment; stalling until killed");
            std::future::pending::<()>().await;
        }
        Ok(ack)
    }
    async fn find_marked_comment(
        &self,
        issue: &IssueRef,
        marker: &str,
    ) -> relay_tracker::Result<Option<PostedComment>> {
        self.0.find_marked_comment(issue, marker).await
    }
    async fn author_role(
        &self,
        issue: &IssueRef,
        username: &str,
    ) -> relay_tracker::Result<AuthorRole> {
        self.0.author_role(issue, username).await
    }
}

/// Not `#[sqlx::test]`: its harness would, in the child, try to drop the parent's database as a
/// stale test database. The parent makes (and drops) its own.
#[tokio::test]
async fn a_worker_killed_after_github_accepted_the_comment_posts_it_once() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        return child(&spec).await;
    }
    let admin_url =
        std::env::var("DATABASE_URL").expect("DATABASE_URL must point at the test Postgres");
    let database = format!("relay_crash_test_{}", std::process::id());
    let admin = PgPool::connect(&admin_url)
        .await
        .expect("the test Postgres is reachable");
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {database}")))
        .execute(&admin)
        .await
        .unwrap();
    let pool = PgPool::connect(&database_url(&admin_url, &database))
        .await
        .unwrap();
    relay_store::migrate(&pool).await.unwrap();
    parent(&pool, &database).await;
    pool.close().await;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE {database} WITH (FORCE)"
    )))
    .execute(&admin)
    .await
    .unwrap();
}

fn database_url(admin_url: &str, database: &str) -> String {
    format!(
        "{}/{database}",
        admin_url
            .rsplit_once('/')
            .expect("DATABASE_URL names a database")
            .0
    )
}

async fn parent(pool: &PgPool, database: &str) {
    let pool = pool.clone();
    let github = FakeGitHub::start().await;
    github.add_token(TOKEN, BOT);
    github.seed_issue(REPO, NUMBER, "Export fails", "It fails.");
    let settings = github.settings(TOKEN, BOT);

    // The batch is committed: two comments in the outbox, nothing on the tracker yet.
    let issue = crate::support::insert_issue(&pool, NUMBER, &[]).await;
    let mut conn = pool.acquire().await.unwrap();
    let ctx = ValidationContext::load(&mut conn, relay_core::IssueId(issue), None)
        .await
        .unwrap();
    let validated = validate(
        &ctx,
        &crate::support::batch(json!({"actions": [
            {"type": "post_comment", "content": "Which export format do you need?"},
            {"type": "post_comment", "content": "Second comment."}
        ]})),
    )
    .unwrap();
    let tracker = relay_tracker::registry::build(&settings).unwrap();
    Executor::new(pool.clone(), tracker.clone())
        .execute(
            &validated,
            BatchId {
                job_id: relay_core::JobId(1),
                run: 1,
                cycle: 0,
            },
            None,
        )
        .await
        .unwrap();

    // The worker process drains and is killed once GitHub has the comment.
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", TEST_NAME, "--nocapture", "--test-threads=1"])
        .env(
            CHILD_ENV,
            format!("{database} {issue} {}", github.base_url()),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while github.comments(REPO, NUMBER).is_empty() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the worker process exited ({status}) before posting");
        }
        assert!(
            started.elapsed() < CHILD_DEADLINE,
            "the worker process never posted"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert!(!status.success(), "killed, not finished: {status}");

    let row = relay_store::outbox::pending(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap()
        .remove(0);
    assert!(
        row.maybe_sent && row.note_id.is_none(),
        "posted on GitHub, not recorded: {row:?}"
    );
    assert_eq!(github.comments(REPO, NUMBER).len(), 1);

    // The job's retry: a new executor in this process drains again.
    let report = Executor::new(pool.clone(), tracker)
        .with_retry(RetryPolicy::immediate())
        .drain_outbox(relay_core::IssueId(issue), &issue_ref())
        .await
        .unwrap();
    assert_eq!(report.sent.len(), 2);
    assert!(
        report.sent[0].recovered,
        "found by its marker, not posted again"
    );
    let comments = github.comments(REPO, NUMBER);
    assert_eq!(comments.len(), 2, "{comments:#?}");
    assert_eq!(
        comments
            .iter()
            .filter(|c| c.body.starts_with("Which export format"))
            .count(),
        1
    );
    assert!(comments.iter().all(|c| c.author == BOT));
    let rows = relay_store::outbox::for_issue(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap();
    assert!(rows.iter().all(|r| r.status == "sent"));
    assert_eq!(rows[0].note_id, Some(comments[0].id.to_string()));
    // Exactly two POSTs reached GitHub in total: the killed one and the second comment.
    let posts = github
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(posts, 2);
}

/// The worker process: drain with the stalling tracker until the parent kills it.
async fn child(spec: &str) {
    let mut parts = spec.split(' ');
    let (database, issue, base_url) = (
        parts.next().unwrap(),
        parts.next().unwrap().parse::<i64>().unwrap(),
        parts.next().unwrap().to_owned(),
    );
    let admin = std::env::var("DATABASE_URL").expect("DATABASE_URL");
    let pool = PgPool::connect(&database_url(&admin, database))
        .await
        .unwrap();
    let settings =
        relay_tracker::fake::tracker_settings(relay_core::Provider::GitHub, base_url, TOKEN, BOT);
    let tracker = relay_tracker::registry::build(&settings).unwrap();
    let executor = Executor::new(pool, Arc::new(StallAfterPost(tracker)));
    executor
        .drain_outbox(relay_core::IssueId(issue), &issue_ref())
        .await
        .unwrap();
    panic!("the drain returned instead of stalling");
}
