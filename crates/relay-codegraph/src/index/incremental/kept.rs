//! The update path when every changed file offers other files the same declarations.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use crate::index::facts::{FileFacts, LangFacts};
use crate::index::frontend;
use crate::index::go::same_decls;
use crate::index::parallel::par_map;
use crate::index::python::{FlowUpdate, PyFlow};
use crate::index::resolve::{self, StoredOutput, build_tables, resolve_files};
use crate::index::walk::SourceFile;
use crate::index::{GraphDelta, Indexer};
use crate::model::Language;

impl Indexer {
    /// Whether every changed file existed before, still exists and offers other files the same
    /// things as before ([`frontend::Frontend::same_exports`]: a Go file declares the same things up to
    /// lines, a Python module has the same facts up to its own references, lines and docs), and
    /// the tables the fast path patches are kept (Go: the tables are patched for the lines).
    pub(super) fn fast_path_applies(
        &self,
        candidates: &[SourceFile],
        parsed: &[Option<FileFacts>],
    ) -> bool {
        !candidates.is_empty()
            && candidates.iter().zip(parsed).all(|(file, new)| {
                let (Some(old), Some(new)) = (self.facts.get(&file.rel), new.as_ref()) else {
                    return false;
                };
                let language = old.lang.language();
                language == new.lang.language()
                    && (language != Language::Go || self.go_index.is_some())
                    && frontend::of(old).same_exports(&old.lang, &new.lang)
            })
    }

    /// The update when [`Self::fast_path_applies`]: patch the lines the changed Go files
    /// contribute to the kept Go tables, rebuild the Python tables if a Python module changed,
    /// and re-resolve only the changed files.
    pub(super) fn update_exports_kept(
        &mut self,
        started: Instant,
        candidates: &[SourceFile],
        parsed: Vec<Option<FileFacts>>,
    ) -> GraphDelta {
        let mut delta = GraphDelta {
            reparsed: candidates.len(),
            ..GraphDelta::default()
        };
        let mut changed_files = BTreeSet::new();
        // Whether a changed Go file's bodies differ beyond lines (else no value flows otherwise).
        let flow_changed = parsed.iter().flatten().any(|new| {
            match (self.facts.get(&new.rel).map(|f| &f.lang), &new.lang) {
                (Some(LangFacts::Go(old)), LangFacts::Go(new)) => {
                    !crate::index::go::same_flow_inputs(old, new)
                }
                (_, LangFacts::Go(_)) => true,
                _ => false,
            }
        });
        for facts in parsed.into_iter().flatten() {
            changed_files.insert(facts.rel.clone());
            self.facts.insert(facts.rel.clone(), facts);
        }
        let mut by_language: BTreeMap<Language, BTreeSet<String>> = BTreeMap::new();
        for rel in &changed_files {
            if let Some(f) = self.facts.get(rel) {
                by_language
                    .entry(f.lang.language())
                    .or_default()
                    .insert(rel.clone());
            }
        }
        let go_files = by_language.remove(&Language::Go).unwrap_or_default();
        let mut py_files = by_language.remove(&Language::Python).unwrap_or_default();
        let mut outputs: BTreeMap<String, StoredOutput> = BTreeMap::new();
        if !py_files.is_empty() {
            // The exports are the same: the modules whose evaluation can differ are the
            // changed ones and those that read their facts (the replay finds them).
            let py_update = self.py_flow_state.as_ref().map(|state| FlowUpdate {
                state: Arc::clone(state),
                changed: py_files.iter().cloned().collect(),
                tables: None,
            });
            let tables = match &self.py_tables {
                Some(kept) => {
                    resolve::python_tables_kept(&self.facts, Arc::clone(kept), py_update.as_ref())
                }
                None => build_tables(&self.facts, &[Language::Python]),
            };
            self.py_flow_state = Some(tables.py_flow_state());
            let flow = tables.py_flow();
            if self.py_flow.as_ref() != Some(&flow) {
                // A value flowing between modules changed (an argument, a returned value, a
                // store): re-resolve the modules whose resolution read a changed entry.
                py_files.extend(self.flow_readers(self.py_flow.as_deref(), &flow));
                self.py_flow = Some(flow);
            }
            outputs.extend(resolve_files(&tables, Some(&py_files), &self.opts));
            if self.py_tables.is_none() {
                self.py_tables = Some(tables.py_tables());
            }
        }
        self.resolve_go_decls_kept(&go_files, flow_changed, &mut outputs);
        // A language other than Go and Python keeps no tables between updates: its tables are
        // rebuilt (what other files read is unchanged) and only its changed files re-resolved.
        if !by_language.is_empty() {
            let languages: Vec<Language> = by_language.keys().copied().collect();
            let files: BTreeSet<String> = by_language.into_values().flatten().collect();
            let tables = build_tables(&self.facts, &languages);
            outputs.extend(resolve_files(&tables, Some(&files), &self.opts));
        }
        delta.resolved = outputs.len();
        // The changed files, and every Python module re-resolved after a value-flow change.
        let replaced: BTreeSet<String> = changed_files
            .iter()
            .chain(outputs.keys())
            .cloned()
            .collect();
        self.apply_outputs(replaced.iter().collect(), &mut outputs, &mut delta);
        let full_duration = self.stats.duration;
        self.recount(full_duration);
        delta.duration = started.elapsed();
        delta
    }

    /// The Python modules whose last resolution read a flow entry that differs between `old`
    /// and `new` (all of them without a previous table; a module resolved without recording
    /// its reads counts as reading everything).
    pub(super) fn flow_readers(&self, old: Option<&PyFlow>, new: &PyFlow) -> Vec<String> {
        let changed: Option<crate::index::python::ReadSet> = old.map(|old| {
            old.changed(new)
                .iter()
                .map(crate::index::python::FlowKey::digest)
                .collect()
        });
        self.facts
            .iter()
            .filter(|(_, f)| matches!(f.lang, LangFacts::Python(_)))
            .filter(|(rel, _)| {
                let reads = self
                    .outputs
                    .get(*rel)
                    .and_then(|o| o.py_flow_reads.as_ref());
                match (&changed, reads) {
                    (Some(changed), Some(reads)) => {
                        if changed.len() < reads.len() {
                            changed.iter().any(|k| reads.contains(k))
                        } else {
                            reads.iter().any(|k| changed.contains(k))
                        }
                    }
                    _ => true,
                }
            })
            .map(|(rel, _)| rel.clone())
            .collect()
    }

    /// Patches the kept Go tables for `files` (whose declarations are unchanged up to lines)
    /// and resolves them into `outputs`.
    pub(super) fn resolve_go_decls_kept(
        &mut self,
        files: &BTreeSet<String>,
        flow_changed: bool,
        outputs: &mut BTreeMap<String, StoredOutput>,
    ) {
        if files.is_empty() {
            return;
        }
        let Some(go) = self.go_index.as_mut() else {
            return;
        };
        for rel in files {
            if let Some(LangFacts::Go(g)) = self.facts.get(rel).map(|f| &f.lang) {
                same_decls::patch_lines(go, rel, g);
            }
        }
        // A changed body can change what flows to other files' dynamic call sites.
        let mut files = files.clone();
        if flow_changed {
            files.extend(crate::index::go::patch::update_flow(go, &self.facts));
        }
        self.resolve_go_kept(&files, outputs);
    }

    /// Resolves the Go `files` against the kept Go tables into `outputs`.
    pub(super) fn resolve_go_kept(
        &self,
        files: &BTreeSet<String>,
        outputs: &mut BTreeMap<String, StoredOutput>,
    ) {
        let Some(go) = self.go_index.as_ref() else {
            return;
        };
        if files.is_empty() {
            return;
        }
        let files: Vec<&FileFacts> = files.iter().filter_map(|rel| self.facts.get(rel)).collect();
        let resolved = par_map(
            &files,
            self.opts.worker_threads().min(files.len()),
            |f| resolve::resolve_go_file(go, f),
            |_| {},
        );
        outputs.extend(
            files
                .iter()
                .zip(resolved)
                .filter_map(|(f, out)| out.map(|out| (f.rel.clone(), out))),
        );
    }
}
