//! Python as an indexer [`Frontend`]: `*.py` files, dotted module names from the path, module
//! keys (with source-root suffixes and parent packages), and resolution against the Python
//! tables (recording what each resolution read, for updates).

use std::collections::HashSet;
use std::sync::Arc;

use crate::index::IndexStats;
use crate::index::facts::{FileFacts, LangFacts};
use crate::index::frontend::{FileOutput, Frontend, ParsedSource, Tables};
use crate::model::Language;

/// The Python frontend.
pub(crate) struct PythonFrontend;

impl Frontend for PythonFrontend {
    fn language(&self) -> Language {
        Language::Python
    }

    fn name(&self) -> &'static str {
        "Python"
    }

    fn pathspecs(&self) -> &'static [&'static str] {
        &["*.py"]
    }

    fn claims(&self, rel: &str) -> bool {
        rel.ends_with(".py")
    }

    fn grammar(&self) -> tree_sitter::Language {
        tree_sitter_python::LANGUAGE.into()
    }

    fn extract(&self, source: &ParsedSource<'_>) -> LangFacts {
        let (module, is_package) = module_name(source.rel);
        LangFacts::Python(super::extract(source.root, source.src, module, is_package))
    }

    fn provides(&self, facts: &LangFacts, packages: &HashSet<String>) -> Vec<String> {
        let LangFacts::Python(p) = facts else {
            return Vec::new();
        };
        // Prefixes (parent packages expose their submodules) and the suffixes starting after
        // a directory that is not a package (names importable from a source root).
        let parts: Vec<&str> = p.module.split('.').collect();
        let mut out = vec![p.module.clone()];
        for k in 1..parts.len() {
            let prefix = parts[..k].join(".");
            if !packages.contains(&prefix) {
                out.push(parts[k..].join("."));
            }
            out.push(prefix);
        }
        out
    }

    fn requires(&self, facts: &LangFacts) -> Vec<String> {
        let LangFacts::Python(p) = facts else {
            return Vec::new();
        };
        let mut names = vec![p.module.clone()];
        for imp in &p.imports {
            names.push(imp.module.clone());
            if let Some(n) = &imp.name {
                names.push(format!("{}.{n}", imp.module));
            }
        }
        names.extend(p.star_imports.iter().cloned());
        let mut out = Vec::new();
        for name in names {
            let mut prefix = String::new();
            for part in name.split('.') {
                if !prefix.is_empty() {
                    prefix.push('.');
                }
                prefix.push_str(part);
                out.push(prefix.clone());
            }
        }
        out
    }

    fn package(&self, facts: &LangFacts) -> Option<String> {
        match facts {
            LangFacts::Python(p) if p.is_package => Some(p.module.clone()),
            _ => None,
        }
    }

    fn same_exports(&self, old: &LangFacts, new: &LangFacts) -> bool {
        match (old, new) {
            (LangFacts::Python(old), LangFacts::Python(new)) => {
                super::same_exports::same_py_exports(old, new)
            }
            _ => false,
        }
    }

    fn resolve(&self, tables: &Tables<'_>, facts: &FileFacts, out: &mut FileOutput) {
        let LangFacts::Python(p) = &facts.lang else {
            return;
        };
        super::file_symbols(&tables.py, facts, p, &mut out.symbols);
        let (reads, files_read) = super::resolve_file(&tables.py, facts, p, &mut out.edges);
        out.py_flow_reads = Some(Arc::new(reads));
        out.py_files_read = Some(Arc::new(files_read));
    }

    fn count_file(&self, stats: &mut IndexStats) {
        stats.python_files += 1;
    }

    fn counted(&self, stats: &IndexStats) -> usize {
        stats.python_files
    }
}

/// Dotted module name of a Python file and whether it is a package (`__init__.py`).
pub(crate) fn module_name(rel: &str) -> (String, bool) {
    let stem = rel.strip_suffix(".py").unwrap_or(rel);
    if let Some(pkg) = stem.strip_suffix("/__init__") {
        return (pkg.replace('/', "."), true);
    }
    if stem == "__init__" {
        return ("__init__".to_owned(), true);
    }
    (stem.replace('/', "."), false)
}
