//! The Planner: an LLM loop (role `planner`) over the ContextBuilder's messages with two tools,
//! `explore` (explore agents, several in parallel) and the terminating `submit_actions`, whose
//! arguments are the Action contract. Each submitted batch goes through the [`BatchValidator`]
//! seam; failures come back as the tool result and the model re-plans, a bounded number of times.
//!
//! Bounds per cycle: iterations (LLM turns), re-plans, and tokens (the planner's calls plus its
//! explorations). The last allowed turn offers only `submit_actions`, so a cycle that runs out of
//! turns still ends with a decision when the model can give one.

pub mod adapters;
pub mod explore_calls;
pub mod run;
pub mod seams;
pub mod tools;

pub use run::Planner;

pub use seams::{
    BatchValidator, ExploreFailure, ExploreOutcome, ExploreRequest, Explorer, Thoroughness, Verdict,
};

use relay_core::ActionBatch;

use crate::agent_settings::AgentSettings;
use crate::llm::{LlmError, Usage};

/// The planner's system prompt.
pub const PLANNER_PROMPT: &str = include_str!("prompt.md");

/// Limits of one planning cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannerLimits {
    pub max_iterations: u32,
    pub max_replans: u32,
    /// Tokens of the planner's calls and its explorations together.
    pub cycle_token_budget: u64,
    pub max_parallel_explores: usize,
}

impl From<&AgentSettings> for PlannerLimits {
    fn from(settings: &AgentSettings) -> Self {
        Self {
            max_iterations: settings.planner_max_iterations,
            max_replans: settings.planner_max_replans,
            cycle_token_budget: settings.cycle_token_budget,
            max_parallel_explores: settings.explore.max_parallel_explores,
        }
    }
}

impl Default for PlannerLimits {
    fn default() -> Self {
        Self::from(&AgentSettings::default())
    }
}

/// How a planning cycle ended.
#[derive(Debug)]
pub enum PlanResult {
    /// A batch the validator accepted.
    Submitted(ActionBatch),
    /// No accepted batch; the orchestrator posts one status comment saying why.
    Stopped(StopReason),
}

/// Why a cycle ended without an accepted batch.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StopReason {
    #[error("the planner reached its limit of {0} turns without an accepted decision")]
    IterationCap(u32),
    #[error("the cycle's token budget of {limit} tokens is spent ({used} used)")]
    Budget { used: u64, limit: u64 },
    #[error("the planner's actions failed validation {attempts} times")]
    RepeatedValidationFailures {
        attempts: u32,
        /// The last failure lines.
        last: String,
    },
    #[error("the llm call failed: {0}")]
    Llm(#[source] LlmError),
}

/// Estimated tokens by where they came from, for the cost figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenSplit {
    /// The system prompt plus the injected context, per request.
    pub context: usize,
    /// The tool definitions, per request.
    pub tool_definitions: usize,
    /// All tool results returned to the model.
    pub tool_results: usize,
}

/// One `submit_actions` call and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmissionRecord {
    /// The batch, when the arguments matched the Action contract.
    pub batch: Option<ActionBatch>,
    /// `None` when accepted; otherwise the failure text the model received.
    pub refusal: Option<String>,
}

/// The outcome of one planning cycle.
#[derive(Debug)]
pub struct PlanOutcome {
    pub result: PlanResult,
    /// LLM turns taken.
    pub iterations: u32,
    /// Batches the validator refused.
    pub replans: u32,
    /// Explorations run.
    pub explores: u32,
    /// Reported usage of the planner's own calls.
    pub usage: Usage,
    /// Tokens spent by explorations.
    pub explore_tokens: u64,
    /// Estimated token split of the requests.
    pub split: TokenSplit,
    /// Every submission of the cycle, in order (what `relay plan` prints as verdicts).
    pub submissions: Vec<SubmissionRecord>,
}

impl PlanOutcome {
    /// All tokens the cycle spent.
    pub fn total_tokens(&self) -> u64 {
        self.usage.total() + self.explore_tokens
    }
}
