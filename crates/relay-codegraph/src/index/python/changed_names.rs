//! Which Python modules to re-resolve after a module's exports changed, by name.
//!
//! Python resolution looks names up (a module's or a class's attribute, a name through the
//! scopes and star imports), and values flow from one name to another only through what the
//! source spells: bindings, base classes, return annotations and `self.x = …` values. So when a
//! module's exports differ only in the names `N`, the names whose value may change are the
//! closure `S` of `N` under "a binding (or base list, annotation, `self` attribute) mentions a
//! name in `S`", and a module can resolve differently only if it mentions a name in `S`.
//!
//! [`changed_names`] compares two versions of a module with scopes matched by their defining
//! qname (a new function shifts the scope numbering) and gives up (`None`: fall back to the
//! import closure) when the scope structure, star imports or the module itself changed.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap as HashMap;

use super::same_exports::read_scopes;
use super::{PBind, PExpr, PyDef, PyFile};
use crate::index::facts::{FileFacts, LangFacts};
use crate::index::wanted::Wanted;

/// Scope keys: `""` for the module, `def <qname>` for a class or function body, and the
/// parent's key with an ordinal for unnamed scopes (lambdas, comprehensions).
fn scope_keys(f: &PyFile) -> Vec<String> {
    let n = f.scopes.len();
    let mut keys: Vec<Option<String>> = vec![None; n];
    if n > 0 {
        keys[0] = Some(String::new());
    }
    for d in &f.defs {
        let s = d.scope as usize;
        if s > 0 && s < n && keys[s].is_none() {
            keys[s] = Some(format!("def {}", d.qname));
        }
    }
    let mut ordinals: HashMap<usize, usize> = HashMap::default();
    let mut out: Vec<String> = Vec::with_capacity(n);
    for (s, key) in keys.into_iter().enumerate() {
        let key = match key {
            Some(k) => k,
            None => {
                let parent = f.scopes[s].parent.map_or(0, |p| p as usize);
                let ord = ordinals.entry(parent).or_default();
                *ord += 1;
                let parent_key = out.get(parent).cloned().unwrap_or_default();
                format!("{parent_key}/{ord}")
            }
        };
        out.push(key);
    }
    out
}

struct Side<'a> {
    f: &'a PyFile,
    keys: Vec<String>,
}

impl Side<'_> {
    fn key(&self, s: u32) -> &str {
        self.keys.get(s as usize).map_or("?", String::as_str)
    }
}

/// Structural equality of expressions with scopes compared by key.
fn same_expr(a: &Side<'_>, x: u32, b: &Side<'_>, y: u32, depth: u32) -> bool {
    if depth > 64 {
        return false;
    }
    match (a.f.exprs.get(x as usize), b.f.exprs.get(y as usize)) {
        (None, None) => true,
        (Some(p), Some(q)) => match (p, q) {
            (
                PExpr::Name {
                    scope: s1,
                    name: n1,
                },
                PExpr::Name {
                    scope: s2,
                    name: n2,
                },
            ) => n1 == n2 && a.key(*s1) == b.key(*s2) && a.f.reach(x) == b.f.reach(y),
            (PExpr::Super { scope: s1 }, PExpr::Super { scope: s2 }) => a.key(*s1) == b.key(*s2),
            (PExpr::Attr(o1, n1), PExpr::Attr(o2, n2)) => {
                // An attribute read that events reach is compared as changed.
                n1 == n2
                    && a.f.event_read(x).is_none()
                    && b.f.event_read(y).is_none()
                    && same_expr(a, *o1, b, *o2, depth + 1)
            }
            (PExpr::Call(c1), PExpr::Call(c2)) => same_expr(a, *c1, b, *c2, depth + 1),
            (PExpr::Other, PExpr::Other) => true,
            _ => false,
        },
        _ => false,
    }
}

fn same_binds(a: &Side<'_>, x: &[PBind], b: &Side<'_>, y: &[PBind]) -> bool {
    x.len() == y.len()
        && x.iter().zip(y).all(|(p, q)| match (p, q) {
            (PBind::Assign(e1), PBind::Assign(e2))
            | (PBind::Annotated(Some(e1)), PBind::Annotated(Some(e2))) => {
                same_expr(a, *e1, b, *e2, 0)
            }
            (PBind::Assign(_) | PBind::Annotated(Some(_)), _)
            | (_, PBind::Assign(_) | PBind::Annotated(Some(_))) => false,
            _ => p == q,
        })
}

fn same_opt(a: &Side<'_>, x: Option<u32>, b: &Side<'_>, y: Option<u32>) -> bool {
    match (x, y) {
        (None, None) => true,
        (Some(p), Some(q)) => same_expr(a, p, b, q, 0),
        _ => false,
    }
}

/// The names whose lookups in or through module `old`/`new` may differ, or `None` when the
/// difference is not a matter of names (module, star imports or scope structure changed).
pub(crate) fn changed_names(old: &PyFile, new: &PyFile) -> Option<BTreeSet<String>> {
    if old.module != new.module
        || old.is_package != new.is_package
        || old.star_imports != new.star_imports
        || old.order.star_states != new.order.star_states
    {
        return None;
    }
    let a = Side {
        f: old,
        keys: scope_keys(old),
    };
    let b = Side {
        f: new,
        keys: scope_keys(new),
    };
    let index_a: HashMap<&str, usize> = a
        .keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    let index_b: HashMap<&str, usize> = b
        .keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    // The structure of scopes present on both sides must agree.
    for (k, &i) in &index_a {
        if let Some(&j) = index_b.get(k) {
            let (x, y) = (&old.scopes[i], &new.scopes[j]);
            let parent = |s: &Side<'_>, p: Option<u32>| p.map(|p| s.key(p).to_owned());
            let class = |s: &Side<'_>, c: Option<u32>| {
                c.and_then(|c| s.f.defs.get(c as usize))
                    .map(|d| d.qname.clone())
            };
            if x.kind != y.kind
                || x.globals != y.globals
                || parent(&a, x.parent) != parent(&b, y.parent)
                || class(&a, x.class_def) != class(&b, y.class_def)
            {
                return None;
            }
        }
    }
    let mut names: BTreeSet<String> = BTreeSet::new();
    // Bindings of the scopes other modules can read, on either side.
    let mut read: BTreeSet<&str> = BTreeSet::new();
    read.extend(read_scopes(old).into_iter().map(|s| a.keys[s].as_str()));
    read.extend(read_scopes(new).into_iter().map(|s| b.keys[s].as_str()));
    for k in read {
        let x = index_a.get(k).map(|&i| &old.scopes[i].bindings);
        let y = index_b.get(k).map(|&j| &new.scopes[j].bindings);
        let empty = HashMap::default();
        let (x, y) = (x.unwrap_or(&empty), y.unwrap_or(&empty));
        for (name, bx) in x {
            if !y.get(name).is_some_and(|by| same_binds(&a, bx, &b, by)) {
                names.insert(name.clone());
            }
        }
        // What reaches the end of the scope (module and class scopes).
        let finals = |s: &Side<'_>, i: Option<&usize>| {
            i.map(|&i| s.f.scopes[i].final_reach.clone())
                .unwrap_or_default()
        };
        let (fx, fy) = (finals(&a, index_a.get(k)), finals(&b, index_b.get(k)));
        for (name, r) in fx.iter().chain(&fy) {
            if fx.get(name) != Some(r) || fy.get(name) != Some(r) {
                names.insert(name.clone());
            }
        }
        for name in y.keys() {
            if !x.contains_key(name) {
                names.insert(name.clone());
            }
        }
    }
    // Definitions, by qname (the first of each).
    let (da, db) = (first_defs(old), first_defs(new));
    for (q, x) in &da {
        let Some(y) = db.get(q) else {
            names.insert(x.name.clone());
            continue;
        };
        let same = x.name == y.name
            && x.kind == y.kind
            && x.parent == y.parent
            && a.key(x.scope) == b.key(y.scope)
            && x.bases.len() == y.bases.len()
            && x.bases
                .iter()
                .zip(&y.bases)
                .all(|(&p, &r)| same_expr(&a, p, &b, r, 0))
            && same_opt(&a, x.returns, &b, y.returns);
        if !same {
            names.insert(x.name.clone());
        }
        let (ax, ay) = (self_attrs(x), self_attrs(y));
        for (n, ex) in &ax {
            let same = ay.get(n).is_some_and(|ey| {
                ex.len() == ey.len() && ex.iter().zip(ey).all(|(&p, &r)| same_expr(&a, p, &b, r, 0))
            });
            if !same {
                names.insert((*n).to_owned());
            }
        }
        for n in ay.keys() {
            if !ax.contains_key(n) {
                names.insert((*n).to_owned());
            }
        }
        // What the method sets on every return (read where it is called on a local object).
        let sets = |d: &PyDef| -> HashMap<String, u32> { d.sets_self.iter().cloned().collect() };
        let (sx, sy) = (sets(x), sets(y));
        for (n, e) in sx.iter().chain(&sy) {
            let same = match (sx.get(n), sy.get(n)) {
                (Some(p), Some(r)) => same_expr(&a, *p, &b, *r, 0),
                _ => false,
            };
            if !same {
                names.insert(n.clone());
                names.insert(x.name.clone());
            }
            let _ = e;
        }
    }
    for (q, y) in &db {
        if !da.contains_key(q) {
            names.insert(y.name.clone());
        }
    }
    let vars = |f: &PyFile| -> BTreeSet<String> { f.vars.iter().map(|v| v.name.clone()).collect() };
    let (va, vb) = (vars(old), vars(new));
    names.extend(va.symmetric_difference(&vb).cloned());
    Some(names)
}

fn first_defs(f: &PyFile) -> HashMap<String, &PyDef> {
    let mut m = HashMap::default();
    for d in &f.defs {
        m.entry(d.qname.clone()).or_insert(d);
    }
    m
}

fn self_attrs(d: &PyDef) -> HashMap<&str, Vec<u32>> {
    let mut m: HashMap<&str, Vec<u32>> = HashMap::default();
    for (n, e) in &d.self_attrs {
        m.entry(n.as_str()).or_default().push(*e);
    }
    m
}

/// Whether expression `e` of `f` mentions a name in `names`.
fn expr_mentions(f: &PyFile, e: u32, names: &Wanted<'_>, depth: u32) -> bool {
    if depth > 64 {
        return true;
    }
    match f.exprs.get(e as usize) {
        Some(PExpr::Name { name, .. }) => names.contains(name),
        Some(PExpr::Attr(o, n)) => names.contains(n) || expr_mentions(f, *o, names, depth + 1),
        Some(PExpr::Call(c)) => expr_mentions(f, *c, names, depth + 1),
        _ => false,
    }
}

fn bind_mentions(f: &PyFile, b: &PBind, names: &Wanted<'_>) -> bool {
    match b {
        PBind::Assign(e) | PBind::Annotated(Some(e)) => expr_mentions(f, *e, names, 0),
        PBind::ImportFrom { name, .. } => names.contains(name),
        _ => false,
    }
}

/// Closes `names` over all Python modules: a name bound (in a scope other modules can read)
/// to something that mentions the set, a definition whose bases or return annotation mention it, and a `self`
/// attribute whose value mentions it join the set. `None` if it does not settle.
pub(crate) fn close(
    facts: &BTreeMap<String, FileFacts>,
    mut names: BTreeSet<String>,
) -> Option<BTreeSet<String>> {
    // Other modules evaluate only the bindings of a module's read scopes: a name bound in
    // another (function) scope reaches no other module, and the module itself mentions the
    // name its value comes from.
    let modules: Vec<(&PyFile, BTreeSet<usize>)> = facts
        .values()
        .filter_map(|f| match &f.lang {
            LangFacts::Python(p) => Some((p, read_scopes(p))),
            LangFacts::Go(_) => None,
        })
        .collect();
    for _ in 0..16 {
        let mut add: Vec<String> = Vec::new();
        {
            let wanted = Wanted::new(&names);
            for (p, read) in &modules {
                let p = *p;
                for scope in read.iter().filter_map(|&s| p.scopes.get(s)) {
                    for (name, binds) in &scope.bindings {
                        if !wanted.contains(name)
                            && binds.iter().any(|b| bind_mentions(p, b, &wanted))
                        {
                            add.push(name.clone());
                        }
                    }
                }
                for d in &p.defs {
                    if !wanted.contains(&d.name)
                        && (d.bases.iter().any(|&e| expr_mentions(p, e, &wanted, 0))
                            || d.returns.is_some_and(|e| expr_mentions(p, e, &wanted, 0)))
                    {
                        add.push(d.name.clone());
                    }
                    for (n, e) in &d.self_attrs {
                        if !wanted.contains(n) && expr_mentions(p, *e, &wanted, 0) {
                            add.push(n.clone());
                        }
                    }
                }
            }
        }
        let before = names.len();
        names.extend(add);
        if names.len() == before {
            return Some(names);
        }
    }
    None
}

/// Whether module `p` mentions a name in `names` anywhere (expressions, bindings, imported
/// names, definitions).
pub(crate) fn mentions(p: &PyFile, names: &BTreeSet<String>) -> bool {
    let names = Wanted::new(names);
    p.exprs.iter().any(|e| match e {
        PExpr::Name { name, .. } | PExpr::Attr(_, name) => names.contains(name),
        _ => false,
    }) || p.scopes.iter().any(|s| {
        s.bindings.iter().any(|(name, binds)| {
            names.contains(name)
                || binds
                    .iter()
                    .any(|b| matches!(b, PBind::ImportFrom { name, .. } if names.contains(name)))
        })
    }) || p.defs.iter().any(|d| names.contains(&d.name))
        || p.imports
            .iter()
            .any(|i| i.name.as_ref().is_some_and(|n| names.contains(n)))
}

/// Modules that may own a qname in `changed` (a module of that name, or one whose name is a
/// dotted prefix of it): their symbols may change when the qname's first definition moves.
pub(crate) fn possible_owners(
    facts: &BTreeMap<String, FileFacts>,
    changed: &BTreeSet<String>,
) -> BTreeSet<String> {
    let mut prefixes: BTreeSet<&str> = BTreeSet::new();
    for q in changed {
        prefixes.insert(q);
        for (i, _) in q.match_indices('.') {
            prefixes.insert(&q[..i]);
        }
    }
    facts
        .iter()
        .filter(|(_, f)| matches!(&f.lang, LangFacts::Python(p) if prefixes.contains(p.module.as_str())))
        .map(|(rel, _)| rel.clone())
        .collect()
}

/// Qnames declared by one version of a module and not the other.
pub(crate) fn changed_qnames(old: &PyFile, new: &PyFile) -> BTreeSet<String> {
    let keys = |f: &PyFile| -> BTreeSet<String> {
        f.defs
            .iter()
            .map(|d| d.qname.clone())
            .chain(f.vars.iter().map(|v| format!("{}.{}", f.module, v.name)))
            .collect()
    };
    let (a, b) = (keys(old), keys(new));
    a.symmetric_difference(&b).cloned().collect()
}
