//! Expression evaluation against the [`PyIndex`] tables and the value-flow table ([`PyFlow`]):
//! the set of values a name, attribute, call, subscript or iteration can denote.

mod containers;
mod order;

use rustc_hash::FxHashMap as HashMap;

use super::builtins::BUILTINS;
use super::tables::{
    FilesRead, PyFlow, PyIndex, ReadSet, SUBCLASS_RECEIVERS, Val, Vals, digest, digest_stored,
    join, one, unknown,
};
use super::{PArg, PBind, PExpr, ParamKind, PyFile, ScopeKind};

/// A container literal with more items than this is opaque to a lookup of any item (big
/// data tables: evaluating every entry for each lookup would cost more than it can find).
const MAX_LITERAL_ITEMS: usize = 64;
/// Expression evaluations per top-level evaluation (sets fan out: the limit keeps a
/// pathological chain linear).
const MAX_STEPS: u32 = 1_000;
/// At most this many subclasses' instances are what `self` is in a base class's methods
/// (beside the class itself); with more, `self` is the class alone.
const MAX_SELF_SUBCLASSES: usize = 4;
/// Evaluation depth limit (nested lookups through bindings, attributes and calls).
const MAX_DEPTH: u32 = 16;

pub(crate) use containers::{LiteralEntry, is_mapping, literal_entries};

/// The items of one container literal by constant key (`None`: any), as looked up so far.
type ItemsByKey = Vec<(Option<String>, Vals)>;

/// Evaluates expressions across modules.
pub(crate) struct Eval<'i, 'a> {
    pub(super) index: &'i PyIndex<'a>,
    pub(super) flow: &'i PyFlow,
    pub(super) depth: u32,
    pub(super) touched: Vec<String>,
    /// The flow entries read, when recorded (resolution records them so that an update can
    /// re-resolve exactly the modules that read a changed entry).
    pub(super) reads: Option<ReadSet>,
    /// The files whose facts the evaluation read, when recorded (an incremental value-flow
    /// update re-evaluates the modules that read a changed file).
    pub(super) files_read: Option<FilesRead>,
    /// The file last added to `files_read` (most reads are of the same file as the one before).
    last_file_read: usize,
    /// Values of names bound in a scope, keyed by the address of the binding's list in the
    /// facts (unique per file, scope and name; hashing it is cheaper than hashing the name).
    memo: HashMap<usize, Vals>,
    /// Values of expressions: `(file, expression)`.
    expr_memo: HashMap<(u32, u32), Vals>,
    /// Values of names where a set of their bindings reaches ([`order`]): keyed by the
    /// address of the name's bindings, then by the set.
    reach_memo: HashMap<usize, Vec<(Vec<super::Reach>, Vals)>>,
    /// Whether the evaluation under way hit a limit (its value is then not memoized).
    truncated: bool,
    /// Nested container lookups under way ([`Eval::items`]).
    nesting: u32,
    steps: u32,
    /// Items of container literals: `(file, expression)` → key → values (looked up by a
    /// borrowed key).
    item_memo: HashMap<(u32, u32), ItemsByKey>,
    /// A scratch buffer for qualified names looked up in the tables.
    qname: String,
}

impl<'i, 'a> Eval<'i, 'a> {
    pub(crate) fn new(index: &'i PyIndex<'a>, flow: &'i PyFlow) -> Self {
        Eval {
            index,
            flow,
            depth: 0,
            touched: Vec::new(),
            reads: None,
            files_read: None,
            last_file_read: usize::MAX,
            memo: HashMap::default(),
            item_memo: HashMap::default(),
            expr_memo: HashMap::default(),
            reach_memo: HashMap::default(),
            qname: String::new(),
            truncated: false,
            nesting: 0,
            steps: 0,
        }
    }

    /// Forgets everything evaluated so far (the state of [`Eval::new`]), keeping the memo
    /// tables' capacity for the next module.
    pub(crate) fn reset(&mut self) {
        self.depth = 0;
        self.touched.clear();
        self.reads = None;
        self.files_read = None;
        self.last_file_read = usize::MAX;
        self.memo.clear();
        self.expr_memo.clear();
        self.reach_memo.clear();
        self.item_memo.clear();
        self.truncated = false;
        self.nesting = 0;
        self.steps = 0;
    }

    /// The facts of file `fi`, recording that they were read.
    pub(super) fn file(&mut self, fi: usize) -> &'a PyFile {
        if self.last_file_read != fi
            && let Some(files) = &mut self.files_read
        {
            self.last_file_read = fi;
            files.insert(fi as u32);
        }
        self.index.files[fi]
    }

    fn note(&mut self, key: impl FnOnce() -> u64) {
        if let Some(reads) = &mut self.reads {
            reads.insert(key());
        }
    }

    pub(crate) fn read_param(&mut self, f: &str, index: u32) -> Vals {
        self.note(|| digest(0, f, "", index));
        self.flow.param(f, index)
    }

    pub(crate) fn read_returns(&mut self, f: &str) -> Vals {
        self.note(|| digest(1, f, "", 0));
        self.flow.returns(f)
    }

    pub(crate) fn read_returned_params(&mut self, f: &str) -> &'i [u32] {
        self.note(|| digest(1, f, "", 0));
        self.flow.returned_params(f)
    }

    pub(crate) fn read_yields(&mut self, f: &str) -> Vals {
        self.note(|| digest(2, f, "", 0));
        self.flow.yields(f)
    }

    pub(crate) fn read_decorated(&mut self, q: &str) -> Option<Vals> {
        self.note(|| digest(3, q, "", 0));
        self.flow.decorated(q)
    }

    pub(crate) fn read_attr(&mut self, class: &str, attr: &str) -> Vals {
        self.note(|| digest(4, class, attr, 0));
        self.flow.attr(class, attr)
    }

    pub(crate) fn read_stored(&mut self, container: &Val, key: Option<&str>) -> Vals {
        self.note(|| digest_stored(container));
        self.flow.stored(container, key)
    }

    pub(crate) fn expr(&mut self, fi: usize, id: u32, record: bool) -> Vals {
        if self.depth == 0 {
            self.steps = 0;
        }
        // Names (memoized by binding), literals and opaque expressions are cheap: only
        // attribute, call and subscript chains are memoized.
        let chain = matches!(
            self.file(fi).exprs.get(id as usize),
            Some(PExpr::Attr(..) | PExpr::Call(_) | PExpr::Subscript(..))
        );
        // A recording evaluation must run for its side effect (the variables it touches).
        if chain
            && !record
            && let Some(v) = self.expr_memo.get(&(fi as u32, id))
        {
            return v.clone();
        }
        self.steps += 1;
        if self.depth >= MAX_DEPTH || self.steps > MAX_STEPS {
            self.truncated = true;
            return unknown();
        }
        self.depth += 1;
        let outer = std::mem::replace(&mut self.truncated, false);
        let v = self.expr_inner(fi, id, record);
        self.depth -= 1;
        // Only complete values are kept (one cut by a limit depends on where it started).
        if chain && !self.truncated {
            self.expr_memo.insert((fi as u32, id), v.clone());
        }
        self.truncated |= outer;
        v
    }

    fn expr_inner(&mut self, fi: usize, id: u32, record: bool) -> Vals {
        let file = self.file(fi);
        let Some(e) = file.exprs.get(id as usize) else {
            return unknown();
        };
        match e {
            PExpr::Name { scope, name } => self.name(fi, id, *scope, name, record),
            PExpr::Attr(obj, attr) => {
                let evented = self.object_access(fi, id, *obj, order::Access::Attr(attr));
                if !record && let Some(v) = &evented {
                    return v.clone();
                }
                let base = self.expr(fi, *obj, record);
                if record {
                    for b in &base {
                        if let Val::Module(m) = b {
                            let q = format!("{m}.{attr}");
                            if self.index.vars.contains(&q) {
                                self.touched.push(q);
                            }
                        }
                    }
                    if let Some(v) = evented {
                        return v;
                    }
                }
                self.attr(&base, attr)
            }
            PExpr::Call(callee) => {
                if let Some(PExpr::Attr(obj, method)) = file.exprs.get(*callee as usize)
                    && let Some(v) = self.container_method(fi, id, *obj, method)
                {
                    return v;
                }
                let callee_vals = self.expr(fi, *callee, false);
                self.call_result(fi, id, &callee_vals)
            }
            PExpr::Super { scope } => {
                // The class of the enclosing method.
                let mut s = Some(*scope);
                while let Some(si) = s {
                    let sc = &file.scopes[si as usize];
                    if let Some(parent) = sc.parent
                        && let Some(cd) = file.scopes[parent as usize].class_def
                        && sc.kind == ScopeKind::Function
                    {
                        return one(Val::Super(file.defs[cd as usize].qname.clone()));
                    }
                    s = sc.parent;
                }
                unknown()
            }
            PExpr::Lambda(q) => one(Val::Func(q.clone(), false)),
            PExpr::Seq { .. } | PExpr::Dict(_) => one(Val::Container(fi as u32, id)),
            PExpr::Subscript(obj, key) => {
                let key = self.subscript_key(fi, id, key.as_deref());
                if let Some(v) =
                    self.object_access(fi, id, *obj, order::Access::Item(key.as_deref()))
                {
                    if record {
                        self.expr(fi, *obj, record);
                    }
                    return v;
                }
                let base = self.expr(fi, *obj, record);
                self.subscript(&base, key.as_deref())
            }
            PExpr::Other => unknown(),
        }
    }

    /// The values of the items of containers `base` under constant `key` (`None`: any).
    /// The values of the items of literal `ce` of file `cf` under `key` (`None`: any).
    fn literal_items(&mut self, cf: u32, ce: u32, key: Option<&str>) -> Vals {
        let file: &'a PyFile = self.file(cf as usize);
        let mut out = Vals::new();
        match file.exprs.get(ce as usize) {
            Some(PExpr::Seq { items, indexed }) => {
                let pick = match (key.and_then(|k| k.strip_prefix("i:")), indexed) {
                    (Some(i), true) => i.parse::<i64>().ok().and_then(|i| {
                        let i = if i < 0 { items.len() as i64 + i } else { i };
                        usize::try_from(i).ok()
                    }),
                    _ => None,
                };
                match pick {
                    Some(i) => {
                        if let Some(&e) = items.get(i) {
                            let v = self.expr(cf as usize, e, false);
                            join(&mut out, v);
                        }
                    }
                    None if items.len() > MAX_LITERAL_ITEMS => join(&mut out, unknown()),
                    None => {
                        for &e in items {
                            let v = self.expr(cf as usize, e, false);
                            join(&mut out, v);
                        }
                    }
                }
            }
            Some(PExpr::Dict(entries)) => {
                if key.is_none() && entries.len() > MAX_LITERAL_ITEMS {
                    return unknown();
                }
                for (k, e) in entries {
                    if key.is_none() || k.is_none() || k.as_deref() == key {
                        let v = self.expr(cf as usize, *e, false);
                        join(&mut out, v);
                    }
                }
            }
            _ => {}
        }
        out
    }

    pub(crate) fn items(&mut self, base: &[Val], key: Option<&str>) -> Vals {
        // Containers of containers (slices, `dict(m)`, what `map` yields) recurse here without
        // an evaluation in between when the inner values are memoized: a self-referential one
        // (`d = dict(d)`) would not stop.
        if self.nesting >= MAX_DEPTH {
            self.truncated = true;
            return unknown();
        }
        self.nesting += 1;
        let out = self.items_inner(base, key);
        self.nesting -= 1;
        out
    }

    fn items_inner(&mut self, base: &[Val], key: Option<&str>) -> Vals {
        let mut out = Vals::new();
        for b in base {
            match b {
                Val::Container(cf, ce) => {
                    let memoized = self
                        .item_memo
                        .get(&(*cf, *ce))
                        .and_then(|keys| keys.iter().find(|(k, _)| k.as_deref() == key));
                    let literal = match memoized {
                        Some((_, v)) => v.clone(),
                        None => {
                            let outer = std::mem::replace(&mut self.truncated, false);
                            let v = self.literal_items(*cf, *ce, key);
                            if !self.truncated {
                                self.item_memo
                                    .entry((*cf, *ce))
                                    .or_default()
                                    .push((key.map(str::to_owned), v.clone()));
                            }
                            self.truncated |= outer;
                            v
                        }
                    };
                    join(&mut out, literal);
                    join(&mut out, self.read_stored(b, key));
                    let appended = self.appended(b, key);
                    join(&mut out, appended);
                }
                Val::Slice(base, start, end) => {
                    let v = self.slice_items(base, *start, *end, key);
                    join(&mut out, v);
                }

                Val::Args(_) | Val::Kwargs(_) => join(&mut out, self.read_stored(b, key)),
                Val::Entry(c) if key == Some("i:1") => {
                    let v = self.items(std::slice::from_ref(c.as_ref()), None);
                    join(&mut out, v);
                }
                Val::Values(_) | Val::Entries(_) => {
                    let v = self.iterate(std::slice::from_ref(b));
                    join(&mut out, v);
                }
                Val::Gen(_) | Val::Instance(..) => {
                    join(&mut out, self.iterate(std::slice::from_ref(b)))
                }
                _ => join(&mut out, unknown()),
            }
        }
        out
    }

    /// `d.get(k)`, `d.pop(k)`, `d.setdefault(k, …)`, `xs.pop()`, `xs.copy()` on
    /// containers: their items (`None` when `obj` is not only containers, or another method).
    fn container_method(&mut self, fi: usize, call: u32, obj: u32, method: &str) -> Option<Vals> {
        if !matches!(
            method,
            "get" | "pop" | "setdefault" | "copy" | "__getitem__" | "values" | "items"
        ) {
            return None;
        }
        let base = self.expr(fi, obj, false);
        if base.is_empty()
            || !base
                .iter()
                .all(|v| matches!(v, Val::Container(..) | Val::Kwargs(_)))
        {
            return None;
        }
        match method {
            // A copy keeps the items: subscript or iterate it like the container.
            "copy" => return Some(base),
            "values" => {
                return Some(base.into_iter().map(|b| Val::Values(Box::new(b))).collect());
            }
            "items" => {
                return Some(
                    base.into_iter()
                        .map(|b| Val::Entries(Box::new(b)))
                        .collect(),
                );
            }
            _ => {}
        }
        let file: &'a PyFile = self.file(fi);
        let args = file.args(call);
        let key = match args.first() {
            Some(PArg::Pos(k)) => constant_string(file, *k).map(|s| format!("s:{s}")),
            _ => None,
        };
        let mut out = self.items(&base, key.as_deref());
        // `d.get(k, default)`, `d.pop(k, default)`, `d.setdefault(k, default)`: the default
        // when the key is missing.
        if let Some(PArg::Pos(default)) = args.get(1) {
            let v = self.expr(fi, *default, false);
            join(&mut out, v);
        }
        Some(out)
    }

    /// The values `for x in base` binds to `x`.
    pub(crate) fn iterate(&mut self, base: &[Val]) -> Vals {
        let mut out = Vals::new();
        for b in base {
            match b {
                Val::Container(cf, ce) => {
                    let is_dict = containers::is_mapping(self.file(*cf as usize), *ce);
                    // Iterating a dict yields its keys, which we do not track.
                    let v = if is_dict {
                        unknown()
                    } else {
                        self.items(std::slice::from_ref(b), None)
                    };
                    join(&mut out, v);
                }
                Val::Args(_) => join(&mut out, self.read_stored(b, None)),
                Val::Values(c) => {
                    let v = self.items(std::slice::from_ref(c.as_ref()), None);
                    join(&mut out, v);
                }
                Val::Entries(c) => join(&mut out, one(Val::Entry(c.clone()))),
                Val::Gen(f) => join(&mut out, self.read_yields(f)),
                Val::Slice(..) => {
                    let v = self.items(std::slice::from_ref(b), None);
                    join(&mut out, v);
                }

                Val::Instance(c, inf) => {
                    let iters = self.class_attr(c, "__iter__", 0, *inf, true);
                    let iterators = self.call_result(usize::MAX, 0, &iters);
                    for it in iterators {
                        match &it {
                            Val::Instance(d, inf) => {
                                let next = self.class_attr(d, "__next__", 0, *inf, true);
                                let v = self.call_result(usize::MAX, 0, &next);
                                join(&mut out, v);
                            }
                            Val::Gen(f) => join(&mut out, self.read_yields(f)),
                            _ => join(&mut out, unknown()),
                        }
                    }
                }
                _ => join(&mut out, unknown()),
            }
        }
        if out.is_empty() { unknown() } else { out }
    }

    /// What calling `callee` returns; `fi`/`call` locate the call's arguments (`usize::MAX`:
    /// an implicit call without arguments, e.g. `__iter__`).
    pub(crate) fn call_result(&mut self, fi: usize, call: u32, callee: &[Val]) -> Vals {
        let mut out = Vals::new();
        for v in callee {
            match v {
                Val::Class(c, inf) => join(&mut out, one(Val::Instance(c.clone(), *inf))),
                Val::Func(f, _) | Val::Bound(f, _) => {
                    let offset = usize::from(matches!(v, Val::Bound(..)));
                    join(&mut out, self.returns(f));
                    let v = self.returned_args(fi, call, f, offset);
                    join(&mut out, v);
                }
                Val::Instance(c, inf) => {
                    let call = self.class_attr(c, "__call__", 0, *inf, true);
                    for f in call {
                        if let Val::Func(f, _) | Val::Bound(f, _) = f {
                            join(&mut out, self.returns(&f));
                        }
                    }
                }
                Val::Builtin(name) if fi != usize::MAX => {
                    let v = self.builtin_result(fi, call, name);
                    join(&mut out, v);
                }
                Val::External(q) if q == "functools.partial" && fi != usize::MAX => {
                    // `partial(f, ...)` calls `f` when called.
                    let v = match self.file(fi).args(call).first() {
                        Some(PArg::Pos(f)) => self.expr(fi, *f, false),
                        _ => unknown(),
                    };
                    join(&mut out, v.into_iter().map(Val::inferred).collect());
                }
                Val::External(q) => join(&mut out, Self::external_result(q)),
                _ => join(&mut out, unknown()),
            }
        }
        if out.is_empty() { unknown() } else { out }
    }

    fn builtin_result(&mut self, fi: usize, call: u32, name: &str) -> Vals {
        let file: &'a PyFile = self.file(fi);
        let args = file.args(call);
        match (name, args) {
            ("getattr", [PArg::Pos(obj), PArg::Pos(attr), ..]) => {
                let attr = match file.exprs.get(*attr as usize) {
                    Some(PExpr::Other) => constant_string(file, *attr),
                    _ => None,
                };
                match attr {
                    Some(a) => {
                        let base = self.expr(fi, *obj, false);
                        self.attr(&base, &a)
                    }
                    None => unknown(),
                }
            }
            // Copies keep the items.
            ("list" | "tuple" | "set" | "sorted" | "reversed" | "iter", [PArg::Pos(x), ..]) => {
                let v = self.expr(fi, *x, false);
                if v.iter().all(containers::is_iterable) {
                    v
                } else {
                    unknown()
                }
            }
            ("next", [PArg::Pos(x), ..]) => {
                let v = self.expr(fi, *x, false);
                self.iterate(&v)
            }
            _ => unknown(),
        }
    }

    /// What calling function `f` returns: its return annotation's instance, the values its
    /// `return` statements return, or its generator.
    pub(crate) fn returns(&mut self, f: &str) -> Vals {
        let Some(&(fi, di)) = self.index.funcs.get(f) else {
            return unknown();
        };
        let def = &self.file(fi).defs[di];
        if def.generator {
            return one(Val::Gen(f.to_owned()));
        }
        let mut out = Vals::new();
        if let Some(r) = def.returns {
            for v in self.expr(fi, r, false) {
                if let Val::Class(c, _) = v {
                    join(&mut out, one(Val::Instance(c, true)));
                }
            }
        }
        join(
            &mut out,
            self.read_returns(f)
                .into_iter()
                .map(Val::inferred)
                .collect(),
        );
        if out.is_empty() && self.read_returned_params(f).is_empty() {
            unknown()
        } else {
            out
        }
    }

    /// The arguments of call `call` in file `fi` for the parameters `f` returns as they are
    /// (`offset`: 1 when `self` is bound); without a call site (`fi == usize::MAX`) or with
    /// unpacked arguments, every value those parameters receive.
    fn returned_args(&mut self, fi: usize, call: u32, f: &str, offset: usize) -> Vals {
        let params = self.read_returned_params(f);
        if params.is_empty() {
            return Vals::new();
        }
        let Some(&(dfi, ddi)) = self.index.funcs.get(f) else {
            return Vals::new();
        };
        let def: &'a super::PyDef = &self.file(dfi).defs[ddi];
        let args: &'a [PArg] = if fi == usize::MAX {
            &[]
        } else {
            self.file(fi).args(call)
        };
        let unpacked = fi == usize::MAX
            || args
                .iter()
                .any(|a| matches!(a, PArg::Star(_) | PArg::DoubleStar(_)));
        let mut out = Vals::new();
        for &i in params {
            if unpacked {
                let v = self.read_param(f, i);
                join(
                    &mut out,
                    v.into_iter()
                        .filter(|v| *v != Val::Omitted)
                        .map(Val::inferred)
                        .collect(),
                );
                continue;
            }
            let name = def.params.get(i as usize).map(|p| p.name.as_str());
            let positional = (i as usize)
                .checked_sub(offset)
                .and_then(|k| args.iter().filter(|a| matches!(a, PArg::Pos(_))).nth(k));
            let keyword = args
                .iter()
                .find(|a| matches!(a, PArg::Kw(n, _) if Some(n.as_str()) == name));
            let v = match (positional, keyword) {
                (Some(PArg::Pos(e)), _) | (None, Some(PArg::Kw(_, e))) => self.expr(fi, *e, false),
                _ => match def.params.get(i as usize).and_then(|p| p.default) {
                    Some(d) => self.expr(dfi, d, false),
                    None => Vals::new(),
                },
            };
            join(&mut out, v.into_iter().map(Val::inferred).collect());
        }
        out
    }

    /// LEGB lookup of `name` (expression `id`) used in scope `scope` of file `fi`; in its own
    /// scope, only the bindings that reach the read ([`super::Reach`]).
    fn name(&mut self, fi: usize, id: u32, scope: u32, name: &str, record: bool) -> Vals {
        let file = self.file(fi);
        if let Some(reach) = file.reach(id) {
            if scope == 0 && record {
                let q = format!("{}.{name}", file.module);
                if self.index.vars.contains(&q) {
                    self.touched.push(q);
                } else if reach.iter().any(|r| matches!(r, super::Reach::Star(_))) {
                    // A variable of the star-imported module that provides the name.
                    for star in file.star_imports.iter().rev() {
                        if let Some(i) = self.index.module_file(star) {
                            let q = format!("{}.{name}", self.index.files[i].module);
                            if self.index.vars.contains(&q) {
                                self.touched.push(q);
                                break;
                            }
                        }
                    }
                }
            }
            return self.reached(fi, scope, name, reach);
        }
        let mut current = Some(scope);
        let mut first = true;
        while let Some(si) = current {
            let sc = &file.scopes[si as usize];
            // Class bodies are visible only to code directly in them.
            let visible = sc.kind != ScopeKind::Class || first;
            first = false;
            if !sc.globals.is_empty() && sc.globals.contains(name) {
                current = Some(0);
                continue;
            }
            if visible && let Some(binds) = sc.bindings.get(name) {
                if si == 0 && record {
                    let q = format!("{}.{name}", file.module);
                    if self.index.vars.contains(&q) {
                        self.touched.push(q);
                    }
                }
                // A function reads a module-level name as the module leaves it.
                if si == 0
                    && si != scope
                    && let Some(reach) = sc.final_reach.get(name)
                {
                    return self.reached(fi, 0, name, reach);
                }
                return self.bound_value(fi, binds);
            }
            if si == 0 {
                break;
            }
            current = sc.parent;
        }
        // The last star import that exports the name wins.
        for star in file.star_imports.iter().rev() {
            if let Some(v) = self.module_member(star, name, true) {
                if record && let Some(i) = self.index.module_file(star) {
                    let q = format!("{}.{name}", self.index.files[i].module);
                    if self.index.vars.contains(&q) {
                        self.touched.push(q);
                    }
                }
                return v;
            }
        }
        if BUILTINS.contains(&name) {
            one(Val::Builtin(name.to_owned()))
        } else {
            unknown()
        }
    }

    /// The value of a name bound in a scope of file `fi` to `binds` (memoized).
    fn bound_value(&mut self, fi: usize, binds: &'a [PBind]) -> Vals {
        // Keyed by the address of the bindings in the facts: no allocation or hashing of the
        // name per lookup. A name has at least one binding, so the address is its own.
        let key = binds.as_ptr() as usize;
        if let Some(v) = self.memo.get(&key) {
            return v.clone();
        }
        // Cycle guard while evaluating.
        self.memo.insert(key, unknown());
        let outer = std::mem::replace(&mut self.truncated, false);
        let mut v = Vals::new();
        for b in binds {
            let more = self.binding(fi, b);
            join(&mut v, more);
        }
        if v.is_empty() {
            v = unknown();
        }
        // Values cut by a limit depend on where the evaluation started: only keep complete ones.
        if self.truncated {
            self.memo.remove(&key);
        } else {
            self.memo.insert(key, v.clone());
        }
        self.truncated |= outer;
        v
    }

    fn binding(&mut self, fi: usize, b: &PBind) -> Vals {
        let file: &'a PyFile = self.file(fi);
        match b {
            PBind::Def(q) | PBind::Class(q) => match self.read_decorated(q) {
                Some(v) => v,
                None if matches!(b, PBind::Def(_)) => one(Val::Func(q.clone(), false)),
                None => one(Val::Class(q.clone(), false)),
            },
            PBind::Assign(e) => self
                .expr(fi, *e, false)
                .into_iter()
                .map(|v| match v {
                    v @ (Val::Module(_) | Val::Builtin(_)) => v,
                    v => v.inferred(),
                })
                .collect(),
            PBind::ImportFrom { module, name } => match self.module_member(module, name, false) {
                Some(v) => v,
                None if self.index.module_file(module).is_none()
                    && !self.index.prefixes.contains(module) =>
                {
                    one(Val::External(format!("{module}.{name}")))
                }
                None => unknown(),
            },
            PBind::ImportModule(m) => match self.index.module_file(m) {
                Some(i) => one(Val::Module(self.index.files[i].module.clone())),
                // A namespace package (a directory without `__init__.py`).
                None if self.index.prefixes.contains(m) => one(Val::Module(m.clone())),
                None => one(Val::External(m.clone())),
            },
            PBind::SelfParam(c) => {
                // The class itself (its instances may be made where we cannot see) and the
                // instances of subclasses its methods are called on (their MRO answers
                // `self.x`: an override, an attribute a subclass sets).
                let mut v = one(Val::Instance(c.clone(), false));
                let subclasses = self.read_param(c, SUBCLASS_RECEIVERS);
                // Past a few subclasses (a widely extended base class), each attribute of
                // `self` would be looked up in every one: the class alone, as declared.
                if subclasses.len() <= MAX_SELF_SUBCLASSES && !subclasses.contains(&Val::Unknown) {
                    join(&mut v, subclasses);
                }
                v
            }
            PBind::ClsParam(c) => one(Val::Class(c.clone(), false)),
            PBind::Annotated(Some(a)) => self.annotated(fi, *a),
            PBind::Param {
                def,
                index,
                annotation,
            } => {
                let Some(d) = file.defs.get(*def as usize) else {
                    return unknown();
                };
                let Some(p) = d.params.get(*index as usize) else {
                    return unknown();
                };
                match p.kind {
                    ParamKind::Star => return one(Val::Args(d.qname.clone())),
                    ParamKind::DoubleStar => return one(Val::Kwargs(d.qname.clone())),
                    ParamKind::Plain | ParamKind::KeywordOnly => {}
                }
                let mut out = Vals::new();
                if let Some(a) = annotation {
                    let v = self.annotated(fi, *a);
                    join(&mut out, v);
                }
                // The default counts when a call leaves the argument out, or no call is seen.
                let passed = self.read_param(&d.qname, *index);
                if let Some(default) = p.default
                    && (passed.is_empty()
                        || passed.contains(&Val::Omitted)
                        || passed.contains(&Val::Unknown))
                {
                    let v = self.expr(fi, default, false);
                    join(&mut out, v.into_iter().map(Val::inferred).collect());
                }
                join(
                    &mut out,
                    passed
                        .into_iter()
                        .filter(|v| *v != Val::Omitted)
                        .map(Val::inferred)
                        .collect(),
                );
                // Callers we cannot see may pass anything.
                join(&mut out, unknown());
                out
            }
            PBind::Unpack { expr, index } => {
                let base = self.expr(fi, *expr, false);
                self.items(&base, Some(&format!("i:{index}")))
                    .into_iter()
                    .map(Val::inferred)
                    .collect()
            }
            PBind::Iter(e) => {
                let base = self.expr(fi, *e, false);
                self.iterate(&base).into_iter().map(Val::inferred).collect()
            }
            PBind::Annotated(None) | PBind::Other => unknown(),
        }
    }

    fn annotated(&mut self, fi: usize, a: u32) -> Vals {
        let v: Vals = self
            .expr(fi, a, false)
            .into_iter()
            .filter_map(|v| match v {
                Val::Class(c, _) => Some(Val::Instance(c, true)),
                _ => None,
            })
            .collect();
        if v.is_empty() { unknown() } else { v }
    }

    /// A name from a module's namespace (submodules included).
    pub(crate) fn module_member(&mut self, module: &str, name: &str, star: bool) -> Option<Vals> {
        if self.depth > MAX_DEPTH {
            return None;
        }
        let mi = self.index.module_file(module);
        if !star {
            let canonical = mi.map_or(module, |i| self.index.files[i].module.as_str());
            let mut sub = std::mem::take(&mut self.qname);
            sub.clear();
            sub.push_str(canonical);
            sub.push('.');
            sub.push_str(name);
            let submodule = self.index.modules.get(sub.as_str()).copied();
            self.qname = sub;
            if let Some(si) = submodule {
                return Some(one(Val::Module(self.index.files[si].module.clone())));
            }
        }
        let fi = mi?;
        let file = self.file(fi);
        if star && name.starts_with('_') {
            return None;
        }
        if let Some(reach) = file.scopes[0].final_reach.get(name) {
            self.depth += 1;
            let v = self.reached(fi, 0, name, reach);
            self.depth -= 1;
            return Some(v);
        }
        if let Some(binds) = file.scopes[0].bindings.get(name) {
            self.depth += 1;
            let v = self.bound_value(fi, binds);
            self.depth -= 1;
            return Some(v);
        }
        for inner in file.star_imports.iter().rev() {
            self.depth += 1;
            let v = self.module_member(inner, name, true);
            self.depth -= 1;
            if v.is_some() {
                return v;
            }
        }
        if star {
            return None;
        }
        Some(unknown())
    }

    pub(crate) fn attr(&mut self, base: &[Val], attr: &str) -> Vals {
        let mut out = Vals::new();
        for b in base {
            let v = match b {
                Val::Module(m) => self.module_member(m, attr, false).unwrap_or_else(unknown),
                Val::Class(c, inf) => self.class_attr(c, attr, 0, *inf, false),
                Val::Instance(c, inf) => self.class_attr(c, attr, 0, *inf, true),
                Val::Super(c) => self.class_attr(c, attr, 1, false, true),
                Val::External(q) => one(Val::External(format!("{q}.{attr}"))),
                Val::ExternalInstance(q) => one(Val::ExternalMethod(format!("{q}.{attr}"))),
                _ => unknown(),
            };
            join(&mut out, v);
        }
        if out.is_empty() { unknown() } else { out }
    }

    /// Looks `attr` up along the MRO of `class`, starting at position `skip`; methods looked
    /// up on an instance (and classmethods) come back bound.
    pub(crate) fn class_attr(
        &mut self,
        class: &str,
        attr: &str,
        skip: usize,
        inferred: bool,
        instance: bool,
    ) -> Vals {
        let Some(mro) = self.index.mro.get(class) else {
            // While the MROs are being built (a base class written `A.B`): the class's own
            // namespace.
            return self.own_attr(class, attr, inferred, instance);
        };
        let mut out = Vals::new();
        let mut unresolved = false;
        for entry in mro.iter().skip(skip) {
            let Some(c) = entry else {
                unresolved = true;
                break;
            };
            join(&mut out, self.read_attr(c, attr));
            let Some(&(fi, di)) = self.index.classes.get(c.as_str()) else {
                join(&mut out, unknown());
                break;
            };
            let file = self.file(fi);
            let def = &file.defs[di];
            let scope = &file.scopes[def.scope as usize];
            if let Some(binds) = scope.bindings.get(attr) {
                let v = match scope.final_reach.get(attr) {
                    Some(reach) => self.reached(fi, def.scope, attr, reach),
                    None => self.bound_value(fi, binds),
                };
                let v = v.into_iter().map(|v| self.bind_method(v, instance));
                join(
                    &mut out,
                    if inferred {
                        v.map(Val::inferred).collect()
                    } else {
                        v.collect()
                    },
                );
                return out;
            }
        }
        if instance {
            for c in mro.iter().flatten() {
                let Some(&(fi, di)) = self.index.classes.get(c.as_str()) else {
                    continue;
                };
                let file = self.file(fi);
                let values: Vec<u32> = file.defs[di]
                    .self_attrs
                    .iter()
                    .filter(|(n, _)| n == attr)
                    .map(|(_, e)| *e)
                    .collect();
                for e in values {
                    let v = self.expr(fi, e, false);
                    join(&mut out, v.into_iter().map(Val::inferred).collect());
                }
            }
        }
        if unresolved {
            // Not found before an unresolved base: a method of the one external class that
            // base is, else unknown.
            let external = if out.is_empty() {
                let mro: &'i [Option<String>] = mro;
                self.external_base(mro)
            } else {
                None
            };
            match external {
                Some(q) => join(&mut out, one(Val::ExternalMethod(format!("{q}.{attr}")))),
                None => join(&mut out, unknown()),
            }
        }
        if out.is_empty() { unknown() } else { out }
    }

    /// `attr` of the namespace of `class` alone.
    fn own_attr(&mut self, class: &str, attr: &str, inferred: bool, instance: bool) -> Vals {
        let Some(&(fi, di)) = self.index.classes.get(class) else {
            return unknown();
        };
        let file = self.file(fi);
        let Some(binds) = file.scopes[file.defs[di].scope as usize].bindings.get(attr) else {
            return unknown();
        };
        self.bound_value(fi, binds)
            .into_iter()
            .map(|v| {
                let v = self.bind_method(v, instance);
                if inferred { v.inferred() } else { v }
            })
            .collect()
    }

    /// A function found in a class namespace, as seen through an instance (bound unless
    /// static) or the class (bound only for classmethods).
    fn bind_method(&mut self, v: Val, instance: bool) -> Val {
        let Val::Func(f, inf) = v else { return v };
        let Some(&(fi, di)) = self.index.funcs.get(f.as_str()) else {
            return Val::Func(f, inf);
        };
        let def = &self.file(fi).defs[di];
        // Any function stored in a class namespace (a method, or `handler = func`) binds.
        if def.is_classmethod || (instance && !def.is_static) {
            Val::Bound(f, inf)
        } else {
            Val::Func(f, inf)
        }
    }
}

/// The text of a plain string literal expression, when the facts kept it (see
/// [`PyFile::strings`]).
fn constant_string(file: &PyFile, e: u32) -> Option<String> {
    file.strings
        .binary_search_by_key(&e, |(id, _)| *id)
        .ok()
        .map(|i| file.strings[i].1.clone())
}
