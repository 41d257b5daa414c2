//! [`ToolCallRecord`]: what the run trace keeps of one tool call.

use std::time::Duration;

use serde::Serialize;

use crate::llm::ToolCall;

/// Characters of the raw arguments kept in a record (the trace must stay small).
pub const MAX_RECORDED_ARGUMENT_CHARS: usize = 200;

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum CallStatus {
    /// The tool answered.
    Ok,
    /// The call failed; `message` is the first line of what the model was told.
    Error {
        /// First line of the error text.
        message: String,
    },
}

/// One tool call as the run trace records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolCallRecord {
    /// The tool name as the model sent it (unknown names included).
    pub tool: String,
    /// Top-level argument names, sorted (empty when the arguments were not an object).
    pub argument_keys: Vec<String>,
    /// The raw arguments, cut at [`MAX_RECORDED_ARGUMENT_CHARS`] characters.
    pub arguments: String,
    /// Relay's own time for the call (no LLM time).
    #[serde(serialize_with = "as_millis")]
    pub duration: Duration,
    /// Ok or error.
    #[serde(flatten)]
    pub status: CallStatus,
    /// Estimated tokens of the result the model received.
    pub result_tokens: usize,
    /// The result's first line, cut at [`MAX_RECORDED_ARGUMENT_CHARS`] characters (what an
    /// evaluation reads to tell "found nothing" from an answer).
    pub result_head: String,
}

impl ToolCallRecord {
    /// The record of `call`, which took `duration` and answered `result`.
    pub fn new(call: &ToolCall, duration: Duration, status: CallStatus, result: &str) -> Self {
        Self {
            tool: call.name.clone(),
            argument_keys: crate::trace::argument_keys(&call.arguments),
            arguments: call
                .arguments
                .chars()
                .take(MAX_RECORDED_ARGUMENT_CHARS)
                .collect(),
            duration,
            status,
            result_tokens: relay_tools::output::estimate_tokens(result),
            result_head: result
                .lines()
                .next()
                .unwrap_or_default()
                .chars()
                .take(MAX_RECORDED_ARGUMENT_CHARS)
                .collect(),
        }
    }

    /// Whether the call succeeded.
    pub fn is_ok(&self) -> bool {
        self.status == CallStatus::Ok
    }
}

fn as_millis<S: serde::Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(duration.as_secs_f64() * 1000.0)
}

/// Ids of traced tool calls, unique in the process (so within any run and across parallel explores).
static NEXT_CALL_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A traced tool call between its start and its end: [`CallTrace::start`] emits `tool_start` with
/// a fresh `call_id`, [`CallTrace::end`] the matching `tool_call` that repeats it.
#[derive(Debug)]
#[must_use = "a started call is ended with `end`"]
pub struct CallTrace {
    id: String,
}

impl CallTrace {
    /// Emits `call`'s `tool_start` event.
    pub fn start(tracer: &crate::trace::Tracer, call: &ToolCall) -> Self {
        let n = NEXT_CALL_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let trace = Self {
            id: format!("t{n}"),
        };
        if tracer.is_enabled() {
            tracer.event(
                crate::trace::TraceKind::ToolStart,
                serde_json::json!({
                    "call_id": trace.id,
                    "tool": call.name,
                    "arg_keys": crate::trace::argument_keys(&call.arguments),
                    "args": tracer.arguments(&call.arguments),
                }),
            );
        }
        trace
    }

    /// The call's trace id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Emits the call's `tool_call` end event, with the start's id.
    pub fn end(self, tracer: &crate::trace::Tracer, record: &ToolCallRecord) {
        record.trace(tracer, Some(&self.id));
    }
}

impl ToolCallRecord {
    /// Emits the call's `tool_call` trace event, carrying `call_id` when the call's start was
    /// traced: the argument names always, their values and the error text only when the tracer
    /// records values (`[trace] record_argument_values`).
    fn trace(&self, tracer: &crate::trace::Tracer, call_id: Option<&str>) {
        if !tracer.is_enabled() {
            return;
        }
        let mut payload = serde_json::json!({
            "tool": self.tool,
            "arg_keys": self.argument_keys,
            "args": tracer.arguments_keyed(&self.arguments, &self.argument_keys),
            "result_tokens": self.result_tokens,
            "duration_ms": u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX),
            "ok": self.is_ok(),
        });
        if let Some(id) = call_id {
            payload["call_id"] = serde_json::json!(id);
        }
        if let CallStatus::Error { message } = &self.status {
            payload["error"] = serde_json::json!(tracer.error_text(message));
        }
        tracer.event(crate::trace::TraceKind::ToolCall, payload);
    }
}
