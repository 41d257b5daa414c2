//! The `codegraph` agent tool: structural questions about a repository answered from its code graph.
//!
//! Operations: `search`, `callers`, `callees`, `implementations`, `usages`, `resolve` (see the crate
//! README for the exact output). [`execute`] answers an agent with text; [`run`] returns the structured
//! [`Outcome`] that the CLI prints as text ([`Outcome::to_text`]) or JSON ([`Outcome::to_json`]).
//! [`execute_set`] answers over the repository and its related repositories ([`GraphSet`]),
//! linking them at query time (`set.rs`; `across.rs` and `across_impls.rs` for the operations,
//! `reexport.rs` for Python names a package re-exports).

mod across;
mod across_impls;
mod args;
mod outcome;
mod query;
mod reexport;
mod render;
mod set;
mod suggest;

pub use args::{CodegraphArgs, Operation, clamp_depth_argument};
pub use outcome::{
    CallResult, CallsOutcome, Dispatch, ImplementationsOutcome, MAX_SEARCH_RESULTS, OpError,
    Outcome, RelatedSymbol, ResolveOutcome, SearchOutcome, Section, Site, Usage, UsagesOutcome,
};
pub use set::{GraphSet, RelatedGraph, execute_set, execute_set_json, run_set, tool_description};
pub use suggest::levenshtein;

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use crate::store::GraphStore;

/// The tool's name as agents call it.
pub const TOOL_NAME: &str = "codegraph";

/// The tool description the LLM reads; the indexed languages come from the language frontends.
pub static TOOL_DESCRIPTION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "Query the repository's code graph ({languages}) for structural \
questions that grep answers poorly: who calls a function, what it calls, which types implement an \
interface (or which interfaces a type implements, or a class's subclasses and bases), where a type, \
constant or variable is used. Workflow: run `search` first with a `name` (case-insensitive, `*` wildcard, \
optional `kind` and `file` filters) to get the symbol's fully qualified name (qname), then call a \
relationship operation (`callers`, `callees`, `implementations`, `usages`) with that `qname`. `callers` \
and `callees` accept `depth` 1-3 (default 1). `resolve` lists the qnames a short name may refer to. \
Results of `callers`/`callees` list static calls first; a result labelled dynamic is reached only \
through an interface method call (one of the concrete types whose values flow to the receiver in the \
indexed code, or every implementation of the receiver's type when that flow is unknown) or through a \
function value (a function that flows to the called variable or field): the call may reach it at run \
time, it is not written at the site. Results carry file:line so you can read the code.",
        languages = crate::index::languages_sentence()
    )
});

/// Which stored graph a tool call reads: a repository and optionally a commit (`None`: the most recently
/// indexed commit of that repository).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphScope {
    pub repo: String,
    #[serde(default)]
    pub commit: Option<String>,
}

impl GraphScope {
    /// The latest indexed graph of `repo`.
    pub fn latest(repo: impl Into<String>) -> Self {
        GraphScope {
            repo: repo.into(),
            commit: None,
        }
    }

    /// The graph of `repo` at `commit`.
    pub fn at(repo: impl Into<String>, commit: impl Into<String>) -> Self {
        GraphScope {
            repo: repo.into(),
            commit: Some(commit.into()),
        }
    }
}

/// The tool definition for agents: `(name, description, JSON schema of the arguments)`.
pub fn tool_definition() -> (&'static str, &'static str, serde_json::Value) {
    let schema = schemars::schema_for!(CodegraphArgs);
    (
        TOOL_NAME,
        TOOL_DESCRIPTION.as_str(),
        serde_json::to_value(schema).expect("a JSON schema serializes"),
    )
}

/// Runs one tool call and returns the text shown to the agent. `store` is `None` when no graph backend
/// is configured.
pub async fn execute(
    store: Option<&dyn GraphStore>,
    scope: &GraphScope,
    args: &CodegraphArgs,
) -> String {
    run(store, scope, args).await.to_text()
}

/// Like [`execute`], from the raw JSON arguments of a tool call; malformed arguments are reported to the
/// agent rather than failing the call.
pub async fn execute_json(
    store: Option<&dyn GraphStore>,
    scope: &GraphScope,
    args: &serde_json::Value,
) -> String {
    match serde_json::from_value::<CodegraphArgs>(args.clone()) {
        Ok(args) => execute(store, scope, &args).await,
        Err(e) => format!(
            "Invalid arguments for codegraph: {e}. Expected an object with `operation` \
             (search, callers, callees, implementations, usages, resolve) and optional \
             `name`, `kind`, `file`, `qname`, `depth`, `repo`."
        ),
    }
}

/// Runs one tool call and returns the structured outcome.
pub async fn run(
    store: Option<&dyn GraphStore>,
    scope: &GraphScope,
    args: &CodegraphArgs,
) -> Outcome {
    let Some(store) = store else {
        return Outcome::Error(OpError::Unavailable);
    };
    match query::run(store, scope, args).await {
        Ok(outcome) => outcome,
        Err(error) => Outcome::Error(error),
    }
}
