//! The tool over a set of graphs: the repository and its related repositories.
//!
//! Each repository stays its own snapshot; nothing of one is copied into another. The links
//! are made when a question is asked: an edge of one repository whose target is external (a
//! Go import path outside it, a Python module it does not have) names the qname the providing
//! repository gives that symbol (Go qnames start with the module path, after the importing
//! module's `replace` directives; Python qnames with the top-level package), so "who calls
//! it" asks every graph of the set for edges into the qname, and a callee or base class no
//! graph declares is looked up in the others. An incremental update of either side therefore
//! needs nothing from the other.
//!
//! Output: everything of a related repository is written with its label, `acme/sdk:` before
//! paths (`acme/sdk:client/client.go:15`) and qnames (`acme/sdk:example.com/sdk/client.New`);
//! the primary's keep bare paths and qnames. A qname argument may carry the label (the form
//! results show); a bare qname is looked up in the primary first, then in each related graph.

use super::args::{CodegraphArgs, Operation};
use super::outcome::*;
use super::query::{self, check_args, non_empty, resolve_scope};
use super::{GraphScope, across};
use crate::model::Symbol;
use crate::store::{Direction, GraphStore, Snapshot};

/// The graphs one tool call may read: the repository and the repositories admitted as
/// related to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphSet {
    pub primary: GraphScope,
    pub related: Vec<RelatedGraph>,
}

impl GraphSet {
    /// The repository alone (what [`super::execute`] answers from).
    pub fn single(primary: GraphScope) -> GraphSet {
        GraphSet {
            primary,
            related: Vec::new(),
        }
    }
}

/// A related repository: how the agent names it (`acme/sdk`, the `repo` argument and the
/// prefix of its paths and qnames in results) and its stored graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelatedGraph {
    pub label: String,
    pub scope: GraphScope,
}

/// One graph of a set, resolved to a stored snapshot.
#[derive(Debug, Clone)]
pub(super) struct Member {
    /// Its place in the set: 0 for the primary, `i + 1` for `related[i]`.
    pub at: usize,
    /// `acme/sdk:`, empty for the primary (whose paths and qnames stay bare).
    pub prefix: String,
    pub snapshot: Snapshot,
}

impl Member {
    pub(super) fn label(&self, text: &str) -> String {
        format!("{}{text}", self.prefix)
    }

    pub(super) fn label_symbol(&self, symbol: &Symbol) -> Symbol {
        Symbol {
            qname: self.label(&symbol.qname),
            file: self.label(&symbol.file),
            parent: symbol.parent.as_deref().map(|p| self.label(p)),
            ..symbol.clone()
        }
    }
}

type OpResult<T> = Result<T, OpError>;

/// At most this many characters of a `repo` argument that names no related repository are
/// echoed in the refusal.
const MAX_ECHOED_REPO_CHARS: usize = 200;

/// Runs one tool call over a set of graphs (see the module docs) and returns the text shown to
/// the agent. With no related graphs it answers exactly as [`super::execute`].
pub async fn execute_set(
    store: Option<&dyn GraphStore>,
    set: &GraphSet,
    args: &CodegraphArgs,
) -> String {
    run_set(store, set, args).await.to_text()
}

/// Like [`execute_set`], from the raw JSON arguments of a tool call (malformed arguments are
/// explained to the agent, as by [`super::execute_json`]).
pub async fn execute_set_json(
    store: Option<&dyn GraphStore>,
    set: &GraphSet,
    args: &serde_json::Value,
) -> String {
    match serde_json::from_value::<CodegraphArgs>(args.clone()) {
        Ok(args) => execute_set(store, set, &args).await,
        Err(_) => super::execute_json(store, &set.primary, args).await,
    }
}

/// The tool description for a set: [`super::TOOL_DESCRIPTION`], plus, when there are related
/// repositories, the labels the `repo` argument accepts and how their results are written.
pub fn tool_description(set: &GraphSet) -> String {
    let mut out = super::TOOL_DESCRIPTION.clone();
    if set.related.is_empty() {
        return out;
    }
    let labels: Vec<&str> = set.related.iter().map(|r| r.label.as_str()).collect();
    out.push_str(&format!(
        " Related repositories: {}. Their code is indexed too. Without `repo` an operation uses this issue's \
repository, and callers, callees, implementations and usages follow calls and types into and out \
of the related ones; search lists this repository's matches first, then theirs. Pass `repo` with \
one of their names to search only there. A result from a related repository is written with its \
name: `{first}:path/file.go:12`, `{first}:qname`; pass such a qname as it is written.",
        labels.join(", "),
        first = labels[0],
    ));
    out
}

/// Like [`execute_set`], returning the structured outcome.
pub async fn run_set(
    store: Option<&dyn GraphStore>,
    set: &GraphSet,
    args: &CodegraphArgs,
) -> Outcome {
    let Some(store) = store else {
        return Outcome::Error(OpError::Unavailable);
    };
    match run_checked(store, set, args).await {
        Ok(outcome) => outcome,
        Err(error) => Outcome::Error(error),
    }
}

/// Which graph the `repo` argument selects: `None` for the default (all, primary first).
fn selected(set: &GraphSet, repo: Option<&str>) -> OpResult<Option<usize>> {
    let Some(repo) = repo else {
        return Ok(None);
    };
    let primary = &set.primary.repo;
    // The primary is named by its store key (`github/acme/app`) or its end (`acme/app`).
    if repo == primary || primary.ends_with(&format!("/{repo}")) {
        return Ok(Some(0));
    }
    match set
        .related
        .iter()
        .position(|r| r.label == repo || r.scope.repo == repo)
    {
        Some(i) => Ok(Some(i + 1)),
        None => Err(OpError::NotRelated {
            // The model's text is echoed back, so it is bounded.
            repo: repo.chars().take(MAX_ECHOED_REPO_CHARS).collect(),
            related: set.related.iter().map(|r| r.label.clone()).collect(),
        }),
    }
}

async fn run_checked(
    store: &dyn GraphStore,
    set: &GraphSet,
    args: &CodegraphArgs,
) -> OpResult<Outcome> {
    let op = check_args(args)?;
    let selected = selected(set, non_empty(&args.repo))?;
    if set.related.is_empty() {
        // One graph: the single-repository operations, unchanged.
        return query::run(store, &set.primary, args).await;
    }
    let members = members(store, set, selected).await?;
    match op {
        Operation::Search | Operation::Resolve => {
            let chosen: Vec<&Member> = members
                .iter()
                .filter(|m| selected.is_none_or(|at| m.at == at))
                .collect();
            names(store, &chosen, op, args).await
        }
        _ => {
            let qname = non_empty(&args.qname).unwrap_or_default();
            let (owner, qname) = owner_of(store, &members, selected, qname).await?;
            let args = CodegraphArgs {
                qname: Some(qname),
                ..args.clone()
            };
            across::run(store, &members, owner, op, &args).await
        }
    }
}

/// The snapshots of the set, the primary first. A related repository that is not indexed is
/// left out, unless `repo` selects it.
async fn members(
    store: &dyn GraphStore,
    set: &GraphSet,
    selected: Option<usize>,
) -> OpResult<Vec<Member>> {
    let mut out = vec![Member {
        at: 0,
        prefix: String::new(),
        snapshot: resolve_scope(store, &set.primary).await?,
    }];
    for (i, related) in set.related.iter().enumerate() {
        let at = i + 1;
        match resolve_scope(store, &related.scope).await {
            Ok(snapshot) => out.push(Member {
                at,
                prefix: format!("{}:", related.label),
                snapshot,
            }),
            Err(error) if selected == Some(at) => return Err(error),
            Err(error) => {
                tracing::debug!(codegraph.related = %related.label, error = ?error, "related repository not queried");
            }
        }
    }
    Ok(out)
}

/// The graph a qname argument belongs to, and the qname without its label: the label it
/// carries, the selected repository, else the first graph that declares it (the primary when
/// none does).
async fn owner_of(
    store: &dyn GraphStore,
    members: &[Member],
    selected: Option<usize>,
    qname: &str,
) -> OpResult<(usize, String)> {
    for (i, member) in members.iter().enumerate().skip(1) {
        if let Some(rest) = qname.strip_prefix(member.prefix.as_str()) {
            return Ok((i, rest.to_owned()));
        }
    }
    if let Some(at) = selected {
        let i = members.iter().position(|m| m.at == at).unwrap_or(0);
        return Ok((i, qname.to_owned()));
    }
    for (i, member) in members.iter().enumerate() {
        if query::lookup(store, &member.snapshot, qname)
            .await?
            .is_some()
        {
            return Ok((i, qname.to_owned()));
        }
    }
    Ok((0, qname.to_owned()))
}

/// `search` / `resolve` over `members`: each graph's matches in turn (the primary first), the
/// shown ones bounded as for one graph and labelled, the total summed.
async fn names(
    store: &dyn GraphStore,
    members: &[&Member],
    op: Operation,
    args: &CodegraphArgs,
) -> OpResult<Outcome> {
    let mut merged: Option<Outcome> = None;
    for member in members {
        let outcome = run_on(store, &member.snapshot, op, args).await?;
        merged = Some(match (merged, outcome) {
            (None, Outcome::Search(mut o)) => {
                o.symbols = o.symbols.iter().map(|s| member.label_symbol(s)).collect();
                Outcome::Search(o)
            }
            (None, Outcome::Resolve(mut o)) => {
                o.candidates = o
                    .candidates
                    .iter()
                    .map(|s| member.label_symbol(s))
                    .collect();
                Outcome::Resolve(o)
            }
            (Some(Outcome::Search(mut acc)), Outcome::Search(o)) => {
                acc.total += o.total;
                let room = MAX_SEARCH_RESULTS.saturating_sub(acc.symbols.len());
                acc.symbols
                    .extend(o.symbols.iter().take(room).map(|s| member.label_symbol(s)));
                Outcome::Search(acc)
            }
            (Some(Outcome::Resolve(mut acc)), Outcome::Resolve(o)) => {
                acc.total += o.total;
                let room = MAX_RESOLVE_RESULTS.saturating_sub(acc.candidates.len());
                acc.candidates.extend(
                    o.candidates
                        .iter()
                        .take(room)
                        .map(|s| member.label_symbol(s)),
                );
                Outcome::Resolve(acc)
            }
            (_, other) => other,
        });
    }
    Ok(merged.unwrap_or(Outcome::Error(OpError::Unavailable)))
}

/// Runs a checked operation on one snapshot, as [`query::run`] does on its scope's.
pub(super) async fn run_on(
    store: &dyn GraphStore,
    snapshot: &Snapshot,
    op: Operation,
    args: &CodegraphArgs,
) -> OpResult<Outcome> {
    match op {
        Operation::Search => query::search(store, snapshot, args).await,
        Operation::Callers => query::calls(store, snapshot, args, Direction::Incoming).await,
        Operation::Callees => query::calls(store, snapshot, args, Direction::Outgoing).await,
        Operation::Implementations => query::implementations(store, snapshot, args).await,
        Operation::Usages => query::usages(store, snapshot, args).await,
        Operation::Resolve => query::resolve(store, snapshot, args).await,
    }
}
