//! One file's symbols and edges as the [`super::Indexer`] keeps them between updates: every
//! distinct string of the file once, in one buffer, and fixed-size records that name strings by
//! number. A resolved edge as [`Edge`] holds four heap strings (its file, source, target and
//! name, mostly repeated within the file); packed, it is 24 bytes.
//!
//! Packing is canonical (strings are numbered in order of first use), so two outputs are equal
//! exactly when their packed forms are.

use rustc_hash::FxHashMap as HashMap;

use crate::model::{Confidence, Edge, EdgeKind, Language, Symbol, SymbolKind};

/// The number of an absent optional string.
const NONE: u32 = u32::MAX;

/// A packed symbol (strings by number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PSymbol {
    qname: u32,
    name: u32,
    file: u32,
    signature: u32,
    doc: u32,
    parent: u32,
    line: u32,
    end_line: u32,
    kind: SymbolKind,
    language: Language,
}

/// A packed edge (strings by number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PEdge {
    from: u32,
    to: u32,
    to_name: u32,
    file: u32,
    line: u32,
    kind: EdgeKind,
    confidence: Confidence,
    external: bool,
}

/// What a dependents' scan or a tally reads of an edge, without unpacking it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EdgeView<'a> {
    pub kind: EdgeKind,
    pub confidence: Confidence,
    pub to: Option<&'a str>,
    /// The name as written at the site (for a call: the callee's short or dotted name).
    pub to_name: &'a str,
}

/// One file's symbols and edges, packed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PackedGraph {
    text: Box<str>,
    /// End offset in `text` of each string (its start is the previous one's end).
    ends: Box<[u32]>,
    symbols: Box<[PSymbol]>,
    edges: Box<[PEdge]>,
}

/// Numbers strings in order of first use while packing.
struct Interner<'a> {
    ids: HashMap<&'a str, u32>,
    text: String,
    ends: Vec<u32>,
}

impl<'a> Interner<'a> {
    fn id(&mut self, s: &'a str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.ends.len() as u32;
        self.text.push_str(s);
        self.ends.push(self.text.len() as u32);
        self.ids.insert(s, id);
        id
    }

    fn opt(&mut self, s: Option<&'a str>) -> u32 {
        s.map_or(NONE, |s| self.id(s))
    }
}

impl PackedGraph {
    /// Packs `symbols` and `edges` (kept in their order). A file whose strings exceed 4 GiB in
    /// total cannot occur (files are capped far below that), so offsets fit in `u32`.
    pub(crate) fn pack(symbols: &[Symbol], edges: &[Edge]) -> PackedGraph {
        let mut strings = Interner {
            ids: HashMap::default(),
            text: String::new(),
            ends: Vec::new(),
        };
        let symbols: Box<[PSymbol]> = symbols
            .iter()
            .map(|s| PSymbol {
                qname: strings.id(&s.qname),
                name: strings.id(&s.name),
                file: strings.id(&s.file),
                signature: strings.opt(s.signature.as_deref()),
                doc: strings.opt(s.doc.as_deref()),
                parent: strings.opt(s.parent.as_deref()),
                line: s.line,
                end_line: s.end_line,
                kind: s.kind,
                language: s.language,
            })
            .collect();
        let edges: Box<[PEdge]> = edges
            .iter()
            .map(|e| PEdge {
                from: strings.id(&e.from),
                to: strings.opt(e.to.as_deref()),
                to_name: strings.id(&e.to_name),
                file: strings.id(&e.file),
                line: e.line,
                kind: e.kind,
                confidence: e.confidence,
                external: e.external,
            })
            .collect();
        PackedGraph {
            text: strings.text.into_boxed_str(),
            ends: strings.ends.into_boxed_slice(),
            symbols,
            edges,
        }
    }

    fn str(&self, id: u32) -> &str {
        let id = id as usize;
        let start = if id == 0 {
            0
        } else {
            self.ends[id - 1] as usize
        };
        &self.text[start..self.ends[id] as usize]
    }

    fn opt(&self, id: u32) -> Option<&str> {
        (id != NONE).then(|| self.str(id))
    }

    fn owned(&self, id: u32) -> Option<String> {
        self.opt(id).map(str::to_owned)
    }

    /// Number of symbols.
    pub(crate) fn symbol_count(&self) -> usize {
        self.symbols.len()
    }

    /// The symbols, unpacked.
    pub(crate) fn symbols(&self) -> impl Iterator<Item = Symbol> + '_ {
        self.symbols.iter().map(|s| Symbol {
            qname: self.str(s.qname).to_owned(),
            name: self.str(s.name).to_owned(),
            kind: s.kind,
            language: s.language,
            file: self.str(s.file).to_owned(),
            line: s.line,
            end_line: s.end_line,
            signature: self.owned(s.signature),
            doc: self.owned(s.doc),
            parent: self.owned(s.parent),
        })
    }

    /// The edges, unpacked.
    pub(crate) fn edges(&self) -> impl Iterator<Item = Edge> + '_ {
        self.edges.iter().map(|e| Edge {
            kind: e.kind,
            from: self.str(e.from).to_owned(),
            to: self.owned(e.to),
            to_name: self.str(e.to_name).to_owned(),
            file: self.str(e.file).to_owned(),
            line: e.line,
            confidence: e.confidence,
            external: e.external,
        })
    }

    /// The kind, confidence and target of each edge, borrowed.
    pub(crate) fn edge_views(&self) -> impl Iterator<Item = EdgeView<'_>> + '_ {
        self.edges.iter().map(|e| EdgeView {
            kind: e.kind,
            confidence: e.confidence,
            to: self.opt(e.to),
            to_name: self.str(e.to_name),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symbol(qname: &str, parent: Option<&str>) -> Symbol {
        Symbol {
            qname: qname.into(),
            name: qname.rsplit('.').next().unwrap_or(qname).into(),
            kind: SymbolKind::Function,
            language: Language::Go,
            file: "a/b.go".into(),
            line: 3,
            end_line: 9,
            signature: Some("func F()".into()),
            doc: None,
            parent: parent.map(Into::into),
        }
    }

    fn edge(from: &str, to: Option<&str>, name: &str) -> Edge {
        Edge {
            kind: EdgeKind::Calls,
            from: from.into(),
            to: to.map(Into::into),
            to_name: name.into(),
            file: "a/b.go".into(),
            line: 4,
            confidence: Confidence::Inferred,
            external: to.is_some_and(|t| t.starts_with("ext")),
        }
    }

    #[test]
    fn packing_round_trips_and_shares_strings() {
        let symbols = vec![symbol("m/a.F", Some("m/a")), symbol("m/a.G", None)];
        let edges = vec![
            edge("m/a.F", Some("m/a.G"), "G"),
            edge("m/a.F", None, "H"),
            edge("m/a.G", Some("ext.get"), ""),
        ];
        let packed = PackedGraph::pack(&symbols, &edges);
        assert_eq!(packed.symbols().collect::<Vec<_>>(), symbols);
        assert_eq!(packed.edges().collect::<Vec<_>>(), edges);
        assert_eq!(packed.symbol_count(), 2);
        let views: Vec<Option<&str>> = packed.edge_views().map(|v| v.to).collect();
        assert_eq!(views, vec![Some("m/a.G"), None, Some("ext.get")]);
        // "m/a.F", "F", "a/b.go", "func F()", "m/a", "m/a.G", "G", "H", "ext.get", "".
        assert_eq!(packed.ends.len(), 10);
        assert_eq!(PackedGraph::pack(&symbols, &edges), packed);
        let mut other = edges.clone();
        other[1].line = 5;
        assert_ne!(PackedGraph::pack(&symbols, &other), packed);
        assert_eq!(PackedGraph::pack(&[], &[]), PackedGraph::default());
    }
}
