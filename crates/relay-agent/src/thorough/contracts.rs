//! The typed contracts between thorough mode's LLM stages and the deterministic code around them.
//! Each LLM stage replies with one of these as schema-validated structured output
//! ([`crate::llm::LlmClient::complete_structured`]); an invalid reply is sent back with what was
//! wrong, and a reply that stays invalid ends the query with what is known.

use relay_core::Citation;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::goals::{GoalStatus, GoalUpdate};
use super::routing::Verdict;

/// The Intent stage: what the question is after, as ordered goals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IntentReply {
    /// The primary intent of the question, in one sentence.
    pub primary_intent: String,
    /// What must be found out to answer, most important first.
    pub goals: Vec<IntentGoal>,
    /// Limits the answer must respect (a language, a layer, a version).
    #[serde(default)]
    pub constraints: Vec<String>,
    /// Readings of the question that would change the answer.
    #[serde(default)]
    pub ambiguities: Vec<String>,
    /// How sure you are of this reading, 0 to 1.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
    /// Only when the question is empty or cannot be understood at all: the question to ask the
    /// humans. Leave it out otherwise: the code is explored first.
    #[serde(default)]
    pub clarification: Option<String>,
}

/// One goal as the Intent stage states it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct IntentGoal {
    /// A short stable id: `g1`, `g2`, …
    pub id: String,
    /// What to find out, e.g. "where a webhook delivery is stored".
    pub description: String,
    /// 1 (most important) to 5.
    #[schemars(range(min = 1, max = 5))]
    pub priority: u8,
    /// Ids of goals that must be answered first.
    #[serde(default)]
    pub depends_on: Vec<String>,
}

/// The Navigator stage: the tool steps of one stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NavigatorReply {
    /// Ids of the goals this stage works on.
    pub target_goals: Vec<String>,
    /// Tool steps, run in this order.
    pub steps: Vec<PlannedStep>,
    /// Why these steps, in a sentence or two.
    pub rationale: String,
    /// How likely the steps are to answer the targeted goals, 0 to 1.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub feasibility: f64,
}

/// One step: a tool by name with its arguments (as the tool's own parameters describe them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlannedStep {
    /// The tool: `grep`, `read`, `glob`, `tree` or `codegraph`.
    pub tool: String,
    /// The tool's arguments, e.g. `{"pattern": "fn enqueue"}` for grep.
    pub arguments: Map<String, Value>,
}

/// The Synthesizer stage: what this stage's tool output establishes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SynthesizerReply {
    /// Code entities that matter to the question (functions, types, tables, queues).
    #[serde(default)]
    pub entities: Vec<Entity>,
    /// How data or control moves between them.
    #[serde(default)]
    pub flows: Vec<Flow>,
    /// What the tool output raises but does not settle.
    #[serde(default)]
    pub open_questions: Vec<String>,
    /// Places where the code disagrees with itself or with the question.
    #[serde(default)]
    pub contradictions: Vec<String>,
    /// Every claim, each with the citations of the lines (seen in the tool output) that show it.
    pub evidence: Vec<EvidenceItem>,
}

/// A code entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Entity {
    pub name: String,
    /// function, method, type, table, queue, …
    pub kind: String,
    /// Where it is defined.
    #[serde(default)]
    pub citation: Option<Citation>,
}

/// A flow between entities.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Flow {
    /// The flow in one sentence, e.g. "the gateway inserts the delivery, then enqueues a job".
    pub description: String,
    /// The lines that show each hop.
    #[serde(default)]
    pub citations: Vec<Citation>,
}

/// One claim with its citations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EvidenceItem {
    /// The claim, one sentence.
    pub claim: String,
    /// Ids of the goals it answers (default: the stage's target goals).
    #[serde(default)]
    pub goals: Vec<String>,
    /// `path`, `start_line`, `end_line` (and a verbatim `quote`) of lines shown in the tool output.
    pub citations: Vec<Citation>,
}

/// The Critic stage: the verdict on a stage and the goals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CriticReply {
    /// `APPROVED` (go on), `REPLAN` (this stage's steps missed; plan it again) or `CLARIFY`
    /// (only a human can settle what blocks the question).
    pub verdict: Verdict,
    /// The status of each goal after this stage.
    pub goal_status: Vec<GoalAssessment>,
    /// What prevents answering at all (each one asks the humans).
    #[serde(default)]
    pub blocking_issues: Vec<String>,
    /// Goals to add, refine, drop or block, applied in this order.
    #[serde(default)]
    pub goal_updates: Vec<GoalUpdate>,
    /// With `CLARIFY` or blocking issues: the question for the humans.
    #[serde(default)]
    pub clarification: Option<String>,
    /// With `REPLAN`: what the next plan should do differently.
    #[serde(default)]
    pub feedback: Option<String>,
}

/// One goal's status as the Critic judges it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GoalAssessment {
    pub id: String,
    /// `satisfied`, `partial`, `unmet` or `blocked`.
    pub status: GoalStatus,
    /// Why (required for `blocked`).
    #[serde(default)]
    pub reason: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::schema;

    /// Both providers need an object at the root of a response schema.
    #[test]
    fn every_contract_is_an_object_schema() {
        for schema in [
            schema::schema_for::<IntentReply>(),
            schema::schema_for::<NavigatorReply>(),
            schema::schema_for::<SynthesizerReply>(),
            schema::schema_for::<CriticReply>(),
        ] {
            assert_eq!(schema["type"], "object", "{schema}");
        }
        // Fixed shapes adapt to OpenAI strict mode; the navigator's free-form tool arguments do
        // not, and are sent non-strict (the reply is validated either way).
        assert!(schema::to_strict(&schema::schema_for::<CriticReply>()).is_ok());
        assert!(schema::to_strict(&schema::schema_for::<SynthesizerReply>()).is_ok());
        assert!(schema::to_strict(&schema::schema_for::<NavigatorReply>()).is_err());
    }

    #[test]
    fn a_critic_reply_parses_with_ordered_updates() {
        let reply: CriticReply = serde_json::from_value(serde_json::json!({
            "verdict": "REPLAN",
            "goal_status": [{"id": "g1", "status": "partial"}],
            "goal_updates": [
                {"kind": "new", "id": "g3", "description": "who drains the outbox", "priority": 2},
                {"kind": "dropped", "id": "g2"}
            ],
            "feedback": "grep for the table name instead"
        }))
        .unwrap();
        assert_eq!(reply.verdict, Verdict::Replan);
        assert_eq!(reply.goal_updates.len(), 2);
        assert!(matches!(reply.goal_updates[1], GoalUpdate::Dropped { .. }));
    }
}
