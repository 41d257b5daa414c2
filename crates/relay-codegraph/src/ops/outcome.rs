//! Structured results of the `codegraph` operations (the `--format json` output) and their errors.

use serde::Serialize;

use crate::model::{Confidence, EdgeKind, Symbol, SymbolKind};

/// What one operation produced. Serialized with a `result` tag for `--format json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Outcome {
    Search(SearchOutcome),
    Calls(CallsOutcome),
    Implementations(ImplementationsOutcome),
    Usages(UsagesOutcome),
    Resolve(ResolveOutcome),
    Error(OpError),
}

impl Outcome {
    /// Pretty JSON for the CLI's `--format json`.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("outcomes serialize")
    }

    /// Whether this is an error outcome (the CLI exits non-zero).
    pub fn is_error(&self) -> bool {
        matches!(self, Outcome::Error(_))
    }
}

/// `search`: symbols matching a name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchOutcome {
    /// The name as given.
    pub query: String,
    pub kind: Option<String>,
    pub file: Option<String>,
    /// All matches.
    pub total: usize,
    /// The matches shown (at most 10).
    pub symbols: Vec<Symbol>,
}

/// A call site.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Site {
    pub file: String,
    pub line: u32,
}

/// `callers` / `callees`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallsOutcome {
    /// `callers` or `callees`.
    pub operation: String,
    pub qname: String,
    /// The depth used (after clamping to 1-3).
    pub depth: u8,
    /// Whether `qname` is a symbol of the graph (false for an external target such as `fmt.Println`).
    pub indexed: bool,
    /// Number of results (distinct symbols, plus distinct unresolved names for callees).
    pub total: usize,
    /// Results shown (at most `MAX_CALL_RESULTS`).
    pub results: Vec<CallResult>,
}

/// At most this many callers/callees are listed.
pub const MAX_CALL_RESULTS: usize = 50;
/// At most this many usages are listed.
pub const MAX_USAGES: usize = 100;
/// At most this many symbols are listed by `search`.
pub const MAX_SEARCH_RESULTS: usize = 10;
/// At most this many candidates are listed by `resolve`.
pub const MAX_RESOLVE_RESULTS: usize = 20;

/// One caller or callee.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallResult {
    /// The symbol's qname; `None` for an unresolved callee (only its name is known).
    pub qname: Option<String>,
    pub name: String,
    /// `None` when the qname is not a symbol of the graph (external or unresolved).
    pub kind: Option<SymbolKind>,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub signature: Option<String>,
    pub depth: u8,
    /// The strongest confidence among this result's call edges; `dynamic` means every edge is a
    /// dynamic call (through an interface or a function value) that can reach this symbol.
    pub confidence: Confidence,
    /// For a `dynamic` result: how the call reaches it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispatch: Option<Dispatch>,
    /// Call sites (for callers: in the caller's body; for callees: in the calling symbol's body).
    pub sites: Vec<Site>,
    /// The symbols one level closer to the queried symbol that this result connects to
    /// (only interesting at depth > 1).
    pub via: Vec<String>,
}

/// How a dynamic call reaches its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dispatch {
    /// A method called through an interface (`x.M()`): the target is the method of a concrete
    /// type whose values flow to the receiver `x` in the indexed code (every implementation of
    /// `x`'s static type when that flow cannot be followed).
    Interface,
    /// A function value called (`f()`, `s.handler()`): the target is a function or method
    /// named as a value that flows to the called variable or field.
    FunctionValue,
}

/// `implementations`: one or more titled groups of related symbols.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImplementationsOutcome {
    pub qname: String,
    pub kind: SymbolKind,
    pub sections: Vec<Section>,
}

/// A titled group of related symbols (e.g. "Implemented by", "Implements").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Section {
    pub title: String,
    pub entries: Vec<RelatedSymbol>,
}

/// A symbol related to the queried one, with the relation's site and, for types, matching methods.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RelatedSymbol {
    pub qname: String,
    pub name: String,
    pub kind: Option<SymbolKind>,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub signature: Option<String>,
    pub confidence: Confidence,
    /// Where the relation was recorded.
    pub site: Site,
    /// Methods of an implementing type that implement the interface's methods.
    pub methods: Vec<Symbol>,
}

/// `usages`: where a symbol is referenced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsagesOutcome {
    pub qname: String,
    pub kind: Option<SymbolKind>,
    pub total: usize,
    pub usages: Vec<Usage>,
}

/// One reference to the queried symbol.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Usage {
    pub file: String,
    pub line: u32,
    pub relation: EdgeKind,
    pub confidence: Confidence,
    /// The symbol the reference occurs in.
    pub user: String,
    pub user_kind: Option<SymbolKind>,
}

/// `resolve`: candidate qnames for a name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResolveOutcome {
    pub name: String,
    pub total: usize,
    pub candidates: Vec<Symbol>,
}

/// Why an operation produced no answer. Every variant renders to an instruction the agent can act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "error", rename_all = "snake_case")]
pub enum OpError {
    /// No graph backend is configured.
    Unavailable,
    /// No graph has been stored for the repository (or the requested commit).
    NotIndexed {
        repo: String,
        commit: Option<String>,
    },
    UnknownOperation {
        operation: String,
    },
    MissingParameter {
        parameter: String,
        operation: String,
    },
    InvalidKind {
        kind: String,
    },
    /// The qname is neither a symbol nor the endpoint of any edge.
    UnknownSymbol {
        qname: String,
        suggestions: Vec<String>,
    },
    /// The `repo` argument names a repository that is not related to the issue.
    NotRelated {
        repo: String,
        /// The labels of the related repositories.
        related: Vec<String>,
    },
    /// The store failed.
    Store {
        message: String,
    },
}
