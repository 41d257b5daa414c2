//! The facts of one Go file: declarations, and bodies as a small expression IR.
//!
//! [`extract()`] reads a parsed file into a [`GoFile`]; [`body`] turns each function body into
//! the IR, with lexical scopes applied, so the resolver never confuses a local with a
//! package-level name; [`importers()`] tells which files can see a package. Nothing here reads
//! the tables.

pub(crate) mod body;
mod extract;
mod importers;

pub(crate) use extract::extract;
pub(crate) use importers::importers;

use crate::index::facts::{FileFacts, LangFacts};

/// A Go type expression as written, before resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GType {
    /// `Name` (package-local or builtin) or `pkg.Name`; generic arguments are dropped.
    Named {
        pkg: Option<String>,
        name: String,
    },
    Pointer(Box<GType>),
    /// Slices, arrays and variadic parameters.
    Slice(Box<GType>),
    Map(Box<GType>, Box<GType>),
    Chan(Box<GType>),
    /// A function type, with its result types.
    Func(Vec<GType>),
    /// Anything else (anonymous structs and interfaces, type parameters, local types).
    Unknown,
}

/// An import spec.
#[derive(Debug, Clone)]
pub(crate) struct GoImport {
    /// `Some("x")` for `import x "path"`, `Some(".")`, `Some("_")`, or `None`.
    pub alias: Option<String>,
    pub path: String,
    pub line: u32,
}

/// Parameter and result types of a function or method.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct GoSig {
    pub params: Vec<GType>,
    pub results: Vec<GType>,
    pub variadic: bool,
}

/// What a type declaration declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GoTypeKind {
    Struct,
    Interface,
    Other,
}

/// A struct field (embedded fields are named after their type).
#[derive(Debug, Clone)]
pub(crate) struct GoField {
    pub name: String,
    pub embedded: bool,
    pub ty: GType,
    pub line: u32,
    pub end_line: u32,
    pub signature: String,
}

/// A method of an interface.
#[derive(Debug, Clone)]
pub(crate) struct GoIfaceMethod {
    pub name: String,
    pub line: u32,
    pub end_line: u32,
    pub signature: String,
    pub doc: Option<String>,
    pub sig: GoSig,
}

/// A type declaration.
#[derive(Debug, Clone)]
pub(crate) struct GoTypeDecl {
    pub name: String,
    pub line: u32,
    pub end_line: u32,
    pub signature: String,
    pub doc: Option<String>,
    pub kind: GoTypeKind,
    /// `type A = B`.
    pub alias: bool,
    /// The type on the right-hand side (for structs and interfaces: `Unknown`).
    pub underlying: GType,
    pub fields: Vec<GoField>,
    pub methods: Vec<GoIfaceMethod>,
    /// Interfaces embedded in an interface.
    pub embeds: Vec<GType>,
    /// The interface has type elements (`~int | string`): a constraint, never implemented.
    pub constraint: bool,
}

/// A function or method declaration.
#[derive(Debug, Clone)]
pub(crate) struct GoFuncDecl {
    pub name: String,
    /// Receiver base type name, for methods.
    pub recv: Option<String>,
    pub line: u32,
    pub end_line: u32,
    pub signature: String,
    pub doc: Option<String>,
    pub sig: GoSig,
}

/// A package-level `const` or `var`.
#[derive(Debug, Clone)]
pub(crate) struct GoValueDecl {
    pub name: String,
    pub is_const: bool,
    pub line: u32,
    pub end_line: u32,
    pub signature: String,
    pub doc: Option<String>,
    pub ty: Option<GType>,
    /// Initializer: `(body index, expression, position in a multi-value call)`.
    pub init: Option<(usize, u32, u32)>,
}

/// An expression in the body IR; sub-expressions are indices into [`GoBody::exprs`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GExpr {
    /// A local variable (index into [`GoBody::bindings`]).
    Local(u32),
    /// An identifier that is not local: package-level name, import, or builtin.
    Free(String),
    Selector(u32, String),
    Call(u32),
    /// A value of a known type (composite literal, conversion, `new(T)`). The types are boxed:
    /// most expressions are names, and the facts keep every expression of every body.
    Composite(Box<GType>),
    /// A type in expression position.
    Type(Box<GType>),
    Index(u32),
    /// `x.(T)`: the type and the operand.
    Assert(Box<GType>, u32),
    /// `T(x)`: the type and the operand.
    Convert(Box<GType>, u32),
    FuncLit(Vec<GType>),
    /// A literal of a basic type (a number, a string, `true`…): no method, no function.
    Literal,
    /// `nil`.
    Nil,
    Unknown,
}

/// Where a value flows to, for the value-flow pass ([`super::flow`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GSink {
    /// The left-hand side of an assignment (a local, a field selector, a package-level var).
    Place(u32),
    /// Argument `idx` of call expression `call`.
    Arg { call: u32, idx: u32 },
    /// Result `idx` of the body's function (never from inside a function literal).
    Return(u32),
    /// A keyed element of a composite literal of type `ty`.
    Field { ty: GType, name: String },
    /// Element `idx` of an unkeyed composite literal of type `ty`.
    FieldAt { ty: GType, idx: u32 },
}

/// A value flowing from expression `from` (the `idx`th value of a multi-value expression) to a
/// sink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GFlow {
    pub to: GSink,
    pub from: u32,
    pub idx: u32,
}

/// How a local variable got its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GBind {
    Declared(GType),
    /// From an initializer; `idx` is the position in a multi-value expression.
    Init {
        expr: u32,
        idx: u32,
    },
    RangeKey(u32),
    RangeValue(u32),
    /// A local type or type parameter (shadows package-level types).
    TypeName,
    Unknown,
}

/// What a reference is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GRefKind {
    Call,
    Use,
}

/// A reference to resolve.
#[derive(Debug, Clone)]
pub(crate) struct GRef {
    pub kind: GRefKind,
    pub expr: u32,
    pub line: u32,
    /// The name as written.
    pub name: String,
}

/// The references made by one symbol (function, method, field, type, or the package's initializers).
#[derive(Debug, Clone, Default)]
pub(crate) struct GoBody {
    pub owner: String,
    pub exprs: Vec<GExpr>,
    pub bindings: Vec<GBind>,
    pub refs: Vec<GRef>,
    /// The function's parameters, in order: their bindings (`u32::MAX` for `_` or unnamed).
    pub params: Vec<u32>,
    /// The function's named results' bindings (empty when the results are unnamed).
    pub results: Vec<u32>,
    /// Bindings whose value starts as the zero value (`var x T`, named results): only what is
    /// assigned to them flows there. Any other declared binding that is no parameter (a
    /// function literal's parameter, a type switch's case variable) holds unknown values.
    pub zeroed: Vec<u32>,
    /// Values flowing into parameters, results, fields, vars and locals.
    pub flows: Vec<GFlow>,
}

/// Facts of one Go file.
#[derive(Debug, Clone, Default)]
pub(crate) struct GoFile {
    pub pkg_name: String,
    /// Import path of the package (`<module>/<dir>`, or `…_test` for external test packages).
    pub pkg_path: String,
    pub pkg_line: u32,
    pub pkg_doc: Option<String>,
    pub imports: Vec<GoImport>,
    /// `(import path, the path it names)` for each import a `go.mod` `replace` directive of
    /// the file's module redirects to another module (`example.com/sdk/x` →
    /// `example.com/sdk-fork/x`).
    pub replaced: Vec<(String, String)>,
    pub types: Vec<GoTypeDecl>,
    pub funcs: Vec<GoFuncDecl>,
    pub values: Vec<GoValueDecl>,
    pub bodies: Vec<GoBody>,
}

/// The Go facts of a file, if it is a Go file.
pub(crate) fn go(facts: &FileFacts) -> Option<&GoFile> {
    match &facts.lang {
        LangFacts::Go(g) => Some(g),
        LangFacts::Python(_) => None,
    }
}
