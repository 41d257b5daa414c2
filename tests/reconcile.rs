//! The reconciler end to end: real Postgres, the local GitHub and GitLab servers, the gateway, the
//! worker with the orchestrator and the scripted LLM. A mention whose webhook never arrives is
//! found by a pass and answered exactly once; the lost webhook arriving later (a new delivery id)
//! is the same event; the webhook first and a pass afterwards is one event too; who may engage is
//! decided as for a webhook; an idle pass costs at most two calls per project, and a failing
//! project does not hold the others back.

use relay_core::engage::Decision;
use relay_tracker::Trackers;
use relay_tracker::fake::{Failure, FakeGitHub};
use relay_worker::Outcome;
use relay_worker::reconcile::{PassOptions, ReconcileSettings, Reconciler};
use sqlx::PgPool;

use crate::helpers::*;
use crate::orchestrator_gitlab::{self as gl, GitLabHarness};
pub use crate::reconcile_harness::{GitHubHarness, REPO, TOKEN};

const MENTION: &str = "@relay-bot can retries be configured?";

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
async fn an_edit_adding_a_mention_whose_webhook_was_lost_engages_once(pool: PgPool) {
    let h = GitHubHarness::start(pool.clone()).await;
    h.see_issue_opened().await;
    // The comment's creation webhook arrives (no mention: ignored)…
    let comment = h
        .github
        .seed_comment(REPO, 1, "Codertocat", "retries look odd");
    let answer = h
        .deliver_comment(comment, "Codertocat", "retries look odd", "created")
        .await;
    assert_eq!(answer.reason(), "no_mention", "{:?}", answer.body);
    // …then the author edits in a mention, and that webhook is lost.
    assert!(h.github.edit_comment(comment, MENTION));
    let report = h.pass().await;
    let engaged: Vec<_> = report
        .projects
        .iter()
        .flat_map(|p| &p.events)
        .filter(|e| matches!(e.decision, Decision::Engage(_)))
        .collect();
    assert_eq!(engaged.len(), 1, "{report:?}");
    assert_eq!(engaged[0].decision, Decision::Engage("mention"));
    assert!(
        engaged[0].event_key.contains("/edited@"),
        "{}",
        engaged[0].event_key
    );
    h.worker.drain().await.unwrap();
    assert_eq!(h.bot_comments().len(), 1);
    // The edit seen again is old news.
    let again = h.pass().await;
    assert!(
        again
            .projects
            .iter()
            .flat_map(|p| &p.events)
            .all(|e| !matches!(e.decision, Decision::Engage(_))),
        "{again:?}"
    );
    assert!(h.worker.drain().await.unwrap().is_empty());
    assert_eq!(h.bot_comments().len(), 1);
}

/// An issue edit whose webhook was lost is found by the reconciler, but the REST lists do not say
/// who made it: it is credited to nobody (not the issue's author), so it is context only and no
/// LLM call or write follows.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn an_issue_edit_found_by_the_reconciler_credits_nobody(pool: PgPool) {
    let h = GitHubHarness::start(pool.clone()).await;
    h.see_issue_opened().await;
    // The issue's author (as the tracker lists it) could make Relay act.
    h.github.set_permission(REPO, "octocat", "admin");
    assert!(
        h.github
            .edit_issue(REPO, 1, "It is broken. @relay-bot approve the spec")
    );
    let report = h.pass().await;
    let events: Vec<_> = report.projects.iter().flat_map(|p| &p.events).collect();
    let edit = events
        .iter()
        .find(|e| !e.event_key.contains("/note/"))
        .unwrap_or_else(|| panic!("the edit is found: {report:?}"));
    assert_eq!(edit.actor, "", "nobody is credited: {report:?}");
    h.worker.drain().await.unwrap();
    assert!(h.llm.requests().is_empty(), "no planner call");
    assert!(h.bot_comments().is_empty());
}
