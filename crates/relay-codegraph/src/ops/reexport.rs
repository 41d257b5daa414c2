//! Python names as another repository imports them, across graphs: `acmelib/__init__.py` has
//! `from .client import connect`, so another repository calls `acmelib.connect` while the
//! library declares `acmelib.client.connect` (one level of re-export is followed, both ways,
//! from the library's own `imports` edges); and a library in a `src/` layout declares
//! `src.acmelib.client.connect`, which is imported as `acmelib.client.connect`.

use std::collections::BTreeSet;

use super::outcome::OpError;
use super::query::{self, query_error};
use super::set::Member;
use crate::model::{EdgeKind, Language, Symbol, SymbolKind};
use crate::store::{Direction, GraphStore, SymbolQuery};

type OpResult<T> = Result<T, OpError>;

/// At most this many names of one answer are looked up as re-exports (each costs queries).
pub(super) const MAX_REEXPORT_LOOKUPS: usize = 50;
/// At most this many other names of one symbol are asked about.
const MAX_ALIASES: usize = 20;
/// Levels of parents walked from a symbol to its module (a method's class's module: 2).
const MAX_PARENT_LEVELS: usize = 8;
/// At most this many modules named like an imported top-level package are looked at for a
/// source root.
const MAX_ROOT_CANDIDATES: usize = 20;

/// The symbol of `member` that `qname` (which `member` does not declare as such) names when
/// another repository imports it: under a source root (`acmelib.client.connect` is
/// `src.acmelib.client.connect` in a `src/` layout), or through a re-export (for the longest
/// prefix `P` that is a Python module of `member`, `M.<rest>` for a module `M` that `P`
/// imports, when `member` declares it).
pub(super) async fn reexported(
    store: &dyn GraphStore,
    member: &Member,
    qname: &str,
) -> OpResult<Option<String>> {
    let snapshot = &member.snapshot;
    let err = query_error(snapshot);
    let Some(root) = source_root(store, member, qname).await? else {
        return Ok(None);
    };
    let qname = format!("{root}{qname}");
    if !root.is_empty() && query::lookup(store, snapshot, &qname).await?.is_some() {
        return Ok(Some(qname));
    }
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

/// Where the top-level package of an imported `qname` lies in `member`'s graph: `""` at the
/// root, `"src."` under a source root (a directory that is not a package itself); `None` when
/// `member` has no Python module of that name.
async fn source_root(
    store: &dyn GraphStore,
    member: &Member,
    qname: &str,
) -> OpResult<Option<String>> {
    let snapshot = &member.snapshot;
    let top = qname.split('.').next().unwrap_or(qname);
    let is_module = |s: &Symbol| s.kind == SymbolKind::Module && s.language == Language::Python;
    if query::lookup(store, snapshot, top)
        .await?
        .is_some_and(|s| is_module(&s))
    {
        return Ok(Some(String::new()));
    }
    let query = SymbolQuery {
        kinds: vec![SymbolKind::Module],
        ..SymbolQuery::qname(format!("*.{}", top.replace('*', "")), MAX_ROOT_CANDIDATES)
    };
    let page = store
        .search(snapshot, &query)
        .await
        .map_err(query_error(snapshot))?;
    for module in page.symbols.iter().filter(|s| is_module(s)) {
        let Some(root) = module.qname.strip_suffix(top) else {
            continue;
        };
        if root_is_not_a_package(store, member, root).await? {
            return Ok(Some(root.to_owned()));
        }
    }
    Ok(None)
}

/// Whether no leading part of `root` (`src.`, `python.src.`) is a module: imports start below it.
async fn root_is_not_a_package(
    store: &dyn GraphStore,
    member: &Member,
    root: &str,
) -> OpResult<bool> {
    let parts: Vec<String> = root
        .trim_end_matches('.')
        .match_indices('.')
        .map(|(i, _)| root[..i].to_owned())
        .chain(std::iter::once(root.trim_end_matches('.').to_owned()))
        .collect();
    let found = store
        .symbols(&member.snapshot, &parts)
        .await
        .map_err(query_error(&member.snapshot))?;
    Ok(found.iter().all(|s| s.kind != SymbolKind::Module))
}

/// The leading parts of `qname` that are not modules (`src.` for
/// `src.acmelib.client.connect` when `src` has no `__init__.py`): what an importer omits.
async fn root_of(store: &dyn GraphStore, member: &Member, qname: &str) -> OpResult<String> {
    let prefixes: Vec<String> = qname
        .match_indices('.')
        .map(|(i, _)| qname[..i].to_owned())
        .take(MAX_PARENT_LEVELS)
        .collect();
    let modules: BTreeSet<String> = store
        .symbols(&member.snapshot, &prefixes)
        .await
        .map_err(query_error(&member.snapshot))?
        .into_iter()
        .filter(|s| s.kind == SymbolKind::Module)
        .map(|s| s.qname)
        .collect();
    Ok(prefixes
        .iter()
        .position(|p| modules.contains(p))
        .and_then(|k| k.checked_sub(1))
        .map(|k| format!("{}.", prefixes[k]))
        .unwrap_or_default())
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
    let reexports = modules
        .into_iter()
        .filter(|m| m.kind == SymbolKind::Module)
        .map(|m| format!("{}.{rest}", m.qname));
    // Importers under a source root omit it (`src.acmelib.x` is imported as `acmelib.x`).
    let root = root_of(store, member, qname).await?;
    let mut out = BTreeSet::new();
    for name in std::iter::once(qname.to_owned()).chain(reexports) {
        if let Some(importable) = name.strip_prefix(root.as_str())
            && !root.is_empty()
        {
            out.insert(importable.to_owned());
        }
        out.insert(name);
    }
    out.remove(qname);
    Ok(out.into_iter().take(MAX_ALIASES).collect())
}
