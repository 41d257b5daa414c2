//! The [`Tool`] trait, the per-job [`ToolContext`] and the [`ToolRegistry`] that dispatches calls.

use std::sync::{Arc, Mutex, MutexGuard};

use serde::de::DeserializeOwned;

use relay_repo::GitHistory;

use crate::budget::{JobBudget, ToolLimits};
use crate::control::{CallControl, Stop};
use crate::error::ToolError;
use crate::name::ToolName;
use crate::output::{self, estimate_tokens};
use crate::sandbox::Sandbox;

/// A read-only tool the agent can call.
///
/// Implementations return the result body; the registry appends the size note, enforces the
/// per-call token cap and charges the job budget.
pub trait Tool: Send + Sync {
    /// Which tool this is.
    fn tool_name(&self) -> ToolName;
    /// The name the LLM calls the tool by.
    fn name(&self) -> &'static str {
        self.tool_name().as_str()
    }
    /// A description written for the LLM: what the tool does, when to use it, what it returns.
    fn description(&self) -> &'static str;
    /// JSON schema of the arguments (generated with `schemars`).
    fn parameters_schema(&self) -> serde_json::Value;
    /// Whether the tool can answer in `context` (the agent's toolbox offers only those that can:
    /// `history` needs the checkout's git history).
    fn available(&self, _context: &ToolContext) -> bool {
        true
    }
    /// Whether a call counts against the job's files-read budget.
    fn reads_files(&self) -> bool {
        false
    }
    /// Runs the tool.
    fn call(
        &self,
        context: &ToolContext,
        arguments: serde_json::Value,
    ) -> Result<String, ToolError>;
}

/// Everything a tool call may touch: the sandboxed checkout, the limits and the job's state.
///
/// One context per job: it is cheap to clone (the job state is shared) and `Send + Sync`.
#[derive(Debug, Clone)]
pub struct ToolContext {
    sandbox: Sandbox,
    limits: ToolLimits,
    job: Arc<Mutex<JobState>>,
    /// The deadline and cancellation flag of the call in progress (set per call by the registry).
    control: CallControl,
    /// Where the checkout's git history is read (`None`: the `history` tool cannot answer).
    history: Option<Arc<GitHistory>>,
    /// The related repository this context explores (`None`: the issue's own). Every path the
    /// tools print is then written as a place (`label:path`), and path arguments may carry it.
    label: Option<Arc<str>>,
}

/// Mutable per-job state: the budget totals.
#[derive(Debug, Clone, Default)]
pub struct JobState {
    /// Totals charged so far.
    pub budget: JobBudget,
}

impl ToolContext {
    /// A context for a job exploring the checkout at `repo_root`.
    pub fn new(repo_root: &std::path::Path, limits: ToolLimits) -> Result<Self, ToolError> {
        Ok(Self {
            sandbox: Sandbox::new(repo_root)?,
            limits,
            job: Arc::default(),
            control: CallControl::default(),
            history: None,
            label: None,
        })
    }

    /// A context over the checkout of the related repository `label` at `root`, with this
    /// context's limits and **its job state**: every call in either charges the one job budget.
    /// It has no git history and no exclusions until given them.
    pub fn related_checkout(&self, label: &str, root: &std::path::Path) -> Result<Self, ToolError> {
        Ok(Self {
            sandbox: Sandbox::new(root)?,
            limits: self.limits.clone(),
            job: Arc::clone(&self.job),
            control: CallControl::default(),
            history: None,
            label: None,
        }
        .with_label(label))
    }

    /// This context exploring the related repository `label`: the tools print every path as
    /// `label:path` and accept path arguments with or without that prefix.
    #[must_use]
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(Arc::from(label.into()));
        self
    }

    /// The related repository this context explores (`None`: the issue's own).
    pub fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }

    /// `path` (relative to this context's root; `.` for the root) as the agent reads it: a
    /// place `label:path` in a related repository, the bare path in the issue's own.
    pub fn place(&self, path: &str) -> String {
        crate::place::write_place(self.label(), path)
    }

    /// A path argument with this context's own `label:` cut off (any other text is left as is).
    pub fn local<'a>(&self, path: &'a str) -> &'a str {
        let Some(label) = self.label() else {
            return path;
        };
        let trimmed = path.trim_start();
        trimmed
            .strip_prefix(label)
            .and_then(|rest| rest.strip_prefix(crate::place::LABEL_SEPARATOR))
            .unwrap_or(path)
    }

    /// Whether both contexts charge the same job state.
    pub fn shares_job_with(&self, other: &ToolContext) -> bool {
        Arc::ptr_eq(&self.job, &other.job)
    }

    /// This context with the checkout's git history (the repository's mirror at the snapshot's
    /// commit in the worker, the working tree's `HEAD` for the CLI): the `history` tool reads it.
    #[must_use]
    pub fn with_history(mut self, history: GitHistory) -> Self {
        self.history = Some(Arc::new(history));
        self
    }

    /// This context with the history of the working tree at its root, when the root is in a git
    /// repository with a commit (`relay tool`, `relay explore` on a plain checkout).
    #[must_use]
    pub fn with_worktree_history(self) -> Self {
        match GitHistory::of_worktree(self.sandbox.root()) {
            Some(history) => self.with_history(history),
            None => self,
        }
    }

    /// The checkout's git history, when it has one.
    pub fn history(&self) -> Option<&GitHistory> {
        self.history.as_deref()
    }

    /// This context with the repository's excluded paths refused by every tool.
    #[must_use]
    pub fn with_excludes(
        mut self,
        excludes: std::sync::Arc<relay_core::repo_config::ExcludeSet>,
    ) -> Self {
        self.sandbox = self.sandbox.with_excludes(excludes);
        self
    }

    /// This context for one call governed by `control`.
    pub fn with_control(&self, control: CallControl) -> Self {
        Self {
            control,
            ..self.clone()
        }
    }

    /// The deadline and cancellation flag of the current call.
    pub fn control(&self) -> &CallControl {
        &self.control
    }

    /// `Err` when the current call must stop (cancelled, or past its deadline): for tools to
    /// poll in their loops.
    pub fn check_stop(&self) -> Result<(), ToolError> {
        match self.control.stop() {
            None => Ok(()),
            Some(stop) => Err(self.stop_error(stop)),
        }
    }

    /// The error a tool returns when it stops for `stop`.
    pub fn stop_error(&self, stop: Stop) -> ToolError {
        match stop {
            Stop::Cancelled => ToolError::Cancelled,
            Stop::DeadlineExceeded => ToolError::DeadlineExceeded {
                seconds: self.limits.call_timeout_secs,
            },
        }
    }

    /// The sandbox confining this job.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// The limits in force.
    pub fn limits(&self) -> &ToolLimits {
        &self.limits
    }

    /// Locks the job state (budget and traversal) for reading or recording.
    pub fn job(&self) -> MutexGuard<'_, JobState> {
        // A poisoned lock only means a tool panicked mid-record; the counters stay usable.
        self.job
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The set of tools offered to an agent.
pub struct ToolRegistry {
    tools: Vec<Box<dyn Tool>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_list()
            .entries(self.tools.iter().map(|tool| tool.name()))
            .finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn empty() -> Self {
        Self { tools: Vec::new() }
    }

    /// The code tools: `grep`, `read`, `glob`, `tree` and `history` (which answers only over a
    /// context with the checkout's git history).
    pub fn standard() -> Self {
        let mut registry = Self::empty();
        registry.register(Box::new(crate::grep::GrepTool));
        registry.register(Box::new(crate::read::ReadTool));
        registry.register(Box::new(crate::glob::GlobTool));
        registry.register(Box::new(crate::tree::TreeTool));
        registry.register(Box::new(crate::history::HistoryTool));
        registry
    }

    /// Adds a tool (e.g. the codegraph tool); a tool with the same name is replaced.
    pub fn register(&mut self, tool: Box<dyn Tool>) {
        self.tools
            .retain(|existing| existing.tool_name() != tool.tool_name());
        self.tools.push(tool);
    }

    /// Looks a tool up by the name the LLM called it by.
    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        let name: ToolName = name.parse().ok()?;
        self.get_tool(name)
    }

    /// Looks a tool up.
    pub fn get_tool(&self, name: ToolName) -> Option<&dyn Tool> {
        self.tools
            .iter()
            .find(|tool| tool.tool_name() == name)
            .map(|tool| tool.as_ref())
    }

    /// The tools in registration order. What the model is offered (name, description, schema) is
    /// built from them by the agent's one tool-definition type, `relay_agent::llm::ToolDefinition`.
    pub fn tools(&self) -> impl Iterator<Item = &dyn Tool> {
        self.tools.iter().map(|tool| tool.as_ref())
    }

    /// Runs one call under a fresh deadline (`call_timeout_secs`): see [`Self::call_controlled`].
    pub fn call(
        &self,
        context: &ToolContext,
        name: &str,
        arguments_json: &str,
    ) -> Result<String, ToolError> {
        let control = CallControl::with_timeout(call_timeout(context.limits()));
        self.call_controlled(&context.with_control(control), name, arguments_json)
    }

    /// Runs one call governed by the context's [`CallControl`]: checks the job budget, parses the
    /// arguments, runs the tool, caps the output at `max_call_tokens`, appends the size note and
    /// charges the budget.
    pub fn call_controlled(
        &self,
        context: &ToolContext,
        name: &str,
        arguments_json: &str,
    ) -> Result<String, ToolError> {
        let tool = self.get(name).ok_or_else(|| self.unknown(name))?;
        let arguments: serde_json::Value =
            serde_json::from_str(arguments_json).map_err(|error| {
                ToolError::InvalidArguments(format!("arguments are not valid JSON: {error}"))
            })?;
        context
            .job()
            .budget
            .check(context.limits(), tool.reads_files())?;
        let body = tool
            .call(context, arguments)
            .map_err(|error| error.placed(context.label()))?;
        let body = output::cap_tokens(body, context.limits().max_call_tokens);
        let text = output::finish(body);
        context
            .job()
            .budget
            .charge(estimate_tokens(&text), tool.reads_files());
        Ok(text)
    }

    /// [`call`](Self::call) on tokio's blocking pool, for async callers (the agent loop): tool
    /// calls do file I/O and CPU-bound searching and must not run on the async workers.
    ///
    /// The call has a deadline (`call_timeout_secs`) and is cancelled when this future is dropped
    /// (the explore or job awaiting it was cancelled or timed out): the blocking work polls the
    /// flag and stops. Should a tool not stop in time, the caller still gets its answer at the
    /// deadline (plus a short grace) and the work is left to wind down on its own.
    pub async fn call_async(
        self: Arc<Self>,
        context: ToolContext,
        name: String,
        arguments_json: String,
    ) -> Result<String, ToolError> {
        let control = CallControl::with_timeout(call_timeout(context.limits()));
        self.call_async_with(context, control, name, arguments_json)
            .await
    }

    /// [`call_async`](Self::call_async) governed by `control` (the caller may cancel it, or
    /// give it another deadline).
    pub async fn call_async_with(
        self: Arc<Self>,
        context: ToolContext,
        control: CallControl,
        name: String,
        arguments_json: String,
    ) -> Result<String, ToolError> {
        let timeout = call_timeout(context.limits());
        let guard = control.cancel_on_drop();
        let context = context.with_control(control);
        let waited = context.clone();
        let span = tracing::Span::current();
        let task = tokio::task::spawn_blocking(move || {
            let _entered = span.enter();
            self.call_controlled(&context, &name, &arguments_json)
        });
        let result = match tokio::time::timeout(timeout + STOP_GRACE, task).await {
            Ok(joined) => {
                joined.map_err(|error| ToolError::Io(format!("tool task failed: {error}")))?
            }
            Err(_) => {
                waited.control().cancel();
                Err(waited.stop_error(Stop::DeadlineExceeded))
            }
        };
        guard.disarm();
        result
    }

    fn unknown(&self, name: &str) -> ToolError {
        let names: Vec<&str> = self.tools.iter().map(|tool| tool.name()).collect();
        ToolError::UnknownTool {
            name: name.to_string(),
            available: names.join(", "),
        }
    }
}

/// How long past its deadline a call is awaited before the caller gets the deadline error.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// The per-call wall-clock limit (at least one second).
fn call_timeout(limits: &ToolLimits) -> std::time::Duration {
    std::time::Duration::from_secs(limits.call_timeout_secs.max(1))
}

/// Parses JSON arguments into a tool's argument type, with the field path in the message.
pub fn parse_arguments<T: DeserializeOwned>(arguments: serde_json::Value) -> Result<T, ToolError> {
    serde_json::from_value(arguments)
        .map_err(|error| ToolError::InvalidArguments(error.to_string()))
}

/// Generates the JSON schema of an argument type.
pub fn schema_of<T: schemars::JsonSchema>() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or(serde_json::Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code tool is offered: a name added to `ToolName` without its registration fails here
    /// (the code graph's tool is registered by the agent's toolbox, from relay-codegraph).
    #[test]
    fn the_standard_registry_offers_every_code_tool() {
        let registry = ToolRegistry::standard();
        for name in ToolName::ALL {
            let offered = registry.get_tool(name).is_some();
            assert_eq!(offered, name != ToolName::Codegraph, "{name}");
        }
    }
}
