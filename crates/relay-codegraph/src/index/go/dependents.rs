//! Which Go files to re-resolve after the tables were patched ([`super::patch`]): those
//! whose lookups by name can give another result against the patched tables.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::facts::{GExpr, GoFile, go, importers};
use super::patch::{Names, Patched};
use super::tables::{GoIndex, TypeR};
use crate::index::facts::FileFacts;
use crate::index::wanted::Wanted;

/// The Go files to re-resolve after a successful patch `p`, besides the changed files and
/// `p.files`: the files whose `implements` edges changed; among the files that can see the
/// patched packages, those with a selector `x.n` (`n` a changed name) where `x` is one of the
/// packages or has a type whose lookups changed (or reaches one by embedding or aliasing), or
/// a free identifier with a changed name resolved in the packages; anywhere, those with a
/// selector resolving to an interface method whose implementations changed (`dynamic`
/// edges).
///
/// Each edge is a chain of lookups by name; a chain that gives another result has a first
/// lookup that does, whose operand is unchanged, so evaluating the operands against the new
/// tables finds every file whose edges can change.
pub(crate) fn dependents(
    index: &GoIndex,
    facts: &BTreeMap<String, FileFacts>,
    p: &Patched,
    threads: usize,
) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = p.flow_files.iter().cloned().collect();
    for (file, list) in &p.old_implements {
        if index.implements.get(file) != Some(list) {
            out.insert(file.clone());
        }
    }
    for file in index.implements.keys() {
        if !p.old_implements.contains_key(file) {
            out.insert(file.clone());
        }
    }
    let methods: HashSet<&str> = p
        .old_impls
        .keys()
        .chain(index.impls.keys())
        .filter(|m| p.old_impls.get(*m) != index.impls.get(*m))
        .map(String::as_str)
        .collect();
    let method_names: BTreeSet<String> = methods
        .iter()
        .filter_map(|m| m.rsplit('.').next())
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .collect();
    let visible = if p.names.is_empty() {
        BTreeSet::new()
    } else {
        importers(facts, &p.packages)
    };
    let all_names: BTreeSet<String> = match &p.names {
        Names::Some(set) => set.iter().chain(&method_names).cloned().collect(),
        Names::All => method_names.clone(),
    };
    let none = BTreeSet::new();
    let changed = match &p.names {
        Names::Some(set) => set,
        Names::All => &none,
    };
    let everywhere = Wanted::new(&method_names);
    let visible_names = Wanted::new(&all_names);
    let files: Vec<(&String, &GoFile)> = facts
        .iter()
        .filter_map(|(rel, f)| go(f).map(|g| (rel, g)))
        .collect();
    let hits = crate::index::parallel::par_map(
        &files,
        threads,
        |&(rel, g)| {
            let sees = visible.contains(rel);
            if sees && p.names == Names::All {
                return true;
            }
            let wanted = if sees { &visible_names } else { &everywhere };
            if wanted.names().is_empty()
                || !g
                    .bodies
                    .iter()
                    .any(|b| b.exprs.iter().any(|expr| mentioned(wanted, expr)))
            {
                return false;
            }
            // Free identifiers resolve in the file's package and dot-imported ones.
            let resolves_here = p.packages.contains(&g.pkg_path)
                || g.imports
                    .iter()
                    .any(|i| i.alias.as_deref() == Some(".") && p.packages.contains(&i.path));
            let free_hit = sees
                && resolves_here
                && g.bodies.iter().any(|b| {
                    b.exprs
                        .iter()
                        .any(|e| matches!(e, GExpr::Free(n) if changed.contains(n.as_str())))
                });
            let mut reaches: HashMap<String, bool> = HashMap::default();
            free_hit
                || index.probe_selectors(g, wanted.names(), &mut |probe| {
                    if probe.method.as_deref().is_some_and(|m| methods.contains(m)) {
                        return true;
                    }
                    if !sees || !changed.contains(probe.name) {
                        return false;
                    }
                    probe.pkg.as_ref().is_some_and(|x| p.packages.contains(x))
                        || probe
                            .ty
                            .as_ref()
                            .is_some_and(|t| reaches_changed(index, t, &p.types, &mut reaches, 0))
                })
        },
        |_| {},
    );
    for ((rel, _), hit) in files.iter().zip(hits) {
        if hit {
            out.insert((*rel).clone());
        }
    }
    out
}

/// Whether `expr` names one of `wanted` (as a free identifier or a selector's field).
fn mentioned(wanted: &Wanted<'_>, expr: &GExpr) -> bool {
    match expr {
        GExpr::Free(name) | GExpr::Selector(_, name) => wanted.contains(name),
        _ => false,
    }
}

/// How deep a chain of embedded types is followed before a type is assumed to reach a changed one.
/// Real Go code embeds a few levels at most; the bound stops pathological or generated chains, and
/// assuming "reaches" errs towards re-resolving a file, never towards a stale edge.
const MAX_EMBEDDING_DEPTH: u32 = 16;

/// Whether lookups on type `q` can pass through one of `changed` (itself, or a type it
/// aliases, embeds, or is defined as).
fn reaches_changed(
    index: &GoIndex,
    type_qname: &str,
    changed: &BTreeSet<String>,
    memo: &mut HashMap<String, bool>,
    depth: u32,
) -> bool {
    if changed.contains(type_qname) {
        return true;
    }
    if let Some(&known) = memo.get(type_qname) {
        return known;
    }
    if depth > MAX_EMBEDDING_DEPTH {
        // Too deep to tell: assume it does.
        return true;
    }
    // While exploring, a cycle back to `type_qname` counts as reaching (conservatively).
    memo.insert(type_qname.to_owned(), true);
    let Some(info) = index.types.get(type_qname) else {
        return false;
    };
    let named = |t: &TypeR| -> Option<String> {
        let mut t = t;
        while let TypeR::Pointer(inner) = t {
            t = inner;
        }
        match t {
            TypeR::Named(name) => Some(name.clone()),
            _ => None,
        }
    };
    let next: Vec<String> = info
        .alias_of
        .iter()
        .chain(std::iter::once(&info.underlying))
        .chain(&info.embeds)
        .chain(
            info.fields
                .iter()
                .filter(|field| field.embedded)
                .map(|field| &field.ty),
        )
        .filter_map(named)
        .collect();
    let result = next
        .iter()
        .any(|name| reaches_changed(index, name, changed, memo, depth + 1));
    memo.insert(type_qname.to_owned(), result);
    result
}
