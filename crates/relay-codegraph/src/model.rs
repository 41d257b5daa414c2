//! The graph's data model: symbols, edges, and the whole-repository graph.
//!
//! These types are the public, documented export format of `relay index --format json`
//! (see the crate README), so field names and enum spellings are a contract.

use serde::{Deserialize, Serialize};

/// Source language of a symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Go,
    Python,
}

/// What a symbol is. Locals never become symbols.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SymbolKind {
    /// A Go package (one per module path + directory).
    Package,
    /// A Python module (a `.py` file; a package's `__init__.py` is the package itself).
    Module,
    Function,
    Method,
    Struct,
    Interface,
    Class,
    /// Any other named type (Go `type X int`, aliases, function types...).
    Type,
    Const,
    Var,
    Field,
}

impl SymbolKind {
    pub const ALL: [SymbolKind; 11] = [
        SymbolKind::Package,
        SymbolKind::Module,
        SymbolKind::Function,
        SymbolKind::Method,
        SymbolKind::Struct,
        SymbolKind::Interface,
        SymbolKind::Class,
        SymbolKind::Type,
        SymbolKind::Const,
        SymbolKind::Var,
        SymbolKind::Field,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Package => "package",
            SymbolKind::Module => "module",
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Struct => "struct",
            SymbolKind::Interface => "interface",
            SymbolKind::Class => "class",
            SymbolKind::Type => "type",
            SymbolKind::Const => "const",
            SymbolKind::Var => "var",
            SymbolKind::Field => "field",
        }
    }

    pub fn parse(s: &str) -> Option<SymbolKind> {
        SymbolKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// One named program entity.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Symbol {
    /// Fully qualified name, unique within one repository graph.
    /// Go: `<module>/<pkg dir>.<Name>` / `….<Type>.<Method>`; Python: `pkg.mod.Class.method`.
    pub qname: String,
    pub name: String,
    pub kind: SymbolKind,
    pub language: Language,
    /// Repository-relative path with `/` separators.
    pub file: String,
    /// 1-based first line.
    pub line: u32,
    /// 1-based last line (inclusive).
    pub end_line: u32,
    /// The declaration header as written (e.g. `func (p *Planner) Plan(ctx context.Context) error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// First line of the doc comment / docstring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// Qname of the enclosing symbol (method → type, field → struct, function → package/module).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

/// Relation kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EdgeKind {
    Calls,
    Implements,
    Inherits,
    Uses,
    Imports,
}

impl EdgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Calls => "calls",
            EdgeKind::Implements => "implements",
            EdgeKind::Inherits => "inherits",
            EdgeKind::Uses => "uses",
            EdgeKind::Imports => "imports",
        }
    }
}

/// How sure the indexer is of an edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// Resolved syntactically through imports, scopes and declared types.
    Exact,
    /// Resolved through a heuristic that is usually right (e.g. a variable's type inferred from its initializer).
    Inferred,
    /// A dynamic-dispatch target (a call through an interface reaching one known implementation).
    Dynamic,
}

/// A relation between two symbols, observed at `file:line`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Edge {
    pub kind: EdgeKind,
    /// Qname of the source symbol.
    pub from: String,
    /// Qname of the target symbol; `None` for an unresolved edge.
    pub to: Option<String>,
    /// The name as written at the site (the called/used/imported name); always present.
    pub to_name: String,
    pub file: String,
    pub line: u32,
    pub confidence: Confidence,
}

/// A whole repository's graph: the `relay index --format json` document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Graph {
    pub symbols: Vec<Symbol>,
    pub edges: Vec<Edge>,
}
