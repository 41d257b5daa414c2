//! Symbol emission: the modules, classes, functions and module variables of one file.

use rustc_hash::FxHashSet as HashSet;

use crate::index::facts::FileFacts;
use crate::index::python::tables::PyIndex;
use crate::index::python::{DefKind, PyFile};
use crate::model::{Language, Symbol, SymbolKind};

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
