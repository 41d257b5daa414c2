//! One file to facts, with a tree-sitter parser per thread.

use std::cell::RefCell;
use std::path::Path;

use tree_sitter::Parser;

use crate::index::facts::{FileFacts, LangFacts, count_lines};
use crate::index::walk::{GoModules, SourceFile};
use crate::index::{Error, Result};
use crate::model::Language;
thread_local! {
    static GO_PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
    static PY_PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parses one file into facts (`None` if it cannot be read as a regular file any more).
pub(super) fn parse_file(
    root: &Path,
    file: &SourceFile,
    modules: &GoModules,
) -> Result<Option<FileFacts>> {
    let abs = root.join(&file.rel);
    let src = match std::fs::read(&abs) {
        Ok(src) => src,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(Error::Io { path: abs, source }),
    };
    let lines = count_lines(&src);
    let (parser_cell, language) = match file.language {
        Language::Go => (
            &GO_PARSER,
            tree_sitter::Language::from(tree_sitter_go::LANGUAGE),
        ),
        Language::Python => (
            &PY_PARSER,
            tree_sitter::Language::from(tree_sitter_python::LANGUAGE),
        ),
    };
    let tree = parser_cell.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            // The grammars are ABI-compatible with the runtime (checked by the test suite).
            parser.set_language(&language).ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(&src, None)
    });
    let Some(tree) = tree else {
        return Ok(None);
    };
    let root_node = tree.root_node();
    let lang = match file.language {
        Language::Go => {
            let dir = file.rel.rsplit_once('/').map_or("", |(d, _)| d);
            let pkg_path = modules.package_path(dir);
            let stem = file
                .rel
                .rsplit('/')
                .next()
                .and_then(|name| name.strip_suffix(".go"));
            LangFacts::Go(crate::index::go::extract(
                root_node,
                &src,
                pkg_path.as_deref(),
                stem,
            ))
        }
        Language::Python => {
            let (module, is_package) = python_module_name(&file.rel);
            LangFacts::Python(crate::index::python::extract(
                root_node, &src, module, is_package,
            ))
        }
    };
    Ok(Some(FileFacts {
        rel: file.rel.clone(),
        lines,
        parse_error: root_node.has_error(),
        lang,
    }))
}

/// Dotted module name of a Python file and whether it is a package (`__init__.py`).
pub(crate) fn python_module_name(rel: &str) -> (String, bool) {
    let stem = rel.strip_suffix(".py").unwrap_or(rel);
    if let Some(pkg) = stem.strip_suffix("/__init__") {
        return (pkg.replace('/', "."), true);
    }
    if stem == "__init__" {
        return ("__init__".to_owned(), true);
    }
    (stem.replace('/', "."), false)
}
