//! Go resolution tables: packages, declared types with their fields and method sets, and the
//! types of package-level vars, built from every file's facts; plus the written-type resolver and
//! the member lookup (embedding promotion) that expression evaluation and the incremental patch use.

use rustc_hash::FxHashMap as HashMap;

use std::collections::BTreeMap;

use super::facts::{GType, GoFile, GoTypeKind};
use crate::model::Confidence;

/// Levels of embedding searched for a field or method (Go's promotion rule: the shallowest level
/// wins). Deeper promotion is rare in real code; past this the member is left unresolved rather
/// than guessed.
const MAX_EMBEDDED_LOOKUP_DEPTH: usize = 6;

/// Aliases followed from a name to its declared type (`type A = B`, `type B = C` …). Real chains are
/// one or two long; the bound ends an alias cycle, whose last type is then taken as declared.
const MAX_ALIAS_CHAIN: usize = 8;

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
    pub sig: SignatureKeys,
}

/// A method's signature as `implements` compares it: the canonical keys ([`TypeR::key`]) of its
/// parameter and result types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SignatureKeys {
    pub params: Vec<String>,
    pub results: Vec<String>,
    pub variadic: bool,
}

/// A field of a declared struct type.
#[derive(Debug, Clone)]
pub(crate) struct FieldInfo {
    pub name: String,
    pub ty: TypeR,
    /// Written without a name (its fields and methods are promoted).
    pub embedded: bool,
}

/// A concrete method a call through an interface may reach.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Target {
    /// The concrete type whose method set has the method.
    pub ty: String,
    /// The method (declared by `ty`, or promoted from a type it embeds).
    pub method: String,
}

/// A concrete type that implements an interface: one `implements` edge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Implementation {
    /// The concrete type's qname.
    pub ty: String,
    /// The interface's qname.
    pub interface: String,
    /// The concrete type's declaration line.
    pub line: u32,
    pub confidence: Confidence,
}

/// Where a package's symbol is emitted: the file (and its `package` clause line) that documents
/// the package best.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PackageHome {
    pub file: String,
    pub line: u32,
}

/// A declared type.
#[derive(Debug, Clone)]
pub(crate) struct TypeInfo {
    pub kind: GoTypeKind,
    pub alias_of: Option<TypeR>,
    pub underlying: TypeR,
    pub fields: Vec<FieldInfo>,
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

/// What a dynamic call site can reach: the concrete types (interface call) or functions
/// (function-value call) that flow to its receiver or callee; `None` when unknown.
pub(crate) type SiteValues = Option<Vec<String>>;

/// The solved flow: per file, per `(body, call expression)`, what flows to the call's
/// receiver (or called value).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct GoFlow {
    pub sites: HashMap<String, BTreeMap<(u32, u32), SiteValues>>,
}

impl GoFlow {
    pub(crate) fn site(&self, file: &str, body: u32, call: u32) -> Option<&SiteValues> {
        self.sites.get(file)?.get(&(body, call))
    }

    /// Files whose sites differ between `self` and `new`.
    pub(crate) fn changed_files(&self, new: &GoFlow) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (file, sites) in &self.sites {
            if new.sites.get(file) != Some(sites) {
                out.push(file.clone());
            }
        }
        for file in new.sites.keys() {
            if !self.sites.contains_key(file) {
                out.push(file.clone());
            }
        }
        out
    }
}

/// The [`GoIndex::impls`] key of a call of `Error` on a value of the predeclared `error`.
pub(super) const ERROR_DISPATCH: &str = "error.Error";

/// Global Go tables.
#[derive(Debug, Default)]
pub(crate) struct GoIndex {
    pub pkgs: HashMap<String, HashMap<String, Member>>,
    pub pkg_names: HashMap<String, String>,
    pub types: HashMap<String, TypeInfo>,
    pub var_types: HashMap<String, TypeR>,
    /// `<interface qname>.<method>` → the concrete methods a call of that method on a value
    /// of that interface type may reach, for every method of the interface's full method set
    /// (embedded interfaces' included); [`ERROR_DISPATCH`] for the predeclared
    /// `error`. Never an interface method.
    pub impls: HashMap<String, Vec<Target>>,
    /// What flows to each dynamic call site's receiver (or called value).
    pub flow: GoFlow,
    /// file → the implementations by concrete types declared in that file.
    pub implements: HashMap<String, Vec<Implementation>>,
    /// qname → the file that owns the symbol (first declaration wins).
    pub owners: HashMap<String, String>,
    /// pkg path → where the package symbol is emitted.
    pub pkg_home: HashMap<String, PackageHome>,
}

impl GoIndex {
    /// The import view of a file.
    pub(crate) fn file_ctx(&self, go_file: &GoFile) -> FileCtx {
        let mut ctx = FileCtx {
            pkg_path: go_file.pkg_path.clone(),
            ..FileCtx::default()
        };
        for import in &go_file.imports {
            // A `replace` directive makes the import name the replacement's packages; the
            // package name as written still comes from the path in the source.
            let path = go_file
                .replaced
                .iter()
                .find(|(from, _)| *from == import.path)
                .map_or(&import.path, |(_, to)| to);
            match import.alias.as_deref() {
                Some("_") => {}
                Some(".") => ctx.dot_imports.push(path.clone()),
                Some(alias) => {
                    ctx.imports.insert(alias.to_owned(), path.clone());
                }
                None => {
                    let name = self
                        .pkg_names
                        .get(&import.path)
                        .cloned()
                        .unwrap_or_else(|| default_package_name(&import.path));
                    ctx.imports.insert(name, path.clone());
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
        for _ in 0..MAX_ALIAS_CHAIN {
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

    /// The declared type an alias chain ends at (`qname` itself for a declared type).
    pub(crate) fn canonical<'a>(&'a self, qname: &'a str) -> &'a str {
        let mut current = qname;
        for _ in 0..MAX_ALIAS_CHAIN {
            match self
                .types
                .get(current)
                .and_then(|info| info.alias_of.as_ref())
            {
                Some(TypeR::Named(target)) if self.types.contains_key(target) => current = target,
                _ => break,
            }
        }
        current
    }

    /// The type a named non-struct, non-interface type is declared as (`type byPos []Node` →
    /// `[]Node`), through aliases and chains of such declarations; any other type as it is.
    pub(crate) fn underlying<'a>(&'a self, ty: &'a TypeR) -> &'a TypeR {
        let mut current = ty;
        for _ in 0..MAX_ALIAS_CHAIN {
            let TypeR::Named(qname) = current else { break };
            match self.type_info(qname) {
                Some(info) if info.kind == GoTypeKind::Other && info.alias_of.is_none() => {
                    current = &info.underlying;
                }
                Some(info) => match &info.alias_of {
                    Some(target) if !matches!(target, TypeR::Named(_)) => current = target,
                    _ => break,
                },
                None => break,
            }
        }
        current
    }

    /// The [`GoIndex::impls`] key of a call of interface method `method_qname` (named `name`)
    /// on a value of static type `ty`: the receiver's own interface type when it is one (its
    /// implementers, not those of the interface that declares the method), else (a struct
    /// embedding an interface) the declaring interface.
    pub(crate) fn dispatch_key(&self, ty: &TypeR, method_qname: &str, name: &str) -> String {
        if let TypeR::Named(qname) = ty.deref() {
            let qname = self.canonical(qname);
            if self
                .types
                .get(qname)
                .is_some_and(|info| info.kind == GoTypeKind::Interface && !info.constraint)
            {
                return format!("{qname}.{name}");
            }
        }
        let declaring = method_qname
            .rsplit_once('.')
            .map_or(method_qname, |(ty, _)| ty);
        format!("{declaring}.{name}")
    }

    /// Finds a field or method `name` of `ty`, following embedding (shallowest depth wins).
    pub(crate) fn lookup_member(&self, ty: &TypeR, name: &str) -> Option<Found> {
        let mut level: Vec<String> = match ty.deref() {
            TypeR::Named(type_qname) => vec![type_qname.clone()],
            _ => return None,
        };
        for _depth in 0..MAX_EMBEDDED_LOOKUP_DEPTH {
            let mut found: Option<Found> = None;
            let mut ambiguous = false;
            let mut next = Vec::new();
            for type_qname in &level {
                let Some(info) = self.type_info(type_qname) else {
                    continue;
                };
                let hit = if let Some(method) = info.methods.get(name) {
                    Some(Found::Method {
                        qname: method.qname.clone(),
                        results: method.results.clone(),
                        iface: info.kind == GoTypeKind::Interface,
                    })
                } else {
                    info.fields
                        .iter()
                        .find(|field| field.name == name)
                        .map(|field| {
                            Found::Field(field.ty.clone(), self.canonical(type_qname).to_owned())
                        })
                };
                if let Some(hit) = hit {
                    if found.is_some() {
                        ambiguous = true;
                    }
                    found = Some(hit);
                    continue;
                }
                for field in &info.fields {
                    if field.embedded
                        && let TypeR::Named(embedded) = field.ty.deref()
                    {
                        next.push(embedded.clone());
                    }
                }
                for embed in &info.embeds {
                    if let TypeR::Named(embed) = embed.deref() {
                        next.push(embed.clone());
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
                    } else if let Some(field) = under.fields.iter().find(|field| field.name == name)
                    {
                        found = Some(Found::Field(field.ty.clone(), self.canonical(u).to_owned()));
                    } else {
                        for field in &under.fields {
                            if field.embedded
                                && let TypeR::Named(embedded) = field.ty.deref()
                            {
                                next.push(embedded.clone());
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
    /// A field: its type, and the qname of the struct type that declares it.
    Field(TypeR, String),
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
