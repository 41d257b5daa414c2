//! A retried job's reply lands (issue #45 §1), on the local GitHub: the reply of a later attempt
//! never shares an idempotency key with a notice or a reply an earlier attempt queued, so the
//! outbox never takes it for a write already made.
//!
//! - The LLM answers 500 until the job dies, Relay says so once, the operator retries the job
//!   (`relay jobs retry`), and the reply lands once.
//! - An ordinary automatic retry after a transient LLM failure posts its reply once.
//! - A job picked up again after its worker died (its lease expired), after it had already
//!   answered one mention, answers the mention that came meanwhile.

use std::time::Duration;

use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_core::JobId;
use relay_store::operator::{ActionOutcome, retry_job};
use relay_tracker::fake::FakeGitHub;
use relay_worker::Outcome;
use serde_json::json;
use sqlx::PgPool;

use crate::helpers::*;
use crate::orchestrator::accept_mention;

const REPO: &str = "Codertocat/Hello-World";
const REPLY: &str = "Retries are configured with `Config.Retries` (config.go:4).";
const SECOND_REPLY: &str = "The upload path does not read `Config.Retries` yet.";

/// The bot's comments on the issue, in order.
fn bot_comments(github: &FakeGitHub) -> Vec<String> {
    github
        .comments(REPO, 1)
        .into_iter()
        .filter(|c| c.author == "relay-bot")
        .map(|c| c.body)
        .collect()
}

/// How many of the bot's comments contain `text`.
fn landed(github: &FakeGitHub, text: &str) -> usize {
    bot_comments(github)
        .iter()
        .filter(|b| b.contains(text))
        .count()
}

/// The planner answers at once with one comment.
fn answer(content: &str) -> ScriptedReply {
    ScriptedReply::tool_calls(vec![(
        "submit_actions",
        json!({"actions": [{"type": "post_comment", "content": content}]}),
    )])
}

async fn github_with_issue() -> FakeGitHub {
    let github = FakeGitHub::start().await;
    github.seed_issue(REPO, 1, "Retries", "Can retries be configured?");
    github.set_permission(REPO, "Codertocat", "admin");
    github
}

/// Lets the job's backoff pass without waiting.
async fn due_now(pool: &PgPool, job: i64) {
    sqlx::query("UPDATE jobs SET run_after = now() WHERE id = $1")
        .bind(job)
        .execute(pool)
        .await
        .unwrap();
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn an_operator_retry_of_a_dead_job_posts_its_reply_once(pool: PgPool) {
    let github = github_with_issue().await;
    let llm = ScriptedLlm::start(Vec::new()).await;
    let mention = accept_mention(&pool, &github, &llm).await;
    let job = JobId(mention.job);
    let attempts = relay_store::queue::get(&pool, job)
        .await
        .unwrap()
        .unwrap()
        .max_attempts;
    llm.push((0..attempts).map(|_| ScriptedReply::error(500)));
    for attempt in 1..=attempts {
        let outcomes = mention.worker.drain().await.unwrap();
        if attempt < attempts {
            assert_eq!(outcomes, [Outcome::Retried { job_id: job }]);
            due_now(&pool, mention.job).await;
        } else {
            assert_eq!(outcomes, [Outcome::Dead { job_id: job }]);
        }
    }
    let notices = bot_comments(&github);
    assert_eq!(notices.len(), 1, "one notice: {notices:?}");
    assert!(notices[0].contains("the language model was unavailable"));
    dead_job_says_why(&pool, job).await;

    // The LLM is back; the operator retries the dead job.
    llm.push([answer(REPLY)]);
    assert_eq!(
        retry_job(&pool, job, "ops").await.unwrap(),
        ActionOutcome::Done { job_id: Some(job) }
    );
    assert_eq!(
        mention.worker.drain().await.unwrap(),
        [Outcome::Succeeded { job_id: job }]
    );
    assert_eq!(landed(&github, REPLY), 1, "{:?}", bot_comments(&github));
    assert_eq!(bot_comments(&github).len(), 2, "the notice and the reply");
    let unsent: i64 = sqlx::query_scalar("SELECT count(*) FROM outbox WHERE status <> 'sent'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(unsent, 0, "every queued write was sent");
    // Nothing is left to send again.
    assert_eq!(mention.worker.drain().await.unwrap(), []);
    assert_eq!(landed(&github, REPLY), 1);
}

/// Issue #45 §3: the operator's list and the read API say why the job died — the LLM's
/// classified error, not only "planning cycle 0 stopped" — and where its trace is.
async fn dead_job_says_why(pool: &PgPool, job: JobId) {
    use relay_store::operator::{JobFilter, list_jobs};
    let dead = list_jobs(pool, JobFilter::Dead, 10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].last_cause.as_deref(), Some("llm server_error"));
    let error = dead[0].last_error.as_deref().unwrap();
    assert!(
        error.contains("planning cycle 0 stopped without a decision")
            && error.contains("server error 500"),
        "{error}"
    );
    const API_TOKEN: &str = "retried-reply-api-token-0123456789abcdef";
    let app = relay_gateway::app(state(pool.clone()).with_api(relay_gateway::ApiSettings {
        token: Some(API_TOKEN.to_owned().into()),
    }));
    let answer = call(
        &app,
        http::Request::get(format!("/api/jobs/{job}"))
            .header("authorization", format!("Bearer {API_TOKEN}"))
            .body(axum::body::Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(answer.status, http::StatusCode::OK, "{:?}", answer.body);
    assert_eq!(answer.body["job"]["last_cause"], "llm server_error");
    assert_eq!(
        answer.body["job"]["events_url"],
        format!("/api/jobs/{job}/events")
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn an_automatic_retry_after_a_transient_llm_failure_posts_its_reply_once(pool: PgPool) {
    let github = github_with_issue().await;
    let llm = ScriptedLlm::start(vec![ScriptedReply::error(500), answer(REPLY)]).await;
    let mention = accept_mention(&pool, &github, &llm).await;
    let job = JobId(mention.job);
    assert_eq!(
        mention.worker.drain().await.unwrap(),
        [Outcome::Retried { job_id: job }]
    );
    assert!(
        bot_comments(&github).is_empty(),
        "no word while a retry may work"
    );
    due_now(&pool, mention.job).await;
    assert_eq!(
        mention.worker.drain().await.unwrap(),
        [Outcome::Succeeded { job_id: job }]
    );
    assert_eq!(
        bot_comments(&github).len(),
        1,
        "{:?}",
        bot_comments(&github)
    );
    assert_eq!(landed(&github, REPLY), 1);
}

/// A second mention of the issue, signed, through the gateway (the first job is running).
async fn mention_again(pool: &PgPool, github: &FakeGitHub) {
    const BODY: &str = "@relay-bot and does the upload path use it?";
    let comment = github.seed_comment(REPO, 1, "Codertocat", BODY);
    let mut payload = fixture_json("webhooks/github/issue_comment.created.on-issue.json");
    payload["comment"]["id"] = json!(comment);
    payload["comment"]["body"] = json!(BODY);
    let app = relay_gateway::app(state(pool.clone()));
    let request = github_request(
        "issue_comment",
        "e2e-again",
        serde_json::to_vec(&payload).unwrap(),
    );
    let answer = call(&app, request).await;
    assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
}

/// Polls until `done` (a guard against a hang, not a timing assertion).
async fn until(mut done: impl FnMut() -> bool, what: &str) {
    for _ in 0..600 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what} never happened");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_job_run_again_after_its_worker_died_answers_the_mention_that_came_meanwhile(
    pool: PgPool,
) {
    let github = github_with_issue().await;
    let llm = ScriptedLlm::start(vec![answer(REPLY)]).await;
    let mention = accept_mention(&pool, &github, &llm).await;
    let job = mention.job;
    // The planner's first request is held until the second mention is in.
    llm.hold_from(1);
    let worker = mention.worker.clone();
    let first_run = tokio::spawn(async move { worker.run_next_job().await });
    until(|| llm.requests().len() == 1, "the first planner request").await;
    mention_again(&pool, &github).await;
    // Cycle 0 answers the first mention; cycle 1's planner request for the second one hangs,
    // and the worker dies meanwhile (its heartbeat stops with it).
    llm.push([ScriptedReply::Delayed {
        delay_ms: 600_000,
        reply: Box::new(answer("never sent")),
    }]);
    llm.release();
    until(|| llm.requests().len() == 2, "cycle 1's planner request").await;
    assert_eq!(landed(&github, REPLY), 1, "cycle 0's reply was sent");
    first_run.abort();
    let _ = first_run.await;
    sqlx::query("UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1")
        .bind(job)
        .execute(&pool)
        .await
        .unwrap();

    // Another worker picks the job up again: its first cycle answers the second mention.
    llm.push([answer(SECOND_REPLY)]);
    assert_eq!(
        mention.worker.run_next_job().await.unwrap(),
        Outcome::Succeeded { job_id: JobId(job) }
    );
    assert_eq!(
        landed(&github, SECOND_REPLY),
        1,
        "{:?}",
        bot_comments(&github)
    );
    assert_eq!(landed(&github, REPLY), 1);
    // The follow-up job the second mention queued finds nothing left to do.
    for outcome in mention.worker.drain().await.unwrap() {
        assert!(matches!(outcome, Outcome::Succeeded { .. }), "{outcome:?}");
    }
    assert_eq!(
        bot_comments(&github).len(),
        2,
        "{:?}",
        bot_comments(&github)
    );
}
