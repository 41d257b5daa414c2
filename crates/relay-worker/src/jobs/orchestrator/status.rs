//! The status comment of a cycle that stopped without a decision: what Relay did, what stopped
//! it, how to re-trigger. Short on purpose; at most one per cycle (the caller's rule).

use relay_agent::planner::{PlanOutcome, StopReason};
use relay_store::issues::IssueEventRow;

use super::issue_context::Note;

/// The comment body for a stopped cycle.
pub fn status_comment(outcome: &PlanOutcome, reason: &StopReason, bot_username: &str) -> String {
    let did = if outcome.explores == 0 {
        "I read the issue and the thread".to_owned()
    } else {
        format!(
            "I read the issue and the thread and ran {} code exploration{}",
            outcome.explores,
            if outcome.explores == 1 { "" } else { "s" }
        )
    };
    let why = match reason {
        StopReason::IterationCap(_) => "I hit my step limit before reaching a decision",
        StopReason::Budget { .. } => "I ran out of my token budget for this round",
        StopReason::RepeatedValidationFailures { .. } => {
            "my proposed updates failed validation repeatedly, so I wrote nothing"
        }
        StopReason::Llm(_) => "the language model was unavailable",
        _ => "something stopped me",
    };
    format!("{did}, but {why}. Nothing else was changed. Mention @{bot_username} to try again.")
}

/// Whether the same stop would happen again on a retry of the job: the same issue, context and
/// limits give the planner the same turns, budget and validator. Such a stop ends the job (its
/// status comment said so); only an unavailable LLM is worth the queue's retries.
pub fn recurs(reason: &StopReason) -> bool {
    match reason {
        StopReason::IterationCap(_)
        | StopReason::Budget { .. }
        | StopReason::RepeatedValidationFailures { .. } => true,
        StopReason::Llm(_) => false,
        // A stop added later is assumed to recur: a retry loop costs tokens, a missed retry only
        // waits for the next mention.
        _ => true,
    }
}

/// Where the status comment goes: a reply to the newest pending event's note when that note sits
/// in a thread discussion (GitLab), so the status lands where the asker looks (the planner would
/// reply there too); `None` (a new comment) otherwise. GitHub notes have no discussion, and an
/// issue comment there cannot be threaded, so GitHub keeps a plain comment.
pub fn status_reply_to(events: &[IssueEventRow], thread: &[Note]) -> Option<String> {
    let note_id = events.iter().rev().find_map(|e| e.note_id.as_deref())?;
    thread
        .iter()
        .find(|n| n.note_id == note_id && n.discussion_id.is_some())
        .map(|n| n.note_id.clone())
}

#[cfg(test)]
mod tests {
    use relay_agent::planner::{PlanResult, TokenSplit};

    use super::*;

    #[test]
    fn status_comments_say_what_was_done_what_stopped_and_how_to_retry() {
        let outcome = PlanOutcome {
            result: PlanResult::Stopped(StopReason::IterationCap(8)),
            iterations: 8,
            replans: 0,
            explores: 2,
            usage: Default::default(),
            explore_tokens: 0,
            split: TokenSplit::default(),
            submissions: Vec::new(),
        };
        let PlanResult::Stopped(reason) = &outcome.result else {
            unreachable!()
        };
        assert_eq!(
            status_comment(&outcome, reason, "relay-bot"),
            "I read the issue and the thread and ran 2 code explorations, but I hit my step \
             limit before reaching a decision. Nothing else was changed. Mention @relay-bot to \
             try again."
        );
    }

    #[test]
    fn only_an_unavailable_llm_is_worth_a_retry() {
        assert!(recurs(&StopReason::IterationCap(8)));
        assert!(recurs(&StopReason::Budget { used: 10, limit: 5 }));
        assert!(recurs(&StopReason::RepeatedValidationFailures {
            attempts: 3,
            last: String::new()
        }));
        assert!(!recurs(&StopReason::Llm(
            relay_agent::llm::LlmError::Timeout(std::time::Duration::from_secs(1))
        )));
    }

    fn event(id: i64, note_id: Option<&str>) -> IssueEventRow {
        IssueEventRow {
            id,
            kind: "mention".into(),
            actor: "alice".into(),
            actor_id: None,
            note_id: note_id.map(str::to_owned),
            created_at: chrono::Utc::now(),
        }
    }

    fn note(note_id: &str, discussion_id: Option<&str>) -> Note {
        Note {
            note_id: note_id.into(),
            discussion_id: discussion_id.map(str::to_owned),
            author: "alice".into(),
            author_role: None,
            by_bot: false,
            body: "@relay-bot hi".into(),
            internal: false,
            created_at: chrono::Utc::now(),
        }
    }

    #[test]
    fn the_status_replies_to_the_newest_triggering_note_in_its_discussion() {
        let thread = [note("1", Some("d1")), note("2", Some("d2"))];
        let events = [event(10, Some("1")), event(11, Some("2")), event(12, None)];
        assert_eq!(status_reply_to(&events, &thread).as_deref(), Some("2"));
        // GitHub: no discussions, a plain comment.
        let github = [note("1", None)];
        assert_eq!(status_reply_to(&events[..1], &github), None);
        // A note no longer in the thread (deleted): a plain comment.
        assert_eq!(status_reply_to(&[event(13, Some("9"))], &thread), None);
        // A label or assignment event names no note.
        assert_eq!(status_reply_to(&[event(14, None)], &thread), None);
    }
}
