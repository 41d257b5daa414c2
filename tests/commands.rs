//! Commands in a mention, end to end on both trackers (real Postgres, the local GitHub and
//! GitLab, the scripted LLM): every command from someone allowed to engage Relay, the same
//! from a non-member (ignored), `forget` keeping a learning out of every later prompt, and the
//! per-issue cap ending in exactly one status comment.

use relay_core::IssueId;
use serde_json::json;
use sqlx::PgPool;

use crate::repo_config_harness::*;

/// Every command, in the order a team would use them, on `h`.
async fn every_command(h: &Harness) {
    h.set_role("maint", Role::Maintainer);
    h.set_role("dev", Role::Member);
    let bot = h.bot();
    let last = || h.bot_comments().last().cloned().unwrap_or_default();

    h.say("dev", &format!("{bot} help")).await;
    assert!(last().contains("Commands (one per comment"), "{}", last());
    assert!(
        last().contains(&format!("`{bot} budget <amount>`")),
        "{}",
        last()
    );

    h.say("dev", &format!("{bot} sttaus")).await;
    assert!(
        last().starts_with("I do not know the command `sttaus`."),
        "{}",
        last()
    );

    // A non-member's command is ignored like any of their mentions: no answer at all.
    let before = h.bot_comments().len();
    h.say("stranger", &format!("{bot} stop")).await;
    h.say("stranger", &format!("{bot} help")).await;
    assert_eq!(h.bot_comments().len(), before, "{:?}", h.bot_comments());

    h.say("dev", &format!("{bot} status")).await;
    assert!(
        last().starts_with(
            "Status: 0 open questions (0 blocking), 0 findings (0 stale), no spec yet;"
        ),
        "{}",
        last()
    );
    assert!(
        last().ends_with("Relay is active on this issue."),
        "{}",
        last()
    );

    // stop: a plain mention afterwards is consumed in silence, without an LLM call.
    h.say("dev", &format!("{bot} stop")).await;
    assert!(
        last().starts_with("Stopped: I will stay silent"),
        "{}",
        last()
    );
    let comments = h.bot_comments().len();
    h.say("dev", &format!("{bot} can retries be configured?"))
        .await;
    assert_eq!(h.bot_comments().len(), comments);
    assert!(h.llm.requests().is_empty(), "no LLM call while stopped");
    let issue = h.api(&format!("/api/issues/{}", h.issue_id().await)).await;
    assert_eq!(issue["status"], "stopped", "{issue}");
    assert_eq!(issue["budget"]["stopped"]["stopped_by"], "@dev");

    h.say("dev", &format!("{bot} resume")).await;
    assert!(last().starts_with("Resumed:"), "{}", last());

    // forget: a learning of this repository by id; an unknown id says so.
    let learning = seed_learning(h, "Retries are read in config.go.").await;
    h.say("dev", &format!("{bot} forget {learning}")).await;
    assert!(
        last().starts_with(&format!(
            "Forgot learning {learning}: it will not be used again."
        )),
        "{}",
        last()
    );
    h.say("dev", &format!("{bot} forget 999999")).await;
    assert!(
        last().starts_with("This repository has no learning 999999"),
        "{}",
        last()
    );

    // budget: only a maintainer raises the cap; the raise goes on to a planner cycle.
    h.say("dev", &format!("{bot} budget 200k")).await;
    // The refusal says what is checked on this tracker (issue #45 §4).
    let rule = match h.side {
        Side::GitHub(_) => "someone with admin permission on this repository",
        Side::GitLab(_) => "a member with the Maintainer or Owner role on this project",
    };
    assert_eq!(
        last(),
        format!("Only {rule} can raise this issue's budget."),
        "{}",
        last()
    );
    assert!(h.llm.requests().is_empty());
    h.script(comment_only("Continuing with the retries."));
    h.say("maint", &format!("{bot} budget 200k")).await;
    let comments = h.bot_comments();
    let raised = &comments[comments.len() - 2];
    assert!(
        raised
            .starts_with("Raised this issue's cap by 200000 tokens: it now allows 700000 tokens."),
        "{raised}"
    );
    assert_eq!(last(), "Continuing with the retries.");
    assert_eq!(h.llm.requests().len(), 1);

    // refresh: re-verified at the remote head (a new commit), then a planner cycle.
    std::fs::write(
        h.upstream().join("retry.go"),
        "package main\n\nfunc Retry() {}\n",
    )
    .unwrap();
    crate::helpers::git(h.upstream(), &["add", "-A"]);
    crate::helpers::git(h.upstream(), &["commit", "-qm", "v2"]);
    let head = crate::helpers::git(h.upstream(), &["rev-parse", "HEAD"]);
    h.script(comment_only("Planned again."));
    h.say("dev", &format!("{bot} refresh")).await;
    let comments = h.bot_comments();
    let refreshed = &comments[comments.len() - 2];
    assert!(
        refreshed.starts_with(&format!("Refreshed at commit {}:", &head[..12])),
        "{refreshed}"
    );
    assert_eq!(last(), "Planned again.");
    assert_eq!(h.llm.requests().len(), 2);
    // The planner saw the command as answered, never as something to act on.
    let planner = h.llm_bodies().last().cloned().unwrap();
    assert!(
        planner.contains("command `refresh` (Relay answered it already"),
        "{planner}"
    );
}

async fn seed_learning(h: &Harness, content: &str) -> i64 {
    let tracker = match h.side {
        Side::GitHub(_) => "github",
        Side::GitLab(_) => "gitlab",
    };
    let project = h.project_id().await;
    let mut conn = h.pool.acquire().await.unwrap();
    relay_store::learnings::propose(
        &mut conn,
        &relay_store::learnings::NewLearning {
            tracker,
            project_id: &project,
            kind: "code",
            content,
            issue_id: Some(IssueId(h.issue_id().await)),
            run: None,
            restricted: false,
            note_id: None,
            guidance_digest: None,
        },
    )
    .await
    .unwrap();
    sqlx::query_scalar("SELECT max(id) FROM learnings")
        .fetch_one(&h.pool)
        .await
        .unwrap()
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn every_command_on_github(pool: PgPool) {
    let h = Harness::github(pool, &repository(&[]), agent()).await;
    every_command(&h).await;
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn every_command_on_gitlab_in_its_discussion_and_never_a_quick_action(pool: PgPool) {
    let h = Harness::gitlab(pool, &repository(&[]), agent()).await;
    every_command(&h).await;
    let Side::GitLab(gitlab) = &h.side else {
        unreachable!()
    };
    // Each answer is in the discussion of its command.
    for discussion in gitlab.discussions(GL_PROJECT, GL_ISSUE) {
        let asked = discussion
            .notes
            .iter()
            .any(|n| n.author == "dev" && n.body.starts_with("@relay help"));
        if asked {
            assert!(
                discussion
                    .notes
                    .iter()
                    .any(|n| n.author == GL_BOT && n.body.contains("Commands (one per comment")),
                "{discussion:?}"
            );
        }
    }
    // A command whose argument is a quick action gets the usage, and nothing runs.
    h.say("dev", "@relay budget /close").await;
    let answer = h.bot_comments().last().cloned().unwrap();
    assert!(answer.starts_with("Usage: `budget <amount>"), "{answer}");
    assert!(
        gitlab.quick_actions().is_empty(),
        "{:?}",
        gitlab.quick_actions()
    );
    assert_eq!(
        gitlab.issue_state(GL_PROJECT, GL_ISSUE).unwrap().state,
        "opened"
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_forgotten_learning_never_reaches_a_later_prompt(pool: PgPool) {
    let h = Harness::github(pool, &repository(&[]), agent()).await;
    h.set_role("Codertocat", Role::Maintainer);
    h.script(comment_only("First."));
    h.say("Codertocat", "@relay-bot can retries be configured?")
        .await;
    let learning = seed_learning(&h, "LEARNING-MARK-42: retries are read once.").await;

    h.script(comment_only("Second."));
    h.say("Codertocat", "@relay-bot and now?").await;
    assert!(
        h.llm_bodies()[1].contains("LEARNING-MARK-42"),
        "a learning reaches the prompt"
    );

    h.say("Codertocat", &format!("@relay-bot forget {learning}"))
        .await;
    h.script(comment_only("Third."));
    h.say("Codertocat", "@relay-bot once more?").await;
    let bodies = h.llm_bodies();
    assert_eq!(bodies.len(), 3);
    assert!(
        !bodies[2].contains("LEARNING-MARK-42"),
        "a forgotten learning stays out"
    );

    let project = h
        .api(&format!("/api/projects/github/{}", h.project_id().await))
        .await;
    let row = &project["learnings"][0];
    assert_eq!(row["id"], learning);
    assert_eq!(row["prompt_uses"], 1, "{row}");
    assert_eq!(row["forgotten_by"], "@Codertocat");
    assert!(row["forgotten_at"].is_string());
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_cap_ends_in_exactly_one_status_comment(pool: PgPool) {
    let files = repository(&[(".relay.toml", "[budget]\nissue_tokens = 1000\n")]);
    let h = Harness::gitlab(pool.clone(), &files, agent()).await;
    h.set_role("maint", Role::Maintainer);
    h.script(comment_only("First answer."));
    h.say("maint", "@relay can retries be configured?").await;
    // Spend past the repository's cap (the scripted calls report no usage: estimated).
    relay_store::llm_usage::insert(
        &pool,
        &relay_store::llm_usage::NewLlmUsage {
            job_id: None,
            issue_id: Some(IssueId(h.issue_id().await)),
            role: "planner",
            provider: "openai",
            model: "m",
            prompt_tokens: 5_000,
            completion_tokens: 0,
            cached_tokens: 0,
            latency_ms: 1,
            attempts: 1,
            outcome: "ok",
            error_kind: None,
            estimated: false,
        },
    )
    .await
    .unwrap();
    let calls = h.llm.requests().len();
    for text in ["@relay and the timeout?", "@relay hello?", "any news?"] {
        h.say("maint", text).await;
    }
    assert_eq!(h.llm.requests().len(), calls, "no LLM call past the cap");
    let comments = h.bot_comments();
    let stops: Vec<&String> = comments
        .iter()
        .filter(|c| c.starts_with("Stopped:"))
        .collect();
    assert_eq!(stops.len(), 1, "{comments:?}");
    assert!(
        stops[0].contains("allowed: 1000 tokens, set by the repository's .relay.toml"),
        "{}",
        stops[0]
    );
    assert!(stops[0].contains("`@relay budget 200k`"), "{}", stops[0]);
    assert_eq!(
        comments.len(),
        2,
        "the first answer and the one stop: {comments:?}"
    );
    let issue = h.api(&format!("/api/issues/{}", h.issue_id().await)).await;
    assert_eq!(issue["budget"]["cap_tokens"], 1000, "{issue}");
    assert!(issue["budget"]["spent_tokens"].as_u64().unwrap() >= 5_000);
    assert!(json!(issue["spec"]).is_null(), "no partial spec");
}
