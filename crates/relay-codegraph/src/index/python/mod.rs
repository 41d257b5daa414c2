//! Python: one module into [`PyFile`] facts (definitions, scopes, references), the tables built
//! from all of them, and what each file emits.
//!
//! The modules read one way, each importing only those before it: the facts (this module's
//! types and [`body`], which builds them) → [`tables`] (modules, classes, functions, MRO, the
//! value-flow table and the values it holds: data and lookups only) → [`eval`] (what an
//! expression denotes) → [`flow`] (the fixpoint that fills the flow table) and
//! [`flow_update`] (its replay on an update) → [`build`] (declare, MRO, flow: the tables from
//! all files) → [`resolve`] (the edges and symbols one file emits).

pub(crate) mod body;
mod build;
mod builtins;
pub(crate) mod changed_names;
mod eval;
mod flow;
pub(crate) mod flow_update;
mod frontend;
mod resolve;
pub(crate) mod same_exports;
mod tables;

pub(crate) use flow_update::FlowUpdate;
pub(crate) use frontend::PythonFrontend;
pub(crate) use resolve::{file_symbols, resolve_file};
pub(crate) use tables::{FilesRead, FlowKey, FlowState, PyFlow, PyIndex, PyTables, ReadSet};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use tree_sitter::Node;

/// An expression in the reference IR; sub-expressions index [`PyFile::exprs`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PExpr {
    /// A name looked up from scope `scope` (LEGB rules applied at resolution).
    Name {
        scope: u32,
        name: String,
    },
    Attr(u32, String),
    Call(u32),
    /// `super()` inside a method of the class whose scope is `scope`'s enclosing class.
    Super {
        scope: u32,
    },
    /// A function value written in place: a lambda (its definition's qname).
    Lambda(String),
    /// A list, tuple or set literal (items in order) or a comprehension (`indexed: false`: its
    /// one item is every element).
    Seq {
        items: Vec<u32>,
        indexed: bool,
    },
    /// A dict literal or dict comprehension: constant keys ([`const_key`]) with their values.
    Dict(Vec<(Option<String>, u32)>),
    /// `obj[key]` with a constant key, or `obj[...]` (`None`: any item; slices included).
    Subscript(u32, Option<String>),
    Other,
}

impl PExpr {
    /// The sub-expressions, in order (structural comparisons walk them).
    pub(crate) fn children(&self) -> Vec<u32> {
        match self {
            PExpr::Attr(o, _) | PExpr::Call(o) | PExpr::Subscript(o, _) => vec![*o],
            PExpr::Seq { items, .. } => items.clone(),
            PExpr::Dict(items) => items.iter().map(|(_, v)| *v).collect(),
            PExpr::Name { .. } | PExpr::Super { .. } | PExpr::Lambda(_) | PExpr::Other => {
                Vec::new()
            }
        }
    }

    /// Equality of everything but the sub-expression indices (and the scope of names).
    pub(crate) fn same_shape(&self, other: &PExpr) -> bool {
        match (self, other) {
            (PExpr::Name { name: a, .. }, PExpr::Name { name: b, .. }) => a == b,
            (PExpr::Attr(_, a), PExpr::Attr(_, b)) => a == b,
            (PExpr::Call(_), PExpr::Call(_)) => true,
            (PExpr::Super { .. }, PExpr::Super { .. }) => true,
            (PExpr::Lambda(a), PExpr::Lambda(b)) => a == b,
            (
                PExpr::Seq {
                    items: a,
                    indexed: x,
                },
                PExpr::Seq {
                    items: b,
                    indexed: y,
                },
            ) => a.len() == b.len() && x == y,
            (PExpr::Dict(a), PExpr::Dict(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|((k, _), (l, _))| k == l)
            }
            (PExpr::Subscript(_, a), PExpr::Subscript(_, b)) => a == b,
            (PExpr::Other, PExpr::Other) => true,
            _ => false,
        }
    }
}

/// The constant key of a subscript or dict entry: `i:0` for an integer, `s:name` for a string.
pub(crate) fn const_key(kind: &str, text: &str) -> Option<String> {
    match kind {
        "integer" => text.parse::<i64>().ok().map(|i| format!("i:{i}")),
        "string" => {
            let t = text.trim_start_matches(['r', 'u', 'R', 'U', 'b', 'B']);
            let inner = t
                .strip_prefix('"')
                .and_then(|t| t.strip_suffix('"'))
                .or_else(|| t.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')))?;
            (!inner.contains(['"', '\'', '\\', '{'])).then(|| format!("s:{inner}"))
        }
        _ => None,
    }
}

/// How a parameter receives arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamKind {
    Plain,
    /// `*args`: the extra positional arguments.
    Star,
    /// `**kwargs`: the extra keyword arguments.
    DoubleStar,
    /// A keyword-only parameter (after `*` or `*args`).
    KeywordOnly,
}

/// A parameter of a function, for argument flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PParam {
    pub name: String,
    pub kind: ParamKind,
    /// The default value (evaluated in the enclosing scope).
    pub default: Option<u32>,
}

/// An argument at a call site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PArg {
    Pos(u32),
    Kw(String, u32),
    /// `*xs`
    Star(u32),
    /// `**kw`
    DoubleStar(u32),
}

/// A call with arguments: the [`PExpr::Call`] expression and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PCall {
    pub call: u32,
    pub args: Vec<PArg>,
}

/// How a value is stored into a container or an attribute (flow-insensitive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PStore {
    /// `target[key] = value` (`key`: a constant key, or `None`).
    Item {
        target: u32,
        key: Option<String>,
        value: u32,
    },
    /// `target.append(value)`, `target.add(value)`, `target.insert(i, value)`: any index.
    Append { target: u32, value: u32 },
    /// `target.update(value)` / `target.extend(value)`: the items of `value`.
    Extend { target: u32, value: u32 },
    /// `obj.attr = value` where `obj` is not the method's `self`.
    Attr {
        target: u32,
        attr: String,
        value: u32,
    },
}

/// How a name was bound in a scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PBind {
    Def(String),
    Class(String),
    Assign(u32),
    /// `from module import name` (module already absolute).
    ImportFrom {
        module: String,
        name: String,
    },
    /// `import a.b as c` (binds `c` to `a.b`) or `import a.b` (binds `a` to `a`).
    ImportModule(String),
    SelfParam(String),
    ClsParam(String),
    /// A parameter or annotated name, with its annotation.
    Annotated(Option<u32>),
    /// Parameter `index` of the function of definition `def` (its annotation, if any).
    Param {
        def: u32,
        index: u32,
        annotation: Option<u32>,
    },
    /// Item `index` of the unpacked value `expr` (`a, b = expr`).
    Unpack {
        expr: u32,
        index: u32,
    },
    /// An element of iterating over `expr` (`for x in expr`).
    Iter(u32),
    Other,
}

/// What can reach a read of a name in the scope that binds it (see `body/order.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Reach {
    /// The binding at this index of the name's bindings in its scope.
    Bind(u32),
    /// Star import `k` of the module: its value of the name if it exports one, else what
    /// reached the star import ([`PyOrder::star_states`]).
    Star(u32),
    /// Not bound on some path (nothing, or a builtin at module level).
    Unbound,
    /// Any binding of the name (a set too large to track).
    All,
}

/// What can reach an attribute or item read of the object a local name holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum EvRef {
    /// The object as binding `i` of the name made it, unchanged since.
    Base(u32),
    /// Event `i` of [`PyOrder::events`].
    Event(u32),
    /// The name is not bound on this path.
    Unbound,
    /// Anything (the object escaped, or a call could have changed it).
    Havoc,
}

/// Something done to the object a local name holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PEventKind {
    /// `n.attr = value`.
    SetAttr { attr: String, value: u32 },
    /// `n[key] = value` (`key`: a constant key, or `None`).
    SetItem { key: Option<String>, value: u32 },
    /// `n.method(…)`: the call expression.
    Call(u32),
}

/// An event and what reached the object before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PEvent {
    pub kind: PEventKind,
    pub prev: Vec<EvRef>,
}

/// What reached each module-level name just before a star import.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct StarState {
    pub names: HashMap<String, Vec<Reach>>,
    /// What reached the names not listed.
    pub others: Vec<Reach>,
}

/// What kind of scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScopeKind {
    Module,
    Class,
    Function,
}

/// A lexical scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyScope {
    pub kind: ScopeKind,
    pub parent: Option<u32>,
    pub bindings: HashMap<String, Vec<PBind>>,
    /// Names declared `global` (or `nonlocal`) here.
    pub globals: HashSet<String>,
    /// For a class scope: the class's definition index.
    pub class_def: Option<u32>,
    /// Module and class scopes: what reaches each name at the end of the scope (what other
    /// modules and attribute lookups see), for names where that is not every binding.
    pub final_reach: HashMap<String, Vec<Reach>>,
}

/// What a definition is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DefKind {
    Class,
    Function,
    Method,
}

/// A class or function definition.
#[derive(Debug, Clone)]
pub(crate) struct PyDef {
    pub qname: String,
    pub name: String,
    pub kind: DefKind,
    pub line: u32,
    pub end_line: u32,
    pub signature: String,
    pub doc: Option<String>,
    pub parent: String,
    /// Base class expressions (classes).
    pub bases: Vec<u32>,
    /// The body's scope.
    pub scope: u32,
    /// Return annotation (functions).
    pub returns: Option<u32>,
    /// `self.x = <expr>` assignments in the class's methods.
    pub self_attrs: Vec<(String, u32)>,
    /// Parameters (functions and lambdas).
    pub params: Vec<PParam>,
    /// Expressions returned (`return x`; a lambda's body).
    pub returned: Vec<u32>,
    /// Expressions yielded (a generator); `yield from x` yields the items of `x`.
    pub yielded: Vec<u32>,
    /// Whether the function is a generator (has a `yield`).
    pub generator: bool,
    /// Decorator expressions, outermost first (each is called with the decorated value).
    pub decorators: Vec<u32>,
    /// `@staticmethod`: no bound first parameter.
    pub is_static: bool,
    /// `@classmethod`: the class is bound to the first parameter.
    pub is_classmethod: bool,
    /// Methods: the attributes set on `self` on every normal return (and not changed after
    /// by another call on `self`), with their values.
    pub sets_self: Vec<(String, u32)>,
}

/// A module-level variable or constant.
#[derive(Debug, Clone)]
pub(crate) struct PyVar {
    pub name: String,
    pub is_const: bool,
    pub line: u32,
    pub end_line: u32,
    pub signature: String,
}

/// What a reference is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PRefKind {
    Call,
    Use,
    Inherit,
    /// `for x in expr`: the iteration protocol (`__iter__`, `__next__`) of `expr`'s value.
    Iter,
    /// `with expr`: the context manager protocol (`__enter__`, `__exit__`).
    With,
    /// `async with expr`: `__aenter__`, `__aexit__`.
    AsyncWith,
}

/// A reference to resolve, made by `owners[owner]`.
#[derive(Debug, Clone)]
pub(crate) struct PRef {
    pub kind: PRefKind,
    pub expr: u32,
    pub line: u32,
    pub owner: u32,
    pub name: String,
}

/// An import, for `imports` edges.
#[derive(Debug, Clone)]
pub(crate) struct PyImport {
    pub line: u32,
    pub owner: u32,
    pub module: String,
    /// For `from m import x`: `x` (which may itself be a submodule).
    pub name: Option<String>,
}

/// Facts of one Python module.
#[derive(Debug, Clone, Default)]
pub(crate) struct PyFile {
    pub module: String,
    pub is_package: bool,
    pub doc: Option<String>,
    pub defs: Vec<PyDef>,
    pub vars: Vec<PyVar>,
    pub scopes: Vec<PyScope>,
    pub exprs: Vec<PExpr>,
    pub refs: Vec<PRef>,
    pub owners: Vec<String>,
    pub imports: Vec<PyImport>,
    /// Modules star-imported at module level (absolute names).
    pub star_imports: Vec<String>,
    /// Calls with arguments (sorted by call expression).
    pub calls: Vec<PCall>,
    /// Stores into containers and attributes.
    pub stores: Vec<PStore>,
    /// Plain string literals by expression (sorted), for `getattr(obj, "name")`.
    pub strings: Vec<(u32, String)>,
    /// The order of bindings and events (`body/order.rs`), boxed: most of a module's facts
    /// are elsewhere.
    pub order: Box<PyOrder>,
}

/// What the order of statements says about a module's reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PyOrder {
    /// Flow-sensitive reads of names: name expression → what reaches it (sorted; only reads
    /// that do not see every binding of the name).
    pub reaches: Vec<(u32, Vec<Reach>)>,
    /// Attribute and item reads of local names → the events that reach them (sorted; only
    /// reads that an event reaches).
    pub event_reads: Vec<(u32, Vec<EvRef>)>,
    pub events: Vec<PEvent>,
    /// Per star import (in order), what reached the module's names before it.
    pub star_states: Vec<StarState>,
}

impl PyFile {
    /// What reaches the read of a name at expression `e`, when it is not every binding.
    pub(crate) fn reach(&self, e: u32) -> Option<&[Reach]> {
        let reaches = &self.order.reaches;
        reaches
            .binary_search_by_key(&e, |(id, _)| *id)
            .ok()
            .map(|i| reaches[i].1.as_slice())
    }

    /// The events that reach the attribute or item read at expression `e`.
    pub(crate) fn event_read(&self, e: u32) -> Option<&[EvRef]> {
        let reads = &self.order.event_reads;
        reads
            .binary_search_by_key(&e, |(id, _)| *id)
            .ok()
            .map(|i| reads[i].1.as_slice())
    }

    /// The arguments of call expression `call` (none if it has none).
    pub(crate) fn args(&self, call: u32) -> &[PArg] {
        match self.calls.binary_search_by_key(&call, |c| c.call) {
            Ok(i) => &self.calls[i].args,
            Err(_) => &[],
        }
    }
}

/// Extracts the facts of one parsed Python module.
pub(crate) fn extract(root: Node<'_>, src: &[u8], module: String, is_package: bool) -> PyFile {
    let mut builder = body::PyBuilder::new(src, module, is_package);
    builder.module(root);
    builder.finish()
}

/// Whether a module-level name looks like a constant (`MAX_SIZE`).
pub(crate) fn is_constant_name(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_uppercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}
