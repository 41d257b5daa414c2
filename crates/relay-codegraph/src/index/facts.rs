//! Per-file facts: what the resolver keeps of each file between incremental updates.

use super::go::GoFile;
use super::python::PyFile;
use crate::model::Language;

/// Everything the resolver needs to know about one file, kept between incremental updates.
#[derive(Debug, Clone)]
pub(crate) struct FileFacts {
    /// Repository-relative path.
    pub rel: String,
    /// Number of lines.
    pub lines: u32,
    /// Whether the syntax tree contains errors.
    pub parse_error: bool,
    /// Whether a walker hit [`super::depth::MAX_DEPTH`] (what lay deeper is unresolved).
    pub depth_limited: bool,
    pub lang: LangFacts,
}

/// The language-specific part of [`FileFacts`].
#[derive(Debug, Clone)]
pub(crate) enum LangFacts {
    Go(GoFile),
    Python(PyFile),
}

impl LangFacts {
    /// The language of these facts (the one place that maps a variant to its language).
    pub(crate) fn language(&self) -> Language {
        match self {
            LangFacts::Go(_) => Language::Go,
            LangFacts::Python(_) => Language::Python,
        }
    }
}
