//! Integration (no LLM): the final answer of a thorough query, built only from the claims that
//! completed stages verified. A claim without a verified citation never reaches the answer, and
//! every goal not satisfied is listed as such — never silently dropped.

use std::fmt::Write as _;

use relay_core::Citation;
use serde::Serialize;

use super::goals::{DroppedGoal, Goal, GoalStatus};
use super::routing::IntegrateReason;

/// Open questions the answer lists at most.
pub const MAX_OPEN_QUESTIONS: usize = 5;

/// A claim of a stage, with the citations that passed verification and where each was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Claim {
    pub text: String,
    pub citations: Vec<Citation>,
    /// Ids of the goals it answers.
    pub goals: Vec<String>,
    /// The evidence chain: for each citation (same order), the tool step whose output showed
    /// that file to the Synthesizer.
    pub seen_in: Vec<StepRef>,
}

/// One tool step of a query: stage `stage`, its `attempt`-th plan (0 unless replanned), step
/// `step` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StepRef {
    pub stage: u32,
    pub attempt: u32,
    pub step: usize,
}

impl std::fmt::Display for StepRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "stage {}.{} step {}",
            self.stage,
            self.attempt,
            self.step + 1
        )
    }
}

/// What the stages raised but did not settle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unsettled {
    /// The question for the humans, when one was asked.
    pub clarification: Option<String>,
    /// The Synthesizers' open questions, in order.
    pub open_questions: Vec<String>,
    /// Goals the Critic dropped, in order, with why.
    pub dropped_goals: Vec<DroppedGoal>,
}

/// What one completed stage established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageEvidence {
    pub stage: u32,
    pub claims: Vec<Claim>,
}

/// The final answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Answer {
    /// Markdown: the verified claims with their `[path:line]` citations, then what is not known.
    pub text: String,
    /// The claims it states, each with at least one verified citation.
    pub claims: Vec<Claim>,
    /// Goals not satisfied, with their status.
    pub open_goals: Vec<Goal>,
    /// Claims left out for want of a verified citation.
    pub dropped_claims: usize,
    /// The question asked of the humans, if any.
    pub clarification: Option<String>,
    /// Questions the stages raised and did not settle (at most [`MAX_OPEN_QUESTIONS`]).
    pub open_questions: Vec<String>,
    /// Goals dropped on the way, listed in the text with why.
    pub dropped_goals: Vec<DroppedGoal>,
    pub reason: IntegrateReason,
}

/// Builds the answer from the completed stages' evidence (duplicate claims stated once).
pub fn integrate(
    stages: &[StageEvidence],
    goals: &[Goal],
    unsettled: Unsettled,
    reason: IntegrateReason,
) -> Answer {
    let mut claims: Vec<Claim> = Vec::new();
    let mut dropped_claims = 0;
    for claim in stages.iter().flat_map(|s| &s.claims) {
        if claim.citations.is_empty() {
            dropped_claims += 1;
        } else if !claims.iter().any(|known| known.text == claim.text) {
            claims.push(claim.clone());
        }
    }
    let open_goals: Vec<Goal> = goals
        .iter()
        .filter(|g| g.status != GoalStatus::Satisfied)
        .cloned()
        .collect();

    let mut text = String::new();
    if claims.is_empty() {
        text.push_str("Nothing could be verified in the code.\n");
    }
    for claim in &claims {
        let cited: Vec<String> = claim.citations.iter().map(|c| format!("[{c}]")).collect();
        let _ = writeln!(text, "- {} {}", claim.text.trim(), cited.join(" "));
    }
    if !open_goals.is_empty() {
        let _ = writeln!(text, "\nNot answered:");
        for goal in &open_goals {
            let status = match goal.status {
                GoalStatus::Pending => "not explored",
                GoalStatus::Partial => "partly answered",
                GoalStatus::Unmet => "not found",
                GoalStatus::Blocked => "blocked",
                GoalStatus::Satisfied => unreachable!("satisfied goals are not open"),
            };
            let why = goal
                .blocked_reason
                .as_deref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            let _ = writeln!(text, "- {} ({status}{why})", goal.description);
        }
    }
    if !unsettled.dropped_goals.is_empty() {
        let _ = writeln!(text, "\nDropped:");
        for goal in &unsettled.dropped_goals {
            let why = goal.reason.as_deref().unwrap_or("no reason given");
            let _ = writeln!(text, "- {} (dropped: {})", goal.description, why.trim());
        }
    }
    let mut open_questions: Vec<String> = Vec::new();
    for question in unsettled.open_questions {
        let question = question.trim().to_owned();
        if !question.is_empty() && !open_questions.contains(&question) {
            open_questions.push(question);
        }
    }
    open_questions.truncate(MAX_OPEN_QUESTIONS);
    if !open_questions.is_empty() {
        let _ = writeln!(text, "\nOpen questions:");
        for question in &open_questions {
            let _ = writeln!(text, "- {question}");
        }
    }
    // A blank question is no question: never an empty "Needs clarification:".
    let clarification = unsettled
        .clarification
        .map(|q| q.trim().to_owned())
        .filter(|q| !q.is_empty());
    if let Some(question) = &clarification {
        let _ = writeln!(text, "\nNeeds clarification: {question}");
    }
    Answer {
        text,
        claims,
        open_goals,
        dropped_claims,
        clarification,
        open_questions,
        dropped_goals: unsettled.dropped_goals,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cite(path: &str, line: u32) -> Citation {
        Citation {
            path: path.into(),
            start_line: line,
            end_line: line,
            quote: None,
        }
    }

    fn goal(id: &str, status: GoalStatus) -> Goal {
        Goal {
            id: id.into(),
            description: format!("goal {id}"),
            priority: 1,
            depends_on: Vec::new(),
            status,
            blocked_reason: (status == GoalStatus::Blocked).then(|| "vendored".to_owned()),
        }
    }

    fn claim(text: &str, citations: Vec<Citation>) -> Claim {
        let seen_in = citations
            .iter()
            .map(|_| StepRef {
                stage: 1,
                attempt: 0,
                step: 0,
            })
            .collect();
        Claim {
            text: text.into(),
            citations,
            goals: vec!["g1".into()],
            seen_in,
        }
    }

    /// The contract: every statement of the answer's findings (the lines before the first
    /// section) carries a citation that was verified (one of the claims' own), and nothing else
    /// is stated.
    pub(crate) fn assert_every_claim_is_cited(answer: &Answer) {
        let findings = answer.text.split("\n\n").next().unwrap();
        for line in findings.lines().filter(|l| l.starts_with("- ")) {
            let claim = answer
                .claims
                .iter()
                .find(|c| line.starts_with(&format!("- {}", c.text.trim())))
                .unwrap_or_else(|| panic!("a stated line that is no verified claim: {line}"));
            assert!(
                claim
                    .citations
                    .iter()
                    .all(|c| line.contains(&format!("[{c}]"))),
                "{line}"
            );
            assert!(!claim.citations.is_empty(), "{line}");
        }
    }

    #[test]
    fn only_verified_claims_are_stated_and_open_goals_listed() {
        let stages = vec![
            StageEvidence {
                stage: 1,
                claims: vec![
                    claim(
                        "Webhooks are verified before parsing.",
                        vec![cite("routes/webhook.rs", 40)],
                    ),
                    claim("Deliveries are deduplicated.", vec![]),
                ],
            },
            StageEvidence {
                stage: 2,
                claims: vec![
                    claim(
                        "Webhooks are verified before parsing.",
                        vec![cite("routes/webhook.rs", 40)],
                    ),
                    claim(
                        "The outbox drain marks each write sent.",
                        vec![cite("drain.rs", 110), cite("outbox.rs", 12)],
                    ),
                ],
            },
        ];
        let goals = vec![
            goal("g1", GoalStatus::Satisfied),
            goal("g2", GoalStatus::Unmet),
            goal("g3", GoalStatus::Blocked),
        ];
        let answer = integrate(
            &stages,
            &goals,
            Unsettled {
                clarification: Some("GitHub or GitLab?".into()),
                open_questions: vec!["who retries?".into(), " who retries? ".into()],
                dropped_goals: Vec::new(),
            },
            IntegrateReason::StageCap,
        );
        assert_eq!(answer.open_questions, ["who retries?"]);
        assert!(answer.text.contains("\nOpen questions:\n- who retries?\n"));
        assert!(
            answer
                .text
                .ends_with("\nNeeds clarification: GitHub or GitLab?\n")
        );
        assert_eq!(answer.claims.len(), 2, "duplicates stated once");
        assert_eq!(answer.dropped_claims, 1);
        assert!(!answer.text.contains("deduplicated"), "{}", answer.text);
        assert!(answer.text.contains("[drain.rs:110] [outbox.rs:12]"));
        assert!(answer.text.contains("- goal g2 (not found)"));
        assert!(answer.text.contains("- goal g3 (blocked: vendored)"));
        assert!(!answer.text.contains("goal g1"));
        assert_every_claim_is_cited(&answer);
    }

    #[test]
    fn nothing_verified_says_so_and_keeps_every_goal() {
        let answer = integrate(
            &[StageEvidence {
                stage: 1,
                claims: vec![claim("A guess.", vec![])],
            }],
            &[goal("g1", GoalStatus::Pending)],
            Unsettled::default(),
            IntegrateReason::Stuck,
        );
        assert!(answer.text.starts_with("Nothing could be verified"));
        assert_eq!(answer.open_goals.len(), 1);
        assert_every_claim_is_cited(&answer);
    }
}
