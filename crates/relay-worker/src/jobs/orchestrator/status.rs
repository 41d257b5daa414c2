//! The status comment of a cycle that stopped without a decision: what Relay did, what stopped
//! it, how to re-trigger. Short on purpose; at most one per cycle (the caller's rule).

use relay_agent::planner::{PlanOutcome, StopReason};

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
}
