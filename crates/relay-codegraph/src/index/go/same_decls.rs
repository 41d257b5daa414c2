//! What a Go file offers other files, compared between two versions of it (the fast path of an
//! update): when the declarations are the same (only function bodies, comments, doc comments,
//! parameter names or line positions changed), the Go resolution tables would be rebuilt
//! identically except for the lines of the file's own types and package clause. Those lines are
//! patched in the kept [`GoIndex`] ([`patch_lines`]): no other file's symbols or edges can
//! change, because other files resolve against the tables alone and the table entries that
//! carry lines are only emitted into the declaring file's output. Other edits patch the tables
//! per package (`patch`) and re-resolve the files that can see a changed name.

use std::collections::HashSet;

use super::GoIndex;
use super::facts::{GoFile, GoTypeDecl, GoValueDecl};

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
