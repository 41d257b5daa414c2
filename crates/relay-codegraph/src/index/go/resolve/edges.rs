//! Go edge emission: each body's references resolved into [`Edge`]s, and the `implements`
//! edges of the types a file declares.

use crate::index::facts::FileFacts;
use crate::index::go::eval::{Eval, Val, VarUses};
use crate::index::go::facts::{GExpr, GRefKind, GType, GoFile};
use crate::index::go::tables::{BUILTIN_TYPES, GoIndex, TypeR};
use crate::model::{Confidence, Edge, EdgeKind};

/// Where an edge points.
enum Target {
    /// A symbol of the repository.
    Symbol(String),
    /// A member of a package outside the repository, by its qualified name ([`Edge::external`]).
    External(String),
    Unresolved,
}

/// Resolves the references of one Go file into edges.
pub(crate) fn resolve_file(
    index: &GoIndex,
    facts: &FileFacts,
    go_file: &GoFile,
    edges: &mut Vec<Edge>,
) {
    let ctx = index.file_ctx(go_file);
    let file = &facts.rel;
    // Imports, from the package.
    for imp in &go_file.imports {
        let to = index.pkgs.contains_key(&imp.path).then(|| imp.path.clone());
        edges.push(Edge {
            kind: EdgeKind::Imports,
            from: go_file.pkg_path.clone(),
            to,
            to_name: imp.path.clone(),
            file: file.clone(),
            line: imp.line,
            confidence: Confidence::Exact,
            external: false,
        });
    }
    for (body_id, body) in go_file.bodies.iter().enumerate() {
        let mut eval = Eval::new(index, &ctx, body);
        for reference in &body.refs {
            eval.touched.clear();
            let mut push = |kind: EdgeKind, target: Target, confidence: Confidence| {
                let (to, external) = match target {
                    Target::Symbol(to) => (Some(to), false),
                    Target::External(to) => (Some(to), true),
                    Target::Unresolved => (None, false),
                };
                edges.push(Edge {
                    kind,
                    from: body.owner.clone(),
                    to,
                    to_name: reference.name.clone(),
                    file: file.clone(),
                    line: reference.line,
                    confidence,
                    external,
                });
            };
            match reference.kind {
                GRefKind::Call => {
                    let callee = match body.exprs.get(reference.expr as usize) {
                        Some(GExpr::Call(c)) => *c,
                        _ => continue,
                    };
                    // An immediately called function literal: its body is already attributed.
                    if matches!(body.exprs.get(callee as usize), Some(GExpr::FuncLit(_))) {
                        continue;
                    }
                    match eval.eval(callee, VarUses::Record) {
                        Val::Func {
                            qname,
                            inferred,
                            dispatch,
                            ..
                        } => {
                            let conf = if inferred {
                                Confidence::Inferred
                            } else {
                                Confidence::Exact
                            };
                            // `err.Error()` on the predeclared `error`: no symbol declares it.
                            let to = if qname.is_empty() {
                                Target::Unresolved
                            } else {
                                Target::Symbol(qname)
                            };
                            push(EdgeKind::Calls, to, conf);
                            // Through an interface: each implementation of the receiver's
                            // static type that flows there (`dynamic`).
                            let targets = dispatch.as_ref().and_then(|key| index.impls.get(key));
                            let site = index.flow.site(file, body_id as u32, reference.expr);
                            for target in targets.into_iter().flatten() {
                                if let Some(Some(arriving)) = site
                                    && arriving.binary_search(&target.ty).is_err()
                                {
                                    continue;
                                }
                                push(
                                    EdgeKind::Calls,
                                    Target::Symbol(target.method.clone()),
                                    Confidence::Dynamic,
                                );
                            }
                        }
                        Val::Type(TypeR::Named(q)) => {
                            push(EdgeKind::Uses, Target::Symbol(q), Confidence::Exact)
                        }
                        // A conversion to a type of a package outside the repository.
                        Val::Type(TypeR::External(q)) => {
                            push(EdgeKind::Uses, Target::External(q), Confidence::Exact)
                        }
                        Val::Type(_) | Val::Builtin => {}
                        // A function or method of a package outside the repository.
                        Val::External(q) => {
                            push(EdgeKind::Calls, Target::External(q), Confidence::Exact)
                        }
                        _ => {
                            push(EdgeKind::Calls, Target::Unresolved, Confidence::Exact);
                            // A function value: each function that flows there (`dynamic`).
                            if let Some(Some(arriving)) =
                                index.flow.site(file, body_id as u32, reference.expr)
                            {
                                for f in arriving {
                                    if !index.types.contains_key(f) {
                                        push(
                                            EdgeKind::Calls,
                                            Target::Symbol(f.clone()),
                                            Confidence::Dynamic,
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
                GRefKind::Use => {
                    let expr = body.exprs.get(reference.expr as usize);
                    match expr {
                        Some(GExpr::Type(t)) => match index.resolve_type(&ctx, t) {
                            TypeR::Named(q) => {
                                push(EdgeKind::Uses, Target::Symbol(q), Confidence::Exact)
                            }
                            TypeR::External(q) => {
                                push(EdgeKind::Uses, Target::External(q), Confidence::Exact)
                            }
                            TypeR::Builtin(_) => {}
                            _ => {
                                if !matches!(&**t, GType::Named { pkg: None, name } if BUILTIN_TYPES.contains(&name.as_str()))
                                {
                                    push(EdgeKind::Uses, Target::Unresolved, Confidence::Exact);
                                }
                            }
                        },
                        _ => match eval.eval(reference.expr, VarUses::Record) {
                            Val::Type(TypeR::Named(q)) => {
                                push(EdgeKind::Uses, Target::Symbol(q), Confidence::Exact)
                            }
                            // A const, var or field of a package outside the repository.
                            Val::External(q) => {
                                push(EdgeKind::Uses, Target::External(q), Confidence::Exact)
                            }
                            _ => {}
                        },
                    }
                }
            }
            for var in std::mem::take(&mut eval.touched) {
                edges.push(Edge {
                    kind: EdgeKind::Uses,
                    from: body.owner.clone(),
                    to: Some(var),
                    to_name: reference.name.clone(),
                    file: file.clone(),
                    line: reference.line,
                    confidence: Confidence::Exact,
                    external: false,
                });
            }
        }
    }
}

/// `implements` edges whose concrete type is declared in `file`.
pub(crate) fn implements_edges(index: &GoIndex, file: &str, edges: &mut Vec<Edge>) {
    for implementation in index.implements.get(file).into_iter().flatten() {
        let interface = &implementation.interface;
        edges.push(Edge {
            kind: EdgeKind::Implements,
            from: implementation.ty.clone(),
            to: Some(interface.clone()),
            to_name: interface.rsplit('/').next().unwrap_or(interface).to_owned(),
            file: file.to_owned(),
            line: implementation.line,
            confidence: implementation.confidence,
            external: false,
        });
    }
}
