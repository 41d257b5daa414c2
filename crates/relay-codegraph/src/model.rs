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

impl Language {
    pub const ALL: [Language; 2] = [Language::Go, Language::Python];

    /// The lowercase spelling, as in the JSON export and the Postgres rows.
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Go => "go",
            Language::Python => "python",
        }
    }

    pub fn parse(s: &str) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.as_str() == s)
    }
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
    pub const ALL: [EdgeKind; 5] = [
        EdgeKind::Calls,
        EdgeKind::Implements,
        EdgeKind::Inherits,
        EdgeKind::Uses,
        EdgeKind::Imports,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Calls => "calls",
            EdgeKind::Implements => "implements",
            EdgeKind::Inherits => "inherits",
            EdgeKind::Uses => "uses",
            EdgeKind::Imports => "imports",
        }
    }

    pub fn parse(s: &str) -> Option<EdgeKind> {
        EdgeKind::ALL.into_iter().find(|k| k.as_str() == s)
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

impl Confidence {
    pub const ALL: [Confidence; 3] = [Confidence::Exact, Confidence::Inferred, Confidence::Dynamic];

    /// The lowercase spelling, as in the JSON export and the Postgres rows.
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Exact => "exact",
            Confidence::Inferred => "inferred",
            Confidence::Dynamic => "dynamic",
        }
    }

    pub fn parse(s: &str) -> Option<Confidence> {
        Confidence::ALL.into_iter().find(|c| c.as_str() == s)
    }
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
    /// Whether `to` is a target outside the repository, kept by its qualified name (a Python name
    /// imported from a module that is not in the repository: `requests.get`). Such a `to` names no
    /// symbol of the graph, which tells it from an unresolved edge (`to: None`). In the JSON
    /// export the field is present (`true`) only on external edges: a document without it (or an
    /// older one) reads back as `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub external: bool,
}

/// A whole repository's graph: the `relay index --format json` document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Graph {
    pub symbols: Vec<Symbol>,
    pub edges: Vec<Edge>,
}

impl Graph {
    /// Marks as [`Edge::external`] exactly the edges whose `to` names no symbol of the graph
    /// (what a store without the field derives when it reads edges back).
    pub fn mark_external(&mut self) {
        let qnames: std::collections::HashSet<&str> =
            self.symbols.iter().map(|s| s.qname.as_str()).collect();
        for e in &mut self.edges {
            e.external = e.to.as_deref().is_some_and(|to| !qnames.contains(to));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// For every variant in `ALL`, `as_str` is the serde spelling (the export contract) and `parse`
    /// inverts it, so the Postgres rows and the JSON export spell enums the same way.
    fn assert_spellings<T>(all: &[T], as_str: fn(T) -> &'static str, parse: fn(&str) -> Option<T>)
    where
        T: Copy + PartialEq + std::fmt::Debug + Serialize + serde::de::DeserializeOwned,
    {
        for &value in all {
            let spelling = as_str(value);
            assert_eq!(
                serde_json::to_value(value).expect("serialize"),
                serde_json::Value::String(spelling.to_owned()),
            );
            assert_eq!(parse(spelling), Some(value));
            let from_serde: T =
                serde_json::from_value(serde_json::Value::String(spelling.to_owned()))
                    .expect("deserialize");
            assert_eq!(from_serde, value);
        }
        assert_eq!(parse("Unknown"), None);
    }

    #[test]
    fn enum_spellings_match_serde() {
        assert_spellings(&Language::ALL, Language::as_str, Language::parse);
        assert_spellings(&SymbolKind::ALL, SymbolKind::as_str, SymbolKind::parse);
        assert_spellings(&EdgeKind::ALL, EdgeKind::as_str, EdgeKind::parse);
        assert_spellings(&Confidence::ALL, Confidence::as_str, Confidence::parse);
    }
}
