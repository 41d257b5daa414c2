//! Edge emission: each module's imports and references resolved into [`Edge`]s.

use super::eval::{Eval, Val};
use super::tables::PyIndex;
use super::{PExpr, PRefKind, PyFile};
use crate::index::facts::FileFacts;
use crate::model::{Confidence, Edge, EdgeKind};

fn conf(inferred: bool) -> Confidence {
    if inferred {
        Confidence::Inferred
    } else {
        Confidence::Exact
    }
}

/// Resolves the references of one module into edges.
pub(crate) fn resolve_file(
    index: &PyIndex<'_>,
    facts: &FileFacts,
    p: &PyFile,
    edges: &mut Vec<Edge>,
) {
    let Some(&fi) = index
        .positions
        .get(&(std::ptr::from_ref::<PyFile>(p) as usize))
    else {
        return;
    };
    let file = &facts.rel;
    for imp in &p.imports {
        let target = match &imp.name {
            Some(n) => index
                .module_file(&format!("{}.{n}", imp.module))
                .or_else(|| index.module_file(&imp.module)),
            None => index.module_file(&imp.module),
        };
        let written = match &imp.name {
            Some(n) => format!("{}.{n}", imp.module),
            None => imp.module.clone(),
        };
        edges.push(Edge {
            kind: EdgeKind::Imports,
            from: p.owners[imp.owner as usize].clone(),
            to: target.map(|i| index.files[i].module.clone()),
            to_name: written,
            file: file.clone(),
            line: imp.line,
            confidence: Confidence::Exact,
        });
    }
    let mut eval = Eval::new(index);
    for r in &p.refs {
        eval.touched.clear();
        eval.depth = 0;
        let from = &p.owners[r.owner as usize];
        let mut out = |kind: EdgeKind, to: Option<String>, confidence: Confidence| {
            edges.push(Edge {
                kind,
                from: from.clone(),
                to,
                to_name: r.name.clone(),
                file: file.clone(),
                line: r.line,
                confidence,
            });
        };
        match r.kind {
            PRefKind::Call => {
                let callee = match p.exprs.get(r.expr as usize) {
                    Some(PExpr::Call(c)) => *c,
                    _ => continue,
                };
                match eval.expr(fi, callee, true) {
                    Val::Func(f, inf) => out(EdgeKind::Calls, Some(f), conf(inf)),
                    Val::Class(c, inf) => {
                        out(EdgeKind::Calls, Some(c.clone()), conf(inf));
                        let mut init_eval = Eval::new(index);
                        if let Val::Func(init, _) =
                            init_eval.class_attr(&c, "__init__", 0, inf, false)
                        {
                            out(EdgeKind::Calls, Some(init), conf(inf));
                        }
                    }
                    Val::Builtin => {}
                    _ => out(EdgeKind::Calls, None, Confidence::Exact),
                }
            }
            PRefKind::Use => {
                if let Val::Class(c, inf) = eval.expr(fi, r.expr, true) {
                    out(EdgeKind::Uses, Some(c), conf(inf));
                }
            }
            PRefKind::Inherit => match eval.expr(fi, r.expr, true) {
                Val::Class(c, inf) => out(EdgeKind::Inherits, Some(c), conf(inf)),
                _ if r.name == "object" => {}
                Val::Builtin => out(EdgeKind::Inherits, None, Confidence::Exact),
                _ => out(EdgeKind::Inherits, None, Confidence::Exact),
            },
        }
        for var in std::mem::take(&mut eval.touched) {
            edges.push(Edge {
                kind: EdgeKind::Uses,
                from: from.clone(),
                to: Some(var),
                to_name: r.name.clone(),
                file: file.clone(),
                line: r.line,
                confidence: Confidence::Exact,
            });
        }
    }
}
