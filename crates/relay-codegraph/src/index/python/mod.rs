//! Python extraction: one module into [`PyFile`] facts (definitions, scopes, references).

pub(crate) mod body;
mod builtins;
pub(crate) mod changed_names;
mod edges;
mod eval;
mod symbols;
mod tables;

pub(crate) use edges::resolve_file;
pub(crate) use symbols::file_symbols;
pub(crate) use tables::{PyIndex, PyTables};

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
    Other,
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
    Other,
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
