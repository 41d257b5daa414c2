//! Go as an indexer [`Frontend`]: `*.go` files, import paths from `go.mod`, package keys, and
//! resolution against the Go tables (with the `implements` and `dynamic` edges).

use std::collections::HashSet;

use crate::index::IndexStats;
use crate::index::facts::{FileFacts, LangFacts};
use crate::index::frontend::{FileOutput, Frontend, ParsedSource, Tables};
use crate::model::Language;

use super::{GoFile, GoIndex};

/// The Go frontend.
pub(crate) struct GoFrontend;

impl Frontend for GoFrontend {
    fn language(&self) -> Language {
        Language::Go
    }

    fn name(&self) -> &'static str {
        "Go"
    }

    fn pathspecs(&self) -> &'static [&'static str] {
        &["*.go", "go.mod", "*/go.mod"]
    }

    fn claims(&self, rel: &str) -> bool {
        rel.ends_with(".go")
    }

    fn reparses_all(&self, rel: &str) -> bool {
        rel == "go.mod" || rel.ends_with("/go.mod")
    }

    fn grammar(&self) -> tree_sitter::Language {
        tree_sitter_go::LANGUAGE.into()
    }

    fn extract(&self, source: &ParsedSource<'_>) -> LangFacts {
        let dir = source.rel.rsplit_once('/').map_or("", |(d, _)| d);
        let pkg_path = source.modules.package_path(dir);
        let stem = source
            .rel
            .rsplit('/')
            .next()
            .and_then(|name| name.strip_suffix(".go"));
        let mut facts = super::facts::extract(source.root, source.src, pkg_path.as_deref(), stem);
        facts.replaced = facts
            .imports
            .iter()
            .filter_map(|import| {
                let to = source.modules.replaced_import(dir, &import.path)?;
                Some((import.path.clone(), to))
            })
            .collect();
        LangFacts::Go(facts)
    }

    fn provides(&self, facts: &LangFacts, _packages: &HashSet<String>) -> Vec<String> {
        match facts {
            LangFacts::Go(g) => vec![g.pkg_path.clone()],
            _ => Vec::new(),
        }
    }

    fn requires(&self, facts: &LangFacts) -> Vec<String> {
        let LangFacts::Go(g) = facts else {
            return Vec::new();
        };
        let mut out = vec![g.pkg_path.clone()];
        out.extend(g.imports.iter().map(|i| i.path.clone()));
        // A replaced import reads the replacement's package (when the repository has it).
        out.extend(g.replaced.iter().map(|(_, to)| to.clone()));
        out
    }

    fn same_exports(&self, old: &LangFacts, new: &LangFacts) -> bool {
        match (old, new) {
            (LangFacts::Go(old), LangFacts::Go(new)) => super::same_decls::same_go_decls(old, new),
            _ => false,
        }
    }

    fn resolve(&self, tables: &Tables<'_>, facts: &FileFacts, out: &mut FileOutput) {
        if let LangFacts::Go(g) = &facts.lang {
            resolve_into(&tables.go, facts, g, out);
        }
    }

    fn count_file(&self, stats: &mut IndexStats) {
        stats.go_files += 1;
    }

    fn counted(&self, stats: &IndexStats) -> usize {
        stats.go_files
    }
}

/// Resolves one Go file against `go` (the full tables, or the tables an update kept).
pub(crate) fn resolve_into(go: &GoIndex, facts: &FileFacts, g: &GoFile, out: &mut FileOutput) {
    super::file_symbols(go, facts, g, &mut out.symbols);
    super::resolve_file(go, facts, g, &mut out.edges);
    super::implements_edges(go, &facts.rel, &mut out.edges);
}
