//! Python names a package re-exports, across graphs: `acmelib/__init__.py` has
//! `from .client import connect`, so another repository calls `acmelib.connect` while the
//! library declares `acmelib.client.connect`. One level is followed, both ways, from the
//! library's own `imports` edges.

use std::collections::BTreeSet;

use super::outcome::OpError;
use super::query::{self, query_error};
use super::set::Member;
use crate::model::{EdgeKind, Language, SymbolKind};
use crate::store::{Direction, GraphStore};

type OpResult<T> = Result<T, OpError>;

/// At most this many names of one answer are looked up as re-exports (each costs queries).
pub(super) const MAX_REEXPORT_LOOKUPS: usize = 50;
/// At most this many other names of one symbol are asked about.
const MAX_ALIASES: usize = 20;
/// Levels of parents walked from a symbol to its module (a method's class's module: 2).
const MAX_PARENT_LEVELS: usize = 8;

/// The symbol of `member` that `qname` (which `member` does not declare) names through a
/// re-export: for the longest prefix `P` of `qname` that is a Python module of `member`,
/// `M.<rest>` for a module `M` that `P` imports, when `member` declares it.
pub(super) async fn reexported(
    store: &dyn GraphStore,
    member: &Member,
    qname: &str,
) -> OpResult<Option<String>> {
    let snapshot = &member.snapshot;
    let err = query_error(snapshot);
    let prefixes: Vec<String> = qname
        .match_indices('.')
        .map(|(i, _)| qname[..i].to_owned())
        .collect();
    let modules = store.symbols(snapshot, &prefixes).await.map_err(&err)?;
    let Some(module) = modules
        .iter()
        .filter(|m| m.kind == SymbolKind::Module && m.language == Language::Python)
        .max_by_key(|m| m.qname.len())
    else {
        return Ok(None);
    };
    let rest = &qname[module.qname.len() + 1..];
    let imports = store
        .edges(
            snapshot,
            &module.qname,
            Direction::Outgoing,
            &[EdgeKind::Imports],
        )
        .await
        .map_err(&err)?;
    let mut candidates: Vec<String> = Vec::new();
    for to in imports.iter().filter_map(|e| e.to.as_deref()) {
        let candidate = format!("{to}.{rest}");
        if !candidates.contains(&candidate) {
            candidates.push(candidate);
        }
    }
    let found: BTreeSet<String> = store
        .symbols(snapshot, &candidates)
        .await
        .map_err(&err)?
        .into_iter()
        .map(|s| s.qname)
        .collect();
    // The first import that declares it, as the package's namespace would bind it.
    Ok(candidates.into_iter().find(|c| found.contains(c)))
}

/// The other names under which other repositories may import `qname` of `member`: `P.<rest>`
/// for each module `P` of `member` that imports the module declaring it (Python only).
pub(super) async fn aliases(
    store: &dyn GraphStore,
    member: &Member,
    qname: &str,
) -> OpResult<Vec<String>> {
    let snapshot = &member.snapshot;
    let err = query_error(snapshot);
    let Some(mut module) = query::lookup(store, snapshot, qname).await? else {
        return Ok(Vec::new());
    };
    if module.language != Language::Python {
        return Ok(Vec::new());
    }
    for _ in 0..MAX_PARENT_LEVELS {
        if module.kind == SymbolKind::Module {
            break;
        }
        match query::lookup_parent(store, snapshot, &module).await? {
            Some(parent) => module = parent,
            None => return Ok(Vec::new()),
        }
    }
    let Some(rest) = qname
        .strip_prefix(module.qname.as_str())
        .and_then(|r| r.strip_prefix('.'))
    else {
        return Ok(Vec::new());
    };
    let importers: Vec<String> = store
        .edges(
            snapshot,
            &module.qname,
            Direction::Incoming,
            &[EdgeKind::Imports],
        )
        .await
        .map_err(&err)?
        .into_iter()
        .map(|e| e.from)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // Only a module's own namespace re-exports (a function's local import does not).
    let modules = store.symbols(snapshot, &importers).await.map_err(&err)?;
    Ok(modules
        .into_iter()
        .filter(|m| m.kind == SymbolKind::Module)
        .map(|m| format!("{}.{rest}", m.qname))
        .filter(|alias| alias != qname)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .take(MAX_ALIASES)
        .collect())
}
