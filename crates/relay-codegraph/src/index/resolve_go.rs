//! Go resolution: package and type tables built from all files, and the evaluation of each
//! body's references against them.

use rustc_hash::FxHashMap as HashMap;

use super::facts::FileFacts;
use super::go::{GBind, GExpr, GRefKind, GType, GoBody, GoFile, GoTypeKind};
use crate::model::{Confidence, Edge, EdgeKind, Language, Symbol, SymbolKind};

/// Levels of embedding searched for a field or method (Go's promotion rule: the shallowest level
/// wins). Deeper promotion is rare in real code; past this the member is left unresolved rather
/// than guessed.
const MAX_EMBEDDED_LOOKUP_DEPTH: usize = 6;

/// Nesting depth of one expression's evaluation (calls in arguments in selectors …). Bounds the
/// recursion on generated or adversarial code so the indexer's stack cannot overflow; deeper
/// sub-expressions evaluate to "unknown" (no edge) instead.
const MAX_EXPRESSION_DEPTH: u32 = 24;

/// Predeclared types.
const BUILTIN_TYPES: &[&str] = &[
    "bool",
    "byte",
    "complex64",
    "complex128",
    "error",
    "float32",
    "float64",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "rune",
    "string",
    "uint",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "uintptr",
    "any",
    "comparable",
];
/// Predeclared functions and values.
const BUILTIN_FUNCS: &[&str] = &[
    "append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make", "max",
    "min", "new", "panic", "print", "println", "real", "recover", "nil", "true", "false", "iota",
];

/// A resolved type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TypeR {
    /// A type declared in the repository (its qname).
    Named(String),
    Builtin(String),
    /// A type of a package outside the repository (`path.Name`).
    External(String),
    Pointer(Box<TypeR>),
    Slice(Box<TypeR>),
    Map(Box<TypeR>, Box<TypeR>),
    Chan(Box<TypeR>),
    Func(Vec<TypeR>),
    Unknown,
}

impl TypeR {
    fn deref(&self) -> &TypeR {
        match self {
            TypeR::Pointer(inner) => inner.deref(),
            other => other,
        }
    }

    /// Canonical spelling for signature comparison; `?` matches anything.
    pub(crate) fn key(&self) -> String {
        match self {
            TypeR::Named(q) | TypeR::External(q) => q.clone(),
            TypeR::Builtin(b) if b == "byte" => "uint8".into(),
            TypeR::Builtin(b) if b == "rune" => "int32".into(),
            TypeR::Builtin(b) => b.clone(),
            TypeR::Pointer(t) => format!("*{}", t.key()),
            TypeR::Slice(t) => format!("[]{}", t.key()),
            TypeR::Map(k, v) => format!("map[{}]{}", k.key(), v.key()),
            TypeR::Chan(t) => format!("chan {}", t.key()),
            TypeR::Func(_) | TypeR::Unknown => "?".into(),
        }
    }
}

/// A package-level name.
#[derive(Debug, Clone)]
pub(crate) enum Member {
    Func { qname: String, results: Vec<TypeR> },
    Type { qname: String },
    Var { qname: String },
}

/// A method as seen by resolution.
#[derive(Debug, Clone)]
pub(crate) struct MethodInfo {
    pub qname: String,
    pub results: Vec<TypeR>,
    /// Parameter keys, result keys, variadic.
    pub sig: (Vec<String>, Vec<String>, bool),
}

/// A declared type.
#[derive(Debug, Clone)]
pub(crate) struct TypeInfo {
    pub kind: GoTypeKind,
    pub alias_of: Option<TypeR>,
    pub underlying: TypeR,
    /// `(name, type, embedded)`.
    pub fields: Vec<(String, TypeR, bool)>,
    /// Declared methods (for interfaces: the interface's own methods).
    pub methods: HashMap<String, MethodInfo>,
    pub embeds: Vec<TypeR>,
    pub constraint: bool,
    pub file: String,
    pub line: u32,
}

/// The file-level view used when resolving names.
#[derive(Debug, Default)]
pub(crate) struct FileCtx {
    pub pkg_path: String,
    pub imports: HashMap<String, String>,
    pub dot_imports: Vec<String>,
}

/// Global Go tables.
#[derive(Debug, Default)]
pub(crate) struct GoIndex {
    pub pkgs: HashMap<String, HashMap<String, Member>>,
    pub pkg_names: HashMap<String, String>,
    pub types: HashMap<String, TypeInfo>,
    pub var_types: HashMap<String, TypeR>,
    /// Interface method qname → implementing method qnames.
    pub impls: HashMap<String, Vec<String>>,
    /// file → `(type, interface, line, confidence)` for concrete types declared in that file.
    pub implements: HashMap<String, Vec<(String, String, u32, Confidence)>>,
    /// qname → the file that owns the symbol (first declaration wins).
    pub owners: HashMap<String, String>,
    /// pkg path → (file, line) of the package symbol.
    pub pkg_home: HashMap<String, (String, u32)>,
}

pub(crate) fn go_files<'a>(files: &[&'a FileFacts]) -> Vec<(&'a FileFacts, &'a GoFile)> {
    files
        .iter()
        .filter_map(|f| match &f.lang {
            super::facts::LangFacts::Go(g) => Some((*f, g)),
            _ => None,
        })
        .collect()
}

impl GoIndex {
    /// Builds the tables from every Go file (sorted by path).
    pub(crate) fn build(files: &[&FileFacts]) -> GoIndex {
        let gos = go_files(files);
        let mut index = GoIndex::default();
        index.add_files(&gos, true);
        super::resolve_go_impl::compute_implements(&mut index);
        index
    }

    /// Adds the entries of `gos` (sorted by path) to the tables: everything but `implements`
    /// and `impls`. The incremental update adds whole packages this way after removing their
    /// old entries; it passes `infer_vars: false` and restores the vars' types itself (they
    /// are inferred in one pass over all files, in path order).
    pub(crate) fn add_files(&mut self, gos: &[(&FileFacts, &GoFile)], infer_vars: bool) {
        let gos = gos.to_vec();
        let index = self;
        // Package names and homes.
        for (facts, g) in &gos {
            index
                .pkg_names
                .entry(g.pkg_path.clone())
                .or_insert_with(|| g.pkg_name.clone());
            let is_test = facts.rel.ends_with("_test.go");
            let score = (is_test, g.pkg_doc.is_none());
            let home = index
                .pkg_home
                .entry(g.pkg_path.clone())
                .or_insert((facts.rel.clone(), g.pkg_line));
            let home_is_test = home.0.ends_with("_test.go");
            let _ = score;
            if home_is_test && !is_test {
                *home = (facts.rel.clone(), g.pkg_line);
            }
        }
        // Prefer a non-test file with a package doc comment.
        for (facts, g) in &gos {
            if g.pkg_doc.is_some() && !facts.rel.ends_with("_test.go") {
                let home = index.pkg_home.get_mut(&g.pkg_path);
                if let Some(home) = home {
                    let current_has_doc = gos
                        .iter()
                        .any(|(f, g2)| f.rel == home.0 && g2.pkg_doc.is_some());
                    if !current_has_doc {
                        *home = (facts.rel.clone(), g.pkg_line);
                    }
                }
            }
        }
        // Owners and members (types first so that function results can be resolved).
        for (facts, g) in &gos {
            let members = index.pkgs.entry(g.pkg_path.clone()).or_default();
            for t in &g.types {
                let q = format!("{}.{}", g.pkg_path, t.name);
                members
                    .entry(t.name.clone())
                    .or_insert(Member::Type { qname: q.clone() });
                index.owners.entry(q).or_insert_with(|| facts.rel.clone());
            }
        }
        let ctxs: Vec<FileCtx> = gos.iter().map(|(_, g)| index.file_ctx(g)).collect();
        for ((facts, g), ctx) in gos.iter().zip(&ctxs) {
            for t in &g.types {
                let q = format!("{}.{}", g.pkg_path, t.name);
                if index.owners.get(&q) != Some(&facts.rel) || index.types.contains_key(&q) {
                    continue;
                }
                let mut info = TypeInfo {
                    kind: t.kind,
                    alias_of: None,
                    underlying: index.resolve_type(ctx, &t.underlying),
                    fields: t
                        .fields
                        .iter()
                        .map(|f| (f.name.clone(), index.resolve_type(ctx, &f.ty), f.embedded))
                        .collect(),
                    methods: HashMap::default(),
                    embeds: t
                        .embeds
                        .iter()
                        .map(|e| index.resolve_type(ctx, e))
                        .collect(),
                    constraint: t.constraint,
                    file: facts.rel.clone(),
                    line: t.line,
                };
                if t.alias {
                    info.alias_of = Some(info.underlying.clone());
                }
                for m in &t.methods {
                    let mq = format!("{q}.{}", m.name);
                    info.methods
                        .insert(m.name.clone(), index.method_info(ctx, mq, &m.sig));
                }
                index.types.insert(q, info);
            }
        }
        for ((facts, g), ctx) in gos.iter().zip(&ctxs) {
            for f in &g.funcs {
                match &f.recv {
                    None => {
                        let q = format!("{}.{}", g.pkg_path, f.name);
                        index
                            .owners
                            .entry(q.clone())
                            .or_insert_with(|| facts.rel.clone());
                        let results = f
                            .sig
                            .results
                            .iter()
                            .map(|r| index.resolve_type(ctx, r))
                            .collect();
                        index
                            .pkgs
                            .entry(g.pkg_path.clone())
                            .or_default()
                            .entry(f.name.clone())
                            .or_insert(Member::Func { qname: q, results });
                    }
                    Some(recv) => {
                        let tq = format!("{}.{recv}", g.pkg_path);
                        let q = format!("{tq}.{}", f.name);
                        index
                            .owners
                            .entry(q.clone())
                            .or_insert_with(|| facts.rel.clone());
                        let info = index.method_info(ctx, q, &f.sig);
                        if let Some(t) = index.types.get_mut(&tq) {
                            t.methods.entry(f.name.clone()).or_insert(info);
                        }
                    }
                }
            }
            for v in &g.values {
                let q = format!("{}.{}", g.pkg_path, v.name);
                index
                    .owners
                    .entry(q.clone())
                    .or_insert_with(|| facts.rel.clone());
                index
                    .pkgs
                    .entry(g.pkg_path.clone())
                    .or_default()
                    .entry(v.name.clone())
                    .or_insert(Member::Var { qname: q.clone() });
                if let Some(ty) = &v.ty {
                    let r = index.resolve_type(ctx, ty);
                    index.var_types.entry(q).or_insert(r);
                }
            }
            for t in &g.types {
                let tq = format!("{}.{}", g.pkg_path, t.name);
                for f in &t.fields {
                    index
                        .owners
                        .entry(format!("{tq}.{}", f.name))
                        .or_insert_with(|| facts.rel.clone());
                }
                for m in &t.methods {
                    index
                        .owners
                        .entry(format!("{tq}.{}", m.name))
                        .or_insert_with(|| facts.rel.clone());
                }
            }
        }
        // Types of package-level vars from their initializers (two rounds for chains).
        let rounds = if infer_vars { 2 } else { 0 };
        for _ in 0..rounds {
            for ((_, g), ctx) in gos.iter().zip(&ctxs) {
                for v in &g.values {
                    let q = format!("{}.{}", g.pkg_path, v.name);
                    if index.var_types.contains_key(&q) {
                        continue;
                    }
                    let Some((body, expr, idx)) = v.init else {
                        continue;
                    };
                    let Some(body) = g.bodies.get(body) else {
                        continue;
                    };
                    let mut eval = Eval::new(index, ctx, body);
                    let ty = eval.value_type(expr, idx);
                    if ty != TypeR::Unknown {
                        index.var_types.insert(q, ty);
                    }
                }
            }
        }
    }

    /// The type of package-level var `v` of `g` inferred from its initializer against the
    /// current tables (`Unknown` if it has none).
    pub(crate) fn infer_var_type(&self, g: &GoFile, v: &super::go::GoValueDecl) -> TypeR {
        let Some((body, expr, idx)) = v.init else {
            return TypeR::Unknown;
        };
        let Some(body) = g.bodies.get(body) else {
            return TypeR::Unknown;
        };
        let ctx = self.file_ctx(g);
        Eval::new(self, &ctx, body).value_type(expr, idx)
    }

    /// Evaluates the operand of every selector `x.name` in `g` with `name` in `names` and
    /// calls `hit` with what it denotes; `true` as soon as `hit` returns `true`. (The
    /// incremental update uses it to tell whether a changed lookup can reach a file.)
    pub(crate) fn probe_selectors(
        &self,
        g: &GoFile,
        names: &std::collections::BTreeSet<String>,
        hit: &mut dyn FnMut(&Probe<'_>) -> bool,
    ) -> bool {
        let ctx = self.file_ctx(g);
        for body in &g.bodies {
            let mut eval: Option<Eval<'_>> = None;
            for e in &body.exprs {
                let GExpr::Selector(op, name) = e else {
                    continue;
                };
                if !names.contains(name.as_str()) {
                    continue;
                }
                let eval = eval.get_or_insert_with(|| Eval::new(self, &ctx, body));
                let val = eval.eval(*op, false);
                let mut probe = Probe {
                    name,
                    pkg: None,
                    ty: None,
                    method: None,
                };
                match &val {
                    Val::Pkg(p) => probe.pkg = Some(p.clone()),
                    Val::Type(t) | Val::Value(t, _) => {
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

    fn method_info(&self, ctx: &FileCtx, qname: String, sig: &super::go::GoSig) -> MethodInfo {
        let params: Vec<TypeR> = sig
            .params
            .iter()
            .map(|p| self.resolve_type(ctx, p))
            .collect();
        let results: Vec<TypeR> = sig
            .results
            .iter()
            .map(|p| self.resolve_type(ctx, p))
            .collect();
        MethodInfo {
            qname,
            sig: (
                params.iter().map(TypeR::key).collect(),
                results.iter().map(TypeR::key).collect(),
                sig.variadic,
            ),
            results,
        }
    }

    /// The import view of a file.
    pub(crate) fn file_ctx(&self, g: &GoFile) -> FileCtx {
        let mut ctx = FileCtx {
            pkg_path: g.pkg_path.clone(),
            ..FileCtx::default()
        };
        for imp in &g.imports {
            match imp.alias.as_deref() {
                Some("_") => {}
                Some(".") => ctx.dot_imports.push(imp.path.clone()),
                Some(alias) => {
                    ctx.imports.insert(alias.to_owned(), imp.path.clone());
                }
                None => {
                    let name = self
                        .pkg_names
                        .get(&imp.path)
                        .cloned()
                        .unwrap_or_else(|| default_package_name(&imp.path));
                    ctx.imports.insert(name, imp.path.clone());
                }
            }
        }
        ctx
    }

    /// Resolves a written type in a file's context.
    pub(crate) fn resolve_type(&self, ctx: &FileCtx, ty: &GType) -> TypeR {
        match ty {
            GType::Named { pkg: None, name } => {
                if let Some(Member::Type { qname }) =
                    self.pkgs.get(&ctx.pkg_path).and_then(|m| m.get(name))
                {
                    return TypeR::Named(qname.clone());
                }
                for dot in &ctx.dot_imports {
                    if let Some(Member::Type { qname }) =
                        self.pkgs.get(dot).and_then(|m| m.get(name))
                    {
                        return TypeR::Named(qname.clone());
                    }
                }
                if BUILTIN_TYPES.contains(&name.as_str()) {
                    TypeR::Builtin(name.clone())
                } else {
                    TypeR::Unknown
                }
            }
            GType::Named {
                pkg: Some(alias),
                name,
            } => match ctx.imports.get(alias) {
                Some(path) => match self.pkgs.get(path) {
                    Some(members) => match members.get(name) {
                        Some(Member::Type { qname }) => TypeR::Named(qname.clone()),
                        _ => TypeR::Unknown,
                    },
                    None => TypeR::External(format!("{path}.{name}")),
                },
                None => TypeR::Unknown,
            },
            GType::Pointer(t) => TypeR::Pointer(Box::new(self.resolve_type(ctx, t))),
            GType::Slice(t) => TypeR::Slice(Box::new(self.resolve_type(ctx, t))),
            GType::Map(k, v) => TypeR::Map(
                Box::new(self.resolve_type(ctx, k)),
                Box::new(self.resolve_type(ctx, v)),
            ),
            GType::Chan(t) => TypeR::Chan(Box::new(self.resolve_type(ctx, t))),
            GType::Func(r) => TypeR::Func(r.iter().map(|t| self.resolve_type(ctx, t)).collect()),
            GType::Unknown => TypeR::Unknown,
        }
    }

    /// Follows aliases to the declared type.
    pub(crate) fn type_info(&self, qname: &str) -> Option<&TypeInfo> {
        let mut info = self.types.get(qname)?;
        for _ in 0..8 {
            match &info.alias_of {
                Some(TypeR::Named(target)) => match self.types.get(target) {
                    Some(next) => info = next,
                    None => return Some(info),
                },
                _ => return Some(info),
            }
        }
        Some(info)
    }

    /// Finds a field or method `name` of `ty`, following embedding (shallowest depth wins).
    pub(crate) fn lookup_member(&self, ty: &TypeR, name: &str) -> Option<Found> {
        let mut level: Vec<String> = match ty.deref() {
            TypeR::Named(q) => vec![q.clone()],
            _ => return None,
        };
        for _depth in 0..MAX_EMBEDDED_LOOKUP_DEPTH {
            let mut found: Option<Found> = None;
            let mut ambiguous = false;
            let mut next = Vec::new();
            for q in &level {
                let Some(info) = self.type_info(q) else {
                    continue;
                };
                let hit = if let Some(m) = info.methods.get(name) {
                    Some(Found::Method {
                        qname: m.qname.clone(),
                        results: m.results.clone(),
                        iface: info.kind == GoTypeKind::Interface,
                    })
                } else if let Some((_, fty, _)) = info.fields.iter().find(|(n, _, _)| n == name) {
                    Some(Found::Field(fty.clone()))
                } else {
                    None
                };
                if let Some(hit) = hit {
                    if found.is_some() {
                        ambiguous = true;
                    }
                    found = Some(hit);
                    continue;
                }
                for (_, fty, embedded) in &info.fields {
                    if *embedded && let TypeR::Named(e) = fty.deref() {
                        next.push(e.clone());
                    }
                }
                for e in &info.embeds {
                    if let TypeR::Named(e) = e.deref() {
                        next.push(e.clone());
                    }
                }
                // `type A B` keeps B's fields (and an interface's methods).
                if info.fields.is_empty()
                    && info.alias_of.is_none()
                    && let TypeR::Named(u) = &info.underlying
                    && let Some(under) = self.type_info(u)
                {
                    if under.kind == GoTypeKind::Interface {
                        next.push(u.clone());
                    } else if let Some((_, fty, _)) =
                        under.fields.iter().find(|(n, _, _)| n == name)
                    {
                        found = Some(Found::Field(fty.clone()));
                    } else {
                        for (_, fty, embedded) in &under.fields {
                            if *embedded && let TypeR::Named(e) = fty.deref() {
                                next.push(e.clone());
                            }
                        }
                    }
                }
            }
            if ambiguous {
                return None;
            }
            if found.is_some() {
                return found;
            }
            if next.is_empty() {
                return None;
            }
            level = next;
        }
        None
    }
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

/// Result of a member lookup.
#[derive(Debug, Clone)]
pub(crate) enum Found {
    Method {
        qname: String,
        results: Vec<TypeR>,
        iface: bool,
    },
    Field(TypeR),
}

/// The name a package is imported under by default (`gopkg.in/yaml.v3` → `yaml`, `x/v2` → `x`).
pub(crate) fn default_package_name(path: &str) -> String {
    let mut parts = path.rsplit('/');
    let mut last = parts.next().unwrap_or(path);
    if last.len() > 1 && last.starts_with('v') && last[1..].bytes().all(|b| b.is_ascii_digit()) {
        last = parts.next().unwrap_or(last);
    }
    let last = last.split('.').next().unwrap_or(last);
    let last = last.strip_prefix("go-").unwrap_or(last);
    last.replace('-', "_")
}

/// What an expression denotes.
#[derive(Debug, Clone)]
enum Val {
    Pkg(String),
    Type(TypeR),
    Value(TypeR, bool),
    Func {
        qname: String,
        results: Vec<TypeR>,
        iface: bool,
        inferred: bool,
    },
    Builtin,
    Unknown,
}

/// Evaluates the expressions of one body.
struct Eval<'a> {
    index: &'a GoIndex,
    ctx: &'a FileCtx,
    body: &'a GoBody,
    memo: Vec<Option<Val>>,
    /// Package-level vars/consts touched while evaluating the current reference.
    touched: Vec<String>,
    depth: u32,
}

impl<'a> Eval<'a> {
    fn new(index: &'a GoIndex, ctx: &'a FileCtx, body: &'a GoBody) -> Self {
        Eval {
            index,
            ctx,
            body,
            memo: vec![None; body.bindings.len()],
            touched: Vec::new(),
            depth: 0,
        }
    }

    fn value_type(&mut self, expr: u32, idx: u32) -> TypeR {
        match self.binding_val(&GBind::Init { expr, idx }) {
            Val::Value(t, _) => t,
            _ => TypeR::Unknown,
        }
    }

    fn binding(&mut self, id: u32) -> Val {
        if let Some(Some(v)) = self.memo.get(id as usize) {
            return v.clone();
        }
        let Some(bind) = self.body.bindings.get(id as usize) else {
            return Val::Unknown;
        };
        // Guard against cycles while evaluating.
        if let Some(slot) = self.memo.get_mut(id as usize) {
            *slot = Some(Val::Unknown);
        }
        let v = self.binding_val(bind);
        if let Some(slot) = self.memo.get_mut(id as usize) {
            *slot = Some(v.clone());
        }
        v
    }

    fn binding_val(&mut self, bind: &GBind) -> Val {
        match bind {
            GBind::Declared(t) => Val::Value(self.index.resolve_type(self.ctx, t), false),
            GBind::Init { expr, idx } => {
                let e = self
                    .body
                    .exprs
                    .get(*expr as usize)
                    .cloned()
                    .unwrap_or(GExpr::Unknown);
                if let GExpr::Call(callee) = e {
                    match self.eval(callee, false) {
                        Val::Func { results, .. } => match results.get(*idx as usize) {
                            Some(t) => Val::Value(t.clone(), true),
                            None => Val::Unknown,
                        },
                        Val::Type(t) if *idx == 0 => Val::Value(t, false),
                        Val::Value(TypeR::Func(results), _) => match results.get(*idx as usize) {
                            Some(t) => Val::Value(t.clone(), true),
                            None => Val::Unknown,
                        },
                        _ => Val::Unknown,
                    }
                } else if *idx == 0 {
                    match self.eval(*expr, false) {
                        Val::Value(t, inferred) => Val::Value(t, inferred),
                        Val::Func {
                            qname,
                            results,
                            iface,
                            ..
                        } => Val::Func {
                            qname,
                            results,
                            iface,
                            inferred: true,
                        },
                        _ => Val::Unknown,
                    }
                } else {
                    Val::Unknown
                }
            }
            GBind::RangeKey(e) => match self.eval(*e, false) {
                Val::Value(t, inf) => match t.deref() {
                    TypeR::Map(k, _) => Val::Value((**k).clone(), inf),
                    TypeR::Chan(v) => Val::Value((**v).clone(), inf),
                    _ => Val::Unknown,
                },
                _ => Val::Unknown,
            },
            GBind::RangeValue(e) => match self.eval(*e, false) {
                Val::Value(t, inf) => match t.deref() {
                    TypeR::Map(_, v) | TypeR::Slice(v) => Val::Value((**v).clone(), inf),
                    _ => Val::Unknown,
                },
                _ => Val::Unknown,
            },
            GBind::TypeName | GBind::Unknown => Val::Unknown,
        }
    }

    fn member(&mut self, m: &Member, record: bool) -> Val {
        match m {
            Member::Func { qname, results } => Val::Func {
                qname: qname.clone(),
                results: results.clone(),
                iface: false,
                inferred: false,
            },
            Member::Type { qname } => Val::Type(TypeR::Named(qname.clone())),
            Member::Var { qname, .. } => {
                if record {
                    self.touched.push(qname.clone());
                }
                let t = self
                    .index
                    .var_types
                    .get(qname)
                    .cloned()
                    .unwrap_or(TypeR::Unknown);
                Val::Value(t, false)
            }
        }
    }

    fn eval(&mut self, id: u32, record: bool) -> Val {
        self.depth += 1;
        let v = if self.depth > MAX_EXPRESSION_DEPTH {
            Val::Unknown
        } else {
            self.eval_inner(id, record)
        };
        self.depth -= 1;
        v
    }

    fn eval_inner(&mut self, id: u32, record: bool) -> Val {
        let Some(expr) = self.body.exprs.get(id as usize) else {
            return Val::Unknown;
        };
        let index = self.index;
        match expr {
            GExpr::Local(b) => self.binding(*b),
            GExpr::Free(name) => {
                if let Some(m) = index.pkgs.get(&self.ctx.pkg_path).and_then(|m| m.get(name)) {
                    return self.member(m, record);
                }
                if let Some(path) = self.ctx.imports.get(name) {
                    return Val::Pkg(path.clone());
                }
                for dot in &self.ctx.dot_imports {
                    if let Some(m) = index.pkgs.get(dot).and_then(|m| m.get(name)) {
                        return self.member(m, record);
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
            GExpr::Selector(operand, field) => match self.eval(*operand, record) {
                Val::Pkg(path) => match index.pkgs.get(&path).and_then(|m| m.get(field)) {
                    Some(m) => self.member(m, record),
                    None => Val::Unknown,
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
                    },
                    _ => Val::Unknown,
                },
                Val::Value(t, inferred) => match index.lookup_member(&t, field) {
                    Some(Found::Method {
                        qname,
                        results,
                        iface,
                    }) => Val::Func {
                        qname,
                        results,
                        iface,
                        inferred,
                    },
                    Some(Found::Field(ft)) => Val::Value(ft, inferred),
                    None => Val::Unknown,
                },
                _ => Val::Unknown,
            },
            GExpr::Call(callee) => match self.eval(*callee, false) {
                Val::Func { results, .. } => match results.first() {
                    Some(t) => Val::Value(t.clone(), true),
                    None => Val::Unknown,
                },
                Val::Type(t) => Val::Value(t, false),
                Val::Value(TypeR::Func(results), _) => match results.first() {
                    Some(t) => Val::Value(t.clone(), true),
                    None => Val::Unknown,
                },
                _ => Val::Unknown,
            },
            GExpr::Composite(t) | GExpr::Assert(t) => {
                Val::Value(index.resolve_type(self.ctx, t), false)
            }
            GExpr::Type(t) => Val::Type(index.resolve_type(self.ctx, t)),
            GExpr::Index(operand) => match self.eval(*operand, record) {
                Val::Value(t, inf) => match t.deref() {
                    TypeR::Slice(e) | TypeR::Map(_, e) => Val::Value((**e).clone(), inf),
                    _ => Val::Unknown,
                },
                f @ (Val::Func { .. } | Val::Type(_)) => f,
                _ => Val::Unknown,
            },
            GExpr::FuncLit(results) => Val::Value(
                TypeR::Func(
                    results
                        .iter()
                        .map(|t| index.resolve_type(self.ctx, t))
                        .collect(),
                ),
                false,
            ),
            GExpr::Unknown => Val::Unknown,
        }
    }
}

/// Resolves the references of one Go file into edges.
pub(crate) fn resolve_file(index: &GoIndex, facts: &FileFacts, g: &GoFile, edges: &mut Vec<Edge>) {
    let ctx = index.file_ctx(g);
    let file = &facts.rel;
    // Imports, from the package.
    for imp in &g.imports {
        let to = index.pkgs.contains_key(&imp.path).then(|| imp.path.clone());
        edges.push(Edge {
            kind: EdgeKind::Imports,
            from: g.pkg_path.clone(),
            to,
            to_name: imp.path.clone(),
            file: file.clone(),
            line: imp.line,
            confidence: Confidence::Exact,
        });
    }
    for body in &g.bodies {
        let mut eval = Eval::new(index, &ctx, body);
        for r in &body.refs {
            eval.touched.clear();
            let mut push = |kind: EdgeKind, to: Option<String>, confidence: Confidence| {
                edges.push(Edge {
                    kind,
                    from: body.owner.clone(),
                    to,
                    to_name: r.name.clone(),
                    file: file.clone(),
                    line: r.line,
                    confidence,
                });
            };
            match r.kind {
                GRefKind::Call => {
                    let callee = match body.exprs.get(r.expr as usize) {
                        Some(GExpr::Call(c)) => *c,
                        _ => continue,
                    };
                    // An immediately called function literal: its body is already attributed.
                    if matches!(body.exprs.get(callee as usize), Some(GExpr::FuncLit(_))) {
                        continue;
                    }
                    match eval.eval(callee, true) {
                        Val::Func {
                            qname, inferred, ..
                        } => {
                            let conf = if inferred {
                                Confidence::Inferred
                            } else {
                                Confidence::Exact
                            };
                            push(EdgeKind::Calls, Some(qname), conf);
                        }
                        Val::Type(TypeR::Named(q)) => {
                            push(EdgeKind::Uses, Some(q), Confidence::Exact)
                        }
                        Val::Type(_) | Val::Builtin => {}
                        _ => push(EdgeKind::Calls, None, Confidence::Exact),
                    }
                }
                GRefKind::Use => {
                    let expr = body.exprs.get(r.expr as usize);
                    match expr {
                        Some(GExpr::Type(t)) => match index.resolve_type(&ctx, t) {
                            TypeR::Named(q) => push(EdgeKind::Uses, Some(q), Confidence::Exact),
                            TypeR::Builtin(_) => {}
                            _ => {
                                if !matches!(t, GType::Named { pkg: None, name } if BUILTIN_TYPES.contains(&name.as_str()))
                                {
                                    push(EdgeKind::Uses, None, Confidence::Exact);
                                }
                            }
                        },
                        _ => {
                            if let Val::Type(TypeR::Named(q)) = eval.eval(r.expr, true) {
                                push(EdgeKind::Uses, Some(q), Confidence::Exact);
                            }
                        }
                    }
                }
            }
            for var in std::mem::take(&mut eval.touched) {
                edges.push(Edge {
                    kind: EdgeKind::Uses,
                    from: body.owner.clone(),
                    to: Some(var),
                    to_name: r.name.clone(),
                    file: file.clone(),
                    line: r.line,
                    confidence: Confidence::Exact,
                });
            }
        }
    }
    // Implementations of interfaces declared in this file's types.
    // (Dynamic dispatch edges are added by the caller from `index.impls`.)
}

/// Symbols declared in one Go file (first declaration of a qname wins across files).
pub(crate) fn file_symbols(index: &GoIndex, facts: &FileFacts, g: &GoFile, out: &mut Vec<Symbol>) {
    let file = &facts.rel;
    let owned = |q: &str| index.owners.get(q).is_none_or(|f| f == file);
    let mk = |qname: String,
              name: &str,
              kind: SymbolKind,
              line: u32,
              end_line: u32,
              signature: &str,
              doc: &Option<String>,
              parent: &str| Symbol {
        qname,
        name: name.to_owned(),
        kind,
        language: Language::Go,
        file: file.clone(),
        line,
        end_line,
        signature: (!signature.is_empty()).then(|| signature.to_owned()),
        doc: doc.clone(),
        parent: Some(parent.to_owned()),
    };
    if index
        .pkg_home
        .get(&g.pkg_path)
        .is_some_and(|(f, _)| f == file)
    {
        out.push(Symbol {
            qname: g.pkg_path.clone(),
            name: g.pkg_name.clone(),
            kind: SymbolKind::Package,
            language: Language::Go,
            file: file.clone(),
            line: g.pkg_line.max(1),
            end_line: facts.lines.max(1),
            signature: Some(format!("package {}", g.pkg_name)),
            doc: g.pkg_doc.clone(),
            parent: None,
        });
    }
    let pkg = &g.pkg_path;
    for t in &g.types {
        let q = format!("{pkg}.{}", t.name);
        if !owned(&q) {
            continue;
        }
        let kind = match (t.kind, t.alias) {
            (GoTypeKind::Struct, false) => SymbolKind::Struct,
            (GoTypeKind::Interface, false) => SymbolKind::Interface,
            _ => SymbolKind::Type,
        };
        out.push(mk(
            q.clone(),
            &t.name,
            kind,
            t.line,
            t.end_line,
            &t.signature,
            &t.doc,
            pkg,
        ));
        for f in &t.fields {
            let fq = format!("{q}.{}", f.name);
            if owned(&fq) {
                out.push(mk(
                    fq,
                    &f.name,
                    SymbolKind::Field,
                    f.line,
                    f.end_line,
                    &f.signature,
                    &None,
                    &q,
                ));
            }
        }
        for m in &t.methods {
            let mq = format!("{q}.{}", m.name);
            if owned(&mq) {
                out.push(mk(
                    mq,
                    &m.name,
                    SymbolKind::Method,
                    m.line,
                    m.end_line,
                    &m.signature,
                    &m.doc,
                    &q,
                ));
            }
        }
    }
    for f in &g.funcs {
        let (q, kind, parent) = match &f.recv {
            Some(r) => (
                format!("{pkg}.{r}.{}", f.name),
                SymbolKind::Method,
                format!("{pkg}.{r}"),
            ),
            None => (
                format!("{pkg}.{}", f.name),
                SymbolKind::Function,
                pkg.clone(),
            ),
        };
        if owned(&q) {
            out.push(mk(
                q,
                &f.name,
                kind,
                f.line,
                f.end_line,
                &f.signature,
                &f.doc,
                &parent,
            ));
        }
    }
    for v in &g.values {
        let q = format!("{pkg}.{}", v.name);
        if owned(&q) {
            let kind = if v.is_const {
                SymbolKind::Const
            } else {
                SymbolKind::Var
            };
            out.push(mk(
                q,
                &v.name,
                kind,
                v.line,
                v.end_line,
                &v.signature,
                &v.doc,
                pkg,
            ));
        }
    }
}

/// `implements` edges whose concrete type is declared in `file`.
pub(crate) fn implements_edges(index: &GoIndex, file: &str, edges: &mut Vec<Edge>) {
    for (ty, iface, line, conf) in index.implements.get(file).into_iter().flatten() {
        edges.push(Edge {
            kind: EdgeKind::Implements,
            from: ty.clone(),
            to: Some(iface.clone()),
            to_name: iface.rsplit('/').next().unwrap_or(iface).to_owned(),
            file: file.to_owned(),
            line: *line,
            confidence: *conf,
        });
    }
}
