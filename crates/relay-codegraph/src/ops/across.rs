//! `callers`, `callees` and `usages` across the graphs of a [`super::GraphSet`]: the owning
//! graph's answer plus the edges of the other graphs that name the same qname, labelled.

use std::collections::{BTreeMap, BTreeSet};

use super::args::{CodegraphArgs, Operation};
use super::outcome::*;
use super::query::{self, group_steps, query_error};
use super::set::Member;
use crate::model::{EdgeKind, Symbol, SymbolKind};
use crate::store::{CallStep, Direction, GraphStore, clamp_depth, sort_steps};

type OpResult<T> = Result<T, OpError>;

/// At most this many symbols of one walk are followed into another graph (each costs a query
/// per graph), so a wide walk stays bounded.
const MAX_LINKED_NODES: usize = MAX_CALL_RESULTS;

/// Runs a qname operation with `members[owner]` as the graph the qname belongs to.
pub(super) async fn run(
    store: &dyn GraphStore,
    members: &[Member],
    owner: usize,
    op: Operation,
    args: &CodegraphArgs,
) -> OpResult<Outcome> {
    match op {
        Operation::Callers => calls(store, members, owner, args, Direction::Incoming).await,
        Operation::Callees => calls(store, members, owner, args, Direction::Outgoing).await,
        Operation::Usages => usages(store, members, owner, args).await,
        Operation::Implementations => {
            super::across_impls::implementations(store, members, owner, args).await
        }
        Operation::Search | Operation::Resolve => {
            query::run_on(store, &members[owner].snapshot, op, args).await
        }
    }
}

/// The "not found" answer for a qname of `member`'s graph, its suggestions labelled.
pub(super) async fn unknown_symbol(
    store: &dyn GraphStore,
    member: &Member,
    qname: &str,
) -> OpError {
    match query::unknown_symbol(store, &member.snapshot, qname).await {
        OpError::UnknownSymbol { qname, suggestions } => OpError::UnknownSymbol {
            qname: member.label(&qname),
            suggestions: suggestions.iter().map(|s| member.label(s)).collect(),
        },
        other => other,
    }
}

/// Which member declares each of `qnames` (`first` asked first, then the others in order); a
/// qname no member declares is absent.
pub(super) async fn locate(
    store: &dyn GraphStore,
    members: &[Member],
    first: usize,
    qnames: &BTreeSet<String>,
) -> OpResult<BTreeMap<String, usize>> {
    let mut found = BTreeMap::new();
    let order = std::iter::once(first).chain((0..members.len()).filter(|i| *i != first));
    for i in order {
        let missing: Vec<String> = qnames
            .iter()
            .filter(|q| !found.contains_key(*q))
            .cloned()
            .collect();
        if missing.is_empty() {
            break;
        }
        let snapshot = &members[i].snapshot;
        for symbol in store
            .symbols(snapshot, &missing)
            .await
            .map_err(query_error(snapshot))?
        {
            found.entry(symbol.qname).or_insert(i);
        }
    }
    Ok(found)
}

/// The member a labelled qname belongs to and the qname without its label (bare: the primary).
pub(super) fn unlabel<'q>(members: &[Member], qname: &'q str) -> (usize, &'q str) {
    members
        .iter()
        .enumerate()
        .skip(1)
        .find_map(|(i, m)| qname.strip_prefix(m.prefix.as_str()).map(|rest| (i, rest)))
        .unwrap_or((0, qname))
}

/// The symbols of labelled qnames, by labelled qname, with labelled paths.
pub(super) async fn labelled_symbols(
    store: &dyn GraphStore,
    members: &[Member],
    qnames: &[String],
) -> OpResult<BTreeMap<String, Symbol>> {
    let mut per_member: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for q in qnames {
        let (i, raw) = unlabel(members, q);
        per_member.entry(i).or_default().push(raw.to_owned());
    }
    let mut out = BTreeMap::new();
    for (i, raw) in per_member {
        let member = &members[i];
        let symbols = store
            .symbols(&member.snapshot, &raw)
            .await
            .map_err(query_error(&member.snapshot))?;
        // The first symbol of a qname declared twice, as for one graph.
        for s in symbols.iter().rev() {
            out.insert(member.label(&s.qname), member.label_symbol(s));
        }
    }
    Ok(out)
}

/// A call step with its strings labelled by the graphs they belong to.
fn labelled(
    step: &CallStep,
    node: Option<&Member>,
    via: &Member,
    site: &Member,
    offset: u8,
) -> CallStep {
    CallStep {
        depth: step.depth + offset,
        node: step
            .node
            .as_deref()
            .map(|n| node.map_or_else(|| n.to_owned(), |m| m.label(n))),
        via: via.label(&step.via),
        to_name: step.to_name.clone(),
        file: site.label(&step.file),
        line: step.line,
        confidence: step.confidence,
    }
}

async fn calls(
    store: &dyn GraphStore,
    members: &[Member],
    owner: usize,
    args: &CodegraphArgs,
    direction: Direction,
) -> OpResult<Outcome> {
    let op = match direction {
        Direction::Incoming => Operation::Callers,
        Direction::Outgoing => Operation::Callees,
    };
    let qname = args.qname.as_deref().unwrap_or_default();
    let depth = clamp_depth(args.depth.unwrap_or(1));
    let home = &members[owner];
    let err = query_error(&home.snapshot);
    let symbol = query::lookup(store, &home.snapshot, qname).await?;
    let own = store
        .traverse_calls(&home.snapshot, qname, direction, depth)
        .await
        .map_err(&err)?;
    let mut steps = match direction {
        Direction::Outgoing => callees_across(store, members, owner, &own, depth).await?,
        Direction::Incoming => callers_across(store, members, owner, qname, &own, depth).await?,
    };
    let start = home.label(qname);
    // As in one graph's walk: each symbol at the level it is first reached, never the start.
    let mut first: BTreeMap<Option<String>, u8> = BTreeMap::new();
    for s in &steps {
        let level = first.entry(s.node.clone()).or_insert(s.depth);
        *level = (*level).min(s.depth);
    }
    steps.retain(|s| {
        s.node.as_deref() != Some(start.as_str())
            && (s.node.is_none() || first.get(&s.node) == Some(&s.depth))
    });
    sort_steps(&mut steps);
    steps.dedup();
    if symbol.is_none() && steps.is_empty() {
        return Err(unknown_symbol(store, home, qname).await);
    }
    let mut results = group_steps(&steps, direction);
    let total = results.len();
    results.truncate(MAX_CALL_RESULTS);
    let known: Vec<String> = results.iter().filter_map(|r| r.qname.clone()).collect();
    let symbols = labelled_symbols(store, members, &known).await?;
    for r in &mut results {
        if let Some(s) = r.qname.as_deref().and_then(|q| symbols.get(q)) {
            r.name = s.name.clone();
            r.kind = Some(s.kind);
            r.file = Some(s.file.clone());
            r.line = Some(s.line);
            r.signature = s.signature.clone();
        }
    }
    Ok(Outcome::Calls(CallsOutcome {
        operation: op.as_str().to_owned(),
        qname: start,
        depth,
        indexed: symbol.is_some(),
        total,
        results,
    }))
}

/// The owner's callees, each labelled with the graph that declares it, and the walk continued
/// in that graph from each callee another graph declares.
async fn callees_across(
    store: &dyn GraphStore,
    members: &[Member],
    owner: usize,
    own: &[CallStep],
    depth: u8,
) -> OpResult<Vec<CallStep>> {
    let home = &members[owner];
    let nodes: BTreeSet<String> = own.iter().filter_map(|s| s.node.clone()).collect();
    let homes = locate(store, members, owner, &nodes).await?;
    let mut out: Vec<CallStep> = own
        .iter()
        .map(|s| {
            let node = s
                .node
                .as_ref()
                .and_then(|n| homes.get(n))
                .map(|i| &members[*i]);
            labelled(s, node, home, home, 0)
        })
        .collect();
    let mut foreign: BTreeMap<(usize, String), u8> = BTreeMap::new();
    for s in own {
        if let Some(n) = &s.node
            && let Some(&i) = homes.get(n)
            && i != owner
            && s.depth < depth
        {
            let level = foreign.entry((i, n.clone())).or_insert(s.depth);
            *level = (*level).min(s.depth);
        }
    }
    for ((i, node), level) in foreign.into_iter().take(MAX_LINKED_NODES) {
        let there = &members[i];
        let more = store
            .traverse_calls(&there.snapshot, &node, Direction::Outgoing, depth - level)
            .await
            .map_err(query_error(&there.snapshot))?;
        let reached: BTreeSet<String> = more.iter().filter_map(|s| s.node.clone()).collect();
        let located = locate(store, members, i, &reached).await?;
        out.extend(more.iter().map(|s| {
            let node = s
                .node
                .as_ref()
                .and_then(|n| located.get(n))
                .map(|j| &members[*j]);
            labelled(s, node, there, there, level)
        }));
    }
    Ok(out)
}

/// The owner's callers, then the call sites of the other graphs into the start symbol or any
/// caller the owner's walk reached, each walk continued in that graph.
async fn callers_across(
    store: &dyn GraphStore,
    members: &[Member],
    owner: usize,
    qname: &str,
    own: &[CallStep],
    depth: u8,
) -> OpResult<Vec<CallStep>> {
    let home = &members[owner];
    let mut out: Vec<CallStep> = own
        .iter()
        .map(|s| labelled(s, Some(home), home, home, 0))
        .collect();
    let mut frontier: Vec<(String, u8)> = vec![(qname.to_owned(), 0)];
    let mut seen: BTreeSet<String> = BTreeSet::from([qname.to_owned()]);
    for s in own {
        if let Some(n) = &s.node
            && s.depth < depth
            && seen.insert(n.clone())
        {
            frontier.push((n.clone(), s.depth));
        }
    }
    frontier.truncate(MAX_LINKED_NODES);
    for (i, there) in members.iter().enumerate() {
        if i == owner {
            continue;
        }
        let mut callers: BTreeMap<String, u8> = BTreeMap::new();
        for (node, level) in &frontier {
            let edges = store
                .edges(
                    &there.snapshot,
                    node,
                    Direction::Incoming,
                    &[EdgeKind::Calls],
                )
                .await
                .map_err(query_error(&there.snapshot))?;
            for e in edges {
                out.push(CallStep {
                    depth: level + 1,
                    node: Some(there.label(&e.from)),
                    via: home.label(node),
                    to_name: e.to_name,
                    file: there.label(&e.file),
                    line: e.line,
                    confidence: e.confidence,
                });
                let reached = callers.entry(e.from).or_insert(level + 1);
                *reached = (*reached).min(level + 1);
            }
        }
        for (caller, level) in callers.into_iter().take(MAX_LINKED_NODES) {
            if level >= depth {
                continue;
            }
            let more = store
                .traverse_calls(&there.snapshot, &caller, Direction::Incoming, depth - level)
                .await
                .map_err(query_error(&there.snapshot))?;
            out.extend(
                more.iter()
                    .map(|s| labelled(s, Some(there), there, there, level)),
            );
        }
    }
    Ok(out)
}

async fn usages(
    store: &dyn GraphStore,
    members: &[Member],
    owner: usize,
    args: &CodegraphArgs,
) -> OpResult<Outcome> {
    let qname = args.qname.as_deref().unwrap_or_default();
    let home = &members[owner];
    let symbol = query::lookup(store, &home.snapshot, qname).await?;
    let order = std::iter::once(owner).chain((0..members.len()).filter(|i| *i != owner));
    let mut usages: Vec<Usage> = Vec::new();
    for i in order {
        let member = &members[i];
        let err = query_error(&member.snapshot);
        let edges = store
            .edges(
                &member.snapshot,
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
        let users: Vec<String> = edges.iter().map(|e| e.from.clone()).collect();
        let symbols = store
            .symbols(&member.snapshot, &users)
            .await
            .map_err(&err)?;
        let kinds: BTreeMap<&str, SymbolKind> = symbols
            .iter()
            .rev()
            .map(|s| (s.qname.as_str(), s.kind))
            .collect();
        let mut found: Vec<Usage> = edges
            .iter()
            .map(|e| Usage {
                file: member.label(&e.file),
                line: e.line,
                relation: e.kind,
                confidence: e.confidence,
                user: member.label(&e.from),
                user_kind: kinds.get(e.from.as_str()).copied(),
            })
            .collect();
        found.dedup();
        usages.extend(found);
    }
    if symbol.is_none() && usages.is_empty() {
        return Err(unknown_symbol(store, home, qname).await);
    }
    let total = usages.len();
    usages.truncate(MAX_USAGES);
    Ok(Outcome::Usages(UsagesOutcome {
        qname: home.label(qname),
        kind: symbol.map(|s| s.kind),
        total,
        usages,
    }))
}
