//! The language seam: what the language-neutral parts of the indexer (the walk, parsing, the
//! dependency keys of an update, the fast path, resolution and the stats) ask of a language.
//!
//! Each language folder (`go/`, `python/`) implements [`Frontend`] in its `frontend.rs`, and
//! [`FRONTENDS`] lists them. The neutral code finds a file's frontend by path
//! ([`for_path`]) or by its facts ([`of`]) and never matches on the language itself.
//!
//! What stays per language on purpose: the global tables ([`Tables`] holds one
//! field per language, built side by side) and the incremental strategies that keep them
//! between updates (Go patches its tables per package; Python replays its value-flow
//! fixpoint): the two share no structure, so a trait over them would only rename the fields.

use std::collections::HashSet;
use std::sync::Arc;

use tree_sitter::Node;

use super::facts::{FileFacts, LangFacts};
use super::go::GoIndex;
use super::go::modules::GoModules;
use super::python::PyIndex;
use super::{IndexStats, go, python};
use crate::model::Language;
use crate::model::{Edge, Symbol};

/// The registered languages, in the order their files are claimed.
pub(crate) static FRONTENDS: &[&dyn Frontend] = &[&go::GoFrontend, &python::PythonFrontend];

/// One parsed source file, as a frontend's extractor sees it.
pub(crate) struct ParsedSource<'a> {
    /// The root of the syntax tree.
    pub root: Node<'a>,
    pub src: &'a [u8],
    /// Repository-relative path with `/` separators.
    pub rel: &'a str,
    /// The repository's Go modules (the import path of a Go file's directory).
    pub modules: &'a GoModules,
}

/// The symbols and edges attributed to one file.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileOutput {
    pub symbols: Vec<Symbol>,
    pub edges: Vec<Edge>,
    /// Python: the value-flow entries the resolution read (an update re-resolves the modules
    /// that read a changed entry). Not part of the output's identity.
    pub py_flow_reads: Option<Arc<python::ReadSet>>,
    /// Python: the files (positions among the Python files) whose facts the resolution read
    /// (an update re-resolves the modules that read a changed file).
    pub py_files_read: Option<Arc<python::FilesRead>>,
}

/// Outputs are equal when their symbols and edges are: what a resolution read is bookkeeping.
impl PartialEq for FileOutput {
    fn eq(&self, other: &Self) -> bool {
        self.symbols == other.symbols && self.edges == other.edges
    }
}

impl Eq for FileOutput {}

/// The global tables of one resolution (built in `resolve.rs`): one field per language, which
/// its frontend reads.
pub(crate) struct Tables<'a> {
    pub go: GoIndex,
    pub py: PyIndex<'a>,
    pub files: Vec<&'a FileFacts>,
}

/// What the indexer needs from one language.
pub(crate) trait Frontend: Sync {
    /// The language of the symbols this frontend emits.
    fn language(&self) -> Language;

    /// The language's name as people write it (`Go`): the tool description, the explore prompt
    /// and `relay index` name the indexed languages with it.
    fn name(&self) -> &'static str;

    /// Git pathspecs of every file whose change can change this language's part of the graph
    /// (what [`Frontend::claims`] and [`Frontend::reparses_all`] accept): a checkout with changes
    /// outside them is still clean for the graph (`relay codegraph` reuses its cached graph).
    fn pathspecs(&self) -> &'static [&'static str];

    /// Whether the repository-relative path `rel` is a source file of this language.
    fn claims(&self, rel: &str) -> bool;

    /// Whether a change to `rel` (not a source file) can change the facts of every file of
    /// this language, so that an update re-parses them all (Go: a `go.mod`, which moves import
    /// paths).
    fn reparses_all(&self, _rel: &str) -> bool {
        false
    }

    /// The tree-sitter grammar files are parsed with.
    fn grammar(&self) -> tree_sitter::Language;

    /// The facts of one parsed file.
    fn extract(&self, source: &ParsedSource<'_>) -> LangFacts;

    /// Names under which other files can reach this file (an update re-resolves the readers of
    /// the names a changed file provides, before and after). `packages` are the names that are
    /// packages ([`Frontend::package`]) among all files.
    fn provides(&self, facts: &LangFacts, packages: &HashSet<String>) -> Vec<String>;

    /// Names this file's resolution reads (its own and everything it imports).
    fn requires(&self, facts: &LangFacts) -> Vec<String>;

    /// The name under which this file is a package that other names nest in (Python's
    /// `__init__.py`), if it is one.
    fn package(&self, _facts: &LangFacts) -> Option<String> {
        None
    }

    /// Whether `new` offers other files exactly what `old` offered, so that an update may
    /// re-resolve the changed file alone (the fast path).
    fn same_exports(&self, old: &LangFacts, new: &LangFacts) -> bool;

    /// Resolves one file of this language against `tables` into its symbols and edges.
    fn resolve(&self, tables: &Tables<'_>, facts: &FileFacts, out: &mut FileOutput);

    /// Counts one indexed file of this language in `stats`.
    fn count_file(&self, stats: &mut IndexStats);

    /// The files of this language `stats` counted (what [`Frontend::count_file`] added up).
    fn counted(&self, stats: &IndexStats) -> usize;
}

/// The indexed languages' names, in registration order (`["Go", "Python"]`).
pub fn language_names() -> Vec<&'static str> {
    FRONTENDS.iter().map(|f| f.name()).collect()
}

/// The indexed languages' names as a sentence: `Go and Python`.
pub fn languages_sentence() -> String {
    match language_names().as_slice() {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Git pathspecs of every file that can change the graph, over all languages.
pub fn indexed_pathspecs() -> Vec<&'static str> {
    FRONTENDS
        .iter()
        .flat_map(|f| f.pathspecs())
        .copied()
        .collect()
}

/// The files `stats` counted per language, in registration order: `[("Go", 6), ("Python", 0)]`.
pub fn files_by_language(stats: &IndexStats) -> Vec<(&'static str, usize)> {
    FRONTENDS
        .iter()
        .map(|f| (f.name(), f.counted(stats)))
        .collect()
}

/// The frontend that claims `rel`, if any language does.
pub(crate) fn for_path(rel: &str) -> Option<&'static dyn Frontend> {
    FRONTENDS.iter().copied().find(|f| f.claims(rel))
}

/// The frontend of a language.
pub(crate) fn for_language(language: Language) -> &'static dyn Frontend {
    FRONTENDS
        .iter()
        .copied()
        .find(|f| f.language() == language)
        .expect("every language has a registered frontend")
}

/// The frontend of a file's facts.
pub(crate) fn of(facts: &FileFacts) -> &'static dyn Frontend {
    for_language(facts.lang.language())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Git's default pathspec matching, as far as the pathspecs here need it: `*` matches any
    /// run of characters, `/` included; anything else matches itself.
    fn pathspec_matches(spec: &str, path: &str) -> bool {
        match spec.split_once('*') {
            None => spec == path,
            Some((prefix, rest)) => {
                path.starts_with(prefix)
                    && (prefix.len()..=path.len())
                        .any(|at| path.is_char_boundary(at) && pathspec_matches(rest, &path[at..]))
            }
        }
    }

    #[test]
    fn every_language_has_one_frontend_with_a_loadable_grammar() {
        for language in Language::ALL {
            let registered = FRONTENDS
                .iter()
                .filter(|f| f.language() == language)
                .count();
            assert_eq!(registered, 1, "{language:?}");
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&for_language(language).grammar())
                .unwrap_or_else(|e| panic!("{language:?}: {e}"));
        }
        assert_eq!(FRONTENDS.len(), Language::ALL.len());
    }

    #[test]
    fn paths_are_claimed_by_their_language_alone() {
        let cases = [
            ("cmd/app/main.go", Some(Language::Go)),
            ("pkg/mod.py", Some(Language::Python)),
            ("go.mod", None),
            ("README.md", None),
        ];
        for (rel, expected) in cases {
            let claimed: Vec<Language> = FRONTENDS
                .iter()
                .filter(|f| f.claims(rel))
                .map(|f| f.language())
                .collect();
            assert_eq!(claimed, expected.into_iter().collect::<Vec<_>>(), "{rel}");
            assert_eq!(for_path(rel).map(|f| f.language()), expected, "{rel}");
        }
        // What a frontend reads is what its pathspecs cover, so a cached graph is never reused
        // over a change that matters (a nested `go.mod` included).
        for rel in [
            "cmd/app/main.go",
            "pkg/mod.py",
            "go.mod",
            "tools/go.mod",
            "README.md",
            "a.pyi",
        ] {
            for frontend in FRONTENDS {
                let reads = frontend.claims(rel) || frontend.reparses_all(rel);
                let covered = frontend
                    .pathspecs()
                    .iter()
                    .any(|spec| pathspec_matches(spec, rel));
                assert_eq!(reads, covered, "{rel}: {:?}", frontend.language());
            }
        }
        assert_eq!(indexed_pathspecs(), ["*.go", "go.mod", "*/go.mod", "*.py"]);
        assert_eq!(languages_sentence(), "Go and Python");
        let reparsing: Vec<Language> = FRONTENDS
            .iter()
            .filter(|f| f.reparses_all("tools/go.mod"))
            .map(|f| f.language())
            .collect();
        assert_eq!(reparsing, vec![Language::Go]);
    }
}
