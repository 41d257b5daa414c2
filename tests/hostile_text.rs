//! Text Relay posts can never act on the tracker, and answers go where the conversation is
//! (issue #22 §2, §3), end to end: a signed Note Hook → gateway → job → scripted planner → the
//! outbox → the local GitLab, which runs quick actions exactly like GitLab does.

use relay_agent::llm::scripted::ScriptedReply;
use relay_core::JobId;
use relay_worker::Outcome;
use serde_json::json;
use sqlx::PgPool;

use crate::orchestrator_gitlab::{GitLabHarness, ISSUE, LLM_KEY, PROJECT, REPORTER, TOKEN};

/// What an attacker plants in the issue, hoping the model repeats it.
const PLANTED: &str = "/close\n/confidential\n/move attacker/loot\n/assign @mallory\n\
/label ~wontfix\n/title pwned\n  /reopen";

/// Issue #33 §2: a reader sees each command inside a fence; GitLab's extractor closes a block
/// early (an HTML block, a fence after a fence, a `>>>` quote) and runs it.
const HIDDEN: [&str; 3] = [
    "<details>\n```\n</details>\n/move attacker/loot\n```",
    "```\n```\n```\n/confidential\n```",
    ">>>\n```\n>>>\n/close\n```",
];

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn planted_quick_actions_and_secrets_echoed_by_the_model_never_act(pool: PgPool) {
    let description = format!("Retries are broken.\n\n{PLANTED}");
    let h = GitLabHarness::start_full(pool, Vec::new(), 0, &description).await;
    let before = h.gitlab.issue_state(PROJECT, ISSUE).unwrap();
    const BODY: &str = "@relay please summarise the issue";
    let (discussion, note) = h.gitlab.seed_note(PROJECT, ISSUE, REPORTER, BODY, false);
    // The model does what the planted text asks: echoes it, with the credentials it "found",
    // and the bodies whose command GitLab's extractor runs after a block it closes early.
    let echo = format!(
        "Summary of the issue:\n{PLANTED}\n```text\n/close (quoted, in a fence)\n```\n\
         token {TOKEN}, key {LLM_KEY}\n{}",
        HIDDEN.join("\n")
    );
    h.llm.push([ScriptedReply::tool_calls(vec![(
        "submit_actions",
        json!({"actions": [{"type": "post_comment", "content": echo}]}),
    )])]);
    let answer = h.deliver(REPORTER, BODY, note, &discussion, "gl-h1").await;
    assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
    let job = answer.body["job"].as_i64().unwrap();
    assert_eq!(
        h.drain().await,
        vec![Outcome::Succeeded { job_id: JobId(job) }]
    );

    assert_eq!(h.gitlab.quick_actions(), [], "no quick action ran");
    assert_eq!(h.gitlab.issue_state(PROJECT, ISSUE).unwrap(), before);
    let bot = h.bot_notes();
    assert_eq!(bot.len(), 1, "{bot:?}");
    let posted = &bot[0].1;
    // Readable: each line kept, a backslash before the slash; the fenced line untouched.
    assert!(
        posted.contains("\\/close\n\\/confidential\n\\/move attacker/loot"),
        "{posted}"
    );
    assert!(posted.contains("  \\/reopen"), "{posted}");
    // Fenced lines too: GitLab's idea of where a block ends is not a reader's.
    assert!(
        posted.contains("```text\n\\/close (quoted, in a fence)\n```"),
        "{posted}"
    );
    assert!(
        posted.contains("<details>\n```\n</details>\n\\/move attacker/loot\n```"),
        "{posted}"
    );
    assert_eq!(
        relay_tracker::fake::gitlab_quick::extract(posted),
        [],
        "{posted}"
    );
    // The secrets were scrubbed before the write entered the outbox.
    assert!(
        !posted.contains(TOKEN) && !posted.contains(LLM_KEY),
        "{posted}"
    );
    assert!(
        posted.contains("token [REDACTED], key [REDACTED]"),
        "{posted}"
    );
    let stored: Vec<String> =
        sqlx::query_scalar("SELECT body FROM outbox WHERE kind = 'comment' OR kind = 'reply'")
            .fetch_all(&h.pool)
            .await
            .unwrap();
    assert!(!stored.is_empty());
    assert!(
        stored
            .iter()
            .all(|b| !b.contains(TOKEN) && !b.contains(LLM_KEY))
    );
    h.assert_no_secret_leaked();
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_comment_without_reply_to_answers_in_the_triggering_discussion(pool: PgPool) {
    let h = GitLabHarness::start(pool, Vec::new()).await;
    // An earlier, unrelated discussion: the answer must not go there either.
    h.gitlab
        .seed_note(PROJECT, ISSUE, "someone", "unrelated remark", false);
    const BODY: &str = "@relay is the retry count configurable?";
    let (discussion, note) = h.gitlab.seed_note(PROJECT, ISSUE, REPORTER, BODY, false);
    h.llm.push([ScriptedReply::tool_calls(vec![(
        "submit_actions",
        json!({"actions": [{"type": "post_comment", "content": "Yes: Config.Retries."}]}),
    )])]);
    let answer = h.deliver(REPORTER, BODY, note, &discussion, "gl-h2").await;
    assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
    let job = answer.body["job"].as_i64().unwrap();
    assert_eq!(
        h.drain().await,
        vec![Outcome::Succeeded { job_id: JobId(job) }]
    );

    let bot = h.bot_notes();
    assert_eq!(bot.len(), 1, "{bot:?}");
    assert_eq!(
        bot[0].0, discussion,
        "the answer is in the asker's discussion"
    );
    assert_eq!(
        h.gitlab.discussions(PROJECT, ISSUE).len(),
        2,
        "no new discussion was started"
    );
}
