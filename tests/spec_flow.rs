//! The spec path end to end through the gateway (GitLab, the scripted LLM, real Postgres):
//! a mention asks a blocking question → the reporter answers "go ahead" → the planner closes the
//! gap verbatim and calls `ready_for_spec_generation` → the spec writer's long spec is stored and
//! posted in numbered parts, none ending inside a code fence → "approved" sets its status.

use relay_agent::llm::scripted::ScriptedReply;
use relay_core::{IssueId, JobId};
use relay_worker::Outcome;
use serde_json::json;
use sqlx::PgPool;

use crate::orchestrator_gitlab::{GitLabHarness, ISSUE, PROJECT, REPORTER, mention};

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn go_ahead_posts_the_spec_in_parts_and_approval_sets_its_status(pool: PgPool) {
    let h = GitLabHarness::start(pool, Vec::new()).await;
    let discussion = mention(&h).await;
    let bot_before = h.bot_notes().len();

    // The reporter answers the gap and says to proceed.
    const GO: &str = "@relay only the upload calls should retry. Go ahead.";
    let (_, note) = h.gitlab.seed_note(PROJECT, ISSUE, REPORTER, GO, false);
    let long_change = "Read the retry count from the config and pass it down. ".repeat(1_400);
    let code = (0..400)
        .map(|i| format!("    retries_{i} := cfg.Retries\n"))
        .collect::<String>();
    h.llm.push([
        ScriptedReply::tool_calls(vec![(
            "submit_actions",
            json!({"actions": [
                {"type": "update_gaps", "close": [{"gap": "gap 1", "reason": "answered", "note": GO,
                                                    "note_id": note.to_string()}]},
                {"type": "ready_for_spec_generation", "proceed_signal": "Go ahead.",
                 "proceed_note_id": note.to_string(), "context_summary": "configurable retries for uploads", "closed_gaps": ["1"], "finding_ids": []}
            ]}),
        )]),
        ScriptedReply::tool_calls(vec![(
            "submit_spec",
            json!({"title": "Configurable upload retries", "goal": "Let operators set upload retries.",
                   "context": "Config.Retries exists.", "decisions": ["Only upload calls retry (gap 1)."],
                   "changes": [{"path": "config.go", "change": format!("{long_change}\n\n```go\n{code}```\n")}],
                   "test_plan": ["retries = 0 disables retrying"], "risks": ["none"]}),
        )]),
    ]);
    let answer = h.deliver(REPORTER, GO, note, &discussion, "gl-go").await;
    assert_eq!(answer.outcome(), "accepted", "{:?}", answer.body);
    let job = answer.body["job"].as_i64().unwrap();
    assert_eq!(
        h.drain().await,
        vec![Outcome::Succeeded { job_id: JobId(job) }]
    );

    let gaps = h.gaps().await;
    assert_eq!(gaps[0].status, "closed");
    assert_eq!(gaps[0].close_note.as_deref(), Some(GO), "verbatim");
    let issue = h.issue_id().await;
    let mut conn = h.pool.acquire().await.unwrap();
    let spec = relay_store::specs::current(&mut conn, IssueId(issue))
        .await
        .unwrap()
        .expect("a stored spec");
    drop(conn);
    assert_eq!((spec.version, spec.status.as_str()), (1, "posted"));
    let parts: Vec<String> = h
        .bot_notes()
        .into_iter()
        .skip(bot_before)
        .map(|(_, body)| body)
        .filter(|body| body.starts_with("Spec (part "))
        .collect();
    assert!(parts.len() >= 2, "posted in parts: {}", parts.len());
    assert_eq!(spec.note_ids.len(), parts.len());
    for (i, part) in parts.iter().enumerate() {
        assert!(
            part.starts_with(&format!("Spec (part {}/{})", i + 1, parts.len())),
            "{}",
            &part[..40]
        );
        let fences = part
            .lines()
            .filter(|l| l.trim_start().starts_with("```"))
            .count();
        assert_eq!(fences % 2, 0, "part {} ends inside a code fence", i + 1);
    }

    // The reporter approves.
    const APPROVAL: &str = "@relay looks right to me, approved.";
    let spec = h.approve_spec(&discussion, APPROVAL, "gl-approve").await;
    assert_eq!(spec.status, "approved");
    assert_eq!(spec.note.as_deref(), Some(APPROVAL));
    h.assert_no_secret_leaked();
}
