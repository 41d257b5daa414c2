//! One file to facts, with a tree-sitter parser per thread.

use std::cell::RefCell;
use std::path::Path;

use tree_sitter::Parser;

use crate::index::budget::ParseBudget;
use crate::index::depth;
use crate::index::facts::FileFacts;
use crate::index::frontend::{self, ParsedSource};
use crate::index::go::modules::GoModules;
use crate::index::source::{SkipReason, Source, read_source};
use crate::index::syntax::count_lines;
use crate::index::walk::SourceFile;
use crate::model::Language;

thread_local! {
    /// One parser per language and thread, made on first use.
    static PARSERS: RefCell<Vec<(Language, Parser)>> = const { RefCell::new(Vec::new()) };
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

/// Parses one file into facts, within `budget` (its parse waits while others hold it). Never
/// fails: a file that cannot be read, or is not a regular, UTF-8, NUL-free file within the size
/// cap, is [`Parsed::Skipped`].
pub(super) fn parse_file(
    root: &Path,
    file: &SourceFile,
    modules: &GoModules,
    max_bytes: u64,
    budget: &ParseBudget,
) -> Parsed {
    let abs = root.join(&file.rel);
    // Held until the syntax tree is dropped at the end of this function.
    let (source, _permit) = read_source(&abs, max_bytes, budget);
    let src = match source {
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
    let frontend = frontend::for_language(file.language);
    let tree = PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let at = match parsers.iter().position(|(l, _)| *l == file.language) {
            Some(at) => at,
            None => {
                let mut parser = Parser::new();
                // The grammars are ABI-compatible with the runtime (checked by the test suite).
                parser.set_language(&frontend.grammar()).ok()?;
                parsers.push((file.language, parser));
                parsers.len() - 1
            }
        };
        parsers[at].1.parse(&src, None)
    });
    let Some(tree) = tree else {
        return Parsed::Gone;
    };
    let root_node = tree.root_node();
    let lang = frontend.extract(&ParsedSource {
        root: root_node,
        src: &src,
        rel: &file.rel,
        modules,
    });
    Parsed::Facts(Box::new(FileFacts {
        rel: file.rel.clone(),
        lines,
        parse_error: root_node.has_error(),
        depth_limited: depth::take_hit(),
        lang,
    }))
}
