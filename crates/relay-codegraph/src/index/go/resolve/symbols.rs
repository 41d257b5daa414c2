//! Go symbol emission: the packages, types, fields, methods, functions, vars and consts one file
//! declares (first declaration of a qname wins across files).

use crate::index::facts::FileFacts;
use crate::index::go::facts::{GoFile, GoTypeKind};
use crate::index::go::tables::GoIndex;
use crate::model::{Language, Symbol, SymbolKind};

/// Symbols declared in one Go file (first declaration of a qname wins across files).
pub(crate) fn file_symbols(
    index: &GoIndex,
    facts: &FileFacts,
    go_file: &GoFile,
    out: &mut Vec<Symbol>,
) {
    let file = &facts.rel;
    let owned = |symbol_qname: &str| {
        index
            .owners
            .get(symbol_qname)
            .is_none_or(|func| func == file)
    };
    let new_symbol = |qname: String,
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
        .get(&go_file.pkg_path)
        .is_some_and(|home| &home.file == file)
    {
        out.push(Symbol {
            qname: go_file.pkg_path.clone(),
            name: go_file.pkg_name.clone(),
            kind: SymbolKind::Package,
            language: Language::Go,
            file: file.clone(),
            line: go_file.pkg_line.max(1),
            end_line: facts.lines.max(1),
            signature: Some(format!("package {}", go_file.pkg_name)),
            doc: go_file.pkg_doc.clone(),
            parent: None,
        });
    }
    let pkg = &go_file.pkg_path;
    for decl in &go_file.types {
        let symbol_qname = format!("{pkg}.{}", decl.name);
        if !owned(&symbol_qname) {
            continue;
        }
        let kind = match (decl.kind, decl.alias) {
            (GoTypeKind::Struct, false) => SymbolKind::Struct,
            (GoTypeKind::Interface, false) => SymbolKind::Interface,
            _ => SymbolKind::Type,
        };
        out.push(new_symbol(
            symbol_qname.clone(),
            &decl.name,
            kind,
            decl.line,
            decl.end_line,
            &decl.signature,
            &decl.doc,
            pkg,
        ));
        for func in &decl.fields {
            let field_qname = format!("{symbol_qname}.{}", func.name);
            if owned(&field_qname) {
                out.push(new_symbol(
                    field_qname,
                    &func.name,
                    SymbolKind::Field,
                    func.line,
                    func.end_line,
                    &func.signature,
                    &None,
                    &symbol_qname,
                ));
            }
        }
        for m in &decl.methods {
            let method_qname = format!("{symbol_qname}.{}", m.name);
            if owned(&method_qname) {
                out.push(new_symbol(
                    method_qname,
                    &m.name,
                    SymbolKind::Method,
                    m.line,
                    m.end_line,
                    &m.signature,
                    &m.doc,
                    &symbol_qname,
                ));
            }
        }
    }
    for func in &go_file.funcs {
        let (symbol_qname, kind, parent) = match &func.recv {
            Some(r) => (
                format!("{pkg}.{r}.{}", func.name),
                SymbolKind::Method,
                format!("{pkg}.{r}"),
            ),
            None => (
                format!("{pkg}.{}", func.name),
                SymbolKind::Function,
                pkg.clone(),
            ),
        };
        if owned(&symbol_qname) {
            out.push(new_symbol(
                symbol_qname,
                &func.name,
                kind,
                func.line,
                func.end_line,
                &func.signature,
                &func.doc,
                &parent,
            ));
        }
    }
    for value in &go_file.values {
        let symbol_qname = format!("{pkg}.{}", value.name);
        if owned(&symbol_qname) {
            let kind = if value.is_const {
                SymbolKind::Const
            } else {
                SymbolKind::Var
            };
            out.push(new_symbol(
                symbol_qname,
                &value.name,
                kind,
                value.line,
                value.end_line,
                &value.signature,
                &value.doc,
                pkg,
            ));
        }
    }
}
