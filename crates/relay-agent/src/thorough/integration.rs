//! Integration (no LLM): the final answer of a thorough query, built only from the claims that
//! completed stages verified. A claim without a verified citation never reaches the answer, and
//! every goal not satisfied is listed as such — never silently dropped.

use std::fmt::Write as _;

use relay_core::Citation;

use super::goals::{Goal, GoalStatus};
use super::routing::IntegrateReason;

/// A claim of a stage, with the citations that passed verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub text: String,
    pub citations: Vec<Citation>,
}

/// What one completed stage established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageEvidence {
    pub stage: u32,
    pub claims: Vec<Claim>,
}

/// The final answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Markdown: the verified claims with their `[path:line]` citations, then what is not known.
    pub text: String,
    /// The claims it states, each with at least one verified citation.
    pub claims: Vec<Claim>,
    /// Goals not satisfied, with their status.
    pub open_goals: Vec<Goal>,
    /// Claims left out for want of a verified citation.
    pub dropped_claims: usize,
    pub reason: IntegrateReason,
}

/// Builds the answer from the completed stages' evidence (duplicate claims stated once).
pub fn integrate(stages: &[StageEvidence], goals: &[Goal], reason: IntegrateReason) -> Answer {
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
    Answer {
        text,
        claims,
        open_goals,
        dropped_claims,
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

    /// The contract: every statement of the answer's findings carries a citation that was
    /// verified (one of the claims' own), and nothing else is stated.
    fn assert_every_claim_is_cited(answer: &Answer) {
        let findings = answer.text.split("\nNot answered:").next().unwrap();
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
                    Claim {
                        text: "Webhooks are verified before parsing.".into(),
                        citations: vec![cite("routes/webhook.rs", 40)],
                    },
                    Claim {
                        text: "Deliveries are deduplicated.".into(),
                        citations: vec![],
                    },
                ],
            },
            StageEvidence {
                stage: 2,
                claims: vec![
                    Claim {
                        text: "Webhooks are verified before parsing.".into(),
                        citations: vec![cite("routes/webhook.rs", 40)],
                    },
                    Claim {
                        text: "The outbox drain marks each write sent.".into(),
                        citations: vec![cite("drain.rs", 110), cite("outbox.rs", 12)],
                    },
                ],
            },
        ];
        let goals = vec![
            goal("g1", GoalStatus::Satisfied),
            goal("g2", GoalStatus::Unmet),
            goal("g3", GoalStatus::Blocked),
        ];
        let answer = integrate(&stages, &goals, IntegrateReason::StageCap);
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
                claims: vec![Claim {
                    text: "A guess.".into(),
                    citations: vec![],
                }],
            }],
            &[goal("g1", GoalStatus::Pending)],
            IntegrateReason::Stuck,
        );
        assert!(answer.text.starts_with("Nothing could be verified"));
        assert_eq!(answer.open_goals.len(), 1);
        assert_every_claim_is_cited(&answer);
    }
}
