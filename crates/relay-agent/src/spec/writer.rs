//! The spec writer's loop.

use std::sync::Arc;

use relay_core::action::ReadyForSpecGeneration;

use super::SPEC_PROMPT;
use super::document::SpecDocument;
use crate::context::BuiltContext;
use crate::llm::{
    ChatRequest, LlmClient, LlmError, Message, ToolCall, ToolChoice, ToolDefinition, Usage,
};
use crate::planner::explore_calls::answer_explores;
use crate::planner::seams::Explorer;
use crate::planner::tools::{EXPLORE, explore_tool};

/// Name of the terminating tool.
pub const SUBMIT_SPEC: &str = "submit_spec";

/// Told to a model that answered with text instead of calling a tool.
const NUDGE_NO_TOOL: &str = "Call `submit_spec` with the whole spec now (or `explore` first).";

/// A written spec.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecDraft {
    pub document: SpecDocument,
    /// The document as Markdown.
    pub markdown: String,
    pub iterations: u32,
    pub usage: Usage,
    pub explore_tokens: u64,
}

/// Why no spec was written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    #[error("the spec writer reached its limit of {0} turns without a spec")]
    IterationCap(u32),
    #[error("the llm call failed: {0}")]
    Llm(#[from] LlmError),
}

/// The spec writer of one job.
#[derive(Clone)]
pub struct SpecWriter {
    client: LlmClient,
    explorer: Arc<dyn Explorer>,
    max_iterations: u32,
    max_parallel_explores: usize,
}

impl std::fmt::Debug for SpecWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpecWriter")
            .field("client", &self.client)
            .field("max_iterations", &self.max_iterations)
            .finish_non_exhaustive()
    }
}

/// The `submit_spec` tool.
pub fn submit_spec_tool() -> ToolDefinition {
    ToolDefinition::from_schema::<SpecDocument>(
        SUBMIT_SPEC,
        "Submit the implementation spec, every section filled. Ends the spec writer's work.",
    )
}

impl SpecWriter {
    pub fn new(
        client: LlmClient,
        explorer: Arc<dyn Explorer>,
        max_iterations: u32,
        max_parallel_explores: usize,
    ) -> Self {
        Self {
            client,
            explorer,
            max_iterations: max_iterations.max(1),
            max_parallel_explores,
        }
    }

    /// Writes the spec for the issue in `context`, following the planner's hand-over.
    pub async fn write(
        &self,
        context: &BuiltContext,
        handover: &ReadyForSpecGeneration,
    ) -> Result<SpecDraft, SpecError> {
        let mut messages: Vec<Message> = std::iter::once(Message::system(SPEC_PROMPT))
            .chain(context.messages.iter().cloned())
            .collect();
        messages.push(Message::user(handover_text(handover)));
        let all_tools = vec![explore_tool(), submit_spec_tool()];
        let submit_only = vec![submit_spec_tool()];
        let mut usage = Usage::default();
        let mut explore_tokens = 0;
        for iteration in 1..=self.max_iterations {
            let last_turn = iteration == self.max_iterations;
            let (tools, choice) = if last_turn {
                (&submit_only, ToolChoice::Tool(SUBMIT_SPEC.to_owned()))
            } else {
                (&all_tools, ToolChoice::Auto)
            };
            let request = ChatRequest::new(messages.clone())
                .with_tools(tools.clone())
                .with_tool_choice(choice);
            let response = self.client.complete(&request).await?;
            usage.add(&response.usage);
            messages.push(Message::Assistant(response.message.clone()));
            let calls = response.message.tool_calls;
            if calls.is_empty() {
                messages.push(Message::user(NUDGE_NO_TOOL));
                continue;
            }
            let tool = submit_spec_tool();
            let mut results = Vec::new();
            let mut others: Vec<&ToolCall> = Vec::new();
            for call in &calls {
                if call.name != SUBMIT_SPEC {
                    others.push(call);
                    continue;
                }
                match tool.parse_call::<SpecDocument>(call) {
                    Ok(document) => {
                        return Ok(SpecDraft {
                            markdown: document.to_markdown(),
                            document,
                            iterations: iteration,
                            usage,
                            explore_tokens,
                        });
                    }
                    Err(error) => results.push(error),
                }
            }
            let answers = answer_explores(
                self.explorer.as_ref(),
                &others,
                self.max_parallel_explores,
                &[EXPLORE, SUBMIT_SPEC],
            )
            .await;
            explore_tokens += answers.tokens;
            // Results in call order: the refused submission(s) first is fine for both protocols,
            // which match results to calls by id.
            messages.extend(
                results
                    .into_iter()
                    .chain(answers.results)
                    .map(Message::Tool),
            );
        }
        Err(SpecError::IterationCap(self.max_iterations))
    }
}

fn handover_text(handover: &ReadyForSpecGeneration) -> String {
    let gaps = if handover.closed_gaps.is_empty() {
        "none".to_owned()
    } else {
        handover.closed_gaps.join(", ")
    };
    let findings = if handover.finding_ids.is_empty() {
        "none".to_owned()
    } else {
        handover
            .finding_ids
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "## Hand-over from the planner\nProceed signal (a human's words, verbatim): \"{}\"\n\
         What the spec must cover: {}\nClosed gaps it rests on: {gaps}\nFindings it rests on: \
         {findings}\n\nWrite the spec now.",
        handover.proceed_signal, handover.context_summary
    )
}
