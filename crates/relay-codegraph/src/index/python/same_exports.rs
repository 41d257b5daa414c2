//! What a Python module offers other modules, compared between two versions of it (the fast
//! path of an update): other files read a module's definitions, variables, the bindings of the
//! scopes they can reach (the module, classes, and the scopes that names in base classes,
//! return annotations, `self.x = …` values and those bindings are looked up in:
//! [`read_scopes`]) and the expressions those reach; its references (calls, uses), lines,
//! signature text, docstrings and the bindings of other function scopes (e.g. a renamed
//! parameter) are its own. When the part others read is the same (expressions compared by
//! structure, so a new call statement in a body, which renumbers the expressions, still
//! qualifies), the kept Python tables ([`super::PyTables`]) are reused and only the changed
//! file is re-resolved. Other edits rebuild the tables and re-resolve the modules that can see
//! a changed name (`changed_names`).

use std::collections::{BTreeSet, HashSet};

use super::{DefKind, PArg, PBind, PExpr, PyFile, PyScope};

/// Whether every part of `a` that another module's resolution can read equals that of `b`: all
/// of the facts except references, lines, signature text and docstrings, with expressions
/// compared by structure from the bindings and definitions that reach them.
pub(crate) fn same_py_exports(a: &PyFile, b: &PyFile) -> bool {
    a.module == b.module
        && a.is_package == b.is_package
        && a.scopes.len() == b.scopes.len()
        && same_read_scopes(a, b)
        && a.owners == b.owners
        && a.star_imports == b.star_imports
        && a.order.star_states == b.order.star_states
        && a.imports.len() == b.imports.len()
        && a.imports
            .iter()
            .zip(&b.imports)
            .all(|(x, y)| x.owner == y.owner && x.module == y.module && x.name == y.name)
        && a.vars.len() == b.vars.len()
        && a.vars
            .iter()
            .zip(&b.vars)
            .all(|(x, y)| x.name == y.name && x.is_const == y.is_const)
        && a.defs.len() == b.defs.len()
        && a.defs.iter().zip(&b.defs).all(|(x, y)| {
            x.qname == y.qname
                && x.name == y.name
                && x.kind == y.kind
                && x.parent == y.parent
                && x.scope == y.scope
                && x.bases.len() == y.bases.len()
                && x.bases
                    .iter()
                    .zip(&y.bases)
                    .all(|(&p, &q)| same_expr(a, p, b, q, 0))
                && match (x.returns, y.returns) {
                    (None, None) => true,
                    (Some(p), Some(q)) => same_expr(a, p, b, q, 0),
                    _ => false,
                }
                && x.generator == y.generator
                && x.is_static == y.is_static
                && x.is_classmethod == y.is_classmethod
                && x.params.len() == y.params.len()
                && x.params
                    .iter()
                    .zip(&y.params)
                    .all(|(p, q)| p.kind == q.kind)
                && x.sets_self.len() == y.sets_self.len()
                && x.sets_self
                    .iter()
                    .zip(&y.sets_self)
                    .all(|((n, p), (m, q))| n == m && same_expr(a, *p, b, *q, 0))
                && x.self_attrs.len() == y.self_attrs.len()
                && x.self_attrs
                    .iter()
                    .zip(&y.self_attrs)
                    .all(|((n, p), (m, q))| n == m && same_expr(a, *p, b, *q, 0))
        })
}

/// Scopes compared: all by structure (kind, parent, `global` names, class), and the bindings
/// of the scopes other modules can read ([`read_scopes`]) by [`same_scope`]. The bindings of a
/// function scope that no exported expression reaches (e.g. a renamed parameter) are the
/// module's own.
fn same_read_scopes(a: &PyFile, b: &PyFile) -> bool {
    let structure = a.scopes.iter().zip(&b.scopes).all(|(x, y)| {
        x.kind == y.kind
            && x.parent == y.parent
            && x.globals == y.globals
            && x.class_def == y.class_def
    });
    if !structure {
        return false;
    }
    let read = read_scopes(a);
    read == read_scopes(b)
        && read
            .iter()
            .all(|&s| same_scope(a, &a.scopes[s], b, &b.scopes[s]))
}

/// The scopes whose bindings another module's resolution can read: the module scope, class
/// scopes (attribute lookups), and the scopes (with their enclosing ones) that names reached
/// from those bindings, base classes, return annotations and `self.x = …` values are looked up
/// in, transitively.
pub(crate) fn read_scopes(f: &PyFile) -> BTreeSet<usize> {
    let mut read: BTreeSet<usize> = BTreeSet::new();
    let mut scopes: Vec<usize> = vec![0];
    let mut exprs: Vec<u32> = Vec::new();
    for d in &f.defs {
        if d.kind == DefKind::Class {
            scopes.push(d.scope as usize);
        }
        exprs.extend(d.bases.iter().copied());
        exprs.extend(d.returns);
        exprs.extend(d.self_attrs.iter().map(|(_, e)| *e));
    }
    let mut seen_exprs: HashSet<u32> = HashSet::new();
    loop {
        if let Some(s) = scopes.pop() {
            // A name is looked up in its scope and then the enclosing ones.
            let mut current = Some(s);
            while let Some(si) = current {
                if si >= f.scopes.len() || !read.insert(si) {
                    break;
                }
                for binds in f.scopes[si].bindings.values() {
                    for b in binds {
                        match b {
                            PBind::Assign(e)
                            | PBind::Annotated(Some(e))
                            | PBind::Unpack { expr: e, .. }
                            | PBind::Iter(e) => exprs.push(*e),
                            _ => {}
                        }
                    }
                }
                current = f.scopes[si].parent.map(|p| p as usize);
            }
            continue;
        }
        let Some(e) = exprs.pop() else { break };
        if !seen_exprs.insert(e) {
            continue;
        }
        match f.exprs.get(e as usize) {
            Some(PExpr::Name { scope, .. }) => scopes.push(*scope as usize),
            Some(other) => exprs.extend(other.children()),
            None => {}
        }
    }
    read
}

/// Scopes compared with their bindings' expressions compared by structure (a body edit that
/// adds a call statement renumbers the expressions without changing any binding).
fn same_scope(fa: &PyFile, x: &PyScope, fb: &PyFile, y: &PyScope) -> bool {
    x.kind == y.kind
        && x.parent == y.parent
        && x.globals == y.globals
        && x.class_def == y.class_def
        && x.final_reach == y.final_reach
        && x.bindings.len() == y.bindings.len()
        && x.bindings.iter().all(|(name, bx)| {
            y.bindings.get(name).is_some_and(|by| {
                bx.len() == by.len() && bx.iter().zip(by).all(|(p, q)| same_bind(fa, p, fb, q))
            })
        })
}

fn same_bind(fa: &PyFile, x: &PBind, fb: &PyFile, y: &PBind) -> bool {
    match (x, y) {
        (PBind::Assign(p), PBind::Assign(q)) => same_expr(fa, *p, fb, *q, 0),
        (PBind::Annotated(Some(p)), PBind::Annotated(Some(q))) => same_expr(fa, *p, fb, *q, 0),
        (PBind::Unpack { expr: p, index: i }, PBind::Unpack { expr: q, index: j }) => {
            i == j && same_expr(fa, *p, fb, *q, 0)
        }
        (PBind::Iter(p), PBind::Iter(q)) => same_expr(fa, *p, fb, *q, 0),
        (
            PBind::Param {
                def: d1,
                index: i1,
                annotation: a1,
            },
            PBind::Param {
                def: d2,
                index: i2,
                annotation: a2,
            },
        ) => {
            // The default value is part of what the parameter can hold.
            let default = |f: &PyFile, d: u32, i: u32| {
                f.defs
                    .get(d as usize)
                    .and_then(|d| d.params.get(i as usize))
                    .and_then(|p| p.default)
            };
            let same_opt = |p: Option<u32>, q: Option<u32>| match (p, q) {
                (None, None) => true,
                (Some(p), Some(q)) => same_expr(fa, p, fb, q, 0),
                _ => false,
            };
            d1 == d2
                && i1 == i2
                && same_opt(*a1, *a2)
                && same_opt(default(fa, *d1, *i1), default(fb, *d2, *i2))
        }
        (
            PBind::Assign(_)
            | PBind::Annotated(Some(_))
            | PBind::Unpack { .. }
            | PBind::Iter(_)
            | PBind::Param { .. },
            _,
        )
        | (
            _,
            PBind::Assign(_)
            | PBind::Annotated(Some(_))
            | PBind::Unpack { .. }
            | PBind::Iter(_)
            | PBind::Param { .. },
        ) => false,
        _ => x == y,
    }
}

/// Structural equality of two expressions (sub-expressions by structure, not by index). Deep
/// or cyclic expressions compare unequal, which only costs the fast path.
fn same_expr(fa: &PyFile, x: u32, fb: &PyFile, y: u32, depth: u32) -> bool {
    if depth > 64 {
        return false;
    }
    match (fa.exprs.get(x as usize), fb.exprs.get(y as usize)) {
        (None, None) => true,
        (Some(p), Some(q)) => {
            // What reaches a name read, and the events on an object's path, are compared
            // like the expression (a read that events reach counts as different).
            if fa.reach(x) != fb.reach(y)
                || fa.event_read(x).is_some()
                || fb.event_read(y).is_some()
            {
                return false;
            }
            let (xs, ys) = (p.children(), q.children());
            if xs.is_empty() && ys.is_empty() {
                // Names, `super()`, lambdas and opaque expressions hold no sub-expressions.
                return p == q;
            }
            p.same_shape(q)
                && xs.len() == ys.len()
                && xs
                    .iter()
                    .zip(&ys)
                    .all(|(&x, &y)| same_expr(fa, x, fb, y, depth + 1))
                // A call's value can depend on its arguments (`ident(a)` → `ident(b)`), which
                // are kept beside the expression, not among its children.
                && (!matches!(p, PExpr::Call(_)) || same_args(fa, x, fb, y, depth))
        }
        _ => false,
    }
}

/// Whether calls `x` of `fa` and `y` of `fb` pass the same arguments, in the same form.
fn same_args(fa: &PyFile, x: u32, fb: &PyFile, y: u32, depth: u32) -> bool {
    let (xs, ys) = (fa.args(x), fb.args(y));
    xs.len() == ys.len()
        && xs.iter().zip(ys).all(|(a, b)| match (a, b) {
            (PArg::Pos(a), PArg::Pos(b))
            | (PArg::Star(a), PArg::Star(b))
            | (PArg::DoubleStar(a), PArg::DoubleStar(b)) => same_expr(fa, *a, fb, *b, depth + 1),
            (PArg::Kw(ka, a), PArg::Kw(kb, b)) => ka == kb && same_expr(fa, *a, fb, *b, depth + 1),
            _ => false,
        })
}
