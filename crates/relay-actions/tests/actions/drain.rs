//! Draining the outbox: order, markers, the crash between "posted" and "recorded", retries and
//! their classification.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::support::{MemoryTracker, batch, insert_issue, issue_ref};
use relay_actions::{BatchId, Executor, RetryPolicy, ValidationContext, validate};
use relay_store::PgPool;
use relay_tracker::TrackerError;
use serde_json::json;

const NUMBER: i64 = 7;

/// Validates and commits a batch of comments for a fresh issue; returns the issue id.
async fn setup(pool: &PgPool, actions: serde_json::Value) -> i64 {
    let issue = insert_issue(pool, NUMBER, &[("501", Some("dA"))]).await;
    let mut conn = pool.acquire().await.unwrap();
    let ctx = ValidationContext::load(&mut conn, relay_core::IssueId(issue), None)
        .await
        .unwrap();
    let validated = validate(&ctx, &batch(json!({ "actions": actions }))).unwrap();
    let tracker = Arc::new(MemoryTracker::default());
    Executor::new(pool.clone(), tracker)
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
    issue
}

fn executor(pool: &PgPool, tracker: &Arc<MemoryTracker>) -> Executor {
    Executor::new(pool.clone(), tracker.clone()).with_retry(RetryPolicy::immediate())
}

async fn statuses(pool: &PgPool, issue: i64) -> Vec<String> {
    let mut conn = pool.acquire().await.unwrap();
    relay_store::outbox::for_issue(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.status)
        .collect()
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn writes_go_out_in_order_with_their_marker_and_only_once(pool: PgPool) {
    let issue = setup(
        &pool,
        json!([
            {"type": "post_comment", "content": "one"},
            {"type": "post_comment", "content": "two", "reply_to": "501"}
        ]),
    )
    .await;
    let tracker = Arc::new(MemoryTracker::default());
    let report = executor(&pool, &tracker)
        .drain_outbox(relay_core::IssueId(issue), &issue_ref(NUMBER))
        .await
        .unwrap();
    assert_eq!(report.sent.len(), 2);
    assert!(report.failures.is_empty() && report.reschedule_after.is_none());
    let comments = tracker.comments.lock().unwrap().clone();
    assert_eq!(
        comments[0].body,
        format!("one\n\n<!-- relay:write:i{issue}-j1-r1-c0-a0-p0 -->")
    );
    assert_eq!(comments[1].reply_to.as_deref(), Some("501"));
    assert_eq!(comments[1].discussion_id.as_deref(), Some("dA"));
    assert!(comments.iter().all(|c| c.issue_number == NUMBER));
    // First attempts need no lookup.
    assert_eq!(tracker.lookups.load(Ordering::SeqCst), 0);

    let again = executor(&pool, &tracker)
        .drain_outbox(relay_core::IssueId(issue), &issue_ref(NUMBER))
        .await
        .unwrap();
    assert!(again.sent.is_empty());
    assert_eq!(tracker.comments.lock().unwrap().len(), 2);
    let mut conn = pool.acquire().await.unwrap();
    let rows = relay_store::outbox::for_issue(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap();
    assert_eq!(
        rows[0].note_id.as_deref(),
        Some(comments[0].note_id.as_str())
    );
}

/// The process dies after the tracker accepted the comment and before the outbox recorded it
/// (here: the tracker call panics after storing the comment, so `mark_sent` never runs and the
/// row stays exactly as a SIGKILL would leave it). The retry finds the marker and posts nothing.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_crash_between_posted_and_recorded_never_posts_twice(pool: PgPool) {
    let issue = setup(
        &pool,
        json!([{"type": "post_comment", "content": "Which format?"}, {"type": "post_comment", "content": "after"}]),
    )
    .await;
    let tracker = Arc::new(MemoryTracker::default());
    tracker.crash_after_accept.store(true, Ordering::SeqCst);
    let crashed = {
        let executor = executor(&pool, &tracker);
        tokio::spawn(async move {
            executor
                .drain_outbox(relay_core::IssueId(issue), &issue_ref(NUMBER))
                .await
        })
        .await
    };
    assert!(crashed.unwrap_err().is_panic());
    assert_eq!(
        tracker.comments.lock().unwrap().len(),
        1,
        "the tracker has it"
    );
    let mut conn = pool.acquire().await.unwrap();
    let row = relay_store::outbox::pending(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap()
        .remove(0);
    assert!(
        row.maybe_sent && row.note_id.is_none(),
        "the outbox does not know"
    );

    // The job is retried: a fresh executor (a new worker process) drains again.
    let report = executor(&pool, &tracker)
        .drain_outbox(relay_core::IssueId(issue), &issue_ref(NUMBER))
        .await
        .unwrap();
    assert_eq!(report.sent.len(), 2);
    assert!(report.sent[0].recovered && !report.sent[1].recovered);
    let bodies = tracker.bodies();
    assert_eq!(bodies.len(), 2, "{bodies:#?}");
    assert_eq!(
        bodies
            .iter()
            .filter(|b| b.starts_with("Which format?"))
            .count(),
        1
    );
    assert_eq!(tracker.post_calls.load(Ordering::SeqCst), 2);
    assert_eq!(statuses(&pool, issue).await, vec!["sent", "sent"]);
    let rows = relay_store::outbox::for_issue(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap();
    assert_eq!(
        rows[0].note_id,
        Some(tracker.comments.lock().unwrap()[0].note_id.clone())
    );
}

/// The other side of the race: the attempt was recorded but the process died before the request
/// left. No marker is found, so the write is posted, once.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_crash_before_the_request_left_posts_once(pool: PgPool) {
    let issue = setup(&pool, json!([{"type": "post_comment", "content": "hello"}])).await;
    let mut conn = pool.acquire().await.unwrap();
    let row = relay_store::outbox::pending(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap()
        .remove(0);
    relay_store::outbox::start_attempt(&mut conn, row.id)
        .await
        .unwrap();
    let tracker = Arc::new(MemoryTracker::default());
    // A human quoting the marker does not count: only the bot's own comments are searched.
    tracker.add_human_comment(
        NUMBER,
        &format!("look: <!-- relay:write:{} -->", row.idempotency_key),
    );
    let report = executor(&pool, &tracker)
        .drain_outbox(relay_core::IssueId(issue), &issue_ref(NUMBER))
        .await
        .unwrap();
    assert_eq!(report.sent.len(), 1);
    assert!(!report.sent[0].recovered);
    assert_eq!(tracker.lookups.load(Ordering::SeqCst), 1);
    assert_eq!(
        tracker
            .comments
            .lock()
            .unwrap()
            .iter()
            .filter(|c| c.by_bot)
            .count(),
        1
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn transient_errors_are_retried_inline_and_looked_up_first(pool: PgPool) {
    let issue = setup(&pool, json!([{"type": "post_comment", "content": "hello"}])).await;
    let tracker = Arc::new(MemoryTracker::default());
    tracker.fail_with([
        TrackerError::Transient("503 service unavailable".into()),
        TrackerError::RateLimited {
            retry_after: Duration::ZERO,
        },
    ]);
    let report = executor(&pool, &tracker)
        .drain_outbox(relay_core::IssueId(issue), &issue_ref(NUMBER))
        .await
        .unwrap();
    assert_eq!(report.sent.len(), 1);
    assert!(report.failures.is_empty());
    assert_eq!(tracker.post_calls.load(Ordering::SeqCst), 3);
    // Each retry first checked whether the failed attempt had landed anyway.
    assert_eq!(tracker.lookups.load(Ordering::SeqCst), 2);
    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(
        relay_store::outbox::for_issue(&mut conn, relay_core::IssueId(issue))
            .await
            .unwrap()[0]
            .attempts,
        3
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn three_failures_reschedule_and_later_writes_wait(pool: PgPool) {
    let issue = setup(
        &pool,
        json!([{"type": "post_comment", "content": "first"}, {"type": "post_comment", "content": "second"}]),
    )
    .await;
    let tracker = Arc::new(MemoryTracker::default());
    tracker.fail_with((0..3).map(|_| TrackerError::Transient("503 service unavailable".into())));
    let report = executor(&pool, &tracker)
        .drain_outbox(relay_core::IssueId(issue), &issue_ref(NUMBER))
        .await
        .unwrap();
    assert!(report.sent.is_empty());
    assert_eq!(
        report
            .failures
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        vec!["FAILED: post_comment | transient: 503 service unavailable | retryable"]
    );
    assert!(report.reschedule_after.is_some());
    assert_eq!(
        tracker.post_calls.load(Ordering::SeqCst),
        3,
        "the second write did not overtake"
    );
    assert_eq!(statuses(&pool, issue).await, vec!["pending", "pending"]);

    // Before the delay passes, a drain does nothing and says how long to wait.
    let early = executor(&pool, &tracker)
        .drain_outbox(relay_core::IssueId(issue), &issue_ref(NUMBER))
        .await
        .unwrap();
    assert!(early.sent.is_empty() && early.reschedule_after.is_some());
    assert_eq!(tracker.post_calls.load(Ordering::SeqCst), 3);

    // Once due, both go out, in order.
    sqlx::query("UPDATE outbox SET next_attempt_at = now() WHERE issue_id = $1")
        .bind(issue)
        .execute(&pool)
        .await
        .unwrap();
    let later = executor(&pool, &tracker)
        .drain_outbox(relay_core::IssueId(issue), &issue_ref(NUMBER))
        .await
        .unwrap();
    assert_eq!(later.sent.len(), 2);
    let bodies = tracker.bodies();
    assert!(bodies[0].starts_with("first") && bodies[1].starts_with("second"));
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_long_secondary_limit_is_rescheduled_not_slept(pool: PgPool) {
    let issue = setup(&pool, json!([{"type": "post_comment", "content": "hello"}])).await;
    let tracker = Arc::new(MemoryTracker::default());
    tracker.fail_with([TrackerError::RateLimited {
        retry_after: Duration::from_secs(60),
    }]);
    // The default policy (real 1 s / 2 s / 4 s backoff): a 60 s wait must not be slept inline.
    let executor = Executor::new(pool.clone(), tracker.clone());
    let report = executor
        .drain_outbox(relay_core::IssueId(issue), &issue_ref(NUMBER))
        .await
        .unwrap();
    assert_eq!(report.reschedule_after, Some(Duration::from_secs(60)));
    assert_eq!(
        report.failures[0].to_string(),
        "FAILED: post_comment | rate limited: retry after 60s | retryable"
    );
    assert_eq!(tracker.post_calls.load(Ordering::SeqCst), 1);
    let mut conn = pool.acquire().await.unwrap();
    let row = relay_store::outbox::for_issue(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap()
        .remove(0);
    assert!(row.next_attempt_at > chrono::Utc::now() + chrono::Duration::seconds(50));
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn permanent_errors_fail_that_write_and_the_drain_goes_on(pool: PgPool) {
    let issue = setup(
        &pool,
        json!([{"type": "post_comment", "content": "refused"}, {"type": "post_comment", "content": "fine"}]),
    )
    .await;
    let tracker = Arc::new(MemoryTracker::default());
    tracker.fail_with([TrackerError::Validation(
        "body is too long (maximum is 65536 characters)".into(),
    )]);
    let report = executor(&pool, &tracker)
        .drain_outbox(relay_core::IssueId(issue), &issue_ref(NUMBER))
        .await
        .unwrap();
    assert_eq!(
        report
            .failures
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        vec![
            "FAILED: post_comment | validation failed: body is too long (maximum is 65536 characters) | permanent"
        ]
    );
    assert_eq!(report.sent.len(), 1);
    assert_eq!(tracker.post_calls.load(Ordering::SeqCst), 2);
    assert_eq!(statuses(&pool, issue).await, vec!["failed", "sent"]);
}

/// `relay writes retry` on a write whose refused attempt had in fact landed (the tracker
/// created the comment and answered with an error): the retried drain finds the marker on the
/// tracker, as it does after a crash, and records the write sent without posting it again.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn an_operator_retry_finds_a_write_already_on_the_tracker(pool: PgPool) {
    let issue = setup(
        &pool,
        json!([{"type": "post_comment", "content": "Which format?"}]),
    )
    .await;
    let tracker = Arc::new(MemoryTracker::default());
    tracker.fail_with([TrackerError::Validation(
        "422 after the comment was created".into(),
    )]);
    executor(&pool, &tracker)
        .drain_outbox(relay_core::IssueId(issue), &issue_ref(NUMBER))
        .await
        .unwrap();
    assert_eq!(statuses(&pool, issue).await, vec!["failed"]);
    // What the refused attempt had in fact left on the tracker.
    let mut conn = pool.acquire().await.unwrap();
    let row = relay_store::outbox::for_issue(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap()
        .remove(0);
    drop(conn);
    tracker
        .comments
        .lock()
        .unwrap()
        .push(crate::support::StoredComment {
            issue_number: NUMBER,
            note_id: "landed-1".into(),
            discussion_id: None,
            body: row.body.clone(),
            by_bot: true,
            reply_to: None,
        });

    let outcome = relay_store::operator::retry_write(&pool, row.id, "carol")
        .await
        .unwrap();
    assert!(
        matches!(outcome, relay_store::operator::ActionOutcome::Done { .. }),
        "{outcome:?}"
    );
    let report = executor(&pool, &tracker)
        .drain_outbox(relay_core::IssueId(issue), &issue_ref(NUMBER))
        .await
        .unwrap();
    assert_eq!(report.sent.len(), 1);
    assert!(report.sent[0].recovered, "{report:?}");
    assert_eq!(tracker.comments.lock().unwrap().len(), 1, "posted twice");
    assert_eq!(statuses(&pool, issue).await, vec!["sent"]);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_long_spec_is_posted_in_numbered_parts(pool: PgPool) {
    let issue = insert_issue(&pool, NUMBER, &[]).await;
    let body: String = (0..4000)
        .map(|i| format!("- requirement {i:04}: the export writes CSV\n"))
        .collect();
    assert!(body.chars().count() > 65_536);
    let mut tx = pool.begin().await.unwrap();
    let spec = relay_store::specs::insert_draft(
        &mut tx,
        relay_core::IssueId(issue),
        &body,
        Some(relay_core::JobId(3)),
    )
    .await
    .unwrap();
    let keys = relay_actions::execute::enqueue_spec(
        &mut tx,
        &spec,
        BatchId {
            job_id: relay_core::JobId(3),
            run: 1,
            cycle: 0,
        },
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(keys.len(), 3);

    let mut conn = pool.acquire().await.unwrap();
    assert!(
        !relay_actions::execute::record_spec_posted(&mut conn, spec.id, &keys)
            .await
            .unwrap()
    );
    let tracker = Arc::new(MemoryTracker::default());
    executor(&pool, &tracker)
        .drain_outbox(relay_core::IssueId(issue), &issue_ref(NUMBER))
        .await
        .unwrap();
    let bodies = tracker.bodies();
    assert_eq!(bodies.len(), 3);
    for (i, b) in bodies.iter().enumerate() {
        assert!(b.starts_with(&format!("Spec (part {}/3)\n\n", i + 1)));
        assert!(b.chars().count() <= 65_536);
    }
    assert!(
        relay_actions::execute::record_spec_posted(&mut conn, spec.id, &keys)
            .await
            .unwrap()
    );
    let posted = relay_store::specs::current(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(posted.status, "posted");
    assert_eq!(posted.note_ids.len(), 3);
}

/// A spec whose parts are not sent in the cycle that queued them (the tracker asked to wait) is
/// recorded as posted by the later drain that sends its last part: a `set_spec_status` finds it
/// `posted`, not `draft` for good.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_spec_sent_by_a_later_drain_is_recorded_posted(pool: PgPool) {
    let issue = insert_issue(&pool, NUMBER, &[]).await;
    let body: String = (0..4000)
        .map(|i| format!("- requirement {i:04}: the export writes CSV\n"))
        .collect();
    let mut tx = pool.begin().await.unwrap();
    let spec = relay_store::specs::insert_draft(
        &mut tx,
        relay_core::IssueId(issue),
        &body,
        Some(relay_core::JobId(3)),
    )
    .await
    .unwrap();
    let batch = BatchId {
        job_id: relay_core::JobId(3),
        run: 1,
        cycle: 0,
    };
    let keys = relay_actions::execute::enqueue_spec(&mut tx, &spec, batch)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(keys.len(), 3);

    // The cycle's own drain: the tracker asks to wait a minute; nothing is sent.
    let tracker = Arc::new(MemoryTracker::default());
    tracker.fail_with([TrackerError::RateLimited {
        retry_after: Duration::from_secs(60),
    }]);
    let first = executor(&pool, &tracker)
        .drain_outbox(relay_core::IssueId(issue), &issue_ref(NUMBER))
        .await
        .unwrap();
    assert!(first.sent.is_empty() && first.reschedule_after.is_some());
    sqlx::query("UPDATE outbox SET next_attempt_at = now() WHERE issue_id = $1")
        .bind(issue)
        .execute(&pool)
        .await
        .unwrap();

    // A later drain (the follow-up job or the sweeper) sends every part: the spec is posted.
    let later = executor(&pool, &tracker)
        .drain_outbox(relay_core::IssueId(issue), &issue_ref(NUMBER))
        .await
        .unwrap();
    assert_eq!(later.sent.len(), 3);
    let mut conn = pool.acquire().await.unwrap();
    let posted = relay_store::specs::current(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(posted.status, "posted");
    assert_eq!(posted.note_ids.len(), 3);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn reactions_go_through_the_outbox_too(pool: PgPool) {
    let issue = insert_issue(&pool, NUMBER, &[]).await;
    let mut conn = pool.acquire().await.unwrap();
    let new = relay_actions::notices::enqueue_acknowledgement(
        &mut conn,
        relay_core::IssueId(issue),
        relay_core::JobId(4),
        Some("501"),
    )
    .await
    .unwrap();
    // Once per issue: a later job's acknowledgement is the same row.
    let again = relay_actions::notices::enqueue_acknowledgement(
        &mut conn,
        relay_core::IssueId(issue),
        relay_core::JobId(5),
        Some("501"),
    )
    .await
    .unwrap();
    assert!(new && !again);
    let tracker = Arc::new(MemoryTracker::default());
    tracker.fail_with([TrackerError::Transient("502 bad gateway".into())]);
    let report = executor(&pool, &tracker)
        .drain_outbox(relay_core::IssueId(issue), &issue_ref(NUMBER))
        .await
        .unwrap();
    assert_eq!(report.sent.len(), 1);
    assert_eq!(
        tracker.reactions.lock().unwrap().clone(),
        vec![(
            NUMBER,
            Some("501".to_string()),
            relay_tracker::Reaction::Eyes
        )]
    );
    // Reactions are idempotent on the tracker: no marker lookup.
    assert_eq!(tracker.lookups.load(Ordering::SeqCst), 0);
}
