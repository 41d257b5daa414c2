//! `callers`, `callees` and `usages` across the graphs of a [`super::GraphSet`]: the owning
//! graph's answer plus the edges of the other graphs that name the same qname, labelled.

use std::collections::{BTreeMap, BTreeSet};

use super::args::{CodegraphArgs, Operation};
use super::outcome::*;
use super::query::{self, group_steps, query_error};
use super::reexport::{self, MAX_REEXPORT_LOOKUPS};
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
            super::set::run_on(store, &members[owner].snapshot, op, args).await
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

/// Where a qname of one graph is declared: the member, and the qname there (itself, or what a
/// Python package's re-export of it names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Located {
    pub member: usize,
    pub qname: String,
}

/// Which member declares each of `qnames` (`first` asked first, then the others in order); a
/// qname no member declares, directly or through a Python re-export, is absent.
pub(super) async fn locate(
    store: &dyn GraphStore,
    members: &[Member],
    first: usize,
    qnames: &BTreeSet<String>,
) -> OpResult<BTreeMap<String, Located>> {
    let mut found: BTreeMap<String, Located> = BTreeMap::new();
    let order: Vec<usize> = std::iter::once(first)
        .chain((0..members.len()).filter(|i| *i != first))
        .collect();
    for &i in &order {
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
            found.entry(symbol.qname.clone()).or_insert(Located {
                member: i,
                qname: symbol.qname,
            });
        }
    }
    // Names no graph declares may be a package's re-export in another graph.
    let missing: Vec<&String> = qnames
        .iter()
        .filter(|q| !found.contains_key(*q))
        .take(MAX_REEXPORT_LOOKUPS)
        .collect();
    for q in missing {
        for &i in order.iter().filter(|i| **i != first) {
            if let Some(qname) = reexport::reexported(store, &members[i], q).await? {
                found.insert(q.clone(), Located { member: i, qname });
                break;
            }
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

/// A call step with its strings labelled by the graphs they belong to (`node`: the graph
/// declaring the reached symbol and its qname there; `None` leaves it as it is).
fn labelled(
    step: &CallStep,
    node: Option<(&Member, &str)>,
    via: &Member,
    site: &Member,
    offset: u8,
) -> CallStep {
    CallStep {
        depth: step.depth + offset,
        node: step.node.as_deref().map(|n| match node {
            Some((member, qname)) => member.label(qname),
            None => n.to_owned(),
        }),
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
        .map(|s| labelled(s, node_at(members, &homes, s), home, home, 0))
        .collect();
    let mut foreign: BTreeMap<(usize, String), u8> = BTreeMap::new();
    for s in own {
        if let Some(n) = &s.node
            && let Some(found) = homes.get(n)
            && found.member != owner
            && s.depth < depth
        {
            let level = foreign
                .entry((found.member, found.qname.clone()))
                .or_insert(s.depth);
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
        out.extend(
            more.iter()
                .map(|s| labelled(s, node_at(members, &located, s), there, there, level)),
        );
    }
    Ok(out)
}

/// The graph declaring a step's node and its qname there, if located.
fn node_at<'m>(
    members: &'m [Member],
    located: &'m BTreeMap<String, Located>,
    step: &CallStep,
) -> Option<(&'m Member, &'m str)> {
    let found = located.get(step.node.as_deref()?)?;
    Some((&members[found.member], found.qname.as_str()))
}

/// One node of the callers walk that other graphs are asked about.
struct Probe {
    /// The name other graphs' edges may give it (its qname, or a Python re-export of it).
    name: String,
    /// Its qname in the owner's graph.
    node: String,
    level: u8,
}

/// The owner's callers, then the call sites of the other graphs into the start symbol (also by
/// the names its package re-exports it as) or any caller the owner's walk reached, each walk
/// continued in that graph.
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
        .map(|s| labelled(s, s.node.as_deref().map(|n| (home, n)), home, home, 0))
        .collect();
    let mut frontier: Vec<Probe> = std::iter::once(qname.to_owned())
        .chain(reexport::aliases(store, home, qname).await?)
        .map(|name| Probe {
            name,
            node: qname.to_owned(),
            level: 0,
        })
        .collect();
    let mut seen: BTreeSet<String> = BTreeSet::from([qname.to_owned()]);
    for s in own {
        if let Some(n) = &s.node
            && s.depth < depth
            && seen.insert(n.clone())
        {
            frontier.push(Probe {
                name: n.clone(),
                node: n.clone(),
                level: s.depth,
            });
        }
    }
    frontier.truncate(MAX_LINKED_NODES);
    for (i, there) in members.iter().enumerate() {
        if i == owner {
            continue;
        }
        let mut callers: BTreeMap<String, u8> = BTreeMap::new();
        for probe in &frontier {
            let edges = store
                .edges(
                    &there.snapshot,
                    &probe.name,
                    Direction::Incoming,
                    &[EdgeKind::Calls],
                )
                .await
                .map_err(query_error(&there.snapshot))?;
            for e in edges {
                out.push(CallStep {
                    depth: probe.level + 1,
                    node: Some(there.label(&e.from)),
                    via: home.label(&probe.node),
                    to_name: e.to_name,
                    file: there.label(&e.file),
                    line: e.line,
                    confidence: e.confidence,
                });
                let reached = callers.entry(e.from).or_insert(probe.level + 1);
                *reached = (*reached).min(probe.level + 1);
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
            out.extend(more.iter().map(|s| {
                labelled(
                    s,
                    s.node.as_deref().map(|n| (there, n)),
                    there,
                    there,
                    level,
                )
            }));
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
    let aliases = reexport::aliases(store, home, qname).await?;
    let order = std::iter::once(owner).chain((0..members.len()).filter(|i| *i != owner));
    let mut usages: Vec<Usage> = Vec::new();
    for i in order {
        let member = &members[i];
        let err = query_error(&member.snapshot);
        // Other graphs may name it as its package re-exports it.
        let names =
            std::iter::once(qname).chain(aliases.iter().map(String::as_str).filter(|_| i != owner));
        let mut edges = Vec::new();
        for name in names {
            edges.extend(
                store
                    .edges(
                        &member.snapshot,
                        name,
                        Direction::Incoming,
                        &[
                            EdgeKind::Uses,
                            EdgeKind::Calls,
                            EdgeKind::Imports,
                            EdgeKind::Inherits,
                        ],
                    )
                    .await
                    .map_err(&err)?,
            );
        }
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
