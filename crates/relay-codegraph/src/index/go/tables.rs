//! Go resolution tables: packages, declared types with their fields and method sets, and the
//! types of package-level vars, built from every file's facts; plus the written-type resolver and
//! the member lookup (embedding promotion) that expression evaluation and the incremental patch use.

use rustc_hash::FxHashMap as HashMap;

use super::eval::Eval;
use super::{GType, GoFile, GoTypeKind};
use crate::index::facts::FileFacts;
use crate::model::Confidence;

/// Levels of embedding searched for a field or method (Go's promotion rule: the shallowest level
/// wins). Deeper promotion is rare in real code; past this the member is left unresolved rather
/// than guessed.
const MAX_EMBEDDED_LOOKUP_DEPTH: usize = 6;

/// Predeclared types.
pub(super) const BUILTIN_TYPES: &[&str] = &[
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
pub(super) const BUILTIN_FUNCS: &[&str] = &[
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
    pub(super) fn deref(&self) -> &TypeR {
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
            crate::index::facts::LangFacts::Go(g) => Some((*f, g)),
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
        super::implements::compute_implements(&mut index);
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

    fn method_info(&self, ctx: &FileCtx, qname: String, sig: &super::GoSig) -> MethodInfo {
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
