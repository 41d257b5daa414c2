//! The fast path of [`super::Indexer::update`]: when what a changed file offers to other files is
//! the same as before, only that file is re-resolved.
//!
//! - Go: when the declarations are the same (only function bodies, comments, doc comments,
//!   parameter names or line positions changed), the Go resolution tables would be rebuilt
//!   identically except for the lines of the file's own types and package clause. Those lines are
//!   patched in the kept [`GoIndex`]: no other file's symbols or edges can change, because other
//!   files resolve against the tables alone and the table entries that carry lines are only
//!   emitted into the declaring file's output.
//! - Python: other files read a module's definitions, variables, the bindings of the scopes they
//!   can reach (the module, classes, and the scopes that names in base classes, return
//!   annotations, `self.x = …` values and those bindings are looked up in: [`read_scopes`]) and
//!   the expressions those reach; its references (calls, uses), lines, signature text,
//!   docstrings and the bindings of other function scopes (e.g. a renamed parameter) are its
//!   own. When the part others read is the same (expressions compared by structure, so a new
//!   call statement in a body, which renumbers the expressions, still qualifies), the kept
//!   Python tables ([`super::python::PyTables`]) are reused and only the changed file is
//!   re-resolved.
//!
//! Other edits take the slow path: Go tables patched per package (`go::patch`), Python tables
//! rebuilt, and the files that can see a changed name re-resolved (`go::patch`, `python::changed_names`).

use std::collections::{BTreeSet, HashSet};

use super::go::GoIndex;
use super::go::{GoFile, GoTypeDecl, GoValueDecl};
use super::python::{DefKind, PBind, PExpr, PyFile, PyScope};

/// Whether `a` and `b` contribute the same entries to [`GoIndex::build`] up to line numbers.
///
/// Compared: the package clause (name, path, whether it has a doc comment), imports (alias and
/// path), every type declaration (everything but lines, signature text and doc), functions and
/// methods (name, receiver, parameter and result types), package-level consts/vars (name, kind,
/// declared type, and the initializer expression the tables evaluate for the var's type).
/// Anything else (function bodies, lines, doc comments, signature text) is not read by the build.
pub(crate) fn same_go_decls(a: &GoFile, b: &GoFile) -> bool {
    a.pkg_name == b.pkg_name
        && a.pkg_path == b.pkg_path
        && a.pkg_doc.is_some() == b.pkg_doc.is_some()
        && a.imports.len() == b.imports.len()
        && a.imports
            .iter()
            .zip(&b.imports)
            .all(|(x, y)| x.alias == y.alias && x.path == y.path)
        && a.types.len() == b.types.len()
        && a.types.iter().zip(&b.types).all(|(x, y)| same_type(x, y))
        && a.funcs.len() == b.funcs.len()
        && a.funcs
            .iter()
            .zip(&b.funcs)
            .all(|(x, y)| x.name == y.name && x.recv == y.recv && x.sig == y.sig)
        && a.values.len() == b.values.len()
        && a.values
            .iter()
            .zip(&b.values)
            .all(|(x, y)| same_value(a, x, b, y))
}

fn same_type(x: &GoTypeDecl, y: &GoTypeDecl) -> bool {
    x.name == y.name
        && x.kind == y.kind
        && x.alias == y.alias
        && x.underlying == y.underlying
        && x.constraint == y.constraint
        && x.embeds == y.embeds
        && x.fields.len() == y.fields.len()
        && x.fields
            .iter()
            .zip(&y.fields)
            .all(|(f, g)| f.name == g.name && f.embedded == g.embedded && f.ty == g.ty)
        && x.methods.len() == y.methods.len()
        && x.methods
            .iter()
            .zip(&y.methods)
            .all(|(m, n)| m.name == n.name && m.sig == n.sig)
}

pub(crate) fn same_value(fa: &GoFile, x: &GoValueDecl, fb: &GoFile, y: &GoValueDecl) -> bool {
    if x.name != y.name || x.is_const != y.is_const || x.ty != y.ty {
        return false;
    }
    match (x.init, y.init) {
        (None, None) => true,
        (Some((bx, ex, ix)), Some((by, ey, iy))) => {
            if ex != ey || ix != iy {
                return false;
            }
            match (fa.bodies.get(bx), fb.bodies.get(by)) {
                (None, None) => true,
                // The tables evaluate the initializer over the body's expressions and bindings.
                (Some(p), Some(q)) => p.exprs == q.exprs && p.bindings == q.bindings,
                _ => false,
            }
        }
        _ => false,
    }
}

/// Updates the line-carrying entries of `index` contributed by file `rel`, whose new facts `g`
/// declare the same things as before ([`same_go_decls`]): the package home line, the lines of the
/// types the file owns, and the lines of those types' `implements` entries.
pub(crate) fn patch_lines(index: &mut GoIndex, rel: &str, g: &GoFile) {
    if let Some(home) = index.pkg_home.get_mut(&g.pkg_path)
        && home.file == rel
    {
        home.line = g.pkg_line;
    }
    // The build keeps the first declaration of a name in the owning file.
    let mut seen: HashSet<&str> = HashSet::new();
    for t in &g.types {
        if !seen.insert(&t.name) {
            continue;
        }
        let q = format!("{}.{}", g.pkg_path, t.name);
        if let Some(info) = index.types.get_mut(&q)
            && info.file == rel
        {
            info.line = t.line;
        }
    }
    let GoIndex {
        implements, types, ..
    } = index;
    if let Some(list) = implements.get_mut(rel) {
        for entry in list {
            if let Some(info) = types.get(&entry.ty) {
                entry.line = info.line;
            }
        }
    }
}

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
        }
        _ => false,
    }
}
