//! One file to facts, with a tree-sitter parser per thread.

use std::cell::RefCell;
use std::path::Path;

use tree_sitter::Parser;

use crate::index::depth;
use crate::index::facts::{FileFacts, LangFacts};
use crate::index::source::{SkipReason, Source, read_source};
use crate::index::syntax::count_lines;
use crate::index::walk::{GoModules, SourceFile};
use crate::model::Language;
thread_local! {
    static GO_PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
    static PY_PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// What parsing one file gave.
#[derive(Debug)]
pub(super) enum Parsed {
    Facts(Box<FileFacts>),
    /// The file exists but is not indexed (counted in the stats).
    Skipped(SkipReason),
    /// The file no longer exists (or the parser gave up on it).
    Gone,
}

impl Parsed {
    /// The facts, if the file was indexed.
    pub(super) fn into_facts(self) -> Option<FileFacts> {
        match self {
            Parsed::Facts(facts) => Some(*facts),
            Parsed::Skipped(_) | Parsed::Gone => None,
        }
    }
}

/// Parses one file into facts. Never fails: a file that cannot be read, or is not a regular,
/// UTF-8, NUL-free file within the size cap, is [`Parsed::Skipped`].
pub(super) fn parse_file(
    root: &Path,
    file: &SourceFile,
    modules: &GoModules,
    max_bytes: u64,
) -> Parsed {
    let abs = root.join(&file.rel);
    let src = match read_source(&abs, max_bytes) {
        Source::Text(src) => src,
        Source::Skipped(reason) => {
            tracing::debug!(path = %file.rel, reason = reason.as_str(), "index: file skipped");
            return Parsed::Skipped(reason);
        }
        Source::Gone => return Parsed::Gone,
    };
    // Start the file with a clean mark: a limit hit while parsing it is this file's.
    let _ = depth::take_hit();
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
        return Parsed::Gone;
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
    Parsed::Facts(Box::new(FileFacts {
        rel: file.rel.clone(),
        lines,
        parse_error: root_node.has_error(),
        depth_limited: depth::take_hit(),
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
