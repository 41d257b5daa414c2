//! One explore: the bounded tool loop, forced synthesis and the fallback report.

use std::time::Duration;

use futures::StreamExt;

use tokio::time::Instant;

use super::context::Conversation;
use super::guard::{LoopGuard, Verdict};
use super::observe::ToolHint;
use super::report::{self, SUBMIT_REPORT_TOOL, SubmitReport};
use super::{
    Error, ExploreAgent, ExploreBudget, ExploreReport, ExploreRequest, ReportOrigin, SYSTEM_PROMPT,
    StopReason,
};
use crate::llm::{
    ChatRequest, ChatResponse, ErrorKind, LlmError, ToolCall, ToolDefinition, ToolResult, Usage,
};
use crate::toolbox::{CallTrace, ToolCallRecord};
use crate::trace::Tracer;

/// Consecutive turns without a usable tool call (empty replies, plain text, only unknown tools
/// or malformed arguments) before the loop gives up on the model.
const MAX_IDLE_TURNS: u32 = 3;

const WRAP_UP: &str = "You have used most of your token budget. Stop exploring: call submit_report \
now with what you have (lower the confidence and list what is missing in `unanswered`).";
const NO_TOOL_CALL: &str = "Your reply did not call a tool. Continue by calling one of the tools, \
or finish by calling submit_report (as a tool call, not as text).";

/// How an LLM failure is handled.
pub(super) enum Failure {
    /// The LLM cannot be used at all: the explore is an error.
    Fatal(LlmError),
    /// The run ends with a fallback report.
    End(StopReason, LlmError),
    /// Counted like an empty reply (truncated or unparseable output).
    Retry,
}

pub(super) struct Run<'a> {
    pub(super) agent: &'a ExploreAgent,
    pub(super) question: String,
    pub(super) budget: ExploreBudget,
    pub(super) deadline: Instant,
    pub(super) conversation: Conversation,
    guard: LoopGuard,
    pub(super) tools: Vec<ToolDefinition>,
    pub(super) iterations: u32,
    pub(super) usage: Usage,
    pub(super) records: Vec<ToolCallRecord>,
    soft_nudged: bool,
    citations_warned: bool,
    idle_turns: u32,
    /// Whether the model has answered at least once (an error before that means unreachable).
    answered: bool,
    tracer: Tracer,
    /// The agent's client, its trace events named after this explore.
    llm: crate::llm::LlmClient,
}

impl<'a> Run<'a> {
    pub(super) fn new(agent: &'a ExploreAgent, request: &ExploreRequest, tracer: Tracer) -> Self {
        let budget = agent.config.budget(request.thoroughness);
        let system = SYSTEM_PROMPT
            .replace("{max_iterations}", &budget.max_iterations.to_string())
            .replace("{soft_tokens}", &budget.soft_tokens.to_string())
            .replace("{hard_tokens}", &budget.hard_tokens.to_string())
            .replace(
                "{graph_languages}",
                &relay_codegraph::index::languages_sentence(),
            )
            + &agent
                .hint_for(&request.question)
                .map(ToolHint::render)
                .unwrap_or_default();
        let mut tools = agent.toolbox.definitions().to_vec();
        tools.push(report::submit_report_definition());
        Self {
            agent,
            question: request.question.clone(),
            budget,
            deadline: Instant::now() + agent.config.time_limit,
            conversation: Conversation::new(
                system,
                agent.guidance().map(str::to_owned),
                format!("Question: {}", request.question),
                agent.config.keep_turns,
            ),
            guard: LoopGuard::default(),
            tools,
            iterations: 0,
            usage: Usage::default(),
            records: Vec::new(),
            soft_nudged: false,
            citations_warned: false,
            idle_turns: 0,
            answered: false,
            // An untraced explore keeps whatever tracer its client already has.
            llm: if tracer.is_enabled() {
                agent.llm.clone().with_tracer(&tracer)
            } else {
                agent.llm.clone()
            },
            tracer,
        }
    }

    pub(super) async fn execute(mut self) -> Result<ExploreReport, Error> {
        loop {
            if let Some(stop) = self.limit_reached() {
                return self.synthesise(stop).await;
            }
            let request = ChatRequest::new(self.conversation.request_messages())
                .with_tools(self.tools.clone());
            let response = match self.complete(&request, self.deadline).await {
                Ok(response) => response,
                Err(None) => return self.synthesise(StopReason::TimeLimit).await,
                Err(Some(error)) => match self.classify(error) {
                    Failure::Fatal(error) => return Err(Error::Llm { source: error }),
                    Failure::End(stop, error) => return Ok(self.fallback(stop, Some(&error))),
                    Failure::Retry => {
                        if self.idle() {
                            return self.synthesise(StopReason::NoProgress).await;
                        }
                        continue;
                    }
                },
            };
            match self.turn(response).await {
                Turn::Continue => {}
                Turn::Done(report) => return Ok(*report),
                Turn::Stop(stop) => return self.synthesise(stop).await,
            }
            if !self.soft_nudged && self.tokens() >= self.budget.soft_tokens {
                self.soft_nudged = true;
                self.conversation.push_user(WRAP_UP.to_owned());
            }
        }
    }

    /// Handles one reply.
    async fn turn(&mut self, response: ChatResponse) -> Turn {
        let mut message = response.message;
        if message.tool_calls.is_empty() {
            // Tool calls written as JSON text become real calls (echoed back as such, so the
            // results pair with them in either protocol).
            let text = message.text.clone().unwrap_or_default();
            let names: Vec<&str> = self.tools.iter().map(|tool| tool.name.as_str()).collect();
            let calls = report::tool_calls_in_text(&text, &names);
            if !calls.is_empty() {
                message = crate::llm::AssistantMessage {
                    text: None,
                    tool_calls: calls,
                };
            }
        }
        if message.tool_calls.is_empty() {
            let text = message.text.clone().unwrap_or_default();
            if !text.trim().is_empty() {
                self.conversation.push_assistant(message);
            }
            if let Some(found) = report::report_in_text(&text) {
                return match self.submit(found) {
                    Ok(report) => Turn::Done(Box::new(report)),
                    Err(feedback) => {
                        self.conversation.push_user(feedback);
                        Turn::Continue
                    }
                };
            }
            return if self.idle() {
                Turn::Stop(StopReason::NoProgress)
            } else {
                Turn::Continue
            };
        }

        let calls = message.tool_calls.clone();
        self.conversation.push_assistant(message);
        let (submits, work): (Vec<&ToolCall>, Vec<&ToolCall>) = calls
            .iter()
            .partition(|call| call.name == SUBMIT_REPORT_TOOL);

        // Independent calls of one turn run concurrently, bounded; results keep the call order.
        let toolbox = self.agent.toolbox.clone();
        // Collected first: a lazy `map` closure over `&&ToolCall` makes the whole explore future
        // fail rustc's higher-ranked `Send` check, so it could not run inside a `Send` task.
        let total = work.len();
        let pending: Vec<_> = work
            .iter()
            .map(|call| {
                let toolbox = toolbox.clone();
                let tracer = self.tracer.clone();
                let call = (*call).clone();
                async move {
                    let started = CallTrace::start(&tracer, &call);
                    (started, toolbox.call(&call).await)
                }
            })
            .collect();
        let mut done = 0;
        let outcomes: Vec<_> = futures::stream::iter(pending)
            .buffered(self.agent.config.max_parallel_tools.max(1))
            .inspect(|_| {
                done += 1;
                // A turn of several calls is a long step: say how far it is.
                if total > 1 {
                    crate::trace::progress(&self.tracer, "explore:tools", done, total);
                }
            })
            .collect()
            .await;

        let mut progress = false;
        let mut results: Vec<(ToolCall, ToolResult)> = Vec::new();
        for (call, (started, outcome)) in work.iter().zip(outcomes) {
            progress |= outcome.record.is_ok();
            started.end(&self.tracer, &outcome.record);
            self.records.push(outcome.record);
            results.push(((*call).clone(), outcome.result));
        }
        let verdict = self.guard.observe(results.iter().map(|(call, result)| {
            (
                call.name.as_str(),
                call.arguments.as_str(),
                result.content.as_str(),
            )
        }));

        for call in submits {
            let result = match self.submit_call(call) {
                Ok(report) => return Turn::Done(Box::new(report)),
                Err(result) => result,
            };
            // A rejected report (bad citations, bad arguments) is progress of a kind: the model
            // is trying to finish, so it is not counted as idle.
            progress = true;
            results.push((call.clone(), result));
        }
        for (call, result) in results {
            self.conversation.push_tool(&call, result);
        }
        if progress {
            self.idle_turns = 0;
        } else if self.idle() {
            return Turn::Stop(StopReason::NoProgress);
        }
        match verdict {
            Verdict::Fine => Turn::Continue,
            Verdict::Nudge(text) => {
                self.conversation.push_user(text);
                Turn::Continue
            }
            Verdict::Stop => Turn::Stop(StopReason::LoopDetected),
        }
    }

    /// Records a turn without a usable call: nudges, or says stop after [`MAX_IDLE_TURNS`].
    fn idle(&mut self) -> bool {
        self.idle_turns += 1;
        if self.idle_turns >= MAX_IDLE_TURNS {
            return true;
        }
        self.conversation.push_user(NO_TOOL_CALL.to_owned());
        false
    }

    /// A `submit_report` call: the report, or the result telling the model what to fix.
    fn submit_call(&mut self, call: &ToolCall) -> Result<ExploreReport, ToolResult> {
        let mut call = call.clone();
        if call.arguments.trim().is_empty() {
            call.arguments = "{}".to_owned();
        }
        let arguments: SubmitReport = report::submit_report_definition().parse_call(&call)?;
        self.submit(arguments)
            .map_err(|feedback| ToolResult::error(&call.id, feedback))
    }

    /// Checks a submitted report. Invalid citations are sent back once (`Err` with the feedback);
    /// after that they are dropped and the report is final.
    fn submit(&mut self, submitted: SubmitReport) -> Result<ExploreReport, String> {
        let checked = report::check(&self.agent.toolbox.sandboxes(), submitted);
        if !checked.rejected.is_empty() && !self.citations_warned && self.can_continue() {
            self.citations_warned = true;
            return Err(report::rejection_feedback(&checked.rejected));
        }
        Ok(self.finish(checked, StopReason::Submitted, ReportOrigin::Submitted))
    }

    /// Whether another turn fits in the limits (else a rejected report is taken as it is).
    fn can_continue(&self) -> bool {
        self.limit_reached().is_none()
    }

    fn limit_reached(&self) -> Option<StopReason> {
        if self.iterations >= self.budget.max_iterations {
            Some(StopReason::IterationCap)
        } else if self.tokens() >= self.budget.hard_tokens {
            Some(StopReason::TokenLimit)
        } else if Instant::now() >= self.deadline {
            Some(StopReason::TimeLimit)
        } else {
            None
        }
    }

    fn tokens(&self) -> u64 {
        self.usage.total()
    }

    /// One LLM call bounded by `deadline`; `Err(None)` is the deadline.
    pub(super) async fn complete(
        &mut self,
        request: &ChatRequest,
        deadline: Instant,
    ) -> Result<ChatResponse, Option<LlmError>> {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining == Duration::ZERO {
            return Err(None);
        }
        let result = tokio::time::timeout(remaining, self.llm.complete(request)).await;
        self.iterations += 1;
        match result {
            Err(_) => Err(None),
            Ok(Err(error)) => Err(Some(error)),
            Ok(Ok(response)) => {
                self.answered = true;
                self.usage.add(&response.usage);
                Ok(response)
            }
        }
    }

    pub(super) fn classify(&self, error: LlmError) -> Failure {
        match error.kind() {
            ErrorKind::Budget => Failure::End(StopReason::JobBudget, error),
            ErrorKind::Truncated | ErrorKind::InvalidResponse | ErrorKind::InvalidOutput => {
                Failure::Retry
            }
            ErrorKind::Authentication
            | ErrorKind::PermissionDenied
            | ErrorKind::NotFound
            | ErrorKind::Config
            | ErrorKind::Quota => Failure::Fatal(error),
            // Nothing answered yet: the model cannot be reached.
            _ if self.usage == Usage::default() && self.records.is_empty() => Failure::Fatal(error),
            _ => Failure::End(StopReason::LlmError, error),
        }
    }
}

/// What one turn led to.
enum Turn {
    Continue,
    Done(Box<ExploreReport>),
    Stop(StopReason),
}
