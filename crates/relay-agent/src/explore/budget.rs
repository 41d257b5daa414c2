//! Budgets by thoroughness.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How much effort one explore may spend: the planner's `explore` tool argument and the
/// ExploreAgent's budget selector are this one type.
///
/// The default is `medium`: it is what the planner gets when the model leaves `thoroughness`
/// out of an `explore` call, the only place a default is taken. (`relay explore` says `quick`
/// explicitly in its flag's default.) The variants' doc comments are the descriptions in the
/// tool schema the planner's model reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Thoroughness {
    /// A single fact: one symbol, one setting.
    Quick,
    /// A few related places.
    #[default]
    Medium,
    /// A whole flow across modules.
    // The multi-stage thorough mode; a single loop at this level gets medium's budget doubled.
    Thorough,
}

impl Thoroughness {
    /// The built-in budget (see the issue: quick 15 / 15k / 25k, medium 30 / 40k / 60k).
    pub fn default_budget(self) -> ExploreBudget {
        match self {
            Self::Quick => ExploreBudget {
                max_iterations: 15,
                soft_tokens: 15_000,
                hard_tokens: 25_000,
            },
            Self::Medium => ExploreBudget {
                max_iterations: 30,
                soft_tokens: 40_000,
                hard_tokens: 60_000,
            },
            Self::Thorough => Self::Medium.default_budget().doubled(),
        }
    }

    /// Stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Quick => "quick",
            Self::Medium => "medium",
            Self::Thorough => "thorough",
        }
    }
}

impl std::str::FromStr for Thoroughness {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "quick" => Ok(Self::Quick),
            "medium" => Ok(Self::Medium),
            "thorough" => Ok(Self::Thorough),
            other => Err(format!(
                "unknown thoroughness {other:?} (expected quick, medium or thorough)"
            )),
        }
    }
}

/// The limits of one explore. Tokens are this explore's prompt + completion tokens summed over
/// its calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExploreBudget {
    /// LLM calls before forced synthesis.
    pub max_iterations: u32,
    /// Tokens at which the agent is told once to wrap up.
    pub soft_tokens: u64,
    /// Tokens at which the loop stops and forced synthesis runs.
    pub hard_tokens: u64,
}

impl ExploreBudget {
    /// Twice the iterations and tokens.
    #[must_use]
    pub fn doubled(self) -> Self {
        Self {
            max_iterations: self.max_iterations.saturating_mul(2),
            soft_tokens: self.soft_tokens.saturating_mul(2),
            hard_tokens: self.hard_tokens.saturating_mul(2),
        }
    }
}
