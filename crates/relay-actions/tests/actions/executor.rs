//! The batch transaction: state changes, outbox rows and the watermark commit together or not
//! at all; replays map to the same outbox rows.

use crate::support::{MemoryTracker, batch, checkout, insert_issue};
use relay_actions::{BatchId, Error, Executor, ValidationContext, WatermarkRaise, validate};
use relay_core::JobId;
use relay_store::PgPool;
use serde_json::json;
use std::sync::Arc;

async fn count(pool: &PgPool, sql: &str, issue: i64) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_owned()))
        .bind(issue)
        .fetch_one(pool)
        .await
        .unwrap()
}

async fn watermark(pool: &PgPool, issue: i64) -> i64 {
    count(
        pool,
        "SELECT handled_delivery_id FROM issues WHERE id = $1",
        issue,
    )
    .await
}

async fn open_gap(pool: &PgPool, issue: i64, severity: &str) {
    let mut conn = pool.acquire().await.unwrap();
    relay_store::gaps::open(
        &mut conn,
        relay_core::IssueId(issue),
        &relay_store::gaps::NewGapRow {
            question: "Which format?",
            severity,
            respondent: "reporter",
            evidence: None,
            run: Some(relay_core::JobId(1)),
        },
    )
    .await
    .unwrap();
}

fn executor(pool: &PgPool) -> Executor {
    Executor::new(pool.clone(), Arc::new(MemoryTracker::default()))
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_batch_commits_state_outbox_and_watermark_together(pool: PgPool) {
    let issue = insert_issue(&pool, 7, &[("501", Some("dA"))]).await;
    open_gap(&pool, issue, "blocking").await;
    let (_dir, snapshot) = checkout();
    let mut conn = pool.acquire().await.unwrap();
    let mut ctx = ValidationContext::load(&mut conn, relay_core::IssueId(issue), Some(snapshot))
        .await
        .unwrap();
    // The pending note of an author who may engage Relay, as the orchestrator hands it over.
    ctx.authority = relay_actions::Authority::Events {
        admitted: vec![relay_actions::PendingNote::new("501", "CSV please.\nGo")],
        refused: Vec::new(),
    };
    let validated = validate(
        &ctx,
        &batch(json!({"actions": [
            {"type": "update_gaps", "close": [{"gap": "1", "reason": "answered", "note": "CSV please.", "note_id": "501"}],
             "add": [{"question": "Which encoding?", "severity": "low", "respondent": "assignee",
              "evidence": "no BOM: `pkg/export.go:4-5` writes raw bytes; pkg/missing.go:3 is not there"}]},
            {"type": "update_findings", "add": [{"synthesis": "Export is a stub",
                "sources": [{"path": "./pkg/export.go", "start_line": 4, "end_line": 5}]}]},
            {"type": "update_learnings", "propose": [{"kind": "code", "content": "Exports live in pkg/."}]},
            {"type": "post_comment", "content": "Thanks, CSV it is.", "reply_to": "501"},
            {"type": "ready_for_spec_generation", "proceed_signal": "go", "proceed_note_id": "501", "context_summary": "CSV export"}
        ]})),
    )
    .unwrap();

    let applied = executor(&pool)
        .execute(
            &validated,
            BatchId {
                job_id: relay_core::JobId(11),
                run: 1,
                cycle: 0,
            },
            Some(WatermarkRaise {
                issue_id: relay_core::IssueId(issue),
                through_delivery: 5,
            }),
        )
        .await
        .unwrap();
    assert_eq!(applied.closed_gaps, vec![1]);
    assert_eq!(applied.opened_gaps, vec![2]);
    assert_eq!(applied.added_findings, vec![1]);
    assert_eq!(applied.new_learnings, 1);
    assert_eq!(
        applied.outbox_keys,
        vec![format!("i{issue}-j11-r1-c0-a3-p0")]
    );
    assert!(applied.spec_requested.is_some());
    let request = relay_store::specs::pending_request(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap()
        .expect("the go-ahead is recorded with the batch");
    assert_eq!(Some(request.id), applied.spec_request_id);
    assert_eq!(watermark(&pool, issue).await, 5);

    let gaps = relay_store::gaps::list(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap();
    assert_eq!(gaps[0].close_note.as_deref(), Some("CSV please."));
    assert_eq!(gaps[0].closed_by_run, Some(JobId(11)));
    assert_eq!(gaps[1].opened_by_run, Some(JobId(11)));
    // The evidence's code places that stand in the checkout are the gap's sources.
    let evidence = relay_store::gaps::evidence_sources(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap();
    let places: Vec<_> = evidence
        .iter()
        .map(|e| {
            (
                e.gap_number,
                e.source.path.as_str(),
                e.source.start_line,
                e.source.end_line,
                e.source.commit_sha.as_str(),
            )
        })
        .collect();
    assert_eq!(places, [(2, "pkg/export.go", 4, 5, "c0ffee")]);
    let findings = relay_store::findings::live(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap();
    assert_eq!(
        findings[0].sources[0].path, "pkg/export.go",
        "normalised by the citation check"
    );
    assert_eq!(findings[0].sources[0].commit_sha, "c0ffee");
    let outbox = relay_store::outbox::for_issue(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap();
    assert_eq!(outbox.len(), 1);
    assert_eq!(outbox[0].kind, "reply");
    assert_eq!(outbox[0].target_discussion_id.as_deref(), Some("dA"));
    assert_eq!(
        outbox[0].body,
        format!("Thanks, CSV it is.\n\n<!-- relay:write:i{issue}-j11-r1-c0-a3-p0 -->")
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_failure_mid_batch_leaves_nothing(pool: PgPool) {
    let issue = insert_issue(&pool, 7, &[]).await;
    open_gap(&pool, issue, "low").await;
    let (_dir, snapshot) = checkout();
    let mut conn = pool.acquire().await.unwrap();
    let ctx = ValidationContext::load(&mut conn, relay_core::IssueId(issue), Some(snapshot))
        .await
        .unwrap();
    let validated = validate(
        &ctx,
        &batch(json!({"actions": [
            {"type": "post_comment", "content": "first"},
            {"type": "update_findings", "add": [{"synthesis": "s",
                "sources": [{"path": "pkg/export.go", "start_line": 1, "end_line": 1}]}]},
            {"type": "update_learnings", "propose": [{"kind": "domain", "content": "Reports are CSV."}]},
            {"type": "update_gaps", "add": [{"question": "q?", "severity": "low", "respondent": "reporter"}],
             "close": [{"gap": "1", "reason": "inferred", "note": "n"}]}
        ]})),
    )
    .unwrap();
    // Another run closes gap 1 between validation and execution: the 4th action fails after
    // three have written rows.
    let closure = relay_store::gaps::GapClosure {
        reason: "answered",
        note: "x",
        run: Some(relay_core::JobId(2)),
    };
    relay_store::gaps::close(&mut conn, relay_core::IssueId(issue), 1, &closure)
        .await
        .unwrap();

    let error = executor(&pool)
        .execute(
            &validated,
            BatchId {
                job_id: relay_core::JobId(3),
                run: 1,
                cycle: 0,
            },
            Some(WatermarkRaise {
                issue_id: relay_core::IssueId(issue),
                through_delivery: 9,
            }),
        )
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Conflict(_)), "{error}");
    assert_eq!(
        error.to_string(),
        "state changed since validation: gap 1 is no longer open"
    );
    assert_eq!(
        count(
            &pool,
            "SELECT count(*) FROM outbox WHERE issue_id = $1",
            issue
        )
        .await,
        0
    );
    assert_eq!(
        count(
            &pool,
            "SELECT count(*) FROM findings WHERE issue_id = $1",
            issue
        )
        .await,
        0
    );
    assert_eq!(
        count(
            &pool,
            "SELECT count(*) FROM learnings WHERE issue_id = $1",
            issue
        )
        .await,
        0
    );
    assert_eq!(
        count(
            &pool,
            "SELECT count(*) FROM gaps WHERE issue_id = $1",
            issue
        )
        .await,
        1
    );
    assert_eq!(watermark(&pool, issue).await, 0);

    // The same holds for the caller's own transaction: apply, then a failing step, no commit.
    let ok = validate(
        &ValidationContext::load(&mut conn, relay_core::IssueId(issue), None)
            .await
            .unwrap(),
        &batch(json!({"actions": [{"type": "post_comment", "content": "second"}]})),
    )
    .unwrap();
    let mut tx = pool.begin().await.unwrap();
    executor(&pool)
        .apply(
            &mut tx,
            &ok,
            BatchId {
                job_id: relay_core::JobId(4),
                run: 1,
                cycle: 0,
            },
        )
        .await
        .unwrap();
    relay_store::issues::mark_events_handled(&mut tx, relay_core::IssueId(issue), 12)
        .await
        .unwrap();
    drop(tx); // the job died before committing
    assert_eq!(
        count(
            &pool,
            "SELECT count(*) FROM outbox WHERE issue_id = $1",
            issue
        )
        .await,
        0
    );
    assert_eq!(watermark(&pool, issue).await, 0);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_replayed_batch_maps_to_the_same_writes(pool: PgPool) {
    let issue = insert_issue(&pool, 7, &[]).await;
    let mut conn = pool.acquire().await.unwrap();
    let ctx = ValidationContext::load(&mut conn, relay_core::IssueId(issue), None)
        .await
        .unwrap();
    let validated = validate(
        &ctx,
        &batch(json!({"actions": [
            {"type": "post_comment", "content": "one"},
            {"type": "update_learnings", "propose": [{"kind": "domain", "content": "Reports are CSV."}]},
            {"type": "post_comment", "content": "two"}
        ]})),
    )
    .unwrap();
    let id = BatchId {
        job_id: relay_core::JobId(5),
        run: 1,
        cycle: 1,
    };
    let first = executor(&pool).execute(&validated, id, None).await.unwrap();
    let again = executor(&pool).execute(&validated, id, None).await.unwrap();
    assert_eq!(first.outbox_keys, again.outbox_keys);
    assert_eq!((again.new_learnings, again.duplicate_learnings), (0, 1));
    assert_eq!(
        count(
            &pool,
            "SELECT count(*) FROM outbox WHERE issue_id = $1",
            issue
        )
        .await,
        2
    );
    // Another cycle is another decision: new keys.
    let next = executor(&pool)
        .execute(
            &validated,
            BatchId {
                job_id: relay_core::JobId(5),
                run: 1,
                cycle: 2,
            },
            None,
        )
        .await
        .unwrap();
    assert_ne!(next.outbox_keys, first.outbox_keys);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn findings_past_the_cap_drop_the_oldest_and_say_so(pool: PgPool) {
    let issue = insert_issue(&pool, 7, &[]).await;
    let mut conn = pool.acquire().await.unwrap();
    let source = relay_store::findings::SourceRow {
        path: "pkg/export.go".into(),
        start_line: 1,
        end_line: 1,
        quote: None,
        commit_sha: "old".into(),
        ..Default::default()
    };
    for i in 0..19 {
        relay_store::findings::insert(
            &mut conn,
            relay_core::IssueId(issue),
            &format!("f{i}"),
            None,
            std::slice::from_ref(&source),
        )
        .await
        .unwrap();
    }
    let (_dir, snapshot) = checkout();
    let ctx = ValidationContext::load(&mut conn, relay_core::IssueId(issue), Some(snapshot))
        .await
        .unwrap();
    let add: Vec<_> = (0..3)
        .map(|i| json!({"synthesis": format!("new {i}"), "sources": [{"path": "pkg/export.go", "start_line": 4, "end_line": 4}]}))
        .collect();
    let validated = validate(
        &ctx,
        &batch(json!({"actions": [{"type": "update_findings", "add": add}]})),
    )
    .unwrap();
    let applied = executor(&pool)
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
    assert_eq!(applied.added_findings, vec![20, 21, 22]);
    assert_eq!(applied.dropped_findings, vec![1, 2]);
    assert_eq!(
        applied.notes,
        vec!["dropped the oldest findings 1, 2 (at most 20 are kept per issue)".to_string()]
    );
    assert_eq!(
        relay_store::findings::live(&mut conn, relay_core::IssueId(issue))
            .await
            .unwrap()
            .len(),
        20
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn spec_verdicts_are_recorded(pool: PgPool) {
    let issue = insert_issue(&pool, 7, &[]).await;
    let mut conn = pool.acquire().await.unwrap();
    let spec = relay_store::specs::insert_draft(
        &mut conn,
        relay_core::IssueId(issue),
        "the spec",
        Some(relay_core::JobId(1)),
    )
    .await
    .unwrap();
    relay_store::specs::mark_posted(&mut conn, spec.id, &["n1".to_string()])
        .await
        .unwrap();
    let mut ctx = ValidationContext::load(&mut conn, relay_core::IssueId(issue), None)
        .await
        .unwrap();
    let verdict = batch(
        json!({"actions": [{"type": "set_spec_status", "status": "rejected", "note": "No, use JSON instead.", "note_id": "n2"}]}),
    );
    assert!(
        validate(&ctx, &verdict).is_err(),
        "a loaded context admits no decision until the orchestrator says whose words count"
    );
    ctx.authority = relay_actions::Authority::Events {
        admitted: vec![relay_actions::PendingNote::new(
            "n2",
            "@relay No, use JSON instead.",
        )],
        refused: vec![relay_actions::PendingNote::new("n3", "@relay approved!")],
    };
    let validated = validate(&ctx, &verdict).unwrap();
    let applied = executor(&pool)
        .execute(
            &validated,
            BatchId {
                job_id: relay_core::JobId(2),
                run: 1,
                cycle: 0,
            },
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        applied.spec_verdict,
        Some(relay_core::action::SpecVerdict::Rejected)
    );
    let current = relay_store::specs::current(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (current.status.as_str(), current.note.as_deref()),
        ("rejected", Some("No, use JSON instead."))
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_worker_that_lost_its_lease_cannot_apply_a_batch(pool: PgPool) {
    let issue = insert_issue(&pool, 7, &[]).await;
    let mut conn = pool.acquire().await.unwrap();
    let ctx = ValidationContext::load(&mut conn, relay_core::IssueId(issue), None)
        .await
        .unwrap();
    let validated = validate(
        &ctx,
        &batch(json!({"actions": [{"type": "post_comment", "content": "hello"}]})),
    )
    .unwrap();
    let payload = json!({"issue_id": issue});
    relay_store::queue::enqueue(
        &mut conn,
        &relay_store::queue::NewJob {
            kind: "process_issue",
            payload: &payload,
            concurrency_key: Some("issue:x"),
            max_attempts: 3,
        },
    )
    .await
    .unwrap();
    let lease = std::time::Duration::from_secs(30);
    let job = relay_store::queue::claim(&pool, "w1", lease)
        .await
        .unwrap()
        .unwrap();
    let id = BatchId {
        job_id: job.id,
        run: 1,
        cycle: 0,
    };
    let stale = relay_actions::Lease {
        job_id: job.id,
        token: uuid::Uuid::new_v4(),
    };
    let refused = executor(&pool)
        .with_lease(Some(stale))
        .execute(&validated, id, None)
        .await;
    assert!(
        matches!(refused, Err(relay_actions::Error::LeaseLost)),
        "{refused:?}"
    );
    assert!(
        relay_store::outbox::for_issue(&mut conn, relay_core::IssueId(issue))
            .await
            .unwrap()
            .is_empty(),
        "nothing was applied"
    );
    let held = relay_actions::Lease {
        job_id: job.id,
        token: job.lease_token,
    };
    let applied = executor(&pool)
        .with_lease(Some(held))
        .execute(&validated, id, None)
        .await
        .unwrap();
    assert_eq!(applied.outbox_keys.len(), 1);
}
