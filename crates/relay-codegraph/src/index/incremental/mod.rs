//! The stateful [`Indexer`]: a full index plus incremental updates.
//!
//! - `mod.rs`: the [`Indexer`], the full index and the general update path (tables rebuilt or
//!   patched, dependents re-resolved);
//! - `kept`: the update path when the changed files offer other files the same declarations;
//! - `dependents`: which other files an update must re-resolve;
//! - `tally`: symbol and edge counts kept up to date per file;
//! - `parse`: one file to facts, with a parser per thread.

mod dependents;
#[cfg(test)]
mod flow_tests;
mod kept;
mod parse;
mod tally;

use dependents::{add_derived_changes, drop_in_background, python_dependents};
use parse::{Parsed, parse_file};
use tally::Tally;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::deps;
use super::facts::{FileFacts, LangFacts};
use super::go::GoIndex;
use super::go::dependents as go_dependents;
use super::go::patch as go_patch;
use super::parallel::par_map;
use super::python::FlowUpdate;
use super::python::PyTables;
use super::resolve::{self, Derived, FileOutput, build_tables, build_tables_after, resolve_files};
use super::source::SkipReason;
use super::walk::{self, GoModules, SourceFile};
use super::{IndexOptions, IndexStats, Phase, Result};
use crate::model::{Edge, Graph, Language, Symbol};

/// The changes of one [`Indexer::update`], for stores to apply: for every path in `files`, delete
/// all symbols and edges whose `file` is that path, then insert `symbols` and `edges` (which all
/// belong to paths in `files`). Deleted files appear in `files` with nothing to insert.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GraphDelta {
    /// Repository-relative paths whose symbols and edges are replaced (sorted).
    pub files: Vec<String>,
    pub symbols: Vec<Symbol>,
    pub edges: Vec<Edge>,
    /// Files re-parsed by this update.
    pub reparsed: usize,
    /// Files re-resolved by this update (the changed files and those that can see them).
    pub resolved: usize,
    /// Wall time of the update.
    pub duration: Duration,
}

impl GraphDelta {
    /// Whether the update changed nothing.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// A repository index that can be updated incrementally.
///
/// It keeps the per-file facts and the resolution tables, so an update re-parses only the
/// changed files, patches the tables (Go: per package; Python: reused when no module's exports
/// changed, else rebuilt), and re-resolves the files whose lookups can give other results (those
/// that can see a changed name); only files whose symbols or edges changed are reported in the
/// [`GraphDelta`].
#[derive(Debug)]
pub struct Indexer {
    root: PathBuf,
    opts: IndexOptions,
    modules: GoModules,
    facts: BTreeMap<String, FileFacts>,
    outputs: BTreeMap<String, FileOutput>,
    /// The Go tables of the last build, patched by declaration-preserving updates (`None` until
    /// built, or after an update that could not keep them).
    go_index: Option<GoIndex>,
    /// The Python tables of the last build that included Python, reused by updates that change
    /// no module's exports (`None` until built).
    py_tables: Option<Arc<PyTables>>,
    /// The Python value-flow table of the last resolution (compared after an update: when it
    /// changes, every Python module is re-resolved).
    py_flow: Option<Arc<super::python::PyFlow>>,
    /// How the last value-flow fixpoint went: an update replays it, re-evaluating only the
    /// modules its edit can affect.
    py_flow_state: Option<Arc<super::python::FlowState>>,
    /// Files named like source that are not indexed, with why (kept up to date by updates).
    skipped: BTreeMap<String, SkipReason>,
    /// Symbol and edge counts of `outputs`, kept up to date by updates.
    tally: Tally,
    stats: IndexStats,
}

impl Indexer {
    /// Indexes `root` from scratch with default options.
    pub fn full(root: &Path) -> Result<Indexer> {
        Indexer::full_with(root, IndexOptions::default())
    }

    /// Indexes `root` from scratch.
    pub fn full_with(root: &Path, opts: IndexOptions) -> Result<Indexer> {
        let started = Instant::now();
        let walk::Discovered {
            files,
            modules,
            skipped,
        } = walk::discover(root, &opts)?;
        let mut skipped: BTreeMap<String, SkipReason> = skipped.into_iter().collect();
        let total = files.len();
        let parsed = par_map(
            &files,
            opts.worker_threads(),
            |f| parse_file(root, f, &modules, opts.max_file_bytes),
            |done| {
                if done % 64 == 0 || done == total {
                    opts.report(Phase::Parsing, done, total);
                }
            },
        );
        let mut facts = BTreeMap::new();
        for (file, item) in files.iter().zip(parsed) {
            match item {
                Parsed::Facts(f) => {
                    facts.insert(f.rel.clone(), *f);
                }
                Parsed::Skipped(reason) => {
                    skipped.insert(file.rel.clone(), reason);
                }
                Parsed::Gone => {}
            }
        }
        let (outputs, go_index, py_tables, py_flow, py_flow_state) = {
            let tables = build_tables(&facts, &[Language::Go, Language::Python]);
            let outputs = resolve_files(&tables, None, &opts);
            let py_tables = tables.py_tables();
            let py_flow = tables.py_flow();
            let py_flow_state = tables.py_flow_state();
            (outputs, tables.into_go(), py_tables, py_flow, py_flow_state)
        };
        let mut tally = Tally::default();
        for out in outputs.values() {
            tally.add(out);
        }
        let mut indexer = Indexer {
            root: root.to_path_buf(),
            opts,
            modules,
            facts,
            outputs,
            go_index: Some(go_index),
            py_tables: Some(py_tables),
            py_flow: Some(py_flow),
            py_flow_state: Some(py_flow_state),
            skipped,
            tally,
            stats: IndexStats::default(),
        };
        indexer.recount(started.elapsed());
        tracing::debug!(
            index.files = indexer.stats.files,
            index.symbols = indexer.stats.symbols,
            index.edges = indexer.stats.edges,
            index.ms = indexer.stats.duration.as_millis() as u64,
            "indexed repository"
        );
        Ok(indexer)
    }

    /// The repository root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Points the indexer at another directory holding the same repository, e.g. the snapshot of
    /// a newer commit. Nothing is re-read: follow with [`Indexer::update`] for the files that
    /// differ between the two trees (all facts are keyed by repository-relative path).
    pub fn set_root(&mut self, root: &Path) {
        self.root = root.to_path_buf();
    }

    /// Figures of the current index (`duration` is that of the last full index).
    pub fn stats(&self) -> &IndexStats {
        &self.stats
    }

    /// The whole graph, sorted deterministically.
    pub fn graph(&self) -> Graph {
        let mut graph = Graph::default();
        for out in self.outputs.values() {
            graph.symbols.extend(out.symbols.iter().cloned());
            graph.edges.extend(out.edges.iter().cloned());
        }
        super::sort_graph(&mut graph);
        graph
    }

    /// Re-indexes after `changed_paths` (absolute, or relative to the root) were added, modified
    /// or deleted. Paths that are not Go or Python files are ignored, except `go.mod` files, which
    /// re-parse every Go file.
    pub fn update(&mut self, changed_paths: &[PathBuf]) -> Result<GraphDelta> {
        let started = Instant::now();
        let mut to_parse: BTreeSet<String> = BTreeSet::new();
        let mut modules_changed = false;
        let mut modules_replaced = false;
        for path in changed_paths {
            let rel_path = path.strip_prefix(&self.root).unwrap_or(path);
            let Some(rel) = walk::rel_string(rel_path) else {
                continue;
            };
            if rel == "go.mod" || rel.ends_with("/go.mod") {
                modules_changed = true;
            } else if walk::language_of(&rel).is_some() {
                to_parse.insert(rel);
            }
        }
        if modules_changed {
            let modules = walk::discover(&self.root, &self.opts)?.modules;
            if modules != self.modules {
                self.modules = modules;
                modules_replaced = true;
                to_parse.extend(
                    self.facts
                        .iter()
                        .filter(|(_, f)| matches!(f.lang, LangFacts::Go(_)))
                        .map(|(rel, _)| rel.clone()),
                );
            }
        }
        let candidates: Vec<SourceFile> = to_parse
            .iter()
            .filter_map(|rel| {
                walk::language_of(rel).map(|language| SourceFile {
                    rel: rel.clone(),
                    language,
                })
            })
            .collect();
        let root = self.root.clone();
        let modules = self.modules.clone();
        let max = self.opts.max_file_bytes;
        let parsed = par_map(
            &candidates,
            self.opts.worker_threads(),
            |f| {
                if walk::is_skipped_path(&f.rel) {
                    Parsed::Gone
                } else {
                    parse_file(&root, f, &modules, max)
                }
            },
            |_| {},
        );
        let parsed: Vec<Option<FileFacts>> = candidates
            .iter()
            .zip(parsed)
            .map(|(file, item)| {
                match &item {
                    Parsed::Skipped(reason) => {
                        self.skipped.insert(file.rel.clone(), *reason);
                    }
                    Parsed::Facts(_) | Parsed::Gone => {
                        self.skipped.remove(&file.rel);
                    }
                }
                item.into_facts()
            })
            .collect();
        tracing::debug!(
            index.parse_ms = started.elapsed().as_millis() as u64,
            "update: parsed"
        );
        if !modules_replaced && self.fast_path_applies(&candidates, &parsed) {
            return Ok(self.update_exports_kept(started, &candidates, parsed));
        }
        let mut changed_files = BTreeSet::new();
        let mut go_keys: HashSet<String> = HashSet::new();
        let mut py_keys: HashSet<String> = HashSet::new();
        // Previous facts of the changed Go files (`None` for new ones), for patching the tables.
        let mut old_go: BTreeMap<String, Option<FileFacts>> = BTreeMap::new();
        let mut old_py: BTreeMap<String, Option<FileFacts>> = BTreeMap::new();
        // Old and new package sets both count (a package may appear or vanish).
        for (file, item) in candidates.iter().zip(parsed) {
            changed_files.insert(file.rel.clone());
            let keys = match file.language {
                Language::Go => &mut go_keys,
                Language::Python => &mut py_keys,
            };
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
            match file.language {
                Language::Go => old_go.insert(file.rel.clone(), previous),
                Language::Python => old_py.insert(file.rel.clone(), previous),
            };
        }
        let mut languages: Vec<Language> = candidates.iter().map(|c| c.language).collect();
        languages.sort();
        languages.dedup();
        let mut delta = GraphDelta {
            reparsed: candidates.len(),
            ..GraphDelta::default()
        };
        if languages.is_empty() {
            delta.duration = started.elapsed();
            return Ok(delta);
        }
        let has_go = languages.contains(&Language::Go);
        let has_py = languages.contains(&Language::Python);
        let of_language = |facts: &BTreeMap<String, FileFacts>, rel: &String, lang: Language| {
            facts.get(rel).is_some_and(|f| resolve::language(f) == lang)
        };
        // Go: patch the kept tables where possible; the files to re-resolve are then those
        // that can see a changed name (see `go::patch`).
        let mut go_targets: Option<BTreeSet<String>> = None;
        // `implements`/`impls` of the tables replaced by a rebuild.
        let mut old_derived: Option<Derived> = None;
        if has_go {
            let patched = match self.go_index.as_mut() {
                Some(go) if !modules_replaced => go_patch::patch(go, &self.facts, &old_go),
                _ => None,
            };
            match patched {
                Some(p) => {
                    let mut targets: BTreeSet<String> = old_go
                        .keys()
                        .chain(&p.files)
                        .filter(|rel| of_language(&self.facts, rel, Language::Go))
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
                    go_targets = Some(targets);
                }
                None => {
                    if let Some(mut old) = self.go_index.take() {
                        old_derived = Some(Derived {
                            implements: std::mem::take(&mut old.implements),
                            impls: std::mem::take(&mut old.impls),
                        });
                        // Freeing millions of table entries takes longer than resolving the
                        // affected files, so it is done off the update's path.
                        drop_in_background(old);
                    }
                }
            }
        }
        let mut build: Vec<Language> = Vec::new();
        if has_go && go_targets.is_none() {
            build.push(Language::Go);
        }
        if has_py {
            build.push(Language::Python);
        }
        // Tables are rebuilt from all facts of the languages involved; only the files that can
        // see a changed package/module are re-resolved (the other languages keep their results).
        // The Python modules to re-resolve by name depend on the facts alone: found while the
        // tables are built.
        // The value flow is replayed: the files whose facts or table entries changed count
        // as changed (`python::flow_update`).
        let py_update = match &self.py_flow_state {
            Some(state) if has_py => Some(FlowUpdate {
                state: Arc::clone(state),
                changed: old_py.keys().cloned().collect(),
                tables: self.py_tables.clone(),
            }),
            _ => None,
        };
        let facts = &self.facts;
        let (tables, py_found) = std::thread::scope(|s| {
            let old_py = &old_py;
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
        });
        tracing::debug!(
            index.at_ms = started.elapsed().as_millis() as u64,
            "update: tables built"
        );
        let mut targets: BTreeSet<String> = BTreeSet::new();
        for lang in &languages {
            if *lang == Language::Go
                && let Some(go) = &go_targets
            {
                targets.extend(go.iter().cloned());
                continue;
            }
            if *lang == Language::Python
                && let Some(found) = &py_found
            {
                targets.extend(found.iter().cloned());
                continue;
            }
            let (files, keys) = match lang {
                Language::Go => (&old_go.keys().cloned().collect(), go_keys.clone()),
                Language::Python => (&changed_files, py_keys.clone()),
            };
            let mut found = deps::affected(&self.facts, files, keys);
            // Names may coincide across languages (a Go package `x`, a Python module `x`).
            found.retain(|rel| of_language(&self.facts, rel, *lang));
            targets.extend(found);
        }
        if has_py {
            let flow = tables.py_flow();
            match (&py_found, tables.py_changed_table_files()) {
                // Values flow across modules against the import direction (callbacks,
                // returns, stores): besides the modules that can see a changed name, those
                // whose resolution read a changed value-flow entry, or the facts of a file
                // whose facts or table entries changed, are re-resolved.
                (Some(_), Some(table_files)) => {
                    let python: Vec<&String> = self
                        .facts
                        .iter()
                        .filter(|(_, f)| matches!(f.lang, LangFacts::Python(_)))
                        .map(|(rel, _)| rel)
                        .collect();
                    let mut changed: HashSet<u32> =
                        table_files.iter().map(|&fi| fi as u32).collect();
                    for (fi, rel) in python.iter().enumerate() {
                        if old_py.contains_key(*rel) {
                            changed.insert(fi as u32);
                        }
                    }
                    for &fi in &changed {
                        if let Some(rel) = python.get(fi as usize) {
                            targets.insert((*rel).clone());
                        }
                    }
                    targets.extend(self.flow_readers(self.py_flow.as_deref(), &flow));
                    for rel in python {
                        let read = self.outputs.get(rel).and_then(|o| o.py_files_read.as_ref());
                        if read.is_none_or(|read| read.iter().any(|fi| changed.contains(fi))) {
                            targets.insert(rel.clone());
                        }
                    }
                }
                // A module added or deleted (files are numbered by position), or a change
                // not of names: every Python module is re-resolved.
                _ => targets.extend(
                    self.facts
                        .iter()
                        .filter(|(_, f)| matches!(f.lang, LangFacts::Python(_)))
                        .map(|(rel, _)| rel.clone()),
                ),
            }
            self.py_flow = Some(flow);
            self.py_flow_state = Some(tables.py_flow_state());
        }
        tracing::debug!(
            index.at_ms = started.elapsed().as_millis() as u64,
            "update: affected"
        );
        if has_go && go_targets.is_none() {
            match &old_derived {
                Some(old) => add_derived_changes(old, &tables.go, &self.outputs, &mut targets),
                // No previous tables to compare with: every Go file.
                None => targets.extend(
                    self.facts
                        .iter()
                        .filter(|(_, f)| matches!(f.lang, LangFacts::Go(_)))
                        .map(|(rel, _)| rel.clone()),
                ),
            }
        }
        delta.resolved = targets.len();
        tracing::debug!(
            index.at_ms = started.elapsed().as_millis() as u64,
            "update: derived"
        );
        let mut outputs = resolve_files(&tables, Some(&targets), &self.opts);
        if has_py && let Some(old) = self.py_tables.replace(tables.py_tables()) {
            drop_in_background(old);
        }
        if go_targets.is_some() {
            let go_files: BTreeSet<String> = targets
                .iter()
                .filter(|rel| of_language(&self.facts, rel, Language::Go))
                .cloned()
                .collect();
            self.resolve_go_kept(&go_files, &mut outputs);
        }
        if has_go && go_targets.is_none() {
            self.go_index = Some(tables.into_go());
        } else {
            drop(tables);
        }
        let replaced: BTreeSet<&String> = targets.iter().chain(&changed_files).collect();
        self.apply_outputs(replaced, &mut outputs, &mut delta);
        tracing::debug!(
            index.at_ms = started.elapsed().as_millis() as u64,
            "update: applied"
        );
        let full_duration = self.stats.duration;
        self.recount(full_duration);
        delta.duration = started.elapsed();
        Ok(delta)
    }

    /// Replaces the outputs of `replaced` by `outputs` and records the files that changed.
    fn apply_outputs(
        &mut self,
        replaced: BTreeSet<&String>,
        outputs: &mut BTreeMap<String, FileOutput>,
        delta: &mut GraphDelta,
    ) {
        for rel in replaced {
            let new = outputs.remove(rel);
            if self.outputs.get(rel) == new.as_ref() {
                continue;
            }
            delta.files.push(rel.clone());
            match new {
                Some(new) => {
                    delta.symbols.extend(new.symbols.iter().cloned());
                    delta.edges.extend(new.edges.iter().cloned());
                    self.tally.add(&new);
                    if let Some(old) = self.outputs.insert(rel.clone(), new) {
                        self.tally.remove(&old);
                    }
                }
                None => {
                    if let Some(old) = self.outputs.remove(rel) {
                        self.tally.remove(&old);
                    }
                }
            }
        }
    }

    fn recount(&mut self, duration: Duration) {
        let mut stats = IndexStats {
            duration,
            ..IndexStats::default()
        };
        for f in self.facts.values() {
            stats.files += 1;
            stats.lines += u64::from(f.lines);
            match f.lang {
                LangFacts::Go(_) => stats.go_files += 1,
                LangFacts::Python(_) => stats.python_files += 1,
            }
            if f.parse_error {
                stats.parse_errors += 1;
            }
            if f.depth_limited {
                stats.depth_limited += 1;
            }
        }
        for reason in self.skipped.values() {
            *stats.skipped.entry(reason.as_str().to_owned()).or_default() += 1;
        }
        self.tally.fill(&mut stats);
        self.stats = stats;
    }
}
