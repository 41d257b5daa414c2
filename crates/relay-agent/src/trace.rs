//! The run trace seam: what Relay did during one job run, as an ordered list of [`TraceEvent`]s
//! (LLM calls, tool calls, stage transitions, validation failures, actions, decisions).
//!
//! The agent knows the seam, not the store (like [`crate::llm::UsageSink`]): code that does
//! something worth tracing calls [`Tracer::emit`], which must never block and never fail the
//! caller. The worker installs a sink that buffers events and writes them to Postgres in batches;
//! the CLI and most tests use [`Tracer::noop`] or [`MemoryTraceSink`].

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Characters of any free-form text (tool arguments, error messages) an event keeps.
pub const MAX_TRACE_TEXT_CHARS: usize = 200;

/// What a tool call's `error` is in the trace when argument values are not recorded: tool errors
/// quote the arguments (a path not found and its closest paths, a pattern that does not compile).
pub const ERROR_NOT_RECORDED: &str = "[not recorded: it may quote the arguments]";

/// `[trace]`: what the run trace records.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TraceSettings {
    /// Record tool arguments' values (patterns, paths, qnames, capped at
    /// [`MAX_TRACE_TEXT_CHARS`]) and tool error texts, besides the argument names. Off by default:
    /// the patterns and paths of a private repository are its data, and the trace is kept for
    /// `[retention] trace_days` and shown to every reader of the API and the status page.
    pub record_argument_values: bool,
}

impl TraceSettings {
    /// The setting as the tracer applies it.
    pub fn argument_values(&self) -> ArgumentValues {
        if self.record_argument_values {
            ArgumentValues::Recorded
        } else {
            ArgumentValues::KeysOnly
        }
    }
}

/// What the trace keeps of a tool call's arguments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ArgumentValues {
    /// Their names only (`{path, pattern}`); error texts are not recorded either.
    #[default]
    KeysOnly,
    /// Names and values (the raw arguments, capped), and error texts.
    Recorded,
}

/// What kind of thing happened. Stored as its snake_case name (`trace_events.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceKind {
    /// One LLM call: role, model, tokens in/out/cached, latency, outcome.
    LlmCall,
    /// One tool call ended: tool, argument names (`arg_keys`), `args` (the names, or with
    /// `[trace] record_argument_values` the arguments capped), result tokens, duration, ok/error
    /// (its text only with values), and the `call_id` of its [`TraceKind::ToolStart`].
    ToolCall,
    /// One tool call began: `call_id` (unique in the process), tool, `arg_keys` and `args` as in
    /// [`TraceKind::ToolCall`].
    ToolStart,
    /// How far a long step is: `done` of `total` (a turn's tool calls, a stage's planned steps).
    Progress,
    /// A stage of a run began or ended (cycle, planner, explore, thorough stage, spec).
    Stage,
    /// The Validator refused part of a batch.
    ValidationFailure,
    /// An action was executed (or failed to be).
    Action,
    /// A decision: why a loop or cycle stopped, a routing choice, a goal update.
    Decision,
    /// Something failed that did not fail the run.
    Error,
    /// The agent's own note: a plan's rationale, the Critic's feedback (`note`, capped).
    Log,
}

impl TraceKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::LlmCall => "llm_call",
            Self::ToolCall => "tool_call",
            Self::ToolStart => "tool_start",
            Self::Progress => "progress",
            Self::Stage => "stage",
            Self::ValidationFailure => "validation_failure",
            Self::Action => "action",
            Self::Decision => "decision",
            Self::Error => "error",
            Self::Log => "log",
        }
    }
}

/// One event. `agent` names who emitted it (`orchestrator`, `planner`, `explore#2`, `spec`,
/// `thorough`, …); `payload` is a small JSON object whose shape depends on `kind`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceEvent {
    /// When it happened (wall clock).
    pub at: DateTime<Utc>,
    /// What happened.
    pub kind: TraceKind,
    /// Who did it.
    pub agent: String,
    /// Details.
    pub payload: serde_json::Value,
}

impl TraceEvent {
    /// An event happening now.
    pub fn now(kind: TraceKind, agent: impl Into<String>, payload: serde_json::Value) -> Self {
        Self {
            at: Utc::now(),
            kind,
            agent: agent.into(),
            payload,
        }
    }
}

/// Where events go. `emit` is called on hot paths: it must return quickly and must not fail
/// (implementations buffer, and log their own write errors).
pub trait TraceSink: Send + Sync + std::fmt::Debug {
    /// Records one event.
    fn emit(&self, event: TraceEvent);
}

/// A cheap, cloneable handle to a sink (or to nothing). Pass one per job run.
#[derive(Debug, Clone, Default)]
pub struct Tracer {
    sink: Option<Arc<dyn TraceSink>>,
    agent: Option<Arc<str>>,
    arguments: ArgumentValues,
}

impl Tracer {
    /// A tracer that drops everything.
    pub fn noop() -> Self {
        Self::default()
    }

    /// A tracer writing to `sink`.
    pub fn new(sink: Arc<dyn TraceSink>) -> Self {
        Self {
            sink: Some(sink),
            agent: None,
            arguments: ArgumentValues::KeysOnly,
        }
    }

    /// This tracer keeping `arguments` of tool calls (the `[trace] record_argument_values`
    /// setting); tracers made from it with [`Tracer::for_agent`] keep the same.
    #[must_use]
    pub fn with_argument_values(mut self, arguments: ArgumentValues) -> Self {
        self.arguments = arguments;
        self
    }

    /// The same sink, with `agent` as the default emitter name for [`Tracer::event`].
    pub fn for_agent(&self, agent: impl Into<String>) -> Self {
        Self {
            sink: self.sink.clone(),
            agent: Some(Arc::from(agent.into())),
            arguments: self.arguments,
        }
    }

    /// What this tracer keeps of tool arguments.
    pub fn argument_values(&self) -> ArgumentValues {
        self.arguments
    }

    /// A tool call's raw JSON `arguments` as an event records them: with values, the text capped;
    /// without, the names of its top-level keys (`{path, pattern}`; `{}` when it is no object).
    pub fn arguments(&self, arguments: &str) -> String {
        self.arguments_keyed(arguments, &argument_keys(arguments))
    }

    /// [`Tracer::arguments`] with the keys already known (`arguments` may be cut short of valid
    /// JSON).
    pub fn arguments_keyed(&self, arguments: &str, keys: &[String]) -> String {
        match self.arguments {
            ArgumentValues::Recorded => capped(arguments),
            ArgumentValues::KeysOnly => format!("{{{}}}", keys.join(", ")),
        }
    }

    /// A tool error's text as an event records it ([`ERROR_NOT_RECORDED`] without values).
    pub fn error_text(&self, message: &str) -> String {
        match self.arguments {
            ArgumentValues::Recorded => capped(message),
            ArgumentValues::KeysOnly => ERROR_NOT_RECORDED.to_owned(),
        }
    }

    /// `detail` of an event about a tool step's arguments (a narrowed scope, a path checked, a
    /// qname retried): whole with values; without, `{"keys": [...]}`, its keys only.
    pub fn argument_detail(&self, detail: serde_json::Value) -> serde_json::Value {
        match self.arguments {
            ArgumentValues::Recorded => detail,
            ArgumentValues::KeysOnly => {
                let mut keys: Vec<&String> = detail
                    .as_object()
                    .map(|object| object.keys().collect())
                    .unwrap_or_default();
                keys.sort();
                serde_json::json!({ "keys": keys })
            }
        }
    }

    /// The default emitter name, when one was set with [`Tracer::for_agent`].
    pub fn agent(&self) -> Option<&str> {
        self.agent.as_deref()
    }

    /// Whether events go anywhere (lets callers skip building expensive payloads).
    pub fn is_enabled(&self) -> bool {
        self.sink.is_some()
    }

    /// Records `event`.
    pub fn emit(&self, event: TraceEvent) {
        if let Some(sink) = &self.sink {
            sink.emit(event);
        }
    }

    /// Records an event of `kind` by this tracer's agent (`relay` when none was set).
    pub fn event(&self, kind: TraceKind, payload: serde_json::Value) {
        if let Some(sink) = &self.sink {
            let agent = self.agent.as_deref().unwrap_or("relay");
            sink.emit(TraceEvent::now(kind, agent, payload));
        }
    }
}

/// Keeps events in memory: for `relay analyze`/`relay explore` output and tests.
#[derive(Debug, Default)]
pub struct MemoryTraceSink {
    events: Mutex<Vec<TraceEvent>>,
}

impl MemoryTraceSink {
    /// An empty sink.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// A copy of the events so far, in emission order.
    pub fn events(&self) -> Vec<TraceEvent> {
        self.events
            .lock()
            .expect("trace sink lock poisoned")
            .clone()
    }
}

impl TraceSink for MemoryTraceSink {
    fn emit(&self, event: TraceEvent) {
        self.events
            .lock()
            .expect("trace sink lock poisoned")
            .push(event);
    }
}

/// Records the progress of a long step: `done` of `total` parts of `step`.
pub fn progress(tracer: &Tracer, step: &str, done: usize, total: usize) {
    tracer.event(
        TraceKind::Progress,
        serde_json::json!({ "step": step, "done": done, "total": total }),
    );
}

/// Emits a `log` event: the agent's own note (`about` says what it is: `rationale`, `feedback`).
pub fn log(tracer: &Tracer, about: &str, note: &str) {
    if note.trim().is_empty() {
        return;
    }
    tracer.event(
        TraceKind::Log,
        serde_json::json!({ "about": about, "note": capped(note) }),
    );
}

/// The top-level keys of a JSON object's text, sorted (empty when it is no object).
pub fn argument_keys(arguments: &str) -> Vec<String> {
    let mut keys: Vec<String> = serde_json::from_str::<serde_json::Value>(arguments)
        .ok()
        .and_then(|value| value.as_object().map(|o| o.keys().cloned().collect()))
        .unwrap_or_default();
    keys.sort();
    keys
}

/// `text` cut at [`MAX_TRACE_TEXT_CHARS`] characters.
pub fn capped(text: &str) -> String {
    text.chars().take(MAX_TRACE_TEXT_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noop_drops_and_memory_keeps_order() {
        Tracer::noop().event(TraceKind::Decision, serde_json::json!({"x": 1}));
        let sink = MemoryTraceSink::new();
        let tracer = Tracer::new(sink.clone()).for_agent("planner");
        tracer.event(TraceKind::Stage, serde_json::json!({"n": 1}));
        tracer.event(TraceKind::Decision, serde_json::json!({"n": 2}));
        let events = sink.events();
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].agent, "planner");
        assert_eq!(events[1].payload["n"], 2);
        assert_eq!(
            capped(&"é".repeat(300)).chars().count(),
            MAX_TRACE_TEXT_CHARS
        );
    }
}
