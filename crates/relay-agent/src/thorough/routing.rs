//! Where a thorough query goes after the Critic has judged a stage. The order of the checks is
//! the contract: blocking issues, then the Critic's CLARIFY (each asks at most once
//! per run), then REPLAN (at most [`MAX_REPLANS_PER_STAGE`] in a stage), then integration when no
//! goal is left, at the stage cap, or when stuck.

use serde::{Deserialize, Serialize};

/// Stages per query at most.
pub const MAX_STAGES: u32 = 5;
/// Replans within one stage at most; past them the query finishes.
pub const MAX_REPLANS_PER_STAGE: u32 = 3;
/// Stages in a row without progress that make a query stuck.
pub const STUCK_STAGES: u32 = 2;

/// The Critic's verdict on a stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    Approved,
    Replan,
    Clarify,
}

/// What routing looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoutingInput {
    pub verdict: Verdict,
    /// The Critic named blocking issues.
    pub blocking_issues: bool,
    /// The run has already asked for clarification.
    pub clarified: bool,
    /// Replans already made in this stage.
    pub replans_in_stage: u32,
    /// Goals pending, partial or unmet.
    pub open_goals: usize,
    /// Stages completed, this one included.
    pub stages_done: u32,
    /// Stages in a row, this one included, that satisfied or refined nothing.
    pub stages_without_progress: u32,
}

/// Why integration runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IntegrateReason {
    /// No goal is left open.
    GoalsDone,
    /// [`MAX_STAGES`] stages ran.
    StageCap,
    /// [`STUCK_STAGES`] stages in a row made no progress (after the humans were asked).
    Stuck,
    /// The Critic still asked for a replan after [`MAX_REPLANS_PER_STAGE`] in one stage.
    ReplanLimit,
    /// A query bound stopped the stages (the LLM-call cap, the hops, the job's tokens).
    Bound(super::bounds::BoundHit),
    /// Nothing can be explored before a human answers (an empty or incomprehensible question).
    NeedsClarification,
    /// An LLM stage failed (after its retries); the answer holds what the stages before it did.
    LlmFailed,
}

impl IntegrateReason {
    /// Stable snake_case name (a bound is `bound:<which>`).
    pub fn as_str(self) -> String {
        match self {
            Self::GoalsDone => "goals_done".into(),
            Self::StageCap => "stage_cap".into(),
            Self::Stuck => "stuck".into(),
            Self::ReplanLimit => "replan_limit".into(),
            Self::Bound(hit) => format!(
                "bound:{}",
                serde_json::to_value(hit)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            ),
            Self::NeedsClarification => "needs_clarification".into(),
            Self::LlmFailed => "llm_failed".into(),
        }
    }
}

/// The next step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    /// Ask the humans: the question is recorded for the answer (once per run) and the query goes
    /// on with what the code can tell — a human's reply arrives on the issue, not inside a run.
    Clarify,
    /// Plan this stage again.
    Replan,
    /// Go on to the next stage.
    NextStage,
    /// Build the answer from what the completed stages verified.
    Integrate(IntegrateReason),
}

impl std::fmt::Display for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Clarify => f.write_str("clarify"),
            Self::Replan => f.write_str("replan"),
            Self::NextStage => f.write_str("next_stage"),
            Self::Integrate(reason) => write!(f, "integrate: {}", reason.as_str()),
        }
    }
}

/// The route for `input`, checks in the contract's order.
pub fn route(input: RoutingInput) -> Route {
    let stuck = input.stages_without_progress >= STUCK_STAGES;
    if !input.clarified && (input.blocking_issues || input.verdict == Verdict::Clarify || stuck) {
        return Route::Clarify;
    }
    if input.verdict == Verdict::Replan {
        return if input.replans_in_stage < MAX_REPLANS_PER_STAGE {
            Route::Replan
        } else {
            Route::Integrate(IntegrateReason::ReplanLimit)
        };
    }
    if input.open_goals == 0 {
        return Route::Integrate(IntegrateReason::GoalsDone);
    }
    if input.stages_done >= MAX_STAGES {
        return Route::Integrate(IntegrateReason::StageCap);
    }
    if input.stages_without_progress >= STUCK_STAGES {
        return Route::Integrate(IntegrateReason::Stuck);
    }
    Route::NextStage
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approved() -> RoutingInput {
        RoutingInput {
            verdict: Verdict::Approved,
            blocking_issues: false,
            clarified: false,
            replans_in_stage: 0,
            open_goals: 2,
            stages_done: 1,
            stages_without_progress: 0,
        }
    }

    #[test]
    fn the_checks_run_in_the_contracts_order() {
        assert_eq!(route(approved()), Route::NextStage);
        // Blocking issues first, even over a replan or a finished goal list.
        let blocked = RoutingInput {
            blocking_issues: true,
            verdict: Verdict::Replan,
            open_goals: 0,
            ..approved()
        };
        assert_eq!(route(blocked), Route::Clarify);
        // Clarification is asked once per run; then the other rules decide.
        assert_eq!(
            route(RoutingInput {
                clarified: true,
                ..blocked
            }),
            Route::Replan
        );
        let clarify = RoutingInput {
            verdict: Verdict::Clarify,
            ..approved()
        };
        assert_eq!(route(clarify), Route::Clarify);
        assert_eq!(
            route(RoutingInput {
                clarified: true,
                ..clarify
            }),
            Route::NextStage
        );
    }

    #[test]
    fn replans_are_bounded_per_stage_then_the_query_moves_on() {
        let replan = RoutingInput {
            verdict: Verdict::Replan,
            ..approved()
        };
        for done in 0..MAX_REPLANS_PER_STAGE {
            assert_eq!(
                route(RoutingInput {
                    replans_in_stage: done,
                    ..replan
                }),
                Route::Replan
            );
        }
        assert_eq!(
            route(RoutingInput {
                replans_in_stage: MAX_REPLANS_PER_STAGE,
                ..replan
            }),
            Route::Integrate(IntegrateReason::ReplanLimit)
        );
    }

    #[test]
    fn integration_when_done_capped_or_stuck() {
        assert_eq!(
            route(RoutingInput {
                open_goals: 0,
                ..approved()
            }),
            Route::Integrate(IntegrateReason::GoalsDone)
        );
        assert_eq!(
            route(RoutingInput {
                stages_done: MAX_STAGES,
                ..approved()
            }),
            Route::Integrate(IntegrateReason::StageCap)
        );
        // Stuck asks the humans first (seed 003), and integrates once it has asked.
        assert_eq!(
            route(RoutingInput {
                stages_without_progress: STUCK_STAGES,
                ..approved()
            }),
            Route::Clarify
        );
        assert_eq!(
            route(RoutingInput {
                stages_without_progress: STUCK_STAGES,
                clarified: true,
                ..approved()
            }),
            Route::Integrate(IntegrateReason::Stuck)
        );
        assert_eq!(
            route(RoutingInput {
                stages_without_progress: STUCK_STAGES - 1,
                ..approved()
            }),
            Route::NextStage
        );
    }
}
