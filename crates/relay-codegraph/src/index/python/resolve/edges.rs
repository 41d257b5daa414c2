//! Edge emission: each module's imports and references resolved into [`Edge`]s.

use crate::index::facts::FileFacts;
use crate::index::python::eval::Eval;
use crate::index::python::tables::{FilesRead, PyIndex, ReadSet, Val, Vals};
use crate::index::python::{PArg, PExpr, PRefKind, PyFile};
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
) -> (ReadSet, FilesRead) {
    let Some(&fi) = index
        .positions
        .get(&(std::ptr::from_ref::<PyFile>(p) as usize))
    else {
        return Default::default();
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
            external: false,
        });
    }
    let mut eval = Eval::new(index, &index.flow);
    eval.reads = Some(ReadSet::default());
    eval.files_read = Some(FilesRead::default());
    for r in &p.refs {
        eval.touched.clear();
        eval.depth = 0;
        let from = &p.owners[r.owner as usize];
        let mut out = |kind: EdgeKind, to: Target, confidence: Confidence| {
            edges.push(Edge {
                kind,
                from: from.clone(),
                to: to.qname,
                to_name: r.name.clone(),
                file: file.clone(),
                line: r.line,
                confidence,
                external: to.external,
            });
        };
        match r.kind {
            PRefKind::Call => {
                let callee = match p.exprs.get(r.expr as usize) {
                    Some(PExpr::Call(c)) => *c,
                    _ => continue,
                };
                let vals = eval.expr(fi, callee, true);
                let targets = call_targets(&mut eval, fi, r.expr, &vals);
                emit(&targets, &vals, &mut out);
            }
            PRefKind::Iter => {
                let vals = eval.expr(fi, r.expr, true);
                let mut targets = Vec::new();
                for v in &vals {
                    if let Val::Instance(c, inf) = v {
                        let iters = eval.class_attr(c, "__iter__", 0, *inf, true);
                        targets.extend(functions(&iters));
                        for it in eval.call_result(usize::MAX, 0, &iters) {
                            if let Val::Instance(d, inf) = it {
                                let next = eval.class_attr(&d, "__next__", 0, inf, true);
                                targets.extend(functions(&next));
                            }
                        }
                    }
                }
                targets.sort();
                targets.dedup();
                let several = targets.len() > 1;
                for (t, inf, external) in targets {
                    out(
                        EdgeKind::Calls,
                        Target::resolved(t, external),
                        conf(inf || several),
                    );
                }
            }
            PRefKind::With | PRefKind::AsyncWith => {
                let (enter, exit) = if r.kind == PRefKind::With {
                    ("__enter__", "__exit__")
                } else {
                    ("__aenter__", "__aexit__")
                };
                let vals = eval.expr(fi, r.expr, true);
                let mut targets = Vec::new();
                for v in &vals {
                    if let Val::Instance(c, inf) = v {
                        for method in [enter, exit] {
                            let found = eval.class_attr(c, method, 0, *inf, true);
                            targets.extend(functions(&found));
                        }
                    }
                }
                targets.sort();
                targets.dedup();
                let several = vals.len() > 1 || vals.contains(&Val::Unknown);
                for (t, inf, external) in targets {
                    out(
                        EdgeKind::Calls,
                        Target::resolved(t, external),
                        conf(inf || several),
                    );
                }
            }
            PRefKind::Use => {
                let vals = eval.expr(fi, r.expr, true);
                if let [Val::Class(c, inf)] = vals.as_slice() {
                    out(EdgeKind::Uses, Target::symbol(c), conf(*inf));
                }
            }
            PRefKind::Inherit => match eval.expr(fi, r.expr, true).as_slice() {
                [Val::Class(c, inf)] => out(EdgeKind::Inherits, Target::symbol(c), conf(*inf)),
                // A base class of a module outside the repository, by its qualified name (what
                // a related repository providing that module calls it).
                [Val::External(q)] => out(
                    EdgeKind::Inherits,
                    Target::resolved(q.clone(), true),
                    Confidence::Exact,
                ),
                _ if r.name == "object" => {}
                _ => out(EdgeKind::Inherits, Target::UNRESOLVED, Confidence::Exact),
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
                external: false,
            });
        }
    }
    (
        eval.reads.take().unwrap_or_default(),
        eval.files_read.take().unwrap_or_default(),
    )
}

/// The target of an edge: a qname (`None`: unresolved), and whether it is outside the
/// repository ([`Edge::external`]).
struct Target {
    qname: Option<String>,
    external: bool,
}

impl Target {
    const UNRESOLVED: Target = Target {
        qname: None,
        external: false,
    };

    fn symbol(qname: &str) -> Target {
        Target::resolved(qname.to_owned(), false)
    }

    fn resolved(qname: String, external: bool) -> Target {
        Target {
            qname: Some(qname),
            external,
        }
    }
}

/// A resolved call target: qname, whether it was inferred, and whether it is an external name
/// ([`Val::External`]).
type CallTarget = (String, bool, bool);

/// The functions among `vals`.
fn functions(vals: &[Val]) -> Vec<CallTarget> {
    vals.iter()
        .filter_map(|v| match v {
            Val::Func(f, inf) | Val::Bound(f, inf) => Some((f.clone(), *inf, false)),
            _ => None,
        })
        .collect()
}

/// What calling `vals` at call expression `call` of file `fi` reaches: functions and methods,
/// a class and its `__init__`, an instance's `__call__`, external names, and the callbacks that
/// `map`/`filter`/`sorted(key=)`/`min`/`max` call.
fn call_targets(eval: &mut Eval<'_, '_>, fi: usize, call: u32, vals: &Vals) -> Vec<CallTarget> {
    let mut targets = Vec::new();
    for v in vals {
        match v {
            Val::Func(f, inf) | Val::Bound(f, inf) => targets.push((f.clone(), *inf, false)),
            Val::Class(c, inf) => {
                targets.push((c.clone(), *inf, false));
                let init = eval.class_attr(c, "__init__", 0, *inf, true);
                targets.extend(functions(&init));
            }
            Val::Instance(c, inf) => {
                let call = eval.class_attr(c, "__call__", 0, *inf, true);
                targets.extend(functions(&call));
            }
            Val::External(q) | Val::ExternalMethod(q) => targets.push((q.clone(), false, true)),
            Val::Builtin(name) => {
                let file = eval.index.files[fi];
                let args = file.args(call);
                let callback = match (name.as_str(), args) {
                    ("map" | "filter", [PArg::Pos(f), ..]) => Some(*f),
                    ("sorted" | "min" | "max", _) => args.iter().find_map(|a| match a {
                        PArg::Kw(k, e) if k == "key" => Some(*e),
                        _ => None,
                    }),
                    _ => None,
                };
                if let Some(e) = callback {
                    let fs = eval.expr(fi, e, false);
                    let mut inner = Vec::new();
                    for f in &fs {
                        if matches!(
                            f,
                            Val::Func(..) | Val::Bound(..) | Val::Class(..) | Val::Instance(..)
                        ) {
                            inner.extend(call_targets(eval, fi, u32::MAX, &vec![f.clone()]));
                        }
                    }
                    targets.extend(
                        inner
                            .into_iter()
                            .map(|(t, _, external)| (t, true, external)),
                    );
                }
            }
            _ => {}
        }
    }
    targets.sort();
    targets.dedup();
    targets
}

/// Emits the call edges of one site: one per target (`inferred` when one of several, or when
/// the value could also be something unknown), or an unresolved edge when there is none.
fn emit(targets: &[CallTarget], vals: &Vals, out: &mut impl FnMut(EdgeKind, Target, Confidence)) {
    if targets.is_empty() {
        let builtin_only = !vals.is_empty() && vals.iter().all(|v| matches!(v, Val::Builtin(_)));
        if !builtin_only {
            out(EdgeKind::Calls, Target::UNRESOLVED, Confidence::Exact);
        }
        return;
    }
    // One of several values (a class and its `__init__` are one value).
    let values = vals
        .iter()
        .filter(|v| !matches!(v, Val::Builtin(_)))
        .count();
    let uncertain = values > 1 || vals.contains(&Val::Unknown);
    for (t, inf, external) in targets {
        out(
            EdgeKind::Calls,
            Target::resolved(t.clone(), *external),
            conf(*inf || uncertain),
        );
    }
}
