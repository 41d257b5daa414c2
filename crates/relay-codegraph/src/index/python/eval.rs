//! Expression evaluation against the [`PyIndex`] tables: what a name, attribute or call denotes.

use rustc_hash::FxHashMap as HashMap;

use super::builtins::BUILTINS;
use super::tables::PyIndex;
use super::{PBind, PExpr, PyFile, ScopeKind};

/// What an expression denotes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Val {
    Module(String),
    Class(String, bool),
    Instance(String, bool),
    Func(String, bool),
    Super(String),
    Builtin,
    Unknown,
}

impl Val {
    pub(super) fn inferred(self) -> Val {
        match self {
            Val::Class(c, _) => Val::Class(c, true),
            Val::Instance(c, _) => Val::Instance(c, true),
            Val::Func(f, _) => Val::Func(f, true),
            other => other,
        }
    }
}

/// Evaluates expressions across modules.
pub(super) struct Eval<'i, 'a> {
    pub(super) index: &'i PyIndex<'a>,
    pub(super) depth: u32,
    pub(super) touched: Vec<String>,
    /// Values of names bound in a scope: `(file, scope, name)`.
    pub(super) memo: HashMap<(usize, u32, &'a str), Val>,
}

impl<'i, 'a> Eval<'i, 'a> {
    pub(super) fn new(index: &'i PyIndex<'a>) -> Self {
        Eval {
            index,
            depth: 0,
            touched: Vec::new(),
            memo: HashMap::default(),
        }
    }

    pub(super) fn expr(&mut self, fi: usize, id: u32, record: bool) -> Val {
        self.depth += 1;
        let v = if self.depth > 16 {
            Val::Unknown
        } else {
            self.expr_inner(fi, id, record)
        };
        self.depth -= 1;
        v
    }

    pub(super) fn expr_inner(&mut self, fi: usize, id: u32, record: bool) -> Val {
        let file = self.index.files[fi];
        let Some(e) = file.exprs.get(id as usize) else {
            return Val::Unknown;
        };
        match e {
            PExpr::Name { scope, name } => self.name(fi, *scope, name, record),
            PExpr::Attr(obj, attr) => {
                let base = self.expr(fi, *obj, record);
                if record && let Val::Module(m) = &base {
                    let q = format!("{m}.{attr}");
                    if self.index.vars.contains(&q) {
                        self.touched.push(q);
                    }
                }
                self.attr(base, attr)
            }
            PExpr::Call(callee) => match self.expr(fi, *callee, false) {
                Val::Class(c, inf) => Val::Instance(c, inf),
                Val::Func(f, _) => self.returns(&f),
                _ => Val::Unknown,
            },
            PExpr::Super { scope } => {
                // The class of the enclosing method.
                let mut s = Some(*scope);
                while let Some(si) = s {
                    let sc = &file.scopes[si as usize];
                    if let Some(parent) = sc.parent
                        && let Some(cd) = file.scopes[parent as usize].class_def
                        && sc.kind == ScopeKind::Function
                    {
                        return Val::Super(file.defs[cd as usize].qname.clone());
                    }
                    s = sc.parent;
                }
                Val::Unknown
            }
            PExpr::Other => Val::Unknown,
        }
    }

    /// The instance type a function's return annotation names.
    pub(super) fn returns(&mut self, f: &str) -> Val {
        let Some(&(fi, di)) = self.index.funcs.get(f) else {
            return Val::Unknown;
        };
        match self.index.files[fi].defs[di].returns {
            Some(r) => match self.expr(fi, r, false) {
                Val::Class(c, _) => Val::Instance(c, true),
                _ => Val::Unknown,
            },
            None => Val::Unknown,
        }
    }

    /// LEGB lookup of `name` used in scope `scope` of file `fi`.
    pub(super) fn name(&mut self, fi: usize, scope: u32, name: &str, record: bool) -> Val {
        let file = self.index.files[fi];
        let mut current = Some(scope);
        let mut first = true;
        while let Some(si) = current {
            let sc = &file.scopes[si as usize];
            // Class bodies are visible only to code directly in them.
            let visible = sc.kind != ScopeKind::Class || first;
            first = false;
            if sc.globals.contains(name) {
                current = Some(0);
                continue;
            }
            if visible && sc.bindings.contains_key(name) {
                if si == 0 && record {
                    let q = format!("{}.{name}", file.module);
                    if self.index.vars.contains(&q) {
                        self.touched.push(q);
                    }
                }
                return self.scope_value(fi, si, name);
            }
            if si == 0 {
                break;
            }
            current = sc.parent;
        }
        for star in &file.star_imports {
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
            Val::Builtin
        } else {
            Val::Unknown
        }
    }

    /// The value of `name` as bound in scope `si` of file `fi` (memoized).
    pub(super) fn scope_value(&mut self, fi: usize, si: u32, name: &str) -> Val {
        let file: &'a PyFile = self.index.files[fi];
        let Some((bound, binds)) = file
            .scopes
            .get(si as usize)
            .and_then(|s| s.bindings.get_key_value(name))
        else {
            return Val::Unknown;
        };
        // Keyed by the bound name as stored in the facts: no allocation per lookup.
        let key = (fi, si, bound.as_str());
        if let Some(v) = self.memo.get(&key) {
            return v.clone();
        }
        // Cycle guard while evaluating.
        self.memo.insert(key, Val::Unknown);
        let v = self.bindings(fi, binds);
        // Values computed under the depth limit may be truncated: only keep complete ones.
        if self.depth < 8 {
            self.memo.insert(key, v.clone());
        } else {
            self.memo.remove(&key);
        }
        v
    }

    pub(super) fn bindings(&mut self, fi: usize, binds: &[PBind]) -> Val {
        let mut result: Option<Val> = None;
        for b in binds {
            let v = self.binding(fi, b);
            match &result {
                None => result = Some(v),
                Some(r) if *r == v => {}
                Some(_) => return Val::Unknown,
            }
        }
        result.unwrap_or(Val::Unknown)
    }

    pub(super) fn binding(&mut self, fi: usize, b: &PBind) -> Val {
        match b {
            PBind::Def(q) => Val::Func(q.clone(), false),
            PBind::Class(q) => Val::Class(q.clone(), false),
            PBind::Assign(e) => match self.expr(fi, *e, false) {
                v @ (Val::Module(_) | Val::Builtin) => v,
                v => v.inferred(),
            },
            PBind::ImportFrom { module, name } => self
                .module_member(module, name, false)
                .unwrap_or(Val::Unknown),
            PBind::ImportModule(m) => match self.index.module_file(m) {
                Some(i) => Val::Module(self.index.files[i].module.clone()),
                // A namespace package (a directory without `__init__.py`).
                None if self.index.prefixes.contains(m) => Val::Module(m.clone()),
                None => Val::Unknown,
            },
            PBind::SelfParam(c) => Val::Instance(c.clone(), false),
            PBind::ClsParam(c) => Val::Class(c.clone(), false),
            PBind::Annotated(Some(a)) => match self.expr(fi, *a, false) {
                Val::Class(c, _) => Val::Instance(c, true),
                _ => Val::Unknown,
            },
            PBind::Annotated(None) | PBind::Other => Val::Unknown,
        }
    }

    /// A name from a module's namespace (submodules included).
    pub(super) fn module_member(&mut self, module: &str, name: &str, star: bool) -> Option<Val> {
        if self.depth > 16 {
            return None;
        }
        let mi = self.index.module_file(module);
        let canonical = mi.map_or(module.to_owned(), |i| self.index.files[i].module.clone());
        let sub = format!("{canonical}.{name}");
        if !star && let Some(si) = self.index.modules.get(sub.as_str()) {
            return Some(Val::Module(self.index.files[*si].module.clone()));
        }
        let fi = mi?;
        let file = self.index.files[fi];
        if star && name.starts_with('_') {
            return None;
        }
        if file.scopes[0].bindings.contains_key(name) {
            self.depth += 1;
            let v = self.scope_value(fi, 0, name);
            self.depth -= 1;
            return Some(v);
        }
        for inner in &file.star_imports {
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
        Some(Val::Unknown)
    }

    pub(super) fn attr(&mut self, base: Val, attr: &str) -> Val {
        match base {
            Val::Module(m) => self.module_member(&m, attr, false).unwrap_or(Val::Unknown),
            Val::Class(c, inf) => self.class_attr(&c, attr, 0, inf, false),
            Val::Instance(c, inf) => self.class_attr(&c, attr, 0, inf, true),
            Val::Super(c) => self.class_attr(&c, attr, 1, false, true),
            _ => Val::Unknown,
        }
    }

    /// Looks `attr` up along the MRO of `class`, starting at position `skip`.
    pub(super) fn class_attr(
        &mut self,
        class: &str,
        attr: &str,
        skip: usize,
        inferred: bool,
        instance: bool,
    ) -> Val {
        let Some(mro) = self.index.mro.get(class) else {
            return Val::Unknown;
        };
        for entry in mro.iter().skip(skip) {
            let Some(c) = entry else { return Val::Unknown };
            let Some(&(fi, di)) = self.index.classes.get(c.as_str()) else {
                return Val::Unknown;
            };
            let file = self.index.files[fi];
            let def = &file.defs[di];
            if file.scopes[def.scope as usize].bindings.contains_key(attr) {
                let v = self.scope_value(fi, def.scope, attr);
                return if inferred { v.inferred() } else { v };
            }
        }
        if instance {
            for c in mro.iter().flatten() {
                let Some(&(fi, di)) = self.index.classes.get(c.as_str()) else {
                    continue;
                };
                let file = self.index.files[fi];
                let values: Vec<u32> = file.defs[di]
                    .self_attrs
                    .iter()
                    .filter(|(n, _)| n == attr)
                    .map(|(_, e)| *e)
                    .collect();
                if values.is_empty() {
                    continue;
                }
                let mut result: Option<Val> = None;
                for e in values {
                    let v = self.expr(fi, e, false).inferred();
                    match &result {
                        None => result = Some(v),
                        Some(r) if *r == v => {}
                        Some(_) => return Val::Unknown,
                    }
                }
                return result.unwrap_or(Val::Unknown);
            }
        }
        Val::Unknown
    }
}
