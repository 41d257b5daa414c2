//! The closure path of [`Indexer::update`]: a declaration, signature, binding or import
//! changed, or a file was added or deleted. The tables of the languages involved are patched
//! (Go, per package) or rebuilt, and the files that can see a change are re-resolved.
//!
//! Phases, one function each: [`Indexer::swap_facts`] (new facts in, old ones kept for
//! comparison), [`Indexer::plan_go_tables`] (patch the kept Go tables or give them up),
//! [`Indexer::build_closure_tables`] (rebuild what was not patched), [`Indexer::closure_targets`]
//! (which files to re-resolve) and [`Indexer::resolve_closure`].

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;
use std::time::Instant;

use super::dependents::{add_derived_changes, drop_in_background, python_dependents};
use super::update::Changes;
use crate::index::deps;
use crate::index::facts::FileFacts;
use crate::index::go::GoIndex;
use crate::index::go::dependents as go_dependents;
use crate::index::go::patch as go_patch;
use crate::index::python::{FlowState, FlowUpdate, PyFlow, PyTables};
use crate::index::resolve::{Derived, StoredOutput, Tables, build_tables_after, resolve_files};
use crate::index::{GraphDelta, Indexer};
use crate::model::Language;

/// The changed files after their new facts replaced the old ones.
struct Swapped {
    /// Every changed path (added, modified or deleted).
    changed_files: BTreeSet<String>,
    /// The languages of the changed files (sorted).
    languages: Vec<Language>,
    /// Per language: the names the changed files provide, before and after (a package may
    /// appear or vanish).
    keys: BTreeMap<Language, HashSet<String>>,
    /// Per language: the previous facts of each changed file (`None` for a new one).
    old: BTreeMap<Language, BTreeMap<String, Option<FileFacts>>>,
}

impl Swapped {
    fn has(&self, language: Language) -> bool {
        self.languages.contains(&language)
    }

    /// The previous facts of the changed files of `language`.
    fn old_of(&self, language: Language) -> &BTreeMap<String, Option<FileFacts>> {
        static NONE: BTreeMap<String, Option<FileFacts>> = BTreeMap::new();
        self.old.get(&language).unwrap_or(&NONE)
    }
}

/// The Python value flow and fixpoint state after an update, for the next one.
type PyFlowAfter = (Arc<PyFlow>, Arc<FlowState>);

/// What the closure path resolved, with the rebuilt tables to keep.
struct Resolved {
    outputs: BTreeMap<String, StoredOutput>,
    /// The Python tables, when Python changed.
    py_tables: Option<Arc<PyTables>>,
    /// The Go tables, when they were rebuilt.
    go_index: Option<GoIndex>,
}

/// What happened to the kept Go tables.
#[derive(Default)]
struct GoPlan {
    /// The tables were patched: the Go files to re-resolve against them.
    targets: Option<BTreeSet<String>>,
    /// The tables are rebuilt: the `implements`/`impls` of the ones given up, to compare.
    old_derived: Option<Derived>,
}

impl GoPlan {
    fn rebuilds(&self, swapped: &Swapped) -> bool {
        swapped.has(Language::Go) && self.targets.is_none()
    }
}

impl Indexer {
    /// The closure path, after the changed files were parsed.
    pub(super) fn update_closure(
        &mut self,
        started: Instant,
        changes: &Changes,
        parsed: Vec<Option<FileFacts>>,
    ) -> GraphDelta {
        let swapped = self.swap_facts(changes, parsed);
        let mut delta = GraphDelta {
            reparsed: changes.candidates.len(),
            ..GraphDelta::default()
        };
        if swapped.languages.is_empty() {
            delta.duration = started.elapsed();
            return delta;
        }
        let go = self.plan_go_tables(&swapped, changes.modules_replaced, started);
        let (tables, py_found) = self.build_closure_tables(&swapped, &go);
        tracing::debug!(
            index.at_ms = started.elapsed().as_millis() as u64,
            "update: tables built"
        );
        let (targets, py_flow) =
            self.closure_targets(&swapped, &go, &tables, py_found.as_ref(), started);
        delta.resolved = targets.len();
        tracing::debug!(
            index.at_ms = started.elapsed().as_millis() as u64,
            "update: derived"
        );
        let resolved = self.resolve_closure(&swapped, &go, tables, &targets);
        if let Some((flow, state)) = py_flow {
            self.py_flow = Some(flow);
            self.py_flow_state = Some(state);
        }
        if let Some(new) = resolved.py_tables
            && let Some(old) = self.py_tables.replace(new)
        {
            drop_in_background(old);
        }
        if let Some(go_index) = resolved.go_index {
            self.go_index = Some(go_index);
        }
        let mut outputs = resolved.outputs;
        let replaced: BTreeSet<&String> = targets.iter().chain(&swapped.changed_files).collect();
        self.apply_outputs(replaced, &mut outputs, &mut delta);
        tracing::debug!(
            index.at_ms = started.elapsed().as_millis() as u64,
            "update: applied"
        );
        let full_duration = self.stats.duration;
        self.recount(full_duration);
        delta.duration = started.elapsed();
        delta
    }

    /// Puts the new facts in place and keeps the old ones with the names both provide.
    fn swap_facts(&mut self, changes: &Changes, parsed: Vec<Option<FileFacts>>) -> Swapped {
        let mut swapped = Swapped {
            changed_files: BTreeSet::new(),
            languages: Vec::new(),
            keys: BTreeMap::new(),
            old: BTreeMap::new(),
        };
        for (file, item) in changes.candidates.iter().zip(parsed) {
            swapped.changed_files.insert(file.rel.clone());
            let keys = swapped.keys.entry(file.language).or_default();
            if let Some(new) = &item {
                keys.extend(deps::provides(new, &HashSet::new()));
            }
            let previous = match item {
                Some(facts) => self.facts.insert(file.rel.clone(), facts),
                None => self.facts.remove(&file.rel),
            };
            if let Some(old) = &previous {
                keys.extend(deps::provides(old, &HashSet::new()));
            }
            swapped
                .old
                .entry(file.language)
                .or_default()
                .insert(file.rel.clone(), previous);
        }
        swapped.languages = swapped.old.keys().copied().collect();
        swapped
    }

    /// Go: patches the kept tables where possible; the files to re-resolve are then those
    /// that can see a changed name (see `go::patch`). Otherwise the tables are given up (and
    /// rebuilt), keeping their derived edges for comparison.
    fn plan_go_tables(
        &mut self,
        swapped: &Swapped,
        modules_replaced: bool,
        started: Instant,
    ) -> GoPlan {
        let mut plan = GoPlan::default();
        if !swapped.has(Language::Go) {
            return plan;
        }
        let old_go = swapped.old_of(Language::Go);
        let patched = match self.go_index.as_mut() {
            Some(go) if !modules_replaced => go_patch::patch(go, &self.facts, old_go),
            _ => None,
        };
        match patched {
            Some(p) => {
                let mut targets: BTreeSet<String> = old_go
                    .keys()
                    .chain(&p.files)
                    .filter(|rel| self.is_of(rel, Language::Go))
                    .cloned()
                    .collect();
                tracing::debug!(
                    index.at_ms = started.elapsed().as_millis() as u64,
                    "update: go tables patched"
                );
                if let Some(go) = &self.go_index {
                    targets.extend(go_dependents::dependents(
                        go,
                        &self.facts,
                        &p,
                        self.opts.worker_threads(),
                    ));
                }
                tracing::debug!(
                    index.at_ms = started.elapsed().as_millis() as u64,
                    index.names = ?p.names,
                    "update: go dependents found"
                );
                plan.targets = Some(targets);
            }
            None => {
                if let Some(mut old) = self.go_index.take() {
                    plan.old_derived = Some(Derived {
                        implements: std::mem::take(&mut old.implements),
                        impls: std::mem::take(&mut old.impls),
                        flow: std::mem::take(&mut old.flow),
                    });
                    // Freeing millions of table entries takes longer than resolving the
                    // affected files, so it is done off the update's path.
                    drop_in_background(old);
                }
            }
        }
        plan
    }

    /// Tables are rebuilt from all facts of the languages involved (Go only when it was not
    /// patched); the Python modules to re-resolve by name depend on the facts alone, so they
    /// are found while the tables are built. The Python value flow is replayed: the files whose
    /// facts or table entries changed count as changed (`python::flow_update`).
    fn build_closure_tables(
        &self,
        swapped: &Swapped,
        go: &GoPlan,
    ) -> (Tables<'_>, Option<BTreeSet<String>>) {
        let has_py = swapped.has(Language::Python);
        // Every language involved, except Go when its kept tables were patched.
        let build: Vec<Language> = swapped
            .languages
            .iter()
            .copied()
            .filter(|&lang| lang != Language::Go || go.rebuilds(swapped))
            .collect();
        let old_py = swapped.old_of(Language::Python);
        let py_update = match &self.py_flow_state {
            Some(state) if has_py => Some(FlowUpdate {
                state: Arc::clone(state),
                changed: old_py.keys().cloned().collect(),
                tables: self.py_tables.clone(),
            }),
            _ => None,
        };
        let facts = &self.facts;
        std::thread::scope(|s| {
            let found = has_py.then(|| {
                std::thread::Builder::new()
                    .stack_size(crate::index::INDEX_STACK_BYTES)
                    .spawn_scoped(s, move || python_dependents(facts, old_py))
            });
            let tables = build_tables_after(facts, &build, py_update.as_ref());
            let found = match found {
                Some(Ok(handle)) => handle.join().unwrap_or(None),
                Some(Err(_)) => python_dependents(facts, old_py),
                None => None,
            };
            (tables, found)
        })
    }

    /// The files to re-resolve: per language, those found by its own means (Go: patched
    /// tables; Python: changed names) or else the reverse import closure of the changed
    /// names; then Python's value-flow readers and Go's derived-edge changes. With them, the
    /// new Python value flow and fixpoint state when Python changed.
    fn closure_targets(
        &self,
        swapped: &Swapped,
        go: &GoPlan,
        tables: &Tables<'_>,
        py_found: Option<&BTreeSet<String>>,
        started: Instant,
    ) -> (BTreeSet<String>, Option<PyFlowAfter>) {
        let mut targets: BTreeSet<String> = BTreeSet::new();
        for &lang in &swapped.languages {
            if lang == Language::Go
                && let Some(go) = &go.targets
            {
                targets.extend(go.iter().cloned());
                continue;
            }
            if lang == Language::Python
                && let Some(found) = py_found
            {
                targets.extend(found.iter().cloned());
                continue;
            }
            let files: BTreeSet<String> = swapped.old_of(lang).keys().cloned().collect();
            let keys = swapped.keys.get(&lang).cloned().unwrap_or_default();
            let mut found = deps::affected(&self.facts, &files, keys);
            // Names may coincide across languages (a Go package `x`, a Python module `x`).
            found.retain(|rel| self.is_of(rel, lang));
            targets.extend(found);
        }
        let py_flow = swapped.has(Language::Python).then(|| {
            self.add_python_flow_targets(swapped, tables, py_found.is_some(), &mut targets)
        });
        tracing::debug!(
            index.at_ms = started.elapsed().as_millis() as u64,
            "update: affected"
        );
        if go.rebuilds(swapped) {
            match &go.old_derived {
                Some(old) => add_derived_changes(old, &tables.go, &self.outputs, &mut targets),
                // No previous tables to compare with: every Go file.
                None => targets.extend(self.files_of(Language::Go)),
            }
        }
        (targets, py_flow)
    }

    /// Values flow across modules against the import direction (callbacks, returns, stores):
    /// besides the modules that can see a changed name, those whose resolution read a changed
    /// value-flow entry, or the facts of a file whose facts or table entries changed, are
    /// re-resolved. A module added or deleted (files are numbered by position), or a change not
    /// of names (`by_name` false): every Python module is.
    fn add_python_flow_targets(
        &self,
        swapped: &Swapped,
        tables: &Tables<'_>,
        by_name: bool,
        targets: &mut BTreeSet<String>,
    ) -> PyFlowAfter {
        let flow = tables.py_flow();
        match tables.py_changed_table_files() {
            Some(table_files) if by_name => {
                let old_py = swapped.old_of(Language::Python);
                let python = self.files_of(Language::Python);
                let mut changed: HashSet<u32> = table_files.iter().map(|&fi| fi as u32).collect();
                for (fi, rel) in python.iter().enumerate() {
                    if old_py.contains_key(rel) {
                        changed.insert(fi as u32);
                    }
                }
                for &fi in &changed {
                    if let Some(rel) = python.get(fi as usize) {
                        targets.insert(rel.clone());
                    }
                }
                targets.extend(self.flow_readers(self.py_flow.as_deref(), &flow));
                for rel in python {
                    let read = self
                        .outputs
                        .get(&rel)
                        .and_then(|o| o.py_files_read.as_ref());
                    if read.is_none_or(|read| read.iter().any(|fi| changed.contains(fi))) {
                        targets.insert(rel);
                    }
                }
            }
            _ => targets.extend(self.files_of(Language::Python)),
        }
        (flow, tables.py_flow_state())
    }

    /// Re-resolves `targets` (Go files against the patched tables when those were kept) and
    /// hands back the outputs with the tables to keep.
    fn resolve_closure(
        &self,
        swapped: &Swapped,
        go: &GoPlan,
        tables: Tables<'_>,
        targets: &BTreeSet<String>,
    ) -> Resolved {
        let mut outputs = resolve_files(&tables, Some(targets), &self.opts);
        let py_tables = swapped.has(Language::Python).then(|| tables.py_tables());
        if go.targets.is_some() {
            let go_files: BTreeSet<String> = targets
                .iter()
                .filter(|rel| self.is_of(rel, Language::Go))
                .cloned()
                .collect();
            self.resolve_go_kept(&go_files, &mut outputs);
        }
        let go_index = go.rebuilds(swapped).then(|| tables.into_go());
        Resolved {
            outputs,
            py_tables,
            go_index,
        }
    }
}
