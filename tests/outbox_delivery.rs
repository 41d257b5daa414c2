//! No write is ever stranded (issue #22 §1), end to end: the gateway, real workers, the local
//! GitLab server with faults switched on by time or by count, the scripted LLM, real Postgres.
//!
//! A tracker outage longer than the inline retries, a worker killed between the batch commit and
//! the first send, a long `Retry-After`, a job dead-lettered with a write pending (the sweeper),
//! a reply refused for good, and a spec writer that fails after a go-ahead.

use relay_core::{IssueId, JobId};
use std::time::Duration;

use relay_agent::llm::scripted::ScriptedReply;
use relay_tracker::fake::Failure;
use relay_worker::{Outcome, Worker, WorkerSettings};
use serde_json::json;
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

use crate::orchestrator_gitlab::{GitLabHarness, ISSUE, PROJECT, REPORTER, ask_script, mention};
use crate::queue::settings;

/// A guard against a hung test, never a timing assertion: the issue's bound for delivery.
const WITHIN_A_MINUTE: Duration = Duration::from_secs(60);
const MENTION: &str = "@relay can retries be configured?";

/// The fake's path of a reply in `discussion`.
fn reply_path(discussion: &str) -> String {
    format!("/api/v4/projects/{PROJECT}/issues/{ISSUE}/discussions/{discussion}/notes")
}

fn worker_settings(lease_secs: u64, sweep_interval_secs: u64) -> WorkerSettings {
    WorkerSettings {
        lease_secs,
        sweep_interval_secs,
        ..settings()
    }
}

/// The reporter's mention accepted by the gateway (not run yet); the planner will reply in its
/// discussion. Returns the discussion and the job.
async fn accept(h: &GitLabHarness) -> (String, i64) {
    let (discussion, note) = h.gitlab.seed_note(PROJECT, ISSUE, REPORTER, MENTION, false);
    h.llm.push(ask_script(&discussion));
    let answer = h
        .deliver(REPORTER, MENTION, note, &discussion, "gl-1")
        .await;
    assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
    (discussion, answer.body["job"].as_i64().unwrap())
}

/// The planner's reply as posted on the fake (the bot's notes that answer the mention).
fn replies(h: &GitLabHarness) -> usize {
    h.bot_notes()
        .iter()
        .filter(|(_, body)| body.contains("Config.Retries"))
        .count()
}

fn posts_to(h: &GitLabHarness, path: &str) -> usize {
    h.gitlab
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path == path)
        .count()
}

/// Polls until `done` or the guard runs out; returns whether it happened.
async fn eventually(mut done: impl FnMut() -> bool, guard: Duration) -> bool {
    let until = tokio::time::Instant::now() + guard;
    while tokio::time::Instant::now() < until {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    done()
}

/// A worker process: its loop runs until the returned token is cancelled or the task aborted.
fn start_worker(
    h: &GitLabHarness,
    settings: WorkerSettings,
) -> (CancellationToken, tokio::task::JoinHandle<()>) {
    let shutdown = CancellationToken::new();
    let worker = Worker::new(h.pool.clone(), h.registry.clone(), settings);
    let task = tokio::spawn(worker.run(shutdown.clone()));
    (shutdown, task)
}

async fn stop(worker: (CancellationToken, tokio::task::JoinHandle<()>)) {
    worker.0.cancel();
    worker.1.await.unwrap();
}

async fn deliveries(pool: &PgPool) -> i64 {
    crate::helpers::count(pool, "deliveries").await
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_reply_refused_with_502_for_25s_lands_once_without_another_event(pool: PgPool) {
    let h = GitLabHarness::start(pool, Vec::new()).await;
    let (discussion, _) = accept(&h).await;
    // Longer than the inline retries (3 attempts, 1 s and 2 s apart): the job ends with the
    // reply pending, and nothing but Relay itself may bring it back.
    h.gitlab.fail_for(
        "POST",
        &reply_path(&discussion),
        Duration::from_secs(25),
        Failure::Status(502),
    );
    let worker = start_worker(&h, worker_settings(30, 1));
    let landed = eventually(|| replies(&h) > 0, WITHIN_A_MINUTE).await;
    // Give a duplicate the chance to appear before counting.
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop(worker).await;

    assert!(landed, "the reply did not land within a minute");
    assert_eq!(replies(&h), 1, "exactly once");
    assert!(
        posts_to(&h, &reply_path(&discussion)) > 3,
        "more attempts than one job's inline retries were needed"
    );
    assert_eq!(deliveries(&h.pool).await, 1, "no other event arrived");
}

/// Runs the mention's job on a worker that is killed while the reply's POST is in flight (after
/// the batch commit, before the tracker answered), then on a fresh worker.
async fn crash_between_commit_and_send(h: &GitLabHarness, job: i64, discussion: &str) {
    // The first POST of the reply hangs; the worker dies meanwhile.
    h.gitlab.fail_next(
        "POST",
        &reply_path(discussion),
        1,
        Failure::Delay(Duration::from_secs(600)),
    );
    let (_, task) = start_worker(h, worker_settings(2, 0));
    assert!(
        eventually(
            || posts_to(h, &reply_path(discussion)) == 1,
            WITHIN_A_MINUTE
        )
        .await,
        "the reply's first POST never started"
    );
    // SIGKILL: the worker's loop, its running jobs and their heartbeats stop at once.
    task.abort();
    let _ = task.await;
    assert_eq!(replies(h), 0);
    let row = relay_store::queue::get(&h.pool, JobId(job))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.status, "running", "the lease is left to expire");
    assert_eq!(h.pending_events().await, 0, "the batch was committed");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_worker_killed_between_commit_and_send_delivers_after_restart_once(pool: PgPool) {
    let h = GitLabHarness::start(pool, Vec::new()).await;
    let (discussion, job) = accept(&h).await;
    crash_between_commit_and_send(&h, job, &discussion).await;

    // The restart: the lease expires, the job runs again, finds no pending event, and drains.
    let worker = start_worker(&h, worker_settings(2, 0));
    let landed = eventually(|| replies(&h) > 0, WITHIN_A_MINUTE).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop(worker).await;
    assert!(landed, "the reply did not land after the restart");
    assert_eq!(replies(&h), 1, "exactly once");
    assert_eq!(h.llm.requests().len(), 4, "the planner was not asked again");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_sweeper_delivers_a_write_whose_job_died_on_its_last_attempt(pool: PgPool) {
    let h = GitLabHarness::start(pool, Vec::new()).await;
    let (discussion, job) = accept(&h).await;
    sqlx::query("UPDATE jobs SET max_attempts = 1 WHERE id = $1")
        .bind(job)
        .execute(&h.pool)
        .await
        .unwrap();
    crash_between_commit_and_send(&h, job, &discussion).await;

    // Without the sweeper nothing runs the issue again: the job is dead-lettered.
    let worker = start_worker(&h, worker_settings(2, 0));
    let dead = eventually_job(&h.pool, job, "dead").await;
    stop(worker).await;
    assert!(
        dead,
        "the expired lease on the last attempt dead-letters the job"
    );
    assert_eq!(replies(&h), 0, "stranded without the sweeper");

    let worker = start_worker(&h, worker_settings(2, 1));
    let landed = eventually(|| replies(&h) > 0, WITHIN_A_MINUTE).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop(worker).await;
    assert!(landed, "the sweeper did not bring the reply out");
    assert_eq!(replies(&h), 1, "exactly once");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_write_for_a_tracker_removed_from_the_config_waits_without_a_job_loop(pool: PgPool) {
    let h = GitLabHarness::start(pool, Vec::new()).await;
    let (discussion, job) = accept(&h).await;
    crash_between_commit_and_send(&h, job, &discussion).await;
    let issue = h.issue_id().await;
    let tracker: String = sqlx::query_scalar("SELECT tracker FROM issues WHERE id = $1")
        .bind(issue)
        .fetch_one(&h.pool)
        .await
        .unwrap();
    // The operator removes the tracker from the configuration.
    sqlx::query("UPDATE issues SET tracker = 'retired' WHERE id = $1")
        .bind(issue)
        .execute(&h.pool)
        .await
        .unwrap();
    sqlx::query("UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1")
        .bind(job)
        .execute(&h.pool)
        .await
        .unwrap();
    let worker = Worker::new(h.pool.clone(), h.registry.clone(), worker_settings(2, 1))
        .with_sweep_trackers(vec![tracker.clone()]);
    // The stranded job's retry fails for good, and leaves no follow-up behind it.
    let mut outcomes = Vec::new();
    for _ in 0..3 {
        match worker.run_next_job().await.unwrap() {
            Outcome::Empty => break,
            outcome => outcomes.push(outcome),
        }
    }
    assert_eq!(
        outcomes,
        [Outcome::Failed { job_id: JobId(job) }],
        "no job loop"
    );
    assert!(
        worker.sweep_outbox().await.unwrap().is_empty(),
        "nothing can send it: no drain job"
    );
    let mut conn = h.pool.acquire().await.unwrap();
    assert_eq!(
        relay_store::outbox::pending(&mut conn, IssueId(issue))
            .await
            .unwrap()
            .len(),
        1,
        "the reply is kept, not dropped"
    );
    drop(conn);

    // The tracker is configured again: the next sweep brings the reply out, once.
    sqlx::query("UPDATE issues SET tracker = $2 WHERE id = $1")
        .bind(issue)
        .bind(&tracker)
        .execute(&h.pool)
        .await
        .unwrap();
    assert_eq!(worker.sweep_outbox().await.unwrap(), vec![issue]);
    assert!(matches!(
        worker.run_next_job().await.unwrap(),
        Outcome::Succeeded { .. }
    ));
    assert_eq!(replies(&h), 1, "exactly once");
}

async fn eventually_job(pool: &PgPool, job: i64, status: &str) -> bool {
    let until = tokio::time::Instant::now() + WITHIN_A_MINUTE;
    while tokio::time::Instant::now() < until {
        let row = relay_store::queue::get(pool, JobId(job))
            .await
            .unwrap()
            .unwrap();
        if row.status == status {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    false
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_long_retry_after_is_waited_out_by_the_queue_not_with_a_lease_held(pool: PgPool) {
    let h = GitLabHarness::start(pool, Vec::new()).await;
    let (discussion, job) = accept(&h).await;
    const RETRY_AFTER: u64 = 12;
    h.gitlab.fail_next(
        "POST",
        &reply_path(&discussion),
        1,
        Failure::TooManyRequests {
            retry_after: Some(RETRY_AFTER),
        },
    );
    let asked_at = chrono::Utc::now();
    // The job ends at once (it does not sleep the 12 s holding its lease)…
    assert_eq!(
        h.drain().await,
        vec![Outcome::Succeeded { job_id: JobId(job) }]
    );
    assert_eq!(replies(&h), 0);
    // …and leaves the issue a job for when the write is due.
    let issue = h.issue_id().await;
    let mut conn = h.pool.acquire().await.unwrap();
    let due = relay_store::outbox::next_pending_at(&mut conn, IssueId(issue))
        .await
        .unwrap()
        .expect("the reply is pending");
    drop(conn);
    let wait = chrono::Duration::seconds(RETRY_AFTER as i64 - 1);
    assert!(due >= asked_at + wait, "due {due}, asked at {asked_at}");
    let (follow_up, run_after): (i64, chrono::DateTime<chrono::Utc>) = sqlx::query_as(
        "SELECT id, run_after FROM jobs WHERE status = 'queued' AND concurrency_key = $1",
    )
    .bind(format!("issue:{issue}"))
    .fetch_one(&h.pool)
    .await
    .unwrap();
    assert!(
        run_after >= asked_at + wait,
        "the follow-up waits for the write"
    );
    assert!(h.drain().await.is_empty(), "nothing runs before the delay");

    tokio::time::sleep((due - chrono::Utc::now()).to_std().unwrap_or_default()).await;
    assert_eq!(
        h.drain().await,
        vec![Outcome::Succeeded {
            job_id: JobId(follow_up)
        }]
    );
    assert_eq!(replies(&h), 1, "the write landed after the delay, once");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_reply_refused_for_good_is_said_counted_listed_and_shown_to_the_planner(pool: PgPool) {
    let handle = relay_telemetry::metrics::install();
    let h = GitLabHarness::start(pool, Vec::new()).await;
    let (discussion, job) = accept(&h).await;
    h.gitlab.fail_next(
        "POST",
        &reply_path(&discussion),
        1,
        Failure::Validation("Note is too long".into()),
    );
    assert_eq!(
        h.drain().await,
        vec![Outcome::Succeeded { job_id: JobId(job) }]
    );
    assert_eq!(replies(&h), 0);

    // One short status comment says the reply could not be posted.
    let status: Vec<String> = h
        .bot_notes()
        .into_iter()
        .map(|(_, body)| body)
        .filter(|body| body.contains("could not post my reply"))
        .collect();
    assert_eq!(status.len(), 1, "{:?}", h.bot_notes());
    assert!(status[0].contains("(validation failed)"), "{}", status[0]);

    // Counted in /metrics.
    let metrics = handle.render();
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("relay_tracker_writes_total")
                && l.contains("outcome=\"failed\"")
                && l.contains("kind=\"post_comment\"")),
        "{metrics}"
    );

    // Listed in /api/issues/{id}.
    let issue = h.issue_id().await;
    let app = relay_gateway::app(crate::helpers::state(h.pool.clone()).with_api(
        relay_gateway::ApiSettings {
            token: Some("outbox-api-token".to_owned().into()),
        },
    ));
    let answer = crate::helpers::call(
        &app,
        http::Request::get(format!("/api/issues/{issue}"))
            .header("authorization", "Bearer outbox-api-token")
            .body(axum::body::Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(answer.status, http::StatusCode::OK, "{:?}", answer.body);
    let failed = answer.body["failed_writes"].as_array().unwrap();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(
        failed[0]["last_error"]
            .as_str()
            .unwrap()
            .contains("Note is too long")
    );

    // The next cycle's planner is told what failed, once.
    const NEXT: &str = "@relay did you see my question?";
    let (_, note) = h.gitlab.seed_note(PROJECT, ISSUE, REPORTER, NEXT, false);
    h.llm.push([ScriptedReply::tool_calls(vec![(
        "submit_actions",
        json!({"actions": [{"type": "post_comment", "reply_to": discussion, "content": "Short answer: yes."}]}),
    )])]);
    let answer = h.deliver(REPORTER, NEXT, note, &discussion, "gl-2").await;
    let job = answer.body["job"].as_i64().unwrap();
    assert_eq!(
        h.drain().await,
        vec![Outcome::Succeeded { job_id: JobId(job) }]
    );
    let told = h.llm.requests().last().unwrap().body.to_string();
    assert!(
        told.contains("FAILED: post_comment | validation failed") && told.contains("refused"),
        "{told}"
    );
    let mut conn = h.pool.acquire().await.unwrap();
    assert!(
        relay_store::outbox::unshown_failures(&mut conn, IssueId(issue))
            .await
            .unwrap()
            .is_empty(),
        "shown once"
    );
}

/// The go-ahead after the gap: the planner closes it and asks for the spec.
fn go_ahead_batch(go: &str, note: i64) -> ScriptedReply {
    ScriptedReply::tool_calls(vec![(
        "submit_actions",
        json!({"actions": [
            {"type": "update_gaps", "close": [{"gap": "gap 1", "reason": "answered", "note": go,
                                                "note_id": note.to_string()}]},
            {"type": "ready_for_spec_generation", "proceed_signal": "Go ahead.",
             "proceed_note_id": note.to_string(), "context_summary": "configurable retries for uploads", "closed_gaps": ["1"], "finding_ids": []}
        ]}),
    )])
}

fn spec_reply() -> ScriptedReply {
    ScriptedReply::tool_calls(vec![(
        "submit_spec",
        json!({"title": "Configurable upload retries", "goal": "Let operators set upload retries.",
               "context": "Config.Retries exists.", "decisions": ["Only upload calls retry (gap 1)."],
               "changes": [{"path": "config.go", "change": "Read the retry count."}],
               "test_plan": ["retries = 0 disables retrying"], "risks": ["none"]}),
    )])
}

const GO: &str = "@relay only the upload calls should retry. Go ahead.";

/// The mention (gap 1), then the go-ahead delivered; returns the go-ahead's job.
async fn go_ahead(h: &GitLabHarness, first_spec_reply: ScriptedReply) -> i64 {
    let discussion = mention(h).await;
    let (_, note) = h.gitlab.seed_note(PROJECT, ISSUE, REPORTER, GO, false);
    h.llm.push([go_ahead_batch(GO, note), first_spec_reply]);
    let answer = h.deliver(REPORTER, GO, note, &discussion, "gl-go").await;
    answer.body["job"].as_i64().unwrap()
}

async fn spec_status(h: &GitLabHarness) -> Option<String> {
    let issue = h.issue_id().await;
    let mut conn = h.pool.acquire().await.unwrap();
    relay_store::specs::current(&mut conn, IssueId(issue))
        .await
        .unwrap()
        .map(|s| s.status)
}

async fn wait_until_due(pool: &PgPool) {
    let due = relay_store::queue::next_due_in(pool).await.unwrap();
    tokio::time::sleep(due.unwrap_or_default() + Duration::from_millis(50)).await;
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_go_ahead_survives_a_spec_writer_outage(pool: PgPool) {
    let h = GitLabHarness::start(pool, Vec::new()).await;
    let job = go_ahead(&h, ScriptedReply::error(503)).await;
    assert_eq!(
        h.drain().await,
        vec![Outcome::Retried { job_id: JobId(job) }]
    );
    assert_eq!(spec_status(&h).await, None);
    assert_eq!(h.pending_events().await, 0, "the go-ahead was consumed…");

    // …but it is still pending: the retry writes the spec without asking the planner again.
    let planner_calls = h.llm.requests().len();
    h.llm.push([spec_reply()]);
    wait_until_due(&h.pool).await;
    assert_eq!(
        h.drain().await,
        vec![Outcome::Succeeded { job_id: JobId(job) }]
    );
    assert_eq!(spec_status(&h).await.as_deref(), Some("posted"));
    assert_eq!(h.llm.requests().len(), planner_calls + 1, "one spec call");
    assert!(
        h.bot_notes()
            .iter()
            .any(|(_, b)| b.contains("Configurable upload retries")),
        "the spec was posted"
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_spec_writer_failing_on_every_attempt_says_so_once(pool: PgPool) {
    let h = GitLabHarness::start(pool, Vec::new()).await;
    let job = go_ahead(&h, ScriptedReply::error(503)).await;
    sqlx::query("UPDATE jobs SET max_attempts = 2 WHERE id = $1")
        .bind(job)
        .execute(&h.pool)
        .await
        .unwrap();
    assert_eq!(
        h.drain().await,
        vec![Outcome::Retried { job_id: JobId(job) }]
    );
    let said = |h: &GitLabHarness| {
        h.bot_notes()
            .iter()
            .filter(|(_, b)| b.contains("could not write the spec"))
            .count()
    };
    assert_eq!(said(&h), 0, "silent while a retry follows");

    h.llm.push([ScriptedReply::error(503)]);
    wait_until_due(&h.pool).await;
    assert_eq!(
        h.drain().await,
        vec![Outcome::Succeeded { job_id: JobId(job) }]
    );
    assert_eq!(said(&h), 1, "one status comment on the last attempt");
    assert_eq!(spec_status(&h).await, None);
    let open: i64 =
        sqlx::query_scalar("SELECT count(*) FROM spec_requests WHERE status = 'pending'")
            .fetch_one(&h.pool)
            .await
            .unwrap();
    assert_eq!(
        open, 0,
        "the go-ahead is closed as failed, not retried forever"
    );
    assert!(h.drain().await.is_empty());
    assert_eq!(said(&h), 1);
}
