//! The ends of a run: the final report from a checked submission, forced synthesis (one last
//! call without the exploring tools that must produce the report) and the "insufficient
//! evidence" report when even that fails.

use tokio::time::Instant;

use super::report::{self, CheckedReport, SUBMIT_REPORT_TOOL, SubmitReport};
use super::run::{Failure, Run};
use super::{Confidence, Error, ExploreReport, ReportOrigin, StopReason};
use crate::llm::{ChatRequest, LlmError, ToolChoice};

/// Tool calls listed in an "insufficient evidence" report.
const MAX_LISTED_CALLS: usize = 20;

impl Run<'_> {
    /// Forced synthesis: the conversation so far, a last instruction naming why the run stopped,
    /// and only `submit_report` offered (and required).
    pub(super) async fn synthesise(&mut self, stop: StopReason) -> Result<ExploreReport, Error> {
        let mut messages = self.conversation.request_messages();
        messages.push(crate::llm::Message::user(format!(
            "Exploration is over ({}). Do not call any other tool. Call submit_report now with \
             the best answer the evidence you have seen supports: cite only lines you have read, \
             lower the confidence to match, and list what is missing in `unanswered`.",
            describe(stop)
        )));
        let request = ChatRequest::new(messages)
            .with_tools(vec![report::submit_report_definition()])
            .with_tool_choice(ToolChoice::Tool(SUBMIT_REPORT_TOOL.to_owned()));
        // The synthesis gets its own short allowance: after a time-limit stop none is left.
        let deadline = Instant::now() + self.agent.config.synthesis_time;
        let response = match self.complete(&request, deadline).await {
            Ok(response) => response,
            Err(None) => return Ok(self.fallback(stop, None)),
            Err(Some(error)) => {
                return match self.classify(error) {
                    Failure::Fatal(error) => Err(Error::Llm { source: error }),
                    Failure::End(_, error) => Ok(self.fallback(stop, Some(&error))),
                    Failure::Retry => Ok(self.fallback(stop, None)),
                };
            }
        };
        let submitted = response
            .message
            .tool_calls
            .iter()
            .filter(|call| call.name == SUBMIT_REPORT_TOOL)
            .find_map(|call| {
                report::submit_report_definition()
                    .parse_call::<SubmitReport>(call)
                    .ok()
            })
            .or_else(|| report::report_in_text(response.text()));
        match submitted {
            Some(submitted) => {
                let checked = report::check(&self.agent.toolbox.sandboxes(), submitted);
                Ok(self.finish(checked, stop, ReportOrigin::ForcedSynthesis))
            }
            None => Ok(self.fallback(stop, None)),
        }
    }

    /// The final report of a checked submission.
    pub(super) fn finish(
        &self,
        checked: CheckedReport,
        stop: StopReason,
        origin: ReportOrigin,
    ) -> ExploreReport {
        let CheckedReport { report, rejected } = checked;
        ExploreReport {
            answer: report.answer,
            evidence: report.evidence,
            confidence: report.confidence,
            unanswered: report.unanswered,
            dropped_citations: rejected.len(),
            stop,
            origin,
            iterations: self.iterations,
            tokens_in: self.usage.prompt_tokens,
            tokens_out: self.usage.completion_tokens,
            llm_error: None,
            tool_calls: self.records.clone(),
        }
    }

    /// "Insufficient evidence": no usable report; says why and what was tried.
    pub(super) fn fallback(&self, stop: StopReason, error: Option<&LlmError>) -> ExploreReport {
        let mut answer = format!(
            "Insufficient evidence: the exploration stopped ({}) without a usable report.",
            describe(stop)
        );
        if self.records.is_empty() {
            answer.push_str(" No tool call was made.");
        } else {
            answer.push_str(&format!(" Tried {} tool calls:", self.records.len()));
            for record in self.records.iter().take(MAX_LISTED_CALLS) {
                let status = if record.is_ok() { "ok" } else { "error" };
                answer.push_str(&format!(
                    "\n- {} {} ({status})",
                    record.tool, record.arguments
                ));
            }
            if self.records.len() > MAX_LISTED_CALLS {
                answer.push_str(&format!(
                    "\n- … {} more",
                    self.records.len() - MAX_LISTED_CALLS
                ));
            }
        }
        ExploreReport {
            answer,
            evidence: Vec::new(),
            confidence: Confidence::Low,
            unanswered: vec![self.question.clone()],
            dropped_citations: 0,
            stop: if error.is_some() && stop == StopReason::Submitted {
                StopReason::LlmError
            } else {
                stop
            },
            origin: ReportOrigin::InsufficientEvidence,
            iterations: self.iterations,
            tokens_in: self.usage.prompt_tokens,
            tokens_out: self.usage.completion_tokens,
            llm_error: error.map(|error| format!("{}: {error}", error.kind().as_str())),
            tool_calls: self.records.clone(),
        }
    }
}

fn describe(stop: StopReason) -> &'static str {
    match stop {
        StopReason::Submitted => "report submitted",
        StopReason::TokenLimit => "token limit reached",
        StopReason::IterationCap => "turn limit reached",
        StopReason::TimeLimit => "time limit reached",
        StopReason::LoopDetected => "the same calls kept repeating",
        StopReason::NoProgress => "replies without a usable tool call",
        StopReason::JobBudget => "the job's token budget is spent",
        StopReason::LlmError => "the model failed",
        StopReason::GoalsDone => "every goal settled",
        StopReason::NeedsClarification => "a human must clarify the question",
    }
}
