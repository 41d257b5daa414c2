//! Python resolution: modules, namespaces and class hierarchies (MRO) from all files, and the
//! evaluation of each module's references against them.

use std::sync::Arc;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::facts::{FileFacts, LangFacts};
use super::python::{DefKind, PBind, PExpr, PRefKind, PyFile, ScopeKind};
use crate::model::{Confidence, Edge, EdgeKind, Language, Symbol, SymbolKind};

/// Names that resolve to builtins when nothing else binds them (Python 3.11's `builtins`).
const BUILTINS: &[&str] = &[
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BaseException",
    "BaseExceptionGroup",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "BytesWarning",
    "ChildProcessError",
    "ConnectionAbortedError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "DeprecationWarning",
    "EOFError",
    "Ellipsis",
    "EncodingWarning",
    "EnvironmentError",
    "Exception",
    "ExceptionGroup",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "FutureWarning",
    "GeneratorExit",
    "IOError",
    "ImportError",
    "ImportWarning",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "NotADirectoryError",
    "NotImplemented",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PendingDeprecationWarning",
    "PermissionError",
    "ProcessLookupError",
    "RecursionError",
    "ReferenceError",
    "ResourceWarning",
    "RuntimeError",
    "RuntimeWarning",
    "StopAsyncIteration",
    "StopIteration",
    "SyntaxError",
    "SyntaxWarning",
    "SystemError",
    "SystemExit",
    "TabError",
    "TimeoutError",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "UnicodeTranslateError",
    "UnicodeWarning",
    "UserWarning",
    "ValueError",
    "Warning",
    "WindowsError",
    "ZeroDivisionError",
    "__all__",
    "__build_class__",
    "__builtins__",
    "__class__",
    "__debug__",
    "__dict__",
    "__doc__",
    "__file__",
    "__import__",
    "__loader__",
    "__name__",
    "__package__",
    "__path__",
    "__spec__",
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "cls",
    "compile",
    "complex",
    "copyright",
    "credits",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "exit",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "license",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "quit",
    "range",
    "repr",
    "reveal_type",
    "reversed",
    "round",
    "self",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
];

/// What an expression denotes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Val {
    Module(String),
    Class(String, bool),
    Instance(String, bool),
    Func(String, bool),
    Super(String),
    Builtin,
    Unknown,
}

impl Val {
    fn inferred(self) -> Val {
        match self {
            Val::Class(c, _) => Val::Class(c, true),
            Val::Instance(c, _) => Val::Instance(c, true),
            Val::Func(f, _) => Val::Func(f, true),
            other => other,
        }
    }
}

/// Global Python tables: the files' facts, and [`PyTables`] derived from them (dereferenced).
pub(crate) struct PyIndex<'a> {
    files: Vec<&'a PyFile>,
    /// Address of a file's facts → its index in `files`.
    positions: HashMap<usize, usize>,
    tables: Arc<PyTables>,
}

impl std::ops::Deref for PyIndex<'_> {
    type Target = PyTables;

    fn deref(&self) -> &PyTables {
        &self.tables
    }
}

/// The tables of a [`PyIndex`] that do not borrow the facts (files are referred to by their
/// position in the path-sorted list of Python files), kept by the indexer for updates that
/// change no module's exports.
#[derive(Debug, Default)]
pub(crate) struct PyTables {
    modules: HashMap<String, usize>,
    import_names: HashMap<String, Vec<usize>>,
    /// class qname → (file, def index).
    classes: HashMap<String, (usize, usize)>,
    /// function qname → (file, def index).
    funcs: HashMap<String, (usize, usize)>,
    /// class qname → MRO (`None` marks an unresolved base).
    mro: HashMap<String, Vec<Option<String>>>,
    /// module var qnames.
    vars: HashSet<String>,
    /// qname → owning file (first definition wins).
    owners: HashMap<String, usize>,
    /// Dotted prefixes of module names (namespace packages included).
    prefixes: HashSet<String>,
}

impl<'a> PyIndex<'a> {
    pub(crate) fn build(all: &[&'a FileFacts]) -> PyIndex<'a> {
        let files: Vec<&'a PyFile> = all
            .iter()
            .filter_map(|f| match &f.lang {
                LangFacts::Python(p) => Some(p),
                _ => None,
            })
            .collect();
        let mut index = PyTables::default();
        let packages: HashSet<&str> = files
            .iter()
            .filter(|f| f.is_package)
            .map(|f| f.module.as_str())
            .collect();
        for (i, f) in files.iter().enumerate() {
            index.modules.entry(f.module.clone()).or_insert(i);
            index.owners.entry(f.module.clone()).or_insert(i);
            // Names importable from source roots (directories that are not packages).
            let parts: Vec<&str> = f.module.split('.').collect();
            for k in 1..parts.len() {
                let dir = parts[..k].join(".");
                if !packages.contains(dir.as_str()) {
                    index
                        .import_names
                        .entry(parts[k..].join("."))
                        .or_default()
                        .push(i);
                }
            }
            let mut prefix = String::new();
            for part in &parts[..parts.len().saturating_sub(1)] {
                if !prefix.is_empty() {
                    prefix.push('.');
                }
                prefix.push_str(part);
                index.prefixes.insert(prefix.clone());
            }
            for (d, def) in f.defs.iter().enumerate() {
                index.owners.entry(def.qname.clone()).or_insert(i);
                match def.kind {
                    DefKind::Class => {
                        index.classes.entry(def.qname.clone()).or_insert((i, d));
                    }
                    _ => {
                        index.funcs.entry(def.qname.clone()).or_insert((i, d));
                    }
                }
            }
            for v in &f.vars {
                let q = format!("{}.{}", f.module, v.name);
                index.owners.entry(q.clone()).or_insert(i);
                index.vars.insert(q);
            }
        }
        let mut index = PyIndex::with_tables(files, Arc::new(index));
        let mut mro = HashMap::default();
        for c in index.classes.keys() {
            let line = index.linearize(c, 0, &mut HashSet::default());
            mro.insert(c.clone(), line);
        }
        if let Some(tables) = Arc::get_mut(&mut index.tables) {
            tables.mro = mro;
        }
        index
    }

    /// An index over `all` (the same Python files, in the same order, as when `tables` were
    /// built, with the same exports) reusing `tables`.
    pub(crate) fn kept(all: &[&'a FileFacts], tables: Arc<PyTables>) -> PyIndex<'a> {
        let files = all
            .iter()
            .filter_map(|f| match &f.lang {
                LangFacts::Python(p) => Some(p),
                _ => None,
            })
            .collect();
        PyIndex::with_tables(files, tables)
    }

    fn with_tables(files: Vec<&'a PyFile>, tables: Arc<PyTables>) -> PyIndex<'a> {
        let positions = files
            .iter()
            .enumerate()
            .map(|(i, f)| (std::ptr::from_ref::<PyFile>(f) as usize, i))
            .collect();
        PyIndex {
            files,
            positions,
            tables,
        }
    }

    /// The tables, to keep for later updates.
    pub(crate) fn tables(&self) -> Arc<PyTables> {
        Arc::clone(&self.tables)
    }

    fn module_file(&self, name: &str) -> Option<usize> {
        if let Some(&i) = self.modules.get(name) {
            return Some(i);
        }
        match self.import_names.get(name) {
            Some(v) if v.len() == 1 => Some(v[0]),
            _ => None,
        }
    }

    /// Resolved direct bases of a class (`None` for unresolved ones; `object` dropped).
    fn bases(&self, class: &str) -> Vec<Option<String>> {
        let Some(&(fi, di)) = self.classes.get(class) else {
            return vec![None];
        };
        let file = self.files[fi];
        let def = &file.defs[di];
        let mut out = Vec::new();
        for &b in &def.bases {
            let mut ev = Eval::new(self);
            match ev.expr(fi, b, false) {
                Val::Class(q, _) => out.push(Some(q)),
                Val::Builtin if matches!(&file.exprs[b as usize], PExpr::Name { name, .. } if name == "object") =>
                    {}
                _ => out.push(None),
            }
        }
        out
    }

    /// C3 linearization; with unresolved bases, a depth-first order with `None` markers.
    fn linearize(
        &self,
        class: &str,
        depth: u32,
        seen: &mut HashSet<String>,
    ) -> Vec<Option<String>> {
        if depth > 20 || !seen.insert(class.to_owned()) {
            return vec![Some(class.to_owned())];
        }
        let bases = self.bases(class);
        let mut result = vec![Some(class.to_owned())];
        let mut seqs: Vec<Vec<Option<String>>> = Vec::new();
        for b in &bases {
            match b {
                Some(b) => seqs.push(self.linearize(b, depth + 1, seen)),
                None => seqs.push(vec![None]),
            }
        }
        seen.remove(class);
        if seqs.iter().all(|s| s.iter().all(Option::is_some)) {
            seqs.push(bases.clone());
            let mut seqs: Vec<Vec<String>> = seqs
                .iter()
                .cloned()
                .map(|s| s.into_iter().flatten().collect())
                .collect();
            loop {
                seqs.retain(|s| !s.is_empty());
                if seqs.is_empty() {
                    return result;
                }
                let head = seqs
                    .iter()
                    .map(|s| &s[0])
                    .find(|h| !seqs.iter().any(|s| s[1..].contains(h)));
                let Some(head) = head.cloned() else { break };
                result.push(Some(head.clone()));
                for s in &mut seqs {
                    if s[0] == head {
                        s.remove(0);
                    }
                }
            }
            result.truncate(1);
        }
        // Fallback: depth-first, left to right, with unresolved markers.
        for s in seqs {
            for item in s {
                if item.is_none() || !result.contains(&item) {
                    result.push(item);
                }
            }
        }
        result
    }
}

/// Evaluates expressions across modules.
struct Eval<'i, 'a> {
    index: &'i PyIndex<'a>,
    depth: u32,
    touched: Vec<String>,
    /// Values of names bound in a scope: `(file, scope, name)`.
    memo: HashMap<(usize, u32, &'a str), Val>,
}

impl<'i, 'a> Eval<'i, 'a> {
    fn new(index: &'i PyIndex<'a>) -> Self {
        Eval {
            index,
            depth: 0,
            touched: Vec::new(),
            memo: HashMap::default(),
        }
    }

    fn expr(&mut self, fi: usize, id: u32, record: bool) -> Val {
        self.depth += 1;
        let v = if self.depth > 16 {
            Val::Unknown
        } else {
            self.expr_inner(fi, id, record)
        };
        self.depth -= 1;
        v
    }

    fn expr_inner(&mut self, fi: usize, id: u32, record: bool) -> Val {
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
    fn returns(&mut self, f: &str) -> Val {
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
    fn name(&mut self, fi: usize, scope: u32, name: &str, record: bool) -> Val {
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
    fn scope_value(&mut self, fi: usize, si: u32, name: &str) -> Val {
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

    fn bindings(&mut self, fi: usize, binds: &[PBind]) -> Val {
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

    fn binding(&mut self, fi: usize, b: &PBind) -> Val {
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
    fn module_member(&mut self, module: &str, name: &str, star: bool) -> Option<Val> {
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

    fn attr(&mut self, base: Val, attr: &str) -> Val {
        match base {
            Val::Module(m) => self.module_member(&m, attr, false).unwrap_or(Val::Unknown),
            Val::Class(c, inf) => self.class_attr(&c, attr, 0, inf, false),
            Val::Instance(c, inf) => self.class_attr(&c, attr, 0, inf, true),
            Val::Super(c) => self.class_attr(&c, attr, 1, false, true),
            _ => Val::Unknown,
        }
    }

    /// Looks `attr` up along the MRO of `class`, starting at position `skip`.
    fn class_attr(
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

/// Symbols defined in one module.
pub(crate) fn file_symbols(
    index: &PyIndex<'_>,
    facts: &FileFacts,
    p: &PyFile,
    out: &mut Vec<Symbol>,
) {
    let Some(&fi) = index
        .positions
        .get(&(std::ptr::from_ref::<PyFile>(p) as usize))
    else {
        return;
    };
    let owned = |q: &str| index.owners.get(q).is_none_or(|&o| o == fi);
    let file = &facts.rel;
    if owned(&p.module) {
        out.push(Symbol {
            qname: p.module.clone(),
            name: p.module.rsplit('.').next().unwrap_or(&p.module).to_owned(),
            kind: SymbolKind::Module,
            language: Language::Python,
            file: file.clone(),
            line: 1,
            end_line: facts.lines.max(1),
            signature: None,
            doc: p.doc.clone(),
            parent: p
                .module
                .rsplit_once('.')
                .map(|(parent, _)| parent.to_owned()),
        });
    }
    let mut seen = HashSet::default();
    for def in &p.defs {
        if !owned(&def.qname) || !seen.insert(def.qname.as_str()) {
            continue;
        }
        out.push(Symbol {
            qname: def.qname.clone(),
            name: def.name.clone(),
            kind: match def.kind {
                DefKind::Class => SymbolKind::Class,
                DefKind::Function => SymbolKind::Function,
                DefKind::Method => SymbolKind::Method,
            },
            language: Language::Python,
            file: file.clone(),
            line: def.line,
            end_line: def.end_line,
            signature: Some(def.signature.clone()),
            doc: def.doc.clone(),
            parent: Some(def.parent.clone()),
        });
    }
    for v in &p.vars {
        let q = format!("{}.{}", p.module, v.name);
        if !owned(&q) || seen.contains(q.as_str()) {
            continue;
        }
        out.push(Symbol {
            qname: q,
            name: v.name.clone(),
            kind: if v.is_const {
                SymbolKind::Const
            } else {
                SymbolKind::Var
            },
            language: Language::Python,
            file: file.clone(),
            line: v.line,
            end_line: v.end_line,
            signature: Some(v.signature.clone()),
            doc: None,
            parent: Some(p.module.clone()),
        });
    }
}
