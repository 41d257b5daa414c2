//! Go expression evaluation: what each expression of a body denotes (a package, a type, a
//! value of some type, a function) against the [`GoIndex`] tables.

use super::facts::{GBind, GExpr, GoBody, GoFile, GoValueDecl};
use super::tables::{
    BUILTIN_FUNCS, BUILTIN_TYPES, ERROR_DISPATCH, FileCtx, Found, GoIndex, Member, TypeR,
};

/// Nesting depth of one expression's evaluation (calls in arguments in selectors …). Bounds the
/// recursion on generated or adversarial code so the indexer's stack cannot overflow; deeper
/// sub-expressions evaluate to "unknown" (no edge) instead.
const MAX_EXPRESSION_DEPTH: u32 = 24;

impl GoIndex {
    /// The type of package-level var `v` of `g` inferred from its initializer against the
    /// current tables (`Unknown` if it has none).
    pub(crate) fn infer_var_type(&self, go_file: &GoFile, value: &GoValueDecl) -> TypeR {
        let Some((body, expr, idx)) = value.init else {
            return TypeR::Unknown;
        };
        let Some(body) = go_file.bodies.get(body) else {
            return TypeR::Unknown;
        };
        let ctx = self.file_ctx(go_file);
        Eval::new(self, &ctx, body).value_type(expr, idx)
    }

    /// Evaluates the operand of every selector `x.name` in `g` with `name` in `names` and
    /// calls `hit` with what it denotes; `true` as soon as `hit` returns `true`. (The
    /// incremental update uses it to tell whether a changed lookup can reach a file.)
    pub(crate) fn probe_selectors(
        &self,
        go_file: &GoFile,
        names: &std::collections::BTreeSet<String>,
        hit: &mut dyn FnMut(&Probe<'_>) -> bool,
    ) -> bool {
        let ctx = self.file_ctx(go_file);
        for body in &go_file.bodies {
            let mut eval: Option<Eval<'_>> = None;
            for expr in &body.exprs {
                let GExpr::Selector(operand, name) = expr else {
                    continue;
                };
                if !names.contains(name.as_str()) {
                    continue;
                }
                let eval = eval.get_or_insert_with(|| Eval::new(self, &ctx, body));
                let val = eval.eval(*operand, VarUses::Ignore);
                let mut probe = Probe {
                    name,
                    pkg: None,
                    ty: None,
                    method: None,
                };
                match &val {
                    Val::Pkg(p) => probe.pkg = Some(p.clone()),
                    Val::Type(t) | Val::Value { ty: t, .. } => {
                        if let TypeR::Named(q) = t.deref() {
                            probe.ty = Some(q.clone());
                        }
                        if let Some(Found::Method { qname, .. }) = self.lookup_member(t, name) {
                            probe.method = Some(qname);
                        }
                    }
                    _ => {}
                }
                if hit(&probe) {
                    return true;
                }
            }
        }
        false
    }
}

/// Whether `t` is the predeclared `error`.
fn is_error(t: &TypeR) -> bool {
    matches!(t, TypeR::Builtin(b) if b == "error")
}

/// A selector `x.name` seen by [`GoIndex::probe_selectors`].
#[derive(Debug)]
pub(crate) struct Probe<'a> {
    pub name: &'a str,
    /// The package `x` names.
    pub pkg: Option<String>,
    /// The declared type `x` is or has (pointers dereferenced).
    pub ty: Option<String>,
    /// The method `x.name` resolves to.
    pub method: Option<String>,
}

/// Whether evaluating a reference records the package-level vars it reads (in
/// [`Eval::touched`], for `uses` edges). Sub-expressions whose vars are not the reference's own
/// uses (a callee's operand, a binding's initializer) ignore them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum VarUses {
    Record,
    Ignore,
}

/// What an expression denotes.
#[derive(Debug, Clone)]
pub(super) enum Val {
    Pkg(String),
    Type(TypeR),
    /// A value of type `ty`; `inferred` when the type comes through a call's results or a
    /// binding's initializer rather than a declaration (the edges it leads to are `inferred`).
    Value {
        ty: TypeR,
        inferred: bool,
    },
    Func {
        /// Empty for the predeclared `error`'s `Error` (no symbol declares it).
        qname: String,
        results: Vec<TypeR>,
        iface: bool,
        inferred: bool,
        /// For a method called through an interface: the [`GoIndex::impls`] key
        /// (`<interface qname>.<method>`) of the receiver's static type.
        dispatch: Option<String>,
    },
    Builtin,
    /// A member of a package outside the repository (`client.NewClient`, `c.Do` on a value of
    /// an external type), by its qualified name (`example.com/sdk/client.NewClient`): what it
    /// is and returns is unknown, but the name is what the providing repository calls it.
    External(String),
    Unknown,
}

/// Evaluates the expressions of one body.
pub(super) struct Eval<'a> {
    index: &'a GoIndex,
    ctx: &'a FileCtx,
    body: &'a GoBody,
    memo: Vec<Option<Val>>,
    /// Package-level vars/consts touched while evaluating the current reference.
    pub(super) touched: Vec<String>,
    depth: u32,
}

impl<'a> Eval<'a> {
    pub(super) fn new(index: &'a GoIndex, ctx: &'a FileCtx, body: &'a GoBody) -> Self {
        Eval {
            index,
            ctx,
            body,
            memo: vec![None; body.bindings.len()],
            touched: Vec::new(),
            depth: 0,
        }
    }

    pub(super) fn value_type(&mut self, expr: u32, idx: u32) -> TypeR {
        match self.binding_val(&GBind::Init { expr, idx }) {
            Val::Value { ty: t, .. } => t,
            _ => TypeR::Unknown,
        }
    }

    fn binding(&mut self, binding_id: u32) -> Val {
        if let Some(Some(v)) = self.memo.get(binding_id as usize) {
            return v.clone();
        }
        let Some(bind) = self.body.bindings.get(binding_id as usize) else {
            return Val::Unknown;
        };
        // Guard against cycles while evaluating.
        if let Some(slot) = self.memo.get_mut(binding_id as usize) {
            *slot = Some(Val::Unknown);
        }
        let v = self.binding_val(bind);
        if let Some(slot) = self.memo.get_mut(binding_id as usize) {
            *slot = Some(v.clone());
        }
        v
    }

    fn binding_val(&mut self, bind: &GBind) -> Val {
        match bind {
            GBind::Declared(t) => Val::Value {
                ty: self.index.resolve_type(self.ctx, t),
                inferred: false,
            },
            GBind::Init { expr, idx } => {
                let operand = self
                    .body
                    .exprs
                    .get(*expr as usize)
                    .cloned()
                    .unwrap_or(GExpr::Unknown);
                if let GExpr::Call(callee) = operand {
                    match self.eval(callee, VarUses::Ignore) {
                        Val::Func { results, .. } => match results.get(*idx as usize) {
                            Some(t) => Val::Value {
                                ty: t.clone(),
                                inferred: true,
                            },
                            None => Val::Unknown,
                        },
                        Val::Type(t) if *idx == 0 => Val::Value {
                            ty: t,
                            inferred: false,
                        },
                        Val::Value {
                            ty: TypeR::Func(results),
                            ..
                        } => match results.get(*idx as usize) {
                            Some(t) => Val::Value {
                                ty: t.clone(),
                                inferred: true,
                            },
                            None => Val::Unknown,
                        },
                        _ => Val::Unknown,
                    }
                } else if *idx == 0 {
                    match self.eval(*expr, VarUses::Ignore) {
                        Val::Value { ty: t, inferred } => Val::Value { ty: t, inferred },
                        Val::Func {
                            qname,
                            results,
                            iface,
                            dispatch,
                            ..
                        } => Val::Func {
                            qname,
                            results,
                            iface,
                            inferred: true,
                            dispatch,
                        },
                        _ => Val::Unknown,
                    }
                } else {
                    Val::Unknown
                }
            }
            GBind::RangeKey(operand) => match self.eval(*operand, VarUses::Ignore) {
                Val::Value { ty: t, inferred } => match self.index.underlying(t.deref()) {
                    TypeR::Map(k, _) => Val::Value {
                        ty: (**k).clone(),
                        inferred,
                    },
                    TypeR::Chan(v) => Val::Value {
                        ty: (**v).clone(),
                        inferred,
                    },
                    _ => Val::Unknown,
                },
                _ => Val::Unknown,
            },
            GBind::RangeValue(operand) => match self.eval(*operand, VarUses::Ignore) {
                Val::Value { ty: t, inferred } => match self.index.underlying(t.deref()) {
                    TypeR::Map(_, v) | TypeR::Slice(v) => Val::Value {
                        ty: (**v).clone(),
                        inferred,
                    },
                    _ => Val::Unknown,
                },
                _ => Val::Unknown,
            },
            GBind::TypeName | GBind::Unknown => Val::Unknown,
        }
    }

    fn member(&mut self, package_member: &Member, var_uses: VarUses) -> Val {
        match package_member {
            Member::Func { qname, results } => Val::Func {
                qname: qname.clone(),
                results: results.clone(),
                iface: false,
                inferred: false,
                dispatch: None,
            },
            Member::Type { qname } => Val::Type(TypeR::Named(qname.clone())),
            Member::Var { qname, .. } => {
                if var_uses == VarUses::Record {
                    self.touched.push(qname.clone());
                }
                let t = self
                    .index
                    .var_types
                    .get(qname)
                    .cloned()
                    .unwrap_or(TypeR::Unknown);
                Val::Value {
                    ty: t,
                    inferred: false,
                }
            }
        }
    }

    pub(super) fn eval(&mut self, expr: u32, var_uses: VarUses) -> Val {
        self.depth += 1;
        let v = if self.depth > MAX_EXPRESSION_DEPTH {
            Val::Unknown
        } else {
            self.eval_inner(expr, var_uses)
        };
        self.depth -= 1;
        v
    }

    fn eval_inner(&mut self, expr_id: u32, var_uses: VarUses) -> Val {
        let Some(expr) = self.body.exprs.get(expr_id as usize) else {
            return Val::Unknown;
        };
        let index = self.index;
        match expr {
            GExpr::Local(b) => self.binding(*b),
            GExpr::Free(name) => {
                if let Some(m) = index.pkgs.get(&self.ctx.pkg_path).and_then(|m| m.get(name)) {
                    return self.member(m, var_uses);
                }
                if let Some(path) = self.ctx.imports.get(name) {
                    return Val::Pkg(path.clone());
                }
                for dot in &self.ctx.dot_imports {
                    if let Some(m) = index.pkgs.get(dot).and_then(|m| m.get(name)) {
                        return self.member(m, var_uses);
                    }
                }
                if BUILTIN_TYPES.contains(&name.as_str()) {
                    Val::Type(TypeR::Builtin(name.clone()))
                } else if BUILTIN_FUNCS.contains(&name.as_str()) {
                    Val::Builtin
                } else {
                    Val::Unknown
                }
            }
            GExpr::Selector(operand, field) => match self.eval(*operand, var_uses) {
                Val::Pkg(path) => match index.pkgs.get(&path) {
                    Some(members) => match members.get(field) {
                        Some(m) => self.member(m, var_uses),
                        None => Val::Unknown,
                    },
                    None => Val::External(format!("{path}.{field}")),
                },
                Val::Type(t) => match index.lookup_member(&t, field) {
                    Some(Found::Method {
                        qname,
                        results,
                        iface,
                    }) => Val::Func {
                        qname,
                        results,
                        iface,
                        inferred: false,
                        dispatch: None,
                    },
                    _ => Val::Unknown,
                },
                Val::Value { ty: t, inferred } => match index.lookup_member(&t, field) {
                    Some(Found::Method {
                        qname,
                        results,
                        iface,
                    }) => {
                        let dispatch = iface.then(|| index.dispatch_key(&t, &qname, field));
                        Val::Func {
                            qname,
                            results,
                            iface,
                            inferred,
                            dispatch,
                        }
                    }
                    Some(Found::Field(ft, _)) => Val::Value { ty: ft, inferred },
                    None if field == "Error" && is_error(&t) => Val::Func {
                        qname: String::new(),
                        results: vec![TypeR::Builtin("string".into())],
                        iface: true,
                        inferred,
                        dispatch: Some(ERROR_DISPATCH.to_owned()),
                    },
                    // A method or field of a type outside the repository.
                    None => match t.deref() {
                        TypeR::External(q) => Val::External(format!("{q}.{field}")),
                        _ => Val::Unknown,
                    },
                },
                _ => Val::Unknown,
            },
            GExpr::Call(callee) => match self.eval(*callee, VarUses::Ignore) {
                Val::Func { results, .. } => match results.first() {
                    Some(t) => Val::Value {
                        ty: t.clone(),
                        inferred: true,
                    },
                    None => Val::Unknown,
                },
                Val::Type(t) => Val::Value {
                    ty: t,
                    inferred: false,
                },
                Val::Value {
                    ty: TypeR::Func(results),
                    ..
                } => match results.first() {
                    Some(t) => Val::Value {
                        ty: t.clone(),
                        inferred: true,
                    },
                    None => Val::Unknown,
                },
                _ => Val::Unknown,
            },
            GExpr::Composite(t) | GExpr::Assert(t, _) | GExpr::Convert(t, _) => Val::Value {
                ty: index.resolve_type(self.ctx, t),
                inferred: false,
            },
            GExpr::Type(t) => Val::Type(index.resolve_type(self.ctx, t)),
            GExpr::Index(operand) => match self.eval(*operand, var_uses) {
                Val::Value { ty: t, inferred } => match index.underlying(t.deref()) {
                    TypeR::Slice(e) | TypeR::Map(_, e) => Val::Value {
                        ty: (**e).clone(),
                        inferred,
                    },
                    _ => Val::Unknown,
                },
                f @ (Val::Func { .. } | Val::Type(_)) => f,
                _ => Val::Unknown,
            },
            GExpr::FuncLit(results) => Val::Value {
                ty: TypeR::Func(
                    results
                        .iter()
                        .map(|t| index.resolve_type(self.ctx, t))
                        .collect(),
                ),
                inferred: false,
            },
            GExpr::Literal | GExpr::Nil | GExpr::Unknown => Val::Unknown,
        }
    }
}
