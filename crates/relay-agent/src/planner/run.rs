//! The planning loop.

use std::sync::Arc;

use relay_core::ActionBatch;
use serde_json::json;

use super::explore_calls::answer_explores;
use super::seams::{BatchValidator, Explorer, Verdict};
use super::tools::{EXPLORE, SUBMIT_ACTIONS, explore_tool, submit_actions_tool};
use super::{
    PLANNER_PROMPT, PlanOutcome, PlanResult, PlannerLimits, StopReason, SubmissionRecord,
    TokenSplit,
};
use crate::context::BuiltContext;
use crate::context::render::message_tokens;
use crate::context::tokens::estimate_tokens;
use crate::llm::{
    ChatRequest, LlmClient, LlmError, Message, ToolCall, ToolChoice, ToolDefinition, ToolResult,
    Usage,
};
use crate::trace::{TraceKind, Tracer, capped};

/// Told to a model that answered with text instead of calling a tool.
const NUDGE_NO_TOOL: &str = "Call `submit_actions` now (an empty `actions` list if nothing should \
                             be done), or `explore` if you must check the code first.";

/// The planner of one job.
#[derive(Clone)]
pub struct Planner {
    client: LlmClient,
    explorer: Arc<dyn Explorer>,
    validator: Arc<dyn BatchValidator>,
    limits: PlannerLimits,
    tracer: Tracer,
}

/// Characters of a validation refusal a trace event keeps (the Validator's terse format: one line
/// per failure).
const MAX_TRACED_REFUSAL_CHARS: usize = 2_000;

impl std::fmt::Debug for Planner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Planner")
            .field("client", &self.client)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// Mutable state of one cycle.
struct Cycle {
    messages: Vec<Message>,
    usage: Usage,
    explore_tokens: u64,
    explores: u32,
    replans: u32,
    split: TokenSplit,
    submissions: Vec<SubmissionRecord>,
}

impl Cycle {
    fn spent(&self) -> u64 {
        self.usage.total() + self.explore_tokens
    }

    fn push_results(&mut self, results: Vec<ToolResult>) {
        for result in results {
            self.split.tool_results += estimate_tokens(&result.content);
            self.messages.push(Message::Tool(result));
        }
    }
}

/// What one turn's `submit_actions` call came to.
enum Submission {
    Accepted(ActionBatch),
    Refused(Option<ActionBatch>, ToolResult),
}

impl Planner {
    pub fn new(
        client: LlmClient,
        explorer: Arc<dyn Explorer>,
        validator: Arc<dyn BatchValidator>,
        limits: PlannerLimits,
    ) -> Self {
        Self {
            client,
            explorer,
            validator,
            limits,
            tracer: Tracer::noop(),
        }
    }

    /// Where the cycle's trace events go (stage begin/end, validation failures, the decision),
    /// emitted as `planner`.
    #[must_use]
    pub fn with_tracer(mut self, tracer: &Tracer) -> Self {
        self.tracer = tracer.for_agent("planner");
        self
    }

    /// Runs one planning cycle over `context`.
    pub async fn plan(&self, context: &BuiltContext) -> PlanOutcome {
        self.tracer.event(
            TraceKind::Stage,
            json!({
                "stage": "planner",
                "phase": "begin",
                "context_tokens": context.estimated_tokens,
                "context_truncated": context.truncated,
                "max_iterations": self.limits.max_iterations,
            }),
        );
        let mut cycle = Cycle {
            messages: std::iter::once(Message::system(PLANNER_PROMPT))
                .chain(context.messages.iter().cloned())
                .collect(),
            usage: Usage::default(),
            explore_tokens: 0,
            explores: 0,
            replans: 0,
            submissions: Vec::new(),
            split: TokenSplit {
                context: estimate_tokens(PLANNER_PROMPT)
                    + context.messages.iter().map(message_tokens).sum::<usize>(),
                ..TokenSplit::default()
            },
        };
        let all_tools = vec![explore_tool(), submit_actions_tool()];
        let submit_only = vec![submit_actions_tool()];
        let mut iterations = 0;
        let result = loop {
            if iterations >= self.limits.max_iterations {
                break PlanResult::Stopped(StopReason::IterationCap(iterations));
            }
            if cycle.spent() >= self.limits.cycle_token_budget {
                break PlanResult::Stopped(StopReason::Budget {
                    used: cycle.spent(),
                    limit: self.limits.cycle_token_budget,
                });
            }
            iterations += 1;
            // The last turn may only decide: a forced submission beats a silent cap.
            let last_turn = iterations == self.limits.max_iterations;
            let (tools, choice) = if last_turn {
                (&submit_only, ToolChoice::Tool(SUBMIT_ACTIONS.to_owned()))
            } else {
                (&all_tools, ToolChoice::Auto)
            };
            if iterations == 1 {
                cycle.split.tool_definitions = tools_tokens(tools);
            }
            let request = ChatRequest::new(cycle.messages.clone())
                .with_tools(tools.clone())
                .with_tool_choice(choice);
            let response = match self.client.complete(&request).await {
                Ok(response) => response,
                Err(LlmError::BudgetExceeded(exceeded)) => {
                    break PlanResult::Stopped(StopReason::Budget {
                        used: exceeded.used,
                        limit: exceeded.limit,
                    });
                }
                Err(error) => break PlanResult::Stopped(StopReason::Llm(error)),
            };
            cycle.usage.add(&response.usage);
            cycle
                .messages
                .push(Message::Assistant(response.message.clone()));
            let calls = response.message.tool_calls;
            if calls.is_empty() {
                cycle.messages.push(Message::user(NUDGE_NO_TOOL));
                continue;
            }
            match self.turn(&mut cycle, &calls).await {
                Ok(Some(batch)) => break PlanResult::Submitted(batch),
                Ok(None) => {}
                Err(stop) => break PlanResult::Stopped(stop),
            }
        };
        self.trace_decision(&result, iterations, &cycle);
        tracing::debug!(
            planner.iterations = iterations,
            planner.replans = cycle.replans,
            planner.explores = cycle.explores,
            tokens.total = cycle.spent(),
            "planning cycle ended"
        );
        PlanOutcome {
            result,
            iterations,
            replans: cycle.replans,
            explores: cycle.explores,
            usage: cycle.usage,
            explore_tokens: cycle.explore_tokens,
            split: cycle.split,
            submissions: cycle.submissions,
        }
    }

    /// Answers every call of one turn. `Ok(Some)` ends the cycle with an accepted batch.
    async fn turn(
        &self,
        cycle: &mut Cycle,
        calls: &[ToolCall],
    ) -> Result<Option<ActionBatch>, StopReason> {
        let mut results: Vec<Option<ToolResult>> = vec![None; calls.len()];
        // The decision first: once a batch is accepted, pending explorations are moot.
        for (index, call) in calls.iter().enumerate() {
            if call.name != SUBMIT_ACTIONS {
                continue;
            }
            match self.submit(call).await {
                Submission::Accepted(batch) => {
                    cycle.submissions.push(SubmissionRecord {
                        batch: Some(batch.clone()),
                        refusal: None,
                    });
                    return Ok(Some(batch));
                }
                Submission::Refused(batch, result) => {
                    self.tracer.event(
                        TraceKind::ValidationFailure,
                        json!({
                            "errors": result.content.chars().take(MAX_TRACED_REFUSAL_CHARS).collect::<String>(),
                            "actions": batch.as_ref().map(|b| b.actions.iter().map(|a| a.kind()).collect::<Vec<_>>()),
                        }),
                    );
                    cycle.submissions.push(SubmissionRecord {
                        batch,
                        refusal: Some(result.content.clone()),
                    });
                    cycle.replans += 1;
                    if cycle.replans > self.limits.max_replans {
                        return Err(StopReason::RepeatedValidationFailures {
                            attempts: cycle.replans,
                            last: result.content,
                        });
                    }
                    results[index] = Some(result);
                }
            }
        }

        let others: Vec<(usize, &ToolCall)> = calls
            .iter()
            .enumerate()
            .filter(|(_, call)| call.name != SUBMIT_ACTIONS)
            .collect();
        let refs: Vec<&ToolCall> = others.iter().map(|(_, call)| *call).collect();
        let answers = answer_explores(
            self.explorer.as_ref(),
            &refs,
            self.limits.max_parallel_explores,
            &[EXPLORE, SUBMIT_ACTIONS],
        )
        .await;
        cycle.explores += answers.runs;
        cycle.explore_tokens += answers.tokens;
        for ((index, _), result) in others.iter().zip(answers.results) {
            results[*index] = Some(result);
        }
        cycle.push_results(results.into_iter().flatten().collect());
        Ok(None)
    }

    /// The cycle's decision event and the end of its stage.
    fn trace_decision(&self, result: &PlanResult, iterations: u32, cycle: &Cycle) {
        if !self.tracer.is_enabled() {
            return;
        }
        let decision = match result {
            PlanResult::Submitted(batch) => json!({
                "decision": "submit_actions",
                "actions": batch.actions.iter().map(|a| a.kind()).collect::<Vec<_>>(),
            }),
            PlanResult::Stopped(reason) => json!({
                "decision": "stopped",
                "reason": capped(&reason.to_string()),
            }),
        };
        self.tracer.event(TraceKind::Decision, decision);
        self.tracer.event(
            TraceKind::Stage,
            json!({
                "stage": "planner",
                "phase": "end",
                "iterations": iterations,
                "replans": cycle.replans,
                "explores": cycle.explores,
                "tokens": cycle.spent(),
            }),
        );
    }

    async fn submit(&self, call: &ToolCall) -> Submission {
        let batch = match submit_actions_tool().parse_call::<ActionBatch>(call) {
            Ok(batch) => batch,
            Err(error) => return Submission::Refused(None, error),
        };
        match self.validator.validate(&batch).await {
            Verdict::Accepted => Submission::Accepted(batch),
            Verdict::Rejected { failures } => Submission::Refused(
                Some(batch),
                ToolResult::error(
                    &call.id,
                    format!(
                        "{failures}\nNothing was written. Fix exactly these actions and call \
                     `{SUBMIT_ACTIONS}` again with the whole batch."
                    ),
                ),
            ),
        }
    }
}

/// Estimated tokens of tool definitions as the model receives them.
pub fn tools_tokens(tools: &[ToolDefinition]) -> usize {
    tools
        .iter()
        .map(|tool| {
            estimate_tokens(&tool.name)
                + estimate_tokens(&tool.description)
                + estimate_tokens(&tool.parameters.to_string())
        })
        .sum()
}
