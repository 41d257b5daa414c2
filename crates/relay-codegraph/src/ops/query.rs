//! The operations themselves: argument checks, store queries, grouping.

use std::collections::{BTreeMap, BTreeSet};

use super::GraphScope;
use super::args::{CodegraphArgs, Operation};
use super::outcome::*;
use super::suggest::closest_qnames;
use crate::model::{Confidence, EdgeKind, Symbol, SymbolKind};
use crate::store::{
    CallStep, Direction, GraphStore, MatchField, Snapshot, StoreError, SymbolQuery, clamp_depth,
};

type OpResult<T> = Result<T, OpError>;

pub(super) fn store_error(error: StoreError) -> OpError {
    let message = relay_core::error::cause_chain(&error);
    tracing::warn!(error.message = %error, error.cause_chain = %message, "codegraph store query failed");
    OpError::Store { message }
}

/// An argument that is not blank, trimmed.
pub(super) fn non_empty(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

fn required<'a>(value: &'a Option<String>, parameter: &str, op: Operation) -> OpResult<&'a str> {
    non_empty(value).ok_or_else(|| OpError::MissingParameter {
        parameter: parameter.to_owned(),
        operation: op.as_str().to_owned(),
    })
}

/// Parses the `kind` filter. `module` also matches Go packages (both are "a unit of code").
fn parse_kinds(kind: Option<&str>) -> OpResult<Vec<SymbolKind>> {
    let Some(kind) = kind else {
        return Ok(Vec::new());
    };
    let lower = kind.to_ascii_lowercase();
    match SymbolKind::parse(&lower) {
        Some(SymbolKind::Module) => Ok(vec![SymbolKind::Module, SymbolKind::Package]),
        Some(k) => Ok(vec![k]),
        None => Err(OpError::InvalidKind {
            kind: kind.to_owned(),
        }),
    }
}

/// Runs one tool call on the graph `scope` names (what [`super::run`] answers); the set
/// operations (`set.rs`, `across.rs`) run the same steps on each graph of a set.
pub(super) async fn run(
    store: &dyn GraphStore,
    scope: &GraphScope,
    args: &CodegraphArgs,
) -> OpResult<Outcome> {
    let op = check_args(args)?;
    let snapshot = resolve_scope(store, scope).await?;
    match op {
        Operation::Search => search(store, &snapshot, args).await,
        Operation::Callers => calls(store, &snapshot, args, Direction::Incoming).await,
        Operation::Callees => calls(store, &snapshot, args, Direction::Outgoing).await,
        Operation::Implementations => implementations(store, &snapshot, args).await,
        Operation::Usages => usages(store, &snapshot, args).await,
        Operation::Resolve => resolve(store, &snapshot, args).await,
    }
}

/// The stored snapshot a scope names: its commit, or the latest indexed one.
pub(super) async fn resolve_scope(
    store: &dyn GraphStore,
    scope: &GraphScope,
) -> OpResult<Snapshot> {
    let not_indexed = || OpError::NotIndexed {
        repo: scope.repo.clone(),
        commit: scope.commit.clone(),
    };
    match &scope.commit {
        Some(commit) => Ok(Snapshot::new(scope.repo.clone(), commit.clone())),
        None => store
            .latest_commit(&scope.repo)
            .await
            .map_err(store_error)?
            .map(|commit| Snapshot::new(scope.repo.clone(), commit))
            .ok_or_else(not_indexed),
    }
}

/// Store errors on a missing snapshot become `NotIndexed`.
pub(super) fn query_error(snapshot: &Snapshot) -> impl Fn(StoreError) -> OpError + '_ {
    move |error| match error {
        StoreError::SnapshotNotFound { .. } => OpError::NotIndexed {
            repo: snapshot.repo.clone(),
            commit: Some(snapshot.commit.clone()),
        },
        other => store_error(other),
    }
}

/// A name with `.` or `/` is matched against the end of qnames; anything else against names.
pub(super) fn name_query(name: &str, limit: usize) -> SymbolQuery {
    if name.contains('.') || name.contains('/') {
        let pattern = if name.starts_with('*') {
            name.to_owned()
        } else {
            format!("*{name}")
        };
        SymbolQuery {
            field: MatchField::Qname,
            ..SymbolQuery::qname(pattern, limit)
        }
    } else {
        SymbolQuery::name(name, limit)
    }
}

/// `search`: the symbols matching `name`, at most [`MAX_SEARCH_RESULTS`] shown.
pub(super) async fn search(
    store: &dyn GraphStore,
    snap: &Snapshot,
    args: &CodegraphArgs,
) -> OpResult<Outcome> {
    let name = required(&args.name, "name", Operation::Search)?;
    let kind = non_empty(&args.kind);
    let file = non_empty(&args.file);
    let query = SymbolQuery {
        kinds: parse_kinds(kind)?,
        file: file.map(str::to_owned),
        ..name_query(name, MAX_SEARCH_RESULTS)
    };
    let page = store
        .search(snap, &query)
        .await
        .map_err(query_error(snap))?;
    Ok(Outcome::Search(SearchOutcome {
        query: name.to_owned(),
        kind: kind.map(str::to_ascii_lowercase),
        file: file.map(str::to_owned),
        total: page.total,
        symbols: page.symbols,
    }))
}

pub(super) async fn resolve(
    store: &dyn GraphStore,
    snap: &Snapshot,
    args: &CodegraphArgs,
) -> OpResult<Outcome> {
    let name = non_empty(&args.name)
        .or_else(|| non_empty(&args.qname))
        .unwrap_or_default();
    let page = store
        .search(snap, &name_query(name, MAX_RESOLVE_RESULTS))
        .await
        .map_err(query_error(snap))?;
    Ok(Outcome::Resolve(ResolveOutcome {
        name: name.to_owned(),
        total: page.total,
        candidates: page.symbols,
    }))
}

/// Looks a qname up; `Ok(None)` when it is not a symbol of the graph.
pub(super) async fn lookup(
    store: &dyn GraphStore,
    snap: &Snapshot,
    qname: &str,
) -> OpResult<Option<Symbol>> {
    let found = store
        .symbols(snap, &[qname.to_owned()])
        .await
        .map_err(query_error(snap))?;
    Ok(found.into_iter().next())
}

/// The "not found" answer for `qname`, with the closest stored qnames as suggestions.
pub(super) async fn unknown_symbol(
    store: &dyn GraphStore,
    snap: &Snapshot,
    qname: &str,
) -> OpError {
    match closest_qnames(store, snap, qname, 3).await {
        Ok(suggestions) => OpError::UnknownSymbol {
            qname: qname.to_owned(),
            suggestions,
        },
        Err(e) => query_error(snap)(e),
    }
}

pub(super) async fn calls(
    store: &dyn GraphStore,
    snap: &Snapshot,
    args: &CodegraphArgs,
    direction: Direction,
) -> OpResult<Outcome> {
    let op = match direction {
        Direction::Incoming => Operation::Callers,
        Direction::Outgoing => Operation::Callees,
    };
    let qname = required(&args.qname, "qname", op)?;
    let depth = clamp_depth(args.depth.unwrap_or(1));
    let symbol = lookup(store, snap, qname).await?;
    let steps = store
        .traverse_calls(snap, qname, direction, depth)
        .await
        .map_err(query_error(snap))?;
    if symbol.is_none() && steps.is_empty() {
        return Err(unknown_symbol(store, snap, qname).await);
    }
    let mut results = group_steps(&steps, direction);
    let total = results.len();
    // Only the results shown need their symbols (a depth-3 walk can reach thousands).
    results.truncate(MAX_CALL_RESULTS);
    let known: Vec<String> = results.iter().filter_map(|r| r.qname.clone()).collect();
    let symbols = store
        .symbols(snap, &known)
        .await
        .map_err(query_error(snap))?;
    let by_qname: BTreeMap<&str, &Symbol> = symbols
        .iter()
        .rev()
        .map(|s| (s.qname.as_str(), s))
        .collect();
    for r in &mut results {
        if let Some(s) = r.qname.as_deref().and_then(|q| by_qname.get(q)) {
            r.name = s.name.clone();
            r.kind = Some(s.kind);
            r.file = Some(s.file.clone());
            r.line = Some(s.line);
            r.signature = s.signature.clone();
        }
    }
    Ok(Outcome::Calls(CallsOutcome {
        operation: op.as_str().to_owned(),
        qname: qname.to_owned(),
        depth,
        indexed: symbol.is_some(),
        total,
        results,
    }))
}

/// How sure an edge is, strongest first.
pub(super) fn rank(c: Confidence) -> u8 {
    match c {
        Confidence::Exact => 0,
        Confidence::Inferred => 1,
        Confidence::Dynamic => 2,
    }
}

/// The strongest of two confidences (exact > inferred > dynamic).
fn strongest(a: Confidence, b: Confidence) -> Confidence {
    if rank(a) <= rank(b) { a } else { b }
}

/// One result per reached symbol (or per unresolved name), in walk order.
pub(super) fn group_steps(steps: &[CallStep], direction: Direction) -> Vec<CallResult> {
    let mut order: Vec<(Option<String>, String)> = Vec::new();
    let mut grouped: BTreeMap<(Option<String>, String), CallResult> = BTreeMap::new();
    for step in steps {
        let key = match &step.node {
            Some(q) => (Some(q.clone()), String::new()),
            None => (None, step.to_name.clone()),
        };
        let entry = grouped.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            CallResult {
                qname: step.node.clone(),
                name: step
                    .node
                    .as_deref()
                    .map(short_name)
                    .unwrap_or(&step.to_name)
                    .to_owned(),
                kind: None,
                file: None,
                line: None,
                signature: None,
                depth: step.depth,
                confidence: step.confidence,
                dispatch: None,
                sites: Vec::new(),
                via: Vec::new(),
            }
        });
        entry.confidence = strongest(entry.confidence, step.confidence);
        // The edge's target: the callee reached, or (walking to callers) the symbol called.
        let target = match direction {
            Direction::Outgoing => step.node.as_deref(),
            Direction::Incoming => Some(step.via.as_str()),
        };
        entry.dispatch = match (entry.confidence, target) {
            (Confidence::Dynamic, Some(target)) => {
                // An interface call is written with the method's own name (`x.Write`).
                let written = step.to_name.rsplit('.').next().unwrap_or(&step.to_name);
                let kind = if written == short_name(target) {
                    Dispatch::Interface
                } else {
                    Dispatch::FunctionValue
                };
                Some(entry.dispatch.unwrap_or(kind))
            }
            _ => None,
        };
        let site = Site {
            file: step.file.clone(),
            line: step.line,
        };
        if !entry.sites.contains(&site) {
            entry.sites.push(site);
        }
        if !entry.via.contains(&step.via) {
            entry.via.push(step.via.clone());
        }
    }
    // Resolved results first within a depth, unresolved names after them.
    let mut results: Vec<CallResult> = order
        .into_iter()
        .filter_map(|k| grouped.remove(&k))
        .collect();
    // Static calls before dynamic ones, each in walk order.
    results.sort_by_key(|r| (r.depth, rank(r.confidence), r.qname.is_none()));
    results
}

/// The last segment of a qname (`a/b.T.M` → `M`).
pub(super) fn short_name(qname: &str) -> &str {
    let tail = qname.rsplit('/').next().unwrap_or(qname);
    tail.rsplit('.').next().unwrap_or(tail)
}

pub(super) async fn implementations(
    store: &dyn GraphStore,
    snap: &Snapshot,
    args: &CodegraphArgs,
) -> OpResult<Outcome> {
    let qname = required(&args.qname, "qname", Operation::Implementations)?;
    let Some(symbol) = lookup(store, snap, qname).await? else {
        return Err(unknown_symbol(store, snap, qname).await);
    };
    let err = query_error(snap);
    let mut sections = Vec::new();
    if symbol.kind == SymbolKind::Method {
        // A method: the matching methods of implementing types (interface method) or the interface
        // methods it implements (concrete method).
        if let Some(parent) = lookup_parent(store, snap, &symbol).await? {
            let (title, dir) = if parent.kind == SymbolKind::Interface {
                ("Implemented by", Direction::Incoming)
            } else {
                ("Implements", Direction::Outgoing)
            };
            let related = related(
                store,
                snap,
                &parent.qname,
                dir,
                &[EdgeKind::Implements, EdgeKind::Inherits],
            )
            .await?;
            let mut entries = Vec::new();
            for r in related {
                for m in store.children(snap, &r.qname).await.map_err(&err)? {
                    if m.name == symbol.name && m.kind == SymbolKind::Method {
                        entries.push(RelatedSymbol {
                            qname: m.qname.clone(),
                            name: m.name.clone(),
                            kind: Some(m.kind),
                            file: Some(m.file.clone()),
                            line: Some(m.line),
                            signature: m.signature.clone(),
                            confidence: r.confidence,
                            site: r.site.clone(),
                            methods: Vec::new(),
                        });
                    }
                }
            }
            sections.push(Section {
                title: title.to_owned(),
                entries,
            });
        }
    } else {
        let implemented_by = related(
            store,
            snap,
            qname,
            Direction::Incoming,
            &[EdgeKind::Implements],
        )
        .await?;
        let implements = related(
            store,
            snap,
            qname,
            Direction::Outgoing,
            &[EdgeKind::Implements],
        )
        .await?;
        let subclasses = related(
            store,
            snap,
            qname,
            Direction::Incoming,
            &[EdgeKind::Inherits],
        )
        .await?;
        let bases = related(
            store,
            snap,
            qname,
            Direction::Outgoing,
            &[EdgeKind::Inherits],
        )
        .await?;
        if symbol.kind == SymbolKind::Interface || !implemented_by.is_empty() {
            let methods = store.children(snap, qname).await.map_err(&err)?;
            let wanted: BTreeSet<&str> = methods
                .iter()
                .filter(|m| m.kind == SymbolKind::Method)
                .map(|m| m.name.as_str())
                .collect();
            let mut entries = Vec::new();
            for mut r in implemented_by {
                r.methods = store
                    .children(snap, &r.qname)
                    .await
                    .map_err(&err)?
                    .into_iter()
                    .filter(|m| m.kind == SymbolKind::Method && wanted.contains(m.name.as_str()))
                    .collect();
                entries.push(r);
            }
            sections.push(Section {
                title: "Implemented by".to_owned(),
                entries,
            });
        }
        if matches!(symbol.kind, SymbolKind::Struct | SymbolKind::Type) || !implements.is_empty() {
            sections.push(Section {
                title: "Implements".to_owned(),
                entries: implements,
            });
        }
        if symbol.kind == SymbolKind::Class || !subclasses.is_empty() || !bases.is_empty() {
            sections.push(Section {
                title: "Subclasses".to_owned(),
                entries: subclasses,
            });
            sections.push(Section {
                title: "Base classes".to_owned(),
                entries: bases,
            });
        }
    }
    Ok(Outcome::Implementations(ImplementationsOutcome {
        qname: qname.to_owned(),
        kind: symbol.kind,
        sections,
    }))
}

pub(super) async fn lookup_parent(
    store: &dyn GraphStore,
    snap: &Snapshot,
    symbol: &Symbol,
) -> OpResult<Option<Symbol>> {
    match &symbol.parent {
        Some(parent) => lookup(store, snap, parent).await,
        None => Ok(None),
    }
}

/// The other ends of `qname`'s edges of `kinds` in `direction`, with their symbols.
pub(super) async fn related(
    store: &dyn GraphStore,
    snap: &Snapshot,
    qname: &str,
    direction: Direction,
    kinds: &[EdgeKind],
) -> OpResult<Vec<RelatedSymbol>> {
    let err = query_error(snap);
    let edges = store
        .edges(snap, qname, direction, kinds)
        .await
        .map_err(&err)?;
    let others: Vec<String> = edges
        .iter()
        .filter_map(|e| match direction {
            Direction::Incoming => Some(e.from.clone()),
            Direction::Outgoing => e.to.clone(),
        })
        .collect();
    let symbols = store.symbols(snap, &others).await.map_err(&err)?;
    let by_qname: BTreeMap<&str, &Symbol> = symbols
        .iter()
        .rev()
        .map(|s| (s.qname.as_str(), s))
        .collect();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for e in &edges {
        let other = match direction {
            Direction::Incoming => e.from.clone(),
            Direction::Outgoing => e.to.clone().unwrap_or_else(|| e.to_name.clone()),
        };
        if !seen.insert(other.clone()) {
            continue;
        }
        let s = by_qname.get(other.as_str());
        out.push(RelatedSymbol {
            name: s
                .map(|s| s.name.clone())
                .unwrap_or_else(|| short_name(&other).to_owned()),
            kind: s.map(|s| s.kind),
            file: s.map(|s| s.file.clone()),
            line: s.map(|s| s.line),
            signature: s.and_then(|s| s.signature.clone()),
            confidence: e.confidence,
            site: Site {
                file: e.file.clone(),
                line: e.line,
            },
            methods: Vec::new(),
            qname: other,
        });
    }
    Ok(out)
}

pub(super) async fn usages(
    store: &dyn GraphStore,
    snap: &Snapshot,
    args: &CodegraphArgs,
) -> OpResult<Outcome> {
    let qname = required(&args.qname, "qname", Operation::Usages)?;
    let err = query_error(snap);
    let symbol = lookup(store, snap, qname).await?;
    let edges = store
        .edges(
            snap,
            qname,
            Direction::Incoming,
            &[
                EdgeKind::Uses,
                EdgeKind::Calls,
                EdgeKind::Imports,
                EdgeKind::Inherits,
            ],
        )
        .await
        .map_err(&err)?;
    if symbol.is_none() && edges.is_empty() {
        return Err(unknown_symbol(store, snap, qname).await);
    }
    let users: Vec<String> = edges.iter().map(|e| e.from.clone()).collect();
    let symbols = store.symbols(snap, &users).await.map_err(&err)?;
    let kinds: BTreeMap<&str, SymbolKind> = symbols
        .iter()
        .rev()
        .map(|s| (s.qname.as_str(), s.kind))
        .collect();
    let mut usages: Vec<Usage> = edges
        .iter()
        .map(|e| Usage {
            file: e.file.clone(),
            line: e.line,
            relation: e.kind,
            confidence: e.confidence,
            user: e.from.clone(),
            user_kind: kinds.get(e.from.as_str()).copied(),
        })
        .collect();
    usages.dedup();
    let total = usages.len();
    usages.truncate(MAX_USAGES);
    Ok(Outcome::Usages(UsagesOutcome {
        qname: qname.to_owned(),
        kind: symbol.map(|s| s.kind),
        total,
        usages,
    }))
}

/// The operation, after checking its arguments: mistakes are reported before the store is
/// touched, so even without a graph (also by [`super::execute_set`]).
pub(super) fn check_args(args: &CodegraphArgs) -> OpResult<Operation> {
    let op = Operation::parse(&args.operation).ok_or_else(|| OpError::UnknownOperation {
        operation: args.operation.clone(),
    })?;
    match op {
        Operation::Search => {
            required(&args.name, "name", op)?;
            parse_kinds(non_empty(&args.kind))?;
        }
        Operation::Resolve => {
            if non_empty(&args.name).is_none() {
                required(&args.qname, "name", op)?;
            }
        }
        _ => {
            required(&args.qname, "qname", op)?;
        }
    }
    Ok(op)
}
