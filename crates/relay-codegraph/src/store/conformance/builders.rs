//! Builders of fixture symbols, edges and call steps.

use crate::model::{Confidence, Edge, EdgeKind, Language, Symbol, SymbolKind};
use crate::store::CallStep;

/// Builds a symbol for fixtures.
#[allow(clippy::too_many_arguments)]
pub fn sym(
    qname: &str,
    name: &str,
    kind: SymbolKind,
    file: &str,
    line: u32,
    end_line: u32,
    signature: Option<&str>,
    parent: Option<&str>,
) -> Symbol {
    Symbol {
        qname: qname.to_owned(),
        name: name.to_owned(),
        kind,
        language: if file.ends_with(".py") {
            Language::Python
        } else {
            Language::Go
        },
        file: file.to_owned(),
        line,
        end_line,
        signature: signature.map(str::to_owned),
        doc: None,
        parent: parent.map(str::to_owned),
    }
}

/// Builds an edge for fixtures; `to` of `None` is an unresolved edge.
pub fn edge(
    kind: EdgeKind,
    from: &str,
    to: Option<&str>,
    to_name: &str,
    file: &str,
    line: u32,
    confidence: Confidence,
) -> Edge {
    Edge {
        kind,
        from: from.to_owned(),
        to: to.map(str::to_owned),
        to_name: to_name.to_owned(),
        file: file.to_owned(),
        line,
        confidence,
        external: false,
    }
}

pub(super) fn q(pkg: &str, rest: &str) -> String {
    format!("{pkg}.{rest}")
}

pub(super) fn step(
    depth: u8,
    node: Option<&str>,
    via: &str,
    to_name: &str,
    file: &str,
    line: u32,
    confidence: Confidence,
) -> CallStep {
    CallStep {
        depth,
        node: node.map(str::to_owned),
        via: via.to_owned(),
        to_name: to_name.to_owned(),
        file: file.to_owned(),
        line,
        confidence,
    }
}
