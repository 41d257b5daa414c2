//! `implementations` across the graphs of a [`super::GraphSet`].
//!
//! Python subclasses are edges: an app class's `inherits` edge names the library's class, so
//! the library's class finds it by asking the app's graph. Go's `implements` edges are only
//! computed inside one repository (the indexer of the app does not know the SDK's method
//! sets), so across repositories they are matched when asked: a Go type of one graph
//! implements a Go interface of another when its methods have every name of the interface's
//! methods (signatures are not compared: the entries are `inferred`).

use std::collections::{BTreeMap, BTreeSet};

use super::across::{locate, unknown_symbol};
use super::args::CodegraphArgs;
use super::outcome::*;
use super::query::{self, query_error};
use super::reexport;
use super::set::Member;
use crate::model::{Confidence, EdgeKind, Language, Symbol, SymbolKind};
use crate::store::{Direction, GraphStore, SymbolQuery};

type OpResult<T> = Result<T, OpError>;

/// At most this many methods of one name are looked at in another graph.
const MAX_METHOD_CANDIDATES: usize = 200;
/// At most this many method names of a type are matched against another graph's interfaces.
const MAX_METHOD_NAMES: usize = 32;

const IMPLEMENTED_BY: &str = "Implemented by";
const IMPLEMENTS: &str = "Implements";
const SUBCLASSES: &str = "Subclasses";

pub(super) async fn implementations(
    store: &dyn GraphStore,
    members: &[Member],
    owner: usize,
    args: &CodegraphArgs,
) -> OpResult<Outcome> {
    let home = &members[owner];
    let qname = args.qname.as_deref().unwrap_or_default();
    let Some(symbol) = query::lookup(store, &home.snapshot, qname).await? else {
        return Err(unknown_symbol(store, home, qname).await);
    };
    let Outcome::Implementations(mut outcome) =
        query::implementations(store, &home.snapshot, args).await?
    else {
        return Err(OpError::Unavailable);
    };
    for section in &mut outcome.sections {
        for entry in &mut section.entries {
            label_own(store, members, owner, entry).await?;
        }
    }
    outcome.qname = home.label(qname);
    let aliases = if symbol.kind == SymbolKind::Class {
        reexport::aliases(store, home, qname).await?
    } else {
        Vec::new()
    };
    let others = (0..members.len()).filter(|i| *i != owner);
    for i in others {
        let there = &members[i];
        let (title, entries) = match symbol.kind {
            SymbolKind::Interface if symbol.language == Language::Go => {
                let wanted = method_names(store, home, &symbol.qname).await?;
                let types = types_covering(store, there, &wanted).await?;
                (IMPLEMENTED_BY, entries(there, types, Confidence::Inferred))
            }
            SymbolKind::Struct | SymbolKind::Type if symbol.language == Language::Go => {
                let have = method_names(store, home, &symbol.qname).await?;
                let interfaces = interfaces_covered(store, there, &have).await?;
                let mut found = entries(there, interfaces, Confidence::Inferred);
                found.iter_mut().for_each(|e| e.methods.clear());
                (IMPLEMENTS, found)
            }
            SymbolKind::Class => {
                // By its qname and by the names its package re-exports it as.
                let mut labelled = Vec::new();
                for name in std::iter::once(qname.to_owned()).chain(aliases.iter().cloned()) {
                    let subclasses = query::related(
                        store,
                        &there.snapshot,
                        &name,
                        Direction::Incoming,
                        &[EdgeKind::Inherits],
                    )
                    .await?;
                    labelled.extend(subclasses.into_iter().map(|r| label_entry(there, r)));
                }
                (SUBCLASSES, labelled)
            }
            SymbolKind::Method => {
                let Some(found) = method_across(store, home, there, &symbol).await? else {
                    continue;
                };
                found
            }
            _ => continue,
        };
        add(&mut outcome.sections, title, entries);
    }
    Ok(Outcome::Implementations(outcome))
}

/// Labels an entry of the owner's answer: the owner's symbols with its label; a target the
/// owner does not declare (an external base class) with the graph that declares it, if any.
async fn label_own(
    store: &dyn GraphStore,
    members: &[Member],
    owner: usize,
    entry: &mut RelatedSymbol,
) -> OpResult<()> {
    let home = &members[owner];
    entry.site.file = home.label(&entry.site.file);
    for m in &mut entry.methods {
        *m = home.label_symbol(m);
    }
    if entry.kind.is_some() {
        entry.qname = home.label(&entry.qname);
        entry.file = entry.file.as_deref().map(|f| home.label(f));
        return Ok(());
    }
    let wanted = BTreeSet::from([entry.qname.clone()]);
    if let Some(found) = locate(store, members, owner, &wanted)
        .await?
        .get(&entry.qname)
    {
        let there = &members[found.member];
        if let Some(s) = store
            .symbols(&there.snapshot, std::slice::from_ref(&found.qname))
            .await
            .map_err(query_error(&there.snapshot))?
            .into_iter()
            .next()
        {
            entry.qname = there.label(&s.qname);
            entry.name = s.name.clone();
            entry.kind = Some(s.kind);
            entry.file = Some(there.label(&s.file));
            entry.line = Some(s.line);
            entry.signature = s.signature.clone();
        }
    }
    Ok(())
}

fn label_entry(member: &Member, mut entry: RelatedSymbol) -> RelatedSymbol {
    entry.qname = member.label(&entry.qname);
    entry.file = entry.file.as_deref().map(|f| member.label(f));
    entry.site.file = member.label(&entry.site.file);
    entry.methods = entry
        .methods
        .iter()
        .map(|m| member.label_symbol(m))
        .collect();
    entry
}

/// Adds entries to the section titled `title` (created when the owner's answer has none).
fn add(sections: &mut Vec<Section>, title: &str, entries: Vec<RelatedSymbol>) {
    if entries.is_empty() {
        return;
    }
    match sections.iter_mut().find(|s| s.title == title) {
        Some(section) => section.entries.extend(entries),
        None => sections.push(Section {
            title: title.to_owned(),
            entries,
        }),
    }
}

/// Found types, interfaces or methods as entries (Go's matched by method names are
/// `inferred`); the site is the declaration.
fn entries(
    member: &Member,
    found: Vec<(Symbol, Vec<Symbol>)>,
    confidence: Confidence,
) -> Vec<RelatedSymbol> {
    found
        .into_iter()
        .map(|(s, methods)| RelatedSymbol {
            qname: member.label(&s.qname),
            name: s.name.clone(),
            kind: Some(s.kind),
            file: Some(member.label(&s.file)),
            line: Some(s.line),
            signature: s.signature.clone(),
            confidence,
            site: Site {
                file: member.label(&s.file),
                line: s.line,
            },
            methods: methods.iter().map(|m| member.label_symbol(m)).collect(),
        })
        .collect()
}

/// A method: the same-named methods of the other graph's types implementing its interface, or
/// of the other graph's interfaces its type implements, or of its class's bases there.
async fn method_across(
    store: &dyn GraphStore,
    home: &Member,
    there: &Member,
    method: &Symbol,
) -> OpResult<Option<(&'static str, Vec<RelatedSymbol>)>> {
    let Some(parent) = query::lookup_parent(store, &home.snapshot, method).await? else {
        return Ok(None);
    };
    let same_name = |found: Vec<(Symbol, Vec<Symbol>)>| -> Vec<(Symbol, Vec<Symbol>)> {
        found
            .into_iter()
            .flat_map(|(_, methods)| methods)
            .filter(|m| m.name == method.name)
            .map(|m| (m, Vec::new()))
            .collect()
    };
    let found = match parent.kind {
        SymbolKind::Interface if parent.language == Language::Go => {
            let wanted = method_names(store, home, &parent.qname).await?;
            (
                IMPLEMENTED_BY,
                same_name(types_covering(store, there, &wanted).await?),
            )
        }
        SymbolKind::Struct | SymbolKind::Type if parent.language == Language::Go => {
            let have = method_names(store, home, &parent.qname).await?;
            (
                IMPLEMENTS,
                same_name(interfaces_covered(store, there, &have).await?),
            )
        }
        SymbolKind::Class => {
            // Bases the owner names but does not declare, declared in `there`.
            let bases = store
                .edges(
                    &home.snapshot,
                    &parent.qname,
                    Direction::Outgoing,
                    &[EdgeKind::Inherits],
                )
                .await
                .map_err(query_error(&home.snapshot))?;
            let mut out = Vec::new();
            for base in bases.iter().filter_map(|e| e.to.as_deref()) {
                for m in store
                    .children(&there.snapshot, base)
                    .await
                    .map_err(query_error(&there.snapshot))?
                {
                    if m.name == method.name && m.kind == SymbolKind::Method {
                        out.push((m, Vec::new()));
                    }
                }
            }
            return Ok(Some((IMPLEMENTS, entries(there, out, Confidence::Exact))));
        }
        _ => return Ok(None),
    };
    Ok(Some((
        found.0,
        entries(there, found.1, Confidence::Inferred),
    )))
}

/// The method names of a type or interface.
async fn method_names(
    store: &dyn GraphStore,
    member: &Member,
    qname: &str,
) -> OpResult<BTreeSet<String>> {
    Ok(store
        .children(&member.snapshot, qname)
        .await
        .map_err(query_error(&member.snapshot))?
        .into_iter()
        .filter(|m| m.kind == SymbolKind::Method)
        .map(|m| m.name)
        .collect())
}

/// The Go methods named `name` (exactly) in `member`'s graph.
async fn methods_named(
    store: &dyn GraphStore,
    member: &Member,
    name: &str,
) -> OpResult<Vec<Symbol>> {
    let query = SymbolQuery {
        kinds: vec![SymbolKind::Method],
        ..SymbolQuery::name(name.replace('*', ""), MAX_METHOD_CANDIDATES)
    };
    let page = store
        .search(&member.snapshot, &query)
        .await
        .map_err(query_error(&member.snapshot))?;
    Ok(page
        .symbols
        .into_iter()
        .filter(|m| m.name == name && m.language == Language::Go)
        .collect())
}

/// The declared types of `member` (by qname) among `parents`, with their methods.
async fn types_with_methods(
    store: &dyn GraphStore,
    member: &Member,
    parents: BTreeSet<String>,
    kinds: &[SymbolKind],
) -> OpResult<BTreeMap<String, (Symbol, Vec<Symbol>)>> {
    let err = query_error(&member.snapshot);
    let parents: Vec<String> = parents.into_iter().collect();
    let mut out = BTreeMap::new();
    for parent in store
        .symbols(&member.snapshot, &parents)
        .await
        .map_err(&err)?
    {
        if !kinds.contains(&parent.kind) || out.contains_key(&parent.qname) {
            continue;
        }
        let methods: Vec<Symbol> = store
            .children(&member.snapshot, &parent.qname)
            .await
            .map_err(&err)?
            .into_iter()
            .filter(|m| m.kind == SymbolKind::Method)
            .collect();
        out.insert(parent.qname.clone(), (parent, methods));
    }
    Ok(out)
}

/// Go types of `member` with a method of every name in `wanted`, with those methods.
async fn types_covering(
    store: &dyn GraphStore,
    member: &Member,
    wanted: &BTreeSet<String>,
) -> OpResult<Vec<(Symbol, Vec<Symbol>)>> {
    let Some(first) = wanted.iter().next() else {
        return Ok(Vec::new());
    };
    let parents: BTreeSet<String> = methods_named(store, member, first)
        .await?
        .into_iter()
        .filter_map(|m| m.parent)
        .collect();
    let types = types_with_methods(
        store,
        member,
        parents,
        &[SymbolKind::Struct, SymbolKind::Type],
    )
    .await?;
    Ok(types
        .into_values()
        .filter_map(|(ty, methods)| {
            let names: BTreeSet<&str> = methods.iter().map(|m| m.name.as_str()).collect();
            wanted.iter().all(|w| names.contains(w.as_str())).then(|| {
                let matching = methods
                    .into_iter()
                    .filter(|m| wanted.contains(&m.name))
                    .collect();
                (ty, matching)
            })
        })
        .collect())
}

/// Go interfaces of `member` whose (non-empty) method names are all in `have`.
async fn interfaces_covered(
    store: &dyn GraphStore,
    member: &Member,
    have: &BTreeSet<String>,
) -> OpResult<Vec<(Symbol, Vec<Symbol>)>> {
    let mut parents = BTreeSet::new();
    for name in have.iter().take(MAX_METHOD_NAMES) {
        parents.extend(
            methods_named(store, member, name)
                .await?
                .into_iter()
                .filter_map(|m| m.parent),
        );
    }
    let interfaces = types_with_methods(store, member, parents, &[SymbolKind::Interface]).await?;
    Ok(interfaces
        .into_values()
        .filter(|(_, methods)| {
            !methods.is_empty() && methods.iter().all(|m| have.contains(&m.name))
        })
        .collect())
}
