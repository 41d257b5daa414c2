//! The planner's tools: `explore` and the terminating `submit_actions`.

use relay_core::ActionBatch;
use schemars::JsonSchema;
use serde::Deserialize;

use super::seams::Thoroughness;
use crate::llm::ToolDefinition;

/// Name of the explore tool.
pub const EXPLORE: &str = "explore";
/// Name of the terminating tool.
pub const SUBMIT_ACTIONS: &str = "submit_actions";

/// `explore` arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExploreArgs {
    /// One precise question about the code, e.g. "where is `retry_limit` read and what happens
    /// when it is 0?".
    pub query: String,
    /// `quick` (one fact), `medium` (a few places) or `thorough` (a whole flow).
    #[serde(default)]
    pub thoroughness: Thoroughness,
}

/// The `explore` tool.
pub fn explore_tool() -> ToolDefinition {
    ToolDefinition::from_schema::<ExploreArgs>(
        EXPLORE,
        "Ask an explore agent one question about the repository at the explored commit. It \
         searches and reads the code and answers with verified path:line citations. Several \
         explore calls in one turn run in parallel.",
    )
}

/// The `submit_actions` tool: its parameters are exactly the Action contract's schema.
pub fn submit_actions_tool() -> ToolDefinition {
    ToolDefinition::from_schema::<ActionBatch>(
        SUBMIT_ACTIONS,
        "Submit this cycle's decisions as one batch of actions (at most 10; an empty list when \
         nothing should be done). Ends the cycle unless validation fails.",
    )
}
