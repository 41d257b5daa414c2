//! Planner-level questions: a question that carries an `issue` (title, body, thread, as the
//! planner's context file of `relay plan`) starts where Relay starts, from the tracker's issue.
//! The [`Planner`] reads it, runs explores (each one's report kept) and submits actions to the
//! validator; the question is scored on what the accepted actions say and cite (the text and the
//! citations a user would read) and on the tool use of every explore the planner ran. So the
//! planner → explorer path is evaluated, not only the explorer on a question already well put.

use std::sync::{Arc, Mutex};

use relay_core::{ActionBatch, Citation};
use serde_json::Value;

use super::Question;
use super::score::{QuestionScore, ScoredRun, score_run};
use crate::context::{ContextBuilder, IssueContext};
use crate::explore::{ExploreAgent, ExploreReport};
use crate::llm::LlmClient;
use crate::planner::adapters::{explore_failure, explore_outcome};
use crate::planner::{
    BatchValidator, ExploreFailure, ExploreOutcome, ExploreRequest, Explorer, PlanResult, Planner,
    PlannerLimits, StopReason, Thoroughness,
};

/// Builds the validator a planner-level question's batches go to, from its issue (the thread
/// notes a decision may name, its gaps and findings).
pub type ValidatorFor = dyn Fn(&IssueContext) -> Arc<dyn BatchValidator> + Send + Sync;

/// What planner-level questions run with: the planner's client and limits, the context budget and
/// the validator. Explores run with the suite's [`ExploreAgent`].
pub struct PlannerEval {
    pub llm: LlmClient,
    pub limits: PlannerLimits,
    /// The context builder's token budget (`[agent] context_max_tokens`).
    pub context_max_tokens: usize,
    pub validator: Box<ValidatorFor>,
}

impl std::fmt::Debug for PlannerEval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlannerEval")
            .field("limits", &self.limits)
            .field("context_max_tokens", &self.context_max_tokens)
            .finish_non_exhaustive()
    }
}

/// The ExploreAgent as the planner's explorer, keeping every report for the score.
struct RecordingExplorer {
    agent: ExploreAgent,
    reports: Mutex<Vec<ExploreReport>>,
}

#[async_trait::async_trait]
impl Explorer for RecordingExplorer {
    async fn explore(&self, request: ExploreRequest) -> Result<ExploreOutcome, ExploreFailure> {
        let report = self
            .agent
            .explore(request)
            .await
            .map_err(|error| explore_failure(&error))?;
        let outcome = explore_outcome(&report);
        self.reports
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(report);
        Ok(outcome)
    }

    fn default_thoroughness(&self) -> Thoroughness {
        self.agent.default_thoroughness()
    }
}

/// Runs one planning cycle on `issue` and scores it against `question`.
pub async fn run_issue(
    agent: &ExploreAgent,
    planner: &PlannerEval,
    question: &Question,
    issue: &IssueContext,
) -> QuestionScore {
    let explorer = Arc::new(RecordingExplorer {
        agent: agent.clone(),
        reports: Mutex::new(Vec::new()),
    });
    let cycle = Planner::new(
        planner.llm.clone(),
        explorer.clone(),
        (planner.validator)(issue),
        planner.limits,
    );
    let context = ContextBuilder::new(planner.context_max_tokens).build(issue);
    let outcome = cycle.plan(&context).await;
    let reports = std::mem::take(
        &mut *explorer
            .reports
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    let (answer, evidence, stop) = match &outcome.result {
        PlanResult::Submitted(batch) => {
            let (text, citations) = what_a_user_reads(batch);
            (text, citations, "accepted".to_owned())
        }
        // A failed LLM call ends the question as an explore's does (`llm_error: <kind>`).
        PlanResult::Stopped(StopReason::Llm(error)) => (
            String::new(),
            Vec::new(),
            format!("llm_error: {}", error.kind().as_str()),
        ),
        PlanResult::Stopped(reason) => (String::new(), Vec::new(), format!("stopped: {reason}")),
    };
    let tool_calls: Vec<_> = reports
        .iter()
        .flat_map(|r| r.tool_calls.iter().cloned())
        .collect();
    let explore_in: u64 = reports.iter().map(|r| r.tokens_in).sum();
    let explore_out: u64 = reports.iter().map(|r| r.tokens_out).sum();
    score_run(
        question,
        &ScoredRun {
            answer: &answer,
            evidence: &evidence,
            tool_calls: &tool_calls,
            iterations: outcome.iterations,
            tokens_in: outcome.usage.prompt_tokens + explore_in,
            tokens_out: outcome.usage.completion_tokens + explore_out,
            stop: &stop,
        },
    )
}

/// An accepted batch as a user reads it: every text of its actions, and every citation in them
/// (findings' sources, a spec's references). The validator verified them before it accepted.
fn what_a_user_reads(batch: &ActionBatch) -> (String, Vec<Citation>) {
    let mut text = String::new();
    let mut citations = Vec::new();
    walk(
        &serde_json::to_value(batch).unwrap_or_default(),
        &mut text,
        &mut citations,
    );
    (text, citations)
}

fn walk(value: &Value, text: &mut String, citations: &mut Vec<Citation>) {
    match value {
        Value::String(s) => {
            text.push_str(s);
            text.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|v| walk(v, text, citations)),
        Value::Object(map) => {
            if map.contains_key("path")
                && map.contains_key("start_line")
                && let Ok(citation) = serde_json::from_value::<Citation>(value.clone())
            {
                citations.push(citation);
            }
            map.values().for_each(|v| walk(v, text, citations));
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}
