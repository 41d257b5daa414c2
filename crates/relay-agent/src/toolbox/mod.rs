//! The agents' toolbox: one async surface over the code tools (`grep`, `read`, `glob`, `tree` and,
//! over a checkout with git history, `history`, from relay-tools) and the `codegraph` tool
//! (relay-codegraph ops, over any [`GraphStore`]).
//!
//! With related repositories ([`Toolbox::with_related`]) the code tools also look in their
//! checkouts: a call names one with the `repo` argument or a place (`acme/sdk:pkg/x.go`), and
//! their paths come back as places.
//!
//! Invariants:
//! - one definition per tool, rendered through the LLM layer's [`ToolDefinition`];
//! - arguments are validated against that definition's schema before the tool runs, so a model's
//!   malformed call becomes an error result it can read, never a failure of the loop;
//! - every call, including failed ones, charges the job's tool budget (shared by every explore of
//!   the job through the `Arc<Toolbox>`) and yields a [`ToolCallRecord`] for the run trace.

mod graph;
mod record;
mod related;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use relay_codegraph::ops::{self, CodegraphArgs, GraphScope, GraphSet, RelatedGraph};
use relay_codegraph::store::GraphStore;
use relay_tools::output::estimate_tokens;
use relay_tools::sandbox::Sandbox;
use relay_tools::{
    JobBudget, RelatedSandbox, SandboxSet, ToolContext, ToolLimits, ToolName, ToolRegistry,
};

use crate::llm::{ToolCall, ToolDefinition, ToolResult};

pub use graph::{index_in_memory, index_related_in_memory};
pub use record::{CallStatus, CallTrace, MAX_RECORDED_ARGUMENT_CHARS, ToolCallRecord};
pub use related::{MAX_RELATED_REPOSITORIES, REPO_ARGUMENT, RelatedCheckout};

use related::RelatedContext;

// Tools are `relay_tools::ToolName`s; a test below keeps `ops::TOOL_NAME` equal to Codegraph's.

/// What the `codegraph` tool answers once its store stopped answering during the job (the seed's
/// graceful degradation: the explore goes on with the code tools).
pub const CODEGRAPH_WENT_AWAY: &str = "Codegraph is not available (its store stopped answering). \
Use grep and read tools instead.";

/// Failures building a toolbox.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolboxError {
    /// The snapshot root cannot be sandboxed (missing, not a directory...).
    #[error("cannot open the snapshot: {0}")]
    Snapshot(#[from] relay_tools::ToolError),
    /// Indexing the checkout for the in-memory code graph failed.
    #[error("cannot index the checkout")]
    Index(#[source] relay_codegraph::index::Error),
    /// The graph store refused the graph.
    #[error("cannot store the code graph")]
    Store(#[source] relay_codegraph::store::StoreError),
    /// A related repository cannot be offered (a bad or repeated label, too many of them).
    #[error("related repository {label}: {reason}")]
    Related { label: String, reason: String },
}

/// Which code graph the `codegraph` tool reads: a store (the in-memory graph for the CLI, the
/// configured store in the worker), the repository/commit inside it, and the graphs of the
/// related repositories (each its own snapshot in the same store, linked at query time).
#[derive(Clone)]
pub struct GraphAccess {
    /// The store.
    pub store: Arc<dyn GraphStore>,
    /// The repository and commit to query.
    pub scope: GraphScope,
    /// The related repositories' graphs, labelled as their places are (`acme/sdk`).
    pub related: Vec<RelatedGraph>,
}

impl GraphAccess {
    /// The graph of one repository, with no related ones.
    pub fn single(store: Arc<dyn GraphStore>, scope: GraphScope) -> GraphAccess {
        GraphAccess {
            store,
            scope,
            related: Vec::new(),
        }
    }

    /// The set the tool queries: the issue's own graph and the related ones.
    pub fn set(&self) -> GraphSet {
        GraphSet {
            primary: self.scope.clone(),
            related: self.related.clone(),
        }
    }
}

impl std::fmt::Debug for GraphAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphAccess")
            .field("scope", &self.scope)
            .field("related", &self.related)
            .finish_non_exhaustive()
    }
}

/// What one call produced: the result for the model and the record for the trace.
#[derive(Debug, Clone)]
pub struct ToolOutcome {
    /// The result sent back to the model (an error result when the call failed).
    pub result: ToolResult,
    /// The trace record.
    pub record: ToolCallRecord,
}

/// The tools of one job over one snapshot. Share it with `Arc`: every explore of the job charges
/// the same tool budget.
pub struct Toolbox {
    registry: Arc<ToolRegistry>,
    context: ToolContext,
    /// The related repositories' contexts (sharing `context`'s job state), in the worker's order.
    related: Vec<RelatedContext>,
    /// The issue's own repository's path (`acme/app`): a `repo` naming it means the default.
    own_label: Option<String>,
    graph: Option<GraphAccess>,
    /// Set when the graph store failed during the job: later calls answer at once, without it.
    graph_down: AtomicBool,
    definitions: Vec<ToolDefinition>,
}

impl std::fmt::Debug for Toolbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toolbox")
            .field("root", &self.context.sandbox().root())
            .field("related", &self.related_labels())
            .field("tools", &self.names())
            .field("graph", &self.graph)
            .finish_non_exhaustive()
    }
}

impl Toolbox {
    /// A toolbox over the checkout at `snapshot_root`. Without `graph` the `codegraph` tool is not
    /// offered (the agent falls back to grep). `limits` are the per-call caps and the job totals.
    pub fn new(
        snapshot_root: &Path,
        graph: Option<GraphAccess>,
        limits: ToolLimits,
    ) -> Result<Self, ToolboxError> {
        Self::with_excludes(snapshot_root, graph, limits, Arc::default())
    }

    /// [`Toolbox::new`] whose code tools refuse (and whose walks skip) the paths the
    /// repository's configuration excludes (the code graph was indexed without them).
    pub fn with_excludes(
        snapshot_root: &Path,
        graph: Option<GraphAccess>,
        limits: ToolLimits,
        excludes: Arc<relay_core::repo_config::ExcludeSet>,
    ) -> Result<Self, ToolboxError> {
        let registry = ToolRegistry::standard();
        let context = ToolContext::new(snapshot_root, limits)?.with_excludes(excludes);
        let definitions = definitions(&registry, &context, &[], graph.as_ref());
        Ok(Self {
            registry: Arc::new(registry),
            context,
            related: Vec::new(),
            own_label: None,
            graph,
            graph_down: AtomicBool::new(false),
            definitions,
        })
    }

    /// This toolbox with the checkout's git history: the `history` tool is offered and reads it
    /// (the repository's mirror at the snapshot's commit in the worker, a working tree's `HEAD`
    /// for the CLI).
    #[must_use]
    pub fn with_history(mut self, history: relay_tools::GitHistory) -> Self {
        self.context = self.context.with_history(history);
        self.refresh_definitions();
        self
    }

    /// This toolbox with the related repositories' checkouts (replacing any given before): the
    /// code tools gain an optional `repo` argument and look in the one a call names (by `repo`,
    /// or by a `path` written `label:path`), every related context charging this job's one
    /// budget. Refused: more than [`MAX_RELATED_REPOSITORIES`], a label that is not a
    /// repository path or is given twice, a root that cannot be sandboxed.
    pub fn with_related(mut self, related: Vec<RelatedCheckout>) -> Result<Self, ToolboxError> {
        self.related = related::contexts(&self.context, related)?;
        self.refresh_definitions();
        Ok(self)
    }

    /// This toolbox knowing the issue's own repository's path: a `repo` naming it (any case)
    /// looks in the checkout, as no `repo` does.
    #[must_use]
    pub fn with_own_label(mut self, label: impl Into<String>) -> Self {
        self.own_label = Some(label.into());
        self
    }

    /// `repo` unless it names the issue's own repository (then `None`: the default).
    fn other_repo(&self, repo: Option<String>) -> Option<String> {
        repo.filter(|repo| {
            !self
                .own_label
                .as_deref()
                .is_some_and(|own| own.eq_ignore_ascii_case(repo.trim()))
        })
    }

    /// The related repositories' labels, in order.
    pub fn related_labels(&self) -> Vec<&str> {
        self.related.iter().map(|r| r.label.as_str()).collect()
    }

    /// Every checkout a citation may point into: the issue's own and the related repositories'.
    pub fn sandboxes(&self) -> SandboxSet {
        SandboxSet {
            primary: self.context.sandbox().clone(),
            related: self
                .related
                .iter()
                .map(|r| RelatedSandbox {
                    label: r.label.clone(),
                    sandbox: r.context.sandbox().clone(),
                })
                .collect(),
        }
    }

    fn refresh_definitions(&mut self) {
        self.definitions = definitions(
            &self.registry,
            &self.context,
            &self.related,
            self.graph.as_ref(),
        );
    }

    /// This toolbox with the history of the working tree at its root, when the root is in a git
    /// repository (`relay explore`, `relay eval` on a plain checkout); unchanged otherwise.
    #[must_use]
    pub fn with_worktree_history(self) -> Self {
        match relay_tools::GitHistory::of_worktree(self.context.sandbox().root()) {
            Some(history) => self.with_history(history),
            None => self,
        }
    }

    /// The code graph the `codegraph` tool reads, if any.
    pub fn graph(&self) -> Option<&GraphAccess> {
        self.graph.as_ref()
    }

    /// This toolbox whose `codegraph` also answers over the related repositories' graphs
    /// (stored beside the issue's own in its store); without a graph, unchanged.
    #[must_use]
    pub fn with_related_graphs(mut self, related: Vec<RelatedGraph>) -> Self {
        if let Some(graph) = &mut self.graph {
            graph.related = related;
        }
        self.refresh_definitions();
        self
    }

    /// The definitions offered to the model, in a stable order.
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.definitions
    }

    /// The tool names.
    pub fn names(&self) -> Vec<&str> {
        self.definitions.iter().map(|d| d.name.as_str()).collect()
    }

    /// The sandbox over the issue's own snapshot (citations are verified through
    /// [`Toolbox::sandboxes`], which adds the related repositories').
    pub fn sandbox(&self) -> &Sandbox {
        self.context.sandbox()
    }

    /// The job's tool totals so far (all explores of the job together).
    pub fn job_usage(&self) -> JobBudget {
        self.context.job().budget.clone()
    }

    /// Runs one call. Never fails: unknown tools, malformed arguments, budget exhaustion and tool
    /// errors all become an error [`ToolResult`] the model can read.
    pub async fn call(&self, call: &ToolCall) -> ToolOutcome {
        let started = Instant::now();
        let call = normalise_empty_arguments(call);
        let (result, status) = match self.run(&call).await {
            Ok(text) => (ToolResult::ok(&call.id, text), CallStatus::Ok),
            Err(result) => {
                let status = CallStatus::Error {
                    message: first_line(&result.content),
                };
                (result, status)
            }
        };
        let record = ToolCallRecord::new(&call, started.elapsed(), status, &result.content);
        ToolOutcome { result, record }
    }

    async fn run(&self, call: &ToolCall) -> Result<String, ToolResult> {
        let Some(definition) = self.definitions.iter().find(|d| d.name == call.name) else {
            return Err(ToolResult::error(
                &call.id,
                format!(
                    "unknown tool `{}`; the tools are: {}, and submit_report to finish",
                    call.name,
                    self.names().join(", ")
                ),
            ));
        };
        if call.name == ToolName::Codegraph {
            let arguments = definition.check_call(&clamped_depth(call))?;
            return self.codegraph(call, &arguments).await;
        }
        // `repo` is the toolbox's, not the tool's: taken out before the schema check, so a
        // `repo` naming no related repository is answered as such even when none is offered.
        let (arguments, repo) = if related::is_code_tool(&call.name) {
            related::take_repo(&call.arguments)
                .map_err(|message| ToolResult::error(&call.id, message))?
        } else {
            (call.arguments.clone(), None)
        };
        let repo = self.other_repo(repo);
        let arguments = definition.check_call(&ToolCall {
            arguments,
            ..call.clone()
        })?;
        let context = match related::route(&self.related, &call.name, repo.as_deref(), &arguments)
            .map_err(|message| ToolResult::error(&call.id, message))?
        {
            None => &self.context,
            Some(index) => &self.related[index].context,
        };
        self.registry
            .clone()
            .call_async(context.clone(), call.name.clone(), arguments.to_string())
            .await
            .map_err(|error| ToolResult::error(&call.id, error.to_string()))
    }

    async fn codegraph(
        &self,
        call: &ToolCall,
        arguments: &serde_json::Value,
    ) -> Result<String, ToolResult> {
        let Some(graph) = &self.graph else {
            return Err(ToolResult::error(
                &call.id,
                "the code graph is not available",
            ));
        };
        // Same job budget as the code tools: the check before, the charge after.
        self.context
            .job()
            .budget
            .check(self.context.limits(), false)
            .map_err(|error| ToolResult::error(&call.id, error.to_string()))?;
        if self.graph_down.load(Ordering::Relaxed) {
            return Err(ToolResult::error(&call.id, CODEGRAPH_WENT_AWAY));
        }
        let text = match serde_json::from_value::<CodegraphArgs>(arguments.clone()) {
            Ok(mut args) => {
                args.repo = self.other_repo(args.repo.take());
                let outcome = ops::run_set(Some(graph.store.as_ref()), &graph.set(), &args).await;
                if let ops::Outcome::Error(ops::OpError::Store { message }) = &outcome {
                    // A store that failed once is not asked again by this job: every explore
                    // would otherwise wait on it (a connection timeout) before falling back.
                    tracing::warn!(error.message = %message, "code-graph store failed: this job's explores fall back to grep and read");
                    self.graph_down.store(true, Ordering::Relaxed);
                    return Err(ToolResult::error(&call.id, CODEGRAPH_WENT_AWAY));
                }
                outcome.to_text()
            }
            // Malformed arguments are explained by the tool itself.
            Err(_) => {
                ops::execute_set_json(Some(graph.store.as_ref()), &graph.set(), arguments).await
            }
        };
        let text = relay_tools::output::finish(text);
        self.context
            .job()
            .budget
            .charge(estimate_tokens(&text), false);
        Ok(text)
    }
}

/// What the model is offered: the code tools that can answer over `context` or a related
/// repository's (`history` only with a checkout's git history), each with the `repo` argument
/// when there are related repositories, then `codegraph` when there is a graph.
fn definitions(
    registry: &ToolRegistry,
    context: &ToolContext,
    related: &[RelatedContext],
    graph: Option<&GraphAccess>,
) -> Vec<ToolDefinition> {
    let labels: Vec<&str> = related.iter().map(|r| r.label.as_str()).collect();
    let mut definitions: Vec<ToolDefinition> = registry
        .tools()
        .filter(|tool| {
            tool.available(context) || related.iter().any(|r| tool.available(&r.context))
        })
        .map(|tool| ToolDefinition {
            name: tool.name().to_owned(),
            description: tool.description().to_owned(),
            parameters: tool.parameters_schema(),
        })
        .map(|definition| {
            if labels.is_empty() {
                definition
            } else {
                related::offer_related(definition, &labels)
            }
        })
        .collect();
    if let Some(graph) = graph {
        let set = graph.set();
        let mut definition = ToolDefinition::from_schema::<relay_codegraph::ops::CodegraphArgs>(
            ToolName::Codegraph.as_str(),
            &ops::tool_description(&set),
        );
        if set.related.is_empty() {
            // Offered only when there is another repository to name, as for the code tools.
            if let Some(properties) = definition.parameters["properties"].as_object_mut() {
                properties.remove(REPO_ARGUMENT);
            }
        }
        definitions.push(definition);
    }
    definitions
}

/// Small models send `""` (or whitespace) as the arguments of a call; treat that as `{}` so the
/// schema check can say which argument is missing instead of "not valid JSON".
fn normalise_empty_arguments(call: &ToolCall) -> ToolCall {
    let mut call = call.clone();
    if call.arguments.trim().is_empty() || call.arguments.trim() == "null" {
        call.arguments = "{}".to_owned();
    }
    call
}

/// The call with its `depth` clamped to 1-3 (the seed clamps, the schema alone would refuse).
/// Arguments that are not a JSON object are left for the schema check to report.
fn clamped_depth(call: &ToolCall) -> ToolCall {
    let mut call = call.clone();
    if let Ok(mut arguments) = serde_json::from_str::<serde_json::Value>(&call.arguments) {
        relay_codegraph::ops::clamp_depth_argument(&mut arguments);
        call.arguments = arguments.to_string();
    }
    call
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_graph_names_its_tool_as_tool_name_does() {
        // relay-codegraph does not depend on relay-tools and keeps its own constant.
        assert_eq!(ops::TOOL_NAME, ToolName::Codegraph.as_str());
        assert_eq!(ops::tool_definition().0, ToolName::Codegraph.as_str());
    }
}
