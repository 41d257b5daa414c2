//! Go symbol emission: the packages, types, fields, methods, functions, vars and consts one file
//! declares (first declaration of a qname wins across files).

use super::tables::GoIndex;
use super::{GoFile, GoTypeKind};
use crate::index::facts::FileFacts;
use crate::model::{Language, Symbol, SymbolKind};

/// Symbols declared in one Go file (first declaration of a qname wins across files).
pub(crate) fn file_symbols(index: &GoIndex, facts: &FileFacts, g: &GoFile, out: &mut Vec<Symbol>) {
    let file = &facts.rel;
    let owned = |q: &str| index.owners.get(q).is_none_or(|f| f == file);
    let mk = |qname: String,
              name: &str,
              kind: SymbolKind,
              line: u32,
              end_line: u32,
              signature: &str,
              doc: &Option<String>,
              parent: &str| Symbol {
        qname,
        name: name.to_owned(),
        kind,
        language: Language::Go,
        file: file.clone(),
        line,
        end_line,
        signature: (!signature.is_empty()).then(|| signature.to_owned()),
        doc: doc.clone(),
        parent: Some(parent.to_owned()),
    };
    if index
        .pkg_home
        .get(&g.pkg_path)
        .is_some_and(|(f, _)| f == file)
    {
        out.push(Symbol {
            qname: g.pkg_path.clone(),
            name: g.pkg_name.clone(),
            kind: SymbolKind::Package,
            language: Language::Go,
            file: file.clone(),
            line: g.pkg_line.max(1),
            end_line: facts.lines.max(1),
            signature: Some(format!("package {}", g.pkg_name)),
            doc: g.pkg_doc.clone(),
            parent: None,
        });
    }
    let pkg = &g.pkg_path;
    for t in &g.types {
        let q = format!("{pkg}.{}", t.name);
        if !owned(&q) {
            continue;
        }
        let kind = match (t.kind, t.alias) {
            (GoTypeKind::Struct, false) => SymbolKind::Struct,
            (GoTypeKind::Interface, false) => SymbolKind::Interface,
            _ => SymbolKind::Type,
        };
        out.push(mk(
            q.clone(),
            &t.name,
            kind,
            t.line,
            t.end_line,
            &t.signature,
            &t.doc,
            pkg,
        ));
        for f in &t.fields {
            let fq = format!("{q}.{}", f.name);
            if owned(&fq) {
                out.push(mk(
                    fq,
                    &f.name,
                    SymbolKind::Field,
                    f.line,
                    f.end_line,
                    &f.signature,
                    &None,
                    &q,
                ));
            }
        }
        for m in &t.methods {
            let mq = format!("{q}.{}", m.name);
            if owned(&mq) {
                out.push(mk(
                    mq,
                    &m.name,
                    SymbolKind::Method,
                    m.line,
                    m.end_line,
                    &m.signature,
                    &m.doc,
                    &q,
                ));
            }
        }
    }
    for f in &g.funcs {
        let (q, kind, parent) = match &f.recv {
            Some(r) => (
                format!("{pkg}.{r}.{}", f.name),
                SymbolKind::Method,
                format!("{pkg}.{r}"),
            ),
            None => (
                format!("{pkg}.{}", f.name),
                SymbolKind::Function,
                pkg.clone(),
            ),
        };
        if owned(&q) {
            out.push(mk(
                q,
                &f.name,
                kind,
                f.line,
                f.end_line,
                &f.signature,
                &f.doc,
                &parent,
            ));
        }
    }
    for v in &g.values {
        let q = format!("{pkg}.{}", v.name);
        if owned(&q) {
            let kind = if v.is_const {
                SymbolKind::Const
            } else {
                SymbolKind::Var
            };
            out.push(mk(
                q,
                &v.name,
                kind,
                v.line,
                v.end_line,
                &v.signature,
                &v.doc,
                pkg,
            ));
        }
    }
}
