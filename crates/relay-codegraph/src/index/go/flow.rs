//! Go value flow: which concrete types (and which functions) can reach each receiver of a call
//! through an interface and each called function value, in the manner of VTA (variable type
//! analysis): values flow along assignments, initializers, arguments, returns and composite
//! literals into locals, parameters, results, struct fields and package-level vars, across the
//! whole indexed code, and the call's targets are narrowed to what arrives.
//!
//! A value whose static type is concrete is that type; a function or method named as a value is
//! that function. What the IR does not follow (a value read from a slice, a map or a channel, a
//! type assertion, a conversion to an interface, a function literal's parameters) is *unknown*,
//! and a call on an unknown receiver falls back to every implementation of the receiver's
//! static type. A parameter that receives nothing from the indexed code (an exported function no
//! one here calls) holds nothing, as in VTA: its calls get no dynamic edges. The sets are
//! bounded ([`MAX_VALUES`]) and the propagation terminates (sets only grow).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::eval::{Eval, Val, VarUses};
use super::facts::{GBind, GExpr, GRefKind, GSink, GoBody, GoFile, GoTypeKind};
use super::tables::{FileCtx, Found, GoFlow, GoIndex, Member, SiteValues, TypeR};
use crate::index::facts::FileFacts;

/// Values one node can hold before it counts as unknown (a receiver reached by more concrete
/// types than this is as good as its static type's implementations).
const MAX_VALUES: usize = 256;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    /// A parameter, result (`#r`), field, var, or dispatch-result node, by name.
    Global(String),
    /// A local: (file, body, binding).
    Local(u32, u32, u32),
}

/// Where a value comes from.
#[derive(Debug, Clone, Copy)]
enum Src {
    Top,
    Empty,
    Value(u32),
    Node(u32),
}

#[derive(Debug, Clone, Default)]
enum Set {
    #[default]
    Empty,
    Some(Vec<u32>),
    Top,
}

impl Set {
    /// Adds `other`; `true` if `self` grew.
    fn absorb(&mut self, other: &Set) -> bool {
        match (&mut *self, other) {
            (Set::Top, _) | (_, Set::Empty) => false,
            (_, Set::Top) => {
                *self = Set::Top;
                true
            }
            (Set::Empty, Set::Some(v)) => {
                *self = Set::Some(v.clone());
                true
            }
            (Set::Some(mine), Set::Some(theirs)) => {
                if theirs.iter().all(|t| mine.binary_search(t).is_ok()) {
                    return false;
                }
                let mut merged = Vec::with_capacity(mine.len() + theirs.len());
                let (mut i, mut j) = (0, 0);
                while i < mine.len() || j < theirs.len() {
                    let next = match (mine.get(i), theirs.get(j)) {
                        (Some(a), Some(b)) if a == b => {
                            i += 1;
                            j += 1;
                            *a
                        }
                        (Some(a), Some(b)) if a < b => {
                            i += 1;
                            *a
                        }
                        (Some(a), None) => {
                            i += 1;
                            *a
                        }
                        (_, Some(b)) => {
                            j += 1;
                            *b
                        }
                        (None, None) => break,
                    };
                    merged.push(next);
                }
                if merged.len() > MAX_VALUES {
                    *self = Set::Top;
                } else {
                    *mine = merged;
                }
                true
            }
        }
    }

    fn add(&mut self, value: u32) -> bool {
        self.absorb(&Set::Some(vec![value]))
    }
}

#[derive(Default)]
struct Graph {
    keys: HashMap<Key, u32>,
    sets: Vec<Set>,
    succs: Vec<Vec<u32>>,
    values: HashMap<String, u32>,
    names: Vec<String>,
    /// Functions named as values: their callers are not all visible.
    taken: HashSet<String>,
    /// Dispatch-result nodes already linked to their implementations' results.
    dispatched: HashSet<String>,
    /// Variadic functions: qname → (position of the variadic parameter, its elements' node).
    variadic: HashMap<String, (u32, String)>,
}

impl Graph {
    fn node(&mut self, key: Key) -> u32 {
        if let Some(id) = self.keys.get(&key) {
            return *id;
        }
        let id = self.sets.len() as u32;
        self.keys.insert(key, id);
        self.sets.push(Set::Empty);
        self.succs.push(Vec::new());
        id
    }

    fn global(&mut self, name: String) -> u32 {
        self.node(Key::Global(name))
    }

    fn value(&mut self, name: &str) -> u32 {
        if let Some(id) = self.values.get(name) {
            return *id;
        }
        let id = self.names.len() as u32;
        self.values.insert(name.to_owned(), id);
        self.names.push(name.to_owned());
        id
    }

    fn flow(&mut self, src: Src, to: u32) {
        match src {
            Src::Empty => {}
            Src::Top => self.sets[to as usize] = Set::Top,
            Src::Value(v) => {
                self.sets[to as usize].add(v);
            }
            Src::Node(from) if from != to => self.succs[from as usize].push(to),
            Src::Node(_) => {}
        }
    }

    fn solve(&mut self) {
        let mut queue: Vec<u32> = (0..self.sets.len() as u32).collect();
        let mut queued = vec![true; self.sets.len()];
        // Sets only grow and are bounded, so this ends; the cap is a second bound.
        let mut budget = self.sets.len().saturating_mul(MAX_VALUES + 2);
        while let Some(n) = queue.pop() {
            queued[n as usize] = false;
            if budget == 0 {
                break;
            }
            budget -= 1;
            if matches!(self.sets[n as usize], Set::Empty) {
                continue;
            }
            let set = self.sets[n as usize].clone();
            for i in 0..self.succs[n as usize].len() {
                let s = self.succs[n as usize][i];
                if self.sets[s as usize].absorb(&set) && !queued[s as usize] {
                    queued[s as usize] = true;
                    queue.push(s);
                }
            }
        }
    }

    fn resolve(&self, src: Src) -> SiteValues {
        let set = match src {
            Src::Top => return None,
            Src::Empty => return Some(Vec::new()),
            Src::Value(v) => return Some(vec![self.names[v as usize].clone()]),
            Src::Node(n) => &self.sets[n as usize],
        };
        match set {
            Set::Top => None,
            Set::Empty => Some(Vec::new()),
            Set::Some(v) => {
                let mut names: Vec<String> =
                    v.iter().map(|i| self.names[*i as usize].clone()).collect();
                names.sort();
                Some(names)
            }
        }
    }
}

/// Solves the value flow of `files` against the tables.
pub(crate) fn compute_flow(index: &GoIndex, files: &[(&FileFacts, &GoFile)]) -> GoFlow {
    let mut graph = Graph::default();
    let mut param_counts: HashMap<&str, usize> = HashMap::default();
    let mut pending: Vec<(u32, u32, u32, Src)> = Vec::new();
    // Arguments passed to a variadic parameter flow to the elements of its slice.
    for (_, go_file) in files {
        let ctx = index.file_ctx(go_file);
        for f in go_file.funcs.iter().filter(|f| f.sig.variadic) {
            let (Some(last), Some(position)) =
                (f.sig.params.last(), f.sig.params.len().checked_sub(1))
            else {
                continue;
            };
            let TypeR::Slice(elem) = index.resolve_type(&ctx, last) else {
                continue;
            };
            let Some(key) = elem_node(index, &elem) else {
                continue;
            };
            let qname = match &f.recv {
                Some(recv) => format!("{}.{recv}.{}", go_file.pkg_path, f.name),
                None => format!("{}.{}", go_file.pkg_path, f.name),
            };
            graph.variadic.insert(qname, (position as u32, key));
        }
    }
    for (fi, (_, go_file)) in files.iter().enumerate() {
        let ctx = index.file_ctx(go_file);
        for value in &go_file.values {
            let Some((body, expr, idx)) = value.init else {
                continue;
            };
            let Some(b) = go_file.bodies.get(body) else {
                continue;
            };
            let mut w = Walker::new(index, &ctx, b, fi as u32, body as u32, &mut graph);
            let src = w.src(expr, idx);
            let to = graph.global(format!("{}.{}", go_file.pkg_path, value.name));
            graph.flow(src, to);
        }
        for (bi, body) in go_file.bodies.iter().enumerate() {
            if !body.params.is_empty() {
                param_counts.insert(&body.owner, body.params.len());
            }
            let mut w = Walker::new(index, &ctx, body, fi as u32, bi as u32, &mut graph);
            w.bindings();
            w.flows();
            for (call, src) in w.sites() {
                pending.push((fi as u32, bi as u32, call, src));
            }
        }
    }
    // A function named as a value may be called from anywhere: its parameters are unknown.
    let taken: Vec<String> = graph.taken.iter().cloned().collect();
    for f in taken {
        for i in 0..param_counts.get(f.as_str()).copied().unwrap_or(0) {
            let node = graph.global(format!("{f}#{i}"));
            graph.flow(Src::Top, node);
        }
    }
    graph.solve();
    let mut flow = GoFlow::default();
    for (fi, bi, call, src) in pending {
        let file = &files[fi as usize].0.rel;
        flow.sites
            .entry(file.clone())
            .or_default()
            .insert((bi, call), graph.resolve(src));
    }
    flow
}

/// Builds one body's part of the graph.
struct Walker<'a, 'g> {
    index: &'a GoIndex,
    ctx: &'a FileCtx,
    body: &'a GoBody,
    eval: Eval<'a>,
    file: u32,
    body_id: u32,
    graph: &'g mut Graph,
}

impl<'a, 'g> Walker<'a, 'g> {
    fn new(
        index: &'a GoIndex,
        ctx: &'a FileCtx,
        body: &'a GoBody,
        file: u32,
        body_id: u32,
        graph: &'g mut Graph,
    ) -> Self {
        Walker {
            index,
            ctx,
            body,
            eval: Eval::new(index, ctx, body),
            file,
            body_id,
            graph,
        }
    }

    fn local(&mut self, binding: u32) -> u32 {
        self.graph
            .node(Key::Local(self.file, self.body_id, binding))
    }

    /// What flows into each binding from its declaration.
    fn bindings(&mut self) {
        let body = self.body;
        let params: HashMap<u32, usize> = body
            .params
            .iter()
            .enumerate()
            .filter(|(_, b)| **b != u32::MAX)
            .map(|(i, b)| (*b, i))
            .collect();
        let zeroed: HashSet<u32> = body.zeroed.iter().copied().collect();
        for (b, bind) in body.bindings.iter().enumerate() {
            let b = b as u32;
            let src = match bind {
                GBind::Init { expr, idx } => self.src(*expr, *idx),
                GBind::Declared(_) => match params.get(&b) {
                    Some(i) => Src::Node(self.graph.global(format!("{}#{i}", body.owner))),
                    None if zeroed.contains(&b) => Src::Empty,
                    None => Src::Top,
                },
                GBind::TypeName => continue,
                GBind::RangeValue(operand) => self.elem_src(*operand, false),
                GBind::RangeKey(operand) => self.elem_src(*operand, true),
                GBind::Unknown => Src::Top,
            };
            if matches!(src, Src::Empty) {
                continue;
            }
            let to = self.local(b);
            self.graph.flow(src, to);
        }
    }

    /// The body's recorded flows.
    fn flows(&mut self) {
        let body = self.body;
        for flow in &body.flows {
            let sinks = self.sinks(&flow.to);
            if sinks.is_empty() {
                continue;
            }
            let src = self.src(flow.from, flow.idx);
            for to in sinks {
                self.graph.flow(src, to);
            }
        }
    }

    /// The dynamic call sites of the body: `(call expression, receiver or callee)`.
    fn sites(&mut self) -> Vec<(u32, Src)> {
        let body = self.body;
        let mut out = Vec::new();
        for reference in &body.refs {
            if reference.kind != GRefKind::Call {
                continue;
            }
            let Some(GExpr::Call(callee)) = body.exprs.get(reference.expr as usize) else {
                continue;
            };
            match self.eval.eval(*callee, VarUses::Ignore) {
                Val::Func {
                    dispatch: Some(_), ..
                } => {
                    if let Some(GExpr::Selector(operand, _)) = body.exprs.get(*callee as usize) {
                        let src = self.src(*operand, 0);
                        out.push((reference.expr, src));
                    }
                }
                Val::Func { .. } | Val::Type(_) | Val::Builtin | Val::Pkg(_) => {}
                // An external member is followed like an unknown value, as before it had a name.
                Val::Value { .. } | Val::External(_) | Val::Unknown => {
                    if matches!(
                        body.exprs.get(*callee as usize),
                        Some(
                            GExpr::Local(_)
                                | GExpr::Selector(..)
                                | GExpr::Free(_)
                                | GExpr::Index(_)
                        )
                    ) {
                        let src = self.shape(*callee);
                        out.push((reference.expr, src));
                    }
                }
            }
        }
        out
    }

    /// The nodes a sink denotes.
    fn sinks(&mut self, sink: &GSink) -> Vec<u32> {
        let body = self.body;
        match sink {
            GSink::Place(e) => self.place(*e).into_iter().collect(),
            GSink::Return(i) => {
                if self.body_id == 0 {
                    return Vec::new();
                }
                vec![self.graph.global(format!("{}#r{i}", body.owner))]
            }
            GSink::Arg { call, idx } => {
                let Some(GExpr::Call(callee)) = body.exprs.get(*call as usize) else {
                    return Vec::new();
                };
                match self.eval.eval(*callee, VarUses::Ignore) {
                    Val::Func {
                        qname,
                        dispatch: None,
                        ..
                    } if !qname.is_empty() => {
                        if let Some((position, elems)) = self.graph.variadic.get(&qname)
                            && idx >= position
                        {
                            let elems = elems.clone();
                            return vec![self.graph.global(elems)];
                        }
                        vec![self.graph.global(format!("{qname}#{idx}"))]
                    }
                    Val::Func {
                        dispatch: Some(key),
                        ..
                    } => {
                        let targets: Vec<String> = self
                            .index
                            .impls
                            .get(&key)
                            .into_iter()
                            .flatten()
                            .map(|t| format!("{}#{idx}", t.method))
                            .collect();
                        targets.into_iter().map(|t| self.graph.global(t)).collect()
                    }
                    // `append(s, x…)`: the elements of `s`'s type.
                    Val::Builtin
                        if *idx > 0
                            && matches!(body.exprs.get(*callee as usize), Some(GExpr::Free(n)) if n == "append") =>
                    {
                        match self.arg(*call, 0).and_then(|s| self.elem_key(s, false)) {
                            Some(k) => vec![self.graph.global(k)],
                            None => Vec::new(),
                        }
                    }
                    _ => Vec::new(),
                }
            }
            GSink::Field { ty, name } => {
                let resolved = self.index.resolve_type(self.ctx, ty);
                if let Some(k) = self.literal_elem(&resolved) {
                    return vec![self.graph.global(k)];
                }
                match self.struct_of(&resolved) {
                    Some(owner) => vec![self.graph.global(format!("{owner}.{name}"))],
                    None => Vec::new(),
                }
            }
            GSink::FieldAt { ty, idx } => {
                let resolved = self.index.resolve_type(self.ctx, ty);
                if let Some(k) = self.literal_elem(&resolved) {
                    return vec![self.graph.global(k)];
                }
                let Some(owner) = self.struct_of(&resolved) else {
                    return Vec::new();
                };
                let field = self
                    .index
                    .type_info(&owner)
                    .and_then(|info| info.fields.get(*idx as usize))
                    .map(|f| f.name.clone());
                match field {
                    Some(name) => vec![self.graph.global(format!("{owner}.{name}"))],
                    None => Vec::new(),
                }
            }
        }
    }

    /// The element node of a slice or map literal's type.
    fn literal_elem(&mut self, ty: &TypeR) -> Option<String> {
        match self.index.underlying(ty) {
            TypeR::Slice(v) | TypeR::Map(_, v) => elem_node(self.index, v),
            _ => None,
        }
    }

    /// The declared struct type `ty` names (pointers dereferenced).
    fn struct_of(&self, ty: &TypeR) -> Option<String> {
        let TypeR::Named(q) = ty.deref() else {
            return None;
        };
        let q = self.index.canonical(q);
        let info = self.index.type_info(q)?;
        (info.kind == GoTypeKind::Struct).then(|| q.to_owned())
    }

    /// The node an assignment's left-hand side denotes.
    fn place(&mut self, e: u32) -> Option<u32> {
        match self.body.exprs.get(e as usize)? {
            GExpr::Local(b) => Some(self.local(*b)),
            GExpr::Free(_) | GExpr::Selector(..) => self.named_place(e),
            GExpr::Index(container) => match self.elem_key(*container, false) {
                Some(key) => Some(self.graph.global(key)),
                None => None,
            },
            _ => None,
        }
    }

    /// The node of the elements (or keys) of the container `e` (by the container's type, as
    /// VTA does: every container of one element type shares it); `None` when the elements are
    /// concrete or the type is not known.
    fn elem_key(&mut self, e: u32, key: bool) -> Option<String> {
        let Val::Value { ty, .. } = self.eval.eval(e, VarUses::Ignore) else {
            return None;
        };
        let elem = match (self.index.underlying(ty.deref()), key) {
            (TypeR::Slice(v), false) | (TypeR::Map(_, v), false) | (TypeR::Chan(v), _) => v,
            (TypeR::Map(k, _), true) => k,
            _ => return None,
        };
        elem_node(self.index, elem)
    }

    /// A value read from container `e` (an element, or a map key).
    fn elem_src(&mut self, e: u32, key: bool) -> Src {
        if let Val::Value { ty, .. } = self.eval.eval(e, VarUses::Ignore) {
            let elem = match (self.index.underlying(ty.deref()), key) {
                (TypeR::Slice(v), false) | (TypeR::Map(_, v), false) | (TypeR::Chan(v), _) => {
                    Some(v.as_ref().clone())
                }
                (TypeR::Map(k, _), true) => Some(k.as_ref().clone()),
                (TypeR::Slice(_), true) => return Src::Empty,
                _ => None,
            };
            if let Some(elem) = elem
                && let Some(src) = self.concrete(&elem)
            {
                return src;
            }
        }
        match self.elem_key(e, key) {
            Some(k) => Src::Node(self.graph.global(k)),
            None => Src::Top,
        }
    }

    /// The expression of argument `idx` of call `call`.
    fn arg(&self, call: u32, idx: u32) -> Option<u32> {
        self.body.flows.iter().find_map(|f| match f.to {
            GSink::Arg { call: c, idx: i } if c == call && i == idx => Some(f.from),
            _ => None,
        })
    }

    /// A package-level var or a struct field an expression names.
    fn named_place(&mut self, e: u32) -> Option<u32> {
        match self.body.exprs.get(e as usize)? {
            GExpr::Free(name) => {
                let member = self
                    .index
                    .pkgs
                    .get(&self.ctx.pkg_path)
                    .and_then(|m| m.get(name))
                    .or_else(|| {
                        self.ctx
                            .dot_imports
                            .iter()
                            .find_map(|d| self.index.pkgs.get(d).and_then(|m| m.get(name)))
                    })?;
                match member {
                    Member::Var { qname } => Some(self.graph.global(qname.clone())),
                    _ => None,
                }
            }
            GExpr::Selector(operand, name) => match self.eval.eval(*operand, VarUses::Ignore) {
                Val::Pkg(path) => match self.index.pkgs.get(&path).and_then(|m| m.get(name)) {
                    Some(Member::Var { qname }) => Some(self.graph.global(qname.clone())),
                    _ => None,
                },
                Val::Value { ty, .. } => match self.index.lookup_member(&ty, name) {
                    Some(Found::Field(_, owner)) => {
                        Some(self.graph.global(format!("{owner}.{name}")))
                    }
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        }
    }

    /// Where the `idx`th value of expression `e` comes from.
    fn src(&mut self, e: u32, idx: u32) -> Src {
        let body = self.body;
        let Some(expr) = body.exprs.get(e as usize) else {
            return Src::Top;
        };
        match expr {
            GExpr::Nil | GExpr::Literal | GExpr::FuncLit(_) => return Src::Empty,
            GExpr::Call(callee) => return self.call_src(e, *callee, idx),
            _ => {}
        }
        if idx != 0 {
            return Src::Top;
        }
        match self.eval.eval(e, VarUses::Ignore) {
            Val::Value { ty, .. } => match self.concrete(&ty) {
                Some(src) => src,
                None => self.shape(e),
            },
            Val::Func {
                qname,
                dispatch: None,
                ..
            } if !qname.is_empty() => {
                self.graph.taken.insert(qname.clone());
                Src::Value(self.graph.value(&qname))
            }
            Val::Func { .. } => Src::Top,
            Val::Type(_) | Val::Pkg(_) | Val::Builtin => Src::Empty,
            Val::External(_) | Val::Unknown => self.shape(e),
        }
    }

    /// A value of static type `ty`: its type when concrete (`None` for an interface, a
    /// function type, or a type not known).
    fn concrete(&mut self, ty: &TypeR) -> Option<Src> {
        match ty.deref() {
            TypeR::Named(q) => {
                let q = self.index.canonical(q);
                let info = self.index.type_info(q)?;
                match info.kind {
                    GoTypeKind::Interface => None,
                    GoTypeKind::Other if matches!(info.underlying, TypeR::Func(_)) => None,
                    _ => Some(Src::Value(self.graph.value(q))),
                }
            }
            TypeR::Builtin(b) if b == "error" || b == "any" => None,
            TypeR::Builtin(_) | TypeR::Slice(_) | TypeR::Map(..) | TypeR::Chan(_) => {
                Some(Src::Empty)
            }
            _ => None,
        }
    }

    /// Where a value comes from by the expression's form (its static type told nothing).
    fn shape(&mut self, e: u32) -> Src {
        match self.body.exprs.get(e as usize) {
            Some(GExpr::Local(b)) => Src::Node(self.local(*b)),
            Some(GExpr::Free(_) | GExpr::Selector(..)) => match self.named_place(e) {
                Some(n) => Src::Node(n),
                None => Src::Top,
            },
            Some(GExpr::Assert(_, operand)) => self.src(*operand, 0),
            Some(GExpr::Convert(t, operand)) => {
                let ty = self.index.resolve_type(self.ctx, t);
                self.converted(&ty, *operand)
            }
            Some(GExpr::Index(container)) => self.elem_src(*container, false),
            Some(GExpr::Composite(t)) => {
                let ty = self.index.resolve_type(self.ctx, t);
                match ty.deref() {
                    TypeR::Named(q) => {
                        let q = self.index.canonical(q).to_owned();
                        match self.index.type_info(&q) {
                            Some(info) if info.kind != GoTypeKind::Interface => {
                                Src::Value(self.graph.value(&q))
                            }
                            _ => Src::Top,
                        }
                    }
                    _ => Src::Top,
                }
            }
            _ => Src::Top,
        }
    }

    /// The `idx`th result of a call.
    /// `T(x)` where `T` is not concrete: an interface keeps `x`'s values; a named function type
    /// is that type.
    fn converted(&mut self, ty: &TypeR, operand: u32) -> Src {
        if let TypeR::Named(q) = ty.deref() {
            let q = self.index.canonical(q).to_owned();
            if let Some(info) = self.index.type_info(&q)
                && info.kind != GoTypeKind::Interface
            {
                return Src::Value(self.graph.value(&q));
            }
        }
        self.src(operand, 0)
    }

    fn call_src(&mut self, call: u32, callee: u32, idx: u32) -> Src {
        match self.eval.eval(callee, VarUses::Ignore) {
            Val::Func {
                qname,
                results,
                dispatch,
                ..
            } => {
                if let Some(ty) = results.get(idx as usize)
                    && let Some(src) = self.concrete(ty)
                {
                    return src;
                }
                match dispatch {
                    None if !qname.is_empty() => {
                        Src::Node(self.graph.global(format!("{qname}#r{idx}")))
                    }
                    None => Src::Top,
                    Some(key) => {
                        // Whatever the implementations return.
                        let name = format!("dispatch:{key}#r{idx}");
                        let node = self.graph.global(name.clone());
                        if !self.graph.dispatched.insert(name) {
                            return Src::Node(node);
                        }
                        let targets: Vec<String> = self
                            .index
                            .impls
                            .get(&key)
                            .into_iter()
                            .flatten()
                            .map(|t| format!("{}#r{idx}", t.method))
                            .collect();
                        for t in targets {
                            let from = self.graph.global(t);
                            self.graph.flow(Src::Node(from), node);
                        }
                        Src::Node(node)
                    }
                }
            }
            Val::Type(t) if idx == 0 => match self.concrete(&t) {
                Some(src) => src,
                None => match self.arg(call, 0) {
                    Some(operand) => self.converted(&t, operand),
                    None => Src::Top,
                },
            },
            _ => Src::Top,
        }
    }
}

/// The node of the elements of a container whose elements are of type `elem` (all containers
/// of one element type share it); `None` when the elements are concrete (their type says what
/// they are) or the type is not known. Function types are keyed by their results.
fn elem_node(index: &GoIndex, elem: &TypeR) -> Option<String> {
    match index.underlying(elem) {
        TypeR::Func(results) => {
            let results: Vec<String> = results.iter().map(TypeR::key).collect();
            return Some(format!("elem:func({})", results.join(",")));
        }
        TypeR::Named(q) => {
            let info = index.type_info(index.canonical(q))?;
            if info.kind != GoTypeKind::Interface {
                return None;
            }
        }
        TypeR::Builtin(b) if b == "error" || b == "any" => {}
        _ => return None,
    }
    let key = elem.key();
    (!key.contains('?')).then(|| format!("elem:{key}"))
}

/// Whether two versions of a file give the value flow the same inputs: the same bodies (up to
/// lines) and initializers. (Declarations are compared by the caller.)
pub(crate) fn same_flow_inputs(a: &GoFile, b: &GoFile) -> bool {
    a.bodies.len() == b.bodies.len()
        && a.bodies.iter().zip(&b.bodies).all(|(x, y)| {
            x.owner == y.owner
                && x.exprs == y.exprs
                && x.bindings == y.bindings
                && x.params == y.params
                && x.results == y.results
                && x.zeroed == y.zeroed
                && x.flows == y.flows
                && x.refs.len() == y.refs.len()
                && x.refs
                    .iter()
                    .zip(&y.refs)
                    .all(|(r, s)| r.kind == s.kind && r.expr == s.expr && r.name == s.name)
        })
        && a.values
            .iter()
            .map(|v| v.init)
            .eq(b.values.iter().map(|v| v.init))
}
